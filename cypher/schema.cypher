// Portable schema: uniqueness constraints and range indexes, run on both servers at every start
// (each is IF NOT EXISTS, so the bootstrap is idempotent). Uniqueness is always on one property:
// composite constraints behave differently on the two servers.
// The search indexes (full-text, vector) differ per server: schema.neo4j.cypher / schema.arcadedb.sql.

// name: constraint_document_id
CREATE CONSTRAINT document_id IF NOT EXISTS FOR (n:Document) REQUIRE n.id IS UNIQUE

// name: constraint_document_request_key
CREATE CONSTRAINT document_request_key IF NOT EXISTS FOR (n:Document) REQUIRE n.request_key IS UNIQUE

// A chain never forks: version_key = chain_id + '|' + version is set on every version.
// name: constraint_document_version_key
CREATE CONSTRAINT document_version_key IF NOT EXISTS FOR (n:Document) REQUIRE n.version_key IS UNIQUE

// current_hash_key = the content hash, set only on current versions (latest, not forgotten).
// name: constraint_document_current_hash_key
CREATE CONSTRAINT document_current_hash_key IF NOT EXISTS FOR (n:Document) REQUIRE n.current_hash_key IS UNIQUE

// name: constraint_job_id
CREATE CONSTRAINT job_id IF NOT EXISTS FOR (n:Job) REQUIRE n.id IS UNIQUE

// name: constraint_fact_id
CREATE CONSTRAINT fact_id IF NOT EXISTS FOR (n:Fact) REQUIRE n.id IS UNIQUE

// name: constraint_entity_id
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE

// entity_key = namespace + '|' + normalized name (set by ingestion).
// name: constraint_entity_key
CREATE CONSTRAINT entity_key IF NOT EXISTS FOR (n:Entity) REQUIRE n.entity_key IS UNIQUE

// alias_key = namespace + '|' + normalised form (ingest/aliases.py).
// name: constraint_alias_key
CREATE CONSTRAINT alias_key IF NOT EXISTS FOR (n:Alias) REQUIRE n.alias_key IS UNIQUE

// name: constraint_receipt_id
CREATE CONSTRAINT receipt_id IF NOT EXISTS FOR (n:Receipt) REQUIRE n.id IS UNIQUE

// name: constraint_receipt_request_key
CREATE CONSTRAINT receipt_request_key IF NOT EXISTS FOR (n:Receipt) REQUIRE n.request_key IS UNIQUE

// name: constraint_stored_tail_namespace
CREATE CONSTRAINT stored_tail_namespace IF NOT EXISTS FOR (n:StoredTail) REQUIRE n.namespace IS UNIQUE

// name: constraint_system_record_id
CREATE CONSTRAINT system_record_id IF NOT EXISTS FOR (n:SystemRecord) REQUIRE n.id IS UNIQUE

// name: constraint_handoff_id
CREATE CONSTRAINT handoff_id IF NOT EXISTS FOR (n:Handoff) REQUIRE n.id IS UNIQUE

// handoff_key = namespace + '|' + project + '|' + version: a project's chain never forks.
// name: constraint_handoff_key
CREATE CONSTRAINT handoff_key IF NOT EXISTS FOR (n:Handoff) REQUIRE n.handoff_key IS UNIQUE

// name: constraint_handoff_request_key
CREATE CONSTRAINT handoff_request_key IF NOT EXISTS FOR (n:Handoff) REQUIRE n.request_key IS UNIQUE

// name: index_handoff_project
CREATE INDEX handoff_project IF NOT EXISTS FOR (n:Handoff) ON (n.project)

// name: index_document_path
CREATE INDEX document_path IF NOT EXISTS FOR (n:Document) ON (n.path)

// name: index_fact_path
CREATE INDEX fact_path IF NOT EXISTS FOR (n:Fact) ON (n.path)

// name: constraint_credential_id
CREATE CONSTRAINT credential_id IF NOT EXISTS FOR (n:Credential) REQUIRE n.id IS UNIQUE

// name: constraint_credential_token_digest
CREATE CONSTRAINT credential_token_digest IF NOT EXISTS FOR (n:Credential) REQUIRE n.token_digest IS UNIQUE

// name: index_document_namespace
CREATE INDEX document_namespace IF NOT EXISTS FOR (n:Document) ON (n.namespace)

// name: index_document_chain_id
CREATE INDEX document_chain_id IF NOT EXISTS FOR (n:Document) ON (n.chain_id)

// name: index_document_source
CREATE INDEX document_source IF NOT EXISTS FOR (n:Document) ON (n.source)

// name: index_job_status
CREATE INDEX job_status IF NOT EXISTS FOR (n:Job) ON (n.status)

// name: index_receipt_request_id
CREATE INDEX receipt_request_id IF NOT EXISTS FOR (n:Receipt) ON (n.request_id)

// name: index_fact_namespace
CREATE INDEX fact_namespace IF NOT EXISTS FOR (n:Fact) ON (n.namespace)

// name: index_chunk_namespace
CREATE INDEX chunk_namespace IF NOT EXISTS FOR (n:Chunk) ON (n.namespace)

// name: index_entity_namespace
CREATE INDEX entity_namespace IF NOT EXISTS FOR (n:Entity) ON (n.namespace)
