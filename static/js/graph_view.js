/* The drawing's box and its view: zoom and pan by moving the viewBox.
 *
 * The view is readable first. Each place has a least size of node text (READABLE_PX: the page,
 * a phone, presentation in proportion to the screen). When the whole drawing fits its box at
 * that size or larger, all of it is on show ("fit"). When it does not, the box takes all the
 * room it may and the view follows the running node at the readable size ("follow"), with an
 * overview inset (overview.js) saying where in the drawing it is; ⤢ shows the whole drawing at
 * whatever size fits ("whole"). Zooming ("user") grows the box, up to a share of the screen,
 * and stepping still brings the running node into view. Presented beside the controls, the box
 * fills the screen's free height whatever it holds, so the two directions of a drawing compare
 * in it (layout.js).
 * graph_style.js restyles it for each step; graph_input.js wires the mouse and touch. */
import { EMBED, FIT_CONTENT, FIT_FRAME } from "./boot.js";
import { $ } from "./dom.js";
import { G, allBoxes, clearDrawing, currentBox, parseSvg, partBoxes, prepareSvg } from "./graph.js";
import { overviewRect, renderOverview } from "./overview.js";
import { state } from "./store.js";
import { T, currentNode } from "./trace.js";

export function replaceSvg(svgText) {
  showSvg(parseSvg(svgText));
}

// Put a drawing (an element from parseSvg, or one shown before) in the box.
export function showSvg(svg) {
  const host = $("#graph");
  if (!svg) { host.textContent = ""; clearDrawing(); return; }
  host.replaceChildren(svg);
  prepareSvg();
  fitGraph();
}

const MAX_SCALE = 2.2; // a 4-node graph should not fill a projector screen with one box
const PRESENT_MAX_SCALE = 3; // ... but in presentation it may fill more of one
const MIN_HEIGHT = 112; // px: room for the zoom buttons and a line of small boxes
const PAD = 8; // px of white round the drawing
const PRESENT_BOTTOM = 8; // px the presented box leaves under it, above the screen's edge
const PHONE_WIDTH = 760; // px: up to this width the page is one column (app.css)
// The least size of a node's text, in CSS px, that each place is read at: the page from a
// desk, a phone in the hand, and presentation from the back row of a room, for a 1280×720
// screen, in proportion to the screen (a projector shows any resolution at the same size).
export const READABLE_PX = { page: 12, phone: 10, present: 20 };
const PRESENT_SCREEN = { w: 1280, h: 720 };
const ZOOM_MOST = 0.85; // zoomed in, the box may grow to this share of the screen's height
const FOLLOW_MARGIN = 16; // px the running node is kept inside the box's edges
// Presentation puts the drawing beside the controls on a landscape screen (app.css has the
// same query), and above them on a portrait one.
export const PRESENT_SIDE = "(min-width: 761px) and (min-aspect-ratio: 1/1)";

const maxScale = () => (state.present ? PRESENT_MAX_SCALE : MAX_SCALE);

export function presentSide() {
  return state.present && !EMBED && window.matchMedia(PRESENT_SIDE).matches;
}

// The least node text, in CSS px, for the place and screen the page is on.
export function readablePx() {
  if (state.present && !EMBED) {
    const k = Math.min(window.innerWidth / PRESENT_SCREEN.w, window.innerHeight / PRESENT_SCREEN.h);
    return Math.max(READABLE_PX.phone, READABLE_PX.present * k);
  }
  return onPhone() ? READABLE_PX.phone : READABLE_PX.page;
}

// A phone's screen (an iframe on a wide screen, a docs page's column, is no phone).
function onPhone() {
  const framed = window.top !== window.self;
  return (framed ? window.screen.width : Math.min(window.innerWidth, window.screen.width || Infinity)) <= PHONE_WIDTH;
}

// The scale (CSS px per drawing unit) at which node text is readablePx().
function readableScale() {
  const drawing = G();
  return readableScaleOf(drawing);
}

export function readableScaleOf(g) {
  return Math.min(maxScale(), readablePx() / ((g && g.fontUnits) || 11));
}

// Whether the box grows with its drawing and the grad table follows it on the first screen
// (the page on a desk, a notebook's frame), rather than being all the room there is
// (presentation, an iframe, a docs page's frame) or on a phone, where the table is a scroll
// away whatever the drawing does.
export function boxGrows() {
  return !(state.present || fixedByCss() || onPhone());
}

