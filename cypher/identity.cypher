// Credentials: nodes of the reserved namespace `_system`. A token is never stored, only its digest.

// fragment: credential_fields
c {
  .id, .name, .scopes, .namespaces, .all_namespaces, .admin, .created_at, .last_used_at, .revoked_at
}

// name: credential_create
CREATE (c:Credential)
SET c = $credential
RETURN {{ credential_fields }} AS credential

// name: credential_by_digest
MATCH (c:Credential {token_digest: $digest})
WHERE c.namespace = '_system'
RETURN {{ credential_fields }} AS credential

// name: credentials_list
MATCH (c:Credential)
WHERE c.namespace = '_system'
RETURN {{ credential_fields }} AS credential
ORDER BY c.created_at, c.id
LIMIT $limit

// name: credential_revoke
MATCH (c:Credential {id: $id})
WHERE c.namespace = '_system'
SET c.revoked_at = coalesce(c.revoked_at, $now)
RETURN {{ credential_fields }} AS credential

// name: credential_touch
MATCH (c:Credential {id: $id})
WHERE c.namespace = '_system'
SET c.last_used_at = $now
RETURN c.id AS id

// The owner credential is made once per store: this marker is unique, so of two processes (or replicas)
// starting on an empty store, one makes it and the other finds the marker.
// name: owner_marker_claim
MERGE (s:SystemRecord {id: 'owner_credential'})
ON CREATE SET s.namespace = '_system', s.created_at = $now, s.credential_id = $credential_id
RETURN s.credential_id = $credential_id AS claimed

// name: credentials_count
MATCH (c:Credential)
WHERE c.namespace = '_system'
RETURN count(c) AS total
