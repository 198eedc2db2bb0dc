// The question page: asks /v1/answer (streamed: each step shows in a timeline as it
// runs) and draws the evidence as an SVG graph.
// Graph text is untrusted: it is only ever set through textContent, never as HTML.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

function headers() {
  const found = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) found.Authorization = "Bearer " + key;
  return found;
}

async function getJson(url, options) {
  const response = await fetch(url, options);
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const message = body.message || (body.error && body.error.message) || response.statusText;
    throw new Error(`${response.status}: ${message}${body.hint ? " (" + body.hint + ")" : ""}`);
  }
  return body;
}

function fillSelect(select, items, chosen) {
  select.replaceChildren();
  for (const item of items) {
    const option = document.createElement("option");
    option.value = item.value;
    option.textContent = item.label;
    option.selected = item.value === chosen;
    select.append(option);
  }
}

async function loadChoices() {
  try {
    const models = await getJson("/v1/models", { headers: headers() });
    const methods = models.data.filter((m) => m.id.startsWith("kgmw-"));
    fillSelect($("method"), methods.map((m) => ({ value: m.id.slice(5), label: m.id.slice(5) })), "rok");
    const sources = await getJson("/v1/sources", { headers: headers() });
    fillSelect($("source"), sources.sources.map((s) => ({ value: s.name, label: `${s.name} (${s.kind})` })), sources.default);
    setStatus("");
  } catch (err) {
    setStatus("Could not list methods and sources: " + err.message, true);
  }
}

function setStatus(text, isError = false) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  if (!$("method").value) await loadChoices();
  const payload = { question };
  if ($("method").value) payload.method = $("method").value;
  if ($("source").value) payload.sources = [$("source").value];
  $("ask").disabled = true;
  $("timeline").replaceChildren();
  $("timeline").hidden = false;
  setStatus("Working…");
  const started = performance.now();
  try {
    const answer = await streamAnswer(payload);
    show(answer, (performance.now() - started) / 1000);
    setStatus("");
  } catch (err) {
    setStatus(err.message, true);
  } finally {
    $("ask").disabled = false;
  }
}

