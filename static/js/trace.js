/* The trace on show, and everything derived from it once; the timeline through it.
 *
 * `T()` is derived from state.trace (by main.js, when the trace changes) and read by every view.
 * The timeline: optional forward positions (one per topo node), then the backward steps.
 * A program of several passes (`trace.passes`) has its steps across all of them, each step
 * with its `pass`; the views show the pass on show (its topo, its columns, its drawing).
 */
import { flat, zerosLike } from "./format.js";
import { setState, state } from "./store.js";

let derived = null;

// The trace on show with its indexes (byId, topoIndex, stepOf, cols ...), or null.
export function T() { return derived; }

export function deriveTrace() {
  derived = prepareTrace(state.trace);
  return derived;
}

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
  // Table columns: every node that has a grad, in backward (reverse topological) order. With
  // several passes, the pass on show's (colsOf).
  const onPath = trace.topo.slice().reverse().filter((id) => byId[id] && byId[id].grad !== null);
  const others = trace.nodes.filter((n) => n.grad !== null && !(n.id in topoIndex)).map((n) => n.id);
  const cols = onPath.concat(others);
  const passes = trace.passes && trace.passes.length > 1 ? trace.passes : null;
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
  const d = { trace, byId, topoIndex, edgeStep, stepOf, cols, gradScale, N, boxOf, zeros, cache: {}, passes, pass: null, topo: trace.topo, output: trace.output, outputStep: 0 };
  if (passes) choosePass(d, lastKept(passes));
  return d;
}

function lastKept(passes) {
  for (let k = passes.length - 1; k >= 0; k--) if (passes[k].kept) return k;
  return passes.length - 1;
}

// The pass whose topo, columns and drawing are on show: its nodes in backward order, then every
// leaf with a grad that it does not read (a leaf's column runs through every pass).
function choosePass(d, p) {
  const entry = d.passes[p];
  const topo = (entry && entry.topo) || d.trace.topo;
  const changed = new Set();
  d.trace.steps.forEach((st) => Object.keys(st.grads || {}).forEach((id) => changed.add(id)));
  const hasGrad = (id) => d.byId[id] && (d.byId[id].grad !== null || changed.has(id));
  const mine = topo.slice().reverse().filter(hasGrad);
  const inMine = new Set(mine);
  const leaves = d.trace.nodes.filter((n) => n.kind === "leaf" && !inMine.has(n.id) && hasGrad(n.id)).map((n) => n.id);
  d.cols = mine.concat(leaves);
  d.topo = topo;
  // A leaf's value as it was in the pass (an update between passes moves it).
  const before = (entry && entry.leaves_before) || {};
  d.leafValues = {};
  d.trace.nodes.forEach((n) => { if (n.kind === "leaf" && n.label in before) d.leafValues[n.id] = before[n.label]; });
  d.output = (entry && entry.output) || d.trace.output; // the pass's own output and its seed
  d.outputStep = (entry && entry.first_step) || 0;
  d.pass = p;

}

// The pass a step is in (null for a program of one pass).
export function passOf(step) {
  if (!derived || !derived.passes) return null;
  const st = derived.trace.steps[step];
  return st && st.pass != null ? st.pass : null;
}

// The pass on show: the step's, or (the forward pass, which walks the trace's topo) the last.
export function passOnShow() {
  if (!derived || !derived.passes) return null;
  if (inForward()) return derived.trace.passes.length - 1;
  return passOf(state.step);
}

// Make the pass on show the views' pass; true when it changed (its columns and strips are new).
export function followPass() {
  const p = passOnShow();
  if (p === null || p === derived.pass) return false;
  choosePass(derived, p);
  return true;
}

// Whether a node's grad is shown at a step: a leaf's always; another node's only in its pass.
export function inPassOf(id, step) {
  if (!derived || !derived.passes) return true;
  const n = derived.byId[id];
  if (!n || n.kind === "leaf" || n.pass == null) return true;
  return n.pass === passOf(step);
}

// The first step of pass k, or of the nearest kept pass when k's steps were summarised.
export function passFirstStep(k) {
  const ps = derived && derived.passes;
  if (!ps) return 0;
  let best = null;
  ps.forEach((p, i) => {
    if (p.kept && p.first_step != null && (best === null || Math.abs(i - k) < Math.abs(best - k))) best = i;
  });
  return best === null ? 0 : ps[best].first_step;
}

function maxAbs(v) {
  let m = 0;
  flat(v).forEach((x) => { m = Math.max(m, Math.abs(x)); });
  return m;
}

// The grads after step k: the running merge of the steps' deltas (from the grads after k-1
// when that is what was asked last, as when stepping forwards).
export function gradsAt(k) {
  const c = derived.cache;
  if (c.k === k) return c.grads;
  const steps = derived.trace.steps;
  const from = c.grads && c.k === k - 1 ? k : 0;
  const grads = Object.assign({}, from ? c.grads : derived.zeros);
  for (let i = from; i <= k && i < steps.length; i++) Object.assign(grads, steps[i].grads || {});
  derived.cache = { k, grads };
  return grads;
}

// A node's value in the pass on show: a leaf's as it was when the pass ran, else its own.
export function nodeValue(node) {
  const lv = derived && derived.leafValues;
  return lv && node.id in lv ? lv[node.id] : node.value;
}

export function nodeLabel(id) {
  const n = derived.byId[id];
  return n ? n.label : id;
}

// The node the current position runs (forward: computes; backward: sends grads from).
export function currentNode() {
  return inForward() ? derived.trace.topo[state.fwd] : (derived.trace.steps[state.step] || {}).node;
}

export function fwdCount() { return state.forwardMode && derived ? derived.trace.topo.length : 0; }
export function maxPos() { return derived ? fwdCount() + derived.N : 0; }
export function pos() { return state.forwardMode && state.fwd != null ? state.fwd : fwdCount() + state.step; }
export function setPos(p) {
  if (!derived) return;
  p = Math.max(0, Math.min(maxPos(), p));
  if (p < fwdCount()) setState({ fwd: p, step: 0 });
  else setState({ fwd: null, step: p - fwdCount() });
}
export function inForward() { return state.forwardMode && state.fwd != null; }

export function setHover(id) {
  if (state.hover !== id) setState({ hover: id });
}

// A click on a node (in the drawing or a strip): the position that runs it.
export function jumpToNode(id) {
  if (inForward()) {
    if (id in derived.topoIndex) setPos(derived.topoIndex[id]);
    return;
  }
  if (id in derived.stepOf) setPos(fwdCount() + derived.stepOf[id]);
}
