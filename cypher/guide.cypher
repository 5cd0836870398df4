// The Neo4j Browser guide's queries (`:play http://localhost:8420/browser/guide.html`, filled in by
// graphmem/web/guide.py). They are for people looking at the graph, not for the API: each reads one
// namespace ($namespace) in one time view (the in_view fragment's $view_* parameters), both set by the
// guide's first block, and returns nodes and relationships, so Browser draws them.

// The newest memory in view, its facts and the entities they mention.
// name: guide_memory
MATCH (d:Document)
WHERE d.namespace = $namespace AND {{ in_view(d) }}
WITH d
ORDER BY d.recorded_at DESC, d.id
LIMIT 1
MATCH (d)-[contains:CONTAINS]->(f:Fact)
OPTIONAL MATCH (f)-[mentions:MENTIONS]->(e:Entity)
RETURN d, contains, f, mentions, e
LIMIT 200

// The entity most facts in view mention, with those facts and the other entities they mention.
// name: guide_entity_neighbourhood
MATCH (hub:Entity)<-[:MENTIONS]-(f:Fact)
WHERE hub.namespace = $namespace AND f.namespace = $namespace AND {{ in_view(f) }}
WITH hub, count(f) AS facts
ORDER BY facts DESC, hub.name
LIMIT 1
MATCH (hub)<-[mentions:MENTIONS]-(f:Fact)
WHERE f.namespace = $namespace AND {{ in_view(f) }}
OPTIONAL MATCH (f)-[also:MENTIONS]->(other:Entity)
RETURN hub, mentions, f, also, other
LIMIT 200

// Memories that changed: each chain whole, from the version in view back to the first one (the older
// versions are shown on purpose: they are what the chain is), newest change first.
// name: guide_version_chains
MATCH chain = (newest:Document)-[:PREVIOUS_VERSION*1..20]->(first:Document)
WHERE newest.namespace = $namespace AND {{ in_view(newest) }}
  AND NOT EXISTS { MATCH (first)-[:PREVIOUS_VERSION]->(:Document) }
RETURN chain, newest.version AS version, first.id AS first_version
ORDER BY newest.recorded_at DESC, first_version
LIMIT 50

// Subject-predicate-object triples between entities, each with the fact in view it was read from.
// name: guide_triples
MATCH (s:Entity)-[r:RELATES]->(o:Entity)
WHERE r.namespace = $namespace
MATCH (f:Fact {id: r.fact_id})
WHERE f.namespace = $namespace AND {{ in_view(f) }}
RETURN s, r, o, r.predicate AS predicate, r.negated AS negated, f.text AS evidence
ORDER BY s.name, predicate, o.name
LIMIT 100

// A vector search Browser can run: it cannot embed text, so it starts from a stored fact's embedding (the
// newest memory's first fact) and asks the vector index ($index) for the facts nearest to it. The index
// answers over every namespace: this keeps the facts of $namespace in view among its top 50.
// name: guide_vector_search
MATCH (d:Document)-[:CONTAINS]->(probe:Fact)
WHERE d.namespace = $namespace AND {{ in_view(d) }} AND probe.embedding IS NOT NULL
WITH probe
ORDER BY d.recorded_at DESC, probe.position
LIMIT 1
CALL db.index.vector.queryNodes($index, 50, probe.embedding) YIELD node, score
WITH probe, node, score
WHERE node.namespace = $namespace AND node.id <> probe.id AND {{ in_view(node) }}
RETURN probe.text AS probe, node.text AS nearest, score, node
ORDER BY score DESC
LIMIT 10

// The relations view: entities and the triples between them, nothing else (no documents, no facts), each
// triple while the fact it was read from is in view.
// name: guide_relations
MATCH (s:Entity)-[r:RELATES]->(o:Entity)
WHERE r.namespace = $namespace AND s.namespace = $namespace AND o.namespace = $namespace
  AND {{ triple_in_view(r) }}
RETURN s, r, o
ORDER BY s.name, r.predicate, o.name
LIMIT 300

// Triples an agent asserted (r.asserted = true, written through the memory tools rather than read from
// text), each with the fact that records the assertion and the assertion's document (its source names the
// credential and the operation).
// name: guide_asserted
MATCH (s:Entity)-[r:RELATES]->(o:Entity)
WHERE r.namespace = $namespace AND r.asserted = true
MATCH (f:Fact {id: r.fact_id})<-[contains:CONTAINS]-(d:Document)
WHERE f.namespace = $namespace AND d.namespace = $namespace AND {{ in_view(f) }}
RETURN s, r, o, f, contains, d
ORDER BY d.recorded_at DESC, s.name, r.predicate, o.name
LIMIT 200
