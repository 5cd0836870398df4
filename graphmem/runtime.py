"""Wiring: settings → (bundled engine) → driver → dialect → schema → service. Used by the CLI and app.

Start-up work lives here, once per process; requests never repeat it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from graphmem import __version__
from graphmem.config import Settings
from graphmem.cursors import Cursors, cursor_key
from graphmem.errors import ConfigurationError, GraphmemError
from graphmem.identity import CredentialStore, Identity, RateLimits
from graphmem.ingest.jobs import JobWorker
from graphmem.ingest.pipeline import Pipeline
from graphmem.ingest.split import embedding_identity
from graphmem.nlp.embedder import DIMENSIONS, embedder_name
from graphmem.service import MemoryService
from graphmem.store import dialect as dialects
from graphmem.store.driver import GraphStore
from graphmem.store.engine import BundledEngine
from graphmem.store.schema import bootstrap, check_embedder
from graphmem.store.settling import IndexSettling
from graphmem.store.statement_log import StatementLog
from graphmem.store.watch import EngineWatch

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    settings: Settings
    store: GraphStore
    service: MemoryService
    identity: Identity
    engine: BundledEngine | None = None
    owns_engine: bool = False
    schema_version: int = 0
    versions: dict[str, str] = field(default_factory=dict)
    # Set while the warm-up (models, search indexes) runs: /ready waits for it; a runtime that never warms up
    # (a test's, a CLI command's) has nothing to wait for.
    warming: threading.Event = field(default_factory=threading.Event)
    settling: IndexSettling | None = None  # the database's background index work, where it can be seen
    # Once ready, a later index rebuild (after a big ingest) is reported by /health, not by /ready: a load
    # balancer should not drop a server that answers, only wait for it to get ready the first time.
    became_ready: threading.Event = field(default_factory=threading.Event)
    watch: EngineWatch | None = None  # the bundled engine, watched while serving (``start_serving``)
    # Set by ``close``: a warm-up still running then fails on the closed driver, which is no fault (a stdio
    # client that leaves within seconds of starting ``graphmem mcp``)
    closed: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def open(cls, settings: Settings, *, own_engine: bool = True, check_model: bool = True) -> Runtime:
        """Connect (starting the bundled engine if needed), detect the dialect, bootstrap the schema."""
        if settings.write_retry_attempts is not None:
            log.warning("GRAPHMEM_WRITE_RETRY_ATTEMPTS is ignored: writes are retried for "
                        "GRAPHMEM_WRITE_RETRY_BUDGET_S (%g s)", settings.write_retry_budget_s)
        engine: BundledEngine | None = None
        started = False
        if settings.uses_bundled_engine:
            engine = BundledEngine(settings)
            _, started = engine.ensure_running(owned=own_engine)
            uri, user, password = engine.bolt_uri, "root", engine.password()
            database = settings.engine_database
        else:
            if settings.neo4j_password is None:
                raise ConfigurationError("GRAPHMEM_NEO4J_PASSWORD is required with GRAPHMEM_NEO4J_URI")
            uri, user = str(settings.neo4j_uri), settings.neo4j_user
            password, database = settings.neo4j_password.get_secret_value(), settings.neo4j_database
        try:
            driver = GraphStore.open_driver(uri, user, password, settings.connect_timeout_s)
            probe = GraphStore(driver, database, dialects.NEO4J, transaction_timeout_s=5, retry_budget_s=0.0)
            info = probe.server_info()
            dialect = dialects.detect(info.agent, settings.dialect)
            store = GraphStore(driver, database, dialect,
                               transaction_timeout_s=settings.transaction_timeout_s,
                               retry_budget_s=settings.write_retry_budget_s,
                               ran=StatementLog(settings.statement_log) if settings.statement_log else None)
            http = None
            if not dialect.is_neo4j:
                http_url = engine.http_url if engine else settings.arcadedb_http_url
                if http_url is None:
                    raise ConfigurationError("an external ArcadeDB needs GRAPHMEM_ARCADEDB_HTTP_URL")
                http = (http_url, (user, password))
            schema_version = bootstrap(store, arcadedb_http=http)
            if check_model:  # only `graphmem reembed` opens a database with another model on purpose
                check_embedder(store, embedding_identity(embedder_name(settings.embedder)), DIMENSIONS)
        except BaseException:
            if engine is not None and started and own_engine:
                engine.stop(only_if_owned=True)
            raise
        versions = {"graphmem": __version__, "server": info.agent}
        if engine is not None:
            versions["bundled_engine"] = engine.version
        log.info("connected to %s (%s dialect)", info.agent, dialect.name)
        pipeline = Pipeline(settings)
        versions["embedder"] = embedder_name(settings.embedder)
        service = MemoryService(store, settings, pipeline, Cursors(cursor_key(settings)))
        limits = RateLimits(settings.rate_limit_reads, settings.rate_limit_writes, settings.rate_limit_window_s,
                            settings.rate_limit_storage)
        identity = Identity(CredentialStore(store), limits, settings.default_namespace, service.every_namespace)
        return cls(settings, store, service, identity, engine,
                   owns_engine=started and own_engine, schema_version=schema_version, versions=versions,
                   settling=IndexSettling(store, http))

    def warm_up(self) -> None:
        """Load models and search indexes, and run the configured searches and exports, ahead of the first
        request (run in the background by the app; ``MemoryService.warm_up``).
        A failure is logged, not raised: the first request would then pay the cost, nothing more."""
        self.warming.set()
        try:
            self.service.warm_up()
            log.info("warm-up done: models loaded, search indexes touched, warm-up searches and exports run")
        except Exception:  # warm-up is an optimisation; requests report real failures themselves
            if self.closed.is_set():
                log.info("warm-up stopped: the server is shutting down")
            else:
                log.exception("warm-up failed; the first requests will load models and indexes themselves")
        finally:
            self.warming.clear()

    def pending(self, indexes: bool = True) -> list[str]:
        """What the first searches would still wait for: ``models`` while the warm-up runs, ``indexes`` (if
        asked) while the database builds search indexes in the background (``graphmem/store/settling.py``)."""
        waiting = ["models"] if self.warming.is_set() else []
        if indexes and self.settling is not None and self.settling.busy():
            waiting.append("indexes")
        return waiting

    def job_worker(self) -> JobWorker:
        """A worker for this runtime's queued jobs (not started)."""
        return JobWorker(self.store, self.settings, self.service.apply_job, models=self.service.pipeline.warm_up)

    def start_serving(self) -> Callable[[], None]:
        """What a long-running front end (``serve``, ``graphmem mcp``) runs beside its requests: models and
        search indexes warmed in the background (the first search does not pay seconds of loading), the
        bundled engine's watch (``store/watch.py``: an engine this process started is started again if it
        dies), and the job worker when jobs are enabled. Returns the call that stops them."""
        self.warming.set()  # before the thread starts: /ready never sees a moment between start and warm-up
        threading.Thread(target=self.warm_up, name="graphmem-warm-up", daemon=True).start()
        stop_watch = self.watch_engine()
        jobs = self.job_worker() if self.settings.jobs_enabled else None
        if jobs is not None:
            jobs.start()

        def stop() -> None:
            stop_watch()  # first: an engine that stops from here on is not restarted
            if jobs is not None:
                jobs.stop()

        return stop

    def watch_engine(self) -> Callable[[], None]:
        """Watch the bundled engine (``store/watch.py``); returns the call that stops watching. Of several app
        processes, only the one that started the engine restarts it (``serve --workers``: the parent)."""
        if self.engine is None:
            return lambda: None
        watch = self.watch = EngineWatch(self.engine, owned=self.owns_engine)
        watch.start()
        return watch.stop

    def warn_if_counting_alone(self, why: str) -> None:
        """Rate limits kept in this process's memory while other app processes serve the same database: each
        process counts alone, so a credential gets its limit once per process. Said once, at start."""
        if self.identity.limits.local:
            log.warning("rate limits are counted in this process only (GRAPHMEM_RATE_LIMIT_STORAGE=%s), but %s: "
                        "each process counts alone, so a credential gets its limits once per process; set "
                        "GRAPHMEM_RATE_LIMIT_STORAGE=redis://host:6379 to share them",
                        self.settings.rate_limit_storage, why)

    def ready(self) -> tuple[bool, dict[str, object]]:
        """(ready, answer) for ``/ready``: the database answers, the warm-up is done, and, until the first
        time this holds, no search index is being built in the background (later builds only make
        ``/health`` say ``"warming"``)."""
        healthy, report = self.health(indexes=not self.became_ready.is_set())
        if report["status"] == "restarting":
            return False, {"status": "restarting", "reason": report["reason"]}
        if not healthy:
            return False, {"status": report["status"], "reason": report.get("reason")}
        if report["status"] == "warming":
            return False, {"status": "warming", "waiting_for": report["waiting_for"]}
        self.became_ready.set()
        return True, {"status": "ready"}

    def health(self, indexes: bool = True, detailed: bool = False) -> tuple[bool, dict[str, object]]:
        """(healthy, report). The report never carries a secret: no URI credentials, no password; and only
        ``detailed`` (an admin's) names the engine's data directory and PID. Healthy with work pending
        (``pending``) is ``"status": "warming"``: answering, but the first searches would be slow; ``/ready``
        turns that into 503."""
        report: dict[str, object] = {
            "dialect": self.store.dialect.name,
            "schema_version": self.schema_version,
            "versions": self.versions,
            "engine": {"mode": "bundled" if self.engine else "external"},
            "embedder": {"name": embedder_name(self.settings.embedder), "backend": self.settings.embedder.value,
                         "threads": self.settings.embed_threads},
        }
        engine_report = report["engine"]
        assert isinstance(engine_report, dict)
        if self.engine is not None:
            status = self.engine.status()
            engine_report.update(running=status.running, owned=self.owns_engine if self.watch is None
                                 else self.watch.owned)
            if detailed:
                engine_report.update(data_dir=str(status.data_dir), pid=status.state.pid if status.state else None)
        if self.watch is not None and self.watch.restarting:  # down, and coming back: no need to ask it
            engine_report["reachable"] = False
            return False, {"status": "restarting", "reason": self.watch.restarting, **report}
        try:
            self.service.ping()
        except GraphmemError as exc:  # while the engine stops, the driver reports it in several ways: all 503
            engine_report["reachable"] = False
            return False, {"status": "unavailable", "reason": exc.code, **report}
        engine_report["reachable"] = True
        waiting = self.pending(indexes)
        if waiting:
            return True, {"status": "warming", "waiting_for": waiting, **report}
        return True, {"status": "ok", **report}

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.closed.set()
        self.store.close()
        if self.engine is not None and self.owns_engine:
            self.engine.stop(only_if_owned=True)
