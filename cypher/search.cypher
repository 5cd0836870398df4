// Raw index probes through the dialect seam: $index is the physical index name the dialect gives.
// They check that the indexes exist and answer on each server. They apply no time view and
// post-filter the namespace after the index's top $k, so they are not a search: the search layer
// over-fetches and applies the views.

// name: index_probe_vector
CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
WHERE node.namespace IN $namespaces
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit

// name: index_probe_fulltext
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WHERE node.namespace IN $namespaces
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit

// Fact retrieval: each signal filters by namespace and the time view inside the query. The statements of a search's
// hot path return their rows collected in one record, `collect({...}) AS rows` (``Tx.collected``; the
// ordered, limited rows come from a RETURN inside `CALL () { ... }`): the bundled engine sends a Bolt message
// per record, and receiving 150 of them was about 5 ms of a search at 100k facts.

// The vector index's top $k, post-filtered; the caller over-fetches ($k > $limit) and widens when short.
// name: facts_vector_search
CALL () {
  CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
  WITH node AS f, score
  WHERE f.namespace IN $namespaces AND {{ in_view(f) }} AND {{ fact_filters(f) }}
  RETURN f.id AS id, score
  ORDER BY score DESC, id
  LIMIT $limit
}
RETURN collect({id: id, score: score}) AS rows

// Exact similarity over a small namespace: a 10-fact namespace among 100k others still finds its hits.
// `raw` is vector.similarity.cosine, whose scale differs by server: the dialect normalises it.
// name: facts_vector_scan
MATCH (f:Fact)
WHERE f.namespace IN $namespaces AND f.embedding IS NOT NULL AND {{ in_view(f) }} AND {{ fact_filters(f) }}
WITH f, vector.similarity.cosine(f.embedding, $vector) AS raw
RETURN f.id AS id, raw
ORDER BY raw DESC, id
LIMIT $limit

// name: facts_fulltext_search
CALL () {
  CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
  WITH node AS f, score
  WHERE f.namespace IN $namespaces AND {{ in_view(f) }} AND {{ fact_filters(f) }}
  RETURN f.id AS id, score
  ORDER BY score DESC, id
  LIMIT $limit
}
RETURN collect({id: id, score: score}) AS rows

// Counts stop at $cap: the caller only needs to know whether a namespace is small enough to scan.
// name: facts_count
MATCH (f:Fact)
WHERE f.namespace IN $namespaces
WITH f LIMIT $cap
RETURN count(f) AS total

// Memory-level retrieval: chunks (ingest/chunks.py), each signal ranking memories by their best chunk.
// Chunks carry their memory's namespace, flags and times, so the same view and filter fragments apply.

// name: chunks_vector_search
CALL () {
  CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
  WITH node AS c, score
  WHERE c.namespace IN $namespaces AND {{ in_view(c) }} AND {{ chunk_filters(c) }}
  WITH c.document_id AS id, max(score) AS score
  RETURN id, score
  ORDER BY score DESC, id
  LIMIT $limit
}
RETURN collect({id: id, score: score}) AS rows

// name: chunks_vector_scan
MATCH (c:Chunk)
WHERE c.namespace IN $namespaces AND c.embedding IS NOT NULL AND {{ in_view(c) }} AND {{ chunk_filters(c) }}
WITH c.document_id AS id, max(vector.similarity.cosine(c.embedding, $vector)) AS raw
RETURN id, raw
ORDER BY raw DESC, id
LIMIT $limit

// name: chunks_fulltext_search
CALL () {
  CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
  WITH node AS c, score
  WHERE c.namespace IN $namespaces AND {{ in_view(c) }} AND {{ chunk_filters(c) }}
  WITH c.document_id AS id, max(score) AS score
  RETURN id, score
  ORDER BY score DESC, id
  LIMIT $limit
}
RETURN collect({id: id, score: score}) AS rows

// name: chunks_count
MATCH (c:Chunk)
WHERE c.namespace IN $namespaces
WITH c LIMIT $cap
RETURN count(c) AS total

