// Ingestion writes: entities, mentions, triples and similarity links of one batch of documents.
// Documents and facts are written by documents_create / facts_create (documents.cypher).

// name: documents_by_current_hash
UNWIND $hash_keys AS hash_key
MATCH (d:Document {current_hash_key: hash_key})
WHERE d.namespace = $namespace
RETURN d.current_hash_key AS hash_key, d.id AS id

// name: entities_by_keys
UNWIND $keys AS key
MATCH (e:Entity {entity_key: key})
WHERE e.namespace = $namespace
RETURN e.entity_key AS key, e.type AS type, e.type_labels AS labels, e.type_counts AS counts,
       e.asserted_type AS asserted_type

// A batch's entities, typed by the vote (ingest/write.py). A row comes back only for an entity left without
// a vector (see entities_embedding_set) or whose type label does not follow its type yet (new, or its type
// changed, or an earlier change was missed: entity_labels_unset says why labels change after the commit):
// the label statements then read only those, not every entity a batch mentions (in a bulk load, most are
// known and unchanged).
// name: entities_upsert
UNWIND $entities AS row
MERGE (e:Entity {entity_key: row.entity_key, namespace: $namespace})
ON CREATE SET e.id = row.id, e.name = row.name, e.normalized_name = row.normalized_name,
              e.embedding = row.embedding, e.created_at = $now
SET e.type = row.type, e.type_labels = row.type_labels, e.type_counts = row.type_counts,
    e.asserted_type = coalesce(row.asserted_type, e.asserted_type), e.updated_at = $now
WITH e, e.type_label IS NULL OR e.type_label <> e.type AS relabel
WHERE e.embedding IS NULL OR relabel
RETURN e.entity_key AS key, e.embedding IS NULL AS missing, relabel

// The vectors of entities the upsert left without one: a row for a known entity carries no vector, and one
// deleted between the batch's read and its upsert is created again without it.
// name: entities_embedding_set
UNWIND $entities AS row
MATCH (e:Entity {entity_key: row.entity_key})
WHERE e.namespace = $namespace
SET e.embedding = row.embedding
RETURN count(e) AS set

// The type is also a label (Person, Place, ...) for Neo4j Browser's styling, following the vote. Labels
// change after the write commits, one change per node per transaction: the bundled engine re-creates a
// node's record on a label change and trips the unique index when that happens twice in a transaction
// (or to a node created in it). The label is presentation only: the type property is the truth, and the
// next write of the entity reconciles a missed change.
// name: entity_labels_unset
UNWIND $keys AS key
MATCH (e:Entity {entity_key: key})
WHERE e.namespace = $namespace AND e.type_label IS NOT NULL AND e.type_label <> e.type
REMOVE e:$(e.type_label)
SET e.type_label = null
RETURN count(e) AS changed

// name: entity_labels_set
UNWIND $keys AS key
MATCH (e:Entity {entity_key: key})
WHERE e.namespace = $namespace AND e.type_label IS NULL
SET e:$(e.type), e.type_label = e.type
RETURN count(e) AS changed

// Aliases (ingest/aliases.py): the entities each form is registered for, as a short form or a linked form.
// name: alias_targets
UNWIND $alias_keys AS alias_key
MATCH (a:Alias {alias_key: alias_key})-[:ALIAS_OF]->(e:Entity)
WHERE a.namespace = $namespace AND e.namespace = $namespace
RETURN a.form AS form, e.entity_key AS key, e.type AS type

// name: aliases_register
UNWIND $aliases AS row
MATCH (e:Entity {entity_key: row.entity_key})
WHERE e.namespace = $namespace
MERGE (a:Alias {alias_key: row.alias_key})
ON CREATE SET a.namespace = $namespace, a.form = row.form
MERGE (a)-[:ALIAS_OF]->(e)
RETURN count(*) AS registered

// A full name that arrives after its short form was stored alone takes that entity in: its mentions (which
// keep their text and record the form; a fact that names both keeps one mention with every span), its
// triples, then the node itself. Never an entity an agent named.
// fragment: absorbable
_x_.asserted_type IS NULL AND NOT EXISTS { MATCH (_x_)<-[am:MENTIONS]-(:Fact) WHERE am.asserted }

// name: entity_absorb_shared_mentions
UNWIND $absorb AS row
MATCH (short:Entity {entity_key: row.short_key})
WHERE short.namespace = $namespace AND {{ absorbable(short) }}
MATCH (full:Entity {entity_key: row.full_key})
WHERE full.namespace = $namespace
MATCH (f:Fact)-[m:MENTIONS]->(short)
MATCH (f)-[k:MENTIONS]->(full)
SET k.starts = k.starts + m.starts, k.ends = k.ends + m.ends
DELETE m
RETURN count(k) AS merged

