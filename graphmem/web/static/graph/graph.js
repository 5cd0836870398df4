// graphmem's graph page (/graph): draws pages of the bounded evidence-graph export (GET /v1/graph) with
// cytoscape.js. Colours, sizes and captions come from the Neo4j Browser style (/browser/graphmem.grass), so the
// two views agree. The page holds no secret: it asks for a token once and keeps it in this tab's
// sessionStorage. Every text from the graph reaches the page through textContent or cytoscape's canvas labels,
// never as HTML.
"use strict";

const TOKEN_KEY = "graphmem.token";
const LABEL_CHARS = 40;
const EDGE_TYPES = { contains: "CONTAINS", mentions: "MENTIONS", triple: "RELATES", previous_version: "PREVIOUS_VERSION" };
// What the form and the URL carry besides the seed: the caps, the view, the namespace, whether to count.
const OPTIONS = ["depth", "max_nodes", "max_documents", "fanout", "include_superseded", "scope", "count_reachable"];
const OLDER = { color: "#E6E8EC", border: "#B9BEC8" };  // an older version (is_latest false), greyed
const NEGATED = "#D0312D";

// The main export: its request, the next page's cursor, its first page's answer, what the pages added up to.
// `generation` changes with each new main export, so a late answer of an older one is dropped.
const page = { cy: null, grass: null, request: null, cursor: null, first: null, pages: 0, shown: 0, unavailable: 0,
               generation: 0, asking: null };
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
  if (node.kind === "entity") return node.type && page.grass.node[node.type] ? node.type : "Entity";
  return null;  // unavailable: a version outside the view
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
  return {
    group: "edges",
    data: {
      // one fact may state two triples between the same entities: the predicate and negation tell them apart
      id: [edge.kind, edge.source, edge.target, edge.fact_id || "", edge.predicate || "", edge.negated || false]
        .join("|"), source: edge.source,
      target: edge.target, edge, label, color: edge.negated ? NEGATED : rule.color, width: px(rule["shaft-width"], 1),
    },
    classes: [edge.kind, edge.negated ? "negated" : ""].filter(Boolean).join(" "),
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

// A fresh layout for a new export; after "load more" or an expansion the nodes already drawn keep their places
// as the starting point, so the picture moves rather than reshuffles.
function layout(fresh) {
  const many = page.cy.nodes().length > 400;
  page.cy.layout({ name: "cose", animate: false, randomize: fresh, numIter: many ? 250 : 1000,
                   nodeRepulsion: () => 9000, idealEdgeLength: () => 60 }).run();
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

function say() {
  document.getElementById("completeness").textContent = completeness();
  document.getElementById("drawn").textContent =
    `${number(page.cy.nodes().length)} nodes and ${number(page.cy.edges().length)} edges drawn` +
    (page.pages > 1 ? ` from ${page.pages} pages` : "");
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
  list.append(legendItem("triple (predicate)", page.grass.relationship.RELATES.color, null, true));
  list.append(legendItem("negated triple", NEGATED, null, true));
  list.append(legendItem("previous version", page.grass.relationship.PREVIOUS_VERSION.color, null, true));
}

function legendItem(label, color, border, line) {
  const item = document.createElement("li");
  item.dataset.label = label;
  const swatch = document.createElement("span");
  swatch.className = line ? "swatch line" : "swatch";
  swatch.style.background = color;
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
  document.getElementById("details-title").textContent = nodeLabel(node) || "Unavailable version";
  const list = document.getElementById("details-fields");
  list.replaceChildren();
  for (const [name, value] of fields) {
    if (value === null || value === undefined) continue;
    const term = document.createElement("dt");
    term.textContent = name;
    const description = document.createElement("dd");
    const target = name === "memory" ? { memory: value } : name === "id" && node.kind === "entity" ?
      { entity: value } : name === "id" && node.kind === "document" ? { memory: value } : null;
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
  merge(result, null);
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
  if (merge(result, drawn)) layout(false);
  drawn.addClass("expanded");
  say();
}

function start() {
  page.grass = null;
  page.cy = cytoscape({
    container: document.getElementById("graph"),
    style: [
      { selector: "node", style: { "background-color": "data(color)", "border-color": "data(border)", "border-width": 2,
                                   width: "data(size)", height: "data(size)", label: "data(label)", "font-size": 11,
                                   color: "data(textColor)", "text-valign": "bottom", "text-margin-y": 3,
                                   "text-wrap": "ellipsis", "text-max-width": 160 } },
      { selector: "node.fact", style: { label: "", "border-width": 1 } },
      { selector: "node.fact:selected, node.fact.expanded", style: { label: "data(label)" } },
      { selector: "node.older", style: { opacity: 0.6 } },
      { selector: "node.unavailable", style: { "border-style": "dashed", opacity: 0.5 } },
      { selector: "node.expanded", style: { "border-width": 4 } },
      { selector: "node:selected", style: { "border-color": "#2A2C34", "border-width": 4 } },
      { selector: "edge", style: { width: "data(width)", "line-color": "data(color)", "target-arrow-color": "data(color)",
                                   "target-arrow-shape": "triangle", "curve-style": "bezier", "arrow-scale": 0.7,
                                   label: "data(label)", "font-size": 8, "text-rotation": "autorotate",
                                   "text-background-color": "#FFFFFF", "text-background-opacity": 0.8 } },
      { selector: "edge.negated", style: { "line-style": "dashed" } },
      { selector: "edge.previous_version", style: { "line-style": "solid", "arrow-scale": 1 } },
    ],
  });
  page.cy.on("tap", "node", (event) => details(event.target.data("node")));
  page.cy.on("dbltap", "node", (event) => expand(event.target.data("node")).catch(fail));
  document.getElementById("more").onclick = () => loadMore().catch(fail);
  document.getElementById("seed").onsubmit = (event) => {
    event.preventDefault();
    const params = requestFromForm();
    if (params === null) return fail(new Error("Type something to search for."));
    remember(params);
    show(params).catch(fail);
  };
  const current = new URLSearchParams(location.search);
  document.getElementById("query").value = current.get("q") || "";
  for (const key of OPTIONS) {
    const input = document.getElementById(key);
    if (!current.has(key)) continue;
    if (input.type === "checkbox") input.checked = current.get(key) === "true";  // count_reachable: "false" unticks
    else input.value = current.get(key);
  }
  fetch("/browser/graphmem.grass").then((response) => response.text()).then((text) => {
    page.grass = parseGrass(text);
    legend();
    const params = requestFromForm();
    if (params !== null) show(params).catch(fail);
  }).catch(fail);
}

document.addEventListener("DOMContentLoaded", start);
