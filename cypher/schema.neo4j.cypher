// Neo4j-only schema: the search indexes. The bundled engine creates the same indexes with the SQL of
// schema.arcadedb.sql. Names here are the ones graphmem/store/dialect.py passes to db.index.*.queryNodes
// (a test checks that every name the Neo4j dialect queries is created here).

// name: create_fact_text_index
CREATE FULLTEXT INDEX fact_text IF NOT EXISTS FOR (n:Fact) ON EACH [n.text]

// name: create_entity_name_index
CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (n:Entity) ON EACH [n.name]

// name: create_chunk_text_index
CREATE FULLTEXT INDEX chunk_text IF NOT EXISTS FOR (n:Chunk) ON EACH [n.text]

// name: create_fact_embedding_index
CREATE VECTOR INDEX fact_embedding IF NOT EXISTS FOR (n:Fact) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}

// name: create_entity_embedding_index
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:Entity) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}

// name: create_chunk_embedding_index
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}

// Triples: one relationship type, the predicate an indexed property (Browser's caption).
// name: create_relates_predicate_index
CREATE INDEX relates_predicate IF NOT EXISTS FOR ()-[r:RELATES]-() ON (r.predicate)

// Indexes populate in the background on Neo4j; the bootstrap waits (bounded) before serving.
// name: await_indexes
CALL db.awaitIndexes(300)

// Indexes still populating (after creation, or a restore): /ready answers 503 while any is.
// name: indexes_populating
SHOW INDEXES YIELD state, populationPercent
WHERE state <> 'ONLINE' OR populationPercent < 100
RETURN count(*) AS populating