// How far the zoom buttons reach into the box from its bottom right corner, or null when
// they are hidden.
function zoomReach(host) {
  const zoom = host.parentElement && host.parentElement.querySelector(".zoom");
  if (!zoom || zoom.offsetParent === null) return null;
  const zr = zoom.getBoundingClientRect(), hr = host.getBoundingClientRect();
  return { w: hr.right - zr.left, h: hr.bottom - zr.top };
}

// The scale at which a drawing of `size` fits a box of cw × ch in full, and the margins it
// keeps. The zoom buttons sit in the box's bottom right corner, where a graph seldom reaches
// (its one output is at the middle of its right or bottom side): the drawing keeps above them
// only when, centred (or at the top of a box as tall as it, `shrink`), it would reach under
// them. `parts`: the boxes of the drawing's nodes and labels, when it is on show (else its
// whole rectangle is what must keep clear).
function fitIn(host, size, cw, ch, shrink, parts) {
  const scaleWith = (m) => Math.min(Math.max(40, cw - m.l - m.r) / size.w, Math.max(40, ch - m.t - m.b) / size.h, maxScale());
  const plain = { l: PAD, r: PAD, t: PAD, b: PAD };
  const s = scaleWith(plain);
  const zoom = zoomReach(host);
  if (!zoom) return { scale: s, m: plain };
  const x0 = size.x || 0, y0 = size.y || 0;
  const left = PAD + (cw - 2 * PAD - size.w * s) / 2;
  const top = shrink ? PAD : PAD + (ch - 2 * PAD - size.h * s) / 2;
  const height = shrink ? size.h * s + 2 * PAD : ch; // the box's, with these margins
  const under = (parts || [{ x: x0, y: y0, w: size.w, h: size.h }]).some((r) =>
    left + (r.x - x0 + r.w) * s > cw - zoom.w && top + (r.y - y0 + r.h) * s > height - zoom.h);
  if (!under) return { scale: s, m: plain };
  const above = { l: PAD, r: PAD, t: PAD, b: Math.max(PAD, zoom.h + 4) };
  return { scale: scaleWith(above), m: above };
}

// The presented box's height: beside the controls, to the foot of the screen; above them (a
// phone), at most a share of it. The same whatever the drawing, so two drawings compare in it.
function presentHeight(host) {
  if (!presentSide()) return Math.round(window.innerHeight * 0.6);
  const top = host.getBoundingClientRect().top + window.scrollY;
  return Math.max(MIN_HEIGHT, Math.round(window.innerHeight - top - PRESENT_BOTTOM));
}

// An iframe's box (the embed, a docs page's stepper): its height is the stylesheet's, all
// that the iframe leaves it.
export function fixedByCss() {
  return EMBED || FIT_FRAME;
}

// The most height the box may take: the presented box's, what a frame leaves, or a share of
// the screen. The same whatever the drawing, so two drawings of one graph compare fairly.
function mostHeight(host) {
  if (fixedByCss()) return host.clientHeight || 400; // its height is the stylesheet's (the iframe's)
  if (state.present) return presentHeight(host);
  if (FIT_CONTENT) return 640;
  if (window.innerWidth > PHONE_WIDTH) return window.innerHeight * 0.62;
  // A phone: a share of the screen, and all of it above the fixed step bar at the page's top.
  const bar = $(".graph-pane .stepbar");
  const fixed = bar && getComputedStyle(bar).position === "fixed";
  const above = fixed ? window.innerHeight - bar.offsetHeight - (host.getBoundingClientRect().top + window.scrollY) - PAD : Infinity;
  return Math.max(MIN_HEIGHT * 2, Math.min(window.innerHeight * 0.55, above));
}

// The scale at which a drawing of `size` ({w, h}) fits the box in full (what fitGraph shows).
export function fitScale(size) {
  const host = $("#graph");
  if (!host) return 0;
  return fitIn(host, size, host.clientWidth || 600, mostHeight(host), !(presentSide() || fixedByCss())).scale;
}

// The whole drawing in the box, or the running node at a readable size (see the top).
export function fitGraph() {
  const drawing = G();
  if (!drawing) return;
  drawing.mode = "fit";
  drawing.userZoom = false;
  showView();
}

// ⤢: all of the drawing, at whatever size fits, until it is zoomed or a new drawing comes.
export function fitWhole() {
  const drawing = G();
  if (!drawing) return;
  drawing.mode = "whole";
  drawing.userZoom = false;
  showView();
}

// The view again for the box's new size, unless it was zoomed or panned by hand.
export function refit() {
  const drawing = G();
  if (drawing && drawing.mode !== "user") showView();
}

// Whether the view is the readable part of a drawing too large for its box.
export function following() {
  const drawing = G();
  return !!drawing && drawing.mode === "follow";
}

function showView() {
  const drawing = G();
  const host = $("#graph");
  const cw = host.clientWidth || 600;
  const b = drawing.base;
  const most = Math.max(MIN_HEIGHT, mostHeight(host));
  const tall = presentSide() || fixedByCss(); // the box is all the room there is, whatever it holds
  const parts = partBoxes();
  const readable = readableScale();
  // On the page a drawing is drawn top to bottom only to read (layout.js): it is drawn no
  // larger than that, and leaves the grad table as near as it can.
  const cap = boxGrows() && !state.layout && drawing.layout === "tb" ? readable : Infinity;
  const whole = Math.min(cap, fitIn(host, b, cw, most, !tall, parts).scale);
  if (drawing.mode === "fit" && whole < readable * (1 - 1e-6)) drawing.mode = "follow";
  const follow = drawing.mode === "follow";
  // As tall as the drawing needs at the scale that fits (no blank under a wide, flat graph),
  // or all the room there is when following, presenting beside the controls, or in an iframe.
  const m = fitIn(host, b, cw, most, !tall, parts).m;
  const h = follow || tall ? most : Math.max(MIN_HEIGHT, b.h * whole + m.t + m.b);
  if (!fixedByCss()) host.style.height = Math.round(h) + "px";
  const ch = host.clientHeight || Math.round(h);
  drawing.width = cw;
  drawing.boxHeight = ch;
  drawing.height0 = null;
  drawing.followed = null;
  if (follow) {
    drawing.view = { x: b.x, y: b.y, w: cw / readable, h: ch / readable };
    const r = currentBox();
    centreOn(r || { x: b.x + b.w, y: b.y + b.h / 2, w: 0, h: 0 });
    drawing.followed = r ? currentNode() : null;
    applyView();
    if (r && !inView(r) && clearOfCorners(r)) applyView();
    return;
  } else {
    const fit = fitIn(host, b, cw, ch, false, parts);
    const scale = Math.min(cap, fit.scale), fm = fit.m;
    const aw = cw - fm.l - fm.r, ah = ch - fm.t - fm.b;
    drawing.view = {
      x: b.x - (fm.l + (aw - b.w * scale) / 2) / scale,
      y: b.y - (fm.t + (ah - b.h * scale) / 2) / scale,
      w: cw / scale,
      h: ch / scale,
    };
  }
  applyView();
}

// Put box `r` (drawing units) in the middle of the view, or its start when it is wider or
// taller than the view; a followed view stays within the drawing (no blank beyond its edges).
function centreOn(r) {
  const drawing = G();
  const v = drawing.view, b = drawing.base;
  const host = $("#graph");
  const k = (host.clientWidth || 1) / v.w, e = FOLLOW_MARGIN / k;
  // The part of the box on the screen, from the box's corner, in drawing units.
  const hr = host.getBoundingClientRect(), vis = onScreen(host);
  const left = (vis.left - hr.left) / k, top = (vis.top - hr.top) / k;
  const w = (vis.right - vis.left) / k, h = (vis.bottom - vis.top) / k;
  v.x = r.w > w - 2 * e ? r.x - left - e : r.x + r.w / 2 - left - w / 2;
  v.y = r.h > h - 2 * e ? r.y - top - e : r.y + r.h / 2 - top - h / 2;
  if (drawing.mode === "follow") {
    const pad = PAD * (v.w / (drawing.width || 1));
    const clamp = (p, size, lo, span) => (size >= span + 2 * pad ? lo - (size - span) / 2 : Math.max(lo - pad, Math.min(p, lo + span + pad - size)));
    v.x = clamp(v.x, v.w, b.x, b.w);
    v.y = clamp(v.y, v.h, b.y, b.h);
  }
}

// The part of the box on the screen, in CSS px: inside the window, above a phone's fixed
// step bar.
function onScreen(host) {
  const hr = host.getBoundingClientRect();
  const bar = $(".graph-pane .stepbar");
  const foot = bar && getComputedStyle(bar).position === "fixed" ? bar.getBoundingClientRect().top : window.innerHeight;
  const vis = { left: Math.max(hr.left, 0), top: Math.max(hr.top, 0), right: Math.min(hr.right, window.innerWidth), bottom: Math.min(hr.bottom, foot, window.innerHeight) };
  return vis.bottom - vis.top > 2 * FOLLOW_MARGIN && vis.right - vis.left > 2 * FOLLOW_MARGIN ? vis : hr;
}

// What covers the box's bottom corners: the zoom buttons and the overview inset.
function corners(host) {
  const drawing = G();
  const zoom = host.parentElement && host.parentElement.querySelector(".zoom");
  return [zoom && zoom.offsetParent !== null ? zoom.getBoundingClientRect() : null, overviewRect(drawing)].filter(Boolean);
}

// Box `r` (drawing units) on the screen, in CSS px.
function screenBox(host, r) {
  const drawing = G();
  const v = drawing.view, k = (host.clientWidth || 1) / v.w;
  const hr = host.getBoundingClientRect();
  const l = hr.left + (r.x - v.x) * k, t = hr.top + (r.y - v.y) * k;
  return { l, t, r: l + r.w * k, b: t + r.h * k, w: r.w * k, h: r.h * k };
}

// Whether the middle of box `r` is in the drawing's box (on the screen or scrolled past).
function inBox(r) {
  const host = $("#graph");
  const s = screenBox(host, r), hr = host.getBoundingClientRect();
  const cx = (s.l + s.r) / 2, cy = (s.t + s.b) / 2;
  return cx > hr.left && cx < hr.right && cy > hr.top && cy < hr.bottom;
}

// Whether box `r` is on show inside the part of the box on the screen, clear of the zoom
// buttons and the inset.
function inView(r) {
  const host = $("#graph");
  const vis = onScreen(host), s = screenBox(host, r), m = FOLLOW_MARGIN;
  // Each way: inside the margins, or (larger than the room) over at least half of it.
  const fits = (lo, hi, size, a, b) => (size > b - a - 2 * m ? Math.min(hi, b) - Math.max(lo, a) >= (b - a) / 2 : lo >= a + m && hi <= b - m);
  const inside = fits(s.l, s.r, s.w, vis.left, vis.right) && fits(s.t, s.b, s.h, vis.top, vis.bottom);
  return inside && !corners(host).some((o) => s.l < o.right && s.r > o.left && s.t < o.bottom && s.b > o.top);
}

// Keep the running node in view: when a step moves it out of the box (following a large
// drawing, or zoomed in), the view moves to bring it back. All of the drawing on show: nothing.
export function followCurrent() {
  const drawing = G();
  if (!drawing || !T()) return;
  const cur = currentNode();
  const r = currentBox();
  // The same node: nothing to do, unless the view follows and the box has moved (a longer
  // sentence above it) so that the node is no longer on show. A view panned by hand stays.
  if (!cur || (drawing.followed === cur && (drawing.mode !== "follow" || !r || inView(r)))) { showOverview(); return; }
  drawing.followed = cur;
  if (r && (drawing.mode === "follow" || drawing.mode === "user") && !inView(r)) {
    centreOn(r);
    applyView();
    if (!inView(r) && clearOfCorners(r)) applyView();
  } else showOverview();
}

// The zoom buttons and the inset sit in the box's bottom corners: a node the view has put
// under them (at the foot of a followed drawing, which the view does not pass) is lifted
// clear, the view going past the drawing's edge by as much. True when the view moved.
function clearOfCorners(r) {
  const drawing = G();
  const host = $("#graph");
  const k = (host.clientWidth || 1) / drawing.view.w;
  const s = screenBox(host, r), vis = onScreen(host);
  const tops = corners(host).filter((o) => o.top < s.b && o.left < s.r && o.right > s.l).map((o) => o.top);
  if (vis.bottom < s.b) tops.push(vis.bottom);
  if (!tops.length) return false;
  const lift = s.b - Math.min(...tops) + FOLLOW_MARGIN / 2;
  if (s.t - lift < vis.top) return false; // no room above them for it
  drawing.view.y += lift / k;
  return true;
}

function applyView() {
  const drawing = G();
  const v = drawing.view;
  drawing.svg.setAttribute("viewBox", [v.x, v.y, v.w, v.h].map((n) => n.toFixed(2)).join(" "));
  markHidden();
  showOverview();
}

function showOverview() {
  const drawing = G();
  if (drawing) renderOverview(drawing, drawing.clipped, currentBox(), allBoxes);
}

// The cue that part of the drawing is out of the box: a shadow on each side with more beyond
// it. While any is hidden a one-finger drag pans the drawing; otherwise it scrolls the page.
function markHidden() {
  const drawing = G();
  const frame = $("#graph").parentElement;
  if (!frame) return;
  const v = drawing.view, b = drawing.base;
  const e = 0.5 * (v.w / ($("#graph").clientWidth || 1)); // half a pixel, in drawing units
  const sides = { l: v.x > b.x + e, r: v.x + v.w < b.x + b.w - e, t: v.y > b.y + e, b: v.y + v.h < b.y + b.h - e };
  Object.entries(sides).forEach(([side, on]) => frame.classList.toggle("more-" + side, on));
  drawing.clipped = Object.values(sides).some(Boolean);
  frame.classList.toggle("clipped", drawing.clipped);
  frame.classList.toggle("following", drawing.mode === "follow" && drawing.clipped);
}

// Zoom by `f` about the point (px, py) of the box (the buttons: about the running node when it
// is on show, else the middle). The box grows with the drawing, up to ZOOM_MOST of the screen,
// so zooming in shows more of the drawing, not a thinner slice of it.
export function zoomAt(f, px, py) {
  const drawing = G();
  if (!drawing) return;
  const host = $("#graph");
  const cw = host.clientWidth, ch0 = host.clientHeight;
  const v = drawing.view;
  if (px === undefined) {
    const r = currentBox();
    const on = r && inBox(r);
    px = on ? ((r.x + r.w / 2 - v.x) * cw) / v.w : cw / 2;
    py = on ? ((r.y + r.h / 2 - v.y) * ch0) / v.h : ch0 / 2;
  }
  const sx = v.x + (px / cw) * v.w, sy = v.y + (py / ch0) * v.h;
  const w = Math.max(20, Math.min(v.w / f, drawing.base.w * 20));
  const scale = cw / w;
  let ch = ch0;
  if (!fixedByCss() && !presentSide()) {
    if (!drawing.height0) drawing.height0 = ch0; // the box before any zoom: it never goes below
    const want = drawing.base.h * scale + 2 * PAD;
    ch = Math.round(Math.max(drawing.height0, Math.min(want, window.innerHeight * ZOOM_MOST)));
    if (ch !== ch0) host.style.height = ch + "px";
    ch = host.clientHeight || ch;
  }
  const h = ch / scale;
  const ppy = (py * ch) / ch0; // the same place in the taller box
  drawing.view = { x: sx - (px / cw) * w, y: sy - (ppy / ch) * h, w, h };
  drawing.mode = "user";
  drawing.userZoom = true;
  drawing.followed = T() ? currentNode() : null;
  applyView();
}

function moveView(dx, dy) {
  const drawing = G();
  const host = $("#graph");
  const v = drawing.view;
  v.x -= (dx * v.w) / host.clientWidth;
  v.y -= (dy * v.h) / host.clientHeight;
  applyView();
}

export function panBy(dx, dy) {
  const drawing = G();
  if (!drawing) return;
  drawing.userZoom = true;
  if (drawing.mode !== "user") drawing.height0 = $("#graph").clientHeight;
  drawing.mode = "user";
  moveView(dx, dy);
}

// The view centred on a point of the drawing (a click on the overview inset).
export function lookAt(x, y) {
  const drawing = G();
  if (!drawing) return;
  const v = drawing.view;
  drawing.view = { x: x - v.w / 2, y: y - v.h / 2, w: v.w, h: v.h };
  if (drawing.mode !== "follow") { drawing.mode = "user"; drawing.userZoom = true; }
  applyView();
}
