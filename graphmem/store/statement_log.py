"""Which named statements a process ran, for the tests' statement coverage (``GRAPHMEM_STATEMENT_LOG``).

Each process appends to a file of its own in the directory: ``ok <name>`` the first time graphmem's own code
runs a statement to its end, and ``error <name> <code>`` each time the server refuses one. A line is written
and flushed as it happens, so a process killed with SIGKILL keeps what it ran. Only runs that come from
graphmem's code count: a statement a test sends through a transaction of its own is not coverage of the
service, the CLI or a front end. ``tests/statement_coverage.py`` reads the files of a run together.
"""

from __future__ import annotations

import os
import sys
import threading
import uuid
from pathlib import Path
from typing import TextIO

# Frames between graphmem's code and the statement: the store's driver, and the retry loops around it.
_BETWEEN = ("graphmem.store.driver", "tenacity")


class StatementLog:
    """One process's statement file (opened on first use)."""

    def __init__(self, directory: Path) -> None:
        self._path = directory / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.statements"
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._file: TextIO | None = None

    def ran(self, name: str) -> None:
        if name not in self._seen and _from_graphmem():
            self._write(f"ok {name}", name)

    def failed(self, name: str, code: str | None) -> None:
        if _from_graphmem():
            self._write(f"error {name} {code or 'none'}")

    def _write(self, line: str, seen: str | None = None) -> None:
        with self._lock:
            if seen is not None:
                if seen in self._seen:
                    return
                self._seen.add(seen)
            if self._file is None:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self._path.open("a", encoding="utf-8")
            self._file.write(line + "\n")
            self._file.flush()


def _from_graphmem() -> bool:
    """Whether the code that asked the store for this statement is graphmem's own (the first frame outside
    the store's driver and the retry loops)."""
    frame = sys._getframe(2)
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith(_BETWEEN):
        frame = frame.f_back  # type: ignore[assignment]
    return frame is not None and str(frame.f_globals.get("__name__", "")).startswith("graphmem.")
