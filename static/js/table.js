/* The grad table (#grad-table): one column per grad, one row per backward step. A large table
 * shows a window of rows around the step, and (when wide) cells only in the columns in view. */
import { $, $$, on } from "./dom.js";
import { cps, exact, fmt, fmtCell, shapeBadge, shapeOf } from "./format.js";
import { t } from "./i18n.js";
import { state } from "./store.js";
import { T, fwdCount, inForward, inPassOf, nodeLabel, passOf, setPos } from "./trace.js";

const MAX_TABLE_CELLS = 5000;
// A table wider than this many grads has cells only in the columns on show (and half a box
// either side): the rest of each row is one empty cell. A browser lays a table out as a
// whole, so a step that adds a row costs in proportion to every cell in it.
const WIDE_TABLE = 40;
// A table of passes with more cells than this shows the rows of three passes at a time.
const PASS_WINDOW_CELLS = 1500;

// [first, last] rows of the pass on show and the kept passes before and after it, or null.
function passSpan() {
  const ps = T().passes;
  if (!ps || T().pass === null) return null;
  const p = T().pass;
  let lo = p, hi = p;
  for (let j = p - 1; j >= 0; j--) if (ps[j].kept) { lo = j; break; }
  for (let j = p + 1; j < ps.length; j++) if (ps[j].kept) { hi = j; break; }
  return [ps[lo].first_step, ps[hi].last_step];
}

let tableWindow = null; // [first, last] rows rendered, when the table is too large for all
let tableCols = null; // [first, last] columns (indices into T().cols) with cells, when wide

function isWide() {
  return !!T() && T().cols.length > WIDE_TABLE && T().trace.steps.length * T().cols.length > MAX_TABLE_CELLS;
}

// A grad as its cell shows it: a matrix as its shape and its rows, one line each (the first
// MAX_ROWS rows and MAX_COLS columns), so a 2×2 grad never reads as a flat list of four.
const MAX_ROWS = 4, MAX_COLS = 4;
function cellText(v) {
  const shape = Array.isArray(v) ? shapeOf(v) : [];
  if (shape.length !== 2) return fmtCell(v);
  const row = (r) => "[" + r.slice(0, MAX_COLS).map(fmt).join(", ") + (r.length > MAX_COLS ? ", …" : "") + "]";
  const rows = v.slice(0, MAX_ROWS).map(row);
  if (v.length > MAX_ROWS) rows.push("…");
  return shapeBadge(shape) + "\n" + rows.join("\n");
}

function setCell(td, v) {
  const text = cellText(v);
  td.textContent = text;
  td.title = exact(v);
  if (text.includes("\n")) { td.style.whiteSpace = "pre"; td.classList.add("rows"); }
}

// The most characters each column's cells show at any step (the font is monospaced).
function cellChars() {
  const n = {};
  const width = (v) => Math.max(...cellText(v).split("\n").map((l) => cps(l).length));
  T().cols.forEach((id) => { n[id] = width(T().zeros[id]); });
  T().trace.steps.forEach((st) => {
    Object.entries(st.grads || {}).forEach(([id, g]) => {
      if (id in n) n[id] = Math.max(n[id], width(g));
    });
  });
  return n;
}

// The columns in view in the table's box, and half a box either side.
function colsOnShow(table) {
  const box = table.closest(".table-scroll");
  const heads = table.tHead.rows[0].cells;
  const n = T().cols.length;
  const w = box ? box.clientWidth : 0;
  if (!w) return [0, Math.min(n, WIDE_TABLE) - 1]; // not laid out (a closed <details>)
  // Offsets from the table, which starts the box's scrolled content (the sticky corner cell
  // has moved with the scroll, so it is no origin).
  const lo = box.scrollLeft - w / 2, hi = box.scrollLeft + w * 1.5;
  let a = 0, b = n - 1;
  while (a < n - 1 && heads[a + 1].offsetLeft + heads[a + 1].offsetWidth < lo) a++;
  while (b > a && heads[b + 1].offsetLeft > hi) b--;
  return [a, b];
}

