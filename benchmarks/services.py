"""The services graphmem runs beside: nginx from deploy/nginx.conf (the file as shipped with its two marked lines
rewritten: the port nginx listens on, the app servers it proxies to), redis-server for the rate limits, and Neo4j
Community from tools/neo4j (a test and development server), each run from a directory of its own. One copy for
the tests (``tests/test_nginx.py``, ``tests/test_several_processes.py``, the Neo4j pass of ``tests/engines.py``)
and the benchmarks (``load.py --processes``)."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

NGINX_CONF = Path(__file__).resolve().parents[1] / "deploy" / "nginx.conf"
NGINX_MISSING = "nginx is not installed: .ci/run installs it (Debian: apt-get install nginx)"
REDIS_MISSING = "redis-server is not installed: .ci/run installs it (Debian: apt-get install redis-server)"
LISTEN = re.compile(r"^(?P<indent>[ \t]*)listen \S+;[ \t]*# @listen$", re.MULTILINE)
UPSTREAM = re.compile(r"^(?P<indent>[ \t]*)server \S+(?P<params>[^;\n]*);[ \t]*# @upstream$", re.MULTILINE)


def clean_environment() -> dict[str, str]:
    """This process's environment for a child graphmem process: without the developer's ``GRAPHMEM_`` settings,
    which would change what is tested or measured, but with the run's statement log (``GRAPHMEM_STATEMENT_LOG``,
    the Neo4j test pass's coverage), which every process of a run writes to."""
    kept = {"GRAPHMEM_STATEMENT_LOG"}
    return {key: value for key, value in os.environ.items() if not key.startswith("GRAPHMEM_") or key in kept}


def nginx_binary() -> str:
    """The nginx on PATH (or Debian's /usr/sbin, off a non-root PATH); fails, never skips, when there is none."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    assert found is not None, NGINX_MISSING
    return found


def rewritten(listen: str, upstreams: list[str], text: str | None = None) -> str:
    """deploy/nginx.conf listening on ``listen`` (``127.0.0.1:8080``) and proxying to ``upstreams``
    (``host:port`` each), with the shipped server parameters (max_fails, fail_timeout) on every server line.
    Fails when a marked line is not there exactly once: the file and its users must change together."""
    text = NGINX_CONF.read_text() if text is None else text
    for marked in (LISTEN, UPSTREAM):
        assert len(marked.findall(text)) == 1, f"{NGINX_CONF}: expected one line matching {marked.pattern}"
    text = LISTEN.sub(lambda m: f"{m['indent']}listen {listen};", text)
    return UPSTREAM.sub(lambda m: "\n".join(f"{m['indent']}server {address}{m['params']};"
                                            for address in upstreams), text)


def nginx_command(prefix: Path, *options: str) -> list[str]:
    """nginx on ``prefix``/nginx.conf with every path under ``prefix``. Run as root, nginx's workers would
    be `nobody`, who cannot enter pytest's private temporary directory: they stay root there."""
    directives = "daemon off;" + (" user root;" if os.geteuid() == 0 else "")
    return [nginx_binary(), "-p", f"{prefix}/", "-c", str(prefix / "nginx.conf"), "-e", "stderr",
            "-g", directives, *options]


