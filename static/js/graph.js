/* The drawing's box: the laid-out SVG (Graphviz's, from the server), its elements found once,
 * and its view: zoom and pan by moving the viewBox; fit shows all of it, small graphs scaled up
 * only so far. Presented beside the controls, the box fills the screen's free height whatever
 * it holds (and may scale up further), so the two directions of a drawing compare in it
 * (layout.js).
 * graph_style.js restyles it for each step; graph_input.js wires the mouse and touch. */
import { EMBED, FIT_CONTENT } from "./boot.js";
import { $, $$ } from "./dom.js";
import { t } from "./i18n.js";
import { state } from "./store.js";
import { T, currentNode } from "./trace.js";

let drawing = null; // the drawing's elements, by prepareSvg()

// The drawing on show: its svg, nodes, edges, boxes and view box, or null.
export function G() { return drawing; }

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
  drawing = { svg, nodes, edges, boxes, hasBoxes: Object.keys(boxes).length > 0, base: { x: vb[0], y: vb[1], w: vb[2], h: vb[3] }, view: null, userZoom: false, layout };
  fitGraph();
}

// An SVG text as an element of this page, or null when it is not one.
export function parseSvg(svgText) {
  if (!svgText) return null;
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg" || doc.querySelector("parsererror")) return null;
  return document.importNode(svg, true);
}

export function replaceSvg(svgText) {
  showSvg(parseSvg(svgText));
}

