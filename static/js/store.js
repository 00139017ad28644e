/* The one state of the page, `setState(patch)`, and its subscribers.
 *
 * Every change goes through setState; the page's render() and the lesson panel subscribe, each
 * redrawing only what differs from what it drew last. Nothing else writes to `state`.
 */
import { boot } from "./boot.js";

const q = boot.query || {};

export const state = {
  source: q.source || "",
  values: Object.assign({}, q.values || {}),
  accumulate: q.accumulate || "add",
  order: q.order || "dfs",
  lang: q.lang === "zh" ? "zh" : "en",
  present: !!q.present,
  showEditor: false,
  layout: q.layout === "lr" || q.layout === "tb" ? q.layout : null, // null: the page picks (layout.js)
  trace: boot.trace,
  contrast: boot.contrast,
  error: boot.error, // {message, line, column, ...} of the program in the editor, or null
  drawError: boot.draw_error,
  stale: false, // the drawing is of the last good program, not of the editor's text
  step: q.step == null ? 0 : q.step,
  forwardMode: q.fwd != null,
  collapse: q.collapse == null ? null : !!q.collapse, // null: the server decides
  collapsible: !!boot.collapsible,
  collapsed: boot.collapsed, // {id, members, iterations, collapsed} when a loop is drawn as a box
  fwd: q.fwd,
  hover: null,
  playing: false,
  speed: 800,
  running: false,
  // The lesson panel (static/js/lessons/): replaced as a whole, never changed in place.
  lesson: {
    name: null, // the lesson on show
    data: {}, // name -> lesson data for `key`
    key: null, // the request the data is for
    error: null,
    sub: 0, // the lesson's own step, for views with a stepper
    options: {}, // name -> options sent with the request
    modes: {}, // name -> the part of a lesson on show, for lessons with parts
    loading: false,
    pending: null, // a lesson to open once the example that names it has run
    pass: null, // of several passes, the pass the lesson's data looked at (null: the whole run)
    first: 0, // that pass's first step in the page's trace (a following view's step 0)
  },
};

const subscribers = [];

export function subscribe(fn) {
  subscribers.push(fn);
}

export function setState(patch) {
  Object.assign(state, patch);
  subscribers.forEach((fn) => fn(state));
}

export function setLesson(patch) {
  setState({ lesson: Object.assign({}, state.lesson, patch) });
}
