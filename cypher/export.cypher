// The bounded evidence-graph export (graphmem/export/): a breadth-first walk, a level in one statement or
// in parts of its frontier, over CONTAINS, MENTIONS, RELATES and PREVIOUS_VERSION in both directions, inside
// one namespace and one time view. The caps are applied here, in the database: at most $fanout new
// neighbours per node (in the engine's adjacency order) and at most $remaining rows per statement that walks
// (export_level_documents has no limit: at most two versions next to each document it is given), so the driver
// never receives more than the walk's budget. Every pattern starts at the node already known: the bundled
// engine's planner starts where a pattern is written, and starting at the other end scanned the whole label
// (measured: a 1,600-node page's edges took 16 s that way, 0.5 s this way). Statements that return hundreds
// of rows return them as one row, `collect({...}) AS rows` (``Tx.collected``): the bundled engine sends each
// record as a message of its own, and receiving them one by one was a fifth to a third of an export. The
// ordered and limited rows come from a RETURN inside `CALL () { ... }`: the same ORDER BY ... LIMIT in a
// WITH made the engine hold the whole unlimited level in its query heap (the count walk's levels at 100k
// facts were refused, over its 2 GB budget).

// A version that the view does not show because a later version had replaced it by the view's time (it
// existed then, and is not forgotten unless forgotten memories are asked for). The export names such a
// version by id only, as an unavailable reference.
// fragment: export_superseded
(NOT _x_.is_forgotten OR $view_include_forgotten)
AND CASE
  WHEN $view_as_of IS NULL THEN NOT _x_.is_latest
  ELSE _x_.recorded_at <= $view_as_of AND _x_.superseded_at <= $view_as_of
END

// The start of the walk: the given ids that are visible in the namespace and view, of the kinds asked
// for. An entity is visible only while a fact in view mentions it. A fact comes with its document's id, as
// in `export_level`.
// name: export_seeds
CALL () {
  UNWIND $ids AS seed_id
  CALL (seed_id) {
    MATCH (n:Document {id: seed_id})
    WHERE 'document' IN $kinds AND n.namespace = $namespace
      AND ({{ in_view(n) }} OR {{ export_superseded(n) }})
    RETURN n.id AS id, CASE WHEN {{ in_view(n) }} THEN 'document' ELSE 'unavailable' END AS kind,
           null AS document
    UNION
    MATCH (n:Fact {id: seed_id})
    WHERE 'fact' IN $kinds AND n.namespace = $namespace AND {{ in_view(n) }}
    RETURN n.id AS id, 'fact' AS kind, n.document_id AS document
    UNION
    MATCH (n:Entity {id: seed_id})
    WHERE 'entity' IN $kinds AND n.namespace = $namespace
    CALL (n) {
      MATCH (n)<-[:MENTIONS]-(f:Fact)
      WHERE f.namespace = $namespace AND {{ in_view(f) }}
      RETURN f.id AS witness
      LIMIT 1
    }
    RETURN n.id AS id, 'entity' AS kind, null AS document
  }
  RETURN DISTINCT id, kind, document
  ORDER BY id
  LIMIT $remaining
}
RETURN collect({id: id, kind: kind, document: document}) AS rows

