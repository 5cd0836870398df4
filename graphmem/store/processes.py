"""Process plumbing for the bundled engine: free ports, the parent-death signal, waiting for exit."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psutil

_PR_SET_PDEATHSIG = 1


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


_prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before any fork: not safe after it


def die_with_parent(parent_pid: int) -> Callable[[], None]:
    """A ``preexec_fn``: between fork and exec, ask for SIGTERM when the forking thread dies. If the
    parent died before that request took effect, no signal would ever come: exit instead."""

    def preexec() -> None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


class _Spawner:
    """Forks owned engines from one thread that lives as long as the process.

    The kernel sends the parent-death signal when the *thread* that forked the child exits, not the
    process. Callers may be short-lived worker threads (a web server's thread pool), so forking from
    them would kill the engine when the pool retires that thread.
    """

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def popen(self, command: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmem-engine")

        def spawn() -> subprocess.Popen[bytes]:
            return subprocess.Popen(command, **kwargs)

        return self._executor.submit(spawn).result()


spawner = _Spawner()


def gone(process: psutil.Process, timeout: float) -> bool:
    """Wait until the process has exited. A zombie counts as gone: its parent (perhaps not us) reaps it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False
