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

// What an admin limited to some namespaces may see and revoke: credentials of those namespaces only
// ($within: its namespaces; null for an admin over every namespace, and for the local operator).
// fragment: credential_within
($within IS NULL OR (NOT c.all_namespaces AND all(name IN c.namespaces WHERE name IN $within)))

// name: credentials_list
MATCH (c:Credential)
WHERE c.namespace = '_system' AND {{ credential_within }}
RETURN {{ credential_fields }} AS credential
ORDER BY c.created_at, c.id
LIMIT $limit

// Revocations that could lock every admin out take turns: each writes this record first, so two of them
// conflict and one is retried, and sees the other's revocation.
// name: credential_admins_turn
MERGE (t:SystemRecord {id: 'credential_admins'})
ON CREATE SET t.namespace = '_system'
SET t.changed_at = $now
RETURN t.id AS id

// A credential about to be revoked: is it the owner, and how many other live admins over every namespace that may
// write (and so may grant) remain.
// name: credential_revoke_target
MATCH (c:Credential {id: $id})
WHERE c.namespace = '_system' AND {{ credential_within }}
OPTIONAL MATCH (s:SystemRecord {id: 'owner_credential'})
WHERE s.namespace = '_system'
RETURN {{ credential_fields }} AS credential, coalesce(s.credential_id = c.id, false) AS is_owner,
       COUNT {
         MATCH (o:Credential)
         WHERE o.namespace = '_system' AND o.admin AND o.all_namespaces AND 'write' IN o.scopes
           AND o.revoked_at IS NULL AND o.id <> c.id
       } AS other_admins

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
