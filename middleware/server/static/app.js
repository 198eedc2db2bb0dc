// The question page: asks /v1/answer (streamed: each step shows in a timeline as it
// runs), shows the answer (or that the graph does not hold it, with the withheld guess
// beneath as such), the chains of evidence that support it, its usage and evidence, and
// draws the evidence graph (graph.js). The question, method and source are in the URL
// (/?q=...&method=...), so a page can be shared and reloaded: loading such a URL asks
// the question.
// Graph and answer text is untrusted: it is only ever set through textContent.
"use strict";

const $ = (id) => document.getElementById(id);
let jsonUrl = null;

function headers() {
  const found = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) found.Authorization = "Bearer " + key;
  return found;
}

function failure(status, body, fallback) {
  const message = body.message || (body.error && body.error.message) || fallback;
  return new Error(`${status}: ${message}${body.hint ? " (" + body.hint + ")" : ""}`);
}

async function getJson(url, options) {
  const response = await fetch(url, options);
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw failure(response.status, body, response.statusText);
  return body;
}

function fillSelect(select, items, chosen) {
  select.replaceChildren();
  for (const entry of items) {
    const option = item("option", entry.label);
    option.value = entry.value;
    option.title = entry.title || "";
    option.selected = entry.value === chosen;
    select.append(option);
  }
}

// The methods are the models /v1/models lists as kgmw-NAME; "rok" is picked first.
async function loadChoices() {
  try {
    const models = await getJson("/v1/models", { headers: headers() });
    const methods = models.data.filter((m) => m.id.startsWith("kgmw-"));
    fillSelect($("method"), methods.map((m) => ({ value: m.id.slice(5), label: m.id.slice(5), title: m.description })), "rok");
    const sources = await getJson("/v1/sources", { headers: headers() });
    fillSelect($("source"), sources.sources.map((s) => ({ value: s.name, label: `${s.name} (${s.kind})` })), sources.default);
    setStatus("");
    return true;
  } catch (err) {
    setStatus("Could not list methods and sources: " + err.message, true);
    return false;
  }
}

function setStatus(text, isError = false) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function choose(select, value) {
  if (!value) return true;
  if (![...select.options].some((o) => o.value === value)) return false;
  select.value = value;
  return true;
}

// Fill the form from the URL and ask, when the URL holds a question.
async function askFromUrl() {
  const params = new URLSearchParams(location.search);
  const question = params.get("q");
  if (!question) return;
  $("question").value = question;
  for (const name of ["method", "source"]) {
    if (!choose($(name), params.get(name))) {
      setStatus(`The URL names ${name} "${params.get(name)}", which this service does not offer; pick one and ask.`, true);
      return;
    }
  }
  await ask();
}

async function submit(event) {
  event.preventDefault();
  const params = new URLSearchParams({ q: $("question").value.trim() });
  if ($("method").value) params.set("method", $("method").value);
  if ($("source").value) params.set("source", $("source").value);
  if (location.search !== "?" + params) history.pushState(null, "", "?" + params);
  await ask();
}

async function ask() {
  const question = $("question").value.trim();
  if (!question) return;
  if (!$("method").value && !(await loadChoices())) return;
  const payload = { question };
  if ($("method").value) payload.method = $("method").value;
  if ($("source").value) payload.sources = [$("source").value];
  $("ask").disabled = true;
  for (const id of ["result", "graph-box", "evidence-box"]) $(id).hidden = true;
  $("timeline").replaceChildren();
  $("steps").hidden = false;
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
  if (!response.ok) throw failure(response.status, await response.json().catch(() => ({})), response.statusText);
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
      else if (name === "error") throw failure(body.status, body, "the answer failed");
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
    line.replaceChildren(event.step + " … ", item("span", `LLM call ${event.call}${bound}`, "calls"));
  } else {
    line.className = event.failed ? "failed" : "";
    const calls = `${event.llm_calls} LLM call${event.llm_calls === 1 ? "" : "s"}, ${event.sparql_queries} SPARQL`;
    line.replaceChildren(`${event.step} ${event.failed ? "failed" : "done"} `, item("span", `(${event.seconds.toFixed(2)} s, ${calls})`, "calls"));
  }
}

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

function usageLine(u, seconds) {
  const cached = u.cache_hits ? ` (${u.cache_hits} from cache)` : "";
  const tokens = `${u.prompt_tokens + u.completion_tokens} tokens (${u.prompt_tokens} prompt + ${u.completion_tokens} completion)`;
  return [plural(u.llm_calls, "LLM call") + cached, tokens, `${u.sparql_queries} SPARQL quer${u.sparql_queries === 1 ? "y" : "ies"}`,
    `${u.seconds.toFixed(2)} s in the method, ${seconds.toFixed(2)} s in all`].join(" · ");
}

// A number as Python's "{:g}" writes it: 0.2, 1, 0.666667.
function number(value) {
  return String(Number(value.toPrecision(6)));
}

// The answer, or that the graph does not hold it ("answer" is null, "found" false); the
// guess the answer policy withheld is a secondary line that says it is not supported.
function showAnswer(answer) {
  const found = answer.found !== false && answer.answer !== null;
  $("answer").textContent = found ? answer.answer || "(no answer)" : "The graph does not hold the answer.";
  $("answer").className = found ? "" : "not-found";
  const guess = found ? null : answer.guess;
  $("guess").textContent = guess ? `Best guess (not supported by the graph): ${guess.answer}, confidence ${number(guess.confidence)}` : "";
  $("guess").hidden = !guess;
  const support = answer.support || [];
  $("support").replaceChildren(...support.map((c) => item("li", c.text + (c.weak_link ? ` (weak link: ${c.weak_link})` : ""))));
  $("support-box").hidden = !support.length;
  const entities = answer.entities.map((e) => e.label || e.iri).join(", ");
  const backing = found ? ` · confidence ${number(answer.confidence)}` + (answer.grounded ? "" : " · not grounded in the graph") : "";
  $("grounding").textContent = `${answer.method} · grounding: ${answer.grounding}${backing}` + (entities ? ` · entities: ${entities}` : "");
}

function show(answer, seconds) {
  $("result").hidden = false;
  showAnswer(answer);
  $("warnings").replaceChildren(...answer.warnings.map((w) => item("li", w)));
  $("usage").textContent = usageLine(answer.usage, seconds);
  if (jsonUrl) URL.revokeObjectURL(jsonUrl);
  jsonUrl = URL.createObjectURL(new Blob([JSON.stringify(answer, null, 2)], { type: "application/json" }));
  $("answer-json").href = jsonUrl;
  const lines = [
    ...answer.evidence.paths.map((p) => `${p.text} (${p.source || "graph"})`),
    ...answer.evidence.triples.map((t) => `${t.text} (${t.source || "graph"}, ${t.role})`),
  ];
  $("evidence").replaceChildren(...lines.map((line) => item("li", line)));
  $("evidence-box").hidden = !lines.length;
  $("graph-box").hidden = false;
  kgmwGraphView.draw(answer.evidence_graph || { nodes: [], edges: [] }, $("graph"), $("graph-tip"), $("graph-note"));
}

function item(tag, text, className) {
  const element = document.createElement(tag);
  element.textContent = text;
  if (className) element.className = className;
  return element;
}

document.addEventListener("DOMContentLoaded", async () => {
  $("ask-form").addEventListener("submit", submit);
  $("api-key").addEventListener("change", loadChoices);
  window.addEventListener("popstate", askFromUrl);
  if (await loadChoices()) await askFromUrl();
});
