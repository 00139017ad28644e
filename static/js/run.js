/* Running the program in the editor again: POST /api/render (debounced while typing). The answer
 * is a whole new trace and drawing; the step is kept when the new program has it. */
import { STANDALONE } from "./boot.js";
import { replaceSvg, showDrawError } from "./graph.js";
import { setState, state } from "./store.js";

let runSeq = 0; // only the newest request's answer is shown
let editTimer = null;

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
      }),
    });
    body = await resp.json();
  } catch (e) {
    if (seq !== runSeq) return;
    setState({ running: false, error: { message: String(e && e.message ? e.message : e) }, stale: !!state.trace });
    return;
  }
  if (seq !== runSeq) return; // a newer edit is on its way
  if (!resp.ok || body.error) {
    const err = body.error || { message: "HTTP " + resp.status };
    const patch = { running: false, error: err, stale: !!state.trace };
    if (body.values) patch.values = body.values;
    setState(patch);
    return;
  }
  const trace = body.trace;
  const N = trace.steps.length - 1;
  const step = Math.min(state.step, N); // keep the step when the new program has it
  const fwd = state.forwardMode && state.fwd != null ? Math.min(state.fwd, trace.topo.length - 1) : null;
  if (body.svg) replaceSvg(body.svg); else if (body.draw_error) showDrawError(body.draw_error);
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

export function scheduleRun(delay) {
  if (STANDALONE) return; // nothing to re-run against
  clearTimeout(editTimer);
  editTimer = setTimeout(rerun, delay === undefined ? 350 : delay);
}
