/* What POST /api/own found, on the own-engine page: the bugs (each a button to its step), the
 * nodes they point at marked in the drawing and the grad table, gradtrace's own grads beside
 * the student's with the step where they part, and the end-to-end check. */
import { $, $$ } from "../dom.js";
import { fmt } from "../format.js";
import { t } from "../i18n.js";
import { state } from "../store.js";
import { T, setPos } from "../trace.js";

let shown = null; // the answer and language last drawn

function cell(tag, text, cls) {
  const el = document.createElement(tag);
  el.textContent = text;
  if (cls) el.className = cls;
  return el;
}

function row(cells, cls) {
  const tr = document.createElement("tr");
  if (cls) tr.className = cls;
  cells.forEach((c) => tr.append(c));
  return tr;
}

function label(id) {
  const n = T() && T().byId[id];
  return n ? n.label : id;
}

function findingsList(answer) {
  const ul = $("#own-findings");
  const items = (answer.findings || []).map((f) => {
    const li = document.createElement("li");
    li.className = "own-finding";
    li.dataset.code = f.code;
    li.dataset.node = f.node;
    const name = cell("strong", f.name, "own-bug-name");
    const msg = cell("span", " " + f.message, "own-bug-msg");
    li.append(name, msg);
    if (f.step !== null && f.step !== undefined) {
      const go = cell("button", t("own_go_step", { step: f.step }), "own-go");
      go.type = "button";
      go.addEventListener("click", () => setPos(f.step));
      li.append(" ", go);
    }
    return li;
  });
  if (!items.length) items.push(cell("li", t("own_none_found"), "own-ok"));
  ul.replaceChildren(...items);
}

function referenceTable(answer) {
  const ref = answer.reference || {};
  const said = $("#own-ref-said");
  const parted = ref.parted;
  said.textContent = (parted ? parted.message : t("own_ref_agree")) + " " + (ref.summary || "");
  said.classList.toggle("own-bad", !!parted);
  const table = $("#own-ref");
  table.tHead.replaceChildren(row(["own_col_node", "own_col_yours", "own_col_theirs"].map((k) => cell("th", t(k)))));
  const rows = T().trace.nodes.filter((n) => n.id in (ref.grads || {})).map((n) => {
    const theirs = ref.grads[n.id];
    const same = Math.abs(theirs - n.grad) <= 1e-7 + 1e-5 * Math.max(Math.abs(theirs), Math.abs(n.grad));
    const tr = row([cell("th", n.label), cell("td", fmt(n.grad)), cell("td", fmt(theirs))], same ? "" : "own-differs");
    tr.dataset.node = n.id;
    tr.firstChild.scope = "row";
    return tr;
  });
  table.tBodies[0].replaceChildren(...rows);
}

function checkTable(answer) {
  const table = $("#own-check");
  table.tHead.replaceChildren(row(["own_col_node", "own_col_yours", "own_col_slope", "own_col_agree"].map((k) => cell("th", t(k)))));
  const rows = (answer.end_to_end || []).map((e) => {
    const tr = row([cell("th", label(e.leaf)), cell("td", fmt(e.grad)), cell("td", fmt(e.slope)),
      cell("td", e.ok ? "✓ " + t("own_yes") : "✗ " + t("own_no"))], e.ok ? "" : "own-differs");
    tr.firstChild.scope = "row";
    tr.dataset.node = e.leaf;
    return tr;
  });
  table.tBodies[0].replaceChildren(...rows);
}

// The nodes the findings point at: a class on their box in the drawing and their column's head.
function marks(answer) {
  const wrong = new Set();
  const carried = new Set();
  (answer ? answer.findings || [] : []).forEach((f) => {
    wrong.add(f.node);
    (f.marks || []).forEach((id) => carried.add(id));
  });
  $$("#graph g.node").forEach((g) => {
    g.classList.toggle("own-wrong", wrong.has(g.id));
    g.classList.toggle("own-carried", carried.has(g.id));
  });
  $$("#grad-table thead th[data-node]").forEach((th) => {
    th.classList.toggle("own-wrong", wrong.has(th.dataset.node));
  });
}

function printed(own) {
  const box = $("#own-printed-box");
  const lines = own.printed || [];
  box.hidden = !lines.length;
  $("#own-printed").textContent = lines.join("\n");
}

export function renderReport(answer, own) {
  const panel = $("#own-report");
  if (!panel) return;
  marks(answer);
  printed(own);
  const key = answer ? [answer, state.lang, T() && T().trace] : null;
  if (shown && key && shown[0] === key[0] && shown[1] === key[1] && shown[2] === key[2]) return;
  shown = key;
  panel.hidden = !answer || !T();
  if (!answer || !T()) return;
  findingsList(answer);
  referenceTable(answer);
  checkTable(answer);
}
