/* A lesson's table of steps × grads ("= instead of +="'s two): built once per trace, then
 * stepped in place. Its rows are the steps up to the current one. Past MAX_SHOWN_CELLS cells it
 * shows a window of rows ending at the step, and when wide, cells only in the columns in view
 * (and half a box either side), as the page's own grad table does (static/js/table.js): a
 * browser lays a table out as a whole, so a step costs in proportion to the cells on show. */
import { cps } from "../format.js";
import { el, fmt, t, zeros } from "./kit.js";

const MAX_SHOWN_CELLS = 2500;
const WIDE = 40; // more grads than this (and too many cells): cells only in the columns in view
const MARK_CHARS = 4; // room for the marks CSS adds to a cell ("✗ " before, " ≠" after)

// spec: {id, caption, columns, rows, names, trace, written(row) -> {id: grad}, mark(td, row, id)}
// rows[r].step === r (the lesson sends the first steps, in order). Returns {box, show(k), shown}.
export function stepTable(spec) {
  const { columns, rows } = spec;
  const wide = columns.length > WIDE && rows.length * columns.length > MAX_SHOWN_CELLS;
  const hr = el("tr", {}, el("th", { scope: "col", text: t("step_col") }));
  const chars = wide ? widest(spec) : null;
  columns.forEach((id) => {
    const th = el("th", { scope: "col", "data-node": id, text: spec.names[id] });
    // As wide as its widest cell at any step: rows and cells coming and going never move it.
    if (wide) th.style.minWidth = "calc(" + chars[id] + "ch + 1rem + 2px)";
    hr.append(th);
  });
  const body = el("tbody");
  const table = el("table", { class: "ls-table", id: spec.id }, el("caption", { text: spec.caption }), el("thead", {}, hr), body);
  const box = el("div", { class: "ls-scroll" }, table);
  const per = rows.length * columns.length > MAX_SHOWN_CELLS ? Math.min(columns.length, WIDE) : 0;
  const span = per ? Math.max(5, Math.floor(MAX_SHOWN_CELLS / per)) : rows.length;
  const st = { rows: null, cols: [0, (wide ? Math.min(columns.length, WIDE) : columns.length) - 1], cur: null, k: null, placed: false };

  const build = (first, last) => buildRows(spec, st.cols, first, last);
  function show(k) {
    if (wide && !st.placed && box.clientWidth) { // on the page now: the columns really in view
      st.placed = true;
      st.cols = colsOnShow(box, spans(table, hr));
      st.rows = null;
    }
    const last = Math.min(k, rows.length - 1);
    slide(body, st, [Math.max(0, last - span + 1), last], build);
    if (st.cur) st.cur.removeAttribute("aria-current");
    st.cur = body.querySelector(`tr[data-step="${k}"]`);
    if (st.cur) st.cur.setAttribute("aria-current", "step");
    if (st.cur && st.k !== k) requestAnimationFrame(() => inView(box, table, st.cur));
    st.k = k;
  }
  // Scrolled sideways: fill in the columns that came into view.
  function follow() {
    if (!box.clientWidth || !st.rows) return;
    const x = spans(table, hr), [a, b] = st.cols;
    if ((a === 0 || x[a][0] <= box.scrollLeft) && (b === columns.length - 1 || x[b][1] >= box.scrollLeft + box.clientWidth)) return;
    st.cols = colsOnShow(box, x);
    st.rows = null;
    show(st.k);
  }
  if (wide) box.addEventListener("scroll", follow, { passive: true });
  return { box, show, shown: () => ({ rows: st.rows, total: rows.length }) };
}

// Show rows [first, last], adding the rows that came in and dropping the ones that left (all
// of them built again only when the two windows do not overlap).
function slide(body, st, [first, last], build) {
  const had = st.rows;
  st.rows = [first, last];
  if (last < first) { body.replaceChildren(); return; }
  if (!had || had[1] < had[0] || first > had[1] || last < had[0]) {
    body.replaceChildren(build(first, last));
    return;
  }
  for (let r = had[0]; r < first; r++) body.firstElementChild.remove();
  for (let r = had[1]; r > last; r--) body.lastElementChild.remove();
  if (first < had[0]) body.prepend(build(first, had[0] - 1));
  if (last > had[1]) body.append(build(had[1] + 1, last));
}

function start(spec) {
  const run = {};
  const shape = {};
  spec.trace.nodes.forEach((n) => { shape[n.id] = n.shape; });
  spec.columns.forEach((id) => { run[id] = zeros(shape[id] || []); });
  return run;
}

// Rows first..last, each cell the grad after its step, in the columns c0..c1.
function buildRows(spec, [c0, c1], first, last) {
  const run = start(spec);
  const frag = document.createDocumentFragment();
  for (let r = 0; r <= last; r++) {
    const row = spec.rows[r];
    const written = spec.written(row);
    Object.assign(run, written);
    if (r < first) continue;
    const tr = el("tr", { "data-step": String(row.step) });
    tr.append(el("th", { scope: "row", text: String(row.step) + " · " + spec.names[row.node] }));
    if (c0 > 0) tr.append(el("td", { class: "gap", colSpan: c0 }));
    for (let c = c0; c <= c1; c++) {
      const id = spec.columns[c];
      const td = el("td", { "data-node": id, text: fmt(run[id]), title: JSON.stringify(run[id]) });
      if (id in written) td.classList.add("changed");
      spec.mark(td, row, id);
      tr.append(td);
    }
    frag.append(tr);
  }
  return frag;
}

// The most characters each column's cells show at any step (the table's font is monospaced).
function widest(spec) {
  const run = start(spec);
  const n = {};
  spec.columns.forEach((id) => { n[id] = cps(fmt(run[id])).length; });
  spec.rows.forEach((row) => {
    Object.entries(spec.written(row)).forEach(([id, g]) => {
      if (id in n) n[id] = Math.max(n[id], cps(fmt(g)).length);
    });
  });
  spec.columns.forEach((id) => { n[id] += MARK_CHARS; });
  return n;
}

// The current row scrolled into the box's view (when it is out of it), as the grad table does.
function inView(box, table, tr) {
  if (!tr.isConnected || !box.clientHeight) return;
  const head = table.tHead ? table.tHead.offsetHeight : 0;
  const top = tr.offsetTop - head;
  if (top < box.scrollTop || tr.offsetTop + tr.offsetHeight > box.scrollTop + box.clientHeight) {
    box.scrollTop = Math.max(0, top - box.clientHeight / 3);
  }
}

// Each column's [left, right] from the table's left edge, which starts the box's scrolled
// content. (Not offsetLeft: the sticky header cells are positioned, so theirs is the page's.)
function spans(table, hr) {
  const x0 = table.getBoundingClientRect().left;
  return [...hr.cells].slice(1).map((th) => { const r = th.getBoundingClientRect(); return [r.left - x0, r.right - x0]; });
}

// The columns in view in the table's box, and half a box either side.
function colsOnShow(box, x) {
  const w = box.clientWidth, n = x.length;
  const lo = box.scrollLeft - w / 2, hi = box.scrollLeft + w * 1.5;
  let a = 0, b = n - 1;
  while (a < n - 1 && x[a][1] < lo) a++;
  while (b > a && x[b][0] > hi) b--;
  return [a, b];
}
