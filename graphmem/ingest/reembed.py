"""Re-embedding: switch a database to another embedding model, or to another way of embedding facts,
deliberately.

Starting graphmem with an embedding identity other than the one the database records (the model, and what
fact vectors read: ``split.embedding_identity``) is refused, since the vectors would not be comparable.
``graphmem reembed`` is the way to change it: every fact and entity of every namespace gets a vector from
the configured model, page by page, then the record changes. Facts are re-embedded a page of memories at a
time, each memory split again, so a fact reads exactly what ingestion would give it now (its turn header
included). Until it has finished, the old record stands, so an interrupted run is simply run again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphmem.ingest.split import embedding_identity, split_facts
from graphmem.nlp.embedder import Embedder
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.schema import record_embedder

PAGE = 256
DOCUMENTS_PAGE = 64  # memories a page; a memory of 100,000 characters has some 8,000 facts


def reembed(store: GraphStore, embedder: Embedder, progress: Callable[[int], object] = lambda n: None) -> int:
    """Re-embed everything; returns how many facts and entities got new vectors."""
    namespaces = [row["namespace"] for row in store.read(lambda tx: tx.run("namespaces_with_data"))]
    total = 0
    for namespace in namespaces:
        total += _reembed_facts(store, embedder, namespace, progress)
        total += _reembed_pages(store, embedder, namespace, "entities_page_for_embedding",
                                "entities_set_embeddings", progress)
    record_embedder(store, embedding_identity(embedder.name), embedder.dimensions)
    return total


def _reembed_facts(store: GraphStore, embedder: Embedder, namespace: str,
                   progress: Callable[[int], object]) -> int:
    """The facts of a page of memories at a time (redacted memories keep no text and get no vector)."""
    done, after = 0, ""
    while True:
        def read(tx: Tx, after: str = after) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            documents = tx.run("documents_page_for_embedding", namespace=namespace, after=after,
                               limit=DOCUMENTS_PAGE)
            facts = tx.run("facts_of_documents", namespace=namespace,
                           document_ids=[d["id"] for d in documents]) if documents else []
            return documents, facts

        documents, facts = store.read(read)
        if not documents:
            return done
        texts = {}
        for document in documents:
            for span in split_facts(str(document["content"])):
                texts[(document["id"], span.start, span.end)] = span.embedding_text
        rows = [f for f in facts if f["text"] is not None]
        vectors = embedder.embed([texts.get((f["document_id"], f["start"], f["end"]), str(f["text"]))
                                  for f in rows])
        updates = [{"id": f["id"], "embedding": vector} for f, vector in zip(rows, vectors, strict=True)]

        def write(tx: Tx, updates: list[dict[str, object]] = updates) -> None:
            tx.run_chunked("facts_set_embeddings", "rows", updates, namespace=namespace)

        store.write(write)
        done += len(rows)
        progress(len(rows))
        after = str(documents[-1]["id"])


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