// POST /v1/answer?stream=true and read its server-sent events: step events update the
// timeline, then "answer" carries the Answer; "error" ends the stream with a failure.
async function streamAnswer(payload) {
  const response = await fetch("/v1/answer?stream=true", { method: "POST", headers: headers(), body: JSON.stringify(payload) });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new Error(`${response.status}: ${body.message || response.statusText}${body.hint ? " (" + body.hint + ")" : ""}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "", answer = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const name = (block.match(/^event: (.*)$/m) || [])[1];
      const data = (block.match(/^data: (.*)$/m) || [])[1];
      if (!name || data === undefined) continue;  // a keep-alive comment
      const body = JSON.parse(data);
      if (name === "step") timeline(body);
      else if (name === "answer") answer = body;
      else if (name === "error") throw new Error(`${body.status}: ${body.message}${body.hint ? " (" + body.hint + ")" : ""}`);
    }
  }
  if (!answer) throw new Error("the answer stream ended without an answer");
  return answer;
}

// One line per step: "running" while it runs, its LLM calls as they happen, then its cost.
function timeline(event) {
  const id = "step-" + event.index;
  let line = document.getElementById(id);
  if (!line) {
    line = item("li", "");
    line.id = id;
    $("timeline").append(line);
  }
  if (event.kind === "start") {
    line.className = "running";
    line.textContent = event.step + " …";
  } else if (event.kind === "llm") {
    const bound = event.most === null ? "" : ` of at most ${event.most}`;
    line.replaceChildren(event.step + " … ", item("span", `LLM call ${event.call}${bound}`));
    line.lastChild.className = "calls";
  } else {
    line.className = event.failed ? "failed" : "";
    const calls = `${event.llm_calls} LLM call${event.llm_calls === 1 ? "" : "s"}, ${event.sparql_queries} SPARQL`;
    line.replaceChildren(`${event.step} ${event.failed ? "failed" : "done"} `, item("span", `(${event.seconds.toFixed(2)} s, ${calls})`));
    line.lastChild.className = "calls";
  }
}

function show(answer, seconds) {
  $("result").hidden = false;
  $("answer").textContent = answer.answer || "(no answer)";
  const entities = answer.entities.map((e) => e.label || e.iri).join(", ");
  $("grounding").textContent = `${answer.method} · grounding: ${answer.grounding}` + (entities ? ` · entities: ${entities}` : "");
  $("warnings").replaceChildren(...answer.warnings.map((w) => item("li", w)));
  const lines = [
    ...answer.evidence.paths.map((p) => `${p.text} (${p.source || "graph"})`),
    ...answer.evidence.triples.map((t) => `${t.text} (${t.source || "graph"}, ${t.role})`),
  ];
  $("evidence").replaceChildren(...lines.map((line) => item("li", line)));
  const u = answer.usage;
  const rows = [
    ["LLM calls", u.llm_calls + (u.cache_hits ? ` (${u.cache_hits} from cache)` : "")],
    ["Tokens", `${u.prompt_tokens} prompt + ${u.completion_tokens} completion`],
    ["SPARQL queries", u.sparql_queries],
    ["Seconds", `${u.seconds.toFixed(2)} in the method, ${seconds.toFixed(2)} in all`],
  ];
  $("usage").tBodies[0].replaceChildren(...rows.map(([k, v]) => {
    const tr = document.createElement("tr");
    tr.append(item("td", k), item("td", String(v)));
    return tr;
  }));
  draw($("graph"), answer.evidence_graph || { nodes: [], edges: [] });
}

function item(tag, text) {
  const element = document.createElement(tag);
  element.textContent = text;
  return element;
}

// A small force layout: springs along edges, repulsion between nodes, fixed seed.
function layout(nodes, edges, width, height) {
  const pos = new Map();
  nodes.forEach((n, i) => {
    const angle = (2 * Math.PI * i) / Math.max(nodes.length, 1);
    pos.set(n.id, { x: width / 2 + (width / 3) * Math.cos(angle), y: height / 2 + (height / 3) * Math.sin(angle) });
  });
  const ideal = Math.min(180, Math.max(90, Math.sqrt((width * height) / Math.max(nodes.length, 1)) * 0.7));
  for (let step = 0; step < 300; step++) {
    const force = new Map(nodes.map((n) => [n.id, { x: 0, y: 0 }]));
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) {
        const a = pos.get(nodes[i].id), b = pos.get(nodes[j].id);
        let dx = a.x - b.x, dy = a.y - b.y;
        const d2 = Math.max(dx * dx + dy * dy, 1);
        const push = (ideal * ideal) / d2;
        dx *= push; dy *= push;
        force.get(nodes[i].id).x += dx; force.get(nodes[i].id).y += dy;
        force.get(nodes[j].id).x -= dx; force.get(nodes[j].id).y -= dy;
      }
    }
    for (const e of edges) {
      const a = pos.get(e.source), b = pos.get(e.target);
      if (!a || !b || a === b) continue;
      const dx = b.x - a.x, dy = b.y - a.y;
      const d = Math.max(Math.hypot(dx, dy), 1);
      const pull = (d - ideal) / d * 0.5;
      force.get(e.source).x += dx * pull; force.get(e.source).y += dy * pull;
      force.get(e.target).x -= dx * pull; force.get(e.target).y -= dy * pull;
    }
    const cool = 0.1 * (1 - step / 300);
    for (const n of nodes) {
      const p = pos.get(n.id), f = force.get(n.id);
      p.x += Math.max(-20, Math.min(20, f.x * cool)) + (width / 2 - p.x) * 0.01;
      p.y += Math.max(-20, Math.min(20, f.y * cool)) + (height / 2 - p.y) * 0.01;
    }
  }
  return pos;
}

function draw(svg, graph) {
  svg.replaceChildren();
  const width = 960, height = 460;
  if (!graph.nodes.length) {
    const note = svg.appendChild(document.createElementNS(SVG_NS, "text"));
    note.setAttribute("x", 20); note.setAttribute("y", 30);
    note.textContent = "No graph evidence for this answer.";
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    return;
  }
  const pos = layout(graph.nodes, graph.edges, width, height);
  const xs = [...pos.values()].map((p) => p.x), ys = [...pos.values()].map((p) => p.y);
  const pad = 90;
  const minX = Math.min(...xs) - pad, minY = Math.min(...ys) - pad / 2;
  const w = Math.max(...xs) - minX + pad, h = Math.max(...ys) - minY + pad / 2;
  svg.setAttribute("viewBox", `${minX} ${minY} ${w} ${h}`);
  const defs = svg.appendChild(document.createElementNS(SVG_NS, "defs"));
  const marker = defs.appendChild(document.createElementNS(SVG_NS, "marker"));
  for (const [k, v] of Object.entries({ id: "arrow", viewBox: "0 0 10 10", refX: "22", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" })) marker.setAttribute(k, v);
  const tip = marker.appendChild(document.createElementNS(SVG_NS, "path"));
  tip.setAttribute("d", "M 0 0 L 10 5 L 0 10 z");
  tip.setAttribute("fill", "#8a93a6");
  const pairs = new Map();
  for (const edge of graph.edges) {
    const a = pos.get(edge.source), b = pos.get(edge.target);
    if (!a || !b) continue;
    const key = [edge.source, edge.target].sort().join("|");
    const nth = pairs.get(key) || 0;
    pairs.set(key, nth + 1);
    const g = svg.appendChild(document.createElementNS(SVG_NS, "g"));
    g.setAttribute("class", "edge " + (edge.role === "path" ? "path" : "fact"));
    const line = g.appendChild(document.createElementNS(SVG_NS, "line"));
    line.setAttribute("x1", a.x); line.setAttribute("y1", a.y);
    line.setAttribute("x2", b.x); line.setAttribute("y2", b.y);
    line.setAttribute("marker-end", "url(#arrow)");
    const label = g.appendChild(document.createElementNS(SVG_NS, "text"));
    label.setAttribute("x", (a.x + b.x) / 2);
    label.setAttribute("y", (a.y + b.y) / 2 - 4 + nth * 13);
    label.setAttribute("text-anchor", "middle");
    label.textContent = edge.label;
  }
  for (const node of graph.nodes) {
    const p = pos.get(node.id);
    const g = svg.appendChild(document.createElementNS(SVG_NS, "g"));
    g.setAttribute("class", "node " + node.kind + (node.answer ? " answer" : ""));
    g.setAttribute("data-id", node.id);
    const title = g.appendChild(document.createElementNS(SVG_NS, "title"));
    title.textContent = node.id;
    const circle = g.appendChild(document.createElementNS(SVG_NS, "circle"));
    circle.setAttribute("cx", p.x); circle.setAttribute("cy", p.y); circle.setAttribute("r", node.answer ? 13 : 10);
    const text = g.appendChild(document.createElementNS(SVG_NS, "text"));
    text.setAttribute("x", p.x); text.setAttribute("y", p.y - 16);
    text.setAttribute("text-anchor", "middle");
    text.textContent = node.label.length > 40 ? node.label.slice(0, 39) + "…" : node.label;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("ask-form").addEventListener("submit", ask);
  $("api-key").addEventListener("change", loadChoices);
  loadChoices();
});
