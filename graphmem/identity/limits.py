"""Rate limits per credential, with the ``limits`` library (moving window): one function charges a
credential for one call of a kind. Storage is in memory by default, which counts in one process;
``GRAPHMEM_RATE_LIMIT_STORAGE`` takes the library's storage URI (``redis://host:6379``) so that several app
processes share one count per credential (``tests/test_several_processes.py``). A storage that cannot be
reached answers 503: a call is neither let through uncounted nor refused as the caller's fault."""

from __future__ import annotations

import math
import time
from enum import StrEnum

from limits import RateLimitItemPerSecond
from limits.errors import StorageError
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

from graphmem.errors import RateLimited, Unavailable


class Charge(StrEnum):
    read = "read"  # reads and searches
    write = "write"


class RateLimits:
    def __init__(self, reads: int, writes: int, window_s: int, storage_uri: str) -> None:
        """``reads`` and ``writes`` per ``window_s`` seconds per credential; 0 turns that limit off."""
        self._limiter = MovingWindowRateLimiter(storage_from_string(storage_uri, wrap_exceptions=True))
        self.local = storage_uri.startswith("memory://")  # no network: cheap enough for an event loop
        self._items = {Charge.read: RateLimitItemPerSecond(reads, window_s) if reads else None,
                       Charge.write: RateLimitItemPerSecond(writes, window_s) if writes else None}

    def charge(self, credential_id: str, kind: Charge) -> None:
        item = self._items[kind]
        if item is None:
            return
        try:
            if self._limiter.hit(item, "graphmem", credential_id, kind.value):
                return
            reset, _ = self._limiter.get_window_stats(item, "graphmem", credential_id, kind.value)
        except StorageError as exc:
            raise Unavailable(f"the rate-limit storage cannot be reached ({type(exc.storage_error).__name__})",
                              retry_after=1) from exc
        retry_after = max(1, math.ceil(reset - time.time()))
        raise RateLimited(f"too many {kind.value} calls for this credential; try again in {retry_after} s",
                          retry_after=retry_after)
