"""graphmem: a self-hosted knowledge-graph memory server on Neo4j."""

__version__ = "0.1.0"
