"""Ingestion of real documents, end to end and per stage: the files a new user ingests first.

Two corpora, built at run time from what this machine has (nothing is downloaded or committed):

* ``packages``: the README (the long description in ``METADATA``), licence and changelog files that the
  installed Python packages ship, one file each;
* ``markdown``: Markdown documentation pages found under the installed packages, ``/usr/share/doc`` and
  ``/usr/lib/node_modules``.

Each file goes through the same path as ``graphmem ingest`` (``ingest/files.py`` → ``service.ingest`` in
batches, the real models unless ``--embedder`` says otherwise) into a fresh bundled engine. Printed: files,
characters, memories, facts, entities and triples; the seconds of each stage (split, extract, embed, the
SIMILAR_TO step, the other writes) and facts per second end to end.

    .venv/bin/python benchmarks/documents.py [--corpus packages|markdown|both] [--limit 140] [--embedder minilm]
"""

from __future__ import annotations

import argparse
import email
import site
import sys
import tempfile
import time
from pathlib import Path

from graphmem.config import Settings
from graphmem.ingest.files import read_paths
from graphmem.model import CallerContext
from graphmem.runtime import Runtime

NAMESPACE = "docs"
MARKDOWN_ROOTS = [Path("/usr/share/doc"), Path("/usr/lib/node_modules")]
PACKAGE_FILES = ("LICENSE", "LICENCE", "COPYING", "CHANGELOG", "CHANGES", "HISTORY", "NEWS", "AUTHORS")


def package_corpus(target: Path, limit: int) -> int:
    """README, licence and changelog files of the installed packages, copied into ``target``."""
    written = 0
    for dist in sorted(p for root in site.getsitepackages() for p in Path(root).glob("*.dist-info")):
        name = dist.name.split("-")[0]
        metadata = dist / "METADATA"
        if metadata.is_file():
            body = email.message_from_string(metadata.read_text(encoding="utf-8", errors="replace")).get_payload()
            if isinstance(body, str) and len(body) >= 500:
                (target / f"{name}.README.md").write_text(body, encoding="utf-8")
                written += 1
        for path in sorted(dist.rglob("*")):
            if path.is_file() and path.name.upper().startswith(PACKAGE_FILES) and path.stat().st_size >= 300:
                (target / f"{name}.{path.name}.txt").write_text(path.read_text(encoding="utf-8", errors="replace"),
                                                               encoding="utf-8")
                written += 1
        if written >= limit:
            break
    return written


def markdown_corpus(target: Path, limit: int) -> int:
    roots = [Path(root) for root in site.getsitepackages()] + MARKDOWN_ROOTS
    pages = sorted({p for root in roots if root.is_dir() for p in root.rglob("*.md")
                    if p.is_file() and 2_000 <= p.stat().st_size <= 200_000})
    for number, path in enumerate(pages[:limit]):
        (target / f"{number:03d}-{path.name}").write_text(path.read_text(encoding="utf-8", errors="replace"),
                                                          encoding="utf-8")
    return min(limit, len(pages))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=["packages", "markdown", "both"], default="both")
    parser.add_argument("--limit", type=int, default=150, help="files per corpus")
    parser.add_argument("--batch", type=int, default=64, help="documents per transaction (graphmem ingest's)")
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphmem-documents-") as tmp:
        files = Path(tmp) / "files"
        files.mkdir()
        count = 0
        if args.corpus in ("packages", "both"):
            count += package_corpus(files, args.limit)
        if args.corpus in ("markdown", "both"):
            count += markdown_corpus(files, args.limit)
        settings = Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp) / "data",  # type: ignore[call-arg]
                            embedder=args.embedder)
        found = read_paths([files], settings.limits.content_chars)
        characters = sum(len(i.item.document.content) for i in found.items)
        print(f"corpus: {count} files ({args.corpus}), {len(found.items)} memories, {characters:,} characters, "
              f"{len(found.errors)} unreadable; embedder {args.embedder}", flush=True)
        with Runtime.open(settings) as runtime:
            service = runtime.service
            service.pipeline.warm_up()
            times = service.pipeline.times
            times.split = times.extract = times.embed = times.similar = times.write = 0.0
            ctx = CallerContext.for_namespaces(NAMESPACE)
            started = time.perf_counter()
            failed = 0
            for start in range(0, len(found.items), args.batch):
                chunk = found.items[start:start + args.batch]
                failed += sum(o.error is not None for o in service.ingest(ctx, NAMESPACE, [i.item for i in chunk]))
                print(f"  {start + len(chunk)}/{len(found.items)} memories, {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
            seconds = time.perf_counter() - started
            counts = service.namespace_counts(ctx, NAMESPACE)
        print(f"ingested: {counts.documents} memories, {counts.facts} facts, {counts.entities} entities, "
              f"{counts.triples} triples, {failed} failed")
        print(f"{'stage':<10} {'seconds':>8}")
        for stage, value in (("split", times.split), ("extract", times.extract), ("embed", times.embed),
                             ("similar", times.similar), ("writes", times.write - times.similar)):
            print(f"{stage:<10} {value:8.1f}")
        print(f"end to end {seconds:8.1f} s: {counts.facts / seconds:.1f} facts/s, "
              f"{counts.documents / seconds:.2f} memories/s")


if __name__ == "__main__":
    main()
