"""Properties of the edge: any input, of any Unicode and any type, is either accepted or refused with a typed
``InvalidInput``; text the models accept never makes the service fail with anything but a typed error; and any
JSON sent as a /v1 body is answered in the envelope or FastAPI's 422 shape, never with a server error."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from graphmem.app import create_app
from graphmem.errors import GraphmemError, InvalidInput
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.model import (
    CallerContext,
    DocumentInput,
    DocumentListOptions,
    EntitySearchRequest,
    ExportCaps,
    ExportRequest,
    ForgetRequest,
    HistoryOptions,
    IngestItem,
    RecallRequest,
    SearchRequest,
    TripleQuery,
    UpdateInput,
    View,
    parse,
)
from graphmem.runtime import Runtime
from graphmem.service import MemoryService

MODELS: list[type[BaseModel]] = [DocumentInput, UpdateInput, ForgetRequest, DocumentListOptions, HistoryOptions,
                                 IngestItem, View, SearchRequest, RecallRequest, EntitySearchRequest, TripleQuery,
                                 ExportCaps, ExportRequest]

# every Unicode code point, lone surrogates included (JSON can carry them)
ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=40)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
                    st.floats(allow_nan=True, allow_infinity=True), ANY_TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(ANY_TEXT, inner, max_size=4)), max_leaves=8)


def payloads(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    keys = st.sampled_from([*model.model_fields, "unknown", "kind", "seed"])
    return st.dictionaries(keys, VALUES, max_size=6)


@pytest.mark.parametrize("model", MODELS, ids=[m.__name__ for m in MODELS])
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_payload_is_accepted_or_a_typed_invalid_input(model: type[BaseModel], data: st.DataObject) -> None:
    payload = data.draw(payloads(model))
    try:
        parsed = parse(model, payload)
    except InvalidInput as exc:
        assert exc.message and "Traceback" not in exc.message
        return
    assert isinstance(parsed, model)
    parsed.model_dump_json()  # whatever was accepted can be written as UTF-8


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(exclude_categories=()), min_size=1, max_size=300))
def test_accepted_text_never_breaks_the_service(service: MemoryService, ctx: CallerContext, ns: str,
                                                text: str) -> None:
    for model, payload in ((DocumentInput, {"content": text}), (SearchRequest, {"query": text[:1000]}),
                           (TripleQuery, {"term": text[:200]})):
        try:
            request = parse(model, payload)
        except InvalidInput:
            continue
        try:
            if isinstance(request, DocumentInput):
                service.add_document(ctx, ns, request)
            elif isinstance(request, SearchRequest):
                service.search(ctx, request.model_copy(update={"namespaces": [ns]}))
            else:
                assert isinstance(request, TripleQuery)
                service.search_triples(ctx, request.model_copy(update={"namespaces": [ns]}))
        except GraphmemError:
            pass


BODIES = {"/v1/remember": ["content", "title", "path", "scope", "metadata", "request_id", "source"],
          "/v1/recall/context": ["query", "scope", "max_items", "max_tokens", "threshold"],
          "/v1/handoffs": ["project", "goal", "summary", "expected_version", "request_id", "next_steps", "scope"],
          "/v1/jobs": ["memories", "scope"]}


@pytest.fixture(scope="module")
def http(runtime: Runtime) -> Iterator[tuple[TestClient, dict[str, str]]]:
    namespace = f"p-{uuid.uuid4().hex[:8]}"
    new = NewCredential(name="props", scopes=[Scope.read, Scope.write], namespaces=[namespace])
    with TestClient(create_app(runtime=runtime)) as client:
        yield client, {"Authorization": f"Bearer {runtime.identity.create(new, by=OPERATOR)[1]}",
                       "Content-Type": "application/json"}


@pytest.mark.parametrize("route", list(BODIES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_json_body_is_answered_without_a_server_error(http: tuple[TestClient, dict[str, str]], route: str,
                                                          data: st.DataObject) -> None:
    """Any JSON (lone surrogates, NaN, infinities, numbers past 64 bits, wrong types, unknown fields) into a
    /v1 body: graphmem's envelope with a code, or FastAPI's 422 shape; never a 5xx."""
    client, headers = http
    fields = st.sampled_from([*BODIES[route], "unknown"])
    body = data.draw(st.dictionaries(fields, VALUES, max_size=5))
    response = client.post(route, content=json.dumps(body).encode(), headers=headers)
    assert response.status_code < 500, response.text
    answer = response.json()
    if response.status_code == 422:
        assert all(set(problem) == {"type", "loc", "msg"} for problem in answer["detail"])
    elif response.status_code >= 400:
        assert answer["error"]["code"] and answer["error"]["message"]
