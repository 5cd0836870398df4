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
