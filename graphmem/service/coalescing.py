"""Concurrent remembers share one NLP pass.

Alone, each remember runs spaCy and the embedder over a batch of one, and concurrent remembers queue for the
same two cores pass after pass. The coalescer gathers the memories that arrive within
``GRAPHMEM_COALESCE_WINDOW_MS`` of the first one waiting (up to ``GRAPHMEM_COALESCE_MAX``), prepares them in
one pass, and writes each namespace's share in one transaction. While a pass runs, the next one gathers.

Each caller keeps its own answer and its own errors:
* access and bounds are checked in the caller's thread before it joins (``Adding.checked``);
* a request_id conflict belongs to its memory alone (``Adding.add_each``), and the same request_id from two
  callers in one pass is a retry of the first;
* a namespace's failed transaction (the database unreachable) reaches that namespace's callers only;
* a failed pass (a model still loading) reaches the callers of that pass only.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import Future
from itertools import groupby

from graphmem.errors import GraphmemError
from graphmem.results import Change, Document
from graphmem.service.adding import Adding, NewMemory, Outcome

IDLE_S = 1.0  # the gathering thread ends after this long without work (and starts again with the next)


class Coalescer:
    def __init__(self, adding: Adding, window_ms: float, max_memories: int) -> None:
        self._adding = adding
        self._window_s = window_ms / 1000
        self._max = max_memories
        self._waiting: list[tuple[NewMemory, Future[Outcome]]] = []
        self._ready = threading.Condition()
        self._worker: threading.Thread | None = None
        self.pass_sizes: Counter[int] = Counter()  # memories per pass → passes

    def add(self, memory: NewMemory) -> tuple[Document, Change]:
        """``memory`` added in the next pass (at once, without a window); its outcome alone."""
        if self._window_s == 0:
            outcome = self._pass([memory])[0]
        else:
            future: Future[Outcome] = Future()
            with self._ready:
                self._waiting.append((memory, future))
                if self._worker is None:
                    self._worker = threading.Thread(target=self._gather, name="graphmem-coalescer", daemon=True)
                    self._worker.start()
                self._ready.notify()
            outcome = future.result()
        if isinstance(outcome, GraphmemError):
            raise outcome
        return outcome

    def passes(self) -> dict[int, int]:
        """Memories per pass → how many passes took that many, since start (``/metrics``)."""
        with self._ready:
            return dict(self.pass_sizes)

    def _gather(self) -> None:
        """Take what waits: once the first waiting memory has waited the window, or the pass is full."""
        while True:
            with self._ready:
                if not self._waiting and not self._ready.wait_for(lambda: bool(self._waiting), IDLE_S):
                    self._worker = None
                    return
                first = time.monotonic()
                while len(self._waiting) < self._max:
                    left = first + self._window_s - time.monotonic()
                    if left <= 0:
                        break
                    self._ready.wait(left)
                taken, self._waiting = self._waiting[:self._max], self._waiting[self._max:]
            self._run(taken)

    def _run(self, taken: list[tuple[NewMemory, Future[Outcome]]]) -> None:
        try:
            outcomes = self._pass([memory for memory, _ in taken])
        except BaseException as exc:  # the callers must hear of it, whatever it is
            for _, future in taken:
                future.set_exception(exc)
            return
        for (_, future), outcome in zip(taken, outcomes, strict=True):
            future.set_result(outcome)

    def _pass(self, memories: list[NewMemory]) -> list[Outcome]:
        """One NLP pass over ``memories``, then one transaction per namespace; outcomes in order."""
        with self._ready:
            self.pass_sizes[len(memories)] += 1
        prepared = self._adding.prepare(memories)
        outcomes: dict[int, Outcome] = {}
        order = sorted(range(len(memories)), key=lambda i: memories[i].namespace)
        for _, group in groupby(order, key=lambda i: memories[i].namespace):
            positions = list(group)
            try:
                written = self._adding.add_each([memories[i] for i in positions], prepared)
            except GraphmemError as exc:
                written = [exc] * len(positions)
            outcomes.update(zip(positions, written, strict=True))
        return [outcomes[i] for i in range(len(memories))]
