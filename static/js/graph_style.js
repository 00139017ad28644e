/* Restyling the drawing for the position on show. Only what differs from the state last drawn
 * is touched: a step changes a handful of nodes and edges (the node that runs, the grads it
 * writes, the edges it sends along), so a step costs the same on a 20-node graph and a
 * 1,000-node one. The first drawing of a trace, and turning the forward pass on or off,
 * restyle everything. */
import { setText } from "./dom.js";
import { exact, flat, fmt, shapeBadge, shorten } from "./format.js";
import { G } from "./graph.js";
import { followCurrent } from "./graph_view.js";
import { heatColour, heatGrid } from "./heat.js";
import { state } from "./store.js";
import { T, gradsAt, inForward, nodeValue } from "./trace.js";

function headText(node, marker, pending) {
const label = shorten(node.label || node.id);
if (node.shape && node.shape.length) return marker + label + "  " + shapeBadge(node.shape);
return marker + label + " = " + (pending ? "?" : fmt(nodeValue(node)));
}

export function renderGraph() {
  if (!G() || !T()) return;
  requestAnimationFrame(followCurrent); // zoomed in or following: the running node stays in view
  const fwd = inForward();
  const k = state.step;
  const st = T().trace.steps[k] || { node: null, grads: {} };
  const changed = fwd ? {} : st.grads || {};
  const current = fwd ? T().trace.topo[state.fwd] : st.node;
  const ctx = { fwd, k, f: state.fwd, grads: gradsAt(k), changed, current };
  const prev = G().shown && G().shown.T === T() && G().shown.fwd === fwd ? G().shown : null;
  G().shown = { T: T(), fwd, k, f: state.fwd, hover: state.hover, current, changed };
  const ix = drawingIndex();
  if (!prev) {
    Object.keys(G().nodes).forEach((id) => styleNode(id, G().nodes[id], ctx));
    G().edges.forEach((e) => styleEdge(e, ctx));
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
      const id = T().trace.topo[i];
      nodes.add(id);
      (ix.edgesInto[id] || []).forEach((e) => edges.add(e));
    }
  } else {
    // From step a to step b: the edges of the steps between change (future, active, sent),
    // and so do the grads the steps between wrote.
    const lo = Math.min(prev.k, k), hi = Math.max(prev.k, k);
    for (let i = lo; i <= hi; i++) {
      (ix.edgesAt[i] || []).forEach((e) => edges.add(e));
      if (i > lo) Object.keys(T().trace.steps[i].grads || {}).forEach((id) => nodes.add(id));
    }
  }
  nodes.forEach((id) => { if (id && G().nodes[id]) styleNode(id, G().nodes[id], ctx); });
  edges.forEach((e) => styleEdge(e, ctx));
  if (G().hasBoxes) styleBoxes(ctx);
}

// The drawing's edges by the step that sends along them and by the node they feed.
function drawingIndex() {
  if (G().ix && G().ix.T === T()) return G().ix;
  const edgesAt = {}, edgesInto = {};
  G().edges.forEach((e) => {
    const s = T().edgeStep[e.id];
    if (s !== undefined) (edgesAt[s] = edgesAt[s] || []).push(e);
    (edgesInto[e.consumer] = edgesInto[e.consumer] || []).push(e);
  });
  G().ix = { T: T(), edgesAt, edgesInto };
  return G().ix;
}

function doneFwd(id, ctx) {
  return !ctx.fwd || !(id in T().topoIndex) || T().topoIndex[id] <= ctx.f;
}

function styleNode(id, el, ctx) {
  const node = T().byId[id];
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
    const scale = T().gradScale[id] || 0;
    el.gheat.forEach((r, i) => r.setAttribute("fill", heatColour(cells[i] || 0, scale)));
  }
  if (el.title) {
    const lines = [node.label + (node.text && node.text !== node.label ? " = " + node.text : "")];
    lines.push("value " + exact(nodeValue(node)));
    if (g !== undefined && !fwd) lines.push("grad " + exact(g));
    setText(el.title, lines.join("\n"));
  }
}

function styleEdge(e, ctx) {
  const s = T().edgeStep[e.id];
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
  Object.entries(G().boxes).forEach(([id, box]) => {
    const isCur = T().boxOf[ctx.current] === id;
    box.g.classList.toggle("current", isCur);
    box.g.classList.toggle("changed", changedIds.some((c) => T().boxOf[c] === id));
    if (box.head) setText(box.head, (isCur ? "▶ " : "") + box.text);
  });
}