// One level of the walk, or the part of it that a part of the previous level (the frontier) reaches. The
// frontier's nodes come as three lists of ids by kind ($documents, $facts, $entities; unavailable ones are
// never expanded), so each node is looked up only under its own label (one list of {id, kind} items made
// every node try all six patterns: 20-30% slower at 100k facts), and $position gives each its place in the
// whole frontier. $visited holds the nodes of the levels before this one and $seen those this level already
// holds from earlier parts (maps id -> true: a lookup, where a list would be scanned for every candidate).
// Documents and facts must be in view; an entity is reached only from a fact in view or over a triple whose
// fact is in view; a document outside the view but next to one in view over PREVIOUS_VERSION comes back as
// 'unavailable'. Each node contributes its first $fanout new neighbours in the engine's adjacency order,
// unsorted: sorting them read every neighbour of a hub, so a page's cost grew with the graph (at 100k
// facts, 40% of the level time of a hub's export); taken as they come, a node costs its fan-out. On the
// bundled engine that order is the most recently linked first (a hub shows its newest facts, tested);
// Neo4j's is its own storage order. The kinds of neighbours come in a fixed order, the bounded ones first:
// a document's versions (at most two) before its facts, a fact's document before its entities, an entity's
// facts before the entities it is related to (a triple joins entities its fact mentions, so those are
// reached through the facts one level later). Each kind is read on its own, at most $fanout_probe ($fanout
// + 1) new neighbours, and a node's kinds are joined in that order and cut to $fanout; an entity's triples
// are not read at all once its facts fill the probe (a hub's facts do, and each triple costs a lookup of
// its fact). The rows are the same as those of one UNION of the kinds under one LIMIT per node, which took
// 75% longer at 100k facts (the page walks of 20 exports replayed: 5.6 s against 3.2 s; their counts' walks
// 1.5 s against 1.3 s). The one more than $fanout is looked at only to report `cut` (the fan-out cap left
// something out), and is then dropped. A node's neighbours are chosen against $visited only; $seen is
// applied after, and the rows are ordered by the position of the first frontier node that reaches each,
// then id: so a level read in parts, in any parts, holds exactly what it holds read whole, in the same
// order, and a part cut by $remaining goes on from its last frontier node (walk.py). A fact's neighbours
// (one document, the entities of one sentence: few, whatever the graph's size) are read by pattern
// comprehensions rather than a subquery per fact, which on the bundled engine cost about 0.1 ms a fact in
// itself (470 facts at 100k: 70 ms against 21 ms, the same rows); documents and entities, whose neighbours
// can be many, keep a subquery that stops at $fanout_probe. A fact comes with its `document_id` (the document
// that CONTAINS it: facts_create makes the edge from that document), so that the count's last level
// (walk.py ``Traversal._last_level``) need not read it again.
// name: export_level
CALL () {
  CALL () {
    UNWIND $documents AS item
    CALL (item) {
      MATCH (n:Document {id: item})-[:PREVIOUS_VERSION]-(m:Document)
      WHERE n.namespace = $namespace AND m.namespace = $namespace
        AND ({{ in_view(m) }} OR {{ export_superseded(m) }})
      WITH m.id AS id, CASE WHEN {{ in_view(m) }} THEN 'document' ELSE 'unavailable' END AS kind
      WHERE $visited[id] IS NULL
      RETURN DISTINCT id, kind, null AS document
      LIMIT $fanout_probe
      UNION ALL
      MATCH (n:Document {id: item})-[:CONTAINS]->(m:Fact)
      WHERE n.namespace = $namespace AND m.namespace = $namespace AND {{ in_view(m) }}
      WITH m.id AS id, 'fact' AS kind, m.document_id AS document
      WHERE $visited[id] IS NULL
      RETURN DISTINCT id, kind, document
      LIMIT $fanout_probe
    }
    RETURN item, id, kind, document
    UNION ALL
    UNWIND $facts AS item
    MATCH (n:Fact {id: item})
    WHERE n.namespace = $namespace
    UNWIND [(n)<-[:CONTAINS]-(m:Document) WHERE m.namespace = $namespace AND {{ in_view(m) }}
              AND $visited[m.id] IS NULL | {id: m.id, kind: 'document'}][0..$fanout_probe]
         + [(n)-[:MENTIONS]->(m:Entity) WHERE m.namespace = $namespace AND $visited[m.id] IS NULL
              | {id: m.id, kind: 'entity'}][0..$fanout_probe] AS one
    RETURN item, one.id AS id, one.kind AS kind, null AS document
    UNION ALL
    UNWIND $entities AS item
    CALL (item) {
      MATCH (n:Entity {id: item})<-[:MENTIONS]-(m:Fact)
      WHERE n.namespace = $namespace AND m.namespace = $namespace AND {{ in_view(m) }}
      WITH m.id AS id, m.document_id AS document
      WHERE $visited[id] IS NULL
      WITH DISTINCT id, document
      LIMIT $fanout_probe
      RETURN collect({id: id, kind: 'fact', document: document}) AS facts
    }
    CALL (item, facts) {
      UNWIND CASE WHEN size(facts) < $fanout_probe THEN [item] ELSE [] END AS wanted
      MATCH (n:Entity {id: wanted})-[r:RELATES]-(m:Entity)
      WHERE n.namespace = $namespace AND m.namespace = $namespace AND r.namespace = $namespace
        AND {{ triple_in_view(r) }}
      WITH m.id AS id
      WHERE $visited[id] IS NULL
      WITH DISTINCT id
      LIMIT $fanout_probe
      RETURN collect(id) AS related
    }
    UNWIND facts + [id IN related | {id: id, kind: 'entity', document: null}] AS one
    RETURN item, one.id AS id, one.kind AS kind, one.document AS document
  }
  WITH item, collect({id: id, kind: kind, document: document}) AS found
  RETURN collect({pos: $position[item],
                  found: CASE WHEN size(found) > $fanout THEN found[0..$fanout] ELSE found END}) AS kept,
         sum(CASE WHEN size(found) > $fanout THEN 1 ELSE 0 END) > 0 AS cut
}
CALL (kept) {
  CALL (kept) {
    UNWIND kept AS k
    UNWIND k.found AS m
    WITH m.id AS id, m.kind AS kind, m.document AS document, min(k.pos) AS pos
    WHERE $seen[id] IS NULL
    RETURN id, kind, document, pos
    ORDER BY pos, id
    LIMIT $remaining
  }
  RETURN collect({id: id, kind: kind, document: document, pos: pos}) AS rows
}
RETURN rows, cut

