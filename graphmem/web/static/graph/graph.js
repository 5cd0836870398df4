// graphmem's graph page (/graph): draws pages of the bounded evidence-graph export (GET /v1/graph) with
// cytoscape.js. Colours, sizes and captions come from the Neo4j Browser style (/browser/graphmem.grass), so the
// two views agree. The page holds no secret: it asks for a token once and keeps it in this tab's
// sessionStorage. Every text from the graph reaches the page through textContent or cytoscape's canvas labels,
// never as HTML.
//
// Two views of the same elements. The default folds facts away: a document's facts become one edge per entity
// they mention, labelled with how many of its facts on the page mention it (a short note has a handful of
// facts, each a dot without a caption: folded, the picture shows which memory speaks of what). Clicking a
// document, or one of those edges, shows the facts behind it again. The relations view keeps entities and
// triples only. Every element of the export stays in cytoscape; a view only hides some (class `hidden`).
"use strict";

const TOKEN_KEY = "graphmem.token";
const LABEL_CHARS = 40;
const EDGE_TYPES = { contains: "CONTAINS", mentions: "MENTIONS", triple: "RELATES", previous_version: "PREVIOUS_VERSION" };
// What the form and the URL carry besides the seed: the caps, the view, the namespace, whether to count.
const OPTIONS = ["depth", "max_nodes", "max_documents", "fanout", "include_superseded", "scope", "count_reachable"];
const OLDER = { color: "#E6E8EC", border: "#B9BEC8" };  // an older version (is_latest false), greyed
const NEGATED = "#D0312D";
const ASSERTED = "#7B2CBF";  // a triple an agent stated, apart from the dark grey of triples read from text
const FOLDED = "#9AA1AC";  // document → entity edges standing for folded facts
// Edge and node captions keep at least this size on screen when the picture is zoomed out to fit: below it
// a predicate is not readable. Zoomed in, they grow with the picture.
const EDGE_FONT = 12;
const NODE_FONT = 12;
const MAX_FIT_ZOOM = 1.5;
const LAYOUT_TRIES = 4;
const WORDS = 40;  // characters of an untitled document's first words
const DOUBLE_CLICK_MS = 500;  // two clicks on one node this close are a double-click: the usual desktop default

// The main export: its request, the next page's cursor, its first page's answer, what the pages added up to.
// `generation` changes with each new main export, so a late answer of an older one is dropped.
// `view`: "folded" (the default: facts folded) or "relations"; `open`: documents whose facts are shown; `pairs`: folded
// edges (document|entity) whose facts are shown; `scale`: how much captions are enlarged against the zoom;
// `folded`: the folded view's node positions while the relations view is shown.
const page = { cy: null, grass: null, request: null, cursor: null, first: null, pages: 0, shown: 0, unavailable: 0,
               generation: 0, asking: null, view: "folded", open: new Set(), pairs: new Set(), scale: 1,
               folded: null, styled: null, lastTap: null };  // styled: the Browser style loaded (a promise)
window.graphmem = page;  // for people poking at the page, and for the browser test

// ---- the Browser style, parsed ----------------------------------------------------------------------------

function parseGrass(text) {
  const rules = { node: {}, relationship: {} };
  for (const match of text.matchAll(/(node|relationship)(?:\.([A-Za-z_][A-Za-z0-9_]*))?\s*\{((?:'[^']*'|[^}'])*)\}/g)) {
    const props = {};
    for (const line of match[3].split(";")) {
      const at = line.indexOf(":");
      if (at > 0) props[line.slice(0, at).trim()] = line.slice(at + 1).trim().replace(/^'(.*)'$/, "$1");
    }
    rules[match[1]][match[2] || "*"] = props;
  }
  return rules;
}

function nodeLabel(node) {
  if (node.kind === "document") return "Document";
  if (node.kind === "fact") return "Fact";
  if (node.kind === "entity") return typeLabel(node.type) || "Entity";
  return null;  // unavailable: a version outside the view
}

// The style's label for an entity type; an agent may state "person" for extraction's "Person".
function typeLabel(type) {
  if (!type) return null;
  if (page.grass.node[type]) return type;
  return Object.keys(page.grass.node).find((label) => label !== "*" && label.toLowerCase() === type.toLowerCase()) ||
    null;
}

