// Records of the reserved namespace `_system`. No caller can name that namespace.

// name: schema_version_get
MATCH (s:SystemRecord {id: 'schema_version'})
WHERE s.namespace = '_system'
RETURN s.version AS version

// name: schema_version_set
MERGE (s:SystemRecord {id: 'schema_version'})
ON CREATE SET s.namespace = '_system', s.created_at = $now
SET s.version = $version, s.updated_at = $now
RETURN s.version AS version

// name: embedder_get
MATCH (s:SystemRecord {id: 'embedder'})
WHERE s.namespace = '_system'
RETURN s.name AS name, s.dimensions AS dimensions

// name: embedder_set
MERGE (s:SystemRecord {id: 'embedder'})
ON CREATE SET s.namespace = '_system', s.created_at = $now
SET s.name = $name, s.dimensions = $dimensions, s.updated_at = $now
RETURN s.name AS name

// name: ping
RETURN 1 AS ok

