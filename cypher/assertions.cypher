// What agents state (service/assertions.py): entities, observations and relations, stored as assertion memories
// whose facts carry `assertion` ("entity", "observation", "relation"); their mentions and triples carry
// `asserted`. Deleting a statement forgets its fact (soft), and the view rules do the rest: a triple leaves
// with its fact, an entity with the last fact that mentions it.

// The entities named, with what agents have stated about them in the current view.
// name: asserted_state
UNWIND $keys AS key
MATCH (e:Entity {entity_key: key})
WHERE e.namespace = $namespace
OPTIONAL MATCH (e)<-[:MENTIONS]-(f:Fact)
WHERE f.namespace = e.namespace AND f.assertion IS NOT NULL AND {{ in_view(f) }}
WITH e, collect(CASE WHEN f IS NULL THEN null ELSE {id: f.id, assertion: f.assertion, text: f.text} END) AS stated
RETURN e.entity_key AS key, e.name AS name, e.type AS type, e.asserted_type AS asserted_type,
       e.type_labels AS labels, e.type_counts AS counts, stated,
       COUNT { MATCH (e)<-[:MENTIONS]-(vf:Fact) WHERE vf.namespace = e.namespace AND {{ in_view(vf) }} } > 0
         AS visible

// The asserted triples (and their facts) among the relations named, in the current view.
// name: asserted_relations
UNWIND $relations AS rel
MATCH (s:Entity {entity_key: rel.source_key})
WHERE s.namespace = $namespace
MATCH (s)-[r:RELATES]->(o:Entity)
WHERE o.entity_key = rel.target_key AND o.namespace = $namespace AND r.namespace = $namespace
  AND r.asserted = true AND r.predicate = rel.relation_type
MATCH (f:Fact {id: r.fact_id})
WHERE f.namespace = $namespace AND {{ in_view(f) }}
RETURN rel.source_key AS source_key, rel.relation_type AS relation_type, rel.target_key AS target_key,
       f.id AS fact_id

// name: asserted_facts_forget
UNWIND $fact_ids AS fact_id
MATCH (d:Document)-[:CONTAINS]->(f:Fact {id: fact_id})
WHERE f.namespace = $namespace AND d.namespace = $namespace AND f.assertion IS NOT NULL AND NOT f.is_forgotten
SET f.is_forgotten = true, f.forgotten_at = $now
RETURN d.id AS document_id, f.start AS start

// An assertion memory's chunks are its facts (ingest/pipeline.py prepare_stated): each goes with its fact.
// name: asserted_chunks_forget
UNWIND $parts AS part
MATCH (d:Document {id: part.document_id})-[:CONTAINS]->(c:Chunk)
WHERE d.namespace = $namespace AND c.namespace = $namespace AND c.start = part.start AND NOT c.is_forgotten
SET c.is_forgotten = true, c.forgotten_at = $now
RETURN count(c) AS changed

// An assertion memory all of whose statements are deleted is forgotten as a whole (restorable, like any).
// name: asserted_documents_forget_spent
UNWIND $document_ids AS document_id
MATCH (d:Document {id: document_id})
WHERE d.namespace = $namespace AND NOT d.is_forgotten
  AND NOT EXISTS { MATCH (d)-[:CONTAINS]->(f:Fact) WHERE NOT f.is_forgotten }
SET d.is_forgotten = true, d.forgotten_at = $now, d.current_hash_key = null, d.forget_reason = $reason
RETURN count(d) AS changed

// The voted type again, once no agent states one.
// name: asserted_types_clear
UNWIND $entities AS row
MATCH (e:Entity {entity_key: row.key})
WHERE e.namespace = $namespace
SET e.asserted_type = null, e.type = row.type
RETURN e.entity_key AS key

// Entities by key, visible in the view (names an agent gives).
// name: entities_by_keys_in_view
UNWIND $keys AS key
MATCH (e:Entity {entity_key: key})
WHERE e.namespace IN $namespaces AND {{ entity_in_view(e) }}
RETURN e.id AS id, e.name AS name, e.type AS type, e.entity_key AS key

// What is known about each entity, as observations: the statements agents made about it first (oldest first),
// then the facts that mention it, up to $limit each. Declarations ("X is a person") and relation statements
// are not observations: the type and the relations say them.
// name: entities_observations
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})<-[:MENTIONS]-(f:Fact)
WHERE e.namespace IN $namespaces AND f.namespace = e.namespace AND f.text IS NOT NULL AND {{ in_view(f) }}
  AND (f.assertion IS NULL OR f.assertion = 'observation')
WITH e, f
ORDER BY CASE WHEN f.assertion IS NULL THEN 1 ELSE 0 END, f.recorded_at, f.position, f.id
WITH e, collect(f.text)[..$limit] AS observations
RETURN e.id AS entity_id, observations