function nodeRule(label) {
  return { ...page.grass.node["*"], ...(label ? page.grass.node[label] : {}) };
}

function caption(rule, node) {
  const text = (rule.caption || "").replace(/\{(\w+)\}/g, (_, key) => String(node[key] ?? ""));
  return text.length > LABEL_CHARS ? text.slice(0, LABEL_CHARS - 1) + "…" : text;
}

function px(value, fallback) {
  const number = parseFloat(value);
  return Number.isFinite(number) ? number : fallback;
}

// ---- elements -------------------------------------------------------------------------------------------

function nodeElement(node) {
  const label = nodeLabel(node);
  const rule = nodeRule(label);
  const older = node.kind === "document" && node.is_latest === false;
  const classes = [node.kind, older ? "older" : "", node.kind === "unavailable" ? "unavailable" : ""];
  return {
    group: "nodes",
    data: {
      id: node.id, node, legend: label || "unavailable",
      label: node.kind === "unavailable" ? "unavailable version" : caption(rule, node),
      color: older || !label ? OLDER.color : rule.color, border: older || !label ? OLDER.border : rule["border-color"],
      size: px(rule.diameter, 40), textColor: "#2A2C34",
    },
    classes: classes.filter(Boolean).join(" "),
  };
}

function edgeElement(edge) {
  const type = EDGE_TYPES[edge.kind] || edge.kind;
  const rule = { ...page.grass.relationship["*"], ...(page.grass.relationship[type] || {}) };
  const label = edge.kind === "triple" ? (edge.negated ? "not " : "") + (edge.predicate || "") :
    edge.kind === "previous_version" ? rule.caption : "";
  const color = edge.negated ? NEGATED : edge.asserted ? ASSERTED : rule.color;
  return {
    group: "edges",
    data: {
      // one fact may state two triples between the same entities: the predicate and negation tell them apart
      id: [edge.kind, edge.source, edge.target, edge.fact_id || "", edge.predicate || "", edge.negated || false]
        .join("|"), source: edge.source,
      target: edge.target, edge, label, color, width: px(rule["shaft-width"], 1),
    },
    classes: [edge.kind, edge.negated ? "negated" : "",
              edge.kind === "triple" ? (edge.asserted ? "asserted" : "extracted") : ""].filter(Boolean).join(" "),
  };
}

// Adds what is new; new nodes start where `near` is (the expanded node), or at the middle of the view.
function merge(result, near) {
  const at = near ? { ...near.position() } : { x: page.cy.width() / 2, y: page.cy.height() / 2 };
  const fresh = [];
  for (const node of result.nodes) {
    if (page.cy.getElementById(node.id).empty()) fresh.push({ ...nodeElement(node), position: { ...at } });
  }
  page.cy.add(fresh);
  const edges = [];
  for (const edge of result.edges) {
    const element = edgeElement(edge);
    if (page.cy.getElementById(element.data.id).empty() && !page.cy.getElementById(edge.source).empty() &&
        !page.cy.getElementById(edge.target).empty()) edges.push(element);
  }
  page.cy.add(edges);
  return fresh.length + edges.length;
}

// A fresh layout for a new export; after "load more", an expansion or a change of view the nodes already drawn
// keep their places as the starting point, so the picture moves rather than reshuffles. Only what the view
// shows is laid out; facts shown later are placed around their document (`reveal`). A fresh layout of a small
// picture is tried a few times (cose starts from random places, and one start in three or so crowds the
// middle), keeping the one whose nodes stand farthest apart once fitted to the canvas.
function layout(fresh) {
  const shown = page.cy.elements().not(".hidden");
  const count = shown.nodes().length;
  const tries = fresh && count <= 150 ? LAYOUT_TRIES : 1;
  let best = null;
  for (let attempt = 0; attempt < tries; attempt++) {
    runLayout(shown, fresh, count);
    const score = tries > 1 ? spread(shown.nodes()) : 0;
    if (best === null || score > best.score) {
      best = { score, at: tries > 1 ? shown.nodes().map((node) => ({ ...node.position() })) : null };
    }
  }
  if (tries > 1) shown.nodes().forEach((node, i) => { node.position(best.at[i]); });
  page.cy.fit(shown, 24);
  if (page.cy.zoom() > MAX_FIT_ZOOM) {  // a few nodes fitted to the whole canvas would be drawn huge
    page.cy.zoom(MAX_FIT_ZOOM);
    page.cy.center(shown);
  }
  scaleLabels();
}

