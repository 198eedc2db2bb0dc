// The evidence graph, drawn with Cytoscape.js and laid out by its fCoSE extension or
// its concentric layout (static/vendor/, see its README.md); layOut says how one is
// picked. Labels are never drawn below 12 px: the page never zooms out past 1, and a
// graph larger than its box is dragged instead.
// Graph text is untrusted: it goes to Cytoscape as data and to the tooltip as textContent.
"use strict";

const kgmwGraphView = (() => {
  const FONT = "system-ui, sans-serif";
  const PAD = 8;
  const STYLE = [
    { selector: "node", style: {
      "background-color": "#dfe7fb", "border-color": "#2c5cc5", "border-width": 1.5, width: 18, height: 18,
      label: "data(label)", "font-family": FONT, "font-size": 13, "font-weight": 600, color: "#1d2330",
      "text-valign": "bottom", "text-margin-y": 4, "text-wrap": "wrap", "text-max-width": 150,
      "text-background-color": "#ffffff", "text-background-opacity": 0.9, "text-background-padding": 2,
    } },
    { selector: "node.literal", style: { shape: "round-rectangle", "background-color": "#f3efe3", "border-color": "#9a7b2f" } },
    { selector: "node.answer", style: { "background-color": "#ffd866", "border-color": "#a07800", "border-width": 2.5, width: 24, height: 24 } },
    { selector: "edge", style: {
      width: 1.5, "line-color": "#8a93a6", "target-arrow-color": "#8a93a6", "target-arrow-shape": "triangle",
      "curve-style": "bezier", label: "data(label)", "font-family": FONT, "font-size": 12, color: "#44506a",
      "text-wrap": "wrap", "text-max-width": 140,
      "text-background-color": "#ffffff", "text-background-opacity": 1, "text-background-padding": 2,
    } },
    { selector: "edge.quiet", style: { label: "" } },
    { selector: "edge.path", style: { width: 2.2, "line-color": "#2c5cc5", "target-arrow-color": "#2c5cc5" } },
  ];
  const SPREAD = [0.85, 0.92, 1, 1.15, 1.3, 1.5, 1.75, 2];
  const OVERFLOW_COST = 2;
  let cy = null;

  // Triples between the same two nodes become one drawn edge with one line per relation.
  function elements(graph) {
    const nodes = graph.nodes.map((n) => ({
      group: "nodes",
      data: { id: n.id, label: n.label, iri: n.iri, source: n.source, kind: n.kind },
      classes: n.kind + (n.answer ? " answer" : ""),
    }));
    const bundles = new Map();
    for (const e of graph.edges) {
      const key = JSON.stringify([e.source, e.target]);
      if (!bundles.has(key)) bundles.set(key, { source: e.source, target: e.target, facts: [] });
      bundles.get(key).facts.push(e);
    }
    const edges = [...bundles.values()].map((b, i) => ({
      group: "edges",
      data: { id: "edge-" + i, source: b.source, target: b.target, facts: b.facts, label: [...new Set(b.facts.map((f) => f.label))].join("\n") },
      classes: b.facts.some((f) => f.role === "path") ? "path" : "fact",
    }));
    return [...nodes, ...edges];
  }

  const boxesMeet = (a, b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2;

  // Edge labels to leave off so that none meets a node, its label or another edge label:
  // path edges are placed first, each label kept if it meets nothing kept before it.
  function crowdedEdges() {
    const kept = cy.nodes().map((n) => n.boundingBox({ includeLabels: true, includeOverlays: false }));
    const edges = cy.edges().sort((a, b) => b.hasClass("path") - a.hasClass("path"));
    return edges.filter((e) => {
      const label = e.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false });
      if (kept.some((box) => boxesMeet(label, box))) return true;
      kept.push(label);
      return false;
    });
  }

  function nodesMeet() {
    const boxes = cy.nodes().map((n) => n.boundingBox({ includeLabels: true, includeOverlays: false }));
    return boxes.some((a, i) => boxes.slice(i + 1).some((b) => boxesMeet(a, b)));
  }

  // Long enough for the edge's label and for the labels around a node with many edges.
  function edgeLength(edge) {
    const label = 8 * Math.max(...edge.data("label").split("\n").map((line) => line.length));
    return 50 + Math.max(label, 20 * Math.max(edge.source().degree(), edge.target().degree()));
  }

  // Whether score a comes before score b, compared item by item.
  function before(a, b) {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
    return false;
  }

  // Two layouts, each tried at growing spreads: Cytoscape's concentric rings (hubs in
  // the middle, then nodes with several edges, leaves outside) and the force-directed
  // fCoSE started from the rings (deterministic: no random start). Nodes must not meet; of the rest the try with the
  // fewest crowded path labels wins, then the fewest crowded labels (a graph larger than
  // its box at zoom 1 counts OVERFLOW_COST more per box it overflows by), then the smallest. Labels
  // still crowded are left off (the tooltip has them).
  function layOut(box) {
    const narrow = box.clientWidth < 520;
    const hub = cy.nodes().maxDegree();
    const rings = {
      name: "concentric", animate: false, fit: false, nodeDimensionsIncludeLabels: true, avoidOverlap: true,
      concentric: (n) => (n.degree() * 3 >= hub * 2 ? 3 : n.degree() > 1 ? 2 : 1), levelWidth: () => 1,
      minNodeSpacing: narrow ? 8 : 24, startAngle: -Math.PI / 2,
    };
    cy.layout(rings).run();
    cy.layout({
      name: "fcose", quality: "proof", animate: false, fit: false, randomize: false, nodeDimensionsIncludeLabels: true,
      idealEdgeLength: edgeLength, nodeRepulsion: () => 12000, nodeSeparation: 60, gravity: 0.3, numIter: 2500,
    }).run();
    const forces = new Map(cy.nodes().map((n) => [n.id(), { ...n.position() }]));
    const runs = [
      (spacingFactor) => cy.layout({ ...rings, spacingFactor }).run(),
      (spacingFactor) => cy.layout({ name: "preset", animate: false, fit: false, positions: (n) => forces.get(n.id()), spacingFactor }).run(),
    ];
    const room = { w: box.clientWidth - 2 * PAD, h: mostHeight() - 2 * PAD };
    let best = { score: [Infinity], run: runs[0], spread: SPREAD[SPREAD.length - 1] };
    for (const run of runs) {
      for (const spread of SPREAD) {
        run(spread);
        if (nodesMeet()) continue;
        const crowded = crowdedEdges();
        const bb = cy.elements().boundingBox();
        const overflow = OVERFLOW_COST * Math.max(0, Math.max(1, bb.w / room.w) * Math.max(1, bb.h / room.h) - 1);
        const score = [crowded.filter(".path").length, crowded.length + overflow, bb.w * bb.h];
        if (before(score, best.score)) best = { score, run, spread };
        if (!crowded.length) break;
      }
    }
    best.run(best.spread);
    crowdedEdges().addClass("quiet");
  }

  const mostHeight = () => Math.max(300, Math.min(620, window.innerHeight * 0.65));

  // Zoom between 1 and 1.4 so labels stay at least as large as set; the box is as tall as
  // the graph needs (within bounds) and pans when the graph is wider than the box.
  function frame(box, note) {
    const bb = cy.elements().boundingBox();
    const most = mostHeight();
    const zoom = Math.max(1, Math.min(1.4, (box.clientWidth - 2 * PAD) / bb.w, (most - 2 * PAD) / bb.h));
    box.style.height = Math.round(Math.max(200, Math.min(most, bb.h * zoom + 2 * PAD))) + "px";
    cy.resize();
    cy.fit(undefined, PAD);
    const fits = cy.zoom() >= 1 && bb.w * cy.zoom() <= box.clientWidth && bb.h * cy.zoom() <= box.clientHeight;
    cy.zoom(Math.max(1, Math.min(1.4, cy.zoom())));
    cy.center();
    cy.userPanningEnabled(!fits);
    note.textContent = fits ? "Hover over (or tap) a node or edge for its IRI and source." : "Drag the graph to see the rest; hover over (or tap) a node or edge for its IRI and source.";
  }

  function tipText(target) {
    if (target.isNode()) {
      const d = target.data();
      return [d.label, d.iri || "(a literal)", "source: " + (d.source || "graph")].join("\n");
    }
    return target.data("facts").map((f) => `${f.label}: ${f.predicate}\nsource: ${f.graph || "graph"} (${f.role})`).join("\n");
  }

  function showTip(tip, box, target) {
    tip.textContent = tipText(target);
    tip.hidden = false;
    const at = target.isNode() ? target.renderedPosition() : target.renderedMidpoint();
    const left = Math.max(0, Math.min(box.offsetLeft + at.x + 12, box.offsetLeft + box.clientWidth - tip.offsetWidth));
    tip.style.left = left + "px";
    tip.style.top = box.offsetTop + at.y + 14 + "px";
  }

  function draw(graph, box, tip, note) {
    if (cy) cy.destroy();
    cy = window.kgmwGraph = null;
    window.kgmwGraphReady = false;
    tip.hidden = true;
    box.hidden = !graph.nodes.length;
    if (!graph.nodes.length) {
      note.textContent = "No graph evidence for this answer.";
      window.kgmwGraphReady = true;
      return;
    }
    cy = cytoscape({
      container: box, elements: elements(graph), style: STYLE, layout: { name: "preset" },
      minZoom: 1, maxZoom: 2.5, userZoomingEnabled: false, boxSelectionEnabled: false, autoungrabify: true,
    });
    if (box.clientWidth < 520) cy.style().selector("node, edge").style("text-max-width", 90).update();  // a phone: wrap sooner
    layOut(box);
    frame(box, note);
    cy.on("mouseover tap", "node, edge", (event) => showTip(tip, box, event.target));
    cy.on("mouseout", "node, edge", () => { tip.hidden = true; });
    cy.on("tap", (event) => { if (event.target === cy) tip.hidden = true; });
    window.kgmwGraph = cy;  // for people (and tests) poking at the graph in the console
    window.kgmwGraphReady = true;
  }

  return { draw };
})();
