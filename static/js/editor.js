/* The editor: the highlight overlay (the current node, the hovered node, the error), the error
 * box with its caret, the value fields, and the mouse over the source. */
import { $ } from "./dom.js";
import { cps } from "./format.js";
import { t } from "./i18n.js";
import { scheduleRun } from "./run.js";
import { setState, state } from "./store.js";
import { T, inForward, setHover } from "./trace.js";
import { newEntry } from "./url.js";
import { wireValues } from "./values.js";

let editorShown = null; // the text and marks last drawn in the overlay

function spanToRange(src, span) {
  // 1-based line/column counting code points; end_column is exclusive.
  if (!span || !span.line) return null;
  const lines = src.split("\n").map(cps);
  let start = 0;
  for (let i = 0; i < span.line - 1 && i < lines.length; i++) start += lines[i].length + 1;
  const line = lines[span.line - 1] || [];
  let a = start + Math.max(0, (span.column || 1) - 1);
  let endLine = span.end_line || span.line;
  let end;
  if (span.end_column) {
    end = 0;
    for (let i = 0; i < endLine - 1 && i < lines.length; i++) end += lines[i].length + 1;
    end += span.end_column - 1;
  } else if (span.column) {
    end = a + 1;
  } else {
    a = start; end = start + line.length;
  }
  if (end <= a) end = a + 1;
  return [a, end];
}

export function renderEditor() {
  const ta = $("#source"), hl = $("#editor-hl");
  if (!ta || !hl) return;
  if (ta.value !== state.source && document.activeElement !== ta) ta.value = state.source;
  const src = ta.value;
  const chars = cps(src);
  const marks = new Uint8Array(chars.length + 1);
  const paint = (range, bit) => {
    if (!range) return;
    for (let i = range[0]; i < Math.min(range[1], chars.length + 1); i++) marks[i] |= bit;
  };
  if (T() && !state.stale) {
    const fwd = inForward();
    const curId = fwd ? T().trace.topo[state.fwd] : (T().trace.steps[state.step] || {}).node;
    const cur = T().byId[curId];
    if (cur) paint(spanToRange(src, cur.span), 1);
    const hov = state.hover && T().byId[state.hover];
    if (hov) paint(spanToRange(src, hov.span), 2);
  }
  if (state.error && state.error.line) paint(spanToRange(src, state.error), 4);
  const key = src + "\u0000" + marks.join(",");
  if (key === editorShown) return;
  editorShown = key;
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  let html = "", run = "", bits = 0;
  const flush = () => {
    if (!run) return;
    if (bits) {
      const cls = [bits & 4 ? "err" : "", bits & 2 ? "hov" : "", bits & 1 ? "cur" : ""].filter(Boolean).join(" ");
      html += '<mark class="' + cls + '">' + esc(run) + "</mark>";
    } else html += esc(run);
    run = "";
  };
  for (let i = 0; i <= chars.length; i++) {
    const ch = i < chars.length ? chars[i] : " ";
    if (marks[i] !== bits) { flush(); bits = marks[i]; }
    run += ch === "\n" && marks[i] ? " \n" : ch;
  }
  flush();
  hl.innerHTML = html + "\n";
}

let errorShown = null; // the error last drawn in the box

