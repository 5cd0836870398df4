"""The search side of the service: facts, documents, entities, triples and budgeted recall, all in the
caller's readable namespaces (or the ones named, each of which must be readable), each with one embedding
of the query. The search logic itself lives in ``graphmem/search/``."""

from __future__ import annotations

from pydantic import BaseModel

from graphmem.cursors import digest, mismatch
from graphmem.model import CallerContext, EntitySearchRequest, RecallRequest, SearchRequest, TripleQuery
from graphmem.nlp.language import lemmas
from graphmem.results import DocumentHit, EntityPage, FactHit, RecallResult, TriplePage
from graphmem.search.documents import search_documents
from graphmem.search.entities import search_entities
from graphmem.search.hybrid import search_facts
from graphmem.search.recall import build_recall, count_tokens
from graphmem.search.triples import TripleKey, search_triples
from graphmem.service.access import searchable
from graphmem.service.shared import Core, repeat_within
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.driver import Tx

WARM_SECONDS = 20.0
# searched by the warm-up: words of every kind of memory, so each search path runs (names, plain words)
WARM_QUERIES = ["project decision", "meeting notes last week", "Alice Johnson", "database migration plan",
                "what did we decide about the release", "Kafka", "favourite editor", "budget review"]


class _EntityCursor(BaseModel):
    request: str  # digest of the request without its cursor, and of the namespaces searched
    score: float
    id: str
    seen: int


class _TripleCursor(BaseModel):
    request: str
    after: TripleKey


def _request_digest(request: BaseModel, namespaces: list[str]) -> str:
    return digest({"request": request.model_dump(mode="json", exclude={"cursor"}), "namespaces": namespaces})


class Search:
    def __init__(self, core: Core) -> None:
        self.core = core

    def warm_up(self, namespace: str | None) -> None:
        """Load the models and the recall tokenizer, and touch every search index once, so the first request
        does not pay for them (measured on 10k facts after a restart: the first search took 1.5 s cold and
        0.8 s after this). Then real searches in ``namespace`` (the one with the most memories), so that the
        database has compiled and cached its search paths too: after a restart at 100k facts, with the indexes
        touched, the first search took 1.6 s and the first 200 searches p95 94 ms; after 300 of these (16 s),
        93 ms and 68 ms. At most ``warm_up_searches`` of them and ``WARM_SECONDS``; what they find is
        dropped."""
        self.core.pipeline.warm_up()
        count_tokens("warm up")
        (vector,) = self.core.pipeline.embedder.embed(["warm up"])
        dialect = self.core.store.dialect

        def touch(tx: Tx) -> None:
            for index in (SearchIndex.fact_embedding, SearchIndex.entity_embedding, SearchIndex.chunk_embedding):
                tx.run("index_probe_vector", index=dialect.index_name(index), k=10, vector=vector, limit=1,
                       namespaces=[])
            for index in (SearchIndex.fact_text, SearchIndex.entity_name, SearchIndex.chunk_text):
                tx.run("index_probe_fulltext", index=dialect.index_name(index), query="warm", k=10, limit=1,
                       namespaces=[])

        self.core.store.read(touch)
        if namespace is not None:
            ctx = CallerContext.for_namespaces(namespace)
            repeat_within(self.core.settings.warm_up_searches, WARM_SECONDS,
                          lambda i: self.facts(ctx, SearchRequest(query=WARM_QUERIES[i % len(WARM_QUERIES)])))

    def facts(self, ctx: CallerContext, request: SearchRequest) -> list[FactHit]:
        """Hybrid fact search (``graphmem/search/hybrid.py``)."""
        names, vector, now, dialect = self._searching(ctx, request)
        return self.core.store.read(lambda tx: search_facts(tx, dialect, names, vector, request, now))

    def documents(self, ctx: CallerContext, request: SearchRequest) -> list[DocumentHit]:
        """Memories ranked by their own signals and their facts' (``graphmem/search/documents.py``);
        ``limit`` counts memories. One transaction, one embedding of the query."""
        names, vector, now, dialect = self._searching(ctx, request)
        return self.core.store.read(lambda tx: search_documents(tx, dialect, names, vector, request, now))

    def _searching(self, ctx: CallerContext, request: SearchRequest) -> tuple[list[str], list[float], int, Dialect]:
        """What a fact or document search needs before its transaction: the namespaces checked, the query
        embedded once, the time and the dialect."""
        names = searchable(ctx, request.namespaces)
        (vector,) = self.core.pipeline.embedder.embed([request.query])
        return names, vector, self.core.clock(), self.core.store.dialect

    def entities(self, ctx: CallerContext, request: EntitySearchRequest) -> EntityPage:
        """Entities by name and embedding (``graphmem/search/entities.py``), a page at a time."""
        names = searchable(ctx, request.namespaces)
        bound = _request_digest(request, names)
        state = None
        if request.cursor is not None:
            state = self.core.cursors.open("entities", request.cursor, _EntityCursor)
            if state.request != bound:
                raise mismatch()
        (vector,) = self.core.pipeline.embedder.embed([request.query])
        dialect = self.core.store.dialect
        after = (state.score, state.id) if state else None
        seen = state.seen if state else 0
        hits, more = self.core.store.read(
            lambda tx: search_entities(tx, dialect, names, vector, request, after, seen))
        next_cursor = self.core.cursors.seal("entities", _EntityCursor(
            request=bound, score=hits[-1].score, id=hits[-1].id, seen=seen + len(hits))) if more and hits else None
        return EntityPage(items=hits, next_cursor=next_cursor, namespaces=names)

    def triples(self, ctx: CallerContext, query: TripleQuery) -> TriplePage:
        """Triples by subject / predicate / object / free term (``graphmem/search/triples.py``)."""
        names = searchable(ctx, query.namespaces)
        bound = _request_digest(query, names)
        after = None
        if query.cursor is not None:
            state = self.core.cursors.open("triples", query.cursor, _TripleCursor)
            if state.request != bound:
                raise mismatch()
            after = state.after
        settings = self.core.settings
        lemma = lemmas(query.predicate, settings.entity_patterns_file, settings.model_wait_s) if query.predicate \
            else None
        dialect = self.core.store.dialect
        hits, last = self.core.store.read(lambda tx: search_triples(tx, dialect, names, query, lemma, after))
        next_cursor = self.core.cursors.seal("triples", _TripleCursor(request=bound, after=last)) if last else None
        return TriplePage(items=hits, next_cursor=next_cursor, namespaces=names)

    def recall(self, ctx: CallerContext, request: RecallRequest) -> RecallResult:
        """Budgeted recall (``graphmem/search/recall.py``): the filters narrow the facts considered."""
        search = SearchRequest(query=request.query, namespaces=request.namespaces, view=request.view,
                               min_score=request.min_score, limit=min(100, request.max_items * 3),
                               **request.filters().model_dump())
        recalled = build_recall(request.query, self.facts(ctx, search), request.max_items, request.max_tokens)
        return recalled.model_copy(update={"namespaces": searchable(ctx, request.namespaces)})
