"""The services several graphmem processes run beside: nginx from deploy/nginx.conf (the file as shipped with its
two marked lines rewritten: the port nginx listens on, the app servers it proxies to) and redis-server for the
rate limits, each run from a directory of its own. One copy for the tests (``tests/test_nginx.py``,
``tests/test_several_processes.py``) and the benchmarks (``load.py --processes``)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

NGINX_CONF = Path(__file__).resolve().parents[1] / "deploy" / "nginx.conf"
NGINX_MISSING = "nginx is not installed: .ci/run installs it (Debian: apt-get install nginx)"
REDIS_MISSING = "redis-server is not installed: .ci/run installs it (Debian: apt-get install redis-server)"
LISTEN = re.compile(r"^(?P<indent>[ \t]*)listen \S+;[ \t]*# @listen$", re.MULTILINE)
UPSTREAM = re.compile(r"^(?P<indent>[ \t]*)server \S+(?P<params>[^;\n]*);[ \t]*# @upstream$", re.MULTILINE)


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


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 10 s: how nginx and the benchmark's other children are stopped."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
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
