/* The drawing's direction: inputs on the left (lr) or on top (tb), and presentation's screen.
 *
 * An address may name a direction (`layout=lr|tb`). Otherwise the page draws lr, except in
 * presentation mode and on a phone held upright, which show whichever of the two fits the
 * box at the larger scale: lr for a wide box or a long chain, tb for a tall box (a phone held
 * upright) or a bushy graph beside the controls. The server lays out one direction per request (POST /api/render with
 * `layout`), so the rule that keeps this cheap is: the other direction is asked for only when
 * it could win. Going from lr to tb makes a drawing narrower and taller, so tb can only fit
 * larger when lr is held back by the box's width (and lr only when tb is held back by its
 * height), and not when the drawing is already at its largest scale. Both drawings of a trace
 * are kept, so switching back and forth (a resize, leaving and entering presentation) asks
 * for nothing more. */
import { EMBED, STANDALONE } from "./boot.js";
import { $ } from "./dom.js";
import { G, fitScale, parseSvg, presentSide, showSvg } from "./graph.js";
import { renderGraph } from "./graph_style.js";
import { state, subscribe } from "./store.js";

const BETTER = 1.02; // the other direction must fit this much larger to be worth a switch
// The trace's drawings by direction, and the directions asked of the server for it.
let kept = { trace: null, svgs: {}, asked: {} };
let seen = null; // what update() last looked at
let frame = 0;

function sizeOf(svg) {
  const vb = (svg.dataset.base || svg.getAttribute("viewBox") || "0 0 1 1").split(/[\s,]+/).map(Number);
  return { w: vb[2] || 1, h: vb[3] || 1 };
}

// Could the other direction fit larger than the one on show? (See the rule above.)
function otherMayWin(g) {
  const s = fitScale(g.base);
  if (s >= fitScale({ w: 1e-6, h: 1e-6 }) - 1e-9) return false; // already at the largest scale
  const widthBound = s >= fitScale({ w: g.base.w, h: 1e-6 }) - 1e-9; // all the width allows
  return g.layout === "lr" ? widthBound : !widthBound;
}

// A phone held upright (a student following a class, most often): there too the drawing
// takes the direction that draws it larger, since lr on 360 px is often too small to read.
const NARROW = "(max-width: 760px) and (orientation: portrait)";

// The direction to show: the address's; lr outside presentation and off phones; else the
// larger fit known.
function wanted(g) {
  if (state.layout === "lr" || state.layout === "tb") return state.layout;
  if (!state.present && (EMBED || STANDALONE || !window.matchMedia(NARROW).matches)) return "lr";
  const other = g.layout === "lr" ? "tb" : "lr";
  const alt = kept.svgs[other];
  if (!alt) {
    if (otherMayWin(g)) ask(other);
    return g.layout;
  }
  return fitScale(sizeOf(alt)) > fitScale(g.base) * BETTER ? other : g.layout;
}

function update() {
  frame = 0;
  const g = G();
  fitTable();
  followChanged();
  if (!g || !state.trace || state.stale || state.running) return;
  if (kept.trace !== state.trace) kept = { trace: state.trace, svgs: {}, asked: {} };
  kept.svgs[g.layout] = g.svg;
  const want = wanted(g);
  if (want === g.layout) return;
  if (kept.svgs[want]) {
    showSvg(kept.svgs[want]);
    renderGraph(); // a drawing put back is restyled for the step on show
  } else ask(want);
}

// The same program in the other direction, once per trace.
async function ask(layout) {
  if (STANDALONE || kept.asked[layout]) return;
  kept.asked[layout] = true;
  const trace = state.trace;
  let body;
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
      }),
    });
    body = resp.ok ? await resp.json() : null;
  } catch (e) {
    return; // the direction on show stays: nothing is lost
  }
  // Only a drawing of the trace on show (the editor may have moved on meanwhile).
  if (!body || !body.svg || kept.trace !== trace || !sameGraph(body.trace, trace)) return;
  const svg = parseSvg(body.svg);
  if (!svg) return;
  kept.svgs[layout] = svg;
  schedule(true);
}

function sameGraph(a, b) {
  if (!a || !b || a.nodes.length !== b.nodes.length) return false;
  return a.nodes.every((n, i) => n.id === b.nodes[i].id && n.label === b.nodes[i].label && n.op === b.nodes[i].op);
}

// Beside the drawing, the grad table ends at the foot of the screen (its current row is kept
// in view inside it, table.js), so the step's sentence and row are on show together.
function fitTable() {
  const box = $("#grad-table") && $("#grad-table").closest(".table-scroll");
  if (!box) return;
  if (!presentSide()) { box.style.maxHeight = ""; return; }
  const top = box.getBoundingClientRect().top + window.scrollY;
  box.style.maxHeight = Math.max(96, Math.round(window.innerHeight - top - 8)) + "px";
}

// Beside the drawing the table is narrow and short: its current row, and the grads the step
// changed in it, are scrolled into view (after a resize or the editor shown, too).
function followChanged() {
  const row = presentSide() && $("#grad-table tbody tr[aria-current=step]");
  const box = row && row.closest(".table-scroll");
  if (!box) return;
  const b = box.getBoundingClientRect(), rr = row.getBoundingClientRect();
  const head = $("#grad-table thead");
  const top = b.top + (head ? head.getBoundingClientRect().height : 0); // under the sticky head
  if (rr.top < top || rr.bottom > b.bottom) box.scrollTop += rr.top - top - (b.bottom - top) / 3;
  const cell = row.querySelector("td.changed");
  if (!cell) return;
  const r = cell.getBoundingClientRect();
  const left = b.left + row.cells[0].getBoundingClientRect().width; // past the sticky step column
  if (r.left < left || r.right > b.right) box.scrollLeft += r.left - left - 4;
}

// Look again on the next frame (after the page has drawn the state that changed).
function schedule(force) {
  if (force) seen = null;
  if (!frame) frame = requestAnimationFrame(update);
}

export function wireLayout() {
  subscribe((s) => {
    const now = [s.trace, s.present, s.layout, s.showEditor, s.stale, s.running, G(), s.step, s.fwd];
    if (seen && now.every((v, i) => v === seen[i])) return;
    seen = now;
    schedule();
  });
  window.addEventListener("resize", () => schedule(true));
  schedule(true);
}

// The direction of the drawing on show (a re-run asks for the same, run.js).
export function shownLayout() {
  return G() ? G().layout : "lr";
}
