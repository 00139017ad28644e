/* The Output panel (templates/_output.html): what the program says back. Its printed lines
 * (print(…) and `x.grad`, as the trace's `printed` has them) in monospace beside their source
 * line numbers, and its did-you-mean warnings (`warnings`), each a button that puts the
 * editor's caret on the name it is about. Hidden when the program says nothing. */
import { $ } from "./dom.js";
import { cps } from "./format.js";
import { t } from "./i18n.js";
import { state, subscribe } from "./store.js";

let shown = null; // [trace, lang, stale] last drawn

// A 1-based line/column span (columns in code points, end exclusive) as the textarea's
// selection, which counts UTF-16 code units.
export function spanToSelection(src, w) {
  const lines = src.split("\n");
  const units = (lineNo, col) => {
    let at = 0;
    for (let i = 0; i < lineNo - 1 && i < lines.length; i++) at += lines[i].length + 1;
    const text = cps(lines[lineNo - 1] || "");
    return at + text.slice(0, Math.max(0, col - 1)).join("").length;
  };
  const a = units(w.line, w.column || 1);
  const b = w.end_column ? units(w.end_line || w.line, w.end_column) : a + 1;
  return [Math.min(a, src.length), Math.min(Math.max(a, b), src.length)];
}

function selectInEditor(w) {
  const ta = $("#source");
  if (!ta) return;
  const [a, b] = spanToSelection(ta.value, w);
  ta.focus();
  ta.setSelectionRange(a, b);
}

function warningItem(w) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "out-warn";
  const where = document.createElement("span");
  where.className = "where";
  where.textContent = t("error_at", { line: w.line, column: w.column || 1 }) + ": ";
  const msg = document.createElement("span");
  msg.className = "msg";
  // The page words it itself (it changes language without asking the server again).
  msg.textContent = w.name && w.suggestion
    ? t("output_did_you_mean", { name: w.name, suggestion: w.suggestion })
    : w.message;
  button.append(where, msg);
  button.title = t("output_go_to");
  button.addEventListener("click", () => selectInEditor(w));
  li.append(button);
  return li;
}

function printedRow(p) {
  const row = document.createElement("div");
  row.className = "out-line";
  const ln = document.createElement("span");
  ln.className = "out-ln";
  ln.textContent = String(p.line);
  ln.setAttribute("aria-label", t("output_line", { line: p.line }));
  const text = document.createElement("code");
  text.className = "out-text";
  text.textContent = p.text;
  row.append(ln, text);
  return row;
}

export function renderOutput() {
  const panel = $("#output");
  if (!panel) return;
  const trace = state.trace;
  if (shown && shown[0] === trace && shown[1] === state.lang && shown[2] === state.stale) return;
  shown = [trace, state.lang, state.stale];
  const printed = (trace && trace.printed) || [];
  const warnings = (trace && trace.warnings) || [];
  panel.hidden = !printed.length && !warnings.length;
  panel.classList.toggle("stale", !!state.stale);
  const list = $("#output-warnings", panel), lines = $("#output-printed", panel);
  list.hidden = !warnings.length;
  list.replaceChildren(...warnings.map(warningItem));
  lines.hidden = !printed.length;
  lines.replaceChildren(...printed.map(printedRow));
}

export function startOutput() {
  if (!$("#output")) return;
  subscribe(renderOutput);
  renderOutput();
}