export function renderError() {
  const box = $("#error-box");
  if (!box) return;
  const err = state.error;
  if (!err) { box.hidden = true; box.replaceChildren(); errorShown = null; return; }
  box.hidden = false;
  const fresh = err !== errorShown;
  errorShown = err;
  const parts = [];
  const title = document.createElement("strong");
  title.textContent = t("error_title");
  parts.push(title, document.createElement("br"));
  if (err.line) {
    const where = document.createElement("span");
    where.className = "where";
    where.textContent = t("error_at", { line: err.line, column: err.column || 1 }) + ": ";
    parts.push(where);
  }
  const msg = document.createElement("span");
  msg.className = "msg";
  msg.textContent = err.message;
  parts.push(msg);
  const srcLines = state.source.split("\n");
  if (err.line && srcLines[err.line - 1] !== undefined) {
    const line = cps(srcLines[err.line - 1]);
    const col = Math.max(1, err.column || 1);
    const endCol = err.end_line && err.end_line !== err.line ? line.length + 1 : err.end_column || col + 1;
    const gutter = String(err.line) + " | ";
    const pad = line.slice(0, col - 1).map((c) => (/[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(c) ? "\u3000" : c === "\t" ? "\t" : " ")).join("");
    const pre = document.createElement("pre");
    const caret = document.createElement("span");
    caret.className = "caret";
    caret.textContent = "^".repeat(Math.max(1, endCol - col));
    pre.append(gutter + line.join("") + "\n" + " ".repeat(gutter.length) + pad, caret);
    parts.push(pre);
  }
  box.replaceChildren(...parts);
  if (fresh) requestAnimationFrame(() => clearOfStepBar(box));
}

// On a phone the step bar is fixed at the screen's foot: a new error's caret line that falls
// under it is scrolled up into sight (app.css gives the box a scroll margin as tall as the bar).
function clearOfStepBar(box) {
  const bar = $(".graph-pane .stepbar");
  if (!bar || box.hidden || getComputedStyle(bar).position !== "fixed") return;
  const r = box.getBoundingClientRect(), top = bar.getBoundingClientRect().top;
  if (r.bottom > top && r.top < window.innerHeight) box.scrollIntoView({ block: "end" });
}

// The value fields are their own module (values.js); main.js builds them from here.
export { buildValueFields } from "./values.js";

// The node whose source span is innermost at the mouse position in the editor.
// The line and column (1-based, code points) under the pointer, read from the highlight
// overlay, which wraps the text exactly as the textarea does (a textarea does not say where
// its wrapped lines break): the overlay is hit-tested for a moment in the textarea's place.
function pointAt(ta, hl, ev) {
  const was = [ta.style.pointerEvents, hl.style.pointerEvents];
  ta.style.pointerEvents = "none"; hl.style.pointerEvents = "auto";
  let node = null, offset = 0;
  try {
    if (document.caretPositionFromPoint) {
      const p = document.caretPositionFromPoint(ev.clientX, ev.clientY);
      if (p) { node = p.offsetNode; offset = p.offset; }
    } else if (document.caretRangeFromPoint) {
      const r = document.caretRangeFromPoint(ev.clientX, ev.clientY);
      if (r) { node = r.startContainer; offset = r.startOffset; }
    }
  } finally { [ta.style.pointerEvents, hl.style.pointerEvents] = was; }
  if (!node || !hl.contains(node)) return null;
  if (node.nodeType === 3 && offset > 0) { // the caret falls between characters: which one is under the pointer
    const r = document.createRange(); r.setStart(node, offset - 1); r.setEnd(node, offset);
    const b = r.getBoundingClientRect();
    if (ev.clientX < b.right && ev.clientY >= b.top && ev.clientY <= b.bottom) offset -= 1;
  }
  const range = document.createRange(); range.setStart(hl, 0); range.setEnd(node, offset);
  let line = 1, col = 1;
  for (const ch of range.toString()) { if (ch === "\n") { line++; col = 1; } else col++; }
  return { line, col };
}

function nodeAtPoint(ta, ev) {
  const at = pointAt(ta, $("#editor-hl"), ev);
  if (!at) return null;
  const { line, col } = at;
  let best = null, bestLen = Infinity;
  T().trace.nodes.forEach((n) => {
    const s = n.span;
    if (!s || n.kind === "const") return;
    const inside = (line > s.line || (line === s.line && col >= s.column)) &&
      (line < s.end_line || (line === s.end_line && col < s.end_column));
    if (!inside) return;
    const len = (s.end_line - s.line) * 1000 + (s.end_column - s.column);
    if (len < bestLen) { best = n.id; bestLen = len; }
  });
  return best;
}


function syncScroll(ta) {
  const hl = $("#editor-hl");
  if (hl) { hl.scrollTop = ta.scrollTop; hl.scrollLeft = ta.scrollLeft; }
}

export function wireEditor() {
  const ta = $("#source");
  if (ta) {
    ta.addEventListener("input", () => {
      newEntry("typed"); // the first edit of a program begins an entry of its own
      setState({ source: ta.value });
      syncScroll(ta);
      scheduleRun();
    });
    ta.addEventListener("scroll", () => syncScroll(ta));
    ta.addEventListener("mousemove", (ev) => {
      if (!T() || state.stale) return;
      const id = nodeAtPoint(ta, ev);
      if (id !== state.hover) setHover(id);
    });
    ta.addEventListener("mouseleave", () => setHover(null));
  }
  wireValues();
}
