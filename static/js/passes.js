/* The drawing of the pass on show, for a program of several passes.
 *
 * The server draws one pass at a time (engine/drawing/passes.py): POST /api/render's answer
 * carries the drawing of one pass (`svg_pass`), and when a step crosses into another pass the
 * page asks for that pass's drawing alone (`draw_pass`, `svg_only`), keeps it, and shows it.
 * Node ids are the trace's own in every pass's drawing, so the table and strips match it.
 * A drawing is asked once per pass and direction; at most MAX_KEPT are kept per trace.
 * Each pass's drawing comes with its own collapse state (a loop drawn as a box, or none, or a
 * box the server would not open): shown with it, so the collapse box, its note and the box's
 * members (T().boxOf) are those of the drawing on show.
 */
import { boot, STANDALONE } from "./boot.js";
import { G, parseSvg, showDrawError } from "./graph.js";
import { showSvg } from "./graph_view.js";
import { renderGraph } from "./graph_style.js";
import { state } from "./store.js";
import { T, passOnShow } from "./trace.js";

const MAX_KEPT = 120; // drawings kept per trace: every pass of a 100-epoch loop, stepped back and forth
const MAX_ASKING = 2; // requests in flight at once (the pass on show, and the next one)

// What redraws the controls once another pass's drawing is shown (main.js: renderControls;
// a hook, so this module imports nothing that imports it).
let redrawControls = () => {};
export function onPassShown(fn) {
  redrawControls = fn;
}

let drawn = { trace: boot.trace || null, pass: boot.svg_pass == null ? null : boot.svg_pass };
let kept = { trace: null, svgs: new Map(), asked: new Set(), inFlight: 0 };

// The drawing just put in the box (run.js, layout.js) is of pass `k` of the trace on show.
export function setDrawnPass(k, trace) {
  drawn = { trace: trace || state.trace, pass: k == null ? null : k };
  const g = G();
  if (g && k != null) g.svg.dataset.pass = String(k);
}

// The pass the drawing in the box is of (null: one pass, or not known).
export function drawnPass() {
  return drawn.trace === state.trace ? drawn.pass : null;
}

function layoutOnShow() {
  return G() ? G().layout : state.layout === "tb" ? "tb" : "lr";
}

// A kept drawing: its svg, and the collapse state it was drawn with.
function keep(key, svg, meta) {
  kept.svgs.delete(key);
  kept.svgs.set(key, { svg, collapsible: meta.collapsible, collapsed: meta.collapsed });
  while (kept.svgs.size > MAX_KEPT) kept.svgs.delete(kept.svgs.keys().next().value);
}

// Called by render() before the drawing is restyled: the drawing follows the pass on show.
export function renderPassDrawing() {
  markBehind();
  if (!T() || !T().passes || state.running || state.stale) return;
  if (STANDALONE) { fromFile(); return; }
  if (kept.trace !== state.trace) kept = { trace: state.trace, svgs: new Map(), asked: new Set(), inFlight: 0 };
  const want = passOnShow();
  const layout = layoutOnShow();
  const have = drawnPass();
  if (G() && have != null) keep(have + ":" + G().layout, G().svg, state);
  if (want == null || want === have) { prefetch(want + 1, layout); return; }
  const got = kept.svgs.get(want + ":" + layout);
  if (got) {
    showCollapse(got);
    showSvg(got.svg);
    setDrawnPass(want);
    markBehind();
  } else {
    ask(want, layout);
  }
  prefetch(want + 1, layout);
}

// Greyed while the pass on show's drawing is on its way (the one in the box is another pass's).
function markBehind() {
  const host = document.getElementById("graph");
  const behind = !!(T() && T().passes && drawnPass() !== null && passOnShow() !== drawnPass());
  if (host && host.classList.contains("behind") !== behind) host.classList.toggle("behind", behind);
}

// A standalone file carries the drawings of its passes (gradtrace/standalone.py): no server to
// ask. A pass it does not carry stays on the drawing in the box, greyed.
function fromFile() {
  const want = passOnShow();
  const have = drawnPass();
  if (want == null || want === have) return;
  if (kept.trace !== state.trace) kept = { trace: state.trace, svgs: new Map(), asked: new Set(), inFlight: 0 };
  if (G() && have != null) keep(have + ":file", G().svg, state);
  const got = kept.svgs.get(want + ":file");
  let svg = got && got.svg;
  const text = boot.pass_drawings && boot.pass_drawings[String(want)];
  if (!svg && text) svg = parseSvg(text);
  if (!svg) return;
  keep(want + ":file", svg, got || state);
  showSvg(svg);
  setDrawnPass(want);
  markBehind();
}

function prefetch(k, layout) {
  const ps = T().passes;
  if (k >= ps.length || !ps[k].kept || kept.svgs.has(k + ":" + layout)) return;
  ask(k, layout);
}

async function ask(k, layout) {
  const key = k + ":" + layout;
  if (kept.asked.has(key) || kept.inFlight >= MAX_ASKING) return;
  kept.asked.add(key);
  kept.inFlight++;
  const mine = kept;
  const trace = state.trace;
  let body = null;
  try {
    const resp = await fetch("/api/render", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({
        source: state.source,
        values: state.values,
        accumulate: state.accumulate,
        order: state.order,
        collapse: state.collapse,
        lang: state.lang,
        layout,
        draw_pass: k,
        svg_only: true,
      }),
    });
    body = resp.ok ? await resp.json() : null;
  } catch (e) {
    body = null;
  } finally {
    mine.inFlight--;
  }
  if (mine !== kept || state.trace !== trace) return; // the program changed meanwhile
  if (!body || body.error) { kept.asked.delete(key); return; } // asked again when next wanted
  const svg = body.svg ? parseSvg(body.svg) : null;
  const meta = { collapsible: !!body.collapsible, collapsed: body.collapsed || null };
  if (svg) { svg.dataset.pass = String(body.svg_pass); keep(key, svg, meta); }
  if (passOnShow() !== k || layoutOnShow() !== layout) {
    if (passOnShow() != null && passOnShow() !== drawnPass()) renderPassDrawing(); // still behind
    return;
  }
  showCollapse(meta);
  if (svg) showSvg(svg); else if (body.draw_error) showDrawError(body.draw_error);
  setDrawnPass(k);
  markBehind();
  renderGraph();
  redrawControls(); // the collapse box and its note, for this pass's drawing
}

// The collapse state of the drawing about to be shown: the page's, and the box's members.
// Called inside render() (before the controls draw) or, for an answer, before redrawControls.
function showCollapse(meta) {
  state.collapsible = !!meta.collapsible;
  state.collapsed = meta.collapsed || null;
  const boxOf = T() && T().boxOf;
  if (!boxOf) return;
  Object.keys(boxOf).forEach((id) => { delete boxOf[id]; });
  if (state.collapsed) state.collapsed.members.forEach((id) => { boxOf[id] = state.collapsed.id; });
}