@contextmanager
def nginx_process(prefix: Path, port: int, upstreams: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    """nginx from deploy/nginx.conf on 127.0.0.1:``port`` in front of ``upstreams``, listening, until the block
    ends; yields its master process (``daemon off``: the process started here), for a caller that meters it.
    Its log, ``prefix``/nginx.log, gets the access log (one line per request with the upstreams tried) and the
    error log."""
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / "nginx.conf").write_text(rewritten(f"127.0.0.1:{port}", upstreams))
    log = prefix / "nginx.log"
    with log.open("ab") as output:  # appends, as nginx appends its access log to it
        process = subprocess.Popen(nginx_command(prefix), stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            assert process.poll() is None, f"nginx exited {process.returncode}: {log.read_text()}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"nginx did not listen on {port}: {log.read_text()}"
                time.sleep(0.05)
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes], wait_s: float = 10) -> None:
    """SIGTERM, then SIGKILL after ``wait_s``: how nginx, Neo4j and the benchmark's other children are stopped."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(wait_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextmanager
def running_nginx(prefix: Path, port: int, upstreams: list[str]) -> Iterator[Path]:
    """``nginx_process``, yielding its log file instead (what the tests read)."""
    with nginx_process(prefix, port, upstreams):
        yield prefix / "nginx.log"


@contextmanager
def redis_process(directory: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """redis-server on 127.0.0.1:``port``, persisting nothing, answering PING, until the block ends; its log is
    ``directory``/redis.log. Fails, never skips, when redis-server is not installed."""
    binary = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/usr/bin")
    assert binary is not None, REDIS_MISSING
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "redis.log"
    with log.open("ab") as output:
        process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                    "--appendonly", "no", "--dir", str(directory)],
                                   stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            with suppress(OSError), socket.create_connection(("127.0.0.1", port), 1) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    break
            assert process.poll() is None and time.monotonic() < deadline, \
                f"redis-server did not start: {log.read_text()}"
            time.sleep(0.1)
        yield process
    finally:
        stop(process)


# --- Neo4j Community, from tools/neo4j ------------------------------------------------------------------------
NEO4J_TOOL = Path(__file__).resolve().parents[1] / "tools" / "neo4j"
NEO4J_BUILD = f"mvn -q -B -f {NEO4J_TOOL / 'pom.xml'} package"
NEO4J_MISSING = f"the Neo4j test server is not built: run `{NEO4J_BUILD}` (the README's test command does it)"
NEO4J_READY = re.compile(r"^graphmem-neo4j: Neo4j (\S+) bolt ready on (\S+)$", re.MULTILINE)


def neo4j_version() -> str:
    """The Neo4j release tools/neo4j builds (``neo4j.version`` in its pom.xml)."""
    found = re.search(r"<neo4j\.version>([^<]+)</neo4j\.version>", (NEO4J_TOOL / "pom.xml").read_text())
    assert found is not None, f"{NEO4J_TOOL / 'pom.xml'} names no neo4j.version"
    return found.group(1)


def java_17() -> str:
    """Java 17, which Neo4j 5.26 is built for: Debian's or a Temurin 17 under /usr/lib/jvm, else the java on PATH
    (the machines also carry a Temurin 25, which is not the one to use)."""
    for home in sorted(Path("/usr/lib/jvm").glob("*17*")):
        if (home / "bin" / "java").is_file():
            return str(home / "bin" / "java")
    found = shutil.which("java")
    assert found is not None, "Java 17 is not installed (Debian: apt-get install openjdk-17-jre-headless)"
    return found


@dataclass(frozen=True)
class Neo4jServer:
    """A running Neo4j: where it listens, the ``neo4j`` user's password, and its process."""

    uri: str
    password: str
    home: Path
    process: subprocess.Popen[bytes]
    user: str = "neo4j"
    database: str = "neo4j"  # Community has this one user database

    def settings(self) -> dict[str, str]:
        """The graphmem settings (``GRAPHMEM_`` names, lower-case) that connect to it."""
        return {"neo4j_uri": self.uri, "neo4j_user": self.user, "neo4j_password": self.password,
                "neo4j_database": self.database}

    def environment(self) -> dict[str, str]:
        """The same settings as a child process's environment."""
        return {f"GRAPHMEM_{name.upper()}": value for name, value in self.settings().items()}


@contextmanager
def neo4j_process(home: Path, port: int, *, heap: str = "768m", page_cache: str = "128m",
                  tx_memory: str = "1g", start_timeout_s: float = 180.0) -> Iterator[Neo4jServer]:
    """Neo4j Community (tools/neo4j's launcher) on 127.0.0.1:``port`` with its files in ``home``, answering Bolt,
    until the block ends. Memory is explicit: ``heap`` (the JVM's), ``page_cache``, and ``tx_memory``, the most
    all transactions together may hold. A new ``home`` gets a new password; a home used before keeps its own.
    The log is ``home``/neo4j.log. Fails, never skips, when the tool is not built."""
    classes, lib = NEO4J_TOOL / "target" / "classes", NEO4J_TOOL / "target" / "lib"
    assert (classes / "graphmem" / "neo4j" / "Launcher.class").is_file() and lib.is_dir(), NEO4J_MISSING
    home.mkdir(parents=True, exist_ok=True)
    password_file = home / "password"
    if not password_file.exists():
        password_file.write_text(secrets.token_urlsafe(18))
        password_file.chmod(0o600)
    log = home / "neo4j.log"
    command = [java_17(), f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC", "-cp", f"{classes}:{lib}/*",
               "graphmem.neo4j.Launcher", "--home", str(home / "server"), "--port", str(port),
               "--password-file", str(password_file), "--page-cache", page_cache, "--tx-memory", tx_memory]
    with log.open("ab") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, cwd=home)
    try:
        deadline = time.monotonic() + start_timeout_s
        while not NEO4J_READY.search(log.read_text(errors="replace")):
            assert process.poll() is None, f"Neo4j exited {process.returncode}: {log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"Neo4j did not answer in {start_timeout_s} s: {log}"
            time.sleep(0.2)
        yield Neo4jServer(f"bolt://127.0.0.1:{port}", password_file.read_text().strip(), home, process)
    finally:
        stop(process, wait_s=60)
