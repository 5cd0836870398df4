// Handoffs: a project's current state, one node per revision in the caller's namespace, newest -> older by
// PREVIOUS_VERSION like documents. handoff_key = namespace|project|version is unique, so a project's chain
// cannot fork; request_key = handoff|namespace|request_id is unique, so a retried save finds its revision.

// fragment: handoff_fields
h {
  .id, .project, .version, .goal, .summary, .decisions, .next_steps, .references, .author, .created_at,
  .request_hash
}

// name: handoff_by_request_key
MATCH (h:Handoff {request_key: $request_key})
WHERE h.namespace = $namespace
RETURN {{ handoff_fields }} AS handoff

// The latest revision of a project, locked for the save that follows (a write lock on Neo4j, a write
// conflict on the bundled engine): concurrent saves of one project serialise here.
// name: handoff_lock_latest
MATCH (h:Handoff {project: $project})
WHERE h.namespace = $namespace AND h.is_latest
SET h.lock_token = $token
RETURN h.id AS id, h.version AS version

// name: handoff_create
CREATE (h:Handoff)
SET h = $handoff
RETURN {{ handoff_fields }} AS handoff

// name: handoff_supersede
MATCH (new:Handoff {id: $new_id}), (old:Handoff {id: $old_id})
WHERE new.namespace = $namespace AND old.namespace = $namespace
SET old.is_latest = false
CREATE (new)-[:PREVIOUS_VERSION]->(old)
RETURN count(*) AS linked

// name: handoff_get
MATCH (h:Handoff {project: $project})
WHERE h.namespace = $namespace AND (($version IS NULL AND h.is_latest) OR h.version = $version)
RETURN {{ handoff_fields }} AS handoff

// The latest revision of each project, by project name; a page starts after the previous page's last one.
// name: handoffs_latest
MATCH (h:Handoff)
WHERE h.namespace = $namespace AND h.is_latest AND ($after IS NULL OR h.project > $after)
RETURN {{ handoff_fields }} AS handoff
ORDER BY h.project
LIMIT $limit
