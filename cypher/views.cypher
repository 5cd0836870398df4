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

// A triple (a RELATES relationship) is visible while the fact it was read from is in the view.
// fragment: triple_in_view
EXISTS { MATCH (tf:Fact {id: _x_.fact_id}) WHERE tf.namespace = _x_.namespace AND {{ in_view(tf) }} }

// What a document read returns (content is returned separately, only where it is wanted).
// fragment: document_fields
d {
  .id, .namespace, .chain_id, .version, .is_latest, .is_forgotten, .is_redacted, .title, .source, .path,
  .metadata, .fact_count, .created_at, .recorded_at, .superseded_at, .forgotten_at, .restored_at,
  .redacted_at
}

// A folder: an exact path ($filter_path), or a path and everything below it ($filter_path_prefix 'a/b' with
// $filter_path_below 'a/b/': a/b and a/b/c match, a/bc never). Documents and facts both carry their memory
// version's path.
// fragment: path_filter
($filter_path IS NULL OR _x_.path = $filter_path)
AND ($filter_path_prefix IS NULL OR _x_.path = $filter_path_prefix OR _x_.path STARTS WITH $filter_path_below)

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