// Triples are stiffer springs than the folded edges: entities joined by a triple stay close enough for its
// caption, and documents gather around the entities they speak of (chosen by looking at the notes and the
// documents of the browser test).
function runLayout(shown, fresh, count) {
  shown.layout({ name: "cose", animate: false, fit: false, randomize: fresh,
                 numIter: count > 400 ? 250 : count > 150 ? 1000 : 2500,
                 nodeRepulsion: () => 25000, nodeOverlap: 10, gravity: 0.25,
                 idealEdgeLength: (edge) => edge.hasClass("triple") ? 130 : 90,
                 edgeElasticity: (edge) => edge.hasClass("triple") ? 64 : 16 }).run();
}

// How far apart the nodes stand once the picture is fitted to the canvas: the mean distance from each node to
// its nearest one, in canvas pixels at the zoom that fitting would give.
function spread(nodes) {
  const box = nodes.boundingBox();
  const zoom = Math.min(page.cy.width() / Math.max(box.w, 1), page.cy.height() / Math.max(box.h, 1));
  const at = nodes.map((node) => node.position());
  let total = 0;
  for (let i = 0; i < at.length; i++) {
    let nearest = Infinity;
    for (let j = 0; j < at.length; j++) {
      if (i !== j) nearest = Math.min(nearest, Math.hypot(at[i].x - at[j].x, at[i].y - at[j].y));
    }
    total += Number.isFinite(nearest) ? nearest : 0;
  }
  return (total / Math.max(at.length, 1)) * Math.min(zoom, MAX_FIT_ZOOM);
}

// Captions are sized in the picture's units; when fitting zooms out, they are enlarged by as much (up to three
// times), so that they keep EDGE_FONT and NODE_FONT pixels on screen.
function scaleLabels() {
  const scale = Math.min(3, Math.max(1, 1 / page.cy.zoom()));
  if (page.scale >= scale && page.scale - scale < 0.02) return;  // never smaller than needed
  page.scale = scale;
  page.cy.style().update();
}

// ---- folding facts --------------------------------------------------------------------------------------------

// The drawn memory a fact belongs to, or null when its memory is not on the page (such a fact stays
// visible: there is no edge to fold it into).
function documentOf(fact) {
  const memory = page.cy.getElementById(fact.data("node").document_id);
  return memory.nonempty() && memory.hasClass("document") ? memory : null;
}

// One edge per (memory, entity) for the facts of that memory on the page that mention that entity,
// labelled with their number; each memory's caption (its title, else its first words).
function fold() {
  const cy = page.cy;
  const folds = new Map();
  cy.nodes(".fact").forEach((fact) => {
    const memory = documentOf(fact);
    if (memory === null) return;
    fact.outgoers("edge.mentions").forEach((mention) => {
      const key = memory.id() + "|" + mention.target().id();
      if (!folds.has(key)) folds.set(key, { source: memory.id(), target: mention.target().id(), facts: [] });
      folds.get(key).facts.push(fact.id());
    });
  });
  cy.batch(() => {
    for (const [key, { source, target, facts }] of folds) {
      const data = { count: facts.length, facts, label: String(facts.length) };
      const edge = cy.getElementById("folded|" + key);
      if (edge.empty()) {
        cy.add({ group: "edges", data: { id: "folded|" + key, source, target, ...data }, classes: "folded" });
      } else {
        edge.data(data);
      }
    }
    cy.nodes(".document").forEach((memory) => memory.data("label", documentCaption(memory)));
  });
}

// The Browser style's caption ({title}); for a memory without a title, the first words of its first fact on
// the page (after "…" when that is not the memory's first sentence), else its source.
function documentCaption(memory) {
  const node = memory.data("node");
  const titled = caption(nodeRule("Document"), node);
  if (titled) return titled;
  let first = null;
  page.cy.nodes(".fact").forEach((fact) => {
    const candidate = fact.data("node");
    if (candidate.document_id === node.id && candidate.text &&
        (first === null || (candidate.position ?? Infinity) < (first.position ?? Infinity))) first = candidate;
  });
  if (first !== null) return (first.position === 0 ? "" : "…") + firstWords(first.text);
  return node.source ? firstWords(node.source) : "untitled memory";
}