// Scrolled sideways (or resized): fill in the columns that came into view.
function followTableScroll() {
  const table = $("#grad-table");
  if (!table || !T() || !tableCols || !isWide()) return;
  const box = table.closest(".table-scroll");
  if (!box || !box.clientWidth) return;
  const heads = table.tHead.rows[0].cells;
  const [a, b] = tableCols;
  const left = heads[a + 1].offsetLeft, right = heads[b + 1].offsetLeft + heads[b + 1].offsetWidth;
  const inView = (a === 0 || left <= box.scrollLeft) &&
    (b === T().cols.length - 1 || right >= box.scrollLeft + box.clientWidth);
  if (inView) return;
  tableCols = colsOnShow(table);
  renderTableBody(true);
  renderTable(true);
}

function stepDesc(k) {
  const st = T().trace.steps[k];
  const label = nodeLabel(st.node);
  if (k === 0 || st.kind === "seed") {
    return t(T().trace.seeded_with_ones ? "seed_row_ones" : "seed_row", { node: label });
  }
  const node = T().byId[st.node];
  return t("backward_row", { node: label, op: (node && (node.symbol || node.op)) || st.op || "" });
}

export function buildTable() {
  const table = $("#grad-table");
  if (!table) return;
  const thead = table.tHead, tbody = table.tBodies[0], tfoot = table.tFoot;
  thead.replaceChildren(); tbody.replaceChildren(); tfoot.replaceChildren();
  tableWindow = null;
  if (!T()) return;
  const hr = document.createElement("tr");
  const corner = document.createElement("th");
  corner.scope = "col";
  corner.textContent = t("step_col");
  hr.append(corner);
  const wide = isWide();
  const chars = wide ? cellChars() : null;
  T().cols.forEach((id) => {
    const th = document.createElement("th");
    th.scope = "col";
    th.dataset.node = id;
    th.textContent = nodeLabel(id);
    th.title = nodeLabel(id) + ".grad";
    // The column is as wide as its widest cell at any step, so rows coming and going (and
    // cells filled in as the table scrolls sideways) never move the columns.
    if (wide) th.style.minWidth = "calc(" + chars[id] + "ch + 1rem + 2px)";
    hr.append(th);
  });
  thead.append(hr);
  tableCols = wide ? colsOnShow(table) : null;
  renderTableBody(true);
  // What the other accumulation gives, after the last step.
  if (state.contrast && state.contrast.grads) {
    const tr = document.createElement("tr");
    tr.className = "contrast";
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = t(state.contrast.accumulate === "assign" ? "contrast_assign" : "contrast_add");
    tr.append(th);
    T().cols.forEach((id) => {
      const td = document.createElement("td");
      td.dataset.node = id;
      const v = state.contrast.grads[id];
      if (v === undefined) { td.classList.add("other-pass"); tr.append(td); return; } // another pass's node
      setCell(td, v);
      const final = T().byId[id].grad;
      if (JSON.stringify(v) !== JSON.stringify(final)) {
        td.classList.add(state.contrast.accumulate === "assign" ? "wrong" : "right");
      }
      tr.append(td);
    });
    tfoot.append(tr);
  }
}

