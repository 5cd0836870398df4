"""The bounded evidence-graph export: the graph around a seed, walked breadth-first under explicit caps,
paged by a small signed cursor over a walk kept server-side, as JSON, GraphML or a Cypher script.

**What is walked.** Seeds (a query's top fact hits, a document, an entity, or up to 100 ids of any kind)
are depth 0; each level adds the neighbours of the previous one over CONTAINS, MENTIONS, RELATES and
PREVIOUS_VERSION, in both directions, up to ``depth`` hops. The order is deterministic: the seeds by id, then
by depth, and within a level by the position of the node of the level before that reaches each first, then by
id.
Everything stays inside one namespace and one time view: documents and facts must be in view; an entity
is reached only through a fact in view (or a triple whose fact is in view), so an entity or triple that
only facts outside the view support is hidden. Forgotten items never appear unless the view includes
them. A superseded version next to a document in view over PREVIOUS_VERSION is emitted as an
``unavailable`` node (id only, no text), counted in ``unavailableDocuments`` and not expanded.

**Seeds that are not visible.** A document id of the namespace naming a version that was superseded at
the view's time is an unavailable node at depth 0. Otherwise a document or entity seed that is not
visible in the namespace and view is ``NotFound`` (the same answer whether it exists elsewhere or not);
ids of an id-list seed that are not visible are ignored, as are superseded facts (only documents have
placeholders). An entity is visible while a fact in view mentions it.

**Caps, enforced in the Cypher** (``cypher/export.cypher``). One statement takes a part of the frontier and returns
the next level's ids that part reaches, with at most ``fanout`` new neighbours per node (a hub cannot flood a page)
and at most the walk's remaining budget of rows (``ORDER BY pos, id LIMIT $remaining``). A page reads a level in
parts until it holds its nodes (``Traversal.walk``): what a level costs is reading each frontier node's neighbours,
so a page that needs a few hundred nodes of a level of thousands reads a few hundred, and a later page reads the
next part. A node's fan-out is filled in the engine's adjacency order, not sorted, so the engine can stop reading a
hub's neighbours once it has them (sorting read them all); on the bundled engine that is the most recently linked
first (a hub shows its newest facts). A page holds at most ``max_nodes`` nodes and ``max_documents`` documents; node
properties are read for that page only. What the driver receives for a page: id rows from the walk, parts of levels
until the walk holds ``offset + max_nodes + 1`` nodes (the one extra says whether a next page exists), and never
more than ``offset + 2 x max_nodes + 1`` nor 20,001 (a part costs the server the same whether it sends all of its
rows or fewer, and what it sends beyond this page is kept for the next ones); on a later page, also the kept walk
itself (ids, kinds and depths, as many as the walk holds), which goes back to the database only when the page read a
level, and its pending edges (read and written back on every page); property rows, at most ``max_nodes``; edge rows,
only edges whose both ends are on this or an earlier page. The server's own work per node can still grow with the
node's degree (neighbours out of view or already walked are read past, and the edges of a page read each of its
entities' triples once, a hub's included), but no longer to sort them.

**Edges** are returned only between emitted nodes. A triple also needs its supporting fact emitted: every
triple of an export cites evidence that is in the export, and the number of triples stays bounded by the
facts on the page. Each edge is emitted on the page where the last of its nodes (for a triple: subject,
object and fact) appears, so the union of all pages repeats nothing.

**Completeness.** ``totalDocuments`` and ``unavailableDocuments`` count this page. ``truncated`` says that this
page is not the whole reachable graph: other pages exist, or the fan-out cap left neighbours out. ``coverage``
is this page's documents over the documents reachable from the seeds within ``depth`` in the view, counted up to
ten times the caps. It is 1.0, without further work, when nothing is truncated; otherwise the reachable
documents are counted once, on the first page, by a second walk whose caps are ten times the page's: ``10 x
max_documents`` documents, ``10 x max_nodes`` nodes, ``10 x fanout`` neighbours per node; its last level holds
only documents (the facts and entities there add nothing to the count, and a hub's facts were most of its
reads): its facts' documents, known from where the walk reached the facts, and the versions next to its
documents. When it hits one of them the count is a lower bound, so ``coverage`` is an upper bound and
``coverage_is_upper_bound`` says so. The count walks in a read transaction of its own, beside the page's. It
travels in the cursor to later pages.

**Cursor and the kept walk.** A page that has a next one keeps its walk (the ids, kinds and depths of the nodes
walked so far, in order, how much of the frontier the last level was read from, and the edges from the facts shown
so far to nodes not passed yet, so that a later page reads its edges from earlier facts from the facts that have
one) in a record of the reserved namespace `_system`, for ``GRAPHMEM_EXPORT_WALK_TTL_S`` (default 900 s) after each
page. The next page goes on from there: the rest of the last level, from the first frontier node not yet read, then
the next levels (a level read in parts holds exactly what it holds read whole, so where a page stopped does not
change the later pages, unless something they would show is forgotten in between); the earlier levels are not walked
again, and a page whose nodes an earlier part already read reads no level at all. A cursor used again (a retry)
gives the same page: only the page that goes on from the last one kept moves the pending edges on. After the time
limit the cursor is refused with "cursor has expired ... start again from the first page" (``invalid_input``). One
export follows at most ``WALK_LIMIT`` (20,000) nodes over all its pages; the page that reaches it is the last and
says ``truncated``. The cursor itself stays small and signed (``graphmem/cursors.py``): it binds the namespace, a
digest of the seed, caps and requested view (checked again by the record), the walk's record id, the pinned view
time (a current-view export is read ``as of`` the first page's time, which for current data selects exactly the
current versions, forgotten ones still excluded, so later pages see the same versions even if memories change
meanwhile; a node's own fields, such as ``is_latest``, are read as they are stored now), a query seed's resolved
fact ids, the offset and the reachable count. Forgetting is not pinned (forgotten is forgotten): a node forgotten or
hard-deleted between pages is left off its later page, with its edges, and a page may then hold fewer nodes. The
kept walk holds ids only, never text (at most one pending pair per CONTAINS or MENTIONS edge of a fact shown), and
expired records are deleted by the first page that keeps a new walk in each minute (``EXPIRY_SWEEP_MS`` in
``page.py``).

**Formats.** ``export_graph`` returns one type, ``ExportResult``; ``render`` turns a page into GraphML or
a Cypher script (``render.py``).

**Cypher script.** One ``MERGE`` statement per line, on ``{namespace, id}``, into the namespace named
at export time; labels and relationship types come from a fixed allowlist and every value is written by
``cypher_literal``. Ids are globally unique in a graphmem database (unique constraints on ``id``), so the
script loads into another database, or into one where the exported ids are not present any more; in the
database it came from, ``MERGE`` on another namespace would create a second node with a taken id and the
constraint refuses it (the script fails loudly rather than merging into the source). Unavailable
references are not recreated (there is nothing of them to recreate), nor are embeddings, document
content, mention spans, or entity type labels: the copy is the evidence graph, searchable by text;
``graphmem reembed`` restores the vectors.
"""

from graphmem.export.page import QUERY_SEEDS, SeedSearch, cursor_namespace, export_graph
from graphmem.export.render import cypher_literal, render, render_cypher, render_graphml

__all__ = ["QUERY_SEEDS", "SeedSearch", "cursor_namespace", "cypher_literal", "export_graph", "render", "render_cypher",
           "render_graphml"]
