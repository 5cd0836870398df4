"""Watching the bundled engine while a long-running front end serves (``graphmem serve``, ``graphmem mcp``).

An engine this process started (owned) is started again when it dies (killed, crashed, out of memory), with
backoff (1, 2, 4 … 30 s between tries). An engine asked to stop (SIGTERM or SIGINT: ``graphmem engine stop``,
a service manager stopping the whole group, Ctrl-C) is not: its stop is reported, and it is watched as one this
process did not start. Each try first attaches to an engine another process may have started on the data
directory meanwhile (``BundledEngine.ensure_running``): that engine is not ours, and is only watched from then
on. While the engine is down ``restarting`` says why, which ``/health`` and ``/ready`` answer as 503.

An engine this process did not start (``graphmem engine start``, another server's) is never restarted: its
going away and coming back are logged, and ``/health`` reports it unreachable meanwhile. Neo4j
(``GRAPHMEM_NEO4J_URI``) is not watched: ``/health`` reports it.
"""

from __future__ import annotations

import logging
import signal
import threading

from graphmem.errors import EngineError
from graphmem.store.engine import BundledEngine

log = logging.getLogger(__name__)

# Exit codes of an engine asked to stop: the JVM exits 128 + the signal after its shutdown hooks, and a signal
# that ends it before them shows as the negative signal number.
ASKED_TO_STOP = frozenset({0, 128 + signal.SIGTERM, 128 + signal.SIGINT, -signal.SIGTERM, -signal.SIGINT})
POLL_S = 0.5  # how often the engine's process is looked at (a child's exit status, or a process lookup)
FIRST_DELAY_S = 1.0
MAX_DELAY_S = 30.0


class EngineWatch:
    def __init__(self, engine: BundledEngine, owned: bool) -> None:
        self.engine = engine
        self.owned = owned
        self.restarting: str | None = None  # why the engine is down while this watch brings it back
        self._bolt_uri = engine.bolt_uri  # where this process's driver connects
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="graphmem-engine-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (a restart under way finishes first)."""
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join(self.engine.settings.engine_start_timeout_s + 10)

    def _run(self) -> None:
        gone = False  # an engine that is not ours, seen gone
        while not self._stopped.wait(POLL_S):
            try:
                if self.owned:
                    self._look_at_ours()
                    continue
                running = self.engine.status().running
                if running == gone:
                    gone = not running
                    if gone:
                        log.warning("the bundled engine is gone; this server did not start it, or it was asked to "
                                    "stop, so it does not restart it: run `graphmem engine start`")
                    else:
                        log.info("the bundled engine is back")
            except Exception:  # the watch outlives any one look: a failure is logged, the next look comes
                log.exception("watching the bundled engine failed; watching on")

    def _look_at_ours(self) -> None:
        code = self.engine.exited()
        if code is None:
            return
        if code in ASKED_TO_STOP:
            self.owned = False
            log.warning("the bundled engine was asked to stop (code %s); not restarting it", code)
            return
        self._restart(f"the bundled engine exited (code {code})")

    def _restart(self, reason: str) -> None:
        self.restarting = reason
        delay = FIRST_DELAY_S
        log.warning("%s; starting it again in %g s", reason, delay)
        while not self._stopped.wait(delay):
            try:
                state, started = self.engine.ensure_running(owned=True)
            except Exception as exc:  # EngineError with the engine's log tail, or the process could not start
                delay = min(delay * 2, MAX_DELAY_S)
                said = exc.message if isinstance(exc, EngineError) else f"{type(exc).__name__}: {exc}"
                log.warning("the bundled engine did not start (%s); next try in %g s", said, delay)
                continue
            if started:
                log.warning("the bundled engine is running again (pid %s)", state.pid)
            else:  # another process started it meanwhile: attached, and not ours to restart or stop
                self.owned = False
                log.warning("another process started the bundled engine of this data directory (pid %s): "
                            "attached to it; this server will not restart or stop it", state.pid)
            if self.engine.bolt_uri != self._bolt_uri:
                log.error("the bundled engine came back at %s, and this server's connection is to %s: restart it",
                          self.engine.bolt_uri, self._bolt_uri)
            self.restarting = None
            return
