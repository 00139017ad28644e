/* The lesson panel (#lessons): a tab per lesson, the chosen lesson's view over the program on
 * the page. Its state is `state.lesson` in the page's one store; it subscribes to that store.
 *
 * A lesson's data comes from POST /api/trace with {"lessons": [name]}, asked again when the page
 * has a new trace (or the lesson's options change); the views draw over the trace the page
 * already has. A view either follows the page's own step or has its own stepper.
 *
 * Of a program of several backward passes, the request names the pass on show (`lesson_pass`)
 * and the answer says which pass each lesson looked at (`lesson_passes`, null for a lesson of
 * the whole run): such a lesson is asked again when the step crosses into another pass, and
 * its view draws over that pass's steps (its step 0 the pass's seed step).
 */
import { boot, exampleSource } from "../boot.js";
import { $ } from "../dom.js";
import { addStepper } from "../keys.js";
import { setLesson, setState, state, subscribe } from "../store.js";
import { fwdCount, setPos } from "../trace.js";
import { el, t } from "./kit.js";
import { VIEWS as FOLLOWING } from "./views_follow.js";
import { VIEWS as OWN } from "./views_own.js";
import { VIEWS as TRAINING } from "./views_training.js";

const VIEWS = Object.assign({}, FOLLOWING, OWN, TRAINING);
let panel = null;

function programKey(s) {
  return JSON.stringify([s.source, s.values, s.accumulate, s.order]);
}

// The pass the page's step is in, of a trace of several passes (null for one pass).
function passOnShow(s) {
  const tr = s.trace;
  if (!tr || !tr.passes || tr.passes.length < 2 || !tr.steps.length) return null;
  const st = tr.steps[Math.max(0, Math.min(s.step, tr.steps.length - 1))];
  return st && typeof st.pass === "number" ? st.pass : null;
}

function requestKey(name) {
  return programKey(state) + JSON.stringify(state.lesson.options[name] || null) + name + "@" + passOnShow(state);
}

// A lesson of one pass draws over that pass's steps: the trace with only those steps.
function passTrace(trace, k) {
  const p = trace && trace.passes && trace.passes[k];
  if (!p || typeof p.first_step !== "number") return { trace, first: 0 };
  return { trace: Object.assign({}, trace, { steps: trace.steps.slice(p.first_step, p.last_step + 1) }), first: p.first_step };
}

// The step a view that follows the page's stepper shows: the page's, inside the lesson's pass.
function followStep(trace) {
  const first = state.lesson.first || 0;
  return Math.max(0, Math.min(state.step - first, trace.steps.length - 1));
}

let asking = null; // the key of the request in flight

let seq = 0; // only the newest request's answer is shown
async function load(name) {
  if (!name) return;
  if (VIEWS[name] && VIEWS[name].local) { // needs only the page's own trace
    setLesson({ data: { [name]: {} }, loading: false, key: null });
    return;
  }
  const key = requestKey(name);
  if (state.lesson.key === key && state.lesson.data[name]) return;
  if (asking === key && state.lesson.loading) return;
  asking = key;
  const mine = ++seq;
  const onShow = passOnShow(state);
  const program = programKey(state);
  setLesson({ loading: true, error: null });
  let body = null;
  try {
    const options = {};
    if (state.lesson.options[name]) options[name] = state.lesson.options[name];
    const ask = { source: state.source, values: state.values, accumulate: state.accumulate, order: state.order, lessons: [name], lesson_options: options };
    if (onShow !== null) ask.lesson_pass = onShow;
    // ?lang: a refusal comes back in the page's language (app/errors.py)
    const resp = await fetch("/api/trace?lang=" + encodeURIComponent(state.lang), {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(ask),
    });
    body = await resp.json();
    if (mine !== seq) return;
    if (!resp.ok) throw new Error((body.error && body.error.message) || "HTTP " + resp.status);
  } catch (e) {
    if (mine !== seq) return;
    setLesson({ loading: false, error: String(e && e.message ? e.message : e), data: {} });
    return;
  }
  const data = body.lessons[name];
  const view = VIEWS[name];
  let sub = state.lesson.sub;
  if (view && !view.follows && view.start) sub = view.start(data);
  else if (view && !view.follows) sub = Math.min(sub, Math.max(0, view.count(data) - 1));
  // The program of the page's trace: draw over that one (the answer's copy is the same).
  const whole = seen.traceProgram === program && state.trace ? state.trace : body;
  const pass = body.lesson_passes ? body.lesson_passes[name] : null;
  const { trace, first } = typeof pass === "number" ? passTrace(whole, pass) : { trace: whole, first: 0 };
  setLesson({ loading: false, key, data: { [name]: data }, trace, sub, pass: typeof pass === "number" ? pass : null, first });
}

