"""Locks taken in turns, first come first served: ``TurnLock``, one holder at a time (spaCy's pipeline, which
searches and ingests share), and ``Turns``, the writes of one process, side by side or one alone."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class TurnLock:
    """A lock taken in turns, first come first served. A plain ``threading.Lock`` is not fair: an ingest
    that releases it between chunks takes it again at once, and a search waiting for it may lose that race
    chunk after chunk; here the search's turn comes before the ingest's next chunk."""

    def __init__(self) -> None:
        self._turns = threading.Condition()
        self._next = 0  # the ticket the next caller draws
        self._serving = 0  # the ticket whose turn it is
        self._abandoned: set[int] = set()  # tickets of callers that stopped waiting (an interrupt)

    @property
    def drawn(self) -> int:
        """How many tickets callers have drawn so far."""
        return self._next

    def __enter__(self) -> None:
        with self._turns:
            ticket = self._next
            self._next += 1
            try:
                self._turns.wait_for(lambda: self._serving == ticket)
            except BaseException:  # its turn is skipped, or every later caller would wait for ever
                self._abandoned.add(ticket)
                self._pass_on()
                raise

    def __exit__(self, *exc: object) -> None:
        with self._turns:
            self._serving += 1
            self._pass_on()

    def _pass_on(self) -> None:
        """The turn goes to the next ticket still waiting (called holding ``_turns``)."""
        while self._serving in self._abandoned:
            self._abandoned.remove(self._serving)
            self._serving += 1
        self._turns.notify_all()


class Turns:
    """Writes of one process run side by side until one of them loses a conflict; its retry then runs alone.

    A retry waits for the writes in flight to end and holds new ones back, so it cannot lose to this
    process's writers again (only to another process's). Without this, a writer that happens to lose
    every race among a dozen others runs out of its retry budget while the rest succeed. Writes that run
    alone take their turns in the order they asked (a ``TurnLock``), so none of them is passed over again and
    again by writers that asked after it.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._running = 0
        self._alone = 0  # writes that asked to run alone and have not finished
        self._order = TurnLock()

    @contextmanager
    def together(self) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: not self._alone)
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()

    @contextmanager
    def alone(self) -> Iterator[None]:
        with self._changed:
            self._alone += 1
        try:
            with self._order:
                with self._changed:
                    self._changed.wait_for(lambda: not self._running)
                yield
        finally:
            with self._changed:
                self._alone -= 1
                self._changed.notify_all()

    @property
    def asked(self) -> int:
        """How many writes have asked to run alone so far."""
        return self._order.drawn