function firstWords(text) {
  const words = text.replace(/\s+/g, " ").trim();
  if (words.length <= WORDS) return words;
  const cut = words.slice(0, WORDS);
  const space = cut.lastIndexOf(" ");
  return (space > WORDS / 2 ? cut.slice(0, space) : cut) + "…";
}

function factShown(fact) {
  const memory = documentOf(fact);
  if (memory === null || page.open.has(memory.id())) return true;
  return fact.outgoers("edge.mentions").targets().some((entity) => page.pairs.has(memory.id() + "|" + entity.id()));
}

// Hides what the view leaves out. Folded: the facts of drawn documents unless their memory or one of their
// folded edges was opened, and the edges of hidden facts; an opened memory's folded edges. Relations:
// everything but triples and the entities they join.
function applyView() {
  const cy = page.cy;
  const hiddenBefore = cy.nodes(".fact.hidden");
  cy.batch(() => {
    cy.elements().removeClass("hidden");
    cy.nodes(".document").forEach((memory) => memory.toggleClass("open", page.open.has(memory.id())));
    if (page.view === "relations") {
      const triples = cy.edges(".triple");
      cy.elements().not(triples).not(triples.connectedNodes()).addClass("hidden");
      return;
    }
    cy.nodes(".fact").forEach((fact) => { if (!factShown(fact)) fact.addClass("hidden"); });
    cy.edges(".contains, .mentions").forEach((edge) => {
      if (edge.source().hasClass("hidden") || edge.target().hasClass("hidden")) edge.addClass("hidden");
    });
    cy.edges(".folded").forEach((edge) => {
      const key = edge.source().id() + "|" + edge.target().id();
      if (page.open.has(edge.source().id()) || page.pairs.has(key)) edge.addClass("hidden");
    });
  });
  return hiddenBefore.not(".hidden");
}

// Facts a click showed again, placed in a ring around their memory (the rest of the picture stays put).
function reveal(facts) {
  const byDocument = new Map();
  facts.forEach((fact) => {
    const memory = documentOf(fact);
    if (memory === null) return;
    if (!byDocument.has(memory.id())) byDocument.set(memory.id(), []);
    byDocument.get(memory.id()).push(fact);
  });
  for (const [id, members] of byDocument) {
    const at = page.cy.getElementById(id).position();
    const radius = 55 + 6 * members.length;
    members.forEach((fact, i) => {
      const angle = (2 * Math.PI * i) / members.length - Math.PI / 2;
      fact.position({ x: at.x + radius * Math.cos(angle), y: at.y + radius * Math.sin(angle) });
    });
  }
}

function refold() {
  fold();
  reveal(applyView());
  say();
}

// A click on a memory shows its facts, a second one folds them again.
function toggleDocument(memory) {
  if (page.view === "relations") return;
  const id = memory.id();
  if (page.open.has(id)) {
    page.open.delete(id);
    for (const key of [...page.pairs]) if (key.startsWith(id + "|")) page.pairs.delete(key);
  } else {
    page.open.add(id);
  }
  refold();
}

// A click on a folded edge shows the facts behind it (its memory's facts that mention its entity).
function openFolded(edge) {
  page.pairs.add(edge.source().id() + "|" + edge.target().id());
  refold();
}

// Relations are laid out afresh (the folded view's places crowd them: documents held them apart); the folded
// view's places are kept meanwhile and come back with it.
function setView(view) {
  const leaving = page.view;
  page.view = view;
  const button = document.getElementById("relations");
  button.setAttribute("aria-pressed", String(view === "relations"));
  const url = new URLSearchParams(location.search);
  if (view === "relations") url.set("view", "relations");
  else url.delete("view");
  history.replaceState(null, "", "?" + url.toString());
  if (!page.first || leaving === view) return;
  if (view === "relations") {
    page.folded = new Map(page.cy.nodes().map((node) => [node.id(), { ...node.position() }]));
  }
  applyView();
  const kept = view === "relations" ? null : page.folded;
  const shown = page.cy.nodes().not(".hidden");
  if (kept && shown.every((node) => kept.has(node.id()))) {
    shown.forEach((node) => { node.position(kept.get(node.id())); });
    page.cy.fit(shown, 24);
    scaleLabels();
  } else {
    layout(view === "relations");
  }
  say();
}

