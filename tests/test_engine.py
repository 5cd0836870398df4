"""The bundled engine's lifecycle, each test with a dedicated engine (never the shared one)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from fastapi.testclient import TestClient

from engines import BundledOnly, bundled_only
from graphmem.app import create_app
from graphmem.config import EngineCollector
from graphmem.errors import EngineError, Unavailable
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.model import CallerContext, DocumentInput
from graphmem.runtime import Runtime
from graphmem.store.engine import GC_LOG, JAVA_OPTION_VARIABLES, BundledEngine, EngineState, collector_options
from graphmem.store.watch import FIRST_DELAY_S, EngineWatch
from helpers import child_environment, engine_processes, make_settings

pytestmark = [pytest.mark.engine, bundled_only(BundledOnly.process)]  # starts engines of its own

CLI = [sys.executable, "-m", "graphmem.cli"]


def cli(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = child_environment()
    return subprocess.run([*CLI, *args, "--data-dir", str(data_dir)], capture_output=True, text=True,
                          timeout=120, env=env, check=False)


def status(data_dir: Path) -> dict[str, object]:
    result = cli("engine", "status", "--json", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def wait_gone(pid: int, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.2)
    return False


@pytest.fixture
def data_dir(run_root: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    path = run_root / f"engine-{request.node.name}"[:80]
    yield path
    BundledEngine(make_settings(path)).stop()  # whatever the test did, leave nothing running


def test_cli_start_status_stop(data_dir: Path) -> None:
    assert status(data_dir)["state"] == "stopped"
    started = cli("engine", "start", data_dir=data_dir)
    assert started.returncode == 0, started.stderr
    report = status(data_dir)
    assert report["state"] == "running" and report["data_dir"] == str(data_dir)
    assert report["version"] and report["bolt_port"] and report["http_port"]
    assert isinstance(report["uptime_s"], float)
    password_file = Path(str(report["password_file"]))
    assert password_file.stat().st_mode & 0o777 == 0o600
    password = password_file.read_text().strip()
    pid = int(str(report["pid"]))
    assert password not in " ".join(psutil.Process(pid).cmdline())  # never on the command line
    assert password not in json.dumps(report) and password not in started.stdout
    assert not list(data_dir.glob("*.secret"))  # the argfile is gone once the engine is up
    listening = {c.laddr.ip for c in psutil.Process(pid).net_connections(kind="tcp") if c.status == "LISTEN"}
    assert listening and all(ip in ("127.0.0.1", "::ffff:127.0.0.1") for ip in listening)

    again = cli("engine", "start", data_dir=data_dir)  # a second start attaches, never a second engine
    assert "already running" in again.stdout and status(data_dir)["pid"] == pid

    stopped = cli("engine", "stop", data_dir=data_dir)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert wait_gone(pid, 5) and status(data_dir)["state"] == "stopped"
    assert "not running" in cli("engine", "stop", data_dir=data_dir).stdout


def test_concurrent_starts_make_one_engine(data_dir: Path) -> None:
    env = child_environment()
    starts = [subprocess.Popen([*CLI, "engine", "start", "--data-dir", str(data_dir)], env=env,
                               stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [p.communicate(timeout=120)[0] for p in starts]
    assert sum("engine started" in out for out in outputs) == 1, outputs
    assert len(engine_processes(data_dir)) == 1


def test_runtime_attaches_to_running_engine_and_leaves_it(data_dir: Path) -> None:
    engine = BundledEngine(make_settings(data_dir))
    state, started = engine.ensure_running(owned=False)
    assert started
    runtime = Runtime.open(make_settings(data_dir), own_engine=True)
    try:
        assert not runtime.owns_engine
        ctx = CallerContext.for_namespaces("attach")
        assert runtime.service.add_memory(ctx, "attach", DocumentInput(content="Attached.")).document.version == 1
    finally:
        runtime.close()
    assert engine.status().running and engine.status().state == state  # not stopped by a mere attacher


def test_stale_state_file_is_cleaned_up(data_dir: Path) -> None:
    engine = BundledEngine(make_settings(data_dir))
    data_dir.mkdir(parents=True, exist_ok=True)
    # A live process that is not our engine (this test run itself): its PID must not count. Its
    # recorded ports are taken by someone else now, so fresh ones must be picked.
    with socket.socket() as busy_http, socket.socket() as busy_bolt:
        for sock in (busy_http, busy_bolt):
            sock.bind(("127.0.0.1", 0))
            sock.listen()
        taken = (busy_http.getsockname()[1], busy_bolt.getsockname()[1])
        stale = EngineState(pid=os.getpid(), http_port=taken[0], bolt_port=taken[1], version="0",
                            owner_pid=None, started_at=time.time(), database="graphmem")
        engine.state_file.write_text(json.dumps(stale.__dict__))
        assert not engine.status().running
        state, started = engine.ensure_running(owned=False)
        assert started and state.pid != os.getpid() and engine.status().running
        assert not {state.http_port, state.bolt_port} & set(taken)
    engine.stop()
    # A PID that no longer exists at all.
    engine.state_file.write_text(json.dumps({**stale.__dict__, "pid": 2**22 + 17}))
    assert status(data_dir)["state"] == "stopped"


def test_engine_without_state_file_is_found_and_managed(data_dir: Path) -> None:
    engine = BundledEngine(make_settings(data_dir))
    state, _ = engine.ensure_running(owned=False)
    engine.state_file.unlink()
    report = status(data_dir)  # found by its command line, state written again
    assert report["state"] == "running" and report["pid"] == state.pid and report["bolt_port"] == state.bolt_port
    again, started = engine.ensure_running(owned=False)
    assert not started and again.pid == state.pid
    assert "engine stopped" in cli("engine", "stop", data_dir=data_dir).stdout
    assert wait_gone(int(state.pid or 0), 10)


def test_owner_exit_does_not_stop_an_engine_it_does_not_own(data_dir: Path) -> None:
    runtime = Runtime.open(make_settings(data_dir), own_engine=True)
    assert runtime.owns_engine and runtime.engine is not None
    first = runtime.engine.status().state
    assert first is not None and first.pid is not None
    psutil.Process(first.pid).kill()  # our engine dies; someone else starts a detached one
    assert wait_gone(first.pid, 10)
    assert cli("engine", "start", data_dir=data_dir).returncode == 0
    other = status(data_dir)["pid"]
    runtime.close()
    after = status(data_dir)
    assert after["state"] == "running" and after["pid"] == other


def test_owner_killed_with_sigkill_leaves_no_engine(data_dir: Path) -> None:
    owner_code = (
        "import sys\n"
        "from graphmem.store.engine import BundledEngine\n"
        "sys.path[:0] = ['tests', 'benchmarks']\n"
        "from helpers import make_settings\n"
        f"state, _ = BundledEngine(make_settings({str(data_dir)!r})).ensure_running(owned=True)\n"
        "print(state.pid, flush=True)\n"
        "import time; time.sleep(600)\n"
    )
    owner = subprocess.Popen([sys.executable, "-c", owner_code], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).parents[1])
    assert owner.stdout is not None
    engine_pid = int(owner.stdout.readline())
    assert psutil.pid_exists(engine_pid)
    owner.send_signal(signal.SIGKILL)
    owner.wait(timeout=10)
    assert wait_gone(engine_pid, 30), "the engine outlived its SIGKILLed owner"
    assert status(data_dir)["state"] == "stopped"


def test_owned_engine_outlives_the_thread_that_started_it(data_dir: Path) -> None:
    """The parent-death signal follows the forking *thread*; a server starts its engine from a pool
    thread that may retire long before the server exits."""
    engine = BundledEngine(make_settings(data_dir))
    started: list[EngineState] = []
    worker = threading.Thread(target=lambda: started.append(engine.ensure_running(owned=True)[0]))
    worker.start()
    worker.join(timeout=120)
    assert started and started[0].pid is not None
    time.sleep(1.0)
    assert engine.status().running, "the engine died with the thread that started it"
    engine.stop()


@pytest.mark.parametrize(("heap", "name"), [("1g", "G1"), ("4096m", "Parallel")])
def test_engine_runs_the_collector_auto_picks(data_dir: Path, heap: str, name: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector the JVM says it runs, in its own log (``gc.log`` in the engine's root): G1 below a heap of
    4 GiB, the parallel one from there (``collector_options``, tested below, maps the other choices)."""
    for variable in JAVA_OPTION_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    engine = BundledEngine(make_settings(data_dir, engine_heap=heap))
    _, started = engine.ensure_running(owned=True)
    assert started
    first = (engine.root / GC_LOG).read_text(encoding="utf-8").splitlines()[0]
    assert first.endswith(f"Using {name}"), first


