"""Re-embedding: switch a database to another embedding model, or to another way of embedding facts,
deliberately.

Starting graphmem with an embedding identity other than the one the database records (the model, and what
fact vectors read: ``split.embedding_identity``) is refused, since the vectors would not be comparable.
``graphmem reembed`` is the way to change it: every fact and entity of every namespace gets a vector from
the configured model, page by page, then the record changes. Facts are re-embedded a page of memories at a
time, each memory split again, so a fact reads exactly what ingestion would give it now (its turn header
included), and the memory's chunks are built again with it (a store written before chunks existed gets
them here). Until it has finished, the old record stands, so an interrupted run is simply run again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import partial
from typing import Any

from graphmem.ingest.chunks import Chunk, chunk_spans
from graphmem.ingest.split import embedding_identity, split_memory
from graphmem.nlp.embedder import Embedder
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.names import StatementName
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
        texts, chunks = {}, {}
        for document in documents:
            spans = split_memory(str(document["content"]))
            for span in spans:
                texts[(document["id"], span.start, span.end)] = span.embedding_text
            chunks[document["id"]] = chunk_spans(str(document["content"]), spans)
        rows = [f for f in facts if f["text"] is not None]
        vectors = embedder.embed([texts.get((f["document_id"], f["start"], f["end"]), str(f["text"]))
                                  for f in rows])
        updates = [{"id": f["id"], "embedding": vector} for f, vector in zip(rows, vectors, strict=True)]
        rebuilt = _chunk_rows(embedder, chunks, {(f["document_id"], f["start"], f["end"]): v
                                                 for f, v in zip(rows, vectors, strict=True)})

        store.write(partial(_write_page, namespace=namespace, facts=updates, chunks=rebuilt,
                            document_ids=list(chunks)))
        done += len(rows)
        progress(len(rows))
        after = str(documents[-1]["id"])


def _write_page(tx: Tx, namespace: str, facts: list[dict[str, object]], chunks: list[dict[str, object]],
                document_ids: list[str]) -> None:
    """A page's new fact vectors, and its memories' chunks replaced, in one transaction."""
    tx.run_chunked("facts_set_embeddings", "rows", facts, namespace=namespace)
    tx.run("chunks_delete_of_documents", document_ids=document_ids, namespace=namespace)
    tx.run_chunked("chunks_rebuild", "chunks", chunks, namespace=namespace)


def _chunk_rows(embedder: Embedder, chunks: dict[str, list[Chunk]],
                fact_vectors: dict[tuple[str, int, int], list[float]]) -> list[dict[str, object]]:
    """The chunks of a page of memories with their vectors (one fact's chunk takes that fact's vector, as
    ingestion does, when a stored fact has exactly its span: facts stored by an older splitter may not);
    ``chunks_rebuild`` copies each memory's namespace, path, flags and times onto them."""
    flat = [(doc_id, position, chunk) for doc_id, doc_chunks in chunks.items()
            for position, chunk in enumerate(doc_chunks)]
    shared = {(doc_id, position): fact_vectors.get((doc_id, chunk.start, chunk.end)) if chunk.is_one_fact else None
              for doc_id, position, chunk in flat}
    own = iter(embedder.embed([c.embedding_text for d, p, c in flat if shared[(d, p)] is None]) if flat else [])
    rows: list[dict[str, object]] = []
    for doc_id, position, chunk in flat:
        vector = shared[(doc_id, position)] or next(own)
        rows.append({"id": str(uuid.uuid4()), "document_id": doc_id, "position": position, "text": chunk.text,
                     "start": chunk.start, "end": chunk.end, "embedding": vector})
    return rows


def _reembed_pages(store: GraphStore, embedder: Embedder, namespace: str, page: StatementName, update: StatementName,
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
