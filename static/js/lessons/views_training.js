/* The training lesson (engine/lessons/training.py): a loop of passes, with the lesson's own
 * stepper on the pass on show. Three parts: the loop without its zeroing lines beside the loop
 * as written; the descent path over the loss's contours; the loop at lr/10, lr and 10·lr.
 * Every plot is an SVG drawn here from the numbers the server sent (nothing is computed here
 * but where to draw them: the axes, the contour lines of the grid it sent). */
import { setLesson, setState, state } from "../store.js";
import { el, fmt, t } from "./kit.js";

export const VIEWS = {};
const NS = "http://www.w3.org/2000/svg";
const W = 440, H = 200, M = { l: 62, r: 12, t: 10, b: 30 };

function s(tag, attrs, ...kids) {
  const e = document.createElementNS(NS, tag);
  Object.entries(attrs || {}).forEach(([k, v]) => { if (v !== null && v !== undefined) e.setAttribute(k, String(v)); });
  kids.flat().forEach((k) => { if (k !== null && k !== undefined && k !== false) e.append(k); });
  return e;
}

const finite = (v) => typeof v === "number" && Number.isFinite(v);

// A scale for `values` on [a, b]: log10 when every value is positive and they span more than
// two decades.
function scale(values, a, b, forceLinear) {
  const vs = values.filter(finite);
  let lo = vs.length ? Math.min(...vs) : 0, hi = vs.length ? Math.max(...vs) : 1;
  const log = !forceLinear && lo > 0 && hi / lo > 100;
  const f = log ? Math.log10 : (x) => x;
  let flo = f(lo), fhi = f(hi);
  if (fhi === flo) { flo -= 1; fhi += 1; }
  const to = (x) => (finite(x) && (!log || x > 0) ? a + ((f(x) - flo) / (fhi - flo)) * (b - a) : null);
  const ticks = log
    ? [...new Set([Math.ceil(flo), Math.round((flo + fhi) / 2), Math.floor(fhi)])].filter((e) => e >= flo - 1e-9 && e <= fhi + 1e-9).map((e) => 10 ** e)
    : [flo, (flo + fhi) / 2, fhi];
  return { to, log, ticks, lo, hi };
}

function axes(g, xs, ys, xlabel, ylabel) {
  const x0 = M.l, x1 = W - M.r, y0 = H - M.b, y1 = M.t;
  g.append(s("line", { class: "tr-axis", x1: x0, y1: y0, x2: x1, y2: y0 }), s("line", { class: "tr-axis", x1: x0, y1: y0, x2: x0, y2: y1 }));
  ys.ticks.forEach((v) => {
    const y = ys.to(v);
    if (y === null) return;
    g.append(s("line", { class: "tr-grid", x1: x0, y1: y, x2: x1, y2: y }), s("text", { class: "tr-tick", x: x0 - 4, y: y + 3, "text-anchor": "end" }, fmt(v)));
  });
  xs.ticks.forEach((v) => {
    const x = xs.to(v);
    if (x === null) return;
    g.append(s("text", { class: "tr-tick", x, y: y0 + 13, "text-anchor": "middle" }, xs.label ? xs.label(v) : fmt(v)));
  });
  g.append(s("text", { class: "tr-label", x: (x0 + x1) / 2, y: H - 3, "text-anchor": "middle" }, xlabel));
  g.append(s("text", { class: "tr-label", x: 9, y: (y0 + y1) / 2, "text-anchor": "middle", transform: `rotate(-90 9 ${(y0 + y1) / 2})` }, ylabel));
}

function figure(id, title, svg, legend, said) {
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", title + ". " + said);
  const fig = el("figure", { class: "tr-fig", id });
  fig.append(el("figcaption", { text: title }), svg);
  if (legend && legend.length) fig.append(el("ul", { class: "tr-legend" }, legend.map(([cls, text]) => el("li", {}, el("span", { class: "tr-swatch " + cls, "aria-hidden": "true" }), text))));
  return fig;
}