def test_collector_options(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in JAVA_OPTION_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    assert collector_options(EngineCollector.auto, "4095m") == ["-XX:+UseG1GC"]
    assert collector_options(EngineCollector.auto, "4096M") == ["-XX:+UseParallelGC"]
    assert collector_options(EngineCollector.auto, "4194304k") == ["-XX:+UseParallelGC"]
    assert collector_options(EngineCollector.parallel, "1g") == ["-XX:+UseParallelGC"]
    assert collector_options(EngineCollector.g1, "8g") == ["-XX:+UseG1GC"]


@pytest.mark.parametrize("variable", JAVA_OPTION_VARIABLES)
def test_collector_named_in_a_java_option_variable(variable: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in JAVA_OPTION_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "-Xss2m -XX:+UseAdaptiveSizePolicyWithSystemGC")  # no collector named
    assert collector_options(EngineCollector.g1, "1g") == ["-XX:+UseG1GC"]
    monkeypatch.setenv(variable, "-Xss2m -XX:+UseZGC")
    assert collector_options(EngineCollector.parallel, "8g") == []


def test_a_collector_named_in_the_environment_wins(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Java reads JDK_JAVA_OPTIONS before its command line, and refuses to start with two collectors."""
    monkeypatch.setenv("JDK_JAVA_OPTIONS", "-XX:+UseSerialGC")
    engine = BundledEngine(make_settings(data_dir, engine_gc=EngineCollector.parallel))
    _, started = engine.ensure_running(owned=True)
    assert started
    assert (engine.root / GC_LOG).read_text(encoding="utf-8").splitlines()[0].endswith("Using Serial")


def test_failed_start_shows_the_engine_log(data_dir: Path) -> None:
    engine = BundledEngine(make_settings(data_dir, engine_heap="1k"))  # the JVM refuses so small a heap
    with pytest.raises(EngineError) as raised:
        engine.ensure_running(owned=True)
    assert "heap" in raised.value.details["log_tail"].lower()
    assert not engine.status().running


def test_a_killed_engine_is_restarted_by_its_owner_and_a_foreign_one_only_reported(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A server's own engine killed with SIGKILL: calls are 503 at once, /health and /ready say "restarting"
    (503), and /v1 writes and searches answer 2xx again within 30 s, with no manual step, what was written before
    still there. Killed again, while another process starts the
    engine of the data directory before the watch's own try (a gate holds that try): the watch attaches to it as
    not owned. That one killed: reported, never restarted."""
    settings = make_settings(data_dir)
    runtime = Runtime.open(settings, own_engine=True)
    assert runtime.engine is not None and runtime.owns_engine
    engine = runtime.engine
    token = runtime.identity.create(NewCredential(name="w", scopes=[Scope.read, Scope.write], namespaces=["w"]),
                                    by=OPERATOR)[1]
    auth = {"Authorization": f"Bearer {token}"}
    ctx = CallerContext.for_namespaces("w")
    before = runtime.service.add_memory(ctx, "w", DocumentInput(content="Written before the outage.")).document
    stop = runtime.start_serving()
    try:
        with TestClient(create_app(runtime=runtime)) as client, caplog.at_level("INFO", logger="graphmem"):
            def kill() -> float:
                state = engine.status().state
                assert state is not None and state.pid is not None
                os.kill(state.pid, signal.SIGKILL)
                return time.monotonic()

            def until(check: Any, seconds: float) -> None:
                deadline = time.monotonic() + seconds
                while not check():
                    assert time.monotonic() < deadline, "timed out"
                    time.sleep(0.1)

            killed = kill()
            until(lambda: client.get("/health").json()["status"] == "restarting", 5)
            down = client.get("/health")
            assert down.status_code == 503 and "exited" in down.json()["reason"]
            assert engine.password() not in down.text
            with pytest.raises(Unavailable):
                runtime.service.get_version(ctx, before.id)
            assert time.monotonic() - killed < 5
            assert client.get("/ready").status_code == 503 and client.get("/ready").json()["status"] == "restarting"
            until(lambda: client.post("/v1/remember", headers=auth, json={
                "content": "Written after the restart.", "scope": "w"}).status_code == 201, 30)
            found = client.get("/v1/memories/search", headers=auth, params={"query": "restart", "scope": "w"})
            assert found.status_code == 200 and time.monotonic() - killed < 30
            assert runtime.service.get_version(ctx, before.id).content == "Written before the outage."
            assert client.get("/health").json()["engine"]["owned"] is True
            assert "the bundled engine exited" in caplog.text and "running again" in caplog.text

            gate = threading.Event()
            own_try = engine.ensure_running
            monkeypatch.setattr(engine, "ensure_running", lambda owned: gate.wait(60) and own_try(owned=owned))
            kill()
            until(lambda: client.get("/health").json()["status"] == "restarting", 5)
            foreign, started = BundledEngine(settings).ensure_running(owned=False)  # `graphmem engine start`
            assert started
            gate.set()
            until(lambda: client.get("/health").status_code == 200, 30)
            assert runtime.watch is not None and not runtime.watch.owned
            assert client.get("/health").json()["engine"]["owned"] is False and "attached" in caplog.text

            assert foreign.pid is not None
            os.kill(foreign.pid, signal.SIGKILL)
            until(lambda: "does not restart it" in caplog.text, 5)
            time.sleep(2 * FIRST_DELAY_S)
            assert not engine.status().running and client.get("/health").json()["status"] == "unavailable"
    finally:
        stop()
        runtime.close()


class _Started:
    """An engine as the watch sees one it started: a real child process (not an engine) that exits its own way;
    a restart would fail the test."""

    def __init__(self, command: list[str], data_dir: Path) -> None:
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE if command[0] == sys.executable else None)
        self.settings = make_settings(data_dir)
        self.bolt_uri = "bolt://127.0.0.1:1"

    def exited(self) -> int | None:
        return self.process.poll()

    def ensure_running(self, owned: bool) -> tuple[EngineState, bool]:
        raise AssertionError("an engine asked to stop was started again")


@pytest.mark.parametrize("ending", ["SIGTERM", "exit 143 (the JVM after SIGTERM)", "SIGINT"])
def test_an_engine_asked_to_stop_is_not_restarted(tmp_path: Path, ending: str,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    # a child that dies of SIGINT even when started from a background job, which inherits SIGINT ignored
    sleeper = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); print('ready', flush=True); " \
              "time.sleep(60)"
    command = ["sh", "-c", "exit 143"] if ending.startswith("exit") else [sys.executable, "-c", sleeper]
    started = _Started(command, tmp_path)
    if started.process.stdout is not None:
        assert started.process.stdout.readline() == b"ready\n"  # its handler is set: the signal is not lost
    watch = EngineWatch(started, owned=True)  # type: ignore[arg-type]
    with caplog.at_level("WARNING", logger="graphmem.store.watch"):
        watch.start()
        if ending != "exit 143 (the JVM after SIGTERM)":
            started.process.send_signal(getattr(signal, ending))
        deadline = time.monotonic() + 10
        while watch.owned:
            assert time.monotonic() < deadline, "the watch did not see the stop"
            time.sleep(0.05)
        watch.stop()
    assert watch.restarting is None and "asked to stop" in caplog.text