// name: entity_absorb_mentions
UNWIND $absorb AS row
MATCH (short:Entity {entity_key: row.short_key})
WHERE short.namespace = $namespace AND {{ absorbable(short) }}
MATCH (full:Entity {entity_key: row.full_key})
WHERE full.namespace = $namespace
MATCH (f:Fact)-[m:MENTIONS]->(short)
CREATE (f)-[n:MENTIONS]->(full)
SET n.starts = m.starts, n.ends = m.ends, n.text = m.text, n.namespace = m.namespace, n.alias = row.form
DELETE m
RETURN count(n) AS moved

// name: entity_absorb_triples
UNWIND $absorb AS row
MATCH (short:Entity {entity_key: row.short_key})
WHERE short.namespace = $namespace AND NOT EXISTS { MATCH (short)<-[:MENTIONS]-(:Fact) }
MATCH (full:Entity {entity_key: row.full_key})
WHERE full.namespace = $namespace
CALL (short, full) {
  MATCH (short)-[r:RELATES]->(o:Entity)
  CREATE (full)-[n:RELATES]->(o)
  SET n = properties(r)
  DELETE r
  RETURN count(n) AS moved
  UNION ALL
  MATCH (o:Entity)-[r:RELATES]->(short)
  CREATE (o)-[n:RELATES]->(full)
  SET n = properties(r)
  DELETE r
  RETURN count(n) AS moved
}
RETURN sum(moved) AS moved

// name: entity_absorb_delete
UNWIND $absorb AS row
MATCH (short:Entity {entity_key: row.short_key})
WHERE short.namespace = $namespace AND NOT EXISTS { MATCH (short)<-[:MENTIONS]-(:Fact) }
DETACH DELETE short
RETURN count(*) AS deleted

// Candidates for SIMILAR_TO among the namespace's existing entities (over-fetched, then filtered).
// name: entities_similar
UNWIND $entities AS row
CALL db.index.vector.queryNodes($index, $k, row.embedding) YIELD node, score
WITH row, node, score
WHERE node.namespace = $namespace AND node.entity_key <> row.entity_key AND score >= $min_score
RETURN row.entity_key AS key, node.entity_key AS other, score
ORDER BY key, score DESC, other

// name: similar_links_create
UNWIND $links AS link
MATCH (a:Entity {entity_key: link.key})
WHERE a.namespace = $namespace
MATCH (b:Entity {entity_key: link.other})
WHERE b.namespace = $namespace
MERGE (a)-[r:SIMILAR_TO]->(b)
ON CREATE SET r.score = link.score, r.namespace = $namespace, r.recorded_at = $now
RETURN count(r) AS linked

// name: mentions_create
UNWIND $mentions AS m
MATCH (f:Fact {id: m.fact_id})
WHERE f.namespace = $namespace
MATCH (e:Entity {entity_key: m.entity_key})
WHERE e.namespace = $namespace
CREATE (f)-[r:MENTIONS]->(e)
SET r.starts = m.starts, r.ends = m.ends, r.text = m.text, r.namespace = $namespace,
    r.asserted = CASE WHEN m.asserted THEN true END, r.alias = m.alias
RETURN count(r) AS created

// name: triples_create
UNWIND $triples AS t
MATCH (s:Entity {entity_key: t.subject_key})
WHERE s.namespace = $namespace
MATCH (o:Entity {entity_key: t.object_key})
WHERE o.namespace = $namespace
CREATE (s)-[r:RELATES]->(o)
SET r.predicate = t.predicate, r.negated = t.negated, r.fact_id = t.fact_id,
    r.document_id = t.document_id, r.namespace = $namespace, r.recorded_at = t.recorded_at,
    r.asserted = CASE WHEN t.asserted THEN true END
RETURN count(r) AS created

// What a chain's facts mention, before its facts lose their text or are deleted.
// name: chain_mentions
MATCH (d:Document {chain_id: $chain_id})-[:CONTAINS]->(f:Fact)-[:MENTIONS]->(e:Entity)
WHERE d.namespace = $namespace AND e.namespace = $namespace
RETURN collect(DISTINCT e.entity_key) AS entity_keys, collect(DISTINCT f.id) AS fact_ids

// Triples always join entities their fact mentions, so they are found from those entities.
// name: triples_delete_by_facts
UNWIND $entity_keys AS key
MATCH (s:Entity {entity_key: key})-[r:RELATES]->(:Entity)
WHERE s.namespace = $namespace AND r.fact_id IN $fact_ids
DELETE r
RETURN count(*) AS deleted