// Lines over the passes 1..n; the pass on show (k, 0-based) marked. series: [{values, cls}].
function passChart(id, title, series, k, ylabel, legend, said, linear) {
  const n = Math.max(...series.map((x) => x.values.length), 1);
  const xs = scale([1, n], M.l, W - M.r, true);
  xs.ticks = [...new Set([1, Math.round((1 + n) / 2), n])];
  xs.label = (v) => String(v);
  const ys = scale(series.flatMap((x) => x.values), H - M.b, M.t, linear);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "tr-chart" });
  axes(svg, xs, ys, t("ls_tr_pass"), ys.log ? t("ls_tr_log") : ylabel);
  const cx = xs.to(k + 1);
  svg.append(s("line", { class: "tr-now", x1: cx, y1: M.t, x2: cx, y2: H - M.b }));
  series.forEach((x) => {
    let d = "", pen = false;
    x.values.forEach((v, i) => {
      const y = ys.to(v);
      if (y === null) { pen = false; return; }
      d += (pen ? "L" : "M") + xs.to(i + 1).toFixed(1) + " " + y.toFixed(1);
      pen = true;
    });
    svg.append(s("path", { class: "tr-line " + x.cls, d }));
    const y = ys.to(x.values[k]);
    if (y !== null) svg.append(s("circle", { class: "tr-dot " + x.cls, cx, cy: y, r: 3.5 }));
  });
  return figure(id, title, svg, legend, said);
}

// Marching squares: the segments of the grid's contour at `level`, in the grid's coordinates.
function contourPath(grid, level, px, py) {
  const z = grid.loss, ny = z.length, nx = z[0].length;
  let d = "";
  const lerp = (a, b, va, vb) => a + ((level - va) / (vb - va)) * (b - a);
  for (let i = 0; i < ny - 1; i++) {
    for (let j = 0; j < nx - 1; j++) {
      const v = [z[i][j], z[i][j + 1], z[i + 1][j + 1], z[i + 1][j]];
      if (!v.every(finite)) continue;
      const c = (v[0] > level ? 1 : 0) | (v[1] > level ? 2 : 0) | (v[2] > level ? 4 : 0) | (v[3] > level ? 8 : 0);
      if (c === 0 || c === 15) continue;
      const X = [px[j], px[j + 1]], Y = [py[i], py[i + 1]];
      const e = [ // the four edges' crossings: bottom, right, top, left
        [lerp(X[0], X[1], v[0], v[1]), Y[0]],
        [X[1], lerp(Y[0], Y[1], v[1], v[2])],
        [lerp(X[0], X[1], v[3], v[2]), Y[1]],
        [X[0], lerp(Y[0], Y[1], v[0], v[3])],
      ];
      const pairs = { 1: [[3, 0]], 2: [[0, 1]], 3: [[3, 1]], 4: [[1, 2]], 5: [[3, 2], [0, 1]], 6: [[0, 2]], 7: [[3, 2]], 8: [[2, 3]], 9: [[0, 2]], 10: [[0, 3], [1, 2]], 11: [[1, 2]], 12: [[1, 3]], 13: [[0, 1]], 14: [[0, 3]] }[c];
      pairs.forEach(([a, b]) => { d += "M" + e[a][0].toFixed(1) + " " + e[a][1].toFixed(1) + "L" + e[b][0].toFixed(1) + " " + e[b][1].toFixed(1); });
    }
  }
  return d;
}

function levels(grid) {
  const vs = grid.loss.flat().filter(finite);
  const lo = Math.min(...vs), hi = Math.max(...vs), n = 12;
  if (lo > 0 && hi / lo > 10) return Array.from({ length: n }, (_, i) => lo * (hi / lo) ** ((i + 0.5) / n));
  return Array.from({ length: n }, (_, i) => lo + ((hi - lo) * (i + 0.5)) / n);
}