// The memories behind document hits, with their best chunk's similarity to the query (`raw`, normalised by
// the dialect; -1 for a memory without chunks).
// name: documents_hydrate_for_search
UNWIND $document_ids AS document_id
MATCH (d:Document {id: document_id})
WHERE d.namespace IN $namespaces
OPTIONAL MATCH (d)-[:CONTAINS]->(c:Chunk)
WITH d, max({{ similarity(c) }}) AS raw
RETURN d.id AS id, d.namespace AS namespace, d.title AS title, d.source AS source, d.version AS version,
       d.is_latest AS is_latest, d.recorded_at AS recorded_at, coalesce(raw, -1.0) AS raw

// Chat turns stored next to the seeds that are turns (up to two FOLLOWS steps either way: a question's
// answer, an answer's question), in the view and matching the filters through their chunks; each with its
// nearest seed. Only turns: a turn's meaning leans on the turns around it, a note stands alone.
// name: documents_neighbouring
UNWIND $document_ids AS seed_id
MATCH path = (s:Document {id: seed_id})-[:FOLLOWS*1..2]-(n:Document)
WHERE s.namespace IN $namespaces AND n.namespace = s.namespace AND n.id <> s.id
  AND s.speaker IS NOT NULL AND n.speaker IS NOT NULL
  AND EXISTS { MATCH (n)-[:CONTAINS]->(c:Chunk) WHERE {{ in_view(c) }} AND {{ chunk_filters(c) }} }
RETURN seed_id AS seed, n.id AS id, min(length(path)) AS distance

// The best facts of memories found by their chunks alone, as their evidence: up to $per_document each,
// most similar to the query first (the caller hydrates them with facts_hydrate).
// name: facts_best_of_documents
UNWIND $document_ids AS document_id
MATCH (d:Document {id: document_id})-[:CONTAINS]->(f:Fact)
WHERE d.namespace IN $namespaces AND f.namespace = d.namespace AND {{ in_view(f) }} AND {{ fact_filters(f) }}
WITH d, f, {{ similarity(f) }} AS raw
ORDER BY raw DESC, f.id
WITH d, collect(f.id)[..$per_document] AS fact_ids
UNWIND fact_ids AS id
RETURN d.id AS document_id, id

// Graph expansion, one hop from the top hits: facts that mention the same entities, the neighbouring
// sentences of the same document, and facts mentioning entities whose name matches the query. Each
// returns its facts' similarity to the query (`raw`, normalised by the dialect): expansion finds
// candidates, the query decides their order. Fan-out takes the first $fanout facts of an entity in
// storage order, unsorted: sorting a hub's facts would read all of them, the cost the cap exists to bound.
// name: facts_sharing_entities
CALL () {
  UNWIND $fact_ids AS seed_id
  MATCH (seed:Fact {id: seed_id})-[:MENTIONS]->(e:Entity)
  WHERE seed.namespace IN $namespaces AND e.namespace = seed.namespace
  CALL (e, seed) {
    MATCH (e)<-[:MENTIONS]-(f:Fact)
    WHERE f.id <> seed.id AND f.namespace = seed.namespace AND {{ in_view(f) }} AND {{ fact_filters(f) }}
    RETURN f
    LIMIT $fanout
  }
  WITH DISTINCT f
  WITH f, {{ similarity(f) }} AS raw
  RETURN f.id AS id, raw
  ORDER BY raw DESC, id
  LIMIT $limit
}
RETURN collect({id: id, raw: raw}) AS rows

// name: facts_neighbouring
CALL () {
  UNWIND $fact_ids AS seed_id
  MATCH (seed:Fact {id: seed_id})<-[:CONTAINS]-(d:Document)
  WHERE seed.namespace IN $namespaces AND d.namespace = seed.namespace
  MATCH (d)-[:CONTAINS]->(f:Fact)
  WHERE f.id <> seed.id AND abs(f.position - seed.position) = 1 AND {{ in_view(f) }} AND {{ fact_filters(f) }}
  WITH DISTINCT f
  WITH f, {{ similarity(f) }} AS raw
  RETURN f.id AS id, raw
  ORDER BY raw DESC, id
  LIMIT $limit
}
RETURN collect({id: id, raw: raw}) AS rows