// Put a drawing (an element from parseSvg, or one shown before) in the box.
export function showSvg(svg) {
  const host = $("#graph");
  if (!svg) { host.textContent = ""; drawing = null; return; }
  host.replaceChildren(svg);
  prepareSvg();
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

const MAX_SCALE = 2.2; // a 4-node graph should not fill a projector screen with one box
const PRESENT_MAX_SCALE = 3; // ... but in presentation it may fill more of one
const MIN_HEIGHT = 112; // px: room for the zoom buttons and a line of small boxes
const PAD = 8; // px of white round the drawing
const PRESENT_BOTTOM = 8; // px the presented box leaves under it, above the screen's edge
// Presentation puts the drawing beside the controls on a landscape screen (app.css has the
// same query), and above them on a portrait one.
export const PRESENT_SIDE = "(min-width: 761px) and (min-aspect-ratio: 1/1)";

const maxScale = () => (state.present ? PRESENT_MAX_SCALE : MAX_SCALE);

export function presentSide() {
  return state.present && !EMBED && window.matchMedia(PRESENT_SIDE).matches;
}

// The margins the fitted drawing keeps inside the box: the zoom buttons sit over its top edge.
function margins(host) {
  const zoom = host.parentElement && host.parentElement.querySelector(".zoom");
  const top = zoom ? zoom.offsetTop + zoom.offsetHeight + 4 : PAD;
  return { l: PAD, r: PAD, t: Math.max(PAD, top), b: PAD };
}

// The presented box's height: beside the controls, to the foot of the screen; above them (a
// phone), at most a share of it. The same whatever the drawing, so two drawings compare in it.
function presentHeight(host) {
  if (!presentSide()) return Math.round(window.innerHeight * 0.6);
  const top = host.getBoundingClientRect().top + window.scrollY;
  return Math.max(MIN_HEIGHT, Math.round(window.innerHeight - top - PRESENT_BOTTOM));
}

// The box's height for a drawing: the room it has, or (not beside the controls) what the
// drawing needs of it at the scale that fits, so no blank is left under a wide, flat graph.
// The most height the box may take: the presented box's, or a share of the screen.
function mostHeight(host) {
  if (state.present) return presentHeight(host);
  return FIT_CONTENT ? 640 : window.innerHeight * (window.innerWidth <= 760 ? 0.55 : 0.62);
}

function boxHeight(host, aw, m) {
  const b = drawing.base;
  if (presentSide()) return presentHeight(host);
  const most = mostHeight(host);
  const scale = Math.min(aw / b.w, maxScale(), Math.max(1, most - m.t - m.b) / b.h);
  return Math.round(Math.max(MIN_HEIGHT, b.h * scale + m.t + m.b));
}

// The scale at which a drawing of `size` ({w, h}) fits the box in full (what fitGraph shows).
export function fitScale(size) {
  const host = $("#graph");
  if (!host) return 0;
  const m = margins(host);
  const aw = Math.max(40, (host.clientWidth || 600) - m.l - m.r);
  // The room the box may have, not its height now (sized to the drawing on show), so that
  // two drawings of one graph compare fairly (layout.js).
  const ch = state.present && !EMBED ? presentHeight(host) : mostHeight(host);
  const ah = Math.max(40, ch - m.t - m.b);
  return Math.min(aw / size.w, ah / size.h, maxScale());
}

// The whole drawing in the box on first sight, at any width: scaled down to fit, and up to
// MAX_SCALE. On the page the box is as tall as the drawing needs at that scale (within a share
// of the screen), so no blank is left under a wide, flat graph; presented, it fills the screen.
export function fitGraph() {
  if (!drawing) return;
  const host = $("#graph");
  const cw = host.clientWidth || 600;
  const b = drawing.base;
  const m = margins(host);
  const aw = Math.max(40, cw - m.l - m.r);
  if (!EMBED) host.style.height = boxHeight(host, aw, m) + "px";
  const ch = host.clientHeight || 400;
  const ah = Math.max(40, ch - m.t - m.b);
  const scale = Math.min(aw / b.w, ah / b.h, maxScale());
  drawing.width = cw;
  drawing.view = {
    x: b.x - (m.l + (aw - b.w * scale) / 2) / scale,
    y: b.y - (m.t + (ah - b.h * scale) / 2) / scale,
    w: cw / scale,
    h: ch / scale,
  };
  drawing.userZoom = false;
  drawing.followed = null;
  applyView();
}

// Keep the node on show inside the box when the graph is larger than the box.
export function followCurrent() {
  if (!drawing || !T()) return;
  const cur = currentNode();
  if (!cur || drawing.followed === cur) return;
  drawing.followed = cur;
  const el = drawing.nodes[cur] ? drawing.nodes[cur].g : drawing.boxes[T().boxOf[cur]] && drawing.boxes[T().boxOf[cur]].g;
  const host = $("#graph");
  if (!el || !host.clientWidth) return;
  if (drawing.view.w >= drawing.base.w - 1 && drawing.view.h >= drawing.base.h - 1) return; // all of it is on show
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
  const v = drawing.view;
  drawing.svg.setAttribute("viewBox", [v.x, v.y, v.w, v.h].map((n) => n.toFixed(2)).join(" "));
  markHidden();
}

// The cue that part of the drawing is out of the box: a shadow on each side with more beyond
// it. While any is hidden a one-finger drag pans the drawing; otherwise it scrolls the page.
function markHidden() {
  const frame = $("#graph").parentElement;
  if (!frame) return;
  const v = drawing.view, b = drawing.base;
  const e = 0.5 * (v.w / ($("#graph").clientWidth || 1)); // half a pixel, in drawing units
  const sides = { l: v.x > b.x + e, r: v.x + v.w < b.x + b.w - e, t: v.y > b.y + e, b: v.y + v.h < b.y + b.h - e };
  Object.entries(sides).forEach(([side, on]) => frame.classList.toggle("more-" + side, on));
  drawing.clipped = Object.values(sides).some(Boolean);
  frame.classList.toggle("clipped", drawing.clipped);
}

export function zoomAt(f, px, py) {
  if (!drawing) return;
  const host = $("#graph");
  const cw = host.clientWidth, ch = host.clientHeight;
  const v = drawing.view;
  if (px === undefined) { px = cw / 2; py = ch / 2; }
  const sx = v.x + (px / cw) * v.w, sy = v.y + (py / ch) * v.h;
  const w = Math.max(20, Math.min(v.w / f, drawing.base.w * 20)), h = (w * v.h) / v.w;
  drawing.view = { x: sx - (px / cw) * w, y: sy - (py / ch) * h, w, h };
  drawing.userZoom = true;
  applyView();
}

function moveView(dx, dy) {
  const host = $("#graph");
  const v = drawing.view;
  v.x -= (dx * v.w) / host.clientWidth;
  v.y -= (dy * v.h) / host.clientHeight;
  applyView();
}

export function panBy(dx, dy) {
  if (!drawing) return;
  drawing.userZoom = true;
  moveView(dx, dy);
}
