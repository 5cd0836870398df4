"""Extraction with the real spaCy model: entities, attributes and the triple rules, each on sentences with
their exact expected triples. Also spans, normalisation and type votes. No database needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmem.ingest.extract import SentenceExtraction, extract
from graphmem.ingest.pipeline import Pipeline
from graphmem.ingest.resolve import entity_key, normalize_name, vote
from graphmem.ingest.split import split_facts
from graphmem.nlp.language import get_language
from helpers import make_settings

Row = tuple[str, str, str, bool]


def run(sentence: str) -> SentenceExtraction:
    return extract(get_language()(sentence), 0)


def triples(sentence: str) -> set[Row]:
    return {(t.subject.name, t.predicate, t.object.name, t.negated) for t in run(sentence).triples}


RULES: dict[str, list[tuple[str, set[Row]]]] = {
    "subject_verb_object": [
        ("Alice Johnson works at Microsoft.", {("Alice Johnson", "work at", "Microsoft", False)}),
        ("John bought a MacBook Pro.", {("John", "buy", "MacBook Pro", False)}),
        ("Bob moved to Berlin.", {("Bob", "move to", "Berlin", False)}),
    ],
    "negation": [
        ("Sarah did not join Google.", {("Sarah", "join", "Google", True)}),
        ("Peter does not use Windows.", {("Peter", "use", "Windows", True)}),
    ],
    "passive": [
        ("The paper was written by Alice Johnson.", {("Alice Johnson", "write", "paper", False)}),
        ("The startup was acquired by Microsoft.", {("Microsoft", "acquire", "startup", False)}),
    ],
    "relative_clause": [
        ("Alice Johnson, who works at Microsoft, lives in Seattle.",
         {("Alice Johnson", "work at", "Microsoft", False), ("Alice Johnson", "live in", "Seattle", False)}),
        ("Google hired Tom, who studied at Stanford.",
         {("Google", "hire", "Tom", False), ("Tom", "study at", "Stanford", False)}),
    ],
    "conjunction": [
        ("Tom and Jerry founded Acme Corp.",
         {("Tom", "found", "Acme Corp.", False), ("Jerry", "found", "Acme Corp.", False)}),
        ("I work with Neo4j and PostgreSQL.",
         {("I", "work with", "Neo4j", False), ("I", "work with", "PostgreSQL", False)}),
    ],
    "apposition": [
        ("Paris, the capital of France, hosted the Olympics.",
         {("Paris", "host", "Olympics", False), ("Paris", "be capital of", "France", False)}),
        ("Emma, a designer at Spotify, lives in Stockholm.",
         {("Emma", "live in", "Stockholm", False), ("Emma", "be", "designer", False),
          ("Emma", "be designer at", "Spotify", False)}),
        ("Greenfield Labs, a startup based in Oslo, was acquired by Norsk Data.",
         {("Greenfield Labs", "be", "startup", False), ("Greenfield Labs", "be based in", "Oslo", False),
          ("Norsk Data", "acquire", "Greenfield Labs", False)}),
        ("Port Arden, the largest port in Calvia, hosts the Arden Regatta.",
         {("Port Arden", "be", "largest port", False), ("Port Arden", "be largest port in", "Calvia", False),
          ("Port Arden", "host", "Arden Regatta", False)}),
    ],
    "passive_without_agent": [
        ("Helios Robotics is based in Turin.", {("Helios Robotics", "be based in", "Turin", False)}),
        ("Nadia Petrov was born in Odessa and studied at the University of Vienna.",
         {("Nadia Petrov", "be born in", "Odessa", False),
          ("Nadia Petrov", "study at", "University of Vienna", False)}),
    ],
    "passive_in_a_relative_clause": [
        ("The Orla Tower, which was designed by Tomas Brandt, overlooks the harbour.",
         {("Tomas Brandt", "design", "Orla Tower", False), ("Orla Tower", "overlook", "harbour", False)}),
    ],
    "where_clause": [
        ("Kessel lies in Varn County, where Ostby is the largest town.",
         {("Kessel", "lie in", "Varn County", False), ("Ostby", "be largest town in", "Varn County", False)}),
    ],
    "possessive_description": [
        ("Brightwave's director Lena Holt founded the Holt Institute.",
         {("Lena Holt", "be director of", "Brightwave", False), ("Lena Holt", "found", "Holt Institute", False)}),
    ],
    "shared_subject_and_joined_prepositions": [
        ("The Miller Guild runs the Ostby mill and once traded with Varn Company.",
         {("Miller Guild", "run", "ostby mill", False), ("Miller Guild", "trade with", "Varn Company", False)}),
        ("The River Vey flows through Hamley and into Lake Corin.",
         {("River Vey", "flow through", "Hamley", False), ("River Vey", "flow into", "Lake Corin", False)}),
        ("The Treaty of Marn was signed by Calvia and Ostria.",
         {("Calvia", "sign", "Treaty of Marn", False), ("Ostria", "sign", "Treaty of Marn", False)}),
    ],
    "relational_noun": [
        ("Typer is FastAPI's little sibling.", {("Typer", "be little sibling of", "FastAPI", False)}),
        ("Hypercorn was part of the Quart framework.", {("Hypercorn", "be part of", "quart framework", False)}),
    ],
    "named_modifier": [
        ("Tomás Reyes will run the Falcon standup.", {("Tomás Reyes", "run standup of", "Falcon", False)}),
        ("Kwame stays on the Night Owls rota.", {("Kwame", "stay on rota of", "Night Owls", False)}),
        ("Ada wrote a Rust HTTP server.", {("Ada", "write", "rust http server", False)}),  # a kind, not an owner
        ("Greta Holm and Marco Bellini met in the Harbour room.",  # a room called Harbour
         {("Greta Holm", "meet in", "harbour room", False), ("Marco Bellini", "meet in", "harbour room", False)}),
    ],
    "dative_to": [
        ("Kestrel sends its alerts to PagerDuty.",
         {("Kestrel", "send", "alert", False), ("Kestrel", "send to", "PagerDuty", False)}),
    ],
    "shared_subject_of_a_gerund_or_infinitive": [
        ("Hana sent the claims data before leaving Halden.", {("Hana", "leave", "Halden", False)}),
        ("Sandpiper Analytics wants to resell Kestrel.", set()),  # a wish
        ("Tollgate is killed without flushing its counters.", set()),  # what was not done
    ],
    "what_an_argument_is_said_of": [
        ("Ruth Oyelaran starts as our second designer in the Design Guild.",
         {("Ruth Oyelaran", "start as", "second designer", False),
          ("Ruth Oyelaran", "start as second designer in", "Design Guild", False)}),
        ("Ines Duarte hired two engineers for the Lisbon office.",
         {("Ines Duarte", "hire", "engineer", False), ("Ines Duarte", "hire for", "lisbon office", False)}),
    ],
    "a_place_after_a_name": [
        ("Okafor presented Falcon at Freight Forward in Rotterdam.",
         {("Okafor", "present", "Falcon", False), ("Okafor", "present at", "Freight Forward", False),
          ("Freight Forward", "be in", "Rotterdam", False)}),
    ],
    "title": [
        ("Tidewater's CEO, Greta Holm, signed a contract with Corvane Freight.",
         {("Greta Holm", "be ceo of", "Tidewater", False), ("Greta Holm", "sign", "contract", False),
          ("Greta Holm", "sign with", "Corvane Freight", False)}),
        ("Wei Zhang is the new CTO of Marlin Health.", {("Wei Zhang", "be new cto of", "Marlin Health", False)}),
    ],
    "a_name_opening_a_note": [
        ("Dan forwarded the report to Priya.",
         {("Dan", "forward", "report", False), ("Dan", "forward to", "Priya", False)}),
    ],
    "first_person": [
        ("I live in Amsterdam.", {("I", "live in", "Amsterdam", False)}),
        ("My favorite database is PostgreSQL.", {("My", "favorite database", "PostgreSQL", False)}),
        ("I don't drink coffee.", {("I", "drink", "coffee", True)}),
    ],
}


@pytest.mark.parametrize(("sentence", "expected"),
                         [case for cases in RULES.values() for case in cases],
                         ids=[f"{rule}-{i}" for rule, cases in RULES.items() for i in range(len(cases))])
def test_triple_rules(sentence: str, expected: set[Row]) -> None:
    assert triples(sentence) == expected


def test_negation_is_a_flag_not_part_of_the_predicate() -> None:
    (triple,) = run("Peter does not use Windows.").triples
    assert triple.predicate == "use" and triple.negated


@pytest.mark.parametrize(("sentence", "expected"), [
    ("Alice Johnson works at Microsoft in Seattle.",
     {("Alice Johnson", "Person"), ("Microsoft", "Organization"), ("Seattle", "Place")}),
    ("Tom and Jerry founded Acme Corp.", {("Tom", "Person"), ("Jerry", "Person"), ("Acme Corp.", "Organization")}),
    ("I moved from PostgreSQL to Neo4j and use VS Code on my iPhone 15 Pro.",
     {("PostgreSQL", "Technology"), ("Neo4j", "Technology"), ("VS Code", "Technology"),
      ("iPhone 15 Pro", "Product"), ("I", "User"), ("my", "User")}),
    ("John bought a MacBook Pro and flew to Tokyo.", {("John", "Person"), ("MacBook Pro", "Product"),
                                                       ("Tokyo", "Place")}),
])
def test_entities_people_orgs_places_products(sentence: str, expected: set[tuple[str, str]]) -> None:
    found = {(m.entity.name, m.entity.type) for m in run(sentence).mentions}
    assert expected <= found


def test_dates_and_numbers_are_attributes_not_entities() -> None:
    found = run("Bob paid $300 for 2 tickets on Friday.")
    assert {a.split(":")[0] for a in found.attributes} == {"MONEY", "CARDINAL", "DATE"}
    assert "DATE: Friday" in found.attributes
    assert all(m.entity.name not in ("$300", "300", "2", "Friday") for m in found.mentions)


def test_spans_point_into_the_content_with_emoji_and_accents() -> None:
    content = ("Zoë moved to Málaga 🌞 last spring. Ça va bien? José works at Nestlé 🍫 in Zürich!\n"
               "Naïve café owners love Python 🐍. I use Neo4j daily.")
    documents = Pipeline(make_settings(Path("/nonexistent"))).prepare([content])
    facts = documents[0].facts
    assert len(facts) == 5
    for fact in facts:
        assert content[fact.start:fact.end] == fact.text
        for mention in fact.mentions:
            assert fact.start <= mention.start < mention.end <= fact.end
            assert content[mention.start:mention.end] in fact.text
    names = {content[m.start:m.end] for f in facts for m in f.mentions}
    assert {"José", "Zürich", "Python", "Neo4j", "I"} <= names


def test_split_spans_are_exact() -> None:
    content = "  Première phrase ici.  Second one here! 👋🏽 Third one, then?\n\nLast line without a stop"
    spans = split_facts(content)
    assert [s.text for s in spans] == ["Première phrase ici.", "Second one here!", "👋🏽 Third one, then?",
                                       "Last line without a stop"]
    assert all(content[s.start:s.end] == s.text for s in spans)


@pytest.mark.parametrize(("variants", "key"), [
    (["Acme Corp", "The Acme Corp.", "acme corp", "ACME  CORP", "Acme Corp's"], "acme corp"),
    (["Zoë", "ZOË", "Zo\u00eb\u2019s"], "zoë"),
    (["C++", "c++"], "c++"),
])
def test_normalisation_merges_variants(variants: list[str], key: str) -> None:
    assert {normalize_name(v) for v in variants} == {key}
    assert normalize_name("C") != normalize_name("C++")


def test_entity_keys_are_namespaced() -> None:
    from graphmem.ingest.names import ExtractedEntity

    acme = ExtractedEntity("Acme", "Organization")
    assert entity_key("a", acme) != entity_key("b", acme)
    assert entity_key("a", ExtractedEntity("I", "User")) == entity_key("a", ExtractedEntity("my", "User")) == "a|@user"


def test_type_is_the_label_seen_most_often() -> None:
    labels, counts, winner = vote([], [], ["Organization", "Person", "Person"], None)
    assert (labels, counts, winner) == (["Organization", "Person"], [1, 2], "Person")
    labels, counts, winner = vote(labels, counts, ["Organization"], winner)  # a tie keeps the current type
    assert (counts, winner) == ([2, 2], "Person")
    assert vote(labels, counts, ["Organization"], winner)[2] == "Organization"


def test_patterns_file_extends_the_entity_ruler(tmp_path: Path) -> None:
    patterns = tmp_path / "patterns.jsonl"
    patterns.write_text('{"label": "PRODUCT", "pattern": "Zorblax 9000"}\n'
                        '{"label": "TECHNOLOGY", "pattern": [{"LOWER": "quuxdb"}]}\n'
                        '{"label": "FRAMEWORK", "pattern": [{"LOWER": "quuxframe"}]}\n')
    nlp = get_language(patterns)
    sentence = nlp("We replaced QuuxDB with the Zorblax 9000.")
    found = {(m.entity.name, m.entity.type) for m in extract(sentence, 0).mentions}
    assert {("QuuxDB", "Technology"), ("Zorblax 9000", "Product")} <= found
    custom = extract(nlp("Bob maintains Quuxframe."), 0)  # the operator's own label becomes a type
    assert ("Quuxframe", "Framework") in {(m.entity.name, m.entity.type) for m in custom.mentions}
    assert {(t.subject.name, t.predicate, t.object.name) for t in custom.triples} == {
        ("Bob", "maintain", "Quuxframe")}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"label": "PRODUCT"}\n')
    with pytest.raises(ValueError, match="needs 'label' and 'pattern'"):
        get_language(bad)


# ---- what real documents need: no noise from markup, metadata, conditions or guesses -----------------


@pytest.mark.parametrize("sentence", [
    "License: MIT", "Copyright (c) 2020 Acme Corp.", "If Alice joins Google, she moves to Zurich.",
    "Does Bob work at Google?", "Alice may join Google.", "Bob would move to Berlin.",
    "When installed, pip uses the cache if the index is unreachable.",
])
def test_statements_that_state_no_fact_give_no_triple(sentence: str) -> None:
    assert triples(sentence) == set()


def test_a_relative_clause_on_a_definition_names_the_subject() -> None:
    assert ("Granian", "support", "WebSockets", False) in triples(
        "Granian is a Rust HTTP server which supports WebSockets.")


@pytest.mark.parametrize(("name", "clean"), [
    ("FastAPI", True), ("Node.js", True), ("C#", True), ("C++", True), ("Neo4j", True), ("Alice Johnson", True),
    ("setup.py", False), ("README.md", False), ("e69ee30", False), ("v1.2.3", False), ("console.print", False),
    ("https://x.io", False), ("#", False), ("@bbc2", False), ("print(", False), ("a_b", False), ("42", False),
    ("x", False),
])
def test_entity_names_never_carry_markup_code_or_files(name: str, clean: bool) -> None:
    from graphmem.ingest.names import name_is_clean

    assert name_is_clean(name) is clean


def test_document_words_and_common_words_are_not_organisations() -> None:
    names = {m.entity.name for sentence in ("Updated License to align with the BSD template.",
                                            "Automatic decompression of responses.",
                                            "Contributor shall mean the Licensor.")
             for m in run(sentence).mentions}
    assert names == {"BSD"}


def test_a_capitalised_word_opening_a_note_as_its_subject_is_a_name(tmp_path: Path) -> None:
    """The small model tags "Corvane" as a common noun; a common noun there would have its article, and the
    text never writes the word in lower case. "Reorder" opens a changelog entry as a verb: no finite verb."""
    pipeline = Pipeline(make_settings(tmp_path))
    note, entry = pipeline.prepare(["Corvane published the Freight Outlook.",
                                    "Reorder start and stop when creating an Interval instance."])
    assert [(t.subject.name, t.predicate, t.object.name) for f in note.facts for t in f.triples] == [
        ("Corvane", "publish", "Freight Outlook")]
    assert not [t for f in entry.facts for t in f.triples if t.subject.name == "Reorder"]


def test_markup_never_reaches_names_and_mentions_stay_exact(tmp_path: Path) -> None:
    content = "# Tools\n\n[FastAPI](https://fastapi.tiangolo.com) supports **WebSockets** and `asyncio`.\n"
    (document,) = Pipeline(make_settings(tmp_path)).prepare([content])
    (fact,) = document.facts
    assert {(m.entity.name, content[m.start:m.end]) for m in fact.mentions} >= {("FastAPI", "FastAPI")}
    assert all(not any(ch in m.entity.name for ch in "[]()*`:/") for m in fact.mentions)
    assert [(t.subject.name, t.predicate) for t in fact.triples] == [("FastAPI", "support")]


def test_first_person_is_the_user_in_notes_and_the_author_in_documents(tmp_path: Path) -> None:
    pipeline = Pipeline(make_settings(tmp_path))
    note, document = pipeline.prepare(["I live in Amsterdam.", "# About\n\nI live in Amsterdam."])
    assert [(t.subject.type, t.object.name) for t in note.facts[0].triples] == [("User", "Amsterdam")]
    assert document.facts[0].triples == []


def test_fields_give_entities_and_no_triples(tmp_path: Path) -> None:
    (document,) = Pipeline(make_settings(tmp_path)).prepare(["Author: Alice Johnson\nEmployer: Microsoft in Seattle"])
    assert [fact.kind for fact in document.facts] == ["field", "field"]
    assert {m.entity.name for f in document.facts for m in f.mentions} == {"Alice Johnson", "Microsoft", "Seattle"}
    assert all(not fact.triples for fact in document.facts)


@pytest.mark.parametrize("sentence", ["Tomas Berg works at Beta Labs in Oslo.", "Acme Corp acquired Beta Labs.",
                                      "Priya Raman leads the graph database team."])
def test_every_triple_joins_entities_its_sentence_mentions(sentence: str) -> None:
    """The write matches a triple's ends among the fact's entities: an end that is not also a mention (a name
    NER left unlabelled, a concept) would drop the triple silently."""
    found = run(sentence)
    assert found.triples, sentence
    mentioned = {m.entity for m in found.mentions}
    for triple in found.triples:
        assert {triple.subject, triple.object} <= mentioned, (triple, mentioned)
    for mention in found.mentions:
        assert sentence[mention.start:mention.end] == mention.entity.name


def memory_triples(tmp_path: Path, content: str) -> list[set[tuple[str, str, str]]]:
    (document,) = Pipeline(make_settings(tmp_path)).prepare([content])
    return [{(t.subject.name, t.predicate, t.object.name) for t in fact.triples} for fact in document.facts]


def test_a_pronoun_stands_for_the_named_subject_of_the_sentence_before(tmp_path: Path) -> None:
    kiln = memory_triples(tmp_path, "Kiln is the build system of Brackenridge Health. It wraps Bazel. "
                                    "It stores artefacts in Amazon S3.")
    assert ("Kiln", "wrap", "Bazel") in kiln[1] and ("Kiln", "store artefact in", "Amazon S3") in kiln[2]
    tern = memory_triples(tmp_path, "Tern is a pipeline written in Scala. The Data Team runs it on Kubernetes.")
    assert tern == [{("Tern", "be", "pipeline"), ("Tern", "be written in", "Scala")},
                    {("Data Team", "run", "Tern"), ("Data Team", "run on", "Kubernetes")}]
    # nothing named before it: no guess
    assert memory_triples(tmp_path, "The weather was bad. It flooded Kessel.") == [set(), set()]
    # a pronoun that is not its sentence's subject stands for that subject first
    mira = memory_triples(tmp_path, "Tom hired Mira in 2019. Mira founded Acme after she left Google.")
    assert ("Mira", "leave", "Google") in mira[1] and not any(t[0] == "Tom" for t in mira[1])
    # "she" is no product
    assert memory_triples(tmp_path, "Project Falcon ships in May. She moved to Lisbon.")[1] == set()


def test_a_word_the_text_writes_as_a_name_is_one_at_the_start_of_a_sentence(tmp_path: Path) -> None:
    (document,) = Pipeline(make_settings(tmp_path)).prepare([
        "We moved the jobs to Crisp last year. Crisp runs the billing jobs for Quayside."])  # "Crisp": ADJ
    for fact in document.facts:  # every triple's ends are among its fact's mentions (the write needs them)
        assert {r for t in fact.triples for r in (t.subject, t.object)} <= {m.entity for m in fact.mentions}
    assert any(t.subject.name == "Crisp" for f in document.facts for t in f.triples)
    facts = memory_triples(tmp_path, "Ledger is the billing service of Quayside. Ledger writes invoices to Postgres.")
    assert ("Ledger", "be billing service of", "Quayside") in facts[0]
    assert ("Ledger", "write to", "Postgres") in facts[1]


@pytest.mark.parametrize(("sentence", "expected"), [
    ("The Orla Tower, which was designed by Tomas Brandt, overlooks the harbour.", {("Orla Tower", "Place")}),
    ("Orbital Labs hired a designer.", {("Orbital Labs", "Organization")}),
    ("Project Falcon replaced the old planner.", {("Project Falcon", "Product")}),
    ("The team wrote Tern in Scala and posts alerts to Slack.", {("Scala", "Technology"), ("Slack", "Product")}),
    ("The Treaty of Marn was signed by Calvia and Ostria.", {("Treaty of Marn", "Law")}),
])
def test_types_come_from_evidence(sentence: str, expected: set[tuple[str, str]]) -> None:
    assert expected <= {(m.entity.name, m.entity.type) for m in run(sentence).mentions}


def test_names_that_are_english_words_are_only_names_as_written() -> None:
    assert not run("Both teams agreed to zoom in on the linear segment. The vault held a ruby.").mentions
    assert ("Zoom", "Product") in {(m.entity.name, m.entity.type) for m in run("We meet on Zoom every day.").mentions}


def test_a_guess_no_evidence_supports_is_no_type() -> None:
    """NER calls many invented software names a person or a place; without words or a sentence that agree,
    the type stays unknown, and the vote lets any definite type beat it."""
    found = {m.entity.name: m.entity.type for m in run("Typesense indexes articles for Quayside.").mentions}
    assert found["Quayside"] == "Name"  # spaCy's label: ORG
    assert vote([], [], ["Name", "Name", "Organization"], None)[2] == "Organization"