// ---- the token ---------------------------------------------------------------------------------------------

// One question at a time: requests that need a token while it is being asked for wait for the same answer.
function askToken(reason) {
  if (reason) document.getElementById("token-reason").textContent = reason;
  if (page.asking) return page.asking;
  const dialog = document.getElementById("token");
  dialog.hidden = false;
  document.getElementById("token-input").focus();
  page.asking = new Promise((resolve) => {
    document.getElementById("token-form").onsubmit = (event) => {
      event.preventDefault();
      const value = document.getElementById("token-input").value.trim();
      if (!value) return;
      sessionStorage.setItem(TOKEN_KEY, value);
      document.getElementById("token-input").value = "";
      dialog.hidden = true;
      page.asking = null;
      resolve(value);
    };
  });
  return page.asking;
}

async function token() {
  return sessionStorage.getItem(TOKEN_KEY) || askToken();
}

// ---- the API ---------------------------------------------------------------------------------------------

async function exportPage(params) {
  for (;;) {
    const sent = await token();
    const response = await fetch("/v1/graph?" + params.toString(),
                                 { headers: { Authorization: "Bearer " + sent, Accept: "application/json" } });
    if (response.status === 401) {
      if (sessionStorage.getItem(TOKEN_KEY) === sent) sessionStorage.removeItem(TOKEN_KEY);
      await askToken("That token was refused. Paste a token that can read this namespace.");
      continue;
    }
    const body = await response.json();
    if (!response.ok) throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : response.statusText);
    return body;
  }
}

function requestFromForm() {
  const form = new FormData(document.getElementById("seed"));
  const params = new URLSearchParams();
  const current = new URLSearchParams(location.search);
  const query = (form.get("q") || "").trim();
  if (query) {
    params.set("seed", "query");
    params.set("query", query);
  } else if (current.get("memory")) {
    params.set("seed", "document");
    params.set("id", current.get("memory"));
  } else if (current.get("entity")) {
    params.set("seed", "entity");
    params.set("id", current.get("entity"));
  } else {
    return null;
  }
  for (const key of OPTIONS) if ((form.get(key) || "").trim()) params.set(key, form.get(key).trim());
  if (!document.getElementById("count_reachable").checked) params.set("count_reachable", "false");
  return params;
}

function remember(params) {
  const url = new URLSearchParams();
  if (params.get("seed") === "query") url.set("q", params.get("query"));
  else url.set(params.get("seed") === "document" ? "memory" : "entity", params.get("id"));
  for (const key of OPTIONS) if (params.has(key)) url.set(key, params.get(key));
  if (page.view === "relations") url.set("view", "relations");
  history.replaceState(null, "", "?" + url.toString());
}

// ---- what the page says ------------------------------------------------------------------------------------

function number(value) {
  return value.toLocaleString("en-US");
}

// One line for the main export, however many pages are loaded: documents shown over documents reachable.
// The first page's `truncated` is the API's word. Later pages always say truncated (they are not the first),
// so once several are loaded the line says truncated while a page is left, or while fewer documents are shown
// than are reachable, or when the first page was cut by the fan-out cap alone (no next page, yet truncated).
function completeness() {
  const first = page.first;
  const fanoutCut = first.truncated && first.next_cursor === null;
  const counted = first.reachableDocuments !== null;
  const truncated = page.pages === 1 ? first.truncated :
    page.cursor !== null || (counted && page.shown < first.reachableDocuments) || fanoutCut;
  if (!counted) {
    return `showing ${number(page.shown)} documents (reachable not counted)${truncated ? ", truncated" : ""}` +
      (page.unavailable ? ` (${number(page.unavailable)} unavailable)` : "");
  }
  const reachable = Math.max(page.shown, first.reachableDocuments);
  const bound = first.coverage_is_upper_bound && page.shown < first.reachableDocuments ? "at least " : "";
  let line = `showing ${number(page.shown)} of ${bound}${number(reachable)} documents${truncated ? ", truncated" : ""}`;
  if (page.unavailable) line += ` (${number(page.unavailable)} unavailable)`;
  return line;
}

