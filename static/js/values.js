/* The value fields (#value-fields): one per free name while the program has free names, each
 * a number or a nested list (a tensor). Text that cannot be read stays in its field, marked
 * (aria-invalid and a message), and is never sent; a shape error says which fields need a
 * tensor. The fields stay while the program in the editor cannot run. */
import { $, on, setText } from "./dom.js";
import { shapeBadge, shapeOf } from "./format.js";
import { t } from "./i18n.js";
import { scheduleRun } from "./run.js";
import { setState, state, subscribe } from "./store.js";
import { T } from "./trace.js";

let lastFree = []; // the free names last shown: kept while the editor's program cannot run
let builtKey = null; // the names and language the fields were built for
const invalid = {}; // name -> the word saying why the text in its field could not be read

// `2`, `-1.5e3`, `[1, -1]`, `[[1, 2], [3, 4]]`: the value, or {error}: the word for what is wrong.
export function readValue(raw) {
  const text = raw.trim();
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) {
    const v = Number(text);
    return Number.isFinite(v) ? { value: v } : { error: "value_not_finite" };
  }
  let v;
  try { v = JSON.parse(text); } catch (e) { return { error: "value_unreadable" }; }
  if (!Array.isArray(v)) return { error: "value_unreadable" };
  return checkTensor(v) || { value: v };
}

// A nested list of finite numbers with rows of equal length, or the reason it is not.
function checkTensor(v) {
  const shape = shapeOf(v);
  const walk = (x, depth) => {
    if (depth === shape.length) return typeof x === "number" && Number.isFinite(x) ? null : "value_unreadable";
    if (!Array.isArray(x)) return "value_unreadable";
    if (x.length !== shape[depth] || !x.length) return x.length ? "value_ragged" : "value_empty";
    for (const y of x) { const bad = walk(y, depth + 1); if (bad) return bad; }
    return null;
  };
  const bad = walk(v, 0);
  return bad ? { error: bad } : null;
}

// The free names on show: the trace's, the ones an error answer names, or the last shown.
function freeNames() {
  if (state.error && Array.isArray(state.error.free)) {
    return state.error.free.map((f) => (typeof f === "string" ? { name: f, value: 1 } : f));
  }
  if (T() && !state.stale) lastFree = T().trace.free || [];
  return lastFree;
}

function shown(v) {
  return typeof v === "number" ? String(v) : JSON.stringify(v).replace(/,/g, ", ");
}

// The text of the source the error points at (its span), for the names in it.
function errorText() {
  const err = state.error;
  if (!err || !err.line) return "";
  const lines = state.source.split("\n").map((l) => Array.from(l));
  const a = err.line, b = err.end_line || err.line;
  const out = [];
  for (let i = a; i <= b && i <= lines.length; i++) {
    const line = lines[i - 1];
    const from = i === a ? (err.column || 1) - 1 : 0;
    const to = i === b && err.end_column ? err.end_column - 1 : line.length;
    out.push(line.slice(from, to).join(""));
  }
  return out.join("\n");
}

// What the field of `f` says under it: unreadable text, or what a shape error needs of it.
function noteFor(f, text) {
  if (invalid[f.name]) return t(invalid[f.name]);
  const err = state.error;
  if (!err || err.code !== "shape" || f.labels) return "";
  if (!new RegExp("(^|[^\\w])" + f.name + "($|[^\\w])", "u").test(text)) return "";
  const v = Object.prototype.hasOwnProperty.call(state.values, f.name) ? state.values[f.name] : f.value;
  if (typeof v === "number") return t("value_needs_tensor", { name: f.name });
  return t("value_shape_now", { name: f.name, shape: shapeBadge(shapeOf(v)) });
}

function buildField(f) {
  const wrap = document.createElement("div");
  wrap.className = "value-field";
  const label = document.createElement("label");
  const name = document.createElement("span");
  name.textContent = f.name + " =";
  const input = document.createElement("input");
  input.type = "text";
  input.dataset.name = f.name;
  input.spellcheck = false;
  input.autocomplete = "off";
  input.setAttribute("aria-label", f.name);
  input.setAttribute("aria-describedby", "value-note-" + f.name);
  const d = document.createElement("span");
  d.className = "default";
  const note = document.createElement("span");
  note.className = "value-note";
  note.id = "value-note-" + f.name;
  note.setAttribute("role", "status");
  // Laid out here (app.css is shared): one field a line, its note under it.
  wrap.style.cssText = "display:flex;flex-direction:column;gap:.15rem;flex:1 1 100%;min-width:0";
  input.style.cssText = "flex:1 1 auto;min-width:4rem;width:auto";
  note.style.cssText = "font-size:.8rem;line-height:1.3";
  label.append(name, input, d);
  wrap.append(label, note);
  return wrap;
}

export function buildValueFields() {
  const host = $("#value-fields");
  if (!host) return;
  const free = freeNames();
  const fs = $("#values");
  if (fs) fs.hidden = !free.length;
  const focused = document.activeElement && host.contains(document.activeElement) ? document.activeElement : null;
  const key = free.map((f) => f.name).join("\u0000") + "\u0001" + state.lang;
  if (key !== builtKey && !focused) {
    builtKey = key;
    Object.keys(invalid).forEach((k) => { if (!free.some((f) => f.name === k)) delete invalid[k]; });
    host.replaceChildren(...free.map(buildField));
  }
  const text = errorText();
  free.forEach((f) => {
    const input = host.querySelector('input[data-name="' + CSS.escape(f.name) + '"]');
    if (!input) return;
    const given = Object.prototype.hasOwnProperty.call(state.values, f.name);
    if (input !== focused && !invalid[f.name]) {
      const want = shown(given ? state.values[f.name] : f.value);
      if (input.value !== want) input.value = want;
    }
    const note = noteFor(f, text);
    const wrong = !!invalid[f.name];
    if (wrong) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
    input.style.outline = wrong ? "2px solid #c62828" : "";
    setText(input.parentElement.querySelector(".default"), given ? "" : "(" + t("default_value") + ")");
    const noteEl = host.querySelector("#value-note-" + CSS.escape(f.name));
    if (noteEl) {
      setText(noteEl, note);
      noteEl.hidden = !note;
      noteEl.style.color = wrong ? "#c62828" : "";
    }
  });
}

let seen = null; // the state the fields were last brought up to date for
export function wireValues() {
  on("#value-fields", "input", (ev) => {
    const input = ev.target;
    const name = input.dataset && input.dataset.name;
    if (!name) return;
    const raw = input.value.trim();
    const values = Object.assign({}, state.values);
    delete invalid[name];
    if (raw === "") delete values[name];
    else {
      const read = readValue(raw);
      if (read.error) {
        invalid[name] = read.error; // marked and kept, never sent
        buildValueFields();
        return;
      }
      values[name] = read.value;
    }
    setState({ values });
    buildValueFields();
    scheduleRun(300);
  });
  // Errors come and go without a new trace: the notes follow them (and the language).
  subscribe((s) => {
    const now = [s.trace, s.error, s.stale, s.lang, s.values];
    if (seen && now.every((x, i) => x === seen[i])) return;
    seen = now;
    buildValueFields();
  });
}
