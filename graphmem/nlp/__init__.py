"""The local models, loaded once per process, lazily, and shared by ingestion and search."""