function plural(count, one, many) {
  return `${number(count)} ${count === 1 ? one : many}`;
}

// The export's own nodes and edges (the folded edges are the page's), then what the view shows of them.
function say() {
  const cy = page.cy;
  document.getElementById("completeness").textContent = completeness();
  document.getElementById("drawn").textContent =
    `${number(cy.nodes().length)} nodes and ${number(cy.edges().not(".folded").length)} edges drawn` +
    (page.pages > 1 ? ` from ${page.pages} pages` : "");
  const folded = cy.nodes(".fact.hidden").length;
  document.getElementById("view-line").textContent = page.view === "relations" ?
    `Relations: ${plural(cy.nodes(".entity").not(".hidden").length, "entity", "entities")} and ` +
      `${plural(cy.edges(".triple").length, "triple", "triples")}; documents and facts hidden` :
    `${plural(folded, "fact", "facts")} folded into ${plural(cy.edges(".folded").not(".hidden").length,
      "document → entity edge", "document → entity edges")}`;
  document.getElementById("more").disabled = page.cursor === null;
  document.getElementById("error").hidden = true;
  legend();
}

function fail(error) {
  const box = document.getElementById("error");
  box.textContent = error.message;
  box.hidden = false;
}

function legend() {
  const list = document.getElementById("legend");
  list.replaceChildren();
  const present = new Set(page.cy.nodes().map((n) => n.data("legend")));
  for (const label of ["Document", "Fact", "Entity", ...Object.keys(page.grass.node)]) {
    if (label === "*" || label === "Chunk" || label === "Handoff" || list.querySelector(`[data-label="${label}"]`)) continue;
    if (!["Document", "Fact", "Entity"].includes(label) && !present.has(label)) continue;
    list.append(legendItem(label, page.grass.node[label].color, page.grass.node[label]["border-color"], false));
  }
  list.append(legendItem("older version", OLDER.color, OLDER.border, false));
  list.append(legendItem("document → entity: how many of its facts mention it", FOLDED, null, true));
  list.append(legendItem("triple read from text (dashed)", page.grass.relationship.RELATES.color, null, "dashed"));
  list.append(legendItem("triple asserted by an agent (solid)", ASSERTED, null, true));
  list.append(legendItem("negated triple (\"not\")", NEGATED, null, "dashed"));
  list.append(legendItem("previous version", page.grass.relationship.PREVIOUS_VERSION.color, null, true));
}

// `line`: false for a node's swatch, true for a solid line, "dashed" for a dashed one.
function legendItem(label, color, border, line) {
  const item = document.createElement("li");
  item.dataset.label = label;
  const swatch = document.createElement("span");
  swatch.className = ["swatch", line ? "line" : "", line === "dashed" ? "dashed" : ""].filter(Boolean).join(" ");
  if (line === "dashed") swatch.style.borderTopColor = color;
  else swatch.style.background = color;
  if (border) swatch.style.borderColor = border;
  item.append(swatch, document.createTextNode(label));
  return item;
}

function details(node) {
  const fields = [
    ["kind", node.type ? `${node.kind} (${node.type})` : node.kind], ["id", node.id], ["title", node.title],
    ["text", node.text], ["name", node.name], ["source", node.source], ["version", node.version],
    ["latest", node.is_latest], ["recorded", when(node.recorded_at)], ["superseded", when(node.superseded_at)],
    ["memory", node.document_id], ["span", node.start != null ? `${node.start}–${node.end}` : null],
    ["depth", node.depth],
  ];
  if (node.kind === "document" && page.view !== "relations") {
    const facts = page.cy.nodes(".fact").filter((fact) => fact.data("node").document_id === node.id).length;
    fields.push(["facts", `${number(facts)} on the page, ${page.open.has(node.id) ? "shown" : "folded"}`]);
  }
  const link = (name, value) => name === "memory" ? { memory: value } : name === "id" && node.kind === "entity" ?
    { entity: value } : name === "id" && node.kind === "document" ? { memory: value } : null;
  fill(nodeLabel(node) || "Unavailable version", fields, link);
}