// The versions in view next to the documents of the reachable-document count's last level (walk.py,
// ``Traversal._last_level``, which adds the documents of the frontier's facts, known from where the walk
// reached them, and orders the level), each with the position of the first frontier document next to it. No
// fan-out cap: a document has at most two versions next to it.
// name: export_level_documents
UNWIND $documents AS item
MATCH (n:Document {id: item})-[:PREVIOUS_VERSION]-(m:Document)
WHERE n.namespace = $namespace AND m.namespace = $namespace AND {{ in_view(m) }}
WITH m.id AS id, min($position[item]) AS pos
RETURN collect({id: id, pos: pos}) AS rows

// The state of a walk between the pages of one export (graphmem/export/page.py): the nodes walked so far,
// in order, so that a later page goes on from there instead of walking the earlier pages again, and the
// edges from emitted facts to nodes not passed yet (pairs of target and fact ids, walk.py ``page_edges``, with
// the end of the page they were last moved on by, page.py ``KeptWalk``).
// A record of the reserved namespace `_system`, bound to the namespace and the request it was made for,
// read only before $expires_at. Lists of scalars, not maps: both engines store lists of scalars.
// name: export_walk_save
MERGE (w:SystemRecord {id: $id})
ON CREATE SET w.namespace = '_system', w.kind = 'export_walk', w.owner = $namespace, w.request = $request,
              w.created_at = $now
SET w.ids = $ids, w.kinds = $kinds, w.depths = $depths, w.complete = $complete, w.cut = $cut,
    w.expanded = $expanded, w.expires_at = $expires_at, w.pending_targets = $pending_targets,
    w.pending_facts = $pending_facts, w.pending_until = $pending_until
RETURN w.id AS id

// A page that read no level renews the kept walk's time limit and its pending edges only.
// name: export_walk_touch
MATCH (w:SystemRecord {id: $id})
WHERE w.namespace = '_system' AND w.kind = 'export_walk'
SET w.expires_at = $expires_at, w.pending_targets = $pending_targets, w.pending_facts = $pending_facts,
    w.pending_until = $pending_until
RETURN w.id AS id

// name: export_walk_get
MATCH (w:SystemRecord {id: $id})
WHERE w.namespace = '_system' AND w.kind = 'export_walk' AND w.owner = $namespace AND w.request = $request
  AND w.expires_at > $now
RETURN w.ids AS ids, w.kinds AS kinds, w.depths AS depths, w.complete AS complete, w.cut AS cut,
       w.expanded AS expanded, w.pending_targets AS pending_targets, w.pending_facts AS pending_facts,
       w.pending_until AS pending_until

// Expired walk states, a bounded number per call (each first page of a walk with more pages calls it, in a
// transaction of its own, so they never pile up).
// name: export_walks_expire
MATCH (w:SystemRecord)
WHERE w.namespace = '_system' AND w.kind = 'export_walk' AND w.expires_at <= $now
WITH w
LIMIT 100
DELETE w
RETURN count(*) AS deleted