// Facts mentioning given entities (those whose name matches the query: entities_name_search).
// name: facts_mentioning
CALL () {
  UNWIND $entity_ids AS entity_id
  MATCH (e:Entity {id: entity_id})
  WHERE e.namespace IN $namespaces
  CALL (e) {
    MATCH (e)<-[:MENTIONS]-(f:Fact)
    WHERE f.namespace = e.namespace AND {{ in_view(f) }} AND {{ fact_filters(f) }}
    RETURN f
    LIMIT $fanout
  }
  WITH DISTINCT f
  WITH f, {{ similarity(f) }} AS raw
  RETURN f.id AS id, raw
  ORDER BY raw DESC, id
  LIMIT $limit
}
RETURN collect({id: id, raw: raw}) AS rows

// The facts behind hits, with their citation (document, span), what they mention and their similarity to
// the query (`raw`, normalised by the dialect). Embeddings only when asked ($with_embedding, for MMR).
// name: facts_hydrate
CALL () {
  UNWIND $fact_ids AS fact_id
  MATCH (f:Fact {id: fact_id})<-[:CONTAINS]-(d:Document)
  WHERE f.namespace IN $namespaces AND d.namespace = f.namespace
  OPTIONAL MATCH (f)-[:MENTIONS]->(e:Entity)
  WITH d, f, collect(e {.id, .name, .type}) AS entities
  OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
  RETURN f.id AS id, f.text AS text, f.start AS start, f.end AS end, f.recorded_at AS recorded_at,
         f.is_latest AS is_latest, f.is_forgotten AS is_forgotten, f.is_inference AS is_inference,
         coalesce(f.attributes, []) AS attributes, CASE WHEN $with_embedding THEN f.embedding END AS embedding,
         {{ similarity(f) }} AS raw, d.id AS document_id, d.namespace AS namespace, d.title AS title,
         d.source AS source, d.path AS path, d.version AS version, d.chain_id AS chain_id,
         p.id AS parent_memory_id, entities
}
RETURN collect({id: id, text: text, start: start, end: end, recorded_at: recorded_at, is_latest: is_latest,
                is_forgotten: is_forgotten, is_inference: is_inference, attributes: attributes,
                embedding: embedding, raw: raw, document_id: document_id, namespace: namespace, title: title,
                source: source, path: path, version: version, chain_id: chain_id,
                parent_memory_id: parent_memory_id, entities: entities}) AS rows

// Entity search: by embedding (index with over-fetch, or an exact scan for a small namespace) and by name
// (full text). An entity is visible in a view only while a fact in that view mentions it.

// name: entities_vector_search
CALL () {
  CALL db.index.vector.queryNodes($index, $k, $vector) YIELD node, score
  WITH node AS e, score
  WHERE e.namespace IN $namespaces AND {{ entity_in_view(e) }}
  RETURN e.id AS id, score
  ORDER BY score DESC, id
  LIMIT $limit
}
RETURN collect({id: id, score: score}) AS rows

// name: entities_vector_scan
MATCH (e:Entity)
WHERE e.namespace IN $namespaces AND e.embedding IS NOT NULL AND {{ entity_in_view(e) }}
WITH e, vector.similarity.cosine(e.embedding, $vector) AS raw
RETURN e.id AS id, raw
ORDER BY raw DESC, id
LIMIT $limit

// name: entities_count
MATCH (e:Entity)
WHERE e.namespace IN $namespaces
WITH e LIMIT $cap
RETURN count(e) AS total

// name: entities_name_search
CALL () {
  CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
  WITH node AS e, score
  WHERE e.namespace IN $namespaces AND {{ entity_in_view(e) }}
  RETURN e.id AS id, score
  ORDER BY score DESC, id
  LIMIT $limit
}
RETURN collect({id: id, score: score}) AS rows

