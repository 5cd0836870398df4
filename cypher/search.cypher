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
