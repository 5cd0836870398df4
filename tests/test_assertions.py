"""What agents state, in the service (Neo4j's memory-MCP calls): entities merge by name with what extraction made,
the stated type wins and the vote returns after a delete, creating is idempotent, relations whose ends do not
exist are skipped, deletes forget only the agents' statements, everything else (search, triples, entity
reads, forgetting views) sees the asserted structure, reads are bounded, and a read-only caller or another
namespace is refused."""

from __future__ import annotations

import pytest

from graphmem.errors import Conflict, Forbidden, NotFound
from graphmem.model import CallerContext, DocumentInput, EntityLookup, SearchRequest, TripleQuery, View
from graphmem.model.assertions import (
    EntitiesCreate,
    EntitiesDelete,
    EntityAssertion,
    ObservationAddition,
    ObservationDeletion,
    ObservationsAdd,
    ObservationsDelete,
    RelationAssertion,
    RelationsChange,
)
from graphmem.service import MemoryService


def people(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    service.create_entities(ctx, ns, EntitiesCreate(entities=[
        EntityAssertion(name="Alice Johnson", type="person", observations=["Software engineer", "Enjoys hiking"]),
        EntityAssertion(name="Microsoft", type="company", observations=["Headquartered in Redmond"]),
        EntityAssertion(name="Seattle", type="city"),
    ]))


def relation(source: str, kind: str, target: str) -> RelationAssertion:
    return RelationAssertion(source=source, target=target, relationType=kind)


def test_entities_relations_and_observations_become_graphmem_nodes(service: MemoryService, ctx: CallerContext,
                                                                   ns: str) -> None:
    people(service, ctx, ns)
    made = service.create_relations(ctx, ns, RelationsChange(relations=[
        relation("Alice Johnson", "WORKS_AT", "Microsoft"), relation("Alice Johnson", "LIVES_IN", "Seattle"),
        relation("Alice Johnson", "KNOWS", "Nobody Here")]))
    assert [r.relationType for r in made.result] == ["WORKS_AT", "LIVES_IN"]
    assert [r.target for r in made.skipped] == ["Nobody Here"]
    added = service.add_observations(ctx, ns, ObservationsAdd(observations=[
        ObservationAddition(entityName="alice johnson", observations=["Speaks German", "Enjoys hiking"]),
        ObservationAddition(entityName="Nobody Here", observations=["Unknown"])]))
    assert [(a.entityName, a.addedObservations) for a in added.result] == [("alice johnson", ["Speaks German"])]

    graph = service.find_entities_by_name(ctx, ns, ["Alice Johnson", "Seattle"])
    alice = next(e for e in graph.entities if e.name == "Alice Johnson")
    assert alice.type == "person" and alice.observations == ["Software engineer", "Enjoys hiking", "Speaks German"]
    assert {(r.source, r.relationType, r.target, r.asserted) for r in graph.relations} == {
        ("Alice Johnson", "WORKS_AT", "Microsoft", True), ("Alice Johnson", "LIVES_IN", "Seattle", True)}

    # the rest of graphmem sees it: triples, fact search, entity reads, and the memories with their source
    triples = service.search_triples(ctx, TripleQuery(subject="Alice Johnson", namespaces=[ns]))
    assert {(t.predicate, t.object.name) for t in triples.items} == {("WORKS_AT", "Microsoft"),
                                                                     ("LIVES_IN", "Seattle")}
    hits = service.search(ctx, SearchRequest(query="Where does Alice Johnson work?", namespaces=[ns], limit=3))
    assert any(h.text == "Alice Johnson works at Microsoft." for h in hits)
    entity = service.get_entity(ctx, ns, EntityLookup(name="Alice Johnson", neighbours=10))
    assert {(n.name, n.asserted) for n in entity.neighbours} == {("Microsoft", True), ("Seattle", True)}
    memories = service.list_memories(ctx, ns).items
    assert {m.source for m in memories} == {f"agent:{ctx.credential_id or 'operator'}:{op}"
                                            for op in ("create_entities", "create_relations", "add_observations")}


def test_creating_again_adds_nothing_and_a_stated_type_wins_over_the_vote(service: MemoryService,
                                                                         ctx: CallerContext, ns: str) -> None:
    service.add_memory(ctx, ns, DocumentInput(content="Microsoft hired Dana Reyes in Seattle."))
    voted = service.get_entity(ctx, ns, EntityLookup(name="Microsoft")).type
    people(service, ctx, ns)
    before = service.namespace_counts(ctx, ns)
    people(service, ctx, ns)  # a repeat: no memory, no fact
    assert service.namespace_counts(ctx, ns) == before
    assert service.get_entity(ctx, ns, EntityLookup(name="Microsoft")).type == "company"
    # one entity: what the memory said and what the agent said meet on the same node
    microsoft = service.find_entities_by_name(ctx, ns, ["microsoft"]).entities
    assert len(microsoft) == 1
    assert microsoft[0].observations == ["Headquartered in Redmond", "Microsoft hired Dana Reyes in Seattle."]
    service.delete_entities(ctx, ns, EntitiesDelete(entityNames=["Microsoft"]))
    after = service.get_entity(ctx, ns, EntityLookup(name="Microsoft"))  # extraction's mention keeps it
    assert after.type == voted and after.facts_total == 1


def test_deletes_forget_only_what_agents_stated(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    service.add_memory(ctx, ns, DocumentInput(content="Alice Johnson works at Contoso."))
    people(service, ctx, ns)
    service.create_relations(ctx, ns, RelationsChange(relations=[
        relation("Alice Johnson", "WORKS_AT", "Microsoft"), relation("Alice Johnson", "LIVES_IN", "Seattle")]))

    service.delete_observations(ctx, ns, ObservationsDelete(deletions=[
        ObservationDeletion(entityName="Alice Johnson",
                            observations=["Enjoys hiking", "Alice Johnson works at Contoso."])]))
    alice = service.find_entities_by_name(ctx, ns, ["Alice Johnson"]).entities[0]
    assert alice.observations == ["Software engineer", "Alice Johnson works at Contoso."]  # extraction's stays

    service.delete_relations(ctx, ns, RelationsChange(relations=[relation("Alice Johnson", "LIVES_IN", "Seattle")]))
    kinds = {r.relationType for r in service.find_entities_by_name(ctx, ns, ["Alice Johnson"]).relations}
    assert "LIVES_IN" not in kinds and "WORKS_AT" in kinds
    # Seattle's declaration still holds it in view, as the reference keeps an entity without relations
    assert [e.name for e in service.find_entities_by_name(ctx, ns, ["Seattle"]).entities] == ["Seattle"]

    service.delete_entities(ctx, ns, EntitiesDelete(entityNames=["Seattle", "Alice Johnson"]))
    assert service.find_entities_by_name(ctx, ns, ["Seattle"]).entities == []  # nothing mentions it any more
    alice = service.find_entities_by_name(ctx, ns, ["Alice Johnson"])
    assert alice.entities[0].observations == ["Alice Johnson works at Contoso."] and all(
        not r.asserted for r in alice.relations)
    triples = service.search_triples(ctx, TripleQuery(subject="Alice Johnson", namespaces=[ns]))
    assert all(t.predicate != "WORKS_AT" for t in triples.items)
    # soft: the forgotten view still shows what the agent said
    forgotten = service.search_triples(ctx, TripleQuery(subject="Alice Johnson", namespaces=[ns],
                                                        view=View(include_forgotten=True)))
    assert "WORKS_AT" in {t.predicate for t in forgotten.items}
    # an assertion memory all of whose statements are deleted is forgotten as a whole
    assert all(m.source is None or not m.source.endswith("create_relations")
               for m in service.list_memories(ctx, ns).items)


def test_reads_are_bounded_and_page_with_a_cursor(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    service.create_entities(ctx, ns, EntitiesCreate(entities=[
        EntityAssertion(name=f"Project {chr(65 + i)}", type="project") for i in range(5)]))
    first = service.read_graph(ctx, ns, limit=3)
    assert [e.name for e in first.entities] == ["Project A", "Project B", "Project C"]
    assert first.truncated is True and first.next_cursor
    rest = service.read_graph(ctx, ns, limit=3, cursor=first.next_cursor)
    assert [e.name for e in rest.entities] == ["Project D", "Project E"] and rest.truncated is False
    found = service.search_knowledge(ctx, ns, "Project C")
    assert found.entities[0].name == "Project C"


def test_request_ids_replay_and_refuse_reuse(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    request = EntitiesCreate(entities=[EntityAssertion(name="Ada", type="person")], request_id="req-ada-0001")
    first = service.create_entities(ctx, ns, request)
    assert service.create_entities(ctx, ns, request) == first
    with pytest.raises(Conflict):
        service.create_entities(ctx, ns, EntitiesCreate(entities=[EntityAssertion(name="Bob", type="person")],
                                                        request_id="req-ada-0001"))


def test_read_only_callers_and_other_namespaces_are_refused(service: MemoryService, ctx: CallerContext,
                                                           ns: str) -> None:
    people(service, ctx, ns)
    reader = CallerContext.for_namespaces(ns, writable=False)
    calls = [
        lambda: service.create_entities(reader, ns, EntitiesCreate(entities=[EntityAssertion(name="X", type="t")])),
        lambda: service.create_relations(reader, ns, RelationsChange(relations=[relation("Seattle", "IN", "Seattle")])),
        lambda: service.add_observations(reader, ns, ObservationsAdd(observations=[
            ObservationAddition(entityName="Seattle", observations=["Rainy"])])),
        lambda: service.delete_entities(reader, ns, EntitiesDelete(entityNames=["Seattle"])),
        lambda: service.delete_observations(reader, ns, ObservationsDelete(deletions=[
            ObservationDeletion(entityName="Seattle", observations=["Rainy"])])),
        lambda: service.delete_relations(reader, ns, RelationsChange(relations=[relation("A", "B", "C")])),
    ]
    for call in calls:
        with pytest.raises(Forbidden):
            call()
    assert service.read_graph(reader, ns).entities  # reading is allowed
    other = CallerContext.for_namespaces(ns + "-other")
    with pytest.raises(NotFound):
        service.read_graph(other, ns)
    with pytest.raises(Forbidden):
        service.delete_entities(other, ns, EntitiesDelete(entityNames=["Seattle"]))
    assert service.find_entities_by_name(other, ns + "-other", ["Seattle"]).entities == []