// The loss over two parameters as contours, each path's points per pass, the pass on show's
// update as an arrow. paths: [{values: [[x, y] per pass, and after the last]], cls}].
function contourChart(id, title, grid, paths, k, names, said, legend) {
  const size = 300, m = { l: 48, r: 10, t: 10, b: 32 };
  const gx = grid.x, gy = grid.y;
  const X = (v) => m.l + ((v - gx[0]) / (gx[gx.length - 1] - gx[0])) * (size - m.l - m.r);
  const Y = (v) => size - m.b - ((v - gy[0]) / (gy[gy.length - 1] - gy[0])) * (size - m.t - m.b);
  const svg = s("svg", { viewBox: `0 0 ${size} ${size}`, class: "tr-chart tr-contours" });
  const clip = id + "-clip";
  svg.append(s("defs", {},
    s("clipPath", { id: clip }, s("rect", { x: m.l, y: m.t, width: size - m.l - m.r, height: size - m.t - m.b })),
    s("marker", { id: id + "-head", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" }, s("path", { d: "M0 0L10 5L0 10z", class: "tr-head" }))));
  const px = gx.map(X), py = gy.map(Y);
  const plot = s("g", { "clip-path": `url(#${clip})` });
  const lv = levels(grid);
  lv.forEach((level, i) => plot.append(s("path", { class: "tr-contour", d: contourPath(grid, level, px, py), "stroke-opacity": (0.35 + (0.6 * (lv.length - i)) / lv.length).toFixed(2) })));
  paths.forEach((p) => {
    const pts = p.values.map((v) => (v && finite(v[0]) && finite(v[1]) ? [X(v[0]), Y(v[1])] : null));
    let d = "", pen = false;
    pts.forEach((q) => { if (!q || Math.abs(q[0]) > 1e6 || Math.abs(q[1]) > 1e6) { pen = false; return; } d += (pen ? "L" : "M") + q[0].toFixed(1) + " " + q[1].toFixed(1); pen = true; });
    plot.append(s("path", { class: "tr-path " + p.cls, d }));
    pts.forEach((q, i) => { if (q && Math.abs(q[0]) < 1e6 && Math.abs(q[1]) < 1e6) plot.append(s("circle", { class: "tr-pt " + p.cls + (i === k ? " cur" : ""), cx: q[0].toFixed(1), cy: q[1].toFixed(1), r: i === k ? 4.5 : 2.2 })); });
    const a = pts[k], b = pts[k + 1];
    if (a && b && Math.hypot(b[0] - a[0], b[1] - a[1]) > 0.5 && Math.abs(b[0]) < 1e6 && Math.abs(b[1]) < 1e6) plot.append(s("line", { class: "tr-arrow " + p.cls, x1: a[0], y1: a[1], x2: b[0], y2: b[1], "marker-end": `url(#${id}-head)` }));
  });
  svg.append(plot);
  svg.append(s("rect", { class: "tr-frame", x: m.l, y: m.t, width: size - m.l - m.r, height: size - m.t - m.b }));
  [0, gx.length - 1].forEach((i) => svg.append(s("text", { class: "tr-tick", x: px[i], y: size - m.b + 13, "text-anchor": i ? "end" : "start" }, fmt(gx[i]))));
  [0, gy.length - 1].forEach((i) => svg.append(s("text", { class: "tr-tick", x: m.l - 4, y: py[i] + (i ? 8 : 0), "text-anchor": "end" }, fmt(gy[i]))));
  svg.append(s("text", { class: "tr-label", x: (m.l + size - m.r) / 2, y: size - 4, "text-anchor": "middle" }, names[0]));
  svg.append(s("text", { class: "tr-label", x: 11, y: size / 2, "text-anchor": "middle", transform: `rotate(-90 11 ${size / 2})` }, names[1]));
  return figure(id, title, svg, legend, said);
}

// The loss over one parameter, its value at each pass a dot on the curve (the pass's own loss).
function curveChart(id, title, grid, values, loss, k, name, said) {
  const xs = scale(grid.x, M.l, W - M.r, true);
  const ys = scale(grid.loss.concat(loss), H - M.b, M.t);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "tr-chart" });
  svg.append(s("defs", {}, s("marker", { id: id + "-head", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 9, markerHeight: 9, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" }, s("path", { d: "M0 0L10 5L0 10z", class: "tr-head" }))));
  axes(svg, xs, ys, name, ys.log ? t("ls_tr_log") : t("ls_tr_loss"));
  let d = "";
  grid.x.forEach((x, i) => { const y = ys.to(grid.loss[i]); if (y !== null) d += (d ? "L" : "M") + xs.to(x).toFixed(1) + " " + y.toFixed(1); });
  svg.append(s("path", { class: "tr-contour", d }));
  const at = (i) => (finite(values[i]) && finite(loss[i]) && ys.to(loss[i]) !== null ? [xs.to(values[i]), ys.to(loss[i])] : null);
  loss.forEach((_, i) => { const q = at(i); if (q) svg.append(s("circle", { class: "tr-pt tr-with" + (i === k ? " cur" : ""), cx: q[0], cy: q[1], r: i === k ? 4.5 : 2.2 })); });
  const a = at(k), b = at(k + 1);
  if (a && b) svg.append(s("line", { class: "tr-arrow tr-with", x1: a[0], y1: a[1], x2: b[0], y2: b[1], "marker-end": `url(#${id}-head)` }));
  return figure(id, title, svg, null, said);
}

const col = (rows, c) => rows.map((r) => (r ? r[c] : null));
const said = (k, n, loss) => t("ls_tr_pass_of", { k: k + 1, n, loss: fmt(loss) });
function errText(e) { return e ? (state.lang === "zh" ? e.zh : e.en) : ""; }
function point(data, row) { return data.coords.map((c, i) => c.label + " = " + fmt(row ? row[i] : null)).join(", "); }

VIEWS.training = {
  modes: ["zero_grad", "path", "rates"],
  mode() { return state.lesson.modes.training || "zero_grad"; },
  count(data) { return data.training ? data.passes : 1; },
  render(data, k) {
    const wrap = el("div", { class: "ls-training" });
    if (!data.training) { wrap.append(el("p", { class: "note", id: "ls-tr-now", text: t("ls_tr_one_pass") })); return wrap; }
    const mode = this.mode();
    const modes = el("div", { class: "ls-tabs", role: "group", "aria-label": t("ls_tr_which") });
    this.modes.forEach((m) => modes.append(el("button", { type: "button", "data-mode": m, "aria-pressed": m === mode ? "true" : "false", text: t("ls_tr_" + m), onclick: () => setLesson({ modes: Object.assign({}, state.lesson.modes, { training: m }) }) })));
    wrap.append(modes, this[mode](data, Math.min(k, data.passes - 1)));
    if (data.coords.length < data.count) wrap.append(el("p", { class: "note", text: t("ls_tr_more", { n: data.coords.length, count: data.count }) }));
    return wrap;
  },
  zero_grad(data, k) {
    const z = data.zero_grad, n = data.passes;
    const box = el("div");
    if (!z.available) { box.append(el("p", { class: "note", id: "ls-tr-now", text: t("ls_tr_zg_none") })); return box; }
    box.append(el("p", { class: "ls-intro", text: t("ls_tr_zg_intro", { lines: z.lines.map((l) => l.text).join(", ") }) }));
    const w = z.without;
    const legend = [["tr-with", t("ls_tr_with")], ["tr-without", t("ls_tr_without")]];
    const charts = el("div", { class: "tr-charts" });
    charts.append(passChart("tr-zg-loss", t("ls_tr_chart_loss"), [{ values: data.loss, cls: "tr-with" }, { values: w.loss, cls: "tr-without" }], k, t("ls_tr_loss"), legend, said(k, n, data.loss[k])));
    const shown = data.coords.slice(0, 2);
    shown.forEach((c, i) => {
      charts.append(passChart("tr-zg-grad-" + i, t("ls_tr_zg_grad", { label: c.label }), [{ values: col(data.grads, i), cls: "tr-with" }, { values: col(w.grads, i), cls: "tr-without" }], k, c.label + ".grad", legend, t("ls_tr_zg_now", { k: k + 1, label: c.label, a: fmt(data.grads[k][i]), b: fmt(w.grads[k] ? w.grads[k][i] : null) }), true));
    });
    box.append(charts);
    const c = data.coords[0];
    box.append(this.zgTable(data, k));
    box.append(el("p", { class: "ls-now", id: "ls-tr-now", text: t("ls_tr_zg_now", { k: k + 1, label: c.label, a: fmt(data.grads[k][0]), b: fmt(w.grads[k] ? w.grads[k][0] : null) }) }));
    const f = z.first_grad_pass;
    if (f === null) box.append(el("p", { class: "ls-callout good", id: "ls-tr-first", text: t("ls_tr_zg_same") }));
    else {
      const call = el("div", { class: "ls-callout bad", id: "ls-tr-first", role: "note" });
      call.append(el("p", { text: t("ls_tr_zg_first", { k: f + 1, label: c.label, g: fmt(f > 0 ? data.grads[f - 1][0] : null), j: z.first_loss_pass === null ? "—" : z.first_loss_pass + 1 }) }));
      if (z.first_leaf_step !== null) call.append(el("button", { type: "button", id: "ls-tr-show-step", text: t("ls_tr_zg_show"), onclick: () => setState({ step: z.first_leaf_step }) }));
      box.append(call);
    }
    if (w.error) box.append(el("p", { class: "ls-error", id: "ls-tr-stopped", text: t("ls_tr_zg_stopped", { k: w.passes, error: errText(w.error) }) }));
    return box;
  },
  // The passes up to the one on show (the last few), both runs side by side; ≠ where they part.
  zgTable(data, k) {
    const w = data.zero_grad.without, c = data.coords[0];
    const table = el("table", { class: "ls-table", id: "ls-tr-table" });
    const head = [t("ls_tr_pass"), t("ls_tr_loss") + " · " + t("ls_tr_with"), t("ls_tr_loss") + " · " + t("ls_tr_without"), c.label + ".grad · " + t("ls_tr_with"), c.label + ".grad · " + t("ls_tr_without")];
    table.append(el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col", text: h })))));
    const tb = el("tbody");
    for (let i = Math.max(0, k - 4); i <= k; i++) {
      const g = w.grads[i] ? w.grads[i][0] : null;
      const cell = (a, b) => el("td", { class: a !== b && b !== undefined ? "diverged" : "", text: fmt(b === undefined ? null : b) });
      tb.append(el("tr", { "aria-current": i === k ? "true" : null },
        el("th", { scope: "row", text: String(i + 1) }),
        el("td", { text: fmt(data.loss[i]) }), cell(data.loss[i], w.loss[i]),
        el("td", { text: fmt(data.grads[i][0]) }), cell(data.grads[i][0], g)));
    }
    table.append(tb);
    return el("div", { class: "ls-scroll" }, table);
  },
  path(data, k) {
    const p = data.path, n = data.passes;
    const box = el("div");
    const lr = p.lr === null ? "" : " −lr·grad, lr = " + fmt(p.lr);
    const names = data.coords.map((c) => c.label);
    const now = el("p", { class: "ls-now", id: "ls-tr-now", text: t("ls_tr_path_now", { k: k + 1, point: point(data, data.values[k]), loss: fmt(data.loss[k]), grad: "(" + data.grads[k].map(fmt).join(", ") + ")", step: "(" + data.values[k].map((v, i) => fmt(data.values[k + 1][i] - v)).join(", ") + ")" }) });
    if (p.dims <= 2 && p.grid) {
      box.append(el("p", { class: "ls-intro", text: t(p.dims === 2 ? "ls_tr_path_2" : "ls_tr_path_1", { x: names[0], y: names[1] || "", lr }) }));
      const title = t("ls_tr_chart_path");
      box.append(el("div", { class: "tr-charts" }, p.dims === 2
        ? contourChart("tr-path", title, p.grid, [{ values: data.values, cls: "tr-with" }], k, names, said(k, n, data.loss[k]))
        : curveChart("tr-path", title, p.grid, col(data.values, 0), data.loss, k, names[0], said(k, n, data.loss[k])),
      passChart("tr-path-loss", t("ls_tr_chart_loss"), [{ values: data.loss, cls: "tr-with" }], k, t("ls_tr_loss"), null, said(k, n, data.loss[k]))));
      box.append(now);
      return box;
    }
    if (p.dims <= 2) box.append(el("p", { class: "note", text: t("ls_tr_why_" + (p.why || "too_large")) }));
    else {
      box.append(el("p", { class: "ls-intro", text: t("ls_tr_path_many", { n: p.dims }) }));
      box.append(this.pairMenu(data));
      if (p.pair && p.grid) {
        const [a, b] = p.pair;
        const pts = data.values.map((r) => [r[a], r[b]]);
        box.append(el("p", { class: "note", text: t("ls_tr_path_pair", { x: names[a], y: names[b] }) }));
        box.append(el("div", { class: "tr-charts" }, contourChart("tr-path", t("ls_tr_chart_path"), p.grid, [{ values: pts, cls: "tr-with" }], k, [names[a], names[b]], said(k, n, data.loss[k]))));
      } else if (p.pair) box.append(el("p", { class: "note", text: t("ls_tr_why_" + (p.why || "too_large")) }));
    }
    const legend = data.coords.map((c, i) => ["tr-c" + (i % 6), c.label]);
    const series = (rows) => data.coords.map((c, i) => ({ values: col(rows, i), cls: "tr-c" + (i % 6) }));
    box.append(el("div", { class: "tr-charts" },
      passChart("tr-values", t("ls_tr_values"), series(data.values.slice(0, n)), k, "", legend, point(data, data.values[k]), true),
      passChart("tr-grads", t("ls_tr_grads"), series(data.grads), k, "", legend, point(data, data.grads[k]), true)));
    box.append(now);
    return box;
  },
  // Two of the parameters for the contours: the lesson is asked again with them.
  pairMenu(data) {
    const given = (state.lesson.options.training || {}).pair || data.path.pair || [0, 1];
    const pick = (id, which) => {
      const sel = el("select", { id, "aria-label": t(which) });
      data.coords.forEach((c, i) => sel.append(el("option", { value: String(i), selected: i === given[which === "ls_tr_pair_x" ? 0 : 1], text: c.label })));
      return sel;
    };
    const sx = pick("ls-tr-pair-x", "ls_tr_pair_x"), sy = pick("ls-tr-pair-y", "ls_tr_pair_y");
    const go = el("button", { type: "button", id: "ls-tr-pair-go", text: t("ls_tr_pair_go"), onclick: () => {
      const pair = [Number(sx.value), Number(sy.value)];
      if (pair[0] === pair[1]) return;
      setLesson({ options: Object.assign({}, state.lesson.options, { training: { pair } }) });
    } });
    return el("div", { class: "ls-pick tr-pair" }, el("label", {}, t("ls_tr_pair_x") + " ", sx), " ", el("label", {}, t("ls_tr_pair_y") + " ", sy), " ", go);
  },
  rates(data, k) {
    const r = data.rates, n = data.passes;
    const box = el("div");
    if (!r.available) { box.append(el("p", { class: "note", id: "ls-tr-now", text: t("ls_tr_rates_none") })); return box; }
    box.append(el("p", { class: "ls-intro", text: t("ls_tr_rates_intro", { line: r.line, lr: fmt(r.lr) }) }));
    const legend = r.runs.map((x, i) => ["tr-r" + i, t("ls_tr_rate", { lr: fmt(x.lr) })]);
    const charts = el("div", { class: "tr-charts" });
    charts.append(passChart("tr-rates-loss", t("ls_tr_chart_loss"), r.runs.map((x, i) => ({ values: x.loss, cls: "tr-r" + i })), k, t("ls_tr_loss"), legend, r.runs.map((x) => t("ls_tr_rate", { lr: fmt(x.lr) }) + ": " + fmt(x.loss[k])).join("; ")));
    if (data.path.grid && data.path.dims === 2) {
      charts.append(contourChart("tr-rates-path", t("ls_tr_chart_path"), data.path.grid, r.runs.map((x, i) => ({ values: x.values, cls: "tr-r" + i })), k, data.coords.map((c) => c.label), said(k, n, data.loss[k]), legend));
    }
    box.append(charts);
    const ul = el("ul", { class: "tr-outcomes", id: "ls-tr-now" });
    r.runs.forEach((x, i) => {
      const fin = x.loss.filter(finite);
      const first = fmt(fin[0]), last = fmt(fin[fin.length - 1]);
      const text = x.error ? t("ls_tr_stopped", { lr: fmt(x.lr), k: x.passes, error: errText(x.error) }) : t(x.diverged ? "ls_tr_diverged" : "ls_tr_converges", { lr: fmt(x.lr), first, last });
      ul.append(el("li", { class: (x.diverged ? "bad " : "") + "tr-r" + i + "-text", "data-diverged": x.diverged ? "true" : "false" }, el("span", { class: "tr-swatch tr-r" + i, "aria-hidden": "true" }), text));
    });
    box.append(ul);
    return box;
  },
};
