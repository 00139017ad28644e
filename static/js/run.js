/* Running the program in the editor again: POST /api/render (debounced while typing). The answer
 * is a whole new trace and drawing; the step is kept for an edit of the same program, and a new
 * program opens at its first step. */
import { STANDALONE } from "./boot.js";
import { G, showDrawError } from "./graph.js";
import { replaceSvg } from "./graph_view.js";
import { t } from "./i18n.js";
import { setDrawnPass } from "./passes.js";
import { setState, state, subscribe } from "./store.js";
import { passOnShow } from "./trace.js";

let runSeq = 0; // only the newest request's answer is shown
let editTimer = null;
let wanted = null; // {step, fwd} the next run opens at (an entry put back by Back/Forward)

async function rerun() {
  const seq = ++runSeq;
  setState({ running: true });
  let resp, body;
  try {
    resp = await fetch("/api/render", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({
        source: state.source,
        values: state.values,
        accumulate: state.accumulate,
        order: state.order,
        keep_values: true,
        collapse: state.collapse,
        lang: state.lang,
        layout: G() ? G().layout : "lr",
        // Several passes: the pass on show is drawn (an edit of the same program keeps it).
        draw_pass: passOnShow(),
      }),
    });
    body = await resp.json();
  } catch (e) {
    if (seq !== runSeq) return;
    setState({ running: false, error: { message: t("error_network") }, stale: !!state.trace });
    return;
  }
  if (seq !== runSeq) return; // a newer edit is on its way
  if (!resp.ok || body.error) {
    const err = body.error || { message: t("error_http", { status: resp.status }) };
    const patch = { running: false, error: err, stale: !!state.trace };
    if (body.values) patch.values = body.values;
    setState(patch);
    return;
  }
  const trace = body.trace;
  const N = trace.steps.length - 1;
  // An edit of the same program (new values, a constant changed) keeps the step; a new
  // program opens at its first step.
  const same = !!state.trace && backwardShape(state.trace) === backwardShape(trace);
  let step = same ? Math.min(state.step, N) : 0;
  let fwd = state.forwardMode && state.fwd != null ? (same ? Math.min(state.fwd, trace.topo.length - 1) : 0) : null;
  if (wanted) {
    step = Math.min(wanted.step, N);
    fwd = state.forwardMode && wanted.fwd != null ? Math.min(wanted.fwd, trace.topo.length - 1) : null;
    wanted = null;
  }
  if (body.svg) replaceSvg(body.svg); else if (body.draw_error) showDrawError(body.draw_error);
  setDrawnPass(body.svg_pass, trace); // passes.js swaps in another pass's drawing when the step is there
  setState({
    running: false,
    trace,
    contrast: body.contrast,
    collapsed: body.collapsed || null,
    collapsible: !!body.collapsible,
    drawError: body.draw_error,
    error: null,
    stale: false,
    step,
    fwd,
    values: body.values || state.values,
    hover: null,
  });
}

// What makes two runs the same program to a student: the same backward steps, each run by a
// node of the same label and op.
function backwardShape(trace) {
  const byId = {};
  trace.nodes.forEach((n) => { byId[n.id] = n; });
  return trace.steps.map((st) => {
    const n = byId[st.node] || {};
    return [st.kind, n.label, n.op].join("\u0001");
  }).join("\u0000");
}

// The server words an error in the page's language: after a switch of language, ask again.
let askedLang = state.lang;
subscribe((s) => {
  if (s.lang === askedLang) return;
  askedLang = s.lang;
  if (s.error || s.drawError) scheduleRun(0);
});

// Run the program on show now, and open it at `step` (and forward position `fwd`, or null).
export function runAt(step, fwd) {
  wanted = { step, fwd };
  scheduleRun(0);
}

export function scheduleRun(delay) {
  if (STANDALONE) return; // nothing to re-run against
  clearTimeout(editTimer);
  editTimer = setTimeout(rerun, delay === undefined ? 350 : delay);
}