// Entity ids by name for graph expansion and triple resolution: no view check here, because the facts
// or triples they lead to are checked against the view (an EXISTS per hit doubled the statement's cost).
// name: entities_by_name
CALL () {
  CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
  WITH node AS e, score
  WHERE e.namespace IN $namespaces
  RETURN e.id AS id, score
  ORDER BY score DESC, id
  LIMIT $limit
}
RETURN collect({id: id, score: score}) AS rows

// The entities behind hits: how many facts in the view mention them, and their similarity to the query.
// name: entities_hydrate
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})<-[:MENTIONS]-(f:Fact)
WHERE e.namespace IN $namespaces AND f.namespace = e.namespace AND {{ in_view(f) }} AND {{ path_filter(f) }}
WITH e, count(DISTINCT f) AS facts
RETURN e.id AS id, e.name AS name, e.type AS type, e.namespace AS namespace, facts, {{ similarity(e) }} AS raw

// Triple search: the caller resolves subject, object and free-term text to entity ids (and the term to
// fact ids) through the full-text indexes; a null list means "any". A triple is visible only while the
// fact it was read from is in the view; `negated` filters when not null. Each statement starts from what
// is known (subjects, objects, a term's entities or facts), so it reads only their triples; only a search
// by predicate alone reads every triple of the namespaces.

// fragment: triple_filters
r.namespace IN $namespaces AND s.namespace = r.namespace AND o.namespace = r.namespace
AND ($subject_ids IS NULL OR s.id IN $subject_ids)
AND ($object_ids IS NULL OR o.id IN $object_ids)
AND ($predicate IS NULL OR toLower(r.predicate) CONTAINS $predicate)
AND ($negated IS NULL OR r.negated = $negated)
AND ($term_entity_ids IS NULL OR s.id IN $term_entity_ids OR o.id IN $term_entity_ids
     OR r.fact_id IN $term_fact_ids)

// Rows in the order (recorded_at DESC, fact_id, subject_id, predicate, object_id); a later page starts after
// the last row of the previous one ($after_* null on the first page).
// fragment: triple_rows
MATCH (f:Fact {id: r.fact_id})<-[:CONTAINS]-(d:Document)
WHERE f.namespace = r.namespace AND d.namespace = f.namespace AND {{ in_view(f) }} AND {{ path_filter(f) }}
  AND ($after_fact_id IS NULL OR f.recorded_at < $after_recorded_at
       OR (f.recorded_at = $after_recorded_at AND (f.id > $after_fact_id
       OR (f.id = $after_fact_id AND (s.id > $after_subject_id
       OR (s.id = $after_subject_id AND (r.predicate > $after_predicate
       OR (r.predicate = $after_predicate AND o.id > $after_object_id))))))))
RETURN s.id AS subject_id, s.name AS subject, s.type AS subject_type, r.predicate AS predicate,
       r.negated AS negated, coalesce(r.asserted, false) AS asserted, o.id AS object_id, o.name AS object,
       o.type AS object_type, f.id AS fact_id, f.text AS text, f.start AS start, f.end AS end, f.recorded_at AS recorded_at,
       d.id AS document_id, d.title AS title, d.source AS source, d.path AS path, d.namespace AS namespace
ORDER BY recorded_at DESC, fact_id, subject_id, predicate, object_id
LIMIT $limit

// name: triples_from_subjects
UNWIND $anchor_ids AS anchor_id
MATCH (s:Entity {id: anchor_id})-[r:RELATES]->(o:Entity)
WHERE {{ triple_filters }}
{{ triple_rows }}

// name: triples_from_objects
UNWIND $anchor_ids AS anchor_id
MATCH (o:Entity {id: anchor_id})<-[r:RELATES]-(s:Entity)
WHERE {{ triple_filters }}
{{ triple_rows }}

// name: triples_from_facts
UNWIND $anchor_ids AS anchor_id
MATCH (:Fact {id: anchor_id})-[:MENTIONS]->(s:Entity)-[r:RELATES]->(o:Entity)
WHERE r.fact_id = anchor_id AND {{ triple_filters }}
{{ triple_rows }}

// name: triples_scan
MATCH (s:Entity)-[r:RELATES]->(o:Entity)
WHERE {{ triple_filters }}
{{ triple_rows }}
