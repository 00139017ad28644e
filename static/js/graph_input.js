/* The drawing's mouse, touch and buttons: drag to pan, pinch or Ctrl+wheel to zoom, click a node
 * to jump to its step, hover to light it (and its source) everywhere. */
import { $, on } from "./dom.js";
import { G } from "./graph.js";
import { fitWhole, fixedByCss, lookAt, panBy, refit, zoomAt } from "./graph_view.js";
import { overviewPoint } from "./overview.js";
import { scheduleRun } from "./run.js";
import { setState, state } from "./store.js";
import { T, jumpToNode, setHover } from "./trace.js";

// Wiring every gesture of one element reads best in one place; it is long for that reason.
export function wireGraph() {
  const host = $("#graph");
  if (!host) return;
  const pointers = new Map();
  let moved = 0, pinch = null;
  host.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 && ev.pointerType === "mouse") return;
    pointers.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    moved = 0;
    if (pointers.size === 2) {
      const [a, b] = Array.from(pointers.values());
      pinch = Math.hypot(a.x - b.x, a.y - b.y);
    }
  });
  host.addEventListener("pointermove", (ev) => {
    const p = pointers.get(ev.pointerId);
    if (!p) return;
    const dx = ev.clientX - p.x, dy = ev.clientY - p.y;
    if (pointers.size === 1) {
      // A finger on a drawing that is all on show scrolls the page (touch-action: pan-y), and
      // a sideways one does nothing: there is nothing to pan to until it is zoomed in.
      if (ev.pointerType === "touch" && G() && !G().clipped) return;
      moved += Math.abs(dx) + Math.abs(dy);
      if (moved > 4) {
        if (!host.classList.contains("dragging")) {
          host.classList.add("dragging");
          try { host.setPointerCapture(ev.pointerId); } catch (e) { /* pointer already gone */ }
        }
        panBy(dx, dy);
      }
    } else if (pointers.size === 2 && pinch) {
      p.x = ev.clientX; p.y = ev.clientY;
      const [a, b] = Array.from(pointers.values());
      const d = Math.hypot(a.x - b.x, a.y - b.y);
      const r = host.getBoundingClientRect();
      zoomAt(d / pinch, (a.x + b.x) / 2 - r.left, (a.y + b.y) / 2 - r.top);
      pinch = d;
      moved = 99;
      return;
    }
    p.x = ev.clientX; p.y = ev.clientY;
  });
  const end = (ev) => {
    const wasDrag = moved > 4;
    pointers.delete(ev.pointerId);
    if (pointers.size < 2) pinch = null;
    host.classList.remove("dragging");
    if (!wasDrag && ev.type === "pointerup") {
      const g = ev.target.closest && ev.target.closest("g.node");
      if (g && g.classList.contains("collapsed")) {
        // A loop too large to draw in full stays collapsed: its note says why (no re-run).
        if (!(state.collapsed && state.collapsed.refused)) { setState({ collapse: false }); scheduleRun(0); }
        return;
      }
      if (g && T() && /^n\d+$/.test(g.id)) jumpToNode(g.id);
    }
  };
  host.addEventListener("pointerup", end);
  host.addEventListener("pointercancel", end);
  host.addEventListener("wheel", (ev) => {
    if (!(ev.ctrlKey || ev.metaKey) || !G()) return;
    ev.preventDefault();
    const r = host.getBoundingClientRect();
    zoomAt(Math.exp(-ev.deltaY / 300), ev.clientX - r.left, ev.clientY - r.top);
  }, { passive: false });
  host.addEventListener("mouseover", (ev) => {
    const g = ev.target.closest && ev.target.closest("g.node");
    setHover(g && /^n\d+$/.test(g.id) ? g.id : null);
  });
  host.addEventListener("mouseleave", () => setHover(null));
  on("#zoom-in", "click", () => zoomAt(1.25));
  on("#zoom-out", "click", () => zoomAt(0.8));
  on("#zoom-fit", "click", () => fitWhole());
  // A click on the overview inset brings that part of the drawing into the box.
  on(host.parentElement, "click", (ev) => {
    const p = overviewPoint(G(), ev);
    if (p) lookAt(p.x, p.y);
  });
  if (window.ResizeObserver) {
    // Width changes refit (the height is ours to set, so it must not trigger a loop); in an
    // iframe the height is the stylesheet's, and its changes refit too.
    new ResizeObserver(() => {
      if (!G()) return;
      if (host.clientWidth !== G().width || (fixedByCss() && host.clientHeight !== G().boxHeight)) refit();
    }).observe(host);
  }
  window.addEventListener("resize", () => refit());
}
