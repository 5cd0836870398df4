"""Schema bootstrap: idempotent, and every index does its job on the real engine through the seam."""

from __future__ import annotations

import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import get_args

import httpx
import neo4j
import pytest

from engines import DATABASE
from graphmem.model import CallerContext, DocumentInput
from graphmem.runtime import Runtime
from graphmem.store import dialect as dialects
from graphmem.store.dialect import SearchIndex
from graphmem.store.driver import Tx
from graphmem.store.names import StatementName
from graphmem.store.queries import CYPHER_DIR, load_statements, statements
from graphmem.store.schema import SCHEMA_VERSION, arcadedb_sql, bootstrap
from helpers import graph_driver, make_settings, new_database, query, store_address


def _schema(runtime: Runtime) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The indexes and the constraints of ``runtime``'s database, as the server lists them."""
    def listed(kind: str) -> list[dict[str, object]]:
        text = f"SHOW {kind} YIELD name, type, labelsOrTypes, properties RETURN * ORDER BY name"
        return [record.data() for record in session.run(text)]

    with graph_driver(runtime) as driver, driver.session(database=runtime.store.database) as session:
        return listed("INDEXES"), listed("CONSTRAINTS")


def _http(runtime: Runtime) -> tuple[str, tuple[str, str]] | None:
    """The bundled engine's HTTP API, where its index DDL goes (None on Neo4j, where it goes over Bolt)."""
    return (runtime.engine.http_url, ("root", runtime.engine.password())) if runtime.engine else None


def test_bootstrap_twice_is_identical(runtime: Runtime) -> None:
    http = _http(runtime)
    first = _schema(runtime)
    assert bootstrap(runtime.store, arcadedb_http=http) == SCHEMA_VERSION
    assert bootstrap(runtime.store, arcadedb_http=http) == SCHEMA_VERSION
    assert _schema(runtime) == first
    index_names = {str(i["name"]) for i in first[0]}
    for index in SearchIndex:
        assert runtime.store.dialect.index_name(index) in index_names
    constraint_names = {str(c["name"]) for c in first[1]}
    assert {"document_id", "document_request_key", "document_version_key", "fact_id", "entity_id",
            "entity_key"} <= constraint_names


def _drop_search_indexes(runtime: Runtime) -> None:
    """The search indexes out of ``runtime``'s database, as the engine drops them (Neo4j over Bolt, the bundled
    engine over its HTTP API)."""
    names = [runtime.store.dialect.index_name(index) for index in SearchIndex]
    if runtime.store.dialect.is_neo4j:
        with graph_driver(runtime) as driver, driver.session(database=runtime.store.database) as session:
            for name in names:
                session.run(f"DROP INDEX {name}").consume()
        return
    address = store_address(runtime)
    with httpx.Client(auth=(address["neo4j_user"], address["neo4j_password"]), timeout=60) as client:
        for name in names:
            arcadedb_sql(client, address["arcadedb_http_url"], runtime.store.database, f"DROP INDEX `{name}`")


def test_a_new_database_and_one_holding_the_schema_both_start_cleanly(runtime: Runtime, tmp_path: Path) -> None:
    """A store with nothing in it gets the whole schema; opened again, it starts with the same schema. One whose
    search indexes were lost gets them back, built over the memories it holds, before the runtime is open:
    Neo4j populates an index in the background, and the bootstrap waits for it (``db.awaitIndexes``)."""
    ctx = CallerContext.for_namespaces("kept")
    with new_database(runtime) as database:
        with Runtime.open(make_settings(tmp_path, **database)) as first:
            indexes, constraints = _schema(first)
            assert {first.store.dialect.index_name(index) for index in SearchIndex} <= {i["name"] for i in indexes}
            kept = [first.service.add_memory(ctx, "kept", DocumentInput(
                content=f"Quokka census number {n} was counted on Rottnest.")).document.id for n in range(30)]
        with Runtime.open(make_settings(tmp_path, **database)) as second:
            assert _schema(second) == (indexes, constraints) and second.schema_version == SCHEMA_VERSION
            _drop_search_indexes(second)
        with Runtime.open(make_settings(tmp_path, **database)) as third:
            assert _schema(third) == (indexes, constraints)
            if third.store.dialect.is_neo4j:
                assert third.store.run_autocommit("indexes_populating") == [{"populating": 0}]
            (probe,) = third.service.pipeline.embedder.embed(["Quokka census number 7 was counted on Rottnest."])

            def indexed(tx: Tx) -> tuple[int, int]:
                scope = {"namespaces": ["kept"], "k": 100, "limit": 100}
                text = tx.run("index_probe_fulltext", index=third.store.dialect.index_name(SearchIndex.fact_text),
                              query="quokka", **scope)
                vector = tx.run("index_probe_vector", index=third.store.dialect.index_name(
                    SearchIndex.fact_embedding), vector=probe, **scope)
                return len(text), len(vector)

            assert third.store.read(indexed) == (len(kept), len(kept))  # both indexes hold every fact


