"""Properties of the service's inputs: any input, of any Unicode and any type, is either accepted or refused
with a typed ``InvalidInput``, and text the models accept never makes the service fail with anything but a
typed error. The front ends are tried in ``test_front_end_properties.py``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from strategies import VALUES

from graphmem.errors import GraphmemError, InvalidInput
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
from graphmem.service import MemoryService

MODELS: list[type[BaseModel]] = [DocumentInput, UpdateInput, ForgetRequest, DocumentListOptions, HistoryOptions,
                                 IngestItem, View, SearchRequest, RecallRequest, EntitySearchRequest, TripleQuery,
                                 ExportCaps, ExportRequest]


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
                service.add_memory(ctx, ns, request)
            elif isinstance(request, SearchRequest):
                service.search(ctx, request.model_copy(update={"namespaces": [ns]}))
            else:
                assert isinstance(request, TripleQuery)
                service.search_triples(ctx, request.model_copy(update={"namespaces": [ns]}))
        except GraphmemError:
            pass
