// Durable ingestion jobs: nodes of the reserved namespace `_system`, each for one caller namespace
// (`job_namespace`). Jobs of one namespace apply in submission order (`seq`); a claimed job holds a lease
// that its worker's heartbeat extends, and a job whose lease ran out is claimed again.

// Submission order comes from one counter in the database, not from any process's clock.
// name: job_create
MERGE (c:SystemRecord {id: 'job_seq'})
ON CREATE SET c.namespace = '_system', c.value = 0
SET c.value = c.value + 1
WITH c.value AS seq
CREATE (j:Job)
SET j = $job, j.seq = seq
WITH j
MERGE (t:StoredTail {namespace: j.job_namespace})
RETURN j.id AS id

// A job whose worker died (lease run out) after its last allowed attempt is failed, never claimed again:
// a job that crashes its workers must not block its namespace forever.
// name: jobs_fail_abandoned
MATCH (j:Job)
WHERE j.namespace = '_system' AND j.status = 'running' AND j.lease_until < $now
  AND j.attempts >= $max_attempts
SET j.status = 'failed', j.finished_at = $now, j.lease_owner = null, j.lease_until = null,
    j.error = 'the worker stopped (crashed or was killed) during each of its ' + toString(j.attempts) + ' attempts'
RETURN count(j) AS failed

// The oldest unfinished job of each namespace is that namespace's head; a head is claimable when it is
// queued or its lease has run out. Failed and done jobs never block the ones after them.
// name: job_next
MATCH (j:Job)
WHERE j.namespace = '_system' AND j.status IN ['queued', 'running']
WITH j
ORDER BY j.seq
WITH j.job_namespace AS job_namespace, collect(j)[0] AS head
WHERE head.status = 'queued' OR head.lease_until < $now
RETURN head.id AS id
ORDER BY head.seq
LIMIT 1

// name: job_claim
MATCH (j:Job {id: $id})
WHERE j.namespace = '_system'
SET j.claim_token = $token
WITH j
WHERE j.status = 'queued' OR (j.status = 'running' AND j.lease_until < $now)
SET j.status = 'running', j.lease_owner = $worker, j.lease_until = $lease_until, j.heartbeat_at = $now,
    j.attempts = j.attempts + 1, j.started_at = coalesce(j.started_at, $now)
RETURN j.id AS id, j.job_namespace AS job_namespace, j.payload AS payload, j.attempts AS attempts

// name: job_heartbeat
MATCH (j:Job {id: $id})
WHERE j.namespace = '_system' AND j.status = 'running' AND j.lease_owner = $worker
SET j.lease_until = $lease_until, j.heartbeat_at = $now
RETURN j.id AS id

// Runs in the same transaction as the job's document writes: both commit, or neither.
// name: job_finish
MATCH (j:Job {id: $id})
WHERE j.namespace = '_system' AND j.status = 'running' AND j.lease_owner = $worker
SET j.status = 'done', j.finished_at = $now, j.document_ids = $document_ids, j.error = null,
    j.lease_owner = null, j.lease_until = null
RETURN j.id AS id

// name: job_fail
MATCH (j:Job {id: $id})
WHERE j.namespace = '_system' AND j.status = 'running' AND j.lease_owner = $worker
SET j.status = CASE WHEN j.attempts >= $max_attempts THEN 'failed' ELSE 'queued' END,
    j.finished_at = CASE WHEN j.attempts >= $max_attempts THEN $now ELSE null END,
    j.error = $error, j.lease_owner = null, j.lease_until = null
RETURN j.status AS status

// name: job_get
MATCH (j:Job {id: $id})
WHERE j.namespace = '_system' AND j.job_namespace IN $namespaces
RETURN j.id AS id, j.job_namespace AS namespace, j.status AS status, j.attempts AS attempts,
       j.items AS items, j.submitted_at AS submitted_at, j.started_at AS started_at,
       j.finished_at AS finished_at, j.error AS error, j.document_ids AS document_ids

// name: jobs_purge
MATCH (j:Job)
WHERE j.namespace = '_system' AND j.status IN ['done', 'failed'] AND j.finished_at < $before
WITH j
LIMIT 1000
DETACH DELETE j
RETURN count(*) AS purged

// Jobs by state, for /metrics.
// name: jobs_by_status
MATCH (j:Job)
WHERE j.namespace = '_system'
RETURN j.status AS status, count(*) AS jobs
ORDER BY status
