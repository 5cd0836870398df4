"""Any JSON sent to a front end is answered with a typed error or a result, never a server error. The front
ends' parts are enumerated, so that a new one is tried without a change here: every route of the app's OpenAPI
document (its body and query parameters), every query, mutation and subscription of the GraphQL schema (the
arguments of the field and of its selection as variables; a subscription over graphql-transport-ws), and every
tool the MCP servers list (the Neo4j memory tool set on its own server).

The front ends are tried with one credential of a namespace of this module's own, on the session's store with
rate limits off (hundreds of calls a minute); what is generated is bounded so that the writes it makes stay
cheap."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from datetime import UTC
from functools import cache
from itertools import accumulate
from typing import Any
from urllib.parse import quote

import anyio
import jsonschema
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from fastapi.testclient import TestClient
from graphql import (
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    GraphQLUnionType,
    Undefined,
    get_named_type,
    get_nullable_type,
    is_leaf_type,
    is_required_argument,
)
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.types import CallToolRequestParams
from pydantic_core import PydanticSerializationError
from starlette.websockets import WebSocketDisconnect
from strategies import ANY_TEXT, VALUES

from graphmem.app import create_app
from graphmem.config import Settings, Toolset
from graphmem.graphql.schema import schema as graphql_schema
from graphmem.identity import OPERATOR, Credential, Identity, NewCredential, RateLimits, Scope
from graphmem.mcp.server import build_server
from graphmem.runtime import Runtime
from mcp_helpers import EVERY_TOOLSET, Session, error_text, session

Strategy = st.SearchStrategy


class Raw:
    """JSON that ``encode`` writes as this text, unchanged: a number past Python's 4,300 digits or an array
    nested past a parser's stack cannot be written by ``json.dumps``. The in-memory MCP client sends Python
    values, no JSON text: it sends ``value``, what a JSON parser would have given the server."""

    def __init__(self, text: str, value: Any) -> None:
        self.text = text
        self.value = value

    def __repr__(self) -> str:
        return f"Raw({self.text[:12]!r}..., {len(self.text)} characters)"


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


INTEGERS = st.one_of(st.integers(min_value=-(2**80), max_value=2**80),
                     st.sampled_from([0, -1, 2**31, 2**53 + 1, 2**63, 2**64, -(2**63) - 1]))
NUMBERS = st.one_of(INTEGERS, st.floats(allow_nan=True, allow_infinity=True))
NUL_TEXT = st.tuples(ANY_TEXT, ANY_TEXT).map("\x00".join)
# past a query's (1,000), a memory's (100,000) and a body's (2 MiB) caps
HUGE_TEXT = st.sampled_from([1_001, 100_001, 2_100_000]).map(lambda size: "a" * size)
EXTREMES = st.sampled_from([
    # past the digits Python's json reads; in memory, the most pydantic's JSON parser reads (the MCP SDK's)
    Raw("1" + "0" * 5000, 10**4299),
    Raw("-1e999", -math.inf),
    Raw("[" * 100_000 + "]" * 100_000, nested(150)),  # in memory: as deep as the MCP SDK's JSON parser goes
    Raw(json.dumps(nested(40)), nested(40)),
])
ANY_JSON = st.one_of(VALUES, EXTREMES, NUL_TEXT, HUGE_TEXT)
DATES = st.one_of(st.datetimes(timezones=st.sampled_from([None, UTC])).map(lambda moment: moment.isoformat()),
                  ANY_TEXT)
UNKNOWN_FIELD = "unknownField"


# text the models accept: any script, combining marks, emoji, zero-width and bidirectional controls
READABLE_TEXT = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=60)
# words that mean something to a query language (Lucene, Cypher, LIKE, a path), and letters whose case
# mapping or normalisation changes their length
TRICKY_WORDS = ['"', "\\", "AND", "OR NOT", "*", "?~", "^2", "title:x", "[a TO b]", "{", "}", "/.*/", "&&", "||",
                "!", "(", ")", "'", "`", "$x", "//", "/*", "%", "_", "..", "/", "a/../b", "İstanbul", "ﬁne", "ẞ",
                "ΣΑΣ", "ǅ", "e\u0301", "\u200b", "\ufeff", "\u202e", "👩‍👩‍👧", "The", "A", "-", "0", "1e3"]
TRICKY_TEXT = st.lists(st.sampled_from(TRICKY_WORDS) | READABLE_TEXT, min_size=1, max_size=6).map(" ".join)


def often(*choices: tuple[int, Strategy[Any]]) -> Strategy[Any]:
    """One of ``choices``, each as often as its weight."""
    return st.sampled_from([chosen for weight, chosen in choices for _ in range(weight)]).flatmap(lambda s: s)


def texts(known: Sequence[str]) -> Strategy[str]:
    """Any text, text the models accept, or a value this module stored (its namespace, a memory's id, ...)
    so that calls reach stored data."""
    return often((2, ANY_TEXT), (2, READABLE_TEXT), (2, TRICKY_TEXT), (3, st.sampled_from(known)), (1, NUL_TEXT),
                 (1, HUGE_TEXT))


def mixed(shaped: Strategy[Any]) -> Strategy[Any]:
    """What the schema describes seven times in eight, any JSON at all the eighth: rarely enough that a call
    with several values is often accepted and reaches the service."""
    return often((7, shaped), (1, ANY_JSON))


def record(required: Mapping[str, Strategy[Any]], optional: Mapping[str, Strategy[Any]]) -> Strategy[dict[str, Any]]:
    """An object with its required fields, some optional ones and, one time in four, a field it does not know."""
    known_fields = st.fixed_dictionaries(dict(required), optional=dict(optional))
    unknown = st.fixed_dictionaries({**required, UNKNOWN_FIELD: ANY_JSON}, optional=dict(optional))
    return often((3, known_fields), (1, unknown))


def bounds(schema: Mapping[str, Any]) -> Strategy[int]:
    """An integer's bounds and the values just past them, or any integer."""
    edges = [edge + step for key in ("minimum", "maximum") if (edge := schema.get(key)) is not None
             for step in (-1, 0, 1)]
    return st.one_of(INTEGERS, st.sampled_from(edges)) if edges else INTEGERS


def resolved(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """The schema a ``$ref`` names in ``root`` (``#/components/schemas/...``, ``#/$defs/...``), else ``schema``."""
    while "$ref" in schema:
        target = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        schema = target
    return schema


def from_schema(schema: Mapping[str, Any], root: Mapping[str, Any], text: Strategy[str],
                depth: int = 0) -> Strategy[Any]:
    """A value of a JSON Schema (``root`` holds its ``$ref`` targets), or any JSON at any place."""
    if depth > 8:
        return ANY_JSON
    if "$ref" in schema:
        return from_schema(resolved(schema, root), root, text, depth + 1)
    alternatives = schema.get("anyOf") or schema.get("oneOf") or schema.get("allOf")
    if alternatives:
        return st.one_of([from_schema(alternative, root, text, depth + 1) for alternative in alternatives])
    if "const" in schema or "enum" in schema:
        return mixed(st.sampled_from(schema.get("enum", [schema.get("const")])))
    kind = schema.get("type")
    shaped: Strategy[Any]
    if kind == "object":
        shaped = object_of(schema, root, text, depth)
    elif kind == "array":
        shaped = st.lists(from_schema(schema.get("items", {}), root, text, depth + 1), max_size=3)
    elif kind == "string":
        shaped = DATES if schema.get("format") == "date-time" else text
    elif kind == "integer":
        shaped = bounds(schema)
    else:
        shaped = {"number": NUMBERS, "boolean": st.booleans(), "null": st.none()}.get(str(kind), ANY_JSON)
    return mixed(shaped)


def object_of(schema: Mapping[str, Any], root: Mapping[str, Any], text: Strategy[str],
              depth: int = 0) -> Strategy[dict[str, Any]]:
    """An object of a JSON Schema: its required properties, some of the others, and a field it does not know."""
    schema = resolved(schema, root)
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    values = {name: from_schema(value, root, text, depth + 1) for name, value in properties.items()}
    extra = schema.get("additionalProperties")
    if not properties and isinstance(extra, Mapping):
        return st.dictionaries(text, from_schema(extra, root, text, depth + 1), max_size=3)
    return record({k: v for k, v in values.items() if k in required},
                  {k: v for k, v in values.items() if k not in required})


def encode(value: Any) -> str:
    """``value`` as JSON text (NaN, infinities and lone surrogates as Python writes them), ``Raw`` as its text."""
    raws: dict[str, str] = {}

    def placeholder(raw: Raw) -> str:
        key = f"raw-{uuid.uuid4().hex}"
        raws[f'"{key}"'] = raw.text
        return key

    def swap(item: Any) -> Any:
        if isinstance(item, Raw):
            return placeholder(item)
        if isinstance(item, dict):
            return {key: swap(child) for key, child in item.items()}
        return [swap(child) for child in item] if isinstance(item, list) else item

    written = json.dumps(swap(value))
    for key, text in raws.items():
        written = written.replace(key, text)
    return written


def python(value: Any) -> Any:
    """``value`` as a JSON parser would give it to the server (``Raw``'s value)."""
    if isinstance(value, Raw):
        return value.value
    if isinstance(value, dict):
        return {key: python(child) for key, child in value.items()}
    return [python(child) for child in value] if isinstance(value, list) else value


@dataclasses.dataclass(frozen=True)
class World:
    """This module's caller: the app on the store with rate limits off, its credential and what it stored."""

    client: TestClient
    headers: dict[str, str]
    credential: Credential
    runtime: Runtime
    known: tuple[str, ...]


@pytest.fixture(scope="module")
def world(runtime: Runtime) -> Iterator[World]:
    """One read,write credential of a namespace of its own, so that generated writes touch no other test's
    data; rate limits off; and a few stored things (memories, a version, handoffs, an entity, a job, a cursor of
    each kind) whose ids and names the generated text draws from, so that calls reach stored data."""
    unlimited = dataclasses.replace(runtime, identity=Identity(
        runtime.identity.credentials, RateLimits(reads=0, writes=0, window_s=60, storage_uri="memory://"),
        runtime.settings.default_namespace, runtime.service.every_namespace))
    namespace = f"p-{uuid.uuid4().hex[:8]}"
    credential, token = runtime.identity.create(NewCredential(name="props", scopes=[Scope.read, Scope.write],
                                                              namespaces=[namespace]), by=OPERATOR)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with TestClient(create_app(runtime=unlimited)) as client:
        def sent(method: str, route: str, body: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
            response = client.request(method, route, json=body, params=params, headers=headers)
            assert response.status_code < 300, response.text
            answer: dict[str, Any] = response.json()
            return answer

        ada = sent("POST", "/v1/remember", {"content": "Ada Lovelace wrote a program for Charles Babbage in London.",
                                            "path": "notes/people"})
        sent("POST", "/v1/remember", {"content": "Grace Hopper worked at Harvard with Howard Aiken."})
        latest = sent("PATCH", f"/v1/memories/{ada['id']}", {"content": "Ada Lovelace wrote the first program."})
        for project in ("probe/edge", "probe/other"):
            sent("POST", "/v1/handoffs", {"project": project, "goal": "Try every input.", "expected_version": 0,
                                          "request_id": f"{project.replace('/', '-')}-1"})
        sent("POST", "/v1/entities", {"entities": [{"name": "Grace Hopper", "type": "person",
                                                    "observations": ["admiral"]}]})
        job = sent("POST", "/v1/jobs", {"memories": [{"content": "Queued for later."}]})
        # a cursor of each kind: one route's cursor sent to another is an input too
        pages = [sent("GET", "/v1/memories", limit=1), sent("GET", f"/v1/memories/{ada['id']}/history", limit=1),
                 sent("GET", "/v1/handoffs", limit=1), sent("GET", "/v1/triples", term="Ada", limit=1),
                 sent("GET", "/v1/graph", seed="query", query="Ada Grace", max_documents=1)]
        cursors = [page["next_cursor"] for page in pages if page.get("next_cursor")]
        known = (namespace, ada["id"], latest["id"], job["job_id"], "probe/edge", "notes/people", "%",
                 "Grace Hopper", "Ada Lovelace", "person", "admiral", "WORKS_AT", "probe-request-1", *cursors)
        yield World(client, headers, credential, unlimited, known)


# ---- /v1: every route of the OpenAPI document --------------------------------------------------------------

OPENAPI: dict[str, Any] = create_app(Settings(_env_file=None)).openapi()
ROUTES = [(method, path) for path, operations in OPENAPI["paths"].items() for method in operations]


URL_VALUE_MAX = 4_000  # characters of one parameter's value in a URL
URL_MAX = 60_000  # the test client refuses a URL of 65,536 characters (a real server's request line is shorter)


def param_text(value: Any) -> list[str]:
    """A query parameter's texts: a list is the parameter repeated, anything else its JSON (a string as is)."""
    if isinstance(value, list):
        return [text for item in value for text in param_text(item)]
    return [value if isinstance(value, str) else value.text if isinstance(value, Raw) else encode(value)]


def escaped(text: str) -> str:
    """Percent-encoded UTF-8, a lone surrogate as its three bytes (what a client that does not check sends)."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


@cache
def route_requests(method: str, path: str, known: tuple[str, ...]) -> Strategy[tuple[str, str | None]]:
    """A request to a route: (its path with parameters, its body), the parameters and the body from its schema
    or any JSON; a URL's values cut to what a URL carries."""
    operation = OPENAPI["paths"][path][method]
    text = texts(known)
    parameters = operation.get("parameters", [])
    in_path = {p["name"]: text for p in parameters if p["in"] == "path"}
    in_query = {p["name"]: from_schema(p.get("schema", {}), OPENAPI, text) for p in parameters if p["in"] == "query"}
    schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    body = from_schema(schema, OPENAPI, text) if schema else st.none()

    def request(parts: tuple[dict[str, str], dict[str, Any], Any]) -> tuple[str, str | None]:
        values, query, sent = parts
        target = path.format(**{name: escaped(value[:URL_VALUE_MAX]) for name, value in values.items()})
        pairs = [f"{escaped(name)}={escaped(item[:URL_VALUE_MAX])}" for name, value in query.items()
                 for item in param_text(value)]
        ends = accumulate(len(pair) + 1 for pair in pairs)
        pairs = [pair for pair, end in zip(pairs, ends, strict=True) if len(target) + end <= URL_MAX]
        return target + ("?" + "&".join(pairs) if pairs else ""), None if sent is None else encode(sent)

    return st.tuples(st.fixed_dictionaries(in_path), st.fixed_dictionaries({}, optional=in_query), body).map(request)


PROBES = {"/health", "/ready"}  # their 503 (warming, restarting, unreachable) is a declared answer, not a fault
FRONT_ENDS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m.upper()} {p}" for m, p in ROUTES])
@FRONT_ENDS
@given(data=st.data())
def test_any_request_to_a_route_is_answered_in_the_envelope(world: World, method: str, path: str,
                                                            data: st.DataObject) -> None:
    """A refusal is graphmem's envelope with a code, or FastAPI's 422 shape for a body the route's schema
    refuses; never a 5xx."""
    target, body = data.draw(route_requests(method, path, world.known), label="request")
    response = world.client.request(method.upper(), target, content=body, headers=world.headers)
    if path in PROBES and response.status_code == 503:  # "not ready yet" is what a probe is for
        return
    assert response.status_code < 500, response.text[:2000]
    event(f"HTTP {response.status_code}")
    if response.status_code == 422:
        answer = response.json()
        assert all(set(problem) == {"type", "loc", "msg"} for problem in answer["detail"]), answer
    elif response.status_code >= 400:
        answer = response.json()
        assert answer["error"]["code"] and answer["error"]["message"], answer


# ---- GraphQL: every operation of the schema, its arguments as variables ------------------------------------

GRAPHQL = graphql_schema._schema


def root_fields(kind: str) -> dict[str, GraphQLField]:
    """The fields of the root type of ``kind`` (query, mutation, subscription)."""
    root = {"query": GRAPHQL.query_type, "mutation": GRAPHQL.mutation_type,
            "subscription": GRAPHQL.subscription_type}[kind]
    return root.fields if root is not None else {}


OPERATIONS = [(kind, name) for kind in ("query", "mutation", "subscription") for name in root_fields(kind)]
# GraphQL's Int is 32 bits: values in it (small ones, where the API's bounds are, most often) or any integer
INT32 = st.one_of(st.integers(min_value=-2, max_value=1100), st.integers(min_value=-(2**31), max_value=2**31 - 1),
                  INTEGERS)
SCALARS_OF: dict[str, Strategy[Any]] = {"Int": INT32, "Float": NUMBERS, "Boolean": st.booleans(),
                                        "DateTime": DATES, "JSON": ANY_JSON}  # String and ID: ``texts``


def from_graphql(kind: GraphQLInputType, text: Strategy[str], depth: int = 0) -> Strategy[Any]:
    """A value of a GraphQL input type, or any JSON at any place."""
    if isinstance(kind, GraphQLNonNull):
        return from_graphql(kind.of_type, text, depth)
    if depth > 6:
        return ANY_JSON
    shaped: Strategy[Any]
    if isinstance(kind, GraphQLList):
        item = from_graphql(kind.of_type, text, depth + 1)
        shaped = st.one_of(st.lists(item, max_size=3), item)  # one value stands for a list of it
    elif isinstance(kind, GraphQLEnumType):
        shaped = st.sampled_from(list(kind.values))
    elif isinstance(kind, GraphQLInputObjectType):
        fields = {name: from_graphql(field.type, text, depth + 1) for name, field in kind.fields.items()}
        needed = {name for name, field in kind.fields.items()
                  if isinstance(field.type, GraphQLNonNull) and field.default_value is Undefined}
        shaped = record({k: v for k, v in fields.items() if k in needed},
                        {k: v for k, v in fields.items() if k not in needed})
    else:
        assert isinstance(kind, GraphQLScalarType)
        shaped = text if kind.name in ("String", "ID") else SCALARS_OF.get(kind.name, ANY_JSON)
    return mixed(shaped)


Variables = dict[str, GraphQLArgument]


def called(name: str, field: GraphQLField, variables: Variables, prefix: str = "") -> str:
    """``name`` with each of its arguments a variable (``prefix`` and the argument's name), added to
    ``variables``."""
    passed = []
    for argument, value in field.args.items():
        variables[prefix + argument] = value
        passed.append(f"{argument}: ${prefix}{argument}")
    return f"{name}({', '.join(passed)})" if passed else name


def selection(kind: GraphQLOutputType, depth: int, variables: Variables) -> str:
    """Every field of a result, ``depth`` levels down (``__typename`` below), with its arguments as
    variables."""
    named = get_named_type(kind)
    if is_leaf_type(named):
        return ""
    if isinstance(named, GraphQLUnionType):
        return " { __typename " + " ".join(f"... on {member.name}{selection(member, depth, variables)}"
                                          for member in named.types) + " }"
    assert isinstance(named, GraphQLObjectType)
    if depth == 0:
        return " { __typename }"
    fields = [called(name, field, variables, f"f{len(variables)}_") + selection(field.type, depth - 1, variables)
              for name, field in named.fields.items()]
    return " { __typename " + " ".join(fields) + " }"


def operation(kind: str, name: str) -> tuple[str, Variables]:
    """The text of an operation calling ``name`` and selecting its result three levels down, and its
    variables: each argument of a field (an argument with a default can be left out)."""
    field = root_fields(kind)[name]
    variables: Variables = {}
    body = called(name, field, variables) + selection(field.type, 3, variables)
    declared = [f"${variable}: {value.type if is_required_argument(value) else get_nullable_type(value.type)}"
                for variable, value in variables.items()]
    return f"{kind} Probe{'(' + ', '.join(declared) + ')' if declared else ''} {{ {body} }}", variables


@cache
def graphql_requests(kind: str, name: str, known: tuple[str, ...]) -> Strategy[str]:
    """An operation's request body: its text, and variables of its arguments' types or any JSON."""
    query, variables = operation(kind, name)
    text = texts(known)
    values = {variable: from_graphql(value.type, text) for variable, value in variables.items()}
    required = {v: values[v] for v, argument in variables.items() if is_required_argument(argument)}
    optional = {v: values[v] for v in root_fields(kind)[name].args if v not in required}
    nested = {v: values[v] for v in values if v not in required and v not in optional}
    # the selection's own arguments one time in three (a value refused there refuses the whole operation before
    # the field called runs), and now and then variables that are not an object at all
    sent = often((6, st.fixed_dictionaries(required, optional={**optional, UNKNOWN_FIELD: ANY_JSON})),
                 (3, st.fixed_dictionaries(required, optional={**optional, **nested})), (1, ANY_JSON))
    return sent.map(lambda chosen: encode({"query": query, "variables": chosen}))


def subscribed(world: World, body: str) -> list[dict[str, Any]]:
    """The errors of the first answer to ``body`` sent as a subscription over graphql-transport-ws; none when
    the socket is closed with 4400, the protocol's refusal of a message (with a reason a close frame carries)."""
    with world.client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": {"Authorization": world.headers["Authorization"]}})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_text(f'{{"id": "1", "type": "subscribe", "payload": {body}}}')
        try:
            answer = ws.receive_json()
        except WebSocketDisconnect as closed:
            assert closed.code == 4400 and len(closed.reason.encode("utf-8")) <= 123, closed
            event("closed 4400")
            return []
        ws.send_json({"id": "1", "type": "complete"})
    errors: list[dict[str, Any]] = answer["payload"] if answer["type"] == "error" else answer["payload"].get("errors")
    return errors or []


@pytest.mark.parametrize(("kind", "name"), OPERATIONS, ids=[f"{k} {n}" for k, n in OPERATIONS])
@FRONT_ENDS
@given(data=st.data())
def test_any_variables_of_an_operation_are_answered_with_a_code(world: World, kind: str, name: str,
                                                               data: st.DataObject) -> None:
    """Data, or errors that each carry an ``extensions.code`` other than INTERNAL; never a 5xx. A subscription
    is sent over its WebSocket protocol (over POST it is refused before it runs)."""
    body = data.draw(graphql_requests(kind, name, world.known), label="request")
    if kind == "subscription":
        errors = subscribed(world, body)
    else:
        response = world.client.post("/graphql", content=body, headers=world.headers)
        assert response.status_code < 500, response.text[:2000]
        answer = response.json()
        if response.status_code == 413:  # the app's body cap, before GraphQL
            assert answer["error"]["code"] == "too_large", answer
            return
        errors = answer.get("errors") or []
    event(" ".join(sorted({str(error.get("extensions", {}).get("code")) for error in errors})) or "data")
    for error in errors:
        assert error["extensions"]["code"] not in (None, "INTERNAL"), error


# ---- MCP: every tool listed, through the SDK's in-memory client --------------------------------------------

SERVERS: dict[str, list[Toolset]] = {"graphmem": EVERY_TOOLSET, "neo4j-memory": [Toolset.neo4j_memory]}


def _no_runtime() -> Runtime:
    raise AssertionError("listing the tools reads no runtime")


async def _tool_names(toolsets: list[Toolset]) -> list[str]:
    server = build_server(_no_runtime, Settings(_env_file=None), fixed="listing", toolsets=toolsets)
    async with Client(server) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


TOOLS = [(served, tool) for served, toolsets in SERVERS.items() for tool in anyio.run(_tool_names, toolsets)]


@pytest.fixture(scope="module")
def sessions(world: World) -> Iterator[tuple[BlockingPortal, dict[str, Session]]]:
    """A client session of each server, open for the module in an event loop of its own thread."""
    with start_blocking_portal() as portal, ExitStack() as stack:
        yield portal, {served: stack.enter_context(portal.wrap_async_context_manager(
            session(world.runtime, world.credential, toolsets))) for served, toolsets in SERVERS.items()}


@cache
def tool_arguments(schema_text: str, known: tuple[str, ...]) -> Strategy[Any]:
    """A tool's arguments: its input schema's (given as text: a key of the cache), or any JSON object."""
    schema = json.loads(schema_text)
    text = texts(known)
    return st.one_of(object_of(schema, schema, text), st.dictionaries(text, ANY_JSON, max_size=4)).map(python)


def sendable(arguments: dict[str, Any]) -> bool:
    """Can the SDK's client send these arguments? It writes its requests as JSON first, and refuses what it
    cannot write (a lone surrogate in a nested key): that never reaches a server."""
    try:
        CallToolRequestParams(name="any", arguments=arguments).model_dump(mode="json")
    except (ValueError, PydanticSerializationError):
        return False
    return True


@pytest.mark.parametrize(("served", "tool"), TOOLS, ids=[f"{s} {t}" for s, t in TOOLS])
@FRONT_ENDS
@given(data=st.data())
def test_any_tool_arguments_are_a_result_or_a_tool_error(world: World, sessions: tuple[BlockingPortal,
                                                         dict[str, Session]], caplog: pytest.LogCaptureFixture,
                                                         served: str, tool: str, data: st.DataObject) -> None:
    """A result its output schema describes, or a tool error graphmem wrote; never an unexpected error. A tool
    error's text does not say which it was (an internal error reads "... tell the operator the reference
    <ref>"): an unexpected error is the one logged at ERROR, by graphmem with its reference or by the SDK
    ("raised an unexpected exception"), whose answer is the bare ``Error executing tool <name>``."""
    portal, by_server = sessions
    client = by_server[served]
    definition = client.tools[tool]
    arguments = data.draw(tool_arguments(json.dumps(definition.input_schema), world.known), label="arguments")
    assume(sendable(arguments))
    caplog.clear()
    result = portal.call(client.client.call_tool, tool, arguments)
    event("tool error" if result.is_error else "result")
    logged = [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]
    assert not logged, logged
    if result.is_error:
        assert error_text(result) != f"Error executing tool {tool}"
    elif definition.output_schema is not None:
        jsonschema.validate(result.structured_content, definition.output_schema)
