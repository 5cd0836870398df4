"""deploy/nginx.conf for tests: the file as shipped with its two marked lines rewritten (the port nginx listens on,
the app servers it proxies to), and nginx running it from a directory of its own. The code is
benchmarks/nginx_proxy.py, which ``benchmarks/load.py --processes`` runs too: one copy of how the file is run."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # the benchmarks are scripts
from nginx_proxy import (
    LISTEN,
    NGINX_CONF,
    NGINX_MISSING,
    UPSTREAM,
    nginx_binary,
    nginx_command,
    nginx_process,
    rewritten,
    running_nginx,
)

__all__ = ["LISTEN", "NGINX_CONF", "NGINX_MISSING", "UPSTREAM", "nginx_binary", "nginx_command", "nginx_process",
           "rewritten", "running_nginx"]
