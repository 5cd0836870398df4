-- Bundled engine (ArcadeDB) vector index state, read over its HTTP query API by graphmem/store/settling.py
-- (Bolt has no access to the schema). Line 1 lists the indexes; line 2 reads one index's state, with the
-- index name (as the engine itself listed it) in place of {name}.
SELECT name, indexType FROM schema:indexes
SELECT FROM schema:index:`{name}`
