/* The order strips: the topological order (#topo-strip) and the backward order
 * (#backward-strip), one chip per node: of the pass on show, in a program of several passes. */
import { $, on } from "./dom.js";
import { shorten } from "./format.js";
import { state } from "./store.js";
import { T, inForward, jumpToNode, nodeLabel, setHover } from "./trace.js";

let chips = null; // {topo: Map id -> li, back: Map id -> li, shown: {fwd, f, step, hover}}
export function buildStrips() {
  const topo = $("#topo-strip"), back = $("#backward-strip");
  chips = null;
  if (!topo || !back) return;
  topo.replaceChildren(); back.replaceChildren();
  if (!T()) return;
  const chip = (id, extra) => {
    const li = document.createElement("li");
    li.dataset.node = id;
    li.textContent = shorten(nodeLabel(id)); // labels are distinct at this length (engine/tracing/labels.py)
    li.title = nodeLabel(id);
    if (extra) li.className = extra;
    return li;
  };
  chips = { topo: new Map(), back: new Map(), shown: null };
  T().topo.forEach((id) => { const li = chip(id); chips.topo.set(id, li); topo.append(li); });
  T().topo.slice().reverse().forEach((id) => {
    const li = chip(id, id in T().stepOf || id === T().output ? "" : "idle");
    chips.back.set(id, li);
    back.append(li);
  });
}

// Like the drawing, only the chips whose state changed since the last render are touched.
export function renderStrips() {
  if (!T() || !chips) return;
  const fwd = inForward();
  const st = T().trace.steps[state.step];
  const topoChip = (id) => {
    const li = chips.topo.get(id);
    if (!li) return;
    const i = T().topoIndex[id];
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
    const s = id === T().output ? T().outputStep : T().stepOf[id];
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
    for (let i = lo; i <= hi; i++) ids.add(T().trace.topo[i]);
  } else {
    const lo = Math.min(prev.step, state.step), hi = Math.max(prev.step, state.step);
    for (let i = lo; i <= hi; i++) ids.add(T().trace.steps[i].node);
  }
  ids.forEach((id) => { if (id) { topoChip(id); backChip(id); } });
}


// Hovering the table or the strips lights the node and its source; a chip jumps to its node.
export function wireStrips() {
  const hoverFrom = (ev) => {
    const el = ev.target.closest && ev.target.closest("[data-node]");
    setHover(el ? el.dataset.node : null);
  };
  ["#grad-table", "#topo-strip", "#backward-strip"].forEach((sel) => {
    on(sel, "mouseover", hoverFrom);
    on(sel, "mouseleave", () => setHover(null));
  });
  const chipClick = (ev) => {
    const li = ev.target.closest && ev.target.closest("li[data-node]");
    if (li) jumpToNode(li.dataset.node);
  };
  on("#topo-strip", "click", chipClick);
  on("#backward-strip", "click", chipClick);
}
