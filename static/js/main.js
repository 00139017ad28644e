/* gradtrace page: one `state` (store.js), one `setState`, one `render()`.
 *
 * The server sends the whole trace and a drawing laid out once (Graphviz); stepping only moves
 * an index and restyles that SVG, with no request. Editing re-runs the program through
 * POST /api/render (debounced). The address bar always holds the whole state (url.js).
 * Loaded as <script type="module">; the standalone export bundles the same modules
 * (gradtrace/assets.py page_script()).
 */
import { STANDALONE, boot } from "./boot.js";
import { buildValueFields, renderEditor, renderError, wireEditor } from "./editor.js";
import { renderControls, renderLang, wireControls } from "./controls.js";
import { fmt } from "./format.js";
import { prepareSvg } from "./graph.js";
import { fitGraph } from "./graph_view.js";
import { onPassShown, renderPassDrawing, setDrawnPass } from "./passes.js";
import { wireGraph } from "./graph_input.js";
import { renderGraph } from "./graph_style.js";
import { wireHistory } from "./history.js";
import { wireJoin } from "./join.js";
import { startLessons } from "./lessons/panel.js";
import { startOutput } from "./output.js";
import { startRoom } from "./room/index.js";
import { wireShare } from "./share.js";
import { setState, state, subscribe } from "./store.js";
import { buildStrips, renderStrips, wireStrips } from "./strips.js";
import { buildTable, renderTable, wireTable } from "./table.js";
import { renderTimeline, wireTimeline } from "./timeline.js";
import { deriveTrace, followPass, maxPos, setPos } from "./trace.js";
import { renderUrl } from "./url.js";

// render(): every view from the state. Each redraws only what changed since it drew last.
let renderedTrace = null;
function render() {
  const newTrace = state.trace !== renderedTrace;
  if (newTrace) {
    renderedTrace = state.trace;
    deriveTrace();
    buildValueFields();
  }
  // A step into another pass: that pass's columns, strips and drawing.
  if (followPass() || newTrace) {
    buildTable();
    buildStrips();
  }
  renderLang();
  renderPassDrawing();
  renderGraph();
  renderTimeline();
  renderTable();
  renderStrips();
  renderEditor();
  renderError();
  renderControls();
  renderUrl();
}

// The position asked for (by the address, or a standalone file's #step=k), within the trace.
function startingPosition() {
  const atStep = STANDALONE && /^#step=(\d+)$/.exec(location.hash);
  const pos = { step: atStep ? Number(atStep[1]) : state.step, fwd: state.fwd };
  if (state.trace) {
    pos.step = Math.max(0, Math.min(state.trace.steps.length - 1, pos.step));
    if (state.forwardMode) pos.fwd = Math.max(0, Math.min(state.trace.topo.length - 1, pos.fwd || 0));
  }
  return pos;
}

function start() {
  setState(startingPosition()); // nothing has subscribed yet: no render
  prepareSvg();
  setDrawnPass(boot.svg_pass, boot.trace);
  onPassShown(renderControls);
  fitGraph();
  wireControls();
  wireEditor();
  wireTable();
  wireStrips();
  wireTimeline();
  wireShare();
  wireGraph();
  wireHistory();
  wireJoin();
  subscribe(render);
  render();
  startOutput(); // the Output panel: printed lines and did-you-mean warnings (its own subscriber)
  const lessons = startLessons(); // after the page: the panel subscribes to the same store
  startRoom(); // after the lessons: a student's page opens the instructor's lesson through the panel
  // Read-only handles for the tests, the bench and course-note scripts (never used between
  // the page's own modules, which import each other).
  window.gradtrace = Object.freeze({ fmt, get state() { return state; }, setPos, maxPos });
  if (lessons) window.gradtraceLessons = lessons;
  document.documentElement.classList.add("js-ready");
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
