"""The search side of the service: facts, documents, entities, triples and budgeted recall, all in the
caller's readable namespaces (or the ones named, each of which must be readable), all through one query
check and one embedding of the query. The search logic itself lives in ``graphmem/search/``."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from graphmem.errors import InvalidInput
from graphmem.model import CallerContext, invalid_input
from graphmem.nlp.language import get_language
from graphmem.search.documents import FACT_POOL_FACTOR, DocumentHit, aggregate_documents
from graphmem.search.entities import EntityHit, EntitySearchOptions, search_entities
from graphmem.search.hybrid import FactHit, SearchOptions, search_facts
from graphmem.search.lucene import MAX_QUERY_CHARS
from graphmem.search.recall import RecallOptions, RecallResult, build_recall, count_tokens
from graphmem.search.triples import TripleHit, TripleQuery, search_triples
from graphmem.service_base import ServiceBase
from graphmem.store.dialect import SearchIndex
from graphmem.store.driver import Tx

M = TypeVar("M", bound=BaseModel)


def _parse(model: type[M], options: dict[str, Any]) -> M:
    try:
        return model.model_validate(options)
    except ValidationError as exc:
        raise invalid_input(exc) from None


class Searching(ServiceBase):
    def warm_up(self) -> None:
        """Load the models and the recall tokenizer, and touch every search index once, so the first request
        does not pay for them. Measured on 10k facts after a restart: the first search took 1.5 s cold and
        0.8 s after this warm-up."""
        self.pipeline.warm_up()
        count_tokens("warm up")
        (vector,) = self.pipeline.embedder.embed(["warm up"])
        dialect = self.store.dialect

        def touch(tx: Tx) -> None:
            for index in (SearchIndex.fact_embedding, SearchIndex.entity_embedding):
                tx.run("index_probe_vector", index=dialect.index_name(index), k=10, vector=vector, limit=1,
                       namespaces=[])
            for index in (SearchIndex.fact_text, SearchIndex.entity_name):
                tx.run("index_probe_fulltext", index=dialect.index_name(index), query="warm", k=10, limit=1,
                       namespaces=[])

        self.store.read(touch)

    def search(self, ctx: CallerContext, query: str, namespaces: list[str] | None = None,
               **options: Any) -> list[FactHit]:
        """Hybrid fact search (``graphmem/search/hybrid.py``). Options: see ``SearchOptions``."""
        return self._facts(ctx, query, namespaces, _parse(SearchOptions, options))

    def search_documents(self, ctx: CallerContext, query: str, namespaces: list[str] | None = None,
                         **options: Any) -> list[DocumentHit]:
        """Documents ranked by their best fact; the same options as ``search`` (``limit`` counts documents)."""
        settings = _parse(SearchOptions, options)
        facts = settings.model_copy(update={"limit": min(100, settings.limit * FACT_POOL_FACTOR)})
        return aggregate_documents(self._facts(ctx, query, namespaces, facts), settings.limit)

    def search_entities(self, ctx: CallerContext, query: str, namespaces: list[str] | None = None,
                        **options: Any) -> list[EntityHit]:
        """Entities by name and embedding (``graphmem/search/entities.py``)."""
        settings = _parse(EntitySearchOptions, options)
        names, vector = self._query_scope(ctx, query, namespaces)
        return self.store.read(lambda tx: search_entities(tx, self.store.dialect, names, query, vector, settings))

    def search_triples(self, ctx: CallerContext, namespaces: list[str] | None = None,
                       **query: Any) -> list[TripleHit]:
        """Triples by subject / predicate / object / free term (``graphmem/search/triples.py``)."""
        asked = _parse(TripleQuery, query)
        names = self._namespaces(ctx, namespaces)
        lemma = None
        if asked.predicate is not None:
            language = get_language(self.settings.entity_patterns_file)
            lemma = " ".join(token.lemma_.lower() for token in language(asked.predicate))
        return self.store.read(lambda tx: search_triples(tx, self.store.dialect, names, asked, lemma))

    def recall(self, ctx: CallerContext, query: str, namespaces: list[str] | None = None, max_items: int = 8,
               max_tokens: int = 1500, **options: Any) -> RecallResult:
        """Budgeted recall (``graphmem/search/recall.py``): ``search`` options narrow the facts considered."""
        budget = _parse(RecallOptions, {"max_items": max_items, "max_tokens": max_tokens})
        settings = _parse(SearchOptions, {**options, "limit": min(100, budget.max_items * 3)})
        return build_recall(query, self._facts(ctx, query, namespaces, settings), budget)

    def _facts(self, ctx: CallerContext, query: str, namespaces: list[str] | None,
               settings: SearchOptions) -> list[FactHit]:
        names, vector = self._query_scope(ctx, query, namespaces)
        now = self.clock()
        return self.store.read(lambda tx: search_facts(tx, self.store.dialect, names, query, vector, settings, now))

    def _namespaces(self, ctx: CallerContext, namespaces: list[str] | None) -> list[str]:
        if namespaces is None:
            return ctx.readable
        if not isinstance(namespaces, list) or not 1 <= len(namespaces) <= 100:
            raise InvalidInput("namespaces must be a list of 1 to 100 names", field="namespaces")
        return sorted({self._readable(ctx, n) for n in namespaces})

    def _query_scope(self, ctx: CallerContext, query: object,
                     namespaces: list[str] | None) -> tuple[list[str], list[float]]:
        """The namespaces to search and the query's embedding, after checking the query text."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must not be blank", field="query")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"query is {len(query)} characters; at most {MAX_QUERY_CHARS} are allowed",
                               field="query")
        names = self._namespaces(ctx, namespaces)
        (vector,) = self.pipeline.embedder.embed([query])
        return names, vector


