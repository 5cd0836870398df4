"""Models are loaded once per process, one at a time, on one loading thread; every first user of a model
waits on that one load.

Two first users loading a model each at once raced: a request's first embedding imported ``transformers`` while
the warm-up thread was importing it for the ONNX export, and the request failed with ``ImportError``. Here a
model's load is submitted once to a single thread (so no two loads, and no two imports, ever overlap), and its
users wait for it: a request at most ``GRAPHMEM_MODEL_WAIT_S``, after which it is answered 503 with
``Retry-After`` (``ModelsLoading``) while the load goes on. A load that failed is tried again by the next user.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar, cast

from graphmem.errors import ModelsLoading

T = TypeVar("T")
RETRY_AFTER_S = 5

_loading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmem-models")
_loads: dict[Hashable, Future[Any]] = {}
_lock = threading.Lock()


def loaded(key: Hashable, name: str, load: Callable[[], T], wait_s: float | None) -> T:
    """The model ``key`` names, loaded by ``load`` on the loading thread the first time anyone asks. Waits up
    to ``wait_s`` seconds (None: as long as it takes); past that, ``ModelsLoading``."""
    with _lock:
        future = _loads.get(key)
        if future is None or (future.done() and future.exception() is not None):
            future = _loads[key] = _loading.submit(load)
    try:
        return cast(T, future.result(timeout=wait_s))
    except TimeoutError:
        raise ModelsLoading(f"the {name} is still loading; try again in a few seconds",
                            retry_after=RETRY_AFTER_S) from None
