// The time views, as predicates over parameters (graphmem/store/views.py builds the parameters).
// Every read of documents includes this fragment: current = latest and not forgotten;
// as of T = recorded at or before T and not superseded at T; forgotten memories only when asked.
// A document node must be bound to `d` where it is included.

// fragment: document_in_view
(NOT d.is_forgotten OR $view_include_forgotten)
AND CASE
  WHEN $view_as_of IS NULL THEN d.is_latest OR $view_include_superseded
  ELSE d.recorded_at <= $view_as_of
    AND (d.superseded_at IS NULL OR d.superseded_at > $view_as_of OR $view_include_superseded)
END

// What a document read returns (content is returned separately, only where it is wanted).
// fragment: document_fields
d {
  .id, .namespace, .chain_id, .version, .is_latest, .is_forgotten, .is_redacted, .title, .source,
  .metadata, .fact_count, .created_at, .recorded_at, .superseded_at, .forgotten_at, .restored_at,
  .redacted_at
}
