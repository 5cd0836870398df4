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

// What a document read returns (content is returned separately, only where it is wanted).
// fragment: document_fields
d {
  .id, .namespace, .chain_id, .version, .is_latest, .is_forgotten, .is_redacted, .title, .source,
  .metadata, .fact_count, .created_at, .recorded_at, .superseded_at, .forgotten_at, .restored_at,
  .redacted_at
}