// The properties of one page's nodes (never embeddings, never a document's content: its facts are its
// text; a fact's also the ids of the entities it mentions, for its edges), for those still in the namespace
// and the view: a later page's nodes come from the walk kept since the first page, and a memory forgotten
// meanwhile is not shown (forgetting is not pinned: forgotten is forgotten). A node that comes back without
// a row is left off its page.
// name: export_documents
UNWIND $ids AS node_id
MATCH (d:Document {id: node_id})
WHERE d.namespace = $namespace AND {{ in_view(d) }}
RETURN collect(d {.id, .title, .source, .version, .chain_id, .is_latest, .is_forgotten, .recorded_at,
                  .superseded_at}) AS rows

// name: export_facts
UNWIND $ids AS node_id
MATCH (f:Fact {id: node_id})
WHERE f.namespace = $namespace AND {{ in_view(f) }}
RETURN collect(f {.id, .text, .document_id, .position, .start, .end, .is_latest, .is_forgotten, .recorded_at,
                  .superseded_at, entities: [(f)-[:MENTIONS]->(e:Entity) WHERE e.namespace = $namespace | e.id]})
       AS rows

// An entity walked in this transaction was reached from a fact in view, or over a triple whose fact is in
// view and mentions it ($walked_here: a first page); one from a kept walk is checked again: one fact in view
// that mentions it is enough. That check is a subquery that stops at the first such fact: the bundled engine
// read every fact of a hub for the same test written as EXISTS { ... } (later pages' entities at 100k facts:
// 8.5 ms against 2.7 ms p50, the same rows). The seeds' entity check above is written the same way.
// name: export_entities
UNWIND $ids AS node_id
MATCH (e:Entity {id: node_id})
WHERE e.namespace = $namespace
CALL (e) {
  MATCH (e)<-[:MENTIONS]-(f:Fact)
  WHERE $walked_here OR (f.namespace = $namespace AND {{ in_view(f) }})
  RETURN f.id AS witness
  LIMIT 1
}
RETURN collect(e {.id, .name, .type}) AS rows