function choose(name) {
  if (state.lesson.name === name) return;
  // Predict, then reveal asks about the next step from the seed on, whatever step was on show.
  if (name === "practice" && state.trace) setPos(fwdCount());
  setLesson({ name, sub: 0, error: null });
  if (name) load(name);
}

// The lesson's own stepper: the page's stepper's buttons (the same icons, copied from it, so
// ‹ › mean the same everywhere and ▶ is Play's alone), each named in words; its slider; "2 of 5".
function icon(name) {
  const ico = $("#btn-" + name + " .ico");
  return ico ? ico.cloneNode(true) : document.createTextNode("");
}

function stepper(view, data) {
  const n = view.count(data);
  const bar = el("div", { class: "ls-stepbar", role: "group", "aria-label": t("ls_steps") });
  // Each button reads the step when clicked: a step redraws the bar in place (syncStepper).
  const btn = (name, to) => {
    const b = el("button", { type: "button", id: "ls-" + name, class: "icon", "aria-label": t("ls_" + name), title: t("ls_" + name), onclick: () => setLesson({ sub: to(state.lesson.sub) }) });
    b.append(icon(name));
    return b;
  };
  bar.append(
    btn("first", () => 0),
    btn("back", (sub) => Math.max(0, sub - 1)),
    btn("next", (sub) => Math.min(n - 1, sub + 1)),
    btn("last", () => n - 1),
  );
  const slider = el("input", { type: "range", id: "ls-slider", min: "0", max: String(Math.max(0, n - 1)), value: "0", "aria-label": t("ls_steps") });
  slider.addEventListener("input", () => setLesson({ sub: Number(slider.value) }));
  bar.append(slider, el("output", { id: "ls-step-label" }));
  syncStepper(bar, n, state.lesson.sub);
  return bar;
}

// The lesson on show, when it has a stepper of its own and its steps are known: the keys'
// stepper (keys.js) while the focus is in the lesson, or while the lesson is what is on the
// screen (the page's drawing scrolled mostly out of view, the lesson's stepper in it).
function ownSteps() {
  const ls = state.lesson, view = VIEWS[ls.name], data = ls.data[ls.name];
  if (!view || view.follows || !data || ls.error) return null;
  return { n: view.count(data), sub: ls.sub };
}

function onShow() {
  const bar = $("#lesson-body .ls-stepbar"), graph = $("#graph");
  if (!bar) return false;
  const b = bar.getBoundingClientRect();
  if (b.bottom <= 0 || b.top >= window.innerHeight) return false;
  if (!graph) return true;
  const g = graph.getBoundingClientRect();
  const seen = Math.max(0, Math.min(g.bottom, window.innerHeight) - Math.max(g.top, 0));
  return seen < g.height / 2;
}

const lessonStepper = {
  wants(target) {
    if (!ownSteps()) return false;
    const body = $("#lesson-body");
    return (!!body && !!target && target !== document.body && body.contains(target)) || onShow();
  },
  step(move) {
    const own = ownSteps();
    if (!own) return;
    const to = move === "first" ? 0 : move === "last" ? own.n - 1 : own.sub + move;
    const sub = Math.max(0, Math.min(own.n - 1, to));
    if (sub !== own.sub) setLesson({ sub });
  },
};

function syncStepper(bar, n, sub) {
  const [first, back, next, last] = bar.querySelectorAll("button");
  const had = document.activeElement;
  first.disabled = back.disabled = sub <= 0;
  next.disabled = last.disabled = sub >= n - 1;
  // A focused button just disabled (the first or last step) hands the focus to the slider, so
  // the keys stay with the lesson.
  if (had && had.disabled && bar.contains(had)) bar.querySelector("#ls-slider").focus({ preventScroll: true });
  const slider = bar.querySelector("#ls-slider");
  if (slider.value !== String(sub)) slider.value = String(sub);
  bar.querySelector("#ls-step-label").textContent = t("ls_step_of", { k: sub + 1, n });
}

// Views may mark the drawing (it is redrawn on every re-run, so this is applied again).
function decorate() {
  Object.entries(VIEWS).forEach(([name, v]) => {
    if (v.decorate) v.decorate(state.lesson.data[name], state.lesson.name === name);
  });
}

