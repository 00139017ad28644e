/* Back and Forward through the page's own entries (url.js writes them: a new program pushes
 * one, a step or a small change replaces it). An entry's state is put back as it was: the
 * same program only moves to the entry's step; another program is run again and opens at the
 * entry's step, so Back after choosing an example brings back the program that was typed. */
import { STANDALONE } from "./boot.js";
import { $ } from "./dom.js";
import { runAt } from "./run.js";
import { setState, state } from "./store.js";
import { T, fwdCount, setPos } from "./trace.js";
import { enteredEntry } from "./url.js";

function sameProgram(q) {
  const same = (a, b) => JSON.stringify(a == null ? null : a) === JSON.stringify(b == null ? null : b);
  return q.source === state.source && same(q.values || {}, state.values || {}) &&
    q.accumulate === state.accumulate && q.order === state.order && same(q.collapse, state.collapse);
}

function restore(entry) {
  enteredEntry(entry.kind);
  const q = entry.query;
  const step = Math.max(0, Number(q.step) || 0);
  const view = { lang: q.lang === "zh" ? "zh" : "en", layout: q.layout || null, present: !!q.present };
  if (sameProgram(q) && T()) {
    setState(view);
    if (q.fwd != null && state.forwardMode) setPos(Number(q.fwd));
    else setPos(fwdCount() + step);
    return;
  }
  const ta = $("#source");
  if (ta) ta.value = q.source;
  setState(Object.assign(view, {
    source: q.source,
    values: Object.assign({}, q.values || {}),
    accumulate: q.accumulate || "add",
    order: q.order || "dfs",
    collapse: q.collapse == null ? null : !!q.collapse,
    forwardMode: q.fwd != null,
    fwd: q.fwd == null ? null : Number(q.fwd),
    step,
  }));
  runAt(step, q.fwd == null ? null : Number(q.fwd));
}

export function wireHistory() {
  if (STANDALONE) return; // a file keeps only #step=k in its address, and no entries
  let shown = location.pathname + location.search;
  window.addEventListener("popstate", (ev) => {
    const entry = ev.state;
    const address = location.pathname + location.search;
    const moved = address !== shown;
    shown = address;
    if (entry && entry.gradtrace && entry.query) { restore(entry); return; }
    // An entry the page did not write (an address typed or followed): open it afresh; a
    // change of the #hash alone (a room's #key) is no new state.
    if (moved) location.reload();
  });
}