// The edges a page owns that its facts' properties do not give (walk.py ``page_edges``: a page fact's
// CONTAINS and MENTIONS edges come from `export_facts`, read in this transaction). An edge belongs to the
// page where the last of its nodes (for a triple: subject, object or supporting fact) appears: here, edges
// whose last node is on this page ($documents, $unavailable, $entities; $page maps the ids of all but the
// unavailable ones to true) and whose other end is among the nodes emitted up to the end of this page
// ($emitted, a map id -> true: a lookup, where a list was scanned for every candidate). Edges are read from
// the low-degree end: a fact has one document and a few entities, while an entity may be a hub with
// thousands of facts. So edges to a document or entity of this page from a fact of an earlier page are read
// from those earlier facts: $earlier_facts, the ones the earlier pages' facts say link to a node of this page
// (walk.py ``page_edges``, pending edges), empty on the first page. A triple also needs its supporting fact
// among the emitted nodes: every triple in an export cites a fact of the export. Triples are read from their
// subjects, each subject once: for the triples of this page's facts, the emitted entities those facts
// mention ($subjects: a triple joins entities its fact mentions; the facts are this page's, already read in
// view); for triples of earlier facts, this page's entities both ways ($entities, empty when there is no
// earlier page: no fact can be emitted and not on the page). A PREVIOUS_VERSION edge needs one end in view
// (two unavailable references are not linked). Edges that start at an earlier fact need it still in view (a
// later page's earlier facts come from the kept walk). A triple says whether an agent stated it (`asserted`;
// one read from text has no such property, and says false).
// name: export_edges
CALL () {
  UNWIND $earlier_facts AS node_id
  MATCH (n:Fact {id: node_id})<-[:CONTAINS]-(m:Document)
  WHERE n.namespace = $namespace AND m.namespace = $namespace AND $page[m.id] IS NOT NULL
    AND {{ in_view(n) }}
  RETURN m.id AS source, n.id AS target, 'contains' AS kind, null AS predicate, null AS negated, null AS fact_id,
         null AS asserted
  UNION
  UNWIND $documents + $unavailable AS node_id
  MATCH (n:Document {id: node_id})-[:PREVIOUS_VERSION]->(m:Document)
  WHERE n.namespace = $namespace AND m.namespace = $namespace AND $emitted[m.id] IS NOT NULL
    AND ({{ in_view(n) }} OR {{ in_view(m) }})
  RETURN n.id AS source, m.id AS target, 'previous_version' AS kind, null AS predicate, null AS negated,
         null AS fact_id, null AS asserted
  UNION
  UNWIND $documents + $unavailable AS node_id
  MATCH (n:Document {id: node_id})<-[:PREVIOUS_VERSION]-(m:Document)
  WHERE n.namespace = $namespace AND m.namespace = $namespace AND $emitted[m.id] IS NOT NULL
    AND ({{ in_view(n) }} OR {{ in_view(m) }})
  RETURN m.id AS source, n.id AS target, 'previous_version' AS kind, null AS predicate, null AS negated,
         null AS fact_id, null AS asserted
  UNION
  UNWIND $earlier_facts AS node_id
  MATCH (n:Fact {id: node_id})-[:MENTIONS]->(m:Entity)
  WHERE n.namespace = $namespace AND m.namespace = $namespace AND $page[m.id] IS NOT NULL
    AND {{ in_view(n) }}
  RETURN n.id AS source, m.id AS target, 'mentions' AS kind, null AS predicate, null AS negated, null AS fact_id,
         null AS asserted
  UNION
  UNWIND $subjects AS node_id
  MATCH (s:Entity {id: node_id})-[r:RELATES]->(o:Entity)
  WHERE s.namespace = $namespace AND r.namespace = $namespace AND $page[r.fact_id] IS NOT NULL
    AND $emitted[o.id] IS NOT NULL
  RETURN s.id AS source, o.id AS target, 'triple' AS kind, r.predicate AS predicate, r.negated AS negated,
         r.fact_id AS fact_id, coalesce(r.asserted, false) AS asserted
  UNION
  UNWIND $entities AS node_id
  MATCH (s:Entity {id: node_id})-[r:RELATES]->(o:Entity)
  WHERE s.namespace = $namespace AND r.namespace = $namespace AND $emitted[o.id] IS NOT NULL
    AND $emitted[r.fact_id] IS NOT NULL AND $page[r.fact_id] IS NULL
  MATCH (n:Fact {id: r.fact_id})
  WHERE n.namespace = $namespace AND {{ in_view(n) }}
  RETURN s.id AS source, o.id AS target, 'triple' AS kind, r.predicate AS predicate, r.negated AS negated,
         r.fact_id AS fact_id, coalesce(r.asserted, false) AS asserted
  UNION
  UNWIND $entities AS node_id
  MATCH (o:Entity {id: node_id})<-[r:RELATES]-(s:Entity)
  WHERE o.namespace = $namespace AND r.namespace = $namespace AND $emitted[s.id] IS NOT NULL
    AND $emitted[r.fact_id] IS NOT NULL AND $page[r.fact_id] IS NULL
  MATCH (n:Fact {id: r.fact_id})
  WHERE n.namespace = $namespace AND {{ in_view(n) }}
  RETURN s.id AS source, o.id AS target, 'triple' AS kind, r.predicate AS predicate, r.negated AS negated,
         r.fact_id AS fact_id, coalesce(r.asserted, false) AS asserted
}
RETURN collect({source: source, target: target, kind: kind, predicate: predicate, negated: negated,
                fact_id: fact_id, asserted: asserted}) AS rows

// The namespace of the first of $ids (in order) that is a document, a fact or an entity of $namespaces: an
// export that names no namespace walks the one its seed is in.
// name: namespace_of_ids
UNWIND range(0, size($ids) - 1) AS i
WITH i, $ids[i] AS id
OPTIONAL MATCH (d:Document {id: id})
WHERE d.namespace IN $namespaces
OPTIONAL MATCH (f:Fact {id: id})
WHERE f.namespace IN $namespaces
OPTIONAL MATCH (e:Entity {id: id})
WHERE e.namespace IN $namespaces
WITH i, coalesce(d.namespace, f.namespace, e.namespace) AS namespace
WHERE namespace IS NOT NULL
RETURN namespace
ORDER BY i
LIMIT 1
