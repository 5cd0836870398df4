// The time views, as one predicate over parameters (graphmem/store/views.py builds the parameters).
// Every read of documents and facts includes it, bound to its node: {{ in_view(d) }}, {{ in_view(f) }}.
// Current = latest and not forgotten; as of T = recorded at or before T and not superseded at T;
// forgotten memories only when asked. Documents and their facts carry the same flags and times.

// fragment: in_view
(NOT _x_.is_forgotten OR $view_include_forgotten)
AND CASE
  WHEN $view_as_of IS NULL THEN _x_.is_latest OR $view_include_superseded
  ELSE _x_.recorded_at <= $view_as_of
    AND (_x_.superseded_at IS NULL OR _x_.superseded_at > $view_as_of OR $view_include_superseded)
END

// An entity is visible in a view only while a fact of that view (and folder) mentions it.
// fragment: entity_in_view
EXISTS { MATCH (_x_)<-[:MENTIONS]-(vf:Fact) WHERE {{ in_view(vf) }} AND {{ path_filter(vf) }} }

// The other names an entity's mentions in the view gave it (ingest/aliases.py), as written, at most 20.
// fragment: entity_aliases
COLLECT { MATCH (_x_)<-[am:MENTIONS]-(af:Fact) WHERE am.alias IS NOT NULL AND af.namespace = _x_.namespace
          AND {{ in_view(af) }} RETURN DISTINCT am.text AS alias ORDER BY alias LIMIT 20 }

// A triple (a RELATES relationship) is visible while the fact it was read from is in the view.
// fragment: triple_in_view
EXISTS { MATCH (tf:Fact {id: _x_.fact_id}) WHERE tf.namespace = _x_.namespace AND {{ in_view(tf) }} }

// What a document read returns (content is returned separately, only where it is wanted).
// fragment: document_fields
d {
  .id, .namespace, .chain_id, .version, .is_latest, .is_forgotten, .is_redacted, .title, .source, .path,
  .metadata, .fact_count, .created_at, .recorded_at, .superseded_at, .forgotten_at, .restored_at,
  .redacted_at, .forget_reason
}

// A folder: an exact path ($filter_path), or a path and everything below it ($filter_path_prefix 'a/b' with
// $filter_path_below 'a/b/': a/b and a/b/c match, a/bc never). Documents and facts both carry their memory
// version's path.
// fragment: path_filter
($filter_path IS NULL OR _x_.path = $filter_path)
AND ($filter_path_prefix IS NULL OR _x_.path = $filter_path_prefix OR _x_.path STARTS WITH $filter_path_below)

// Conditions on a list of memories (graphmem/store/views.py document_where_params; null: no condition).
// fragment: document_where
($where_ids IS NULL OR _x_.id IN $where_ids)
AND ($where_chain_id IS NULL OR _x_.chain_id = $where_chain_id)
AND ($where_title IS NULL OR _x_.title = $where_title)
AND ($where_title_contains IS NULL OR _x_.title CONTAINS $where_title_contains)
AND ($where_title_starts_with IS NULL OR _x_.title STARTS WITH $where_title_starts_with)
AND ($where_sources IS NULL OR _x_.source IN $where_sources)
AND ($where_recorded_after IS NULL OR _x_.recorded_at > $where_recorded_after)
AND ($where_recorded_before IS NULL OR _x_.recorded_at < $where_recorded_before)

// Search filters (graphmem/store/views.py filter_params), bound to a fact: {{ fact_filters(f) }}, or to a
// chunk (a memory-level search entry, which carries its memory's path, times and document id as facts do):
// {{ chunk_filters(c) }}. An entity filter keeps a fact that mentions the entity, and a chunk of a memory
// that does.
// fragment: part_filters
{{ path_filter(_x_) }}
AND ($filter_since IS NULL OR _x_.recorded_at >= $filter_since)
AND ($filter_until IS NULL OR _x_.recorded_at <= $filter_until)
AND ($filter_document_id IS NULL OR _x_.document_id = $filter_document_id)
AND ($filter_source IS NULL OR EXISTS { MATCH (_x_)<-[:CONTAINS]-(fd:Document) WHERE fd.source = $filter_source })

// fragment: fact_filters
{{ part_filters(_x_) }}
AND ($filter_entity_id IS NULL OR EXISTS { MATCH (_x_)-[:MENTIONS]->(fe:Entity) WHERE fe.id = $filter_entity_id })

// fragment: chunk_filters
{{ part_filters(_x_) }}
AND ($filter_entity_id IS NULL OR EXISTS {
  MATCH (_x_)<-[:CONTAINS]-(:Document)-[:CONTAINS]->(:Fact)-[:MENTIONS]->(fe:Entity) WHERE fe.id = $filter_entity_id
})

// Similarity of a node's embedding to $vector as the server computes it (scale per server: the dialect
// normalises it); -1 without an embedding (a redacted fact), below every real score on both servers.
// fragment: similarity
CASE WHEN _x_.embedding IS NULL THEN -1.0 ELSE vector.similarity.cosine(_x_.embedding, $vector) END

// Conditions on a list of facts (graphmem/store/views.py fact_where_params; null: no condition).
// fragment: fact_where
($where_memory_ids IS NULL OR _x_.document_id IN $where_memory_ids)
AND ($where_entity_id IS NULL OR EXISTS { MATCH (_x_)-[:MENTIONS]->(we:Entity) WHERE we.id = $where_entity_id })
AND ($where_text_contains IS NULL OR _x_.text CONTAINS $where_text_contains)
AND ($where_kinds IS NULL OR _x_.kind IN $where_kinds)
AND ($where_recorded_after IS NULL OR _x_.recorded_at > $where_recorded_after)
AND ($where_recorded_before IS NULL OR _x_.recorded_at < $where_recorded_before)

// Conditions on a list of entities (graphmem/store/views.py entity_where_params; null: no condition).
// fragment: entity_where
($where_ids IS NULL OR _x_.id IN $where_ids)
AND ($where_name IS NULL OR _x_.name = $where_name)
AND ($where_name_contains IS NULL OR _x_.name CONTAINS $where_name_contains)
AND ($where_name_starts_with IS NULL OR _x_.name STARTS WITH $where_name_starts_with)
AND ($where_types IS NULL OR _x_.type IN $where_types)
