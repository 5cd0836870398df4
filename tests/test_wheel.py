"""graphmem installs as a wheel: the statements (and, later, the static assets) ship inside it.

The wheel is built from this checkout and installed without its dependencies into a fresh venv that sees
the test venv's packages through a path entry (so nothing large is downloaded again, and the test venv's
editable graphmem stays invisible: a path entry does not run that site's .pth finders). Commands then run
from a directory outside the repository.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from graphmem.store.queries import statements

pytestmark = pytest.mark.engine  # starts engines or servers of its own

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the built wheel, the venv it is installed in)."""
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp / "dist"), str(ROOT)], check=True, capture_output=True, text=True, timeout=300)
    (wheel,) = (tmp / "dist").glob("graphmem-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    purelib = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True).stdout.strip())
    test_sites = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    (purelib / "test-venv-packages.pth").write_text("\n".join(dict.fromkeys(test_sites)) + "\n")
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, text=True, timeout=300)
    return wheel, venv


def test_wheel_ships_the_statements(wheel_venv: tuple[Path, Path]) -> None:
    wheel, _ = wheel_venv
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {Path(name).name for name in names if name.startswith("graphmem/cypher/")}
    in_repo = {path.name for path in (ROOT / "cypher").iterdir() if path.suffix in (".cypher", ".sql")}
    assert in_repo and in_repo <= shipped


def test_installed_wheel_runs_outside_the_repository(wheel_venv: tuple[Path, Path], tmp_path: Path) -> None:
    _, venv = wheel_venv
    located = subprocess.run([str(venv / "bin" / "python"), "-c", "import graphmem; print(graphmem.__file__)"],
                             cwd=tmp_path, check=True, capture_output=True, text=True)
    assert not Path(located.stdout.strip()).is_relative_to(ROOT), "the venv imported the checkout, not the wheel"
    printed = subprocess.run([str(venv / "bin" / "python"), "-m", "graphmem.store.dump"], cwd=tmp_path, check=True,
                             capture_output=True, text=True, timeout=120)
    names = {entry["name"] for entry in json.loads(printed.stdout)}
    assert names == set(statements())


def test_installed_wheel_serves_the_offline_docs_assets(wheel_venv: tuple[Path, Path], tmp_path: Path) -> None:
    wheel, venv = wheel_venv
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"graphmem/web/vendor/swagger-ui/swagger-ui-bundle.js", "graphmem/web/vendor/redoc/redoc.standalone.js",
            "graphmem/web/vendor/swagger-ui/LICENSE", "graphmem/web/vendor/redoc/LICENSE",
            "graphmem/web/vendor/graphiql/graphiql.min.js", "graphmem/web/vendor/graphiql/graphiql.min.css",
            "graphmem/web/vendor/graphiql/LICENSE", "graphmem/web/vendor/react/react.production.min.js",
            "graphmem/web/vendor/react/react-dom.production.min.js", "graphmem/web/vendor/react/LICENSE",
            "graphmem/web/static/graphiql.html", "graphmem/graphql/schema.py",
            "graphmem/web/vendor/cytoscape/cytoscape.min.js", "graphmem/web/vendor/cytoscape/LICENSE",
            "graphmem/web/static/graph/graph.html", "graphmem/web/static/graph/graph.js",
            "graphmem/web/static/graph/graph.css",
            "graphmem/web/static/graphmem.grass", "graphmem/web/static/guide.html", "graphmem/cypher/guide.cypher"} \
        <= names
    shown = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "from graphmem.web import VENDOR_DIR; print((VENDOR_DIR / 'swagger-ui' / "
                            "'swagger-ui-bundle.js').stat().st_size)"], cwd=tmp_path, check=True,
                           capture_output=True, text=True)
    assert int(shown.stdout) > 100_000
