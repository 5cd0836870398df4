// Documents (memories), their versions and their facts. Every statement filters by namespace.

// name: documents_by_request_keys
UNWIND $request_keys AS request_key
MATCH (d:Document {request_key: request_key})
WHERE d.namespace = $namespace
RETURN d.request_key AS request_key, d.id AS id, d.request_hash AS request_hash

// name: documents_create
UNWIND $documents AS doc
CREATE (d:Document)
SET d = doc
RETURN count(d) AS created

// name: facts_create
UNWIND $facts AS fact
MATCH (d:Document {id: fact.document_id})
WHERE d.namespace = fact.namespace
CREATE (d)-[:CONTAINS]->(f:Fact)
SET f = fact
RETURN count(f) AS created

// name: chunks_create
UNWIND $chunks AS chunk
MATCH (d:Document {id: chunk.document_id})
WHERE d.namespace = chunk.namespace
CREATE (d)-[:CONTAINS]->(c:Chunk)
SET c = chunk
RETURN count(c) AS created

// The statements below change a memory's parts: what a document CONTAINS, its facts and its chunks (the
// memory-level search entries, ingest/chunks.py), which carry the same flags and times. They report how
// many facts changed: count(part.kind) counts facts only (chunks have no kind).

// Stored order: each memory FOLLOWS the one stored just before it in its namespace (a chat turn, the turn
// before it), so document search can bring in a strong memory's neighbours (search/documents.py). The
// namespace's StoredTail holds the last stored memory's id: reading and moving it is one statement on a
// unique key, whatever the namespace's size (finding the newest memory by a query read every memory: 45 ms
// a write at 8,000 memories). Writes to one namespace serialise on it, as they do on the entities they share.
// name: stored_tail_move
MERGE (t:StoredTail {namespace: $namespace})
WITH t, t.last_id AS previous_id
SET t.last_id = $last_id
RETURN previous_id

// The namespaces holding memories that a caller of every namespace reads when it names none: each has the
// StoredTail its first memory or its first job made (a job's namespace is readable, and its job findable by
// id, before the job has stored anything; a unique key, so this reads one node a namespace, never the memories).
// Reserved namespaces (`_system`) are left out.
// name: namespaces_stored
MATCH (t:StoredTail)
WHERE NOT t.namespace STARTS WITH '_'
RETURN t.namespace AS namespace
ORDER BY namespace
LIMIT $limit

// name: documents_follow
UNWIND $links AS link
MATCH (d:Document {id: link.id}), (p:Document {id: link.previous_id})
WHERE d.namespace = $namespace AND p.namespace = $namespace
CREATE (d)-[:FOLLOWS]->(p)
RETURN count(*) AS linked

// name: version_link
MATCH (new:Document {id: $new_id}), (old:Document {id: $old_id})
WHERE new.namespace = $namespace AND old.namespace = $namespace
CREATE (new)-[:PREVIOUS_VERSION]->(old)
RETURN count(*) AS linked

// Locks the latest version of the chain that holds $id (a write lock on Neo4j, a write conflict on
// the bundled engine), so that update, forget, redact and restore of one memory serialise. The latest is
// optional: Neo4j reads committed data without a snapshot, so while another update of the chain commits, a
// read may find the old version no longer latest and the new one not yet there (latest_id null: look again).
// name: chain_lock
MATCH (d:Document {id: $id})
WHERE d.namespace IN $namespaces
OPTIONAL MATCH (l:Document {chain_id: d.chain_id})
WHERE l.namespace = d.namespace AND l.is_latest
FOREACH (latest IN CASE WHEN l IS NULL THEN [] ELSE [l] END | SET latest.lock_token = $token)
RETURN d.id AS id, d.namespace AS namespace, d.chain_id AS chain_id, d.version AS version,
       d.is_latest AS is_latest, d.is_forgotten AS is_forgotten, d.is_redacted AS is_redacted,
       l.id AS latest_id, l.version AS latest_version, l.is_latest AS latest_still_latest,
       l.title AS title, l.source AS source, l.metadata AS metadata, l.path AS path, l.created_at AS created_at,
       l.recorded_at AS latest_recorded_at, l.content_hash AS latest_content_hash

// name: version_supersede
MATCH (d:Document {id: $id})
WHERE d.namespace = $namespace
SET d.is_latest = false, d.superseded_at = $now, d.current_hash_key = null
WITH d
MATCH (d)-[:CONTAINS]->(part)
SET part.is_latest = false, part.superseded_at = $now
RETURN count(part.kind) AS facts