// name: mentions_delete_by_facts
UNWIND $fact_ids AS fact_id
MATCH (f:Fact {id: fact_id})-[m:MENTIONS]->(:Entity)
WHERE f.namespace = $namespace
DELETE m
RETURN count(*) AS deleted

// name: entities_delete_orphans
UNWIND $entity_keys AS key
MATCH (e:Entity {entity_key: key})
WHERE e.namespace = $namespace AND NOT EXISTS { MATCH (:Fact)-[:MENTIONS]->(e) }
DETACH DELETE e
RETURN count(*) AS deleted

// name: documents_latest_by_sources
UNWIND $sources AS source
MATCH (d:Document {source: source})
WHERE d.namespace = $namespace AND d.is_latest AND NOT d.is_forgotten
RETURN d.source AS source, d.id AS id, d.content_hash AS content_hash

// Everything stored in a namespace, every version included (the ingest summary's before/after); memories:
// one per version chain, its latest version.
// fragment: counts_of_namespace
COUNT { MATCH (d:Document) WHERE d.namespace = _x_ } AS documents,
COUNT { MATCH (d:Document) WHERE d.namespace = _x_ AND d.is_latest } AS memories,
COUNT { MATCH (f:Fact) WHERE f.namespace = _x_ } AS facts,
COUNT { MATCH (e:Entity) WHERE e.namespace = _x_ } AS entities,
COUNT { MATCH (:Entity)-[r:RELATES]->(:Entity) WHERE r.namespace = _x_ } AS triples

// name: namespace_counts
WITH $namespace AS namespace
RETURN {{ counts_of_namespace(namespace) }}

// Every namespace holding memories, with its counts (graphmem stats).
// name: namespaces_counts
MATCH (d:Document)
WHERE d.namespace <> '_system'
WITH DISTINCT d.namespace AS namespace
RETURN namespace, {{ counts_of_namespace(namespace) }}
ORDER BY namespace

// The namespace with the most memories: the server's warm-up searches and exports there (service/memory.py).
// name: namespace_largest
MATCH (d:Document)
WHERE d.namespace <> '_system'
RETURN d.namespace AS namespace, count(d) AS documents
ORDER BY documents DESC, namespace
LIMIT 1

// Re-embedding (graphmem reembed): namespaces, then their facts and entities in pages by id.
// name: namespaces_with_data
MATCH (d:Document)
WHERE d.namespace <> '_system'
RETURN DISTINCT d.namespace AS namespace
ORDER BY namespace

// name: documents_page_for_embedding
MATCH (d:Document)
WHERE d.namespace = $namespace AND d.content IS NOT NULL AND d.id > $after
RETURN d.id AS id, d.content AS content
ORDER BY id
LIMIT $limit

// name: facts_of_documents
UNWIND $document_ids AS document_id
MATCH (d:Document {id: document_id})-[:CONTAINS]->(f:Fact)
WHERE d.namespace = $namespace AND f.namespace = $namespace
RETURN f.id AS id, d.id AS document_id, f.start AS start, f.end AS end, f.text AS text
ORDER BY id

// A page of memories' chunks, replaced (graphmem reembed builds them again with the new vectors).
// name: chunks_delete_of_documents
UNWIND $document_ids AS document_id
MATCH (d:Document {id: document_id})-[:CONTAINS]->(c:Chunk)
WHERE d.namespace = $namespace AND c.namespace = $namespace
DETACH DELETE c
RETURN count(*) AS deleted

// name: chunks_rebuild
UNWIND $chunks AS chunk
MATCH (d:Document {id: chunk.document_id})
WHERE d.namespace = $namespace
CREATE (d)-[:CONTAINS]->(c:Chunk)
SET c = chunk, c.namespace = d.namespace, c.path = d.path, c.is_latest = d.is_latest,
    c.is_forgotten = d.is_forgotten, c.recorded_at = d.recorded_at, c.superseded_at = d.superseded_at,
    c.forgotten_at = d.forgotten_at
RETURN count(c) AS created

// name: entities_page_for_embedding
MATCH (e:Entity)
WHERE e.namespace = $namespace AND e.id > $after
RETURN e.id AS id, e.name AS text
ORDER BY id
LIMIT $limit

// name: facts_set_embeddings
UNWIND $rows AS row
MATCH (f:Fact {id: row.id})
WHERE f.namespace = $namespace
SET f.embedding = row.embedding
RETURN count(f) AS updated

// name: entities_set_embeddings
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
WHERE e.namespace = $namespace
SET e.embedding = row.embedding
RETURN count(e) AS updated