// The rows on show: all of them, or (a table too large for that) a window around the step,
// which slides with it: stepping adds the row coming into the window and drops the one
// leaving it, rather than rebuilding the window.
function renderTableBody(force) {
  const table = $("#grad-table");
  if (!table || !T()) return false;
  const tbody = table.tBodies[0];
  const rows = T().trace.steps.length, cols = Math.max(1, T().cols.length);
  let first = 0, last = rows - 1;
  const note = $("#table-note");
  let windowed = rows * cols > MAX_TABLE_CELLS;
  if (windowed) {
    const half = Math.max(5, Math.floor(MAX_TABLE_CELLS / cols / 2));
    first = Math.max(0, state.step - half);
    last = Math.min(rows - 1, state.step + half);
  }
  // A long loop of passes: the rows of the pass on show and the kept passes either side (a
  // step into the next pass lays out a few rows, not the whole table).
  const span = rows * cols > PASS_WINDOW_CELLS ? passSpan() : null;
  if (span) {
    first = Math.max(first, span[0]);
    last = Math.min(last, span[1]);
    windowed = windowed || first > 0 || last < rows - 1;
  }
  const shown = tableWindow;
  if (!force && shown && shown[0] === first && shown[1] === last) return false;
  if (windowed && note) { note.hidden = false; note.textContent = `${first}–${last} / ${rows - 1}`; }
  else if (note) note.hidden = true;
  tableWindow = [first, last];
  if (!force && shown && first <= shown[1] && last >= shown[0]) {
    // Overlapping windows: drop the rows that left, add the ones that came in.
    for (let k = shown[0]; k < first; k++) tbody.firstElementChild.remove();
    for (let k = shown[1]; k > last; k--) tbody.lastElementChild.remove();
    if (first < shown[0]) tbody.prepend(buildRows(first, shown[0] - 1));
    if (last > shown[1]) tbody.append(buildRows(shown[1] + 1, last));
    return "slid";
  }
  tbody.replaceChildren(buildRows(first, last));
  tableShown = null;
  return "built";
}

// Rows first..last, each as it should look at the current step.
function buildRows(first, last) {
  const [c0, c1] = tableCols || [0, T().cols.length - 1];
  const grads = Object.assign({}, T().zeros);
  const fwd = inForward();
  const frag = document.createDocumentFragment();
  for (let k = 0; k <= last; k++) {
    const st = T().trace.steps[k];
    Object.assign(grads, st.grads || {});
    if (k < first) continue;
    const tr = document.createElement("tr");
    tr.dataset.step = String(k);
    if (!fwd && k === state.step) tr.setAttribute("aria-current", "step");
    if (fwd || k > state.step) tr.className = "later";
    const th = document.createElement("th");
    th.scope = "row";
    // The whole step ("1 · out._backward() (+)"), and its node alone, which presentation's
    // narrow column shows (app.css): the sentence beside it says the rest.
    const full = document.createElement("span");
    full.className = "row-full";
    full.textContent = stepDesc(k);
    const brief = document.createElement("span");
    brief.className = "row-brief";
    brief.textContent = nodeLabel(st.node);
    th.append(k + " · ", full, brief);
    const p = passOf(k);
    if (p !== null && T().passes[p].first_step === k) {
      // A pass begins: its seed row says which pass, and what started it.
      tr.classList.add("pass-start");
      const mark = document.createElement("span");
      mark.className = "pass-mark";
      mark.textContent = passWords(p);
      th.prepend(mark);
    }
    tr.append(th);
    if (c0 > 0) tr.append(gapCell(c0));
    for (let c = c0; c <= c1; c++) {
      const id = T().cols[c];
      const td = document.createElement("td");
      td.dataset.node = id;
      if (inPassOf(id, k)) setCell(td, grads[id]);
      else td.classList.add("other-pass"); // a node of the pass on show, at a step of another
      if (st.grads && id in st.grads) td.classList.add("changed");
      if (id === state.hover) td.classList.add("hover");
      tr.append(td);
    }
    frag.append(tr);
  }
  return frag;
}

// "Pass 2 of 3: loss.backward() at line 5", from the pass's line of the program.
export function passWords(p) {
  const ps = T().passes;
  return t("pass_row", { k: p + 1, n: ps.length, call: passCall(p), line: ps[p].line });
}

