// One entity, its facts and its neighbours; and the steps of a path search between entities. An entity is
// visible while a fact of the view mentions it; a triple while the fact it was read from is in the view.

// Entities by id (one for a read, a batch for GraphQL's loaders).
// name: entities_get
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
WHERE e.namespace IN $namespaces
  AND {{ entity_in_view(e) }}
RETURN e.id AS id, e.namespace AS namespace, e.name AS name, e.type AS type, {{ entity_aliases(e) }} AS aliases

// name: entity_by_key
MATCH (e:Entity {entity_key: $key})
WHERE e.namespace = $namespace
  AND {{ entity_in_view(e) }}
RETURN e.id AS id, e.namespace AS namespace, e.name AS name, e.type AS type, {{ entity_aliases(e) }} AS aliases

// The entities a form names as an alias (ingest/aliases.py): registered for it, and named so by a mention in
// the view (an alias only forgotten memories used is no name of it). Several when the form became ambiguous.
// name: entities_by_alias
UNWIND $alias_keys AS alias_key
MATCH (a:Alias {alias_key: alias_key})-[:ALIAS_OF]->(e:Entity)
WHERE a.namespace IN $namespaces AND e.namespace = a.namespace
  AND EXISTS { MATCH (e)<-[m:MENTIONS]-(f:Fact) WHERE m.alias = a.form AND {{ in_view(f) }} AND {{ path_filter(f) }} }
WITH DISTINCT e
RETURN e.id AS id, e.namespace AS namespace, e.name AS name, e.type AS type, {{ entity_aliases(e) }} AS aliases
ORDER BY name, id
LIMIT $limit

// Newest first, up to $limit per entity (one entity for a read, a batch for GraphQL's loaders; a read asks
// for one more than it shows, to say whether the list was cut).
// name: entities_facts
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})<-[:MENTIONS]-(f:Fact)
WHERE e.namespace IN $namespaces AND f.namespace = e.namespace AND {{ in_view(f) }}
WITH e, f
ORDER BY f.recorded_at DESC, f.id
WITH e, collect(f)[..$limit] AS facts
UNWIND facts AS f
MATCH (f)<-[:CONTAINS]-(d:Document)
RETURN e.id AS entity_id, f.id AS fact_id, f.text AS text, d.id AS document_id, d.title AS title,
       f.recorded_at AS recorded_at
ORDER BY entity_id, recorded_at DESC, fact_id

// name: entity_fact_count
MATCH (e:Entity {id: $id})
WHERE e.namespace = $namespace
RETURN COUNT { MATCH (e)<-[:MENTIONS]-(f:Fact) WHERE f.namespace = e.namespace AND {{ in_view(f) }} } AS total

// The triples of each entity, either direction, up to $limit per entity in name order (one entity for a
// read, a batch for GraphQL's loaders).
// name: entities_neighbours
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
WHERE e.namespace IN $namespaces
CALL (e) {
  MATCH (e)-[r:RELATES]->(o:Entity)
  WHERE r.namespace = e.namespace AND o.namespace = e.namespace
    AND {{ triple_in_view(r) }}
  RETURN o, r, true AS outgoing
  UNION
  MATCH (e)<-[r:RELATES]-(o:Entity)
  WHERE r.namespace = e.namespace AND o.namespace = e.namespace
    AND {{ triple_in_view(r) }}
  RETURN o, r, false AS outgoing
}
WITH e, o, r, outgoing
ORDER BY o.name, o.id, r.predicate, r.fact_id
WITH e, collect({id: o.id, name: o.name, type: o.type, predicate: r.predicate, negated: r.negated,
                 outgoing: outgoing, fact_id: r.fact_id, asserted: coalesce(r.asserted, false)})[..$limit]
       AS neighbours
UNWIND neighbours AS n
RETURN e.id AS entity_id, n.id AS id, n.name AS name, n.type AS type, n.predicate AS predicate,
       n.negated AS negated, n.outgoing AS outgoing, n.fact_id AS fact_id, n.asserted AS asserted

