// Index-backed lookups through the dialect seam: $index is the physical index name the dialect gives.

// name: vector_query
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
WHERE node.namespace IN $namespaces
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit

// name: fulltext_query
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WHERE node.namespace IN $namespaces
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit
