/* The pass timeline (#pass-timeline): for a program of several passes, the output's value per
 * pass (`passes[k].value`) as a loss curve above the step controls, one mark per pass, the
 * pass on show marked. A click on the curve, or ←/→/Home/End with the curve focused, opens a
 * pass at its first step; the buttons and Shift+PageDown / Shift+PageUp jump a whole pass
 * (PageDown and the clicker keep stepping steps). Passes whose steps were summarised to stay
 * within the limits are drawn hollow, on a dashed line, and said so. Log scale when the values
 * span more than two decades. */
import { $, on, setText } from "./dom.js";
import { fmt } from "./format.js";
import { t } from "./i18n.js";
import { addStepper } from "./keys.js";
import { state } from "./store.js";
import { T, fwdCount, passFirstStep, passOnShow, setPos } from "./trace.js";

const SVG = "http://www.w3.org/2000/svg";
const H = 112; // px: the plot's height
const PAD = { l: 52, r: 20, t: 18, b: 26 };
const MAX_Y_TICKS = 5;
const MAX_MARKS = 1000; // more passes than this: marks only on the kept passes
const LOG_SPAN = 100; // more than two decades between the least and largest value: log scale

let built = null; // {T, lang, width, x(k), y(v), ring, guide, svg}
let resized = false; // the plot's box changed width since it was built

function passes() { return T() && T().passes; }

function valueOf(p) {
  return typeof p.value === "number" && Number.isFinite(p.value) ? p.value : null;
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  Object.entries(attrs || {}).forEach(([k, v]) => e.setAttribute(k, String(v)));
  if (text !== undefined) e.textContent = text;
  return e;
}

// "Pass 12 of 100: loss 0.031" (and "summarised" for a pass whose steps were not kept).
export function passSaid(k) {
  const ps = passes();
  const v = valueOf(ps[k]);
  const said = t("timeline_sr", { k: k + 1, n: ps.length, value: v === null ? "—" : fmt(v) });
  return ps[k].kept ? said : said + " " + t("timeline_summarised");
}

// The plot is drawn at the width it is shown at, so its text is at its own size.
function plotWidth(host) {
  const plot = host.querySelector(".pass-plot");
  return Math.max(200, Math.round((plot && plot.clientWidth) || 560));
}

function scaleOf(values) {
  const vs = values.filter((v) => v !== null);
  if (!vs.length) return { log: false, lo: 0, hi: 1 };
  let lo = Math.min(...vs), hi = Math.max(...vs);
  const log = lo > 0 && hi / lo > LOG_SPAN;
  if (log) return { log, lo: Math.log10(lo), hi: Math.log10(hi) };
  if (lo === hi) { lo -= Math.abs(lo) * 0.1 || 1; hi += Math.abs(hi) * 0.1 || 1; }
  return { log, lo, hi };
}

