-- Bundled engine (ArcadeDB) search indexes, sent as SQL over its HTTP API by graphmem/store/schema.py.
-- ArcadeDB rejects CREATE FULLTEXT/VECTOR INDEX in Cypher. Types and properties are declared first
-- (an index fixes its property's type). Index names are `Type[property]`, see dialect.py.
-- efSearch 400: without it vector recall@10 measured 0.22 on random data, with it 0.95-0.97.
CREATE VERTEX TYPE Document IF NOT EXISTS
CREATE VERTEX TYPE Fact IF NOT EXISTS
CREATE VERTEX TYPE Entity IF NOT EXISTS
CREATE VERTEX TYPE Chunk IF NOT EXISTS
CREATE PROPERTY Fact.text IF NOT EXISTS STRING
CREATE PROPERTY Entity.name IF NOT EXISTS STRING
CREATE PROPERTY Chunk.text IF NOT EXISTS STRING
CREATE PROPERTY Fact.embedding IF NOT EXISTS ARRAY_OF_FLOATS
CREATE PROPERTY Chunk.embedding IF NOT EXISTS ARRAY_OF_FLOATS
CREATE PROPERTY Entity.embedding IF NOT EXISTS ARRAY_OF_FLOATS
CREATE INDEX IF NOT EXISTS ON Fact (text) FULL_TEXT
CREATE INDEX IF NOT EXISTS ON Entity (name) FULL_TEXT
CREATE INDEX IF NOT EXISTS ON Chunk (text) FULL_TEXT
CREATE INDEX IF NOT EXISTS ON Fact (embedding) LSM_VECTOR METADATA {dimensions: 384, similarity: 'COSINE', efSearch: 400}
CREATE INDEX IF NOT EXISTS ON Entity (embedding) LSM_VECTOR METADATA {dimensions: 384, similarity: 'COSINE', efSearch: 400}
CREATE INDEX IF NOT EXISTS ON Chunk (embedding) LSM_VECTOR METADATA {dimensions: 384, similarity: 'COSINE', efSearch: 400}
CREATE EDGE TYPE RELATES IF NOT EXISTS
CREATE PROPERTY RELATES.predicate IF NOT EXISTS STRING
CREATE INDEX IF NOT EXISTS ON RELATES (predicate) NOTUNIQUE
