"""One entity and the paths between two, in the service: lookups by id and by name, bounded lists that say
when they were cut, the shortest chains through triples and shared facts with their supporting facts, the
hop bound, the current view (a superseded version's facts join nothing), and other namespaces' entities."""

from __future__ import annotations

import pytest
from factories import add

from graphmem.errors import NotFound
from graphmem.model import CallerContext, EntityLookup, PathRequest, UpdateInput, View
from graphmem.service import MemoryService


def test_an_entity_by_id_and_by_name_with_bounded_lists(service: MemoryService, ctx: CallerContext,
                                                        ns: str) -> None:
    for i in range(4):
        add(service, ctx, ns, f"Ines Duarte met Rui Costa in Porto on day {i}.")
    add(service, ctx, ns, "Ines Duarte works at Lumen Labs.")
    by_name = service.get_entity(ctx, ns, EntityLookup(name="ines duarte", facts=2, neighbours=1))
    assert by_name.name == "Ines Duarte" and by_name.facts_total == 5
    assert len(by_name.facts) == 2 and by_name.facts_cut is True
    assert len(by_name.neighbours) == 1 and by_name.neighbours_cut is True
    by_id = service.get_entity(ctx, ns, EntityLookup(id=by_name.id, facts=10, neighbours=10))
    assert by_id.facts_cut is False and {n.name for n in by_id.neighbours} >= {"Lumen Labs"}
    assert by_id.facts[0].text == "Ines Duarte works at Lumen Labs."  # newest first
    with pytest.raises(NotFound):
        service.get_entity(ctx, ns, EntityLookup(name="Nobody Known"))


def test_shortest_paths_with_their_facts(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    add(service, ctx, ns, "Mira Sato works at Helix Labs.")
    add(service, ctx, ns, "Helix Labs acquired Nordwind Robotics.")
    add(service, ctx, ns, "Jonas Weber works at Nordwind Robotics.")
    add(service, ctx, ns, "Oskar Lind lives in Tromsø.")  # not connected
    found = service.find_path(ctx, ns, PathRequest(source="Mira Sato", target="Jonas Weber"))
    assert found.hops == 3 and found.cut is False and found.paths
    path = found.paths[0]
    assert path.names == ["Mira Sato", "Helix Labs", "Nordwind Robotics", "Jonas Weber"]
    assert [step.via for step in path.steps] == ["triple", "triple", "triple"]
    assert [step.predicate for step in path.steps] == ["work at", "acquire", "work at"]
    assert path.steps[2].forward is False  # Jonas works at Nordwind: walked against the triple's direction
    assert all(step.text and step.fact_id for step in path.steps)
    short = service.find_path(ctx, ns, PathRequest(source="Mira Sato", target="Jonas Weber", max_hops=2))
    assert short.paths == [] and short.hops is None
    apart = service.find_path(ctx, ns, PathRequest(source="Mira Sato", target="Oskar Lind", max_hops=4))
    assert apart.paths == [] and apart.cut is False


def test_a_shared_fact_is_a_step_and_old_versions_join_nothing(service: MemoryService, ctx: CallerContext,
                                                               ns: str) -> None:
    memory = add(service, ctx, ns, "Ada Park and Ben Ortiz attended the Lisbon summit.").id
    add(service, ctx, ns, "Ben Ortiz lives in Madrid.")
    found = service.find_path(ctx, ns, PathRequest(source="Ada Park", target="Ben Ortiz"))
    assert found.hops == 1 and found.paths[0].steps[0].via == "fact"
    service.update_memory(ctx, memory, UpdateInput(content="Ada Park attended the Lisbon summit alone."))
    after = service.find_path(ctx, ns, PathRequest(source="Ada Park", target="Ben Ortiz"))
    assert after.paths == []
    history = service.find_path(ctx, ns, PathRequest(source="Ada Park", target="Ben Ortiz",
                                                     view=View(include_superseded=True)))
    assert history.hops == 1 and history.paths[0].steps[0].via == "fact"  # the old version, asked for


def test_another_namespace_is_not_found(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    add(service, ctx, ns, "Vera Quartz works at Quartz Ledger.")
    vera = service.get_entity(ctx, ns, EntityLookup(name="Vera Quartz"))
    other = CallerContext.for_namespaces(f"{ns}-other")
    with pytest.raises(NotFound):
        service.get_entity(other, f"{ns}-other", EntityLookup(id=vera.id))
    with pytest.raises(NotFound):
        service.get_entity(other, ns, EntityLookup(id=vera.id))
    with pytest.raises(NotFound):
        service.find_path(other, f"{ns}-other", PathRequest(source=vera.id, target="Quartz Ledger"))
