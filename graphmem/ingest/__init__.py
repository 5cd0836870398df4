"""Ingestion: text in, facts (and, later, entities, triples and embeddings) out."""