function build(host) {
  const ps = passes();
  const width = plotWidth(host);
  const n = ps.length;
  const values = ps.map(valueOf);
  const sc = scaleOf(values);
  const iw = width - PAD.l - PAD.r, ih = H - PAD.t - PAD.b;
  const x = (k) => PAD.l + (n > 1 ? (k / (n - 1)) * iw : iw / 2);
  const y = (v) => {
    const u = sc.log ? Math.log10(v) : v;
    return PAD.t + ih - ((u - sc.lo) / (sc.hi - sc.lo || 1)) * ih;
  };
  const svg = el("svg", {
    id: "pass-curve", viewBox: `0 0 ${width} ${H}`, width, height: H, tabindex: 0, role: "slider",
    "aria-valuemin": 1, "aria-valuemax": n, class: sc.log ? "log" : "linear",
  });
  svg.append(el("title", {}, t("timeline_name")));
  const axes = el("g", { class: "axes", "aria-hidden": "true" });
  axes.append(el("line", { x1: PAD.l, y1: PAD.t + ih, x2: PAD.l + iw, y2: PAD.t + ih }));
  axes.append(el("line", { x1: PAD.l, y1: PAD.t, x2: PAD.l, y2: PAD.t + ih }));
  // x: the first and last pass, and a few between.
  const xt = new Set([0, n - 1]);
  const every = Math.max(1, Math.ceil((n - 1) / 5));
  for (let k = every; k < n - 1; k += every) if (x(n - 1) - x(k) > 24) xt.add(k);
  xt.forEach((k) => {
    axes.append(el("line", { x1: x(k), y1: PAD.t + ih, x2: x(k), y2: PAD.t + ih + 4 }));
    axes.append(el("text", { x: x(k), y: PAD.t + ih + 15, "text-anchor": "middle" }, String(k + 1)));
  });
  axes.append(el("text", { x: PAD.l + iw, y: H - 1, "text-anchor": "end", class: "axis-name" }, t("timeline_axis_pass")));
  // y: the least and largest value (log: the powers of ten between them too).
  const yt = [];
  if (sc.log) {
    const lo = Math.ceil(sc.lo), hi = Math.floor(sc.hi);
    const every = Math.max(1, Math.ceil((hi - lo + 1) / MAX_Y_TICKS));
    for (let e = hi; e >= lo; e -= every) yt.push(10 ** e);
    if (yt.length < 2) yt.push(10 ** sc.lo, 10 ** sc.hi);
  } else yt.push(sc.lo, sc.hi);
  yt.forEach((v) => {
    axes.append(el("line", { x1: PAD.l - 4, y1: y(v), x2: PAD.l, y2: y(v) }));
    axes.append(el("text", { x: PAD.l - 6, y: y(v) + 4, "text-anchor": "end" }, fmt(v)));
  });
  const yName = t("timeline_axis_loss") + (sc.log ? " (" + t("timeline_log") + ")" : "");
  axes.append(el("text", { x: 2, y: 11, class: "axis-name" }, yName));
  svg.append(axes);
  // The curve: solid through kept passes, dashed across summarised ones.
  const pts = [];
  values.forEach((v, k) => { if (v !== null) pts.push([k, x(k), y(v)]); });
  const seg = (a, b) => `M${a[1].toFixed(1)},${a[2].toFixed(1)}L${b[1].toFixed(1)},${b[2].toFixed(1)}`;
  let solid = "", dashed = "";
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1], b = pts[i];
    if (ps[a[0]].kept && ps[b[0]].kept) solid += seg(a, b); else dashed += seg(a, b);
  }
  svg.append(el("path", { d: solid || "M0,0", class: "curve", "aria-hidden": "true" }));
  if (dashed) svg.append(el("path", { d: dashed, class: "curve summarised", "aria-hidden": "true" }));
  const guide = el("line", { class: "on-show-guide", y1: PAD.t, y2: PAD.t + ih, "aria-hidden": "true" });
  svg.append(guide);
  const marks = el("g", { class: "marks", "aria-hidden": "true" });
  pts.forEach(([k, px, py]) => {
    if (n > MAX_MARKS && !ps[k].kept) return;
    const c = el("circle", { cx: px.toFixed(1), cy: py.toFixed(1), r: n > 300 ? 1.6 : n > 40 ? 2.5 : 4, class: ps[k].kept ? "mark" : "mark summarised" });
    c.dataset.pass = String(k);
    marks.append(c);
  });
  svg.append(marks);
  const ring = el("circle", { class: "on-show", r: 6.5, "aria-hidden": "true" });
  svg.append(ring);
  host.querySelector(".pass-plot").replaceChildren(svg);
  const note = host.querySelector(".pass-summarised-note");
  const summarised = ps.filter((p) => !p.kept).length;
  if (note) {
    note.hidden = !summarised;
    note.textContent = summarised ? t("timeline_summarised_note", { count: summarised }) : "";
  }
  return { T: T(), lang: state.lang, width, x, y, ring, guide, svg, n };
}