function show() {
  const ls = state.lesson;
  panel.querySelectorAll("button[data-lesson]").forEach((b) => { // not #lesson-body
    b.setAttribute("aria-pressed", b.dataset.lesson === ls.name ? "true" : "false");
  });
  document.body.classList.toggle("ls-practice-on", ls.name === "practice");
  const view = VIEWS[ls.name];
  const trace = view && view.local ? state.trace : ls.trace;
  const body = $("#lesson-body");
  if (!body) return;
  if (!ls.name) { body.replaceChildren(el("p", { class: "note", text: t("ls_pick") })); body.dataset.lesson = ""; decorate(); return; }
  body.dataset.lesson = ls.name;
  const intro = el("p", { class: "ls-intro", text: t("ls_intro_" + ls.name) });
  if (ls.error) { body.replaceChildren(intro, el("p", { class: "ls-error", role: "alert", text: ls.error })); return; }
  const data = ls.data[ls.name];
  if (!data || !view || !trace) { body.replaceChildren(intro, el("p", { class: "note", text: t("running") })); return; }
  const kids = [intro];
  let content;
  try {
    if (view.follows) {
      content = view.render(data, view.local ? Math.min(state.step, trace.steps.length - 1) : followStep(trace), trace);
      if (view.step) Object.assign(kept, { view, data, trace, lang: state.lang, content });
    } else {
      kids.push(stepper(view, data));
      content = view.render(data, ls.sub, trace);
      if (view.step) Object.assign(kept, { view, data, trace, lang: state.lang, content, bar: kids[kids.length - 1] });
    }
  } catch (e) {
    content = el("p", { class: "ls-error", role: "alert", text: String(e) });
  }
  kids.push(content);
  if (content !== kept.content) kept.content = null;
  // Drawn again: the focus stays where it was (a lesson's button, its slider), so the keys
  // keep stepping the lesson; on a button now disabled (the last step), on the slider.
  const had = document.activeElement;
  const focused = had && had !== body && body.contains(had) && had.id ? had.id : null;
  body.replaceChildren(...kids);
  if (focused) {
    const again = document.getElementById(focused);
    const target = again && !again.disabled ? again : $("#ls-slider");
    if (target) target.focus({ preventScroll: true });
  }
  decorate();
  body.classList.toggle("ls-loading", ls.loading);
}

// #lesson-status, the panel's one live region: a short line once a lesson's data is on show,
// and again when its own stepper moves ("Lesson: Forward mode, 2 of 5"). The panel's body is
// outside any live region; the page's own step is said by #announce.
const told = { name: null, sub: null };
function tell(ls) {
  const box = $("#lesson-status");
  const view = VIEWS[ls.name];
  const data = ls.data[ls.name];
  if (!box || (ls.name && !ls.error && (!data || !view))) return; // not on show yet
  const own = !!(view && data && !view.follows && !ls.error);
  const sub = own ? ls.sub : null;
  if (ls.name === told.name && sub === told.sub) return;
  Object.assign(told, { name: ls.name, sub });
  let text = "";
  if (ls.name && !ls.error) {
    const lesson = t("ls_tab_" + ls.name);
    text = own
      ? t("ls_status_step", { lesson, step: t("ls_step_of", { k: sub + 1, n: view.count(data) }) })
      : t("ls_status", { lesson });
  }
  if (box.textContent !== text) box.textContent = text;
}

// A view that follows the stepper and has `step(element, data, k, trace)` is drawn once per
// trace (and language); a step then only restyles what changed in the element it drew.
// A view with a stepper of its own likewise, when only its step (`sub`) changed. `step`
// returns false when it cannot, and the view is drawn again.
const kept = { view: null, data: null, trace: null, lang: null, content: null, bar: null };

function stepInPlace(view) {
  const ls = state.lesson;
  const trace = view.local ? state.trace : ls.trace;
  if (!view.step || !kept.content || kept.view !== view || kept.data !== ls.data[ls.name] ||
      kept.trace !== trace || kept.lang !== state.lang || !kept.content.isConnected) return false;
  const k = !view.follows ? ls.sub : view.local ? Math.min(state.step, trace.steps.length - 1) : followStep(trace);
  try {
    if (view.step(kept.content, kept.data, k, trace) === false) return false;
  } catch (e) {
    return false; // drawn again from scratch, which shows the error
  }
  if (!view.follows) syncStepper(kept.bar, view.count(kept.data), k);
  return true;
}