// One level of a breadth-first path search: for each entity of the frontier, at most $fanout neighbours
// through triples (either direction) and at most $fanout through facts that mention both, in the view.
// name: path_level
UNWIND $frontier AS entity_id
MATCH (e:Entity {id: entity_id})
WHERE e.namespace = $namespace
CALL (e) {
  MATCH (e)-[r:RELATES]->(o:Entity)
  WHERE r.namespace = e.namespace AND o.namespace = e.namespace
    AND {{ triple_in_view(r) }}
  RETURN o.id AS other, 'triple' AS via, r.predicate AS predicate, r.negated AS negated, r.fact_id AS fact_id,
         true AS forward
  LIMIT $fanout
  UNION
  MATCH (e)<-[r:RELATES]-(o:Entity)
  WHERE r.namespace = e.namespace AND o.namespace = e.namespace
    AND {{ triple_in_view(r) }}
  RETURN o.id AS other, 'triple' AS via, r.predicate AS predicate, r.negated AS negated, r.fact_id AS fact_id,
         false AS forward
  LIMIT $fanout
  UNION
  MATCH (e)<-[:MENTIONS]-(f:Fact)-[:MENTIONS]->(o:Entity)
  WHERE f.namespace = e.namespace AND o.namespace = e.namespace AND o.id <> e.id AND {{ in_view(f) }}
  RETURN o.id AS other, 'fact' AS via, null AS predicate, null AS negated, f.id AS fact_id, null AS forward
  LIMIT $fanout
}
RETURN entity_id AS source, other, via, predicate, negated, fact_id, forward
ORDER BY source, other, via, fact_id

// name: facts_texts
UNWIND $ids AS fact_id
MATCH (f:Fact {id: fact_id})
WHERE f.namespace = $namespace
RETURN f.id AS id, f.text AS text

// name: entities_names
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
WHERE e.namespace = $namespace
RETURN e.id AS id, e.name AS name

// The best full-text match of a name among the visible entities of the namespace.
// name: entity_by_name_match
CALL db.index.fulltext.queryNodes($index, $query, {limit: $k}) YIELD node, score
WITH node AS e, score
WHERE e.namespace = $namespace
  AND {{ entity_in_view(e) }}
RETURN e.id AS id, e.namespace AS namespace, e.name AS name, e.type AS type, {{ entity_aliases(e) }} AS aliases
ORDER BY score DESC, id
LIMIT 1

// A page of the entities a fact of the view mentions, in one order each (EntitySort); unnamed entities sort
// as the empty name. Starts after the previous page's last row; one row more than it returns.
// name: entities_list_count
MATCH (e:Entity)
WHERE e.namespace IN $namespaces AND {{ entity_where(e) }} AND {{ entity_in_view(e) }}
RETURN count(e) AS total

// name: entities_page
MATCH (e:Entity)
WHERE e.namespace IN $namespaces AND {{ entity_where(e) }}
  AND ($after_id IS NULL OR coalesce(e.name, '') > $after_name
       OR (coalesce(e.name, '') = $after_name AND e.id > $after_id))
  AND {{ entity_in_view(e) }}
WITH e, coalesce(e.name, '') AS name
ORDER BY name ASC, e.id ASC
LIMIT $limit
RETURN e.id AS id, e.namespace AS namespace, e.name AS name, e.type AS type, {{ entity_aliases(e) }} AS aliases

// name: entities_page_name_desc
MATCH (e:Entity)
WHERE e.namespace IN $namespaces AND {{ entity_where(e) }}
  AND ($after_id IS NULL OR coalesce(e.name, '') < $after_name
       OR (coalesce(e.name, '') = $after_name AND e.id > $after_id))
  AND {{ entity_in_view(e) }}
WITH e, coalesce(e.name, '') AS name
ORDER BY name DESC, e.id ASC
LIMIT $limit
RETURN e.id AS id, e.namespace AS namespace, e.name AS name, e.type AS type, {{ entity_aliases(e) }} AS aliases