// name: chain_forget_documents
MATCH (d:Document {chain_id: $chain_id})
WHERE d.namespace = $namespace AND NOT d.is_forgotten
SET d.is_forgotten = true, d.forgotten_at = $now, d.current_hash_key = null, d.forget_reason = $reason
RETURN count(d) AS changed

// name: chain_forget_facts
MATCH (d:Document {chain_id: $chain_id})-[:CONTAINS]->(part)
WHERE d.namespace = $namespace AND part.namespace = $namespace AND NOT part.is_forgotten
SET part.is_forgotten = true, part.forgotten_at = $now
RETURN count(part.kind) AS changed

// name: chain_restore_documents
MATCH (d:Document {chain_id: $chain_id})
WHERE d.namespace = $namespace AND d.is_forgotten
SET d.is_forgotten = false, d.restored_at = $now,
    d.current_hash_key = CASE WHEN d.is_latest THEN d.content_hash ELSE null END
RETURN count(d) AS changed

// name: chain_restore_facts
MATCH (d:Document {chain_id: $chain_id})-[:CONTAINS]->(part)
WHERE d.namespace = $namespace AND part.namespace = $namespace AND part.is_forgotten
SET part.is_forgotten = false, part.restored_at = $now
RETURN count(part.kind) AS changed

// Redaction removes text, title, source, metadata, hashes and embeddings; it keeps nodes, lineage,
// spans and times.
// name: chain_redact_documents
MATCH (d:Document {chain_id: $chain_id})
WHERE d.namespace = $namespace AND NOT d.is_redacted
SET d.forgotten_at = CASE WHEN d.is_forgotten THEN d.forgotten_at ELSE $now END
SET d.is_redacted = true, d.is_forgotten = true, d.redacted_at = $now, d.forget_reason = $reason,
    d.content = null, d.title = null, d.source = null, d.metadata = null, d.content_hash = null,
    d.current_hash_key = null, d.request_hash = null
RETURN count(d) AS changed

// name: chain_redact_facts
MATCH (d:Document {chain_id: $chain_id})-[:CONTAINS]->(part)
WHERE d.namespace = $namespace AND part.namespace = $namespace AND part.redacted_at IS NULL
SET part.forgotten_at = CASE WHEN part.is_forgotten THEN part.forgotten_at ELSE $now END
SET part.text = null, part.embedding = null, part.attributes = null, part.is_forgotten = true,
    part.redacted_at = $now
RETURN count(part.kind) AS changed

// name: chain_delete_facts
MATCH (d:Document {chain_id: $chain_id})-[:CONTAINS]->(part)
WHERE d.namespace = $namespace AND part.namespace = $namespace
WITH part, part.kind AS kind
DETACH DELETE part
RETURN count(kind) AS changed

// name: chain_delete_documents
MATCH (d:Document {chain_id: $chain_id})
WHERE d.namespace = $namespace
WITH d, d.request_key AS request_key
DETACH DELETE d
RETURN count(*) AS changed, collect(request_key) AS request_keys

// Receipts of forget requests, and the tombstones a hard delete leaves: markers of the request keys
// that created the deleted memory, without any of its content.
// name: receipts_create
UNWIND $receipts AS receipt
CREATE (r:Receipt)
SET r = receipt
RETURN count(r) AS created

// name: tombstones_for_request_keys
UNWIND $request_keys AS request_key
MATCH (r:Receipt {request_key: request_key})
WHERE r.namespace = $namespace
RETURN r.request_key AS request_key

// Versions by id (one for a read, a batch for GraphQL's loaders), from the caller's namespaces only.
// name: documents_get
UNWIND $ids AS doc_id
MATCH (d:Document {id: doc_id})
WHERE d.namespace IN $namespaces
OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
OPTIONAL MATCH (l:Document {chain_id: d.chain_id})
WHERE l.namespace = d.namespace AND l.is_latest
RETURN {{ document_fields }} AS document, d.content AS content, p.id AS parent_memory_id, l.id AS latest_id

// name: documents_count
MATCH (d:Document)
WHERE d.namespace IN $namespaces AND {{ in_view(d) }} AND {{ path_filter(d) }} AND {{ document_where(d) }}
RETURN count(d) AS total

// A page of memories in one order each (DocumentSort): a page starts after the previous page's last row
// ($after_*, null on the first page) or at an offset ($skip), and reads one row more than it returns (is
// there a next page?).
// name: documents_page
MATCH (d:Document)
WHERE d.namespace IN $namespaces AND {{ in_view(d) }} AND {{ path_filter(d) }} AND {{ document_where(d) }}
  AND ($after_id IS NULL OR d.recorded_at < $after_recorded_at
       OR (d.recorded_at = $after_recorded_at AND d.id > $after_id))
