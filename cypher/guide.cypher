// The Neo4j Browser guide's queries (`:play http://localhost:8420/browser/guide.html`, rendered by
// graphmem/http/browser.py). They are for people looking at the graph, not for the API: each reads one
// namespace ($namespace, set on the guide's first slide) and returns nodes and relationships, so Browser
// draws them. Only the current view: latest versions, nothing forgotten.

// The newest memory, its facts and the entities they mention.
// name: guide_memory
MATCH (d:Document)
WHERE d.namespace = $namespace AND d.is_latest AND NOT d.is_forgotten
WITH d
ORDER BY d.recorded_at DESC, d.id
LIMIT 1
MATCH (d)-[contains:CONTAINS]->(f:Fact)
OPTIONAL MATCH (f)-[mentions:MENTIONS]->(e:Entity)
RETURN d, contains, f, mentions, e
LIMIT 200

// The entity most facts mention, with those facts and the other entities they mention.
// name: guide_entity_neighbourhood
MATCH (hub:Entity)<-[:MENTIONS]-(f:Fact)
WHERE hub.namespace = $namespace AND f.is_latest AND NOT f.is_forgotten
WITH hub, count(f) AS facts
ORDER BY facts DESC, hub.name
LIMIT 1
MATCH (hub)<-[mentions:MENTIONS]-(f:Fact)
WHERE f.is_latest AND NOT f.is_forgotten
OPTIONAL MATCH (f)-[also:MENTIONS]->(other:Entity)
RETURN hub, mentions, f, also, other
LIMIT 200

// Memories that changed: each latest version and the older versions behind it, newest first.
// name: guide_version_chains
MATCH chain = (latest:Document)-[:PREVIOUS_VERSION*1..20]->(older:Document)
WHERE latest.namespace = $namespace AND latest.is_latest AND NOT latest.is_forgotten
RETURN chain, latest.version AS version, older.version AS older_version
ORDER BY latest.recorded_at DESC, older_version DESC
LIMIT 50

// Subject-predicate-object triples between entities, each with the fact it comes from.
// name: guide_triples
MATCH (s:Entity)-[r:RELATES]->(o:Entity)
WHERE r.namespace = $namespace
MATCH (f:Fact {id: r.fact_id})
WHERE f.is_latest AND NOT f.is_forgotten
RETURN s, r, o, r.predicate AS predicate, r.negated AS negated, f.text AS evidence
ORDER BY s.name, predicate, o.name
LIMIT 100

// A vector search Browser can run: it cannot embed text, so it starts from a stored fact's embedding (the
// newest memory's first fact) and asks the vector index ($index) for the facts nearest to it. The index
// answers over every namespace: this keeps the top 50's facts of $namespace.
// name: guide_vector_search
MATCH (d:Document)-[:CONTAINS]->(probe:Fact)
WHERE d.namespace = $namespace AND d.is_latest AND NOT d.is_forgotten AND probe.embedding IS NOT NULL
WITH probe
ORDER BY d.recorded_at DESC, probe.position
LIMIT 1
CALL db.index.vector.queryNodes($index, 50, probe.embedding) YIELD node, score
WITH probe, node, score
WHERE node.namespace = $namespace AND node.id <> probe.id AND node.is_latest AND NOT node.is_forgotten
RETURN probe.text AS probe, node.text AS nearest, score, node
ORDER BY score DESC
LIMIT 10
