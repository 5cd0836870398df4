"""Schema bootstrap: idempotent, and every index does its job on the real engine through the seam."""

from __future__ import annotations

import re
import uuid
from typing import get_args

import neo4j
import pytest

from graphmem.runtime import Runtime
from graphmem.store import dialect as dialects
from graphmem.store.dialect import SearchIndex
from graphmem.store.driver import Tx
from graphmem.store.names import StatementName
from graphmem.store.queries import CYPHER_DIR, load_statements, statements
from graphmem.store.schema import SCHEMA_VERSION, bootstrap
from helpers import query


def _schema(runtime: Runtime) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    return runtime.store.run_autocommit("show_indexes"), runtime.store.run_autocommit("show_constraints")


def test_bootstrap_twice_is_identical(runtime: Runtime) -> None:
    assert runtime.engine is not None
    http = (runtime.engine.http_url, ("root", runtime.engine.password()))
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
    target[7], decoy[300] = 1.0, 1.0
    target_id, decoy_id = str(uuid.uuid4()), str(uuid.uuid4())
    create = f"CREATE (:{label} {{id: $id, namespace: $ns, embedding: $v}})"
    query(graph, create, id=target_id, ns=ns, v=target)
    query(graph, create, id=decoy_id, ns=ns, v=decoy)
    probe = [0.0] * 384
    probe[7], probe[8] = 0.9, 0.1
    name = runtime.store.dialect.index_name(index)

    def search(tx: Tx) -> list[dict[str, object]]:
        return tx.run("index_probe_vector", index=name, k=50, vector=probe, limit=5, namespaces=[ns])

    rows = runtime.store.read(search)
    assert rows[0]["id"] == target_id
    assert 0.99 < float(rows[0]["score"]) <= 1.0  # (1 + cos) / 2 on both engines


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