// A triple: what it says and where it comes from; a folded edge: which facts it stands for.
function edgeDetails(edge) {
  const source = edge.source().data("node");
  const target = edge.target().data("node");
  if (edge.hasClass("folded")) {
    fill("Facts of a memory about an entity", [["memory", source.id], ["entity", target.name],
                                               ["facts", edge.data("count")]],
         (name, value) => name === "memory" ? { memory: value } : null);
    return;
  }
  const triple = edge.data("edge");
  fill("Triple", [["subject", source.name], ["predicate", (triple.negated ? "not " : "") + triple.predicate],
                  ["object", target.name], ["origin", triple.asserted ? "asserted by an agent" : "read from text"],
                  ["fact", triple.fact_id],
                  ["evidence", page.cy.getElementById(triple.fact_id).data("node")?.text]], () => null);
}

// The details panel: `link(name, value)` gives the URL parameters of a field that opens another export.
function fill(title, fields, link) {
  document.getElementById("details-title").textContent = title;
  const list = document.getElementById("details-fields");
  list.replaceChildren();
  for (const [name, value] of fields) {
    if (value === null || value === undefined) continue;
    const term = document.createElement("dt");
    term.textContent = name;
    const description = document.createElement("dd");
    const target = link(name, value);
    if (target) {  // the same namespace, caps and view as the export on the page
      const link = document.createElement("a");
      const options = new URLSearchParams(target);
      for (const key of OPTIONS) if (page.request && page.request.has(key)) options.set(key, page.request.get(key));
      link.href = "?" + options.toString();
      link.textContent = String(value);
      description.append(link);
    } else {
      description.textContent = String(value);
    }
    list.append(term, description);
  }
  document.getElementById("details").hidden = false;
}

function when(millis) {
  return millis === null || millis === undefined ? null : new Date(millis).toISOString();
}

// ---- actions ----------------------------------------------------------------------------------------------

async function show(params) {
  const generation = ++page.generation;
  const result = await exportPage(params);
  if (generation !== page.generation) return;  // a newer export was asked for meanwhile
  Object.assign(page, { request: params, cursor: result.next_cursor, first: result, pages: 1,
                        shown: result.totalDocuments, unavailable: result.unavailableDocuments });
  page.cy.elements().remove();
  page.folded = null;
  page.open.clear();
  page.pairs.clear();
  merge(result, null);
  fold();
  applyView();
  layout(true);
  say();
}

async function loadMore() {
  if (page.cursor === null) return;
  const generation = page.generation;
  const params = new URLSearchParams(page.request);
  params.set("cursor", page.cursor);
  const result = await exportPage(params);
  if (generation !== page.generation) return;
  page.cursor = result.next_cursor;
  page.shown += result.totalDocuments;
  page.unavailable += result.unavailableDocuments;
  page.pages += 1;
  merge(result, null);
  fold();
  applyView();
  layout(false);
  say();
}

// Double-click: a depth-1 export around the node, merged in; the completeness line keeps describing the main one.
async function expand(node) {
  if (!page.request || node.kind === "unavailable") return;
  const params = new URLSearchParams();
  if (node.kind === "fact") {
    params.set("seed", "ids");
    params.set("ids", node.id);
  } else {
    params.set("seed", node.kind);
    params.set("id", node.id);
  }
  params.set("depth", "1");
  params.set("count_reachable", "false");  // the line describes the main export; the expansion is not counted
  for (const key of OPTIONS) {
    if (!["depth", "count_reachable"].includes(key) && page.request.has(key)) params.set(key, page.request.get(key));
  }
  const generation = page.generation;
  const result = await exportPage(params);
  if (generation !== page.generation) return;
  const drawn = page.cy.getElementById(node.id);
  if (merge(result, drawn)) {
    fold();
    applyView();
    layout(false);
  }
  drawn.addClass("expanded");
  say();
}