export function renderTimeline() {
  const host = $("#pass-timeline");
  if (!host) return;
  const ps = passes();
  host.hidden = !ps;
  if (!ps) { built = null; return; }
  // Built once per trace and language (and again when its box is resized): a step only moves
  // the marker, and reads no layout.
  if (!built || built.T !== T() || built.lang !== state.lang || resized) { resized = false; built = build(host); }
  const k = passOnShow();
  const v = valueOf(ps[k]);
  const x = built.x(k);
  built.guide.setAttribute("x1", x.toFixed(1));
  built.guide.setAttribute("x2", x.toFixed(1));
  built.ring.setAttribute("cx", x.toFixed(1));
  built.ring.setAttribute("cy", (v === null ? PAD.t : built.y(v)).toFixed(1));
  built.ring.classList.toggle("summarised", !ps[k].kept);
  const said = passSaid(k);
  if (built.svg.getAttribute("aria-valuenow") !== String(k + 1)) built.svg.setAttribute("aria-valuenow", String(k + 1));
  if (built.svg.getAttribute("aria-valuetext") !== said) built.svg.setAttribute("aria-valuetext", said);
  built.svg.setAttribute("aria-label", t("timeline_name"));
  setText(host.querySelector(".pass-now"), said);
  const dis = (sel, v2) => { const b = host.querySelector(sel); if (b) b.disabled = v2; };
  dis("#btn-prev-pass", nextKept(k, -1) === null);
  dis("#btn-next-pass", nextKept(k, 1) === null);
}

// The nearest kept pass after (dir 1) or before (dir -1) pass k, or null.
function nextKept(k, dir) {
  const ps = passes();
  for (let j = k + dir; j >= 0 && j < ps.length; j += dir) if (ps[j].kept) return j;
  return null;
}

// Open pass k at its first step (the nearest kept pass's, for one summarised).
export function openPass(k) {
  const ps = passes();
  if (!ps) return;
  k = Math.max(0, Math.min(ps.length - 1, k));
  setPos(fwdCount() + passFirstStep(k));
}

// A whole pass on (dir 1) or back (dir -1): the next or previous kept pass's first step.
export function jumpPass(dir) {
  const ps = passes();
  if (!ps) return false;
  const j = nextKept(passOnShow(), dir);
  if (j !== null) openPass(j);
  return true;
}

function passAt(ev) {
  if (!built) return null;
  const r = built.svg.getBoundingClientRect();
  const px = ((ev.clientX - r.left) / (r.width || 1)) * built.width;
  let best = 0;
  for (let k = 1; k < built.n; k++) if (Math.abs(built.x(k) - px) < Math.abs(built.x(best) - px)) best = k;
  return best;
}

export function wireTimeline() {
  on("#pass-timeline", "click", (ev) => {
    if (!ev.target.closest || !ev.target.closest("#pass-curve")) return;
    const k = passAt(ev);
    if (k !== null) openPass(k);
  });
  on("#btn-prev-pass", "click", () => jumpPass(-1));
  on("#btn-next-pass", "click", () => jumpPass(1));
  // The curve focused: ←/→ (and the other stepping keys) move a pass, Home/End the first/last.
  addStepper({
    wants: (el) => !!(el && el.closest && el.closest("#pass-curve")),
    step(move) {
      const ps = passes();
      if (!ps) return;
      if (move === "first") openPass(0);
      else if (move === "last") openPass(ps.length - 1);
      else jumpPass(move > 0 ? 1 : -1);
    },
    passStep: (dir) => jumpPass(dir),
  });
  const plot = $("#pass-timeline .pass-plot");
  if (plot && window.ResizeObserver) {
    new ResizeObserver(() => {
      if (!built || Math.abs(plotWidth($("#pass-timeline")) - built.width) <= 2) return;
      resized = true;
      renderTimeline();
    }).observe(plot);
  }
}
