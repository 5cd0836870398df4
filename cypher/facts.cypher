// Facts by id and what they mention, in batches (GraphQL's loaders): each statement takes a list of ids and
// reads only the caller's namespaces.

// A fact as a read by id or a list returns it (FactRecord), from f, its document d and d's previous version p.
// fragment: fact_record
f.id AS id, f.text AS text, f.start AS start, f.end AS end, f.position AS position, f.kind AS kind,
f.section AS section, coalesce(f.attributes, []) AS attributes, f.recorded_at AS recorded_at,
f.superseded_at AS superseded_at, f.is_latest AS is_latest, f.is_forgotten AS is_forgotten,
f.is_inference AS is_inference, d.version AS version, p.id AS parent_memory_id, d.id AS memory_id,
f.namespace AS namespace

// name: facts_get
UNWIND $ids AS fact_id
MATCH (f:Fact {id: fact_id})<-[:CONTAINS]-(d:Document)
WHERE f.namespace IN $namespaces AND d.namespace = f.namespace
OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
RETURN {{ fact_record }}

// name: facts_list_count
MATCH (f:Fact)
WHERE f.namespace IN $namespaces AND {{ in_view(f) }} AND {{ path_filter(f) }} AND {{ fact_where(f) }}
RETURN count(f) AS total

// A page of facts in one order each (FactSort), starting after the previous page's last row ($after_*,
// null on the first page); one row more than it returns (is there a next page?).
// name: facts_page
MATCH (f:Fact)
WHERE f.namespace IN $namespaces AND {{ in_view(f) }} AND {{ path_filter(f) }} AND {{ fact_where(f) }}
  AND ($after_id IS NULL OR f.recorded_at < $after_recorded_at
       OR (f.recorded_at = $after_recorded_at AND f.id > $after_id))
WITH f
ORDER BY f.recorded_at DESC, f.id ASC
LIMIT $limit
MATCH (f)<-[:CONTAINS]-(d:Document)
OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
RETURN {{ fact_record }}
ORDER BY recorded_at DESC, id ASC

// name: facts_page_oldest
MATCH (f:Fact)
WHERE f.namespace IN $namespaces AND {{ in_view(f) }} AND {{ path_filter(f) }} AND {{ fact_where(f) }}
  AND ($after_id IS NULL OR f.recorded_at > $after_recorded_at
       OR (f.recorded_at = $after_recorded_at AND f.id > $after_id))
WITH f
ORDER BY f.recorded_at ASC, f.id ASC
LIMIT $limit
MATCH (f)<-[:CONTAINS]-(d:Document)
OPTIONAL MATCH (d)-[:PREVIOUS_VERSION]->(p:Document)
RETURN {{ fact_record }}
ORDER BY recorded_at ASC, id ASC

// name: facts_entities
UNWIND $ids AS fact_id
MATCH (f:Fact {id: fact_id})-[:MENTIONS]->(e:Entity)
WHERE f.namespace IN $namespaces AND e.namespace = f.namespace
RETURN f.id AS fact_id, e.id AS id, e.name AS name, e.type AS type
ORDER BY fact_id, name, id

// The triples read from each fact, up to $limit per fact (subject, predicate, object order), with the citation
// the search's rows carry. No view condition: the caller already sees the facts it asks about.
// name: facts_triples
UNWIND $ids AS fact_id
MATCH (f:Fact {id: fact_id})-[:MENTIONS]->(s:Entity)-[r:RELATES]->(o:Entity)
WHERE f.namespace IN $namespaces AND r.fact_id = f.id AND r.namespace = f.namespace
  AND s.namespace = f.namespace AND o.namespace = f.namespace
WITH f, s, r, o
ORDER BY s.id, r.predicate, o.id
WITH f, collect({s: s, r: r, o: o})[..$limit] AS triples
MATCH (f)<-[:CONTAINS]-(d:Document)
WHERE d.namespace = f.namespace
UNWIND triples AS t
RETURN t.s.id AS subject_id, t.s.name AS subject, t.s.type AS subject_type, t.r.predicate AS predicate,
       t.r.negated AS negated, coalesce(t.r.asserted, false) AS asserted, t.o.id AS object_id, t.o.name AS object, t.o.type AS object_type,
       f.id AS fact_id, f.text AS text, f.start AS start, f.end AS end, f.recorded_at AS recorded_at,
       d.id AS document_id, d.title AS title, d.source AS source, d.path AS path, d.namespace AS namespace
