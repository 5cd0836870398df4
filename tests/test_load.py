"""benchmarks/load.py, small: 8 clients (and the 5 updaters of one shared namespace) for 20 seconds against a real
`graphmem serve` it starts on a new data directory under this run's directory (and, in the Neo4j pass, a new Neo4j
database), then its consistency check.

The serve runs the hashing embedder (GRAPHMEM_EMBEDDER=hashing) and no start-up warm-up searches or exports: the
real model would add 10-20 s to each start, and neither the model's cost nor the warm-up is what these tests
check; the write path, retries, versions and the restart are the same with any embedder."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

import load
from helpers import engine_processes, own_store
from secret_scan import leaks

pytestmark = pytest.mark.engine  # starts engines or servers of its own

FAST_SERVE = {"GRAPHMEM_WARM_UP_SEARCHES": "0", "GRAPHMEM_WARM_UP_EXPORTS": "0"}
# calls time out after 20 s and unanswered writes give up 60 s after the end: a server that stops answering
# fails the test with the load's report (what each client was doing) well inside pytest's 300 s
OPTIONS = load.LoadOptions(clients=8, seconds=20, seed=7, timeout_s=20, drain_s=60)


def run(directory: Path, kill_at: float | None = None) -> load.LoadResult:
    """A load of 8 clients for 20 s on a serve and a store of its own; its report and wall time (serve start and stop
    included) are printed, for a failure."""
    began = time.monotonic()
    with own_store(directory / "data") as store:
        env = {**FAST_SERVE, **{f"GRAPHMEM_{name.upper()}": value for name, value in store.items()}}
        result, serve = load.serve_and_load(directory / "data", OPTIONS, kill_at=kill_at, embedder="hashing", env=env)
    print(load.report(result), f"\nwall time {time.monotonic() - began:.0f} s, serve starts {serve.starts} s, "
          f"its log {serve.log}")
    assert not engine_processes(directory), "the serve's engine outlived it"
    said = "\n".join([Path(serve.log).read_text(errors="replace"), *result.first_errors.values()])
    assert not leaks(said), f"the server's log or answers give away {leaks(said)}"
    return result


def test_a_load_of_eight_clients_keeps_every_acknowledged_write_once(run_root: Path) -> None:
    """Every consistency check passes; the only errors are lost compare-and-swaps (409) and rate limits (429);
    every operation of the mix was answered."""
    result = run(run_root / f"load-{uuid.uuid4().hex[:6]}")
    assert result.passed, load.report(result)
    assert not result.unexpected_errors, load.report(result)
    answered = {name for name, stats in result.operations.items() if stats.latencies}
    assert set(load.MIX) | {"update"} <= answered, load.report(result)
    assert result.acks and result.updates


def test_a_kill_9_of_serve_mid_run_loses_and_duplicates_no_acknowledged_write(run_root: Path) -> None:
    """serve is killed with SIGKILL 6 s in and started again on the same data directory; the clients retry with
    the same request_ids. Afterwards: 0 acknowledged memories lost, 0 duplicated, every check passes, and writes
    were acknowledged after the restart too."""
    result = run(run_root / f"load-kill-{uuid.uuid4().hex[:6]}", kill_at=6)
    assert result.mid_run.get("ok") is True and len(result.mid_run["serve_starts_s"]) == 2, result.mid_run
    assert result.lost == 0 and result.duplicated == 0, load.report(result)
    assert result.passed, load.report(result)
    retried = result.operations["remember"].retries + result.operations["update"].retries
    assert retried, "no write met the kill: nothing was tested"
    assert len(result.acks) > result.mid_run["acknowledged_before"], "no memory was acknowledged after the kill"
