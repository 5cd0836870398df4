"""Aliases: a short name or the other number links to the one entity it names, in either order, never on an
ambiguous candidate, an agent's name or across namespaces; entity reads, lookups, entity search and the Neo4j
memory tool set find an entity by its aliases, and an alias only forgotten memories used leaves the view."""

from __future__ import annotations

import uuid

import neo4j
from factories import add

from graphmem.ingest.aliases import Known, agrees, number_variants, plan, short_forms
from graphmem.model import (
    CallerContext,
    EntityListOptions,
    EntityLookup,
    EntitySearchRequest,
    ForgetRequest,
)
from graphmem.model.assertions import EntitiesCreate, EntityAssertion
from graphmem.service import MemoryService
from helpers import query


def entities(service: MemoryService, ctx: CallerContext, ns: str) -> dict[str, list[str]]:
    """Entity name → its aliases in the current view."""
    page = service.list_entities(ctx, ns, EntityListOptions(limit=100))
    return {item.name or "": item.aliases for item in page.items}


def stored(service: MemoryService, ctx: CallerContext, ns: str, *texts: str) -> dict[str, list[str]]:
    """Store the texts one by one, in order, as the notes of a team arrive; then ``entities``."""
    for text in texts:
        add(service, ctx, ns, text)
    return entities(service, ctx, ns)


def test_the_forms_a_name_can_be_shortened_to() -> None:
    assert short_forms("maya okafor", "Person") == {"maya", "okafor"}
    assert short_forms("maya okafor", "Name") == {"maya", "okafor"}  # an unknown type may be a person's
    assert short_forms("project falcon", "Product") == {"falcon"}
    assert short_forms("tidewater labs", "Organization") == {"tidewater"}
    assert short_forms("acme corp", "Product") == {"acme"}
    assert short_forms("lisbon office", "Place") == set()  # "Lisbon" is not the Lisbon office
    assert short_forms("felix wu", "Person") == {"felix"}  # two letters are no name
    assert short_forms("kafka", "Technology") == set()
    assert number_variants("blue herons") >= {"blue heron"}
    assert "blue herons" in number_variants("blue heron")
    assert "city" in number_variants("cities") and "cities" in number_variants("city")
    assert number_variants("v2") == set()


def test_which_types_may_name_which() -> None:
    assert agrees("Person", "Person", short=True) and agrees("Name", "Person", short=True)
    assert agrees("Person", "Name", short=True)
    assert not agrees("Technology", "Name", short=True)  # "GitHub" never names "GitHub Actions"
    assert not agrees("Concept", "Concept", short=True) and agrees("Concept", "Concept", short=False)
    assert not agrees("Place", "Organization", short=True)


def test_a_plan_links_one_candidate_and_refuses_two() -> None:
    one = plan("n", {"n|maya": ("Person", True), "n|maya okafor": ("Person", True)}, {}, {})
    assert one.links == {"n|maya": ("n|maya okafor", "maya")}
    stored = {"n|maya okafor": Known("maya okafor", "Person"), "n|maya chen": Known("maya chen", "Person")}
    two = plan("n", {"n|maya": ("Person", True)}, stored, {"maya": ["n|maya okafor", "n|maya chen"]})
    assert two.links == {}
    stated = plan("n", {"n|maya": ("Person", False), "n|maya okafor": ("Person", True)}, {}, {})
    assert stated.links == {}  # an agent's name is exactly what it said


def test_a_short_name_links_to_its_full_form_in_either_order(service: MemoryService, ctx: CallerContext,
                                                             ns: str) -> None:
    found = stored(service, ctx, ns, "Maya reviewed the budget on Monday.",
                   "Maya Okafor leads Project Falcon at Tidewater Labs.",
                   "Falcon ships in March, and Tidewater hired two engineers.",
                   "Maya presented the Falcon demo to Okafor's manager.")
    assert "Maya" not in found and "Falcon" not in found and "Tidewater" not in found and "Okafor" not in found
    assert set(found["Maya Okafor"]) == {"Maya", "Okafor"}
    assert found["Project Falcon"] == ["Falcon"] and found["Tidewater Labs"] == ["Tidewater"]
    maya = service.get_entity(ctx, ns, EntityLookup(name="Maya Okafor", facts=10))
    assert maya.facts_total == 3 and set(maya.aliases) == {"Maya", "Okafor"}  # the first note's mention moved in
    assert service.get_entity(ctx, ns, EntityLookup(name="Falcon")).name == "Project Falcon"
    graph = service.find_entities_by_name(ctx, ns, ["Maya", "falcon"])
    assert {e.name for e in graph.entities} == {"Maya Okafor", "Project Falcon"}
    hits = service.search_entities(ctx, EntitySearchRequest(query="Falcon", namespaces=[ns], limit=3)).items
    assert hits[0].name == "Project Falcon"


