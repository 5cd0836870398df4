"""``MemoryService``: the one object every front end calls, composed of small parts, each named for what
it does (``adding``, ``documents``, ``forgetting``, ``search``, ``entities``, ``exporting``, ``handoffs``;
``access`` holds the namespace checks and ``shared`` what they share). Every public call takes the caller's
context and typed inputs (``graphmem/model/``) and returns typed results (``graphmem/results/``); each logical
operation is one transaction of named statements (all of it commits, or nothing does).

Isolation rules, applied in every call:

* a namespace the caller cannot read is ``NotFound`` (it is invisible); writing to a namespace the caller
  cannot write is ``Forbidden``; nothing is looked up to decide either;
* an id is looked up only inside the caller's readable namespaces, so an id of another namespace is
  ``NotFound`` exactly like an id that does not exist; nothing is looked up across namespaces;
* a write through an id the caller can read but not write is ``Forbidden``;
* a read whose ``namespace`` is None (or whose request names no ``namespaces``) covers every namespace the
  context may read, as one list or one ranking; its result names them (``namespaces``).

Write safety: ``request_id`` makes add, update and forget retry-safe (same request → first result;
different request under the same id → ``Conflict``); ``expected_version`` is a compare-and-swap on the
chain's latest version. Every change to a memory first locks its chain's latest version.

Inputs are validated again under the operator's limits (``model.checked``), whoever built them.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable

from graphmem.config import Settings
from graphmem.cursors import Cursors
from graphmem.errors import GraphmemError
from graphmem.ingest.pipeline import Pipeline, Progress
from graphmem.ingest.reembed import reembed
from graphmem.model import (
    CURRENT,
    MAX_NAMESPACES,
    CallerContext,
    DocumentInput,
    DocumentListOptions,
    EntityListOptions,
    EntityLookup,
    EntitySearchRequest,
    Exchange,
    ExportFormat,
    ExportRequest,
    FactListOptions,
    ForgetRequest,
    HandoffInput,
    HandoffListOptions,
    HistoryOptions,
    IngestItem,
    MemoryDetailOptions,
    PathRequest,
    RecallRequest,
    SearchRequest,
    TripleQuery,
    UpdateInput,
    View,
)
from graphmem.model.assertions import (
    EntitiesCreate,
    EntitiesDelete,
    ObservationsAdd,
    ObservationsDelete,
    RelationsChange,
)
from graphmem.records import now_ms
from graphmem.results import (
    Changed,
    Document,
    DocumentHit,
    DocumentInfo,
    DocumentPage,
    EntityDetail,
    EntityFact,
    EntityList,
    EntityPage,
    EntityRef,
    EntityWithAliases,
    ExportResult,
    FactHit,
    FactInfo,
    FactPage,
    FactRecord,
    ForgetResult,
    Handoff,
    HandoffPage,
    HistoryPage,
    IngestOutcome,
    JobInfo,
    MemoryDetail,
    NamespaceCounts,
    Neighbour,
    PathResult,
    RecallResult,
    RenderedExport,
    TripleHit,
    TriplePage,
)
from graphmem.results.knowledge import (
    Deleted,
    EntitiesCreated,
    KnowledgeGraph,
    ObservationsAddedResult,
    RelationsCreated,
)
from graphmem.results.tokens import GraphResult
from graphmem.service.access import within_bound
from graphmem.service.adding import JOB_POLL_S, Adding, AfterWrite
from graphmem.service.assertions import Assertions
from graphmem.service.coalescing import Coalescer
from graphmem.service.documents import Documents
from graphmem.service.entities import Entities
from graphmem.service.exporting import Exporting
from graphmem.service.facts import Facts
from graphmem.service.forgetting import Forgetting
from graphmem.service.guide import GuideQueries, guide_queries
from graphmem.service.handoffs import Handoffs
from graphmem.service.knowledge import Knowledge
from graphmem.service.search import Search
from graphmem.service.shared import Core
from graphmem.store.driver import GraphStore

log = logging.getLogger(__name__)


class MemoryService:
    """The public calls, grouped as the parts that implement them (see the module docstring)."""

    def __init__(self, store: GraphStore, settings: Settings, pipeline: Pipeline, cursors: Cursors,
                 clock: Callable[[], int] = now_ms) -> None:
        self.core = Core(store, settings, pipeline, clock, cursors)
        self._documents = Documents(self.core)
        self._adding = Adding(self.core, self._documents)
        self.coalescer = Coalescer(self._adding, settings.coalesce_window_ms, settings.coalesce_max)
        self._forgetting = Forgetting(self.core)
        self._search = Search(self.core)
        self._exporting = Exporting(self.core, self._search)
        self._handoffs = Handoffs(self.core)
        self._entities = Entities(self.core)
        self._facts = Facts(self.core)
        self._assertions = Assertions(self.core)
        self._knowledge = Knowledge(self.core, self._entities, self._search)

    @property
    def pipeline(self) -> Pipeline:
        return self.core.pipeline

    # ---- adding -------------------------------------------------------------------------------------------

    def add_memory(self, ctx: CallerContext, namespace: str, item: DocumentInput,
                   client: str | None = None) -> Changed:
        """Store a new memory (version 1) and its sentence facts, in one transaction; text identical to a
        current memory of the namespace answers with that memory, ``unchanged``. ``client``: the front end
        it came through, recorded in its metadata with the credential's name (``DocumentInput.stamped``).
        Concurrent adds share one NLP pass, each with its own outcome (``service/coalescing.py``)."""
        if client is not None:
            item = item.stamped(client, ctx.credential_name)
        document, change = self.coalescer.add(self._adding.checked(ctx, namespace, item))
        return Changed(document=document, change=change)

    def add_memories(self, ctx: CallerContext, namespace: str, items: list[DocumentInput]) -> list[Changed]:
        """Store up to ``limits.batch_max`` memories in one transaction; a batch whose request_id conflicts
        writes nothing."""
        return [Changed(document=document, change=change)
                for document, change in self._adding.add(ctx, namespace, items)]

    def submit_memories(self, ctx: CallerContext, namespace: str, items: list[DocumentInput]) -> JobInfo:
        """Queue memories for ingestion; the job is returned at once and applied exactly once by a worker."""
        return self._adding.submit(ctx, namespace, items)

    def log_exchange(self, ctx: CallerContext, namespace: str, exchange: Exchange, client: str) -> JobInfo:
        """Queue one turn of a conversation as one memory (``Exchange.document``), stamped like ``add_memory``'s;
        the job is returned at once."""
        return self.submit_memories(ctx, namespace, [exchange.document().stamped(client, ctx.credential_name)])

    def job_status(self, ctx: CallerContext, job_id: str) -> JobInfo:
        return self._adding.job_status(ctx, job_id)

    def watch_job(self, ctx: CallerContext, job_id: str, poll_s: float = JOB_POLL_S) -> AsyncIterator[JobInfo]:
        """The job now, then at each change of its state, until it ends (``Adding.watch``)."""
        return self._adding.watch(ctx, job_id, poll_s)

    def ingest(self, ctx: CallerContext, namespace: str, items: list[IngestItem],
               progress: Progress | None = None) -> list[IngestOutcome]:
        """Files and JSONL lines: each item succeeds or fails on its own (``service/adding.py``); ``progress``
        hears how many facts are done."""
        return self._adding.ingest(ctx, namespace, items, progress)

    def apply_job(self, ctx: CallerContext, namespace: str, items: list[DocumentInput],
                  after_write: AfterWrite) -> None:
        """For the job worker, not for front ends: add ``items`` and run ``after_write`` (the job's done
        mark) in the same transaction."""
        self._adding.add(ctx, namespace, items, after_write)

    # ---- documents ----------------------------------------------------------------------------------------

    def get_version(self, ctx: CallerContext, doc_id: str) -> Document:
        """One version of a memory by its id."""
        return self._documents.get(ctx, doc_id)

    def get_versions(self, ctx: CallerContext, doc_ids: list[str]) -> dict[str, Document]:
        """Versions by id in one read (for batching front ends); unreadable ids are absent."""
        return self._documents.many(ctx, doc_ids)

    def facts_of_memories(self, ctx: CallerContext, doc_ids: list[str], limit: int) -> dict[str, list[FactInfo]]:
        """The first ``limit`` facts of each memory in one read (for batching front ends)."""
        return self._documents.facts_of(ctx, doc_ids, limit)

    def histories(self, ctx: CallerContext, doc_ids: list[str], limit: int) -> dict[str, list[DocumentInfo]]:
        """The newest ``limit`` versions of each memory's chain in one read (for batching front ends)."""
        return self._documents.histories(ctx, doc_ids, limit)

    def get_memory(self, ctx: CallerContext, doc_id: str,
                   options: MemoryDetailOptions = MemoryDetailOptions()) -> MemoryDetail:
        """A version with its facts (lineage fields on each) and the entities they mention."""
        return self._documents.detail(ctx, doc_id, options)

    def list_memories(self, ctx: CallerContext, namespace: str | None,
                      options: DocumentListOptions = DocumentListOptions()) -> DocumentPage:
        return self._documents.list(ctx, namespace, options)

    def history(self, ctx: CallerContext, doc_id: str, options: HistoryOptions = HistoryOptions()) -> HistoryPage:
        return self._documents.history(ctx, doc_id, options)

    def update_memory(self, ctx: CallerContext, doc_id: str, update: UpdateInput) -> Changed:
        """A new version of the memory (``versioned``), or, when ``update`` changes nothing, the version it
        names (``unchanged``)."""
        return self._documents.update(ctx, doc_id, update)

    def namespace_counts(self, ctx: CallerContext, namespace: str) -> NamespaceCounts:
        return self._documents.counts(ctx, namespace)

    def stored_namespace_counts(self) -> dict[str, NamespaceCounts]:
        """Every namespace that holds memories, with its counts, in one read. The local operator's call
        (``graphmem stats``, with the data directory's trust): no front end exposes it, since it names the
        namespaces of every credential."""
        return self._documents.every_namespace_counts()

    def every_namespace(self) -> list[str]:
        """The namespaces that hold memories or jobs (not the reserved ``_`` ones), in name order, at most
        ``MAX_NAMESPACES`` (``access.within_bound``): what a caller of every namespace reads when it names none
        (``Identity.reading``), and the local operator's reads without ``-n``."""
        return within_bound(self._documents.stored_namespaces(MAX_NAMESPACES + 1))

    # ---- forgetting ---------------------------------------------------------------------------------------

    def forget(self, ctx: CallerContext, doc_id: str, request: ForgetRequest = ForgetRequest()) -> ForgetResult:
        return self._forgetting.forget(ctx, doc_id, request)

    def restore(self, ctx: CallerContext, doc_id: str) -> Document:
        return self._forgetting.restore(ctx, doc_id)

    # ---- handoffs -----------------------------------------------------------------------------------------

    def save_handoff(self, ctx: CallerContext, namespace: str, handoff: HandoffInput) -> Handoff:
        """A new revision of a project's handoff (``service/handoffs.py``: retries, versions, conflicts)."""
        return self._handoffs.save(ctx, namespace, handoff)

    def get_handoff(self, ctx: CallerContext, namespace: str, project: str, version: int | None = None) -> Handoff:
        return self._handoffs.get(ctx, namespace, project, version)

    def list_handoffs(self, ctx: CallerContext, namespace: str,
                      options: HandoffListOptions = HandoffListOptions()) -> HandoffPage:
        return self._handoffs.list(ctx, namespace, options)

    # ---- what agents state (Neo4j's memory-MCP calls: service/assertions.py) ---------------------------------

    def create_entities(self, ctx: CallerContext, namespace: str, request: EntitiesCreate) -> EntitiesCreated:
        return self._assertions.create_entities(ctx, namespace, request)

    def create_relations(self, ctx: CallerContext, namespace: str, request: RelationsChange) -> RelationsCreated:
        return self._assertions.create_relations(ctx, namespace, request)

    def add_observations(self, ctx: CallerContext, namespace: str,
                         request: ObservationsAdd) -> ObservationsAddedResult:
        return self._assertions.add_observations(ctx, namespace, request)

    def delete_entities(self, ctx: CallerContext, namespace: str, request: EntitiesDelete) -> Deleted:
        return self._assertions.delete_entities(ctx, namespace, request)

    def delete_observations(self, ctx: CallerContext, namespace: str, request: ObservationsDelete) -> Deleted:
        return self._assertions.delete_observations(ctx, namespace, request)

    def delete_relations(self, ctx: CallerContext, namespace: str, request: RelationsChange) -> Deleted:
        return self._assertions.delete_relations(ctx, namespace, request)

    def read_graph(self, ctx: CallerContext, namespace: str | None, limit: int = 50,
                   cursor: str | None = None) -> KnowledgeGraph:
        return self._knowledge.read_graph(ctx, namespace, limit, cursor)

    def search_knowledge(self, ctx: CallerContext, namespace: str | None, query: str) -> KnowledgeGraph:
        return self._knowledge.search(ctx, namespace, query)

    def find_entities_by_name(self, ctx: CallerContext, namespace: str | None, names: list[str]) -> KnowledgeGraph:
        return self._knowledge.find_by_name(ctx, namespace, names)

    # ---- search -------------------------------------------------------------------------------------------

    def search(self, ctx: CallerContext, request: SearchRequest) -> list[FactHit]:
        return self._search.facts(ctx, request)

    def search_memories(self, ctx: CallerContext, request: SearchRequest) -> list[DocumentHit]:
        return self._search.documents(ctx, request)

    def search_entities(self, ctx: CallerContext, request: EntitySearchRequest) -> EntityPage:
        return self._search.entities(ctx, request)

    def search_triples(self, ctx: CallerContext, query: TripleQuery) -> TriplePage:
        return self._search.triples(ctx, query)

    def recall(self, ctx: CallerContext, request: RecallRequest) -> RecallResult:
        return self._search.recall(ctx, request)

    # ---- entities -----------------------------------------------------------------------------------------

    def get_entity(self, ctx: CallerContext, namespace: str, lookup: EntityLookup) -> EntityDetail:
        """An entity by id or name, its facts (newest first) and its neighbours through triples, each list
        bounded and saying when it was cut."""
        return self._entities.get(ctx, namespace, lookup)

    def get_entities(self, ctx: CallerContext, namespace: str | None, entity_ids: list[str],
                     view: View = CURRENT) -> dict[str, EntityWithAliases]:
        """Entities by id in one read (for batching front ends); ids not visible in the view are absent."""
        return self._entities.many(ctx, namespace, entity_ids, view)

    def facts_of_entities(self, ctx: CallerContext, namespace: str | None, entity_ids: list[str], limit: int,
                          view: View = CURRENT) -> dict[str, list[EntityFact]]:
        """The newest ``limit`` facts mentioning each entity, in one read."""
        return self._entities.facts_of(ctx, namespace, entity_ids, limit, view)

    def neighbours_of_entities(self, ctx: CallerContext, namespace: str | None, entity_ids: list[str], limit: int,
                               view: View = CURRENT) -> dict[str, list[Neighbour]]:
        """Up to ``limit`` triples of each entity (either direction), in one read."""
        return self._entities.neighbours_of(ctx, namespace, entity_ids, limit, view)

    # ---- facts by id, in batches --------------------------------------------------------------------------

    def list_facts(self, ctx: CallerContext, namespace: str | None,
                   options: FactListOptions = FactListOptions()) -> FactPage:
        """A page of facts (newest first by default), with conditions and a keyset cursor."""
        return self._facts.page(ctx, namespace, options)

    def list_entities(self, ctx: CallerContext, namespace: str | None,
                      options: EntityListOptions = EntityListOptions()) -> EntityList:
        """A page of entities (by name by default), with conditions and a keyset cursor."""
        return self._entities.page(ctx, namespace, options)

    def get_fact(self, ctx: CallerContext, fact_id: str) -> FactRecord:
        """A fact by id (any version); not found outside the caller's namespaces."""
        return self._facts.get(ctx, fact_id)

    def get_facts(self, ctx: CallerContext, fact_ids: list[str]) -> dict[str, FactRecord]:
        """Facts by id in one read; unreadable ids are absent."""
        return self._facts.many(ctx, fact_ids)

    def entities_of_facts(self, ctx: CallerContext, fact_ids: list[str]) -> dict[str, list[EntityRef]]:
        """What each fact mentions, in one read."""
        return self._facts.entities_of(ctx, fact_ids)

    def triples_of_facts(self, ctx: CallerContext, fact_ids: list[str], limit: int) -> dict[str, list[TripleHit]]:
        """The triples read from each fact, up to ``limit`` each, in one read."""
        return self._facts.triples_of(ctx, fact_ids, limit)

    def find_path(self, ctx: CallerContext, namespace: str, request: PathRequest) -> PathResult:
        """The shortest chains of triples and shared facts between two entities (``service/entities.py``)."""
        return self._entities.path(ctx, namespace, request)

    # ---- export -------------------------------------------------------------------------------------------

    def export(self, ctx: CallerContext, namespace: str | None, request: ExportRequest) -> ExportResult:
        return self._exporting.export(ctx, namespace, request)

    def export_within_tokens(self, ctx: CallerContext, namespace: str | None, request: ExportRequest,
                             label_chars: int, max_tokens: int) -> GraphResult:
        """An export page fitted to ``max_tokens`` for a caller's context window, labels cut at ``label_chars``
        or shorter (``search/budget.py``)."""
        return self._exporting.within_tokens(ctx, namespace, request, label_chars, max_tokens)

    def render_export(self, result: ExportResult, format: ExportFormat, namespace: str,
                      target_namespace: str | None = None) -> RenderedExport:
        return self._exporting.render(result, format, namespace, target_namespace)

    # ---- operations ---------------------------------------------------------------------------------------

    def ping(self) -> None:
        self.core.store.read(lambda tx: tx.single("ping"))

    def reembed(self, progress: Callable[[int], object]) -> tuple[int, str]:
        """Give every fact and entity a vector from the configured embedder, then record it as the database's
        model; returns how many got one, and the embedder's name. The local operator's call (``graphmem
        reembed``, with the server stopped); ``progress`` hears each page done."""
        embedder = self.core.pipeline.embedder_within(None)  # a first export of the model may take a while
        return reembed(self.core.store, embedder, progress), embedder.name

    def guide_queries(self, namespace: str | None = None) -> GuideQueries:
        """The Browser guide's statements as this server's engine runs them, with their parameters for
        ``namespace`` (the default namespace when None)."""
        return guide_queries(self.core.store.dialect, namespace or self.core.settings.default_namespace)

    def jobs_by_status(self) -> dict[str, int]:
        """How many ingestion jobs are in each state, over every namespace: the operator's gauge on
        ``/metrics`` (counts only, no namespace)."""
        rows = self.core.store.read(lambda tx: tx.run("jobs_by_status"))
        return {str(row["status"]): int(row["jobs"]) for row in rows}

    def warm_up(self) -> None:
        """Models and search indexes, then real searches and exports in the namespace with the most memories
        (``Search.warm_up``, ``Exporting.warm_up``). The exports come last and on their own: if they fail, the
        models and indexes are loaded all the same, and the first exports pay for their own paths."""
        settings = self.core.settings
        # counting every namespace's memories is start-up work only when something will run there
        namespace = self.core.largest_namespace() if settings.warm_up_searches or settings.warm_up_exports else None
        self._search.warm_up(namespace)
        if namespace is None:
            return
        try:
            self._exporting.warm_up(namespace, settings.warm_up_exports)
        except GraphmemError:
            log.warning("warm-up exports failed; the first exports will compile their paths themselves",
                        exc_info=True)
