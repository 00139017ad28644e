/* The drawing: the laid-out SVG (Graphviz's, from the server) and its elements, found once;
 * where its nodes are, in the drawing's units. Its box and its view (zoom, pan, following the
 * running node) are graph_view.js's; graph_style.js restyles it for each step; graph_input.js
 * wires the mouse and touch. */
import { $, $$ } from "./dom.js";
import { t } from "./i18n.js";
import { T, currentNode } from "./trace.js";

let drawing = null; // the drawing's elements, by prepareSvg()

// The drawing on show: its svg, nodes, edges, boxes and view box, or null.
export function G() { return drawing; }

// No drawing in the box (graph_view.js showSvg of none).
export function clearDrawing() { drawing = null; }

export function prepareSvg() {
  const host = $("#graph");
  const svg = host && host.querySelector("svg");
  if (!svg) { drawing = null; return; }
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  svg.setAttribute("role", "img");
  // The laid-out size, kept on the element: the view moves its viewBox, and a drawing put
  // back in the box (the other direction, layout.js) is prepared again.
  if (!svg.dataset.base) svg.dataset.base = svg.getAttribute("viewBox") || "0 0 100 100";
  const vb = svg.dataset.base.split(/[\s,]+/).map(Number);
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
  const layout = svg.querySelector("g.graph.tb") ? "tb" : "lr"; // engine/drawing/dot.py's class
  // The legend's arrows point as the drawing's do: the gradient goes back left, or up.
  $$(".legend .arrow").forEach((a) => { a.textContent = layout === "tb" ? "↑" : "←"; });
  // The size of a node's text in the drawing's units (engine/drawing/style.py FONT_SIZE).
  const head = svg.querySelector('g.node text[id$="-head"]') || svg.querySelector("g.node text");
  const fontUnits = (head && parseFloat(head.getAttribute("font-size"))) || 11;
  drawing = {
    svg, nodes, edges, boxes, hasBoxes: Object.keys(boxes).length > 0,
    base: { x: vb[0], y: vb[1], w: vb[2], h: vb[3] }, view: null, mode: "fit", userZoom: false,
    layout, fontUnits, matrix: graphMatrix(svg), where: {}, overview: null,
  };
}

// An SVG text as an element of this page, or null when it is not one.
export function parseSvg(svgText) {
  if (!svgText) return null;
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg" || doc.querySelector("parsererror")) return null;
  return document.importNode(svg, true);
}

export function showDrawError(err) {
  const host = $("#graph");
  const p = document.createElement("p");
  p.className = "draw-error";
  const strong = document.createElement("strong");
  strong.textContent = t("too_large");
  const msg = document.createElement("span");
  msg.textContent = err.message;
  p.append(strong, document.createElement("br"), msg);
  host.replaceChildren(p);
  drawing = null;
}

// The graph group's transform (Graphviz translates it), as the numbers that map a node's own
// box into the drawing's units.
function graphMatrix(svg) {
  const g = svg.querySelector("g.graph");
  const list = g && g.transform && g.transform.baseVal;
  const m = list && list.numberOfItems ? list.consolidate().matrix : null;
  return m ? { a: m.a, d: m.d, e: m.e, f: m.f } : { a: 1, d: 1, e: 0, f: 0 };
}

// An element's box in the drawing's units (the viewBox's), or null when it is not laid out.
export function boxIn(el) {
  let bb = null;
  try { bb = el.getBBox(); } catch (e) { return null; }
  if (!bb || (!bb.width && !bb.height)) return null;
  const m = drawing.matrix;
  return { x: m.a * bb.x + m.e, y: m.d * bb.y + m.f, w: m.a * bb.width, h: m.d * bb.height };
}

// The box of node `id` (or of the collapsed loop that holds it), kept once measured.
export function whereIs(id) {
  if (!id) return null;
  if (drawing.where[id]) return drawing.where[id];
  const box = T() && T().boxOf[id];
  const el = drawing.nodes[id] ? drawing.nodes[id].g : box && drawing.boxes[box] ? drawing.boxes[box].g : null;
  const r = el ? boxIn(el) : null;
  if (r) drawing.where[id] = r;
  return r;
}

export function currentBox() {
  return T() ? whereIs(currentNode()) : null;
}

// Every node's box, for the overview inset.
export function allBoxes() {
  if (!drawing.nodeBoxes) drawing.nodeBoxes = $$("g.node", drawing.svg).map(boxIn).filter(Boolean);
  return drawing.nodeBoxes;
}

// The boxes that must keep clear of the zoom buttons: the nodes and the edges' numbers.
export function partBoxes() {
  if (!drawing.partBoxes) drawing.partBoxes = allBoxes().concat($$("g.edge text", drawing.svg).map(boxIn).filter(Boolean));
  return drawing.partBoxes;
}