WITH d
ORDER BY d.recorded_at DESC, d.id ASC
SKIP $skip
LIMIT $limit
OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
RETURN {{ document_fields }} AS document, left(d.content, $preview_chars) AS preview, p.id AS parent_memory_id
ORDER BY d.recorded_at DESC, d.id ASC

// name: documents_page_oldest
MATCH (d:Document)
WHERE d.namespace IN $namespaces AND {{ in_view(d) }} AND {{ path_filter(d) }} AND {{ document_where(d) }}
  AND ($after_id IS NULL OR d.recorded_at > $after_recorded_at
       OR (d.recorded_at = $after_recorded_at AND d.id > $after_id))
WITH d
ORDER BY d.recorded_at ASC, d.id ASC
SKIP $skip
LIMIT $limit
OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
RETURN {{ document_fields }} AS document, left(d.content, $preview_chars) AS preview, p.id AS parent_memory_id
ORDER BY d.recorded_at ASC, d.id ASC

// Untitled memories sort as the empty title, first.
// name: documents_page_by_title
MATCH (d:Document)
WHERE d.namespace IN $namespaces AND {{ in_view(d) }} AND {{ path_filter(d) }} AND {{ document_where(d) }}
  AND ($after_id IS NULL OR coalesce(d.title, '') > $after_title
       OR (coalesce(d.title, '') = $after_title AND d.id > $after_id))
WITH d, coalesce(d.title, '') AS title
ORDER BY title ASC, d.id ASC
SKIP $skip
LIMIT $limit
OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
RETURN {{ document_fields }} AS document, left(d.content, $preview_chars) AS preview, p.id AS parent_memory_id
ORDER BY coalesce(d.title, '') ASC, d.id ASC

// The versions of each memory's chain, newest first, up to $limit each (one memory for a read, a batch for
// GraphQL's loaders); a later page starts below $after_version.
// name: chains_history
UNWIND $ids AS start_id
MATCH (start:Document {id: start_id})
WHERE start.namespace IN $namespaces
MATCH (d:Document {chain_id: start.chain_id})
WHERE d.namespace = start.namespace AND ($after_version IS NULL OR d.version < $after_version)
OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
WITH start, d, p
ORDER BY d.version DESC
WITH start, collect({version: d, parent: p.id})[..$limit] AS versions
UNWIND versions AS v
WITH start, v.version AS d, v.parent AS parent_memory_id
RETURN start.id AS start_id, {{ document_fields }} AS document, parent_memory_id

// Receipts make a retried forget return its first result, even after a hard delete left no node.
// name: receipts_for_request
MATCH (r:Receipt {request_id: $request_id})
WHERE r.namespace IN $namespaces
RETURN r.namespace AS namespace, r.target_id AS target_id, r.request_hash AS request_hash,
       r.result AS result
ORDER BY namespace
LIMIT 100

// A memory version's facts in order, with their lineage (a fact shares its version's), and how many it has.
// The first $limit facts of each memory, in order (one memory for a read, a batch for GraphQL's loaders).
// name: documents_facts
UNWIND $ids AS doc_id
MATCH (d:Document {id: doc_id})
WHERE d.namespace IN $namespaces
OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
WITH d, p.id AS parent_memory_id
MATCH (d)-[:CONTAINS]->(f:Fact)
WITH d, parent_memory_id, f
ORDER BY f.position
WITH d, parent_memory_id, collect(f)[..$limit] AS facts
UNWIND facts AS f
RETURN d.id AS memory_id, f.id AS id, f.text AS text, f.start AS start, f.end AS end, f.position AS position, f.kind AS kind,
       f.section AS section, coalesce(f.attributes, []) AS attributes, f.recorded_at AS recorded_at,
       f.superseded_at AS superseded_at, f.is_latest AS is_latest, f.is_forgotten AS is_forgotten,
       f.is_inference AS is_inference, d.version AS version, parent_memory_id

// name: document_entities
MATCH (d:Document {id: $id})-[:CONTAINS]->(f:Fact)-[:MENTIONS]->(e:Entity)
WHERE d.namespace IN $namespaces AND e.namespace = d.namespace
WITH DISTINCT e
RETURN e.id AS id, e.name AS name, e.type AS type
ORDER BY name, id
LIMIT $limit

// name: document_totals
MATCH (d:Document {id: $id})
WHERE d.namespace IN $namespaces
RETURN COUNT { MATCH (d)-[:CONTAINS]->(:Fact) } AS facts,
       COUNT { MATCH (d)-[:CONTAINS]->(:Fact)-[:MENTIONS]->(e:Entity) WITH DISTINCT e RETURN e } AS entities