// Whether two lesson states differ in nothing but the lesson's own step.
function onlySub(a, b) {
  if (!a || a.sub === b.sub) return false;
  return Object.keys(Object.assign({}, a, b)).every((key) => key === "sub" || a[key] === b[key]);
}

// What the panel drew last: it draws again only when something it shows has changed.
const seen = { trace: null, traceProgram: null, step: null, lang: null, lesson: null, options: null };

function follow(s) {
  const ls = s.lesson;
  const optionsChanged = ls.options !== seen.options;
  seen.options = ls.options;
  if (s.trace !== seen.trace && s.trace) {
    seen.trace = s.trace;
    seen.traceProgram = programKey(s);
    if (ls.name && !s.error) load(ls.name);
  } else if (ls.name && optionsChanged) {
    load(ls.name); // the view changed its options (mistakes: which edge to drop)
  } else if (ls.name && !s.error && typeof ls.pass === "number" && passOnShow(s) !== null && passOnShow(s) !== ls.pass) {
    load(ls.name); // the step crossed into another pass: the lesson of that pass
  }
  openPending(s);
  const relabel = s.lang !== seen.lang;
  const stepped = s.step !== seen.step;
  const changed = s.lesson !== seen.lesson;
  const prev = seen.lesson;
  seen.lang = s.lang; seen.step = s.step; seen.lesson = s.lesson;
  if (relabel) panel.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = t(e.dataset.i18n); });
  const view = VIEWS[s.lesson.name];
  // Only the step moved (the page's, or the lesson's own): restyle in place when the view can.
  const moved = !relabel && view && (view.follows ? stepped && !changed : changed && onlySub(prev, s.lesson));
  const redraw = changed || relabel || (stepped && view && view.follows);
  if (redraw && !(moved && stepInPlace(view))) show();
  if (changed) tell(s.lesson);
}

// An example that names a lesson opens it once the example's program has run.
function openPending(s) {
  const p = s.lesson.pending;
  if (!p || !s.trace || s.running || (s.trace === p.trace && s.error === p.error)) return;
  if (s.source !== p.source) return;
  setLesson({ pending: null });
  choose(p.name);
}

function wire() {
  panel.addEventListener("click", (ev) => {
    const b = ev.target.closest && ev.target.closest("button[data-lesson]");
    if (b) choose(b.dataset.lesson === state.lesson.name ? null : b.dataset.lesson);
  });
  // The top bar's Lessons menu: the lesson opens, and the panel comes into view with its tab.
  const menu = $("#lessons-menu");
  if (menu) {
    menu.addEventListener("click", (ev) => {
      const b = ev.target.closest && ev.target.closest("button[data-open-lesson]");
      if (!b) return;
      menu.open = false;
      choose(b.dataset.openLesson);
      panel.scrollIntoView({ block: "start" });
      const tab = panel.querySelector('button[data-lesson="' + b.dataset.openLesson + '"]');
      if (tab) tab.focus({ preventScroll: true });
    });
  }
  const examples = $("#examples");
  if (!examples) return;
  examples.addEventListener("change", () => {
    const ex = (boot.examples || []).find((e) => e.id === examples.value);
    if (!ex || !ex.lesson) return;
    const modes = Object.assign({}, state.lesson.modes);
    if (ex.lesson_mode) modes[ex.lesson] = ex.lesson_mode;
    setLesson({
      options: Object.assign({}, state.lesson.options, ex.lesson_options || {}),
      modes,
      key: null,
      name: null,
      pending: { name: ex.lesson, source: exampleSource(ex, state.lang), trace: state.trace, error: state.error },
    });
  });
}

// The panel, on a page that has one (the embed and the standalone file have none). Returns the
// test hook window.gradtraceLessons.
export function startLessons() {
  panel = $("#lessons");
  if (!panel) return null;
  Object.assign(seen, { trace: state.trace, traceProgram: programKey(state), step: state.step, lang: state.lang });
  seen.options = state.lesson.options;
  subscribe(follow);
  wire();
  addStepper(lessonStepper);
  const initial = new URLSearchParams(location.search).get("lesson");
  if (initial && VIEWS[initial]) choose(initial);
  else setState({}); // draw the panel once
  return Object.freeze({
    choose,
    get state() { return state.lesson; },
    views: VIEWS,
  });
}
