/* The one URL codec of the page: the address bar always holds the whole state (a permalink).
 * The parameters, their order and defaults come from static/query.json, the table app/query.py
 * reads too; the server parses an address, the page only writes one. */
import TABLE from "../query.json" with { type: "json" };
import { STANDALONE } from "./boot.js";
import { state } from "./store.js";
import { T, inForward } from "./trace.js";

const DEFAULTS = {};
TABLE.params.forEach((p) => { DEFAULTS[p.name] = p.default; });
// The characters a link keeps unescaped (as app/query.py's urlencode(..., safe=...)).
const SAFE = Array.from(TABLE.safe).map((c) => [encodeURIComponent(c), c]);

export function enc(s) {
  let out = encodeURIComponent(s);
  SAFE.forEach(([code, c]) => { out = out.split(code).join(c); });
  return out;
}

// `x=2,y=3` when every value is a number, otherwise a JSON object.
export function formatValues(values) {
  const keys = Object.keys(values);
  if (!keys.length) return null;
  if (keys.every((k) => typeof values[k] === "number")) return keys.map((k) => k + "=" + values[k]).join(",");
  return JSON.stringify(values);
}

const zCache = new Map(); // source -> its `z=` (deflating is async: done before a link is written)
async function deflate(source) {
  if (zCache.has(source)) return zCache.get(source);
  if (!window.CompressionStream) return null;
  const stream = new Blob([new TextEncoder().encode(source)]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const buf = new Uint8Array(await new Response(stream).arrayBuffer());
  let bin = "";
  buf.forEach((b) => { bin += String.fromCharCode(b); });
  const z = btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  zCache.set(source, z);
  return z;
}

function isLong(source) { return enc(source).length > TABLE.long_source; }

export async function ensureCompressed() {
  if (isLong(state.source) && !zCache.has(state.source)) {
    try { await deflate(state.source); } catch (e) { /* fall back to plain source */ }
  }
}

// Each parameter's text for the state on show, or null to leave it out.
function given(opts) {
  const z = isLong(state.source) ? zCache.get(state.source) : null;
  const stepped = T() && !opts.noStep;
  const fwd = stepped && inForward() && !opts.backwardOnly;
  return {
    v: String(TABLE.version),
    z: z || null,
    source: z ? null : state.source,
    values: formatValues(state.values),
    accumulate: state.accumulate,
    order: state.order,
    step: stepped && !fwd ? String(state.step) : null,
    fwd: fwd ? String(state.fwd) : null,
    lang: state.lang,
    present: state.present && !opts.noPresent ? "1" : null,
    layout: state.layout,
    collapse: state.collapse == null ? null : state.collapse ? "1" : "0",
    lesson: opts.backwardOnly ? null : state.lesson.name,
  };
}

// The query string of the state on show. opts: noStep, backwardOnly (an image: no forward
// position, no lesson), noPresent (an embed).
export function queryPairs(opts) {
  const values = given(opts || {});
  return TABLE.params
    .filter((p) => values[p.name] != null && !(p.type === "choice" && values[p.name] === DEFAULTS[p.name]))
    .map((p) => p.name + "=" + enc(values[p.name]))
    .join("&");
}

function renderHash() {
  if (!T() || location.protocol === "about:") return; // a notebook's iframe has no address
  const want = "#step=" + state.step;
  if (location.hash === want) return;
  try { history.replaceState(null, "", want); } catch (e) { /* an opaque origin may refuse */ }
}

// The page's history: a new program (an example chosen, or the first edit of a program the
// page did not have from typing) pushes an entry; steps, values, options and further typing
// replace it. Each entry keeps the state it shows (history.js puts it back on Back/Forward).
let entryKind = "opened"; // how the entry on show began: "opened", "example", "typed"
let pushNext = false;

// The next address write starts a new entry for a program that came `kind` ("example" always
// does; "typed" only when the entry on show was not typed already).
export function newEntry(kind) {
  if (kind === "typed" && entryKind === "typed") return;
  entryKind = kind;
  pushNext = true;
}

// An entry put back (Back, Forward): its kind, and no new entry for it.
export function enteredEntry(kind) {
  entryKind = kind || "opened";
  pushNext = false;
}

// What an entry holds: the state to put back.
function entryState() {
  return {
    gradtrace: TABLE.version,
    kind: entryKind,
    query: {
      source: state.source, values: state.values, accumulate: state.accumulate, order: state.order,
      step: state.step, fwd: state.forwardMode ? state.fwd : null, lang: state.lang,
      layout: state.layout, collapse: state.collapse, lesson: state.lesson.name, present: state.present,
    },
  };
}

let urlTimer = null; // one address write per burst of changes
export function renderUrl() {
  if (STANDALONE) { renderHash(); return; }
  clearTimeout(urlTimer);
  urlTimer = setTimeout(async () => {
    await ensureCompressed();
    // A class's room=CODE and its instructor's #key=… (static/js/room/) stay in the address.
    const room = new URLSearchParams(location.search).get("room");
    const url = location.pathname + "?" + queryPairs() + (room ? "&room=" + enc(room) : "") + location.hash;
    const push = pushNext;
    pushNext = false;
    try {
      if (push) history.pushState(entryState(), "", url);
      else history.replaceState(entryState(), "", url);
    } catch (e) { /* an opaque origin may refuse */ }
  }, 0);
}