def test_a_second_full_form_makes_the_short_name_ambiguous(service: MemoryService, ctx: CallerContext,
                                                           ns: str) -> None:
    found = stored(service, ctx, ns, "Maya Okafor leads the design review.", "Maya approved the launch plan.",
                   "Maya Chen joined the team as a designer.", "Maya called the client on Friday.")
    assert found["Maya Okafor"] == ["Maya"]  # the mention made before Maya Chen arrived stays linked
    assert "Maya" in found and found["Maya Chen"] == []  # a new bare "Maya" stays apart from both
    assert service.get_entity(ctx, ns, EntityLookup(name="Maya Okafor", facts=10)).facts_total == 2
    assert service.get_entity(ctx, ns, EntityLookup(name="Maya")).name == "Maya"  # its own name first


def test_an_ambiguous_short_name_stored_first_is_not_absorbed(service: MemoryService, ctx: CallerContext,
                                                              ns: str) -> None:
    found = stored(service, ctx, ns, "Maya approved the launch plan.",
                   "Maya Okafor and Maya Chen reviewed the launch plan.")
    assert {"Maya", "Maya Okafor", "Maya Chen"} <= found.keys()
    assert found["Maya Okafor"] == [] and found["Maya Chen"] == []


def test_a_fact_that_names_both_forms_keeps_one_mention(service: MemoryService, ctx: CallerContext, ns: str,
                                                        graph: neo4j.Driver) -> None:
    """The bare "Maya" is absorbed while the fact that names "Maya Okafor" also mentions it: one MENTIONS
    with both spans, so nothing counts the fact twice."""
    stored(service, ctx, ns, "Maya approved the launch plan.",
           "Maya Okafor thanked Maya's team for the launch plan.")
    rows = query(graph, "MATCH (f:Fact)-[m:MENTIONS]->(e:Entity {name: 'Maya Okafor'}) WHERE e.namespace = $ns "
                        "RETURN f.text AS text, count(m) AS mentions, collect(m.starts) AS starts", ns=ns)
    assert sorted((r["text"], r["mentions"], sorted(r["starts"][0])) for r in rows) == [
        ("Maya Okafor thanked Maya's team for the launch plan.", 1, [0, 20]),
        ("Maya approved the launch plan.", 1, [0])]
    assert service.get_entity(ctx, ns, EntityLookup(name="Maya Okafor")).facts_total == 2


def test_plurals_are_one_entity(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    found = stored(service, ctx, ns, "The Blue Herons won the regional cup in Leeds.",
                   "Priya Natarajan coached the Blue Heron squad last spring.")
    assert "Blue Heron" not in found and found["Blue Herons"] == ["Blue Heron"]


def test_an_agents_entity_is_never_absorbed(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    service.create_entities(ctx, ns, EntitiesCreate(entities=[EntityAssertion(name="Maya", type="person")]))
    add(service, ctx, ns, "Maya Okafor leads Project Falcon.")
    assert {"Maya", "Maya Okafor"} <= entities(service, ctx, ns).keys()


def test_forgetting_the_only_memory_that_used_an_alias_takes_it_out_of_view(service: MemoryService,
                                                                           ctx: CallerContext, ns: str) -> None:
    add(service, ctx, ns, "Project Falcon ships in March.")
    memory = add(service, ctx, ns, "Falcon slipped by a week.").id
    assert entities(service, ctx, ns)["Project Falcon"] == ["Falcon"]
    service.forget(ctx, memory, ForgetRequest())
    assert entities(service, ctx, ns)["Project Falcon"] == []
    assert service.get_entity(ctx, ns, EntityLookup(name="Falcon")).aliases == []  # found by a word of its name
    assert service.find_entities_by_name(ctx, ns, ["Falcon"]).entities == []  # no name, no alias in view


def test_nothing_links_across_namespaces(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    other = f"other-{uuid.uuid4().hex[:8]}"
    both = CallerContext.for_namespaces(ns, other)
    add(service, both, ns, "Project Falcon ships in March.")
    add(service, both, other, "Falcon slipped by a week.")
    assert "Falcon" in entities(service, both, other)
    assert entities(service, both, ns)["Project Falcon"] == []
