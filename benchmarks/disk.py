"""What a graph takes on disk in the bundled engine, and how long its search indexes take to rebuild
(``benchmarks/search.py`` prints both at each size; ``docs/scaling.md`` projects from them).

ArcadeDB keeps each type's records in bucket files, each vertex type's edge lists in ``_out_edges`` and
``_in_edges`` buckets, and each index in files of its own whose name carries the file id that
``schema:indexes`` gives (a vector index has a second, ``_vecgraph`` file). So the bytes of every type
(records and edge lists) and of every index are the sizes of their files. Files grow by whole pages, so a
small type shows its page size, not its records: bytes per record mean something only for the large types.
Counts are polymorphic (an ``Entity~Person`` record is an ``Entity``), and so are the bytes.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx

from graphmem.runtime import Runtime
from graphmem.store.schema import arcadedb_sql

# <name>.<file id>.<page size>.v<version>.<kind>, where <name> is <type>_<bucket> or <type>_<bucket>_in_edges
# (a vector index's graph has two more files, the same name with a second suffix: .vecgraphfp, .vecordmap)
FILE = re.compile(r"^(?P<name>.+?)\.(?P<file_id>\d+)\.\d+\.v\d+\.(?P<kind>[a-z]+)(?:\.[a-z]+)?$")
INDEX_KINDS = {"umtidx": "unique", "numtidx": "not unique", "uctidx": "unique", "nuctidx": "not unique",
               "lsmvecidx": "vector", "vecgraph": "vector"}  # ..ctidx: an index the engine has compacted
SHOWN = ("Document", "Fact", "Chunk", "Entity", "MENTIONS", "CONTAINS", "RELATES", "PREVIOUS_VERSION")
REBUILT = ("Fact[embedding]", "Fact[text]", "Chunk[embedding]", "Chunk[text]")


def _client(runtime: Runtime) -> tuple[httpx.Client, str]:
    engine = runtime.engine
    assert engine is not None, "disk sizes are measured on the bundled engine"
    return httpx.Client(auth=("root", engine.password()), timeout=3600.0), engine.http_url


def _indexes(runtime: Runtime) -> dict[str, list[tuple[int, str, bool]]]:
    """Each bucket's indexes as (file id, "Type(property)", unique), by the bucket's name (an index's name is
    its bucket's and a number: ``Fact_0_4679143105730``)."""
    client, url = _client(runtime)
    with client:
        rows = arcadedb_sql(client, url, runtime.store.database, "SELECT FROM schema:indexes", read=True)
    on: dict[str, list[tuple[int, str, bool]]] = {}
    for row in rows:
        if row.get("fileId") is not None:
            label = f"{_base(row['typeName'])}({', '.join(p for ps in row['properties'] for p in ps)})"
            on.setdefault(row["name"].rsplit("_", 1)[0], []).append((int(row["fileId"]), label, bool(row["unique"])))
    return on


def _owner(indexes: dict[str, list[tuple[int, str, bool]]], name: str, file_id: int, kind: str) -> str:
    """The index a file belongs to: the index of that file id; for a ``_vecgraph`` file, its vector index's;
    for a part the engine compacted (it gets a name and a file of its own, which the schema does not list),
    the index of its bucket and uniqueness whose current file the engine made next (the compaction starts it
    anew)."""
    bucket = name.removesuffix("_vecgraph").rsplit("_", 1)[0]
    candidates = sorted(indexes.get(bucket, []))
    exact = [label for fid, label, _ in candidates if fid == file_id]
    if exact or name.endswith("_vecgraph"):
        vector = [label for _, label, _ in candidates if label.endswith("(embedding)")]
        return (exact or vector or [name])[0]
    later = [label for fid, label, unique in candidates if fid > file_id and unique == (kind == "uctidx")]
    return later[0] if later else name


def _bucket_types(runtime: Runtime) -> dict[str, str]:
    """Each bucket's type (a bucket's name need not start with its type's: a node with two labels lives in a
    type of its own)."""
    client, url = _client(runtime)
    with client:
        rows = arcadedb_sql(client, url, runtime.store.database, "SELECT name, buckets FROM schema:types", read=True)
    return {bucket: row["name"] for row in rows for bucket in row.get("buckets") or []}


def _count(runtime: Runtime, type_name: str) -> int:
    client, url = _client(runtime)
    with client:
        rows = arcadedb_sql(client, url, runtime.store.database, f"SELECT count(*) AS n FROM `{type_name}`",
                            read=True)
    return int(rows[0]["n"]) if rows else 0


def _base(type_name: str) -> str:
    """The shown type a type's records count as: an entity of a kind (``Entity~Person``, the engine's type
    for a node with both labels) is an ``Entity``."""
    labels = type_name.split("~")
    return next((shown for shown in SHOWN if shown in labels), type_name)


def sizes(runtime: Runtime) -> tuple[Counter[str], Counter[str], int]:
    """(bytes per type, records and edge lists together; bytes per index; bytes of every other file: the
    write-ahead log, the dictionary), from the database's files."""
    assert runtime.engine is not None
    directory = Path(runtime.engine.root) / "databases" / runtime.store.database
    indexes = _indexes(runtime)
    bucket_types = _bucket_types(runtime)
    types: Counter[str] = Counter()
    index_bytes: Counter[str] = Counter()
    other = 0
    for path in directory.iterdir():
        found = FILE.match(path.name)
        if found is None or (found["kind"] != "bucket" and found["kind"] not in INDEX_KINDS):
            other += path.stat().st_size
            continue
        kind, name = found["kind"], found["name"]
        if kind == "bucket":
            bucket = name.removesuffix("_in_edges").removesuffix("_out_edges")
            types[_base(bucket_types.get(bucket, bucket))] += path.stat().st_size
        elif kind in INDEX_KINDS:
            owner = _owner(indexes, name, int(found["file_id"]), kind)
            index_bytes[f"{owner} {INDEX_KINDS[kind]}"] += path.stat().st_size
    return types, index_bytes, other


def report(runtime: Runtime, types_shown: tuple[str, ...] = SHOWN) -> dict[str, float]:
    """Print bytes on disk: the whole database, per type with bytes per record, and per index."""
    types, index_bytes, other = sizes(runtime)
    total = sum(types.values()) + sum(index_bytes.values()) + other
    print(f"  on disk: {total / 2**20:.0f} MiB in all, {sum(types.values()) / 2**20:.0f} MiB records and edge "
          f"lists, {sum(index_bytes.values()) / 2**20:.0f} MiB indexes, {other / 2**20:.0f} MiB write-ahead log "
          "and the rest")
    measured: dict[str, float] = {"disk MiB": total / 2**20}
    for type_name in types_shown:
        if type_name not in types:
            continue
        records = _count(runtime, type_name)
        per = types[type_name] / records if records else float("nan")
        print(f"    {type_name:<10} {records:>9} records {types[type_name] / 2**20:8.1f} MiB  {per:7.0f} B each")
        measured[f"{type_name} B"] = per
    for name, size in index_bytes.most_common(12):
        print(f"    index {name:<40} {size / 2**20:8.1f} MiB")
    return measured


def rebuild(runtime: Runtime, ready: Callable[[], object], names: tuple[str, ...] = REBUILT) -> dict[str, float]:
    """Seconds to rebuild each search index from its records (``REBUILD INDEX``: what recovering a lost or
    corrupt index costs), until ``ready`` returns: the engine builds a vector index's graph in the background
    after the command has answered, so ``ready`` waits for that and runs a search."""
    client, url = _client(runtime)
    seconds: dict[str, float] = {}
    with client:
        for name in names:
            started = time.perf_counter()
            arcadedb_sql(client, url, runtime.store.database, f"REBUILD INDEX `{name}`")
            answered = time.perf_counter() - started
            ready()
            seconds[f"rebuild {name} s"] = time.perf_counter() - started
            print(f"    rebuilt {name}: the command {answered:.1f} s, searchable again after "
                  f"{seconds[f'rebuild {name} s']:.1f} s")
    return seconds
