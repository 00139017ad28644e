/* The drawing's direction: inputs on the left (lr) or on top (tb).
 *
 * An address may name a direction (`layout=lr|tb`). Otherwise the page (and the embed, and the
 * standalone stepper) shows whichever of the two fits its box at the larger scale: lr for a wide
 * box or a long chain, tb for a tall box (a phone held upright) or a bushy graph; where the box
 * grows with its drawing (the page), lr whenever it reads at the readable size (graph.js), the
 * flatter, which leaves the grad table in sight. The server lays
 * out one direction per request (POST /api/render with `layout`), so the rule that keeps this
 * cheap is: the other direction is asked for only when it could win. Going from lr to tb makes a
 * drawing narrower and taller, so tb can only fit larger when lr is held back by the box's width
 * (and lr only when tb is held back by its height), and not when the drawing is already at its
 * largest scale. Both drawings of a trace are kept, so switching back and forth (a resize,
 * leaving and entering presentation) asks for nothing more. A standalone file has no server:
 * it carries both drawings (gradtrace/standalone.py). Presentation's screen (its grad table
 * beside the drawing) is here too. */
import { STANDALONE, boot } from "./boot.js";
import { $ } from "./dom.js";
import { G, parseSvg } from "./graph.js";
import { boxGrows, fitScale, presentSide, readableScaleOf, showSvg } from "./graph_view.js";
import { renderGraph } from "./graph_style.js";
import { state, subscribe } from "./store.js";
import { drawnPass } from "./passes.js";
import { T, currentNode } from "./trace.js";

const BETTER = 1.02; // the other direction must fit this much larger to be worth a switch
// The trace's drawings by direction, and the directions asked of the server for it.
let kept = { trace: null, pass: null, svgs: {}, asked: {} };
let seen = null; // what update() last looked at
let frame = 0;

function sizeOf(svg) {
  const vb = (svg.dataset.base || svg.getAttribute("viewBox") || "0 0 1 1").split(/[\s,]+/).map(Number);
  return { w: vb[2] || 1, h: vb[3] || 1 };
}

// Could the other direction be the one to show? (See the rule above.) Where the box grows with
// its drawing, a drawing top to bottom asks for the other always: lr may read as well, flatter.
function otherMayWin(g) {
  const s = fitScale(g.base);
  if (boxGrows()) {
    if (g.layout === "tb") return true;
    if (s >= readableScaleOf(g) * (1 - 1e-6)) return false; // lr reads: it stays
  }
  if (s >= fitScale({ w: 1e-6, h: 1e-6 }) - 1e-9) return false; // already at the largest scale
  const widthBound = s >= fitScale({ w: g.base.w, h: 1e-6 }) - 1e-9; // all the width allows
  return g.layout === "lr" ? widthBound : !widthBound;
}

// The direction to show: the address's, else the one known to fit larger in the box. Where the
// box grows with its drawing (the page), a drawing larger than readable only pushes the grad
// table further down: there lr stays whenever it reads, and tb is shown only to read larger
// than lr does (and no larger than readable, graph.js).
function wanted(g) {
  if (state.layout === "lr" || state.layout === "tb") return state.layout;
  const other = g.layout === "lr" ? "tb" : "lr";
  const alt = kept.svgs[other];
  if (!alt) {
    if (otherMayWin(g)) ask(other);
    return g.layout;
  }
  const size = { [g.layout]: g.base, [other]: sizeOf(alt) };
  if (boxGrows()) {
    const lr = fitScale(size.lr), readable = readableScaleOf(g);
    if (lr >= readable * (1 - 1e-6)) return "lr";
    return Math.min(fitScale(size.tb), readable) > lr * BETTER ? "tb" : "lr";
  }
  return fitScale(size[other]) > fitScale(g.base) * BETTER ? other : g.layout;
}

function update() {
  frame = 0;
  const g = G();
  fitTable();
  followChanged();
  if (!g || !state.trace || state.stale || state.running) return;
  // Per pass too: a program of several passes draws the pass on show (passes.js).
  if (kept.trace !== state.trace || kept.pass !== drawnPass()) kept = { trace: state.trace, pass: drawnPass(), svgs: {}, asked: {} };
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
  if (kept.asked[layout]) return;
  kept.asked[layout] = true;
  if (STANDALONE) { // the file's other drawing, if it has one (of the pass drawn inline)
    if (kept.pass != null && kept.pass !== boot.svg_pass) return;
    const svg = boot.drawings && boot.drawings[layout] ? parseSvg(boot.drawings[layout]) : null;
    if (svg) { kept.svgs[layout] = svg; schedule(true); }
    return;
  }
  const trace = state.trace;
  const pass = kept.pass;
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
        draw_pass: pass,
        svg_only: pass != null,
      }),
    });
    body = resp.ok ? await resp.json() : null;
  } catch (e) {
    return; // the direction on show stays: nothing is lost
  }
  // Only a drawing of the trace on show (the editor may have moved on meanwhile).
  if (!body || !body.svg || kept.trace !== trace || kept.pass !== pass) return;
  if (pass == null ? !sameGraph(body.trace, trace) : body.svg_pass !== pass) return;
  const svg = parseSvg(body.svg);
  if (!svg) return;
  if (pass != null) svg.dataset.pass = String(pass);
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

// Beside the drawing the table is narrow and short: its current row, the running node's
// column and the grads the step changed in it are scrolled into view (after a resize or the
// editor shown, too). The running node's column comes first: its inputs follow it.
function followChanged() {
  const row = presentSide() && $("#grad-table tbody tr[aria-current=step]");
  const box = row && row.closest(".table-scroll");
  if (!box) return;
  const b = box.getBoundingClientRect(), rr = row.getBoundingClientRect();
  const head = $("#grad-table thead");
  const top = b.top + (head ? head.getBoundingClientRect().height : 0); // under the sticky head
  if (rr.top < top || rr.bottom > b.bottom) box.scrollTop += rr.top - top - (b.bottom - top) / 3;
  const running = T() && currentNode();
  const cells = [...row.querySelectorAll("td")].filter((c) => c.dataset.node === running || c.classList.contains("changed"));
  if (!cells.length) return;
  const rs = cells.map((c) => c.getBoundingClientRect());
  const left = b.left + row.cells[0].getBoundingClientRect().width; // past the sticky step column
  const lo = Math.min(...rs.map((r) => r.left)), hi = Math.max(...rs.map((r) => r.right));
  if (lo < left || hi > b.right) box.scrollLeft += lo - left - 4;
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
  watchRoomCard();
  schedule(true);
}

// Presented, the instructor's class card stands at the top of the side column (app.css): the
// column starts under it, as far down as the card reaches now (the join code shown or hidden).
function watchRoomCard() {
  const card = $("#room-card");
  if (!card || !window.ResizeObserver) return;
  new ResizeObserver(() => {
    const h = card.hidden ? 0 : Math.ceil(card.getBoundingClientRect().height);
    document.documentElement.style.setProperty("--room-card-h", h + "px");
    schedule(true);
  }).observe(card);
}

// The direction of the drawing on show (a re-run asks for the same, run.js).
export function shownLayout() {
  return G() ? G().layout : "lr";
}