def test_processes_starting_at_once_on_a_new_database_make_one_schema(runtime: Runtime, tmp_path: Path) -> None:
    """Neither engine makes IF NOT EXISTS atomic: of three processes creating the same index at once, the losers
    hear "already exists" (Neo4j: EquivalentSchemaRuleAlreadyExists; the bundled engine's HTTP API: a 500) and
    try again, and find what the winner made."""
    with new_database(runtime) as database, ThreadPoolExecutor(3) as pool:
        opened = list(pool.map(lambda n: Runtime.open(make_settings(tmp_path / str(n), **database)), range(3)))
        try:
            assert [each.schema_version for each in opened] == [SCHEMA_VERSION] * 3
            assert _schema(opened[0]) == _schema(opened[2])
        finally:
            for each in opened:
                each.close()


def test_the_server_sends_no_notification_the_driver_would_log(runtime: Runtime, tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """On a new database the statements name properties no node has yet. Neo4j warns of each, and the driver
    logs the warning with the whole statement (no log line carries Cypher): graphmem's driver asks for none.
    The control, a session of the test's own, shows the warning Neo4j sends otherwise."""
    statement = runtime.store.dialect.prepare(statements()["job_next"].text)
    with new_database(runtime) as database, caplog.at_level("INFO", logger="neo4j.notifications"), \
            Runtime.open(make_settings(tmp_path, **database)) as fresh:
        assert fresh.job_worker().run_once() is False  # claims no job: every property it reads is unknown
        assert not [record for record in caplog.records if record.name == "neo4j.notifications"]
        with graph_driver(fresh) as driver, driver.session(database=fresh.store.database) as session:
            session.run(statement, now=0).consume()
    warned = [record for record in caplog.records if record.name == "neo4j.notifications"]
    assert bool(warned) is runtime.store.dialect.is_neo4j


def test_every_statement_is_planned_by_the_server_as_the_dialect_sends_it(runtime: Runtime,
                                                                         graph: neo4j.Driver) -> None:
    """Each named statement (the schema's DDL aside, which has no plan), prefixed as the dialect prefixes it, is
    planned by the server (EXPLAIN: parsed, checked and planned, not run): on Neo4j with `CYPHER 5` first, since
    newer releases default to Cypher 25. The bundled engine refuses that prefix, which is why the seam adds it on
    Neo4j alone."""
    dialect = runtime.store.dialect
    planned = [name for name, statement in statements().items() if not statement.source.startswith("schema.")]
    with graph.session(database=DATABASE) as session:
        for name in planned:
            assert session.run("EXPLAIN " + dialect.prepare(statements()[name].text)).consume().plan, name
        prefixed = session.run("EXPLAIN CYPHER 5 RETURN 1").consume if dialect.is_neo4j else None
        if prefixed is not None:
            assert prefixed().plan
        else:
            with pytest.raises(neo4j.exceptions.CypherSyntaxError):
                session.run("CYPHER 5 RETURN 1").consume()
    assert len(planned) > 150 and dialect.prepare("RETURN 1").startswith("CYPHER 5") is dialect.is_neo4j


def test_schema_version_recorded_in_system_namespace(graph: neo4j.Driver) -> None:
    rows = query(graph, "MATCH (s:SystemRecord {id: 'schema_version'}) RETURN s.namespace AS ns, s.version AS v")
    assert rows == [{"ns": "_system", "v": SCHEMA_VERSION}]


@pytest.mark.parametrize(("label", "key"), [
    ("Document", "id"), ("Document", "request_key"), ("Document", "version_key"), ("Fact", "id"),
    ("Entity", "id"), ("Entity", "entity_key"), ("Receipt", "id"), ("Receipt", "request_key"),
    ("SystemRecord", "id"),
])
def test_uniqueness_is_enforced(graph: neo4j.Driver, ns: str, label: str, key: str) -> None:
    value = f"{ns}|{uuid.uuid4()}"
    create = f"CREATE (n:{label}) SET n.namespace = $ns, n.id = $id, n.{key} = $value"
    query(graph, create, ns=ns, id=str(uuid.uuid4()), value=value)
    with pytest.raises(neo4j.exceptions.ConstraintError):
        query(graph, create, ns=ns, id=str(uuid.uuid4()), value=value)
    # absent keys never collide (request_key is set only when a request_id was sent)
    query(graph, f"CREATE (n:{label}) SET n.namespace = $ns, n.id = $id", ns=ns, id=str(uuid.uuid4()))
    if key != "id":
        query(graph, f"CREATE (n:{label}) SET n.namespace = $ns, n.id = $id", ns=ns, id=str(uuid.uuid4()))


@pytest.mark.parametrize(("index", "label", "prop"), [
    (SearchIndex.fact_text, "Fact", "text"),
    (SearchIndex.entity_name, "Entity", "name"),
])
def test_fulltext_index_finds_planted_text(runtime: Runtime, graph: neo4j.Driver, ns: str, index: SearchIndex,
                                           label: str, prop: str) -> None:
    node_id = str(uuid.uuid4())
    query(graph, f"CREATE (n:{label} {{id: $id, namespace: $ns}}) SET n.{prop} = 'zanzibar quokka memo'",
          id=node_id, ns=ns)
    query(graph, f"CREATE (n:{label} {{id: $id, namespace: $ns}}) SET n.{prop} = 'unrelated words'",
          id=str(uuid.uuid4()), ns=ns)
    name = runtime.store.dialect.index_name(index)

    def search(tx: Tx) -> list[dict[str, object]]:
        return tx.run("index_probe_fulltext", index=name, query="quokka", k=10, limit=10, namespaces=[ns])

    assert [r["id"] for r in runtime.store.read(search)] == [node_id]


@pytest.mark.parametrize(("index", "label"), [(SearchIndex.fact_embedding, "Fact"),
                                              (SearchIndex.entity_embedding, "Entity")])
def test_vector_index_finds_planted_vector(runtime: Runtime, graph: neo4j.Driver, ns: str, index: SearchIndex,
                                           label: str) -> None:
    target, decoy = [0.0] * 384, [0.0] * 384
    target[7], decoy[8] = 1.0, 1.0
    target_id, decoy_id = str(uuid.uuid4()), str(uuid.uuid4())
    create = f"CREATE (:{label} {{id: $id, namespace: $ns, embedding: $v}})"
    query(graph, create, id=target_id, ns=ns, v=target)
    query(graph, create, id=decoy_id, ns=ns, v=decoy)
    probe = [0.0] * 384
    probe[7], probe[8] = 0.8, 0.6  # cosine 0.8 with the target, 0.6 with the decoy (near the top of any index)
    name = runtime.store.dialect.index_name(index)

    def search(tx: Tx) -> list[dict[str, object]]:
        return tx.run("index_probe_vector", index=name, k=50, vector=probe, limit=5, namespaces=[ns])

    rows = runtime.store.read(search)
    assert [row["id"] for row in rows] == [target_id, decoy_id]
    # (1 + cos) / 2 on both engines: 0.9 and 0.8, where the raw cosine would be 0.8 and 0.6 (Neo4j's index keeps
    # its vectors quantised by default, so its scores are a little off the exact ones)
    exact = 1e-4 if runtime.engine is not None else 5e-3
    assert [float(row["score"]) for row in rows] == [pytest.approx(0.9, abs=exact), pytest.approx(0.8, abs=exact)]


def test_neo4j_dialect_queries_only_indexes_its_ddl_creates() -> None:
    """The Neo4j side never runs here: check by text that every name it passes to a procedure exists."""
    ddl = (CYPHER_DIR / "schema.neo4j.cypher").read_text()
    created = set(re.findall(r"CREATE (?:FULLTEXT|VECTOR) INDEX (\w+) IF NOT EXISTS", ddl))
    queried = {dialects.NEO4J.index_name(index) for index in SearchIndex}
    assert queried == created
    for name in dialects.NEO4J.schema_statements:
        assert statements()[name].neo4j_only
    sql = (CYPHER_DIR / "schema.arcadedb.sql").read_text()
    for index in SearchIndex:
        label, prop = dialects.ARCADEDB.index_name(index).rstrip("]").split("[")
        assert f"ON {label} ({prop})" in sql


def test_statements_are_named_parameterised_and_unprefixed() -> None:
    named = load_statements()
    assert len(named) >= 40
    for statement in named.values():
        assert not statement.text.upper().startswith("CYPHER")
        assert "{{" not in statement.text
        assert not re.search(r"'\s*\+\s*\$|\$\w+\s*\+\s*'", statement.text), statement.name


def test_the_statement_name_type_lists_exactly_the_statements_of_cypher() -> None:
    """``StatementName`` is how mypy refuses a name no statement has (every call of a transaction takes one);
    it must name every statement and nothing else. On a new statement, paste the printed list into
    ``graphmem/store/names.py``."""
    declared = set(get_args(StatementName))
    named = set(statements())
    assert declared == named, "StatementName = Literal[\n" + "".join(f'    "{n}",\n' for n in sorted(named)) + "]"


def test_neo4j_creates_a_search_index_for_each_logical_index() -> None:
    ddl = set(dialects.NEO4J.schema_statements)
    assert {f"create_{index.value}_index" for index in SearchIndex} | {"create_relates_predicate_index"} == ddl
    assert all(statements()[name].source == "schema.neo4j.cypher" for name in ddl)


def test_dialect_prefix_and_scores() -> None:
    assert dialects.NEO4J.prepare("RETURN 1") == "CYPHER 5\nRETURN 1"
    assert dialects.ARCADEDB.prepare("RETURN 1") == "RETURN 1"
    assert dialects.ARCADEDB.cosine_score(1.0) == 1.0 and dialects.ARCADEDB.cosine_score(0.0) == 0.5
    assert dialects.NEO4J.cosine_score(0.75) == 0.75
    assert dialects.NEO4J.await_indexes_statement == "await_indexes"
    assert dialects.ARCADEDB.await_indexes_statement is None
