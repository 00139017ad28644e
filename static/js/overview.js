/* The overview inset: while part of the drawing is out of its box, a small map of all of it in
 * the frame's corner, with the box's view and the running node marked on it. It is drawn from
 * the laid-out drawing's node boxes and edge paths (no second copy of the SVG, so every node
 * id stays unique on the page), once per drawing; a step moves two rectangles. A click on it
 * brings that part of the drawing into the box. aria-hidden: the drawing itself, its table and
 * the step's sentence say everything the map shows. */
import { $ } from "./dom.js";

const NS = "http://www.w3.org/2000/svg";
const MAX_W = 0.3; // the inset's largest width and height, as shares of the box
const MAX_H = 0.34;
const MOST_PX = { w: 240, h: 150 }; // ... and in CSS px (scaled with the page's type)
const LEAST_PX = 40; // the side a very long, thin drawing is never thinner than

function make(tag, attrs) {
  const e = document.createElementNS(NS, tag);
  Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, String(v)));
  return e;
}

// The inset of drawing `d` (graph.js's), built on first need and kept on it.
function build(d, boxes) {
  const frame = $("#graph").parentElement;
  let host = frame.querySelector(".overview");
  if (!host) {
    host = document.createElement("div");
    host.className = "overview";
    host.setAttribute("aria-hidden", "true");
    frame.append(host);
  }
  const b = d.base;
  const svg = make("svg", { viewBox: [b.x, b.y, b.w, b.h].join(" "), preserveAspectRatio: "xMidYMid meet" });
  const paper = make("rect", { x: b.x, y: b.y, width: b.w, height: b.h, class: "ov-paper" });
  const edges = make("g", { class: "ov-edges", transform: d.svg.querySelector("g.graph")?.getAttribute("transform") || "" });
  d.svg.querySelectorAll("g.edge > path").forEach((p) => edges.append(make("path", { d: p.getAttribute("d") || "" })));
  const nodes = make("g", { class: "ov-nodes" });
  Object.values(boxes).forEach((r) => nodes.append(make("rect", { x: r.x, y: r.y, width: r.w, height: r.h })));
  const cur = make("rect", { class: "ov-current", x: 0, y: 0, width: 0, height: 0 });
  const view = make("rect", { class: "ov-view", x: 0, y: 0, width: 0, height: 0 });
  svg.append(paper, edges, nodes, cur, view);
  host.replaceChildren(svg);
  return { host, svg, cur, view, for: d.svg };
}

// The inset's size in CSS px: the drawing's shape, within its share of the box.
function size(d, box) {
  const em = parseFloat(getComputedStyle(document.documentElement).fontSize) / 15 || 1;
  const mw = Math.min(box.w * MAX_W, MOST_PX.w * em), mh = Math.min(box.h * MAX_H, MOST_PX.h * em);
  const s = Math.min(mw / d.base.w, mh / d.base.h);
  return { w: Math.max(LEAST_PX, Math.round(d.base.w * s)), h: Math.max(LEAST_PX * 0.6, Math.round(d.base.h * s)) };
}

// Show or hide the inset of drawing `d`, and mark its view and the running node (`current`: a
// box in the drawing's units, or null). `boxes`: every node's box, asked only when first built.
export function renderOverview(d, on, current, boxes) {
  const frame = $("#graph") && $("#graph").parentElement;
  if (!frame) return;
  let ov = d.overview;
  if (!on) {
    if (ov) ov.host.hidden = true;
    else { const h = frame.querySelector(".overview"); if (h) h.hidden = true; }
    return;
  }
  if (!ov || ov.for !== d.svg || !ov.host.isConnected) ov = d.overview = build(d, boxes());
  ov.host.hidden = false;
  const host = $("#graph");
  const px = size(d, { w: host.clientWidth, h: host.clientHeight });
  ov.host.style.width = px.w + "px";
  ov.host.style.height = px.h + "px";
  const v = d.view, b = d.base;
  // The view, clipped to the drawing (a view wider than it is all of it on that side).
  const x0 = Math.max(b.x, v.x), y0 = Math.max(b.y, v.y);
  const x1 = Math.min(b.x + b.w, v.x + v.w), y1 = Math.min(b.y + b.h, v.y + v.h);
  [["x", x0], ["y", y0], ["width", Math.max(0, x1 - x0)], ["height", Math.max(0, y1 - y0)]].forEach(([k, val]) => ov.view.setAttribute(k, val.toFixed(1)));
  const c = current || { x: 0, y: 0, w: 0, h: 0 };
  [["x", c.x], ["y", c.y], ["width", c.w], ["height", c.h]].forEach(([k, val]) => ov.cur.setAttribute(k, val.toFixed(1)));
}

// The inset's rectangle on screen (for keeping the running node clear of it), or null.
export function overviewRect(d) {
  const ov = d && d.overview;
  return ov && !ov.host.hidden ? ov.host.getBoundingClientRect() : null;
}

// A click on the inset: the point of the drawing under it, in the drawing's units, or null.
export function overviewPoint(d, ev) {
  const ov = d && d.overview;
  if (!ov || ov.host.hidden || !ov.host.contains(ev.target)) return null;
  const ctm = ov.svg.getScreenCTM();
  if (!ctm) return null;
  const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(ctm.inverse());
  return { x: p.x, y: p.y };
}