function start() {
  page.grass = null;
  page.cy = cytoscape({
    container: document.getElementById("graph"),
    style: [
      { selector: "node", style: { "background-color": "data(color)", "border-color": "data(border)", "border-width": 2,
                                   width: "data(size)", height: "data(size)", label: "data(label)",
                                   "font-size": () => NODE_FONT * page.scale, color: "data(textColor)",
                                   "text-valign": "bottom", "text-margin-y": 3, "text-wrap": "ellipsis",
                                   "text-max-width": () => 220 * page.scale, "text-background-color": "#FFFFFF",
                                   "text-background-opacity": 0.7, "text-background-padding": 1 } },
      { selector: "node.document", style: { "font-weight": "bold" } },
      { selector: "node.document.open", style: { "border-style": "double", "border-width": 6 } },
      { selector: "node.fact", style: { label: "", "border-width": 1 } },
      { selector: "node.fact:selected, node.fact.expanded", style: { label: "data(label)" } },
      { selector: "node.older", style: { opacity: 0.6 } },
      { selector: "node.unavailable", style: { "border-style": "dashed", opacity: 0.5 } },
      { selector: "node.expanded", style: { "border-width": 4 } },
      { selector: "node:selected", style: { "border-color": "#2A2C34", "border-width": 4 } },
      { selector: "edge", style: { width: "data(width)", "line-color": "data(color)", "target-arrow-color": "data(color)",
                                   "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.8,
                                   label: "data(label)", "font-size": () => EDGE_FONT * page.scale,
                                   "text-rotation": "autorotate", color: "#2A2C34", "text-background-color": "#FFFFFF",
                                   "text-background-opacity": 0.85, "text-background-padding": 2 } },
      { selector: "edge.triple", style: { width: 2, "line-style": "dashed", "line-dash-pattern": [7, 4],
                                          "font-weight": "bold", "control-point-step-size": 70 } },
      { selector: "edge.asserted", style: { width: 3, "line-style": "solid", color: ASSERTED } },
      { selector: "edge.negated", style: { color: NEGATED } },
      { selector: "edge.folded", style: { "line-color": FOLDED, "target-arrow-color": FOLDED, color: "#4A4F5C",
                                          width: (edge) => Math.min(6, 1.5 + edge.data("count")) } },
      { selector: "edge.previous_version", style: { "line-style": "solid", "arrow-scale": 1 } },
      { selector: ".hidden", style: { display: "none" } },
    ],
  });
  page.cy.on("tap", "node", (event) => {
    if (event.target.hasClass("document")) toggleDocument(event.target);
    details(event.target.data("node"));
  });
  page.cy.on("tap", "edge.folded", (event) => {
    edgeDetails(event.target);
    openFolded(event.target);
  });
  page.cy.on("tap", "edge.triple", (event) => edgeDetails(event.target));
  page.cy.on("zoom", scaleLabels);
  document.getElementById("relations").onclick = () =>
    setView(page.view === "relations" ? "folded" : "relations");
  // a double-click is two clicks on one node within DOUBLE_CLICK_MS; cytoscape's own dbltap pairs any two taps,
  // even on two elements (a click on a document and a quick one on a fact it showed would expand the fact)
  page.cy.on("tap", (event) => {
    const last = page.lastTap;
    const node = event.target !== page.cy && event.target.isNode() ? event.target : null;
    page.lastTap = { node, at: event.timeStamp };
    if (node && last && last.node === node && event.timeStamp - last.at <= DOUBLE_CLICK_MS) {
      page.lastTap = null;  // a third click starts anew
      expand(node.data("node")).catch(fail);
    }
  });
  document.getElementById("more").onclick = () => loadMore().catch(fail);
  document.getElementById("seed").onsubmit = (event) => {
    event.preventDefault();
    const params = requestFromForm();
    if (params === null) return fail(new Error("Type something to search for."));
    remember(params);
    page.styled.then(() => show(params)).catch(fail);
  };
  const current = new URLSearchParams(location.search);
  document.getElementById("query").value = current.get("q") || "";
  if (current.get("view") === "relations") setView("relations");
  for (const key of OPTIONS) {
    const input = document.getElementById(key);
    if (!current.has(key)) continue;
    if (input.type === "checkbox") input.checked = current.get(key) === "true";  // count_reachable: "false" unticks
    else input.value = current.get(key);
  }
  // What the URL asks for is read now: a search typed while the style loads is the user's, run on submit.
  const initial = requestFromForm();
  page.styled = fetch("/browser/graphmem.grass").then((response) => response.text()).then((text) => {
    page.grass = parseGrass(text);
    legend();
  });
  page.styled.then(() => { if (initial !== null) return show(initial); }).catch(fail);
}

document.addEventListener("DOMContentLoaded", start);