// The statement that ran pass p, as the program writes it.
export function passCall(p) {
  const line = T().passes[p].line;
  const text = line ? (state.source.split("\n")[line - 1] || "").trim() : "";
  return text.length > 60 ? text.slice(0, 59) + "…" : text;
}

function gapCell(span) {
  const td = document.createElement("td");
  td.className = "gap";
  td.colSpan = span;
  return td;
}

// Only the rows and columns that changed are touched: a big table must step quickly too.
let tableShown = null; // {step, fwd, hover} as last drawn
export function renderTable(keepScroll) {
  const table = $("#grad-table");
  if (!table || !T()) return;
  const rebuilt = renderTableBody(false) === "built";
  const fwd = inForward();
  const cur = fwd ? -1 : state.step;
  const prev = rebuilt || !tableShown ? null : tableShown;
  const rows = table.tBodies[0].rows;
  const first = tableWindow ? tableWindow[0] : 0;
  const touch = (k) => {
    const tr = rows[k - first];
    if (!tr) return;
    if (k === cur) tr.setAttribute("aria-current", "step"); else tr.removeAttribute("aria-current");
    tr.classList.toggle("later", fwd || k > state.step);
  };
  if (!prev) {
    for (let i = 0; i < rows.length; i++) touch(first + i);
  } else if (prev.step !== state.step || prev.fwd !== fwd) {
    const lo = Math.min(prev.step, state.step), hi = Math.max(prev.step, state.step);
    if (prev.fwd !== fwd) for (let i = 0; i < rows.length; i++) touch(first + i);
    else for (let k = lo; k <= hi; k++) touch(k);
  }
  if (!prev || prev.hover !== state.hover) {
    const ids = [prev && prev.hover, state.hover].filter(Boolean);
    if (!prev) $$(".hover", table).forEach((c) => c.classList.remove("hover"));
    ids.forEach((id) => {
      $$('[data-node="' + id + '"]', table).forEach((c) => c.classList.toggle("hover", c.dataset.node === state.hover));
    });
  }
  const moved = !prev || prev.step !== state.step || prev.fwd !== fwd;
  tableShown = { step: state.step, fwd, hover: state.hover };
  const currentRow = moved && cur >= 0 && !keepScroll ? rows[cur - first] : null;
  if (currentRow) {
    const box = table.closest(".table-scroll");
    if (box) {
      requestAnimationFrame(() => {
        const head = table.tHead ? table.tHead.offsetHeight : 0;
        const top = currentRow.offsetTop - head;
        if (top < box.scrollTop || currentRow.offsetTop + currentRow.offsetHeight > box.scrollTop + box.clientHeight) {
          box.scrollTop = Math.max(0, top - box.clientHeight / 3);
        }
      });
    }
  }
}


export function wireTable() {
  // Copying from the table gives the exact values, not the rounded ones on show.
  document.addEventListener("copy", (ev) => {
    const sel = document.getSelection();
    const table = $("#grad-table");
    if (!sel || sel.isCollapsed || !table || !table.contains(sel.anchorNode)) return;
    const rows = [];
    $$("tr", table).forEach((tr) => {
      const cells = [...tr.cells].filter((c) => sel.containsNode(c, true));
      if (cells.length) rows.push(cells.map((c) => (c.tagName === "TD" && c.title ? c.title : c.textContent)).join("\t"));
    });
    if (!rows.length || !ev.clipboardData) return;
    ev.clipboardData.setData("text/plain", rows.join("\n"));
    ev.preventDefault();
  });
  const tableBox = $("#grad-table") && $("#grad-table").closest(".table-scroll");
  if (tableBox) tableBox.addEventListener("scroll", followTableScroll, { passive: true });
  window.addEventListener("resize", followTableScroll);
  on("#grad-table", "click", (ev) => {
    const tr = ev.target.closest && ev.target.closest("tbody tr");
    if (tr && tr.dataset.step !== undefined) setPos(fwdCount() + Number(tr.dataset.step));
  });
}
