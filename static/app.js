/* gradtrace page: one `state`, one `setState`, one `render()`.
 *
 * The server sends the whole trace and a drawing laid out once (Graphviz); stepping only moves
 * an index and restyles that SVG here, with no request. Editing re-runs the program through
 * POST /api/render (debounced). The address bar always holds the whole state (a permalink).
 * No inline script: the initial state arrives in <script type="application/json" id="state">.
 */
(function () {
  "use strict";

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const boot = JSON.parse($("#state").textContent);
  const STRINGS = boot.strings;
  const EMBED = !!boot.embed;
  // A standalone file (gradtrace render --html, a notebook's output): no server to ask, so no
  // re-runs, and the only address it keeps is `#step=k`.
  const STANDALONE = !!boot.standalone;
  const FIT_CONTENT = boot.fit === "content"; // the box is as tall as the drawing (an iframe)
  const LABEL_CHARS = 24; // engine/draw.py shortens labels the same way
  const HEAT_ROWS = 8, HEAT_COLS = 16;
  const MAX_TABLE_CELLS = 5000;
  // A table wider than this many grads has cells only in the columns on show (and half a box
  // either side): the rest of each row is one empty cell. A browser lays a table out as a
  // whole, so a step that adds a row costs in proportion to every cell in it.
  const WIDE_TABLE = 40;
  const LONG_SOURCE = 200; // URL-encoded characters above which the link compresses the program

  // ------------------------------------------------------------------------------------------
  // State

  const state = {
    source: boot.query.source || "",
    values: Object.assign({}, boot.query.values || {}),
    accumulate: boot.query.accumulate || "add",
    order: boot.query.order || "dfs",
    lang: boot.query.lang === "zh" ? "zh" : "en",
    present: !!boot.query.present,
    showEditor: false,
    trace: boot.trace,
    contrast: boot.contrast,
    error: boot.error, // {message, line, column, ...} of the program in the editor, or null
    drawError: boot.draw_error,
    stale: false, // the drawing is of the last good program, not of the editor's text
    step: boot.query.step == null ? 0 : boot.query.step,
    forwardMode: boot.query.fwd != null,
    collapse: boot.query.collapse == null ? null : !!boot.query.collapse, // null: the server decides
    collapsible: !!boot.collapsible,
    collapsed: boot.collapsed, // {id, members, iterations, collapsed} when a loop is drawn as a box
    fwd: boot.query.fwd,
    hover: null,
    playing: false,
    speed: 800,
    running: false,
  };

  let T = null; // derived from state.trace by prepareTrace()
  let G = null; // the drawing's elements, by prepareSvg()

  function setState(patch) {
    Object.assign(state, patch);
    render();
  }

  function t(key, params) {
    let s = (STRINGS[state.lang] && STRINGS[state.lang][key]) || STRINGS.en[key] || key;
    if (params) {
      s = s.replace(/\{(\w+)\}/g, (m, k) => (k in params ? String(params[k]) : m));
    }
    return s;
  }

  // ------------------------------------------------------------------------------------------
  // Numbers: the same display precision as engine/draw.py fmt()

  function fmt(x) {
    if (x === null || x === undefined) return "—";
    if (typeof x !== "number") return shapeBadge(shapeOf(x));
    if (Number.isNaN(x)) return "nan";
    if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
    if (x === 0) return "0";
    const sign = x < 0 ? "-" : "";
    const m = Math.abs(x).toExponential(3).match(/^(\d)\.(\d{3})e([+-]\d+)$/);
    const digits = m[1] + m[2];
    const e = parseInt(m[3], 10);
    if (e >= -4 && e < 4) {
      let whole, frac;
      if (e >= 0) { whole = digits.slice(0, e + 1); frac = digits.slice(e + 1); }
      else { whole = "0"; frac = "0".repeat(-e - 1) + digits; }
      frac = frac.replace(/0+$/, "");
      return sign + whole + (frac ? "." + frac : "");
    }
    const frac = digits.slice(1).replace(/0+$/, "");
    return sign + digits[0] + (frac ? "." + frac : "") + "e" + e;
  }

  function exact(x) {
    const s = JSON.stringify(x);
    return s.length > 2000 ? s.slice(0, 2000) + "…" : s;
  }

  function shapeOf(v) {
    const shape = [];
    while (Array.isArray(v)) { shape.push(v.length); v = v[0]; }
    return shape;
  }
  function shapeBadge(shape) { return shape && shape.length ? "[" + shape.join("×") + "]" : ""; }
  function flat(v) { return Array.isArray(v) ? v.flat(Infinity) : [v]; }

  function fmtCell(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v === "number") return fmt(v);
    const f = flat(v);
    if (f.length <= 4) return "[" + f.map(fmt).join(", ") + "]";
    return shapeBadge(shapeOf(v)) + " " + f.slice(0, 3).map(fmt).join(", ") + ", …";
  }

  function cps(s) { return Array.from(s); }
  function shorten(s, n) {
    const a = cps(String(s).replace(/[\u0000-\u001f\u007f]/g, " "));
    n = n || LABEL_CHARS;
    return a.length <= n ? a.join("") : a.slice(0, n - 1).join("") + "…";
  }

  function zerosLike(shape) {
    if (!shape || !shape.length) return 0;
    const [n, ...rest] = shape;
    return Array.from({ length: n }, () => zerosLike(rest));
  }

  // ------------------------------------------------------------------------------------------
  // The trace: everything derived from it once

  function prepareTrace(trace) {
    if (!trace) return null;
    const byId = {};
    trace.nodes.forEach((n) => { byId[n.id] = n; });
    const topoIndex = {};
    trace.topo.forEach((id, i) => { topoIndex[id] = i; });
    const edgeStep = {};
    const stepOf = {}; // node id -> the step that runs its backward
    trace.steps.forEach((st, i) => {
      (st.terms || []).forEach((term) => { edgeStep["e-" + st.node + "-" + term.arg] = i; });
      if (st.kind !== "seed" && i > 0) stepOf[st.node] = i;
    });
    // Table columns: every node that has a grad, in backward (reverse topological) order.
    const onPath = trace.topo.slice().reverse().filter((id) => byId[id] && byId[id].grad !== null);
    const others = trace.nodes.filter((n) => n.grad !== null && !(n.id in topoIndex)).map((n) => n.id);
    const cols = onPath.concat(others);
    // Heat-map scales: the largest |grad| a node ever has (so colours compare across steps).
    const gradScale = {};
    trace.nodes.forEach((n) => {
      if (n.grad !== null && n.shape.length) gradScale[n.id] = maxAbs(n.grad);
    });
    trace.steps.forEach((st) => {
      Object.entries(st.grads || {}).forEach(([id, g]) => {
        if (id in gradScale) gradScale[id] = Math.max(gradScale[id], maxAbs(g));
      });
    });
    const N = trace.steps.length - 1;
    const boxOf = {};
    if (state.collapsed) state.collapsed.members.forEach((id) => { boxOf[id] = state.collapsed.id; });
    const zeros = {}; // every grad before the seed (one object per node, so equal grads are ===)
    trace.nodes.forEach((n) => { if (n.grad !== null) zeros[n.id] = zerosLike(n.shape); });
    return { trace, byId, topoIndex, edgeStep, stepOf, cols, gradScale, N, boxOf, zeros, cache: {} };
  }

  function maxAbs(v) {
    let m = 0;
    flat(v).forEach((x) => { m = Math.max(m, Math.abs(x)); });
    return m;
  }

  // The grads after step k: the running merge of the steps' deltas (from the grads after k-1
  // when that is what was asked last, as when stepping forwards).
  function gradsAt(k) {
    const c = T.cache;
    if (c.k === k) return c.grads;
    const steps = T.trace.steps;
    const from = c.grads && c.k === k - 1 ? k : 0;
    const grads = Object.assign({}, from ? c.grads : T.zeros);
    for (let i = from; i <= k && i < steps.length; i++) Object.assign(grads, steps[i].grads || {});
    T.cache = { k, grads };
    return grads;
  }

  function nodeLabel(id) {
    const n = T.byId[id];
    return n ? n.label : id;
  }

  // ------------------------------------------------------------------------------------------
  // Timeline: optional forward positions (one per topo node), then the backward steps.

  function fwdCount() { return state.forwardMode && T ? T.trace.topo.length : 0; }
  function maxPos() { return T ? fwdCount() + T.N : 0; }
  function pos() { return state.forwardMode && state.fwd != null ? state.fwd : fwdCount() + state.step; }
  function setPos(p) {
    if (!T) return;
    p = Math.max(0, Math.min(maxPos(), p));
    if (p < fwdCount()) setState({ fwd: p, step: 0 });
    else setState({ fwd: null, step: p - fwdCount() });
  }
  function inForward() { return state.forwardMode && state.fwd != null; }

  // ------------------------------------------------------------------------------------------
  // The drawing

  function prepareSvg() {
    const host = $("#graph");
    const svg = host && host.querySelector("svg");
    if (!svg) { G = null; return; }
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
    svg.setAttribute("role", "img");
    const vb = (svg.getAttribute("viewBox") || "0 0 100 100").split(/[\s,]+/).map(Number);
    const nodes = {};
    $$("g.node", svg).forEach((g) => {
      const id = g.id;
      if (!/^n\d+$/.test(id)) return;
      nodes[id] = {
        g,
        head: svg.querySelector("#" + id + "-head"),
        grad: svg.querySelector("#" + id + "-grad"),
        vtexts: $$("text.v", g),
        gtexts: $$("text.g", g),
        gheat: $$("#" + id + "-gheat rect[id]", g),
        title: g.querySelector("title"),
      };
    });
    const edges = $$("g.edge", svg).map((g) => ({ g, id: g.id, consumer: g.id.split("-")[1], label: g.querySelector("text.elabel") }));
    const boxes = {};
    $$("g.node.collapsed", svg).forEach((g) => {
      const head = g.querySelector("text");
      boxes[g.id] = { g, head, text: head ? head.textContent.replace(/^▶ /, "") : "" };
    });
    G = { svg, nodes, edges, boxes, hasBoxes: Object.keys(boxes).length > 0, base: { x: vb[0], y: vb[1], w: vb[2], h: vb[3] }, view: null, userZoom: false };
    fitGraph();
  }

  function replaceSvg(svgText) {
    const host = $("#graph");
    if (!svgText) { host.textContent = ""; G = null; return; }
    const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
    const svg = doc.documentElement;
    if (!svg || svg.nodeName !== "svg" || doc.querySelector("parsererror")) { host.textContent = ""; G = null; return; }
    host.replaceChildren(document.importNode(svg, true));
    prepareSvg();
  }

  function showDrawError(err) {
    const host = $("#graph");
    const p = document.createElement("p");
    p.className = "draw-error";
    const strong = document.createElement("strong");
    strong.textContent = t("too_large");
    const msg = document.createElement("span");
    msg.textContent = err.message;
    p.append(strong, document.createElement("br"), msg);
    host.replaceChildren(p);
    G = null;
  }

  function setText(el, text) {
    if (el.textContent !== text) el.textContent = text;
  }

  function headText(node, marker, pending) {
    const label = shorten(node.label || node.id);
    if (node.shape && node.shape.length) return marker + label + "  " + shapeBadge(node.shape);
    return marker + label + " = " + (pending ? "?" : fmt(node.value));
  }

  function heatGrid(v, shape) {
    const f = flat(v);
    let rows, cols;
    if (shape.length <= 1) { rows = 1; cols = f.length; }
    else { cols = shape[shape.length - 1]; rows = f.length / cols; }
    const r = Math.min(rows, HEAT_ROWS), c = Math.min(cols, HEAT_COLS);
    const out = [];
    for (let i = 0; i < r; i++) {
      const r0 = Math.floor((i * rows) / r), r1 = Math.floor(((i + 1) * rows) / r);
      for (let j = 0; j < c; j++) {
        const c0 = Math.floor((j * cols) / c), c1 = Math.floor(((j + 1) * cols) / c);
        let s = 0, n = 0;
        for (let a = r0; a < r1; a++) for (let b = c0; b < c1; b++) { s += f[a * cols + b]; n++; }
        out.push(n ? s / n : 0);
      }
    }
    return out;
  }

  function heatColour(x, scale) {
    let tt = scale <= 0 ? 0 : Math.max(-1, Math.min(1, x / scale));
    const target = tt > 0 ? [214, 96, 77] : [67, 147, 195];
    tt = Math.abs(tt);
    return "#" + target.map((c) => Math.floor(255 + (c - 255) * tt + 0.5).toString(16).padStart(2, "0")).join("");
  }

  // Restyling the drawing. Only what differs from the state last drawn is touched: a step
  // changes a handful of nodes and edges (the node that runs, the grads it writes, the edges it
  // sends along), so a step costs the same on a 20-node graph and a 1,000-node one. The first
  // drawing of a trace, and turning the forward pass on or off, restyle everything.
  function renderGraph() {
    if (!G || !T) return;
    if (!G.userZoom) requestAnimationFrame(followCurrent);
    const fwd = inForward();
    const k = state.step;
    const st = T.trace.steps[k] || { node: null, grads: {} };
    const changed = fwd ? {} : st.grads || {};
    const current = fwd ? T.trace.topo[state.fwd] : st.node;
    const ctx = { fwd, k, f: state.fwd, grads: gradsAt(k), changed, current };
    const prev = G.shown && G.shown.T === T && G.shown.fwd === fwd ? G.shown : null;
    G.shown = { T, fwd, k, f: state.fwd, hover: state.hover, current, changed };
    const ix = drawingIndex();
    if (!prev) {
      Object.keys(G.nodes).forEach((id) => styleNode(id, G.nodes[id], ctx));
      G.edges.forEach((e) => styleEdge(e, ctx));
      styleBoxes(ctx);
      return;
    }
    const nodes = new Set([prev.current, current, prev.hover, state.hover]);
    Object.keys(prev.changed).forEach((id) => nodes.add(id));
    Object.keys(changed).forEach((id) => nodes.add(id));
    const edges = new Set();
    if (fwd) {
      // Moving from one forward position to another changes the nodes (and the edges into
      // them) between the two.
      const lo = Math.min(prev.f, state.fwd), hi = Math.max(prev.f, state.fwd);
      for (let i = lo; i <= hi; i++) {
        const id = T.trace.topo[i];
        nodes.add(id);
        (ix.edgesInto[id] || []).forEach((e) => edges.add(e));
      }
    } else {
      // From step a to step b: the edges of the steps between change (future, active, sent),
      // and so do the grads the steps between wrote.
      const lo = Math.min(prev.k, k), hi = Math.max(prev.k, k);
      for (let i = lo; i <= hi; i++) {
        (ix.edgesAt[i] || []).forEach((e) => edges.add(e));
        if (i > lo) Object.keys(T.trace.steps[i].grads || {}).forEach((id) => nodes.add(id));
      }
    }
    nodes.forEach((id) => { if (id && G.nodes[id]) styleNode(id, G.nodes[id], ctx); });
    edges.forEach((e) => styleEdge(e, ctx));
    if (G.hasBoxes) styleBoxes(ctx);
  }

  // The drawing's edges by the step that sends along them and by the node they feed.
  function drawingIndex() {
    if (G.ix && G.ix.T === T) return G.ix;
    const edgesAt = {}, edgesInto = {};
    G.edges.forEach((e) => {
      const s = T.edgeStep[e.id];
      if (s !== undefined) (edgesAt[s] = edgesAt[s] || []).push(e);
      (edgesInto[e.consumer] = edgesInto[e.consumer] || []).push(e);
    });
    G.ix = { T, edgesAt, edgesInto };
    return G.ix;
  }

  function doneFwd(id, ctx) {
    return !ctx.fwd || !(id in T.topoIndex) || T.topoIndex[id] <= ctx.f;
  }

  function styleNode(id, el, ctx) {
    const node = T.byId[id];
    if (!node) return;
    const fwd = ctx.fwd;
    const isCur = id === ctx.current;
    const pending = !doneFwd(id, ctx);
    const cl = el.g.classList;
    cl.toggle("current", isCur);
    cl.toggle("changed", id in ctx.changed);
    cl.toggle("hover", id === state.hover);
    cl.toggle("fwd", fwd);
    cl.toggle("fwd-pending", pending);
    if (el.head) setText(el.head, headText(node, isCur ? "▶ " : "", pending));
    const g = ctx.grads[id];
    if (el.lastGrad === g && el.lastFwd === fwd) return; // same grad object: nothing moved
    el.lastGrad = g; el.lastFwd = fwd;
    if (el.grad && g !== undefined) setText(el.grad, "grad " + fmt(g));
    if (el.gtexts.length && g !== undefined) {
      const f = flat(g);
      el.gtexts.forEach((txt, i) => setText(txt, fmt(f[i])));
    }
    if (el.gheat.length && g !== undefined) {
      const cells = heatGrid(g, node.shape);
      const scale = T.gradScale[id] || 0;
      el.gheat.forEach((r, i) => r.setAttribute("fill", heatColour(cells[i] || 0, scale)));
    }
    if (el.title) {
      const lines = [node.label + (node.text && node.text !== node.label ? " = " + node.text : "")];
      lines.push("value " + exact(node.value));
      if (g !== undefined && !fwd) lines.push("grad " + exact(g));
      setText(el.title, lines.join("\n"));
    }
  }

  function styleEdge(e, ctx) {
    const s = T.edgeStep[e.id];
    const hasTerm = s !== undefined;
    const fwd = ctx.fwd, k = ctx.k;
    const cl = e.g.classList;
    cl.toggle("fwd", fwd);
    cl.toggle("active", !fwd && hasTerm && s === k);
    cl.toggle("sent", !fwd && hasTerm && s < k);
    cl.toggle("future", !fwd && hasTerm && s > k);
    cl.toggle("fwd-done", fwd && doneFwd(e.consumer, ctx));
    cl.toggle("fwd-pending", fwd && !doneFwd(e.consumer, ctx));
  }

  function styleBoxes(ctx) {
    const changedIds = Object.keys(ctx.changed);
    Object.entries(G.boxes).forEach(([id, box]) => {
      const isCur = T.boxOf[ctx.current] === id;
      box.g.classList.toggle("current", isCur);
      box.g.classList.toggle("changed", changedIds.some((c) => T.boxOf[c] === id));
      if (box.head) setText(box.head, (isCur ? "▶ " : "") + box.text);
    });
  }

  // Zoom and pan by moving the viewBox; fit keeps small graphs from blowing up.
  const MAX_SCALE = 2.2; // a 4-node graph should not fill a projector screen with one box
  const MIN_SCALE = 1; // below this the text is too small to read: pan instead (and follow)
  function fitGraph(whole) {
    if (!G) return;
    const host = $("#graph");
    const cw = host.clientWidth || 600;
    const b = G.base;
    if (!EMBED) {
      // The box is as tall as the graph needs at full width, within a share of the screen.
      const share = state.present ? 0.72 : window.innerWidth <= 760 ? 0.55 : 0.62;
      const want = b.h * Math.max(Math.min(cw / b.w, MAX_SCALE), MIN_SCALE) + 16;
      host.style.height = Math.round(Math.max(200, Math.min(FIT_CONTENT ? 640 : window.innerHeight * share, want))) + "px";
    }
    const ch = host.clientHeight || 400;
    G.width = cw;
    let scale = Math.min(cw / b.w, ch / b.h, MAX_SCALE);
    if (whole !== true) scale = Math.max(scale, MIN_SCALE);
    const w = cw / scale, h = ch / scale;
    G.view = { x: b.x - (w - b.w) / 2, y: b.y - (h - b.h) / 2, w, h };
    if (w < b.w) G.view.x = b.x; // too wide to show whole: start at the inputs
    if (h < b.h) G.view.y = b.y;
    G.userZoom = false;
    G.followed = null; // renderGraph() follows the node on show after the next frame
    applyView();
  }

  // Keep the node on show inside the box when the graph is larger than the box.
  function followCurrent() {
    if (!G || !T) return;
    const cur = inForward() ? T.trace.topo[state.fwd] : (T.trace.steps[state.step] || {}).node;
    if (!cur || G.followed === cur) return;
    G.followed = cur;
    const el = G.nodes[cur] ? G.nodes[cur].g : G.boxes[T.boxOf[cur]] && G.boxes[T.boxOf[cur]].g;
    const host = $("#graph");
    if (!el || !host.clientWidth) return;
    if (G.view.w >= G.base.w - 1 && G.view.h >= G.base.h - 1) return; // all of it is on show
    const r = el.getBoundingClientRect(), hr = host.getBoundingClientRect();
    const m = 16;
    let dx = 0, dy = 0;
    // Out of view: bring it to the middle (or to the start, if it is wider than the box).
    if (r.left < hr.left + m || r.right > hr.right - m) {
      dx = r.width > hr.width - 2 * m ? hr.left + m - r.left : (hr.left + hr.right) / 2 - (r.left + r.right) / 2;
    }
    if (r.top < hr.top + m || r.bottom > hr.bottom - m) {
      dy = r.height > hr.height - 2 * m ? hr.top + m - r.top : (hr.top + hr.bottom) / 2 - (r.top + r.bottom) / 2;
    }
    if (dx || dy) moveView(dx, dy);
  }
  function applyView() {
    const v = G.view;
    G.svg.setAttribute("viewBox", [v.x, v.y, v.w, v.h].map((n) => n.toFixed(2)).join(" "));
  }
  function zoomAt(f, px, py) {
    if (!G) return;
    const host = $("#graph");
    const cw = host.clientWidth, ch = host.clientHeight;
    const v = G.view;
    if (px === undefined) { px = cw / 2; py = ch / 2; }
    const sx = v.x + (px / cw) * v.w, sy = v.y + (py / ch) * v.h;
    const w = Math.max(20, Math.min(v.w / f, G.base.w * 20)), h = (w * v.h) / v.w;
    G.view = { x: sx - (px / cw) * w, y: sy - (py / ch) * h, w, h };
    G.userZoom = true;
    applyView();
  }
  function moveView(dx, dy) {
    const host = $("#graph");
    const v = G.view;
    v.x -= (dx * v.w) / host.clientWidth;
    v.y -= (dy * v.h) / host.clientHeight;
    applyView();
  }
  function panBy(dx, dy) {
    if (!G) return;
    G.userZoom = true;
    moveView(dx, dy);
  }

  function wireGraph() {
    const host = $("#graph");
    if (!host) return;
    const pointers = new Map();
    let moved = 0, pinch = null;
    host.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0 && ev.pointerType === "mouse") return;
      pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
      moved = 0;
      if (pointers.size === 2) {
        const [a, b] = Array.from(pointers.values());
        pinch = Math.hypot(a.x - b.x, a.y - b.y);
      }
    });
    host.addEventListener("pointermove", (ev) => {
      const p = pointers.get(ev.pointerId);
      if (!p) return;
      const dx = ev.clientX - p.x, dy = ev.clientY - p.y;
      if (pointers.size === 1) {
        moved += Math.abs(dx) + Math.abs(dy);
        if (moved > 4) {
          if (!host.classList.contains("dragging")) {
            host.classList.add("dragging");
            try { host.setPointerCapture(ev.pointerId); } catch (e) { /* pointer already gone */ }
          }
          panBy(dx, dy);
        }
      } else if (pointers.size === 2 && pinch) {
        p.x = ev.clientX; p.y = ev.clientY;
        const [a, b] = Array.from(pointers.values());
        const d = Math.hypot(a.x - b.x, a.y - b.y);
        const r = host.getBoundingClientRect();
        zoomAt(d / pinch, (a.x + b.x) / 2 - r.left, (a.y + b.y) / 2 - r.top);
        pinch = d;
        moved = 99;
        return;
      }
      p.x = ev.clientX; p.y = ev.clientY;
    });
    const end = (ev) => {
      const wasDrag = moved > 4;
      pointers.delete(ev.pointerId);
      if (pointers.size < 2) pinch = null;
      host.classList.remove("dragging");
      if (!wasDrag && ev.type === "pointerup") {
        const g = ev.target.closest && ev.target.closest("g.node");
        if (g && g.classList.contains("collapsed")) { state.collapse = false; scheduleRun(0); return; }
        if (g && T && /^n\d+$/.test(g.id)) jumpToNode(g.id);
      }
    };
    host.addEventListener("pointerup", end);
    host.addEventListener("pointercancel", end);
    host.addEventListener("wheel", (ev) => {
      if (!(ev.ctrlKey || ev.metaKey) || !G) return;
      ev.preventDefault();
      const r = host.getBoundingClientRect();
      zoomAt(Math.exp(-ev.deltaY / 300), ev.clientX - r.left, ev.clientY - r.top);
    }, { passive: false });
    host.addEventListener("mouseover", (ev) => {
      const g = ev.target.closest && ev.target.closest("g.node");
      setHover(g && /^n\d+$/.test(g.id) ? g.id : null);
    });
    host.addEventListener("mouseleave", () => setHover(null));
    on("#zoom-in", "click", () => zoomAt(1.25));
    on("#zoom-out", "click", () => zoomAt(0.8));
    on("#zoom-fit", "click", () => fitGraph(true));
    if (window.ResizeObserver) {
      // Width changes refit (the height is ours to set, so it must not trigger a loop).
      new ResizeObserver(() => {
        if (G && !G.userZoom && host.clientWidth !== G.width) fitGraph();
      }).observe(host);
    }
    window.addEventListener("resize", () => { if (G && !G.userZoom) fitGraph(); });
  }

  function jumpToNode(id) {
    if (inForward()) {
      if (id in T.topoIndex) setPos(T.topoIndex[id]);
      return;
    }
    if (id in T.stepOf) setPos(fwdCount() + T.stepOf[id]);
  }

  function setHover(id) {
    if (state.hover !== id) setState({ hover: id });
  }

  // ------------------------------------------------------------------------------------------
  // The grad table (#grad-table): one column per grad, one row per step.

  let tableWindow = null; // [first, last] rows rendered, when the table is too large for all
  let tableCols = null; // [first, last] columns (indices into T.cols) with cells, when wide

  function isWide() {
    return !!T && T.cols.length > WIDE_TABLE && T.trace.steps.length * T.cols.length > MAX_TABLE_CELLS;
  }

  // The most characters each column's cells show at any step (the font is monospaced).
  function cellChars() {
    const n = {};
    T.cols.forEach((id) => { n[id] = cps(fmtCell(T.zeros[id])).length; });
    T.trace.steps.forEach((st) => {
      Object.entries(st.grads || {}).forEach(([id, g]) => {
        if (id in n) n[id] = Math.max(n[id], cps(fmtCell(g)).length);
      });
    });
    return n;
  }

  // The columns in view in the table's box, and half a box either side.
  function colsOnShow(table) {
    const box = table.closest(".table-scroll");
    const heads = table.tHead.rows[0].cells;
    const n = T.cols.length;
    const w = box ? box.clientWidth : 0;
    if (!w) return [0, Math.min(n, WIDE_TABLE) - 1]; // not laid out (a closed <details>)
    // Offsets from the table, which starts the box's scrolled content (the sticky corner cell
    // has moved with the scroll, so it is no origin).
    const lo = box.scrollLeft - w / 2, hi = box.scrollLeft + w * 1.5;
    let a = 0, b = n - 1;
    while (a < n - 1 && heads[a + 1].offsetLeft + heads[a + 1].offsetWidth < lo) a++;
    while (b > a && heads[b + 1].offsetLeft > hi) b--;
    return [a, b];
  }

  // Scrolled sideways (or resized): fill in the columns that came into view.
  function followTableScroll() {
    const table = $("#grad-table");
    if (!table || !T || !tableCols || !isWide()) return;
    const box = table.closest(".table-scroll");
    if (!box || !box.clientWidth) return;
    const heads = table.tHead.rows[0].cells;
    const [a, b] = tableCols;
    const left = heads[a + 1].offsetLeft, right = heads[b + 1].offsetLeft + heads[b + 1].offsetWidth;
    const inView = (a === 0 || left <= box.scrollLeft) &&
      (b === T.cols.length - 1 || right >= box.scrollLeft + box.clientWidth);
    if (inView) return;
    tableCols = colsOnShow(table);
    renderTableBody(true);
    renderTable(true);
  }

  function stepDesc(k) {
    const st = T.trace.steps[k];
    const label = nodeLabel(st.node);
    if (k === 0 || st.kind === "seed") {
      return t(T.trace.seeded_with_ones ? "seed_row_ones" : "seed_row", { node: label });
    }
    const node = T.byId[st.node];
    return t("backward_row", { node: label, op: (node && (node.symbol || node.op)) || st.op || "" });
  }

  function buildTable() {
    const table = $("#grad-table");
    if (!table) return;
    const thead = table.tHead, tbody = table.tBodies[0], tfoot = table.tFoot;
    thead.replaceChildren(); tbody.replaceChildren(); tfoot.replaceChildren();
    tableWindow = null;
    if (!T) return;
    const hr = document.createElement("tr");
    const corner = document.createElement("th");
    corner.scope = "col";
    corner.textContent = t("step_col");
    hr.append(corner);
    const wide = isWide();
    const chars = wide ? cellChars() : null;
    T.cols.forEach((id) => {
      const th = document.createElement("th");
      th.scope = "col";
      th.dataset.node = id;
      th.textContent = nodeLabel(id);
      th.title = nodeLabel(id) + ".grad";
      // The column is as wide as its widest cell at any step, so rows coming and going (and
      // cells filled in as the table scrolls sideways) never move the columns.
      if (wide) th.style.minWidth = "calc(" + chars[id] + "ch + 1rem + 2px)";
      hr.append(th);
    });
    thead.append(hr);
    tableCols = wide ? colsOnShow(table) : null;
    renderTableBody(true);
    // What the other accumulation gives, after the last step.
    if (state.contrast && state.contrast.grads) {
      const tr = document.createElement("tr");
      tr.className = "contrast";
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = t(state.contrast.accumulate === "assign" ? "contrast_assign" : "contrast_add");
      tr.append(th);
      T.cols.forEach((id) => {
        const td = document.createElement("td");
        td.dataset.node = id;
        const v = state.contrast.grads[id];
        td.textContent = fmtCell(v);
        td.title = exact(v);
        const final = T.byId[id].grad;
        if (JSON.stringify(v) !== JSON.stringify(final)) {
          td.classList.add(state.contrast.accumulate === "assign" ? "wrong" : "right");
        }
        tr.append(td);
      });
      tfoot.append(tr);
    }
  }

  // The rows on show: all of them, or (a table too large for that) a window around the step,
  // which slides with it: stepping adds the row coming into the window and drops the one
  // leaving it, rather than rebuilding the window.
  function renderTableBody(force) {
    const table = $("#grad-table");
    if (!table || !T) return false;
    const tbody = table.tBodies[0];
    const rows = T.trace.steps.length, cols = Math.max(1, T.cols.length);
    let first = 0, last = rows - 1;
    const note = $("#table-note");
    const windowed = rows * cols > MAX_TABLE_CELLS;
    if (windowed) {
      const half = Math.max(5, Math.floor(MAX_TABLE_CELLS / cols / 2));
      first = Math.max(0, state.step - half);
      last = Math.min(rows - 1, state.step + half);
    }
    const shown = tableWindow;
    if (!force && shown && shown[0] === first && shown[1] === last) return false;
    if (windowed && note) { note.hidden = false; note.textContent = `${first}–${last} / ${rows - 1}`; }
    else if (note) note.hidden = true;
    tableWindow = [first, last];
    if (!force && shown && first <= shown[1] && last >= shown[0]) {
      // Overlapping windows: drop the rows that left, add the ones that came in.
      for (let k = shown[0]; k < first; k++) tbody.firstElementChild.remove();
      for (let k = shown[1]; k > last; k--) tbody.lastElementChild.remove();
      if (first < shown[0]) tbody.prepend(buildRows(first, shown[0] - 1));
      if (last > shown[1]) tbody.append(buildRows(shown[1] + 1, last));
      return "slid";
    }
    tbody.replaceChildren(buildRows(first, last));
    tableShown = null;
    return "built";
  }

  // Rows first..last, each as it should look at the current step.
  function buildRows(first, last) {
    const [c0, c1] = tableCols || [0, T.cols.length - 1];
    const grads = Object.assign({}, T.zeros);
    const fwd = inForward();
    const frag = document.createDocumentFragment();
    for (let k = 0; k <= last; k++) {
      const st = T.trace.steps[k];
      Object.assign(grads, st.grads || {});
      if (k < first) continue;
      const tr = document.createElement("tr");
      tr.dataset.step = String(k);
      if (!fwd && k === state.step) tr.setAttribute("aria-current", "step");
      if (fwd || k > state.step) tr.className = "later";
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = k + " · " + stepDesc(k);
      tr.append(th);
      if (c0 > 0) tr.append(gapCell(c0));
      for (let c = c0; c <= c1; c++) {
        const id = T.cols[c];
        const td = document.createElement("td");
        td.dataset.node = id;
        td.textContent = fmtCell(grads[id]);
        td.title = exact(grads[id]);
        if (st.grads && id in st.grads) td.classList.add("changed");
        if (id === state.hover) td.classList.add("hover");
        tr.append(td);
      }
      frag.append(tr);
    }
    return frag;
  }

  function gapCell(span) {
    const td = document.createElement("td");
    td.className = "gap";
    td.colSpan = span;
    return td;
  }

  // Only the rows and columns that changed are touched: a big table must step quickly too.
  let tableShown = null; // {step, fwd, hover} as last drawn
  function renderTable(keepScroll) {
    const table = $("#grad-table");
    if (!table || !T) return;
    const rebuilt = renderTableBody(false) === "built";
    const fwd = inForward();
    const cur = fwd ? -1 : state.step;
    const prev = rebuilt || !tableShown ? null : tableShown;
    const rows = table.tBodies[0].rows;
    const first = tableWindow ? tableWindow[0] : 0;
    const touch = (k) => {
      const tr = rows[k - first];
      if (!tr) return;
      if (k === cur) tr.setAttribute("aria-current", "step"); else tr.removeAttribute("aria-current");
      tr.classList.toggle("later", fwd || k > state.step);
    };
    if (!prev) {
      for (let i = 0; i < rows.length; i++) touch(first + i);
    } else if (prev.step !== state.step || prev.fwd !== fwd) {
      const lo = Math.min(prev.step, state.step), hi = Math.max(prev.step, state.step);
      if (prev.fwd !== fwd) for (let i = 0; i < rows.length; i++) touch(first + i);
      else for (let k = lo; k <= hi; k++) touch(k);
    }
    if (!prev || prev.hover !== state.hover) {
      const ids = [prev && prev.hover, state.hover].filter(Boolean);
      if (!prev) $$(".hover", table).forEach((c) => c.classList.remove("hover"));
      ids.forEach((id) => {
        $$('[data-node="' + id + '"]', table).forEach((c) => c.classList.toggle("hover", c.dataset.node === state.hover));
      });
    }
    const moved = !prev || prev.step !== state.step || prev.fwd !== fwd;
    tableShown = { step: state.step, fwd, hover: state.hover };
    const currentRow = moved && cur >= 0 && !keepScroll ? rows[cur - first] : null;
    if (currentRow) {
      const box = table.closest(".table-scroll");
      if (box) {
        requestAnimationFrame(() => {
          const head = table.tHead ? table.tHead.offsetHeight : 0;
          const top = currentRow.offsetTop - head;
          if (top < box.scrollTop || currentRow.offsetTop + currentRow.offsetHeight > box.scrollTop + box.clientHeight) {
            box.scrollTop = Math.max(0, top - box.clientHeight / 3);
          }
        });
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Order strips

  let chips = null; // {topo: Map id -> li, back: Map id -> li, shown: {fwd, f, step, hover}}
  function buildStrips() {
    const topo = $("#topo-strip"), back = $("#backward-strip");
    chips = null;
    if (!topo || !back) return;
    topo.replaceChildren(); back.replaceChildren();
    if (!T) return;
    const chip = (id, extra) => {
      const li = document.createElement("li");
      li.dataset.node = id;
      li.textContent = shorten(nodeLabel(id), 18);
      li.title = nodeLabel(id);
      if (extra) li.className = extra;
      return li;
    };
    chips = { topo: new Map(), back: new Map(), shown: null };
    T.trace.topo.forEach((id) => { const li = chip(id); chips.topo.set(id, li); topo.append(li); });
    T.trace.topo.slice().reverse().forEach((id) => {
      const li = chip(id, id in T.stepOf || id === T.trace.output ? "" : "idle");
      chips.back.set(id, li);
      back.append(li);
    });
  }

  // Like the drawing, only the chips whose state changed since the last render are touched.
  function renderStrips() {
    if (!T || !chips) return;
    const fwd = inForward();
    const st = T.trace.steps[state.step];
    const topoChip = (id) => {
      const li = chips.topo.get(id);
      if (!li) return;
      const i = T.topoIndex[id];
      const cur = fwd && i === state.fwd;
      li.setAttribute("aria-current", cur ? "true" : "false");
      li.classList.toggle("done", fwd && i < state.fwd);
      li.classList.toggle("hover", id === state.hover);
    };
    const backChip = (id) => {
      const li = chips.back.get(id);
      if (!li) return;
      const cur = !fwd && st && st.node === id;
      li.setAttribute("aria-current", cur ? "true" : "false");
      const s = id === T.trace.output ? 0 : T.stepOf[id];
      li.classList.toggle("done", !fwd && s !== undefined && s < state.step && !cur);
      li.classList.toggle("hover", id === state.hover);
    };
    const prev = chips.shown && chips.shown.fwd === fwd ? chips.shown : null;
    chips.shown = { fwd, f: state.fwd, step: state.step, hover: state.hover };
    if (!prev) {
      chips.topo.forEach((li, id) => topoChip(id));
      chips.back.forEach((li, id) => backChip(id));
      return;
    }
    const ids = new Set([prev.hover, state.hover]);
    if (fwd) {
      const lo = Math.min(prev.f, state.fwd), hi = Math.max(prev.f, state.fwd);
      for (let i = lo; i <= hi; i++) ids.add(T.trace.topo[i]);
    } else {
      const lo = Math.min(prev.step, state.step), hi = Math.max(prev.step, state.step);
      for (let i = lo; i <= hi; i++) ids.add(T.trace.steps[i].node);
    }
    ids.forEach((id) => { if (id) { topoChip(id); backChip(id); } });
  }

  // ------------------------------------------------------------------------------------------
  // The sentence for the current step

  function who(id) {
    const n = T.byId[id];
    if (!n) return id;
    return n.text && n.text !== n.label && n.kind === "op" ? n.label + " = " + n.text : n.label;
  }

  function sentence() {
    if (!T) return "";
    if (inForward()) {
      const id = T.trace.topo[state.fwd];
      const n = T.byId[id];
      const value = n.shape.length ? shapeBadge(n.shape) : fmt(n.value);
      if (n.kind === "op" && n.text && n.text !== n.label) {
        return t("sent_forward_op", { node: n.label, text: n.text, value });
      }
      return t("sent_forward", { node: n.label, value });
    }
    const st = T.trace.steps[state.step];
    if (!st) return t("no_steps");
    const label = nodeLabel(st.node);
    if (st.kind === "seed" || state.step === 0) {
      if (T.trace.seeded_with_ones) return t("sent_seed_ones", { node: label, shape: shapeBadge(T.trace.shape) });
      return t("sent_seed", { node: label });
    }
    const terms = st.terms || [];
    if (!terms.length) return t("sent_none", { node: label });
    const parts = terms.map((term) => {
      const input = nodeLabel(term.input);
      const scalar = typeof term.contribution === "number";
      if (!scalar) {
        return t("sent_term_tensor", { rule: term.rule, shape: shapeBadge(shapeOf(term.contribution)), input });
      }
      let calc = fmt(term.contribution);
      const up = st.upstream;
      if (term.local !== null && term.local !== undefined && typeof up === "number" && !(term.rule === "ū" && term.local === 1)) {
        calc = fmt(up) + "·" + fmt(term.local) + " = " + calc;
      }
      let s = t("sent_term", { rule: term.rule, calc, input, before: fmt(term.before), after: fmt(term.after) });
      if (state.trace && T.trace.options && T.trace.options.accumulate === "assign" && term.before !== 0 && term.before !== null) {
        s += " " + t("sent_assign", { before: fmt(term.before) });
      }
      return s;
    });
    return who(st.node) + " " + parts.join(t("sent_join"));
  }

  // ------------------------------------------------------------------------------------------
  // Editor: highlight overlay (current node, hovered node, error), error box, value fields

  function spanToRange(src, span) {
    // 1-based line/column counting code points; end_column is exclusive.
    if (!span || !span.line) return null;
    const lines = src.split("\n").map(cps);
    let start = 0;
    for (let i = 0; i < span.line - 1 && i < lines.length; i++) start += lines[i].length + 1;
    const line = lines[span.line - 1] || [];
    let a = start + Math.max(0, (span.column || 1) - 1);
    let endLine = span.end_line || span.line;
    let end;
    if (span.end_column) {
      end = 0;
      for (let i = 0; i < endLine - 1 && i < lines.length; i++) end += lines[i].length + 1;
      end += span.end_column - 1;
    } else if (span.column) {
      end = a + 1;
    } else {
      a = start; end = start + line.length;
    }
    if (end <= a) end = a + 1;
    return [a, end];
  }

  function renderEditor() {
    const ta = $("#source"), hl = $("#editor-hl");
    if (!ta || !hl) return;
    if (ta.value !== state.source && document.activeElement !== ta) ta.value = state.source;
    const src = ta.value;
    const chars = cps(src);
    const marks = new Uint8Array(chars.length + 1);
    const paint = (range, bit) => {
      if (!range) return;
      for (let i = range[0]; i < Math.min(range[1], chars.length + 1); i++) marks[i] |= bit;
    };
    if (T && !state.stale) {
      const fwd = inForward();
      const curId = fwd ? T.trace.topo[state.fwd] : (T.trace.steps[state.step] || {}).node;
      const cur = T.byId[curId];
      if (cur) paint(spanToRange(src, cur.span), 1);
      const hov = state.hover && T.byId[state.hover];
      if (hov) paint(spanToRange(src, hov.span), 2);
    }
    if (state.error && state.error.line) paint(spanToRange(src, state.error), 4);
    const key = src + "\u0000" + marks.join(",");
    if (key === editorShown) return;
    editorShown = key;
    const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    let html = "", run = "", bits = 0;
    const flush = () => {
      if (!run) return;
      if (bits) {
        const cls = [bits & 4 ? "err" : "", bits & 2 ? "hov" : "", bits & 1 ? "cur" : ""].filter(Boolean).join(" ");
        html += '<mark class="' + cls + '">' + esc(run) + "</mark>";
      } else html += esc(run);
      run = "";
    };
    for (let i = 0; i <= chars.length; i++) {
      const ch = i < chars.length ? chars[i] : " ";
      if (marks[i] !== bits) { flush(); bits = marks[i]; }
      run += ch === "\n" && marks[i] ? " \n" : ch;
    }
    flush();
    hl.innerHTML = html + "\n";
  }
  let editorShown = null;

  function renderError() {
    const box = $("#error-box");
    if (!box) return;
    const err = state.error;
    if (!err) { box.hidden = true; box.replaceChildren(); return; }
    box.hidden = false;
    const parts = [];
    const title = document.createElement("strong");
    title.textContent = t("error_title");
    parts.push(title, document.createElement("br"));
    if (err.line) {
      const where = document.createElement("span");
      where.className = "where";
      where.textContent = t("error_at", { line: err.line, column: err.column || 1 }) + ": ";
      parts.push(where);
    }
    const msg = document.createElement("span");
    msg.className = "msg";
    msg.textContent = err.message;
    parts.push(msg);
    const srcLines = state.source.split("\n");
    if (err.line && srcLines[err.line - 1] !== undefined) {
      const line = cps(srcLines[err.line - 1]);
      const col = Math.max(1, err.column || 1);
      const endCol = err.end_line && err.end_line !== err.line ? line.length + 1 : err.end_column || col + 1;
      const gutter = String(err.line) + " | ";
      const pad = line.slice(0, col - 1).map((c) => (/[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(c) ? "\u3000" : c === "\t" ? "\t" : " ")).join("");
      const pre = document.createElement("pre");
      const caret = document.createElement("span");
      caret.className = "caret";
      caret.textContent = "^".repeat(Math.max(1, endCol - col));
      pre.append(gutter + line.join("") + "\n" + " ".repeat(gutter.length) + pad, caret);
      parts.push(pre);
    }
    box.replaceChildren(...parts);
  }

  function buildValueFields() {
    const host = $("#value-fields");
    if (!host) return;
    const free = (T && T.trace.free) || [];
    const fs = $("#values");
    if (fs) fs.hidden = !free.length;
    const focused = document.activeElement && host.contains(document.activeElement) ? document.activeElement.dataset.name : null;
    if (focused) return; // do not rebuild under the student's cursor
    host.replaceChildren();
    free.forEach((f) => {
      const label = document.createElement("label");
      const name = document.createElement("span");
      name.textContent = f.name + " =";
      const input = document.createElement("input");
      input.dataset.name = f.name;
      const given = Object.prototype.hasOwnProperty.call(state.values, f.name);
      if (typeof f.value === "number") {
        input.type = "number";
        input.step = "any";
        input.value = given ? String(state.values[f.name]) : String(f.value);
      } else {
        input.type = "text";
        input.value = JSON.stringify(given ? state.values[f.name] : f.value);
      }
      input.setAttribute("aria-label", f.name);
      label.append(name, input);
      if (!given) {
        const d = document.createElement("span");
        d.className = "default";
        d.textContent = "(" + t("default_value") + ")";
        label.append(d);
      }
      host.append(label);
    });
  }

  // ------------------------------------------------------------------------------------------
  // Controls, language, address bar

  function renderControls() {
    const max = maxPos();
    const p = pos();
    const slider = $("#step-slider");
    if (slider) { slider.max = String(max); slider.value = String(p); slider.disabled = !T; }
    const label = $("#step-label");
    if (label) {
      label.textContent = !T ? "" : inForward()
        ? t("fwd_of", { k: state.fwd + 1, n: T.trace.topo.length })
        : t("step_of", { k: state.step, n: T.N });
    }
    const dis = (sel, v) => { const b = $(sel); if (b) b.disabled = v; };
    dis("#btn-first", !T || p <= 0);
    dis("#btn-back", !T || p <= 0);
    dis("#btn-next", !T || p >= max);
    dis("#btn-last", !T || p >= max);
    const play = $("#btn-play");
    if (play) {
      play.classList.toggle("playing", state.playing);
      play.setAttribute("aria-pressed", state.playing ? "true" : "false");
      const key = state.playing ? "pause" : "play";
      play.setAttribute("aria-label", t(key)); play.title = t(key);
      play.dataset.i18nAria = key; play.dataset.i18nTitle = key;
      play.disabled = !T;
    }
    const fm = $("#forward-mode");
    if (fm) fm.checked = state.forwardMode;
    const cr = $("#collapse-row");
    if (cr) cr.hidden = !state.collapsible;
    const cl = $("#collapse-loops");
    if (cl) cl.checked = !!state.collapsed;
    const cn = $("#collapse-note");
    if (cn) cn.hidden = !(state.collapsed && state.collapse !== true);
    const ex = $("#explain");
    if (ex) { const s = sentence(); if (ex.textContent !== s) ex.textContent = s; }
    const graph = $("#graph");
    if (graph) graph.classList.toggle("stale", state.stale);
    const note = $("#stale-note");
    if (note) note.hidden = !state.stale;
    document.body.classList.toggle("present", state.present);
    document.body.classList.toggle("show-editor", state.showEditor);
    const pb = $("#present-btn");
    if (pb) { pb.setAttribute("aria-pressed", state.present ? "true" : "false"); pb.dataset.i18n = state.present ? "present_exit" : "present"; }
    const eb = $("#editor-btn");
    if (eb) eb.setAttribute("aria-pressed", state.showEditor ? "true" : "false");
    const acc = $("#accumulate"); if (acc && acc.value !== state.accumulate) acc.value = state.accumulate;
    const ord = $("#order"); if (ord && ord.value !== state.order) ord.value = state.order;
  }

  let renderedLang = null;
  function renderLang() {
    if (renderedLang === state.lang) return;
    renderedLang = state.lang;
    document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
    document.title = t("title");
    $$("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
    $$("[data-i18n-aria]").forEach((el) => el.setAttribute("aria-label", t(el.dataset.i18nAria)));
    $$("[data-i18n-title]").forEach((el) => { el.title = t(el.dataset.i18nTitle); });
    $$("#examples option[data-title-en]").forEach((o) => { o.textContent = o.dataset["title" + (state.lang === "zh" ? "Zh" : "En")]; });
    $$(".lang button").forEach((b) => b.setAttribute("aria-pressed", b.dataset.lang === state.lang ? "true" : "false"));
    buildTable(); // row headers are words
    buildValueFields();
    renderError();
  }

  function formatValues(values) {
    const keys = Object.keys(values);
    if (!keys.length) return null;
    if (keys.every((k) => typeof values[k] === "number")) return keys.map((k) => k + "=" + values[k]).join(",");
    return JSON.stringify(values);
  }

  function enc(s) {
    return encodeURIComponent(s).replace(/%2C/g, ",").replace(/%3D/g, "=").replace(/%3A/g, ":").replace(/%2A/g, "*");
  }

  const zCache = new Map();
  async function deflate(source) {
    if (zCache.has(source)) return zCache.get(source);
    if (!window.CompressionStream) return null;
    const stream = new Blob([new TextEncoder().encode(source)]).stream().pipeThrough(new CompressionStream("deflate-raw"));
    const buf = new Uint8Array(await new Response(stream).arrayBuffer());
    let bin = "";
    buf.forEach((b) => { bin += String.fromCharCode(b); });
    const z = btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    zCache.set(source, z);
    return z;
  }

  function queryPairs(opts) {
    opts = opts || {};
    const pairs = [["v", "1"]];
    const long = enc(state.source).length > LONG_SOURCE;
    const z = long ? zCache.get(state.source) : null;
    if (z) pairs.push(["z", z]); else pairs.push(["source", state.source]);
    const vals = formatValues(state.values);
    if (vals) pairs.push(["values", vals]);
    if (state.accumulate !== "add") pairs.push(["accumulate", state.accumulate]);
    if (state.order !== "dfs") pairs.push(["order", state.order]);
    if (T && !(opts.noStep)) {
      if (inForward() && !opts.backwardOnly) pairs.push(["fwd", String(state.fwd)]);
      else pairs.push(["step", String(state.step)]);
    }
    if (state.lang !== "en") pairs.push(["lang", state.lang]);
    if (state.present && !opts.noPresent) pairs.push(["present", "1"]);
    if (state.collapse != null) pairs.push(["collapse", state.collapse ? "1" : "0"]);
    if (window.gradtraceLessons && !opts.backwardOnly) pairs.push(...window.gradtraceLessons.pairs()); // static/lessons.js
    return pairs.map(([k, v]) => k + "=" + enc(v)).join("&");
  }

  async function ensureCompressed() {
    if (enc(state.source).length > LONG_SOURCE && !zCache.has(state.source)) {
      try { await deflate(state.source); } catch (e) { /* fall back to plain source */ }
    }
  }

  function renderHash() {
    if (!T || location.protocol === "about:") return; // a notebook's iframe has no address
    const want = "#step=" + state.step;
    if (location.hash === want) return;
    try { history.replaceState(null, "", want); } catch (e) { /* an opaque origin may refuse */ }
  }

  let urlTimer = null;
  function renderUrl() {
    if (STANDALONE) { renderHash(); return; }
    clearTimeout(urlTimer);
    urlTimer = setTimeout(async () => {
      await ensureCompressed();
      const url = location.pathname + "?" + queryPairs();
      if (url !== location.pathname + location.search) history.replaceState(null, "", url);
    }, 0);
  }

  // ------------------------------------------------------------------------------------------
  // render(): everything that depends on state

  let renderedTrace = null;
  function render() {
    if (state.trace !== renderedTrace) {
      renderedTrace = state.trace;
      T = prepareTrace(state.trace);
      buildTable();
      buildStrips();
      buildValueFields();
    }
    renderLang();
    renderGraph();
    renderTable();
    renderStrips();
    renderEditor();
    renderError();
    renderControls();
    renderUrl();
    document.dispatchEvent(new CustomEvent("gradtrace:render")); // static/lessons.js follows
  }

  // ------------------------------------------------------------------------------------------
  // Running a program

  let runSeq = 0;
  async function rerun() {
    const seq = ++runSeq;
    state.running = true;
    let resp, body;
    try {
      resp = await fetch("/api/render", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({
          source: state.source,
          values: state.values,
          accumulate: state.accumulate,
          order: state.order,
          keep_values: true,
          collapse: state.collapse,
          lang: state.lang,
        }),
      });
      body = await resp.json();
    } catch (e) {
      if (seq !== runSeq) return;
      setState({ running: false, error: { message: String(e && e.message ? e.message : e) }, stale: !!state.trace });
      return;
    }
    if (seq !== runSeq) return; // a newer edit is on its way
    if (!resp.ok || body.error) {
      const err = body.error || { message: "HTTP " + resp.status };
      const patch = { running: false, error: err, stale: !!state.trace };
      if (body.values) patch.values = body.values;
      setState(patch);
      return;
    }
    const trace = body.trace;
    const N = trace.steps.length - 1;
    const step = Math.min(state.step, N); // keep the step when the new program has it
    const fwd = state.forwardMode && state.fwd != null ? Math.min(state.fwd, trace.topo.length - 1) : null;
    if (body.svg) replaceSvg(body.svg); else if (body.draw_error) showDrawError(body.draw_error);
    state.contrast = body.contrast;
    state.collapsed = body.collapsed || null;
    state.collapsible = !!body.collapsible;
    setState({
      running: false,
      trace,
      drawError: body.draw_error,
      error: null,
      stale: false,
      step,
      fwd,
      values: body.values || state.values,
      hover: null,
    });
  }

  let editTimer = null;
  function scheduleRun(delay) {
    if (STANDALONE) return; // nothing to re-run against
    clearTimeout(editTimer);
    editTimer = setTimeout(rerun, delay === undefined ? 350 : delay);
  }

  // ------------------------------------------------------------------------------------------
  // Play

  let playTimer = null;
  function setPlaying(on) {
    clearInterval(playTimer);
    playTimer = null;
    if (on) {
      if (pos() >= maxPos()) setPos(0);
      playTimer = setInterval(() => {
        if (pos() >= maxPos()) { setPlaying(false); return; }
        setPos(pos() + 1);
      }, state.speed);
    }
    setState({ playing: on });
  }

  // ------------------------------------------------------------------------------------------
  // Sharing

  function status(msg) {
    const s = $("#share-status");
    if (s) s.textContent = msg;
  }

  async function copyText(text) {
    const box = $("#share-text");
    if (box) box.value = text;
    try {
      await navigator.clipboard.writeText(text);
      status(t("copied"));
    } catch (e) {
      if (box) { box.focus(); box.select(); }
      status(t("copy_failed"));
    }
  }

  async function permalinkUrl(path) {
    await ensureCompressed();
    return location.origin + (path || "/") + "?" + queryPairs(path === "/embed" ? { noPresent: true } : {});
  }

  async function download(kind) {
    await ensureCompressed();
    const url = "/api/svg?" + queryPairs({ backwardOnly: true, noPresent: true });
    const resp = await fetch(url);
    const svgText = await resp.text();
    const name = "gradtrace-step-" + state.step;
    if (kind === "svg") {
      saveBlob(new Blob([svgText], { type: "image/svg+xml" }), name + ".svg");
      return;
    }
    const blobUrl = URL.createObjectURL(new Blob([svgText], { type: "image/svg+xml" }));
    const img = new Image();
    img.onload = () => {
      const scale = 2;
      const canvas = document.createElement("canvas");
      canvas.width = Math.max(1, Math.round(img.naturalWidth * scale));
      canvas.height = Math.max(1, Math.round(img.naturalHeight * scale));
      const ctx = canvas.getContext("2d");
      ctx.fillStyle = "#fff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      URL.revokeObjectURL(blobUrl);
      canvas.toBlob((b) => { if (b) saveBlob(b, name + ".png"); }, "image/png");
    };
    img.onerror = () => { URL.revokeObjectURL(blobUrl); status("PNG failed"); };
    img.src = blobUrl;
  }

  function saveBlob(blob, filename) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = filename;
    document.body.append(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  // ------------------------------------------------------------------------------------------
  // Wiring

  function on(sel, ev, fn) {
    const el = typeof sel === "string" ? $(sel) : sel;
    if (el) el.addEventListener(ev, fn);
  }

  function isTyping(el) {
    if (!el) return false;
    const tag = el.tagName;
    return tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable ||
      (tag === "INPUT" && !["button", "checkbox", "radio"].includes(el.type));
  }

  function wire() {
    on("#btn-first", "click", () => setPos(0));
    on("#btn-back", "click", () => setPos(pos() - 1));
    on("#btn-next", "click", () => setPos(pos() + 1));
    on("#btn-last", "click", () => setPos(maxPos()));
    on("#btn-play", "click", () => setPlaying(!state.playing));
    on("#speed", "change", (ev) => { state.speed = Number(ev.target.value) || 800; if (state.playing) setPlaying(true); });
    on("#step-slider", "input", (ev) => setPos(Number(ev.target.value)));
    on("#forward-mode", "change", (ev) => {
      const onFwd = ev.target.checked;
      setState({ forwardMode: onFwd, fwd: onFwd ? 0 : null, step: onFwd ? 0 : state.step });
    });
    document.addEventListener("keydown", (ev) => {
      if (ev.altKey || ev.ctrlKey || ev.metaKey || isTyping(ev.target)) return;
      if (ev.target && ev.target.type === "range") return; // the slider steps by itself
      const k = ev.key;
      if (k === "ArrowRight" || k === "PageDown") setPos(pos() + 1);
      else if (k === "ArrowLeft" || k === "PageUp") setPos(pos() - 1);
      else if (k === "Home") setPos(0);
      else if (k === "End") setPos(maxPos());
      else return;
      ev.preventDefault();
    });

    const ta = $("#source");
    if (ta) {
      ta.addEventListener("input", () => {
        state.source = ta.value;
        renderEditor();
        const hl = $("#editor-hl");
        if (hl) { hl.scrollTop = ta.scrollTop; hl.scrollLeft = ta.scrollLeft; }
        scheduleRun();
      });
      ta.addEventListener("scroll", () => {
        const hl = $("#editor-hl");
        if (hl) { hl.scrollTop = ta.scrollTop; hl.scrollLeft = ta.scrollLeft; }
      });
      ta.addEventListener("mousemove", (ev) => {
        if (!T || state.stale) return;
        const id = nodeAtPoint(ta, ev);
        if (id !== state.hover) setHover(id);
      });
      ta.addEventListener("mouseleave", () => setHover(null));
    }
    on("#value-fields", "input", (ev) => {
      const input = ev.target;
      const name = input.dataset && input.dataset.name;
      if (!name) return;
      const raw = input.value.trim();
      if (raw === "") delete state.values[name];
      else if (input.type === "number") {
        const v = Number(raw);
        if (!Number.isFinite(v)) return;
        state.values[name] = v;
      } else {
        try { state.values[name] = JSON.parse(raw); } catch (e) { return; }
      }
      scheduleRun(300);
    });
    on("#accumulate", "change", (ev) => { state.accumulate = ev.target.value; scheduleRun(0); });
    on("#order", "change", (ev) => { state.order = ev.target.value; scheduleRun(0); });
    on("#collapse-loops", "change", (ev) => { state.collapse = ev.target.checked; scheduleRun(0); });
    on("#examples", "change", (ev) => {
      const ex = boot.examples.find((e) => e.id === ev.target.value);
      if (!ex) return;
      state.source = ex.source;
      state.values = Object.assign({}, ex.values);
      state.step = 0;
      state.fwd = state.forwardMode ? 0 : null;
      const ta2 = $("#source");
      if (ta2) ta2.value = ex.source;
      renderEditor();
      scheduleRun(0);
    });
    $$(".lang button").forEach((b) => b.addEventListener("click", () => {
      setState({ lang: b.dataset.lang });
      if (state.collapsed) scheduleRun(0); // the loop's box is labelled by the server
    }));
    on("#present-btn", "click", () => {
      const present = !state.present;
      try {
        if (present && document.documentElement.requestFullscreen && !document.fullscreenElement) {
          document.documentElement.requestFullscreen().catch(() => {});
        } else if (!present && document.fullscreenElement) {
          document.exitFullscreen().catch(() => {});
        }
      } catch (e) { /* full screen is a nicety */ }
      setState({ present, showEditor: false });
      renderedLang = null; renderLang(); // the button's words changed
      requestAnimationFrame(fitGraph);
    });
    on("#editor-btn", "click", () => { setState({ showEditor: !state.showEditor }); requestAnimationFrame(fitGraph); });
    on("#copy-link", "click", async () => copyText(await permalinkUrl("/")));
    on("#copy-embed", "click", async () => {
      const w = Math.max(200, Math.min(3000, Number($("#embed-w").value) || 800));
      const h = Math.max(150, Math.min(3000, Number($("#embed-h").value) || 520));
      const src = await permalinkUrl("/embed");
      const code = '<iframe src="' + src.replace(/&/g, "&amp;").replace(/"/g, "&quot;") + '" width="' + w + '" height="' + h +
        '" title="gradtrace" loading="lazy" style="border:1px solid #d0d7de;border-radius:6px"></iframe>';
      copyText(code);
    });
    on("#download-svg", "click", () => download("svg"));
    on("#download-png", "click", () => download("png"));

    // Hovering the table or the strips lights the node and its source.
    const hoverFrom = (ev) => {
      const el = ev.target.closest && ev.target.closest("[data-node]");
      setHover(el ? el.dataset.node : null);
    };
    ["#grad-table", "#topo-strip", "#backward-strip"].forEach((sel) => {
      on(sel, "mouseover", hoverFrom);
      on(sel, "mouseleave", () => setHover(null));
    });
    // Copying from the table gives the exact values, not the rounded ones on show.
    document.addEventListener("copy", (ev) => {
      const sel = document.getSelection();
      const table = $("#grad-table");
      if (!sel || sel.isCollapsed || !table || !table.contains(sel.anchorNode)) return;
      const rows = [];
      $$("tr", table).forEach((tr) => {
        const cells = [...tr.cells].filter((c) => sel.containsNode(c, true));
        if (cells.length) rows.push(cells.map((c) => (c.tagName === "TD" && c.title ? c.title : c.textContent)).join("\t"));
      });
      if (!rows.length || !ev.clipboardData) return;
      ev.clipboardData.setData("text/plain", rows.join("\n"));
      ev.preventDefault();
    });
    const tableBox = $("#grad-table") && $("#grad-table").closest(".table-scroll");
    if (tableBox) tableBox.addEventListener("scroll", followTableScroll, { passive: true });
    window.addEventListener("resize", followTableScroll);
    on("#grad-table", "click", (ev) => {
      const tr = ev.target.closest && ev.target.closest("tbody tr");
      if (tr && tr.dataset.step !== undefined) { state.fwd = null; setPos(fwdCount() + Number(tr.dataset.step)); }
    });
    const chipClick = (ev) => {
      const li = ev.target.closest && ev.target.closest("li[data-node]");
      if (li) jumpToNode(li.dataset.node);
    };
    on("#topo-strip", "click", chipClick);
    on("#backward-strip", "click", chipClick);
    wireGraph();
  }

  // The node whose source span is innermost at the mouse position in the editor.
  let charBox = null;
  function nodeAtPoint(ta, ev) {
    if (!charBox) {
      const probe = document.createElement("span");
      const cs = getComputedStyle(ta);
      probe.style.font = cs.font;
      probe.style.position = "absolute";
      probe.style.visibility = "hidden";
      probe.style.whiteSpace = "pre";
      probe.textContent = "0".repeat(40);
      document.body.append(probe);
      charBox = { w: probe.getBoundingClientRect().width / 40, h: parseFloat(cs.lineHeight) || 20, pl: parseFloat(cs.paddingLeft), pt: parseFloat(cs.paddingTop) };
      probe.remove();
    }
    const r = ta.getBoundingClientRect();
    const line = Math.floor((ev.clientY - r.top - charBox.pt + ta.scrollTop) / charBox.h) + 1;
    const col = Math.floor((ev.clientX - r.left - charBox.pl + ta.scrollLeft) / charBox.w) + 1;
    let best = null, bestLen = Infinity;
    T.trace.nodes.forEach((n) => {
      const s = n.span;
      if (!s || n.kind === "const") return;
      const inside = (line > s.line || (line === s.line && col >= s.column)) &&
        (line < s.end_line || (line === s.end_line && col < s.end_column));
      if (!inside) return;
      const len = (s.end_line - s.line) * 1000 + (s.end_column - s.column);
      if (len < bestLen) { best = n.id; bestLen = len; }
    });
    return best;
  }

  // ------------------------------------------------------------------------------------------
  // Start

  function start() {
    const atStep = STANDALONE && /^#step=(\d+)$/.exec(location.hash);
    if (atStep) state.step = Number(atStep[1]);
    if (state.trace) {
      const N = state.trace.steps.length - 1;
      state.step = Math.max(0, Math.min(N, state.step));
      if (state.forwardMode) state.fwd = Math.max(0, Math.min(state.trace.topo.length - 1, state.fwd || 0));
    }
    prepareSvg();
    wire();
    render();
    // A read-only handle for tests and course-note scripts.
    window.gradtrace = Object.freeze({ fmt, get state() { return state; }, setPos, maxPos });
    document.documentElement.classList.add("js-ready");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
