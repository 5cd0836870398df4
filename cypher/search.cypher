// Raw index probes through the dialect seam: $index is the physical index name the dialect gives.
// They check that the indexes exist and answer on each server. They apply no time view and
// post-filter the namespace after the index's top $k, so they are not a search: the search layer
// over-fetches and applies the views.

// name: index_probe_vector
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
WHERE node.namespace IN $namespaces
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit

// name: index_probe_fulltext
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WHERE node.namespace IN $namespaces
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit

// Fact retrieval: each signal filters by namespace and the time view inside the query.

// The vector index's top $k, post-filtered; the caller over-fetches ($k > $limit) and widens when short.
// name: facts_vector_search
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
WITH node AS f, score
WHERE f.namespace IN $namespaces AND {{ in_view(f) }}
RETURN f.id AS id, score
ORDER BY score DESC, id
LIMIT $limit

// Exact similarity over a small namespace: a 10-fact namespace among 100k others still finds its hits.
// `raw` is vector.similarity.cosine, whose scale differs by server: the dialect normalises it.
// name: facts_vector_scan
MATCH (f:Fact)
WHERE f.namespace IN $namespaces AND f.embedding IS NOT NULL AND {{ in_view(f) }}
WITH f, vector.similarity.cosine(f.embedding, $vector) AS raw
RETURN f.id AS id, raw
ORDER BY raw DESC, id
LIMIT $limit

// name: facts_fulltext_search
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WITH node AS f, score
WHERE f.namespace IN $namespaces AND {{ in_view(f) }}
RETURN f.id AS id, score
ORDER BY score DESC, id
LIMIT $limit

// name: facts_count
MATCH (f:Fact)
WHERE f.namespace IN $namespaces
RETURN count(f) AS facts

// Graph expansion, one hop from the top hits: facts that mention the same entities (entity fan-out
// capped so a hub cannot flood the list), and the neighbouring sentences of the same document.
// name: facts_sharing_entities
UNWIND $fact_ids AS seed_id
MATCH (seed:Fact {id: seed_id})-[:MENTIONS]->(e:Entity)
WHERE seed.namespace IN $namespaces AND e.namespace = seed.namespace
CALL (e, seed) {
  MATCH (f:Fact)-[:MENTIONS]->(e)
  WHERE f.id <> seed.id AND f.namespace = seed.namespace AND {{ in_view(f) }}
  RETURN f
  ORDER BY f.id
  LIMIT $fanout
}
WITH f, count(DISTINCT e) AS shared
RETURN f.id AS id, toFloat(shared) AS score
ORDER BY score DESC, id
LIMIT $limit

// name: facts_neighbouring
UNWIND $fact_ids AS seed_id
MATCH (d:Document)-[:CONTAINS]->(seed:Fact {id: seed_id})
WHERE seed.namespace IN $namespaces AND d.namespace = seed.namespace
MATCH (d)-[:CONTAINS]->(f:Fact)
WHERE f.id <> seed.id AND abs(f.position - seed.position) = 1 AND {{ in_view(f) }}
RETURN DISTINCT f.id AS id, 1.0 AS score
ORDER BY id
LIMIT $limit

// Facts mentioning entities whose name matches the query (full text on Entity.name).
// name: facts_by_entity_name
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WITH node AS e, score
WHERE e.namespace IN $namespaces
MATCH (f:Fact)-[:MENTIONS]->(e)
WHERE f.namespace = e.namespace AND {{ in_view(f) }}
WITH f, max(score) AS score
RETURN f.id AS id, score
ORDER BY score DESC, id
LIMIT $limit

// The facts behind hits, with their citation (document, span) and what they mention.
// name: facts_hydrate
UNWIND $fact_ids AS fact_id
MATCH (d:Document)-[:CONTAINS]->(f:Fact {id: fact_id})
WHERE f.namespace IN $namespaces AND d.namespace = f.namespace
OPTIONAL MATCH (f)-[:MENTIONS]->(e:Entity)
WITH d, f, collect(e {.id, .name, .type}) AS entities
RETURN f.id AS id, f.text AS text, f.start AS start, f.end AS end, f.recorded_at AS recorded_at,
       f.is_latest AS is_latest, f.is_forgotten AS is_forgotten, f.embedding AS embedding,
       d.id AS document_id, d.title AS title, d.source AS source, d.version AS version,
       d.chain_id AS chain_id, entities
