"""Re-embedding: switch a database to another embedding model deliberately.

Starting graphmem with a model other than the one the database records is refused (the vectors would
not be comparable). ``graphmem reembed`` is the way to change it: every fact and entity of every
namespace gets a vector from the configured model, page by page, then the record changes. Until it has
finished, the old record stands, so an interrupted run is simply run again.
"""

from __future__ import annotations

from collections.abc import Callable

from graphmem.nlp.embedder import Embedder
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.schema import record_embedder

PAGE = 256


def reembed(store: GraphStore, embedder: Embedder, progress: Callable[[int], object] = lambda n: None) -> int:
    """Re-embed everything; returns how many facts and entities got new vectors."""
    namespaces = [row["namespace"] for row in store.read(lambda tx: tx.run("namespaces_with_data"))]
    total = 0
    for namespace in namespaces:
        for page, update in (("facts_page_for_embedding", "facts_set_embeddings"),
                             ("entities_page_for_embedding", "entities_set_embeddings")):
            total += _reembed_pages(store, embedder, namespace, page, update, progress)
    record_embedder(store, embedder.name, embedder.dimensions)
    return total


def _reembed_pages(store: GraphStore, embedder: Embedder, namespace: str, page: str, update: str,
                   progress: Callable[[int], object]) -> int:
    done, after = 0, ""
    while True:
        def read(tx: Tx, after: str = after) -> list[dict[str, object]]:
            return tx.run(page, namespace=namespace, after=after, limit=PAGE)

        rows = store.read(read)
        if not rows:
            return done
        vectors = embedder.embed([str(row["text"]) for row in rows])
        updates = [{"id": row["id"], "embedding": vector} for row, vector in zip(rows, vectors, strict=True)]

        def write(tx: Tx, updates: list[dict[str, object]] = updates) -> None:
            tx.run(update, rows=updates, namespace=namespace)

        store.write(write)
        done += len(rows)
        progress(len(rows))
        after = str(rows[-1]["id"])
