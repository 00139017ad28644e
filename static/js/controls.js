/* The stepper's controls (buttons, slider, play, forward pass), the options, the language and
 * presenter switches, the keyboard: what they show, and what they change. */
import { boot, exampleSource } from "./boot.js";
import { $, $$, on } from "./dom.js";
import { buildValueFields, renderError } from "./editor.js";
import { announce, sentence } from "./explain.js";
import { fitGraph } from "./graph_view.js";
import { t } from "./i18n.js";
import { addStepper, setEscape, wireKeys } from "./keys.js";
import { wireLayout } from "./layout.js";
import { scheduleRun } from "./run.js";
import { setState, state, subscribe } from "./store.js";
import { buildTable } from "./table.js";
import { T, inForward, maxPos, pos, setPos } from "./trace.js";
import { jumpPass } from "./timeline.js";
import { newEntry } from "./url.js";

let renderedLang = null; // the language the page's words are in
let playTimer = null;

export function renderControls() {
  const max = maxPos();
  const p = pos();
  const slider = $("#step-slider");
  if (slider) { slider.max = String(max); slider.value = String(p); slider.disabled = !T(); }
  const label = $("#step-label");
  const stepText = !T() ? "" : inForward()
    ? t("fwd_of", { k: state.fwd + 1, n: T().trace.topo.length })
    : t("step_of", { k: state.step, n: T().N });
  if (label) label.textContent = stepText; // aria-live="off": #announce says it with the sentence
  const dis = (sel, v) => { const b = $(sel); if (b) b.disabled = v; };
  dis("#btn-first", !T() || p <= 0);
  dis("#btn-back", !T() || p <= 0);
  dis("#btn-next", !T() || p >= max);
  dis("#btn-last", !T() || p >= max);
  const play = $("#btn-play");
  if (play) {
    play.classList.toggle("playing", state.playing);
    play.setAttribute("aria-pressed", state.playing ? "true" : "false");
    const key = state.playing ? "pause" : "play";
    play.setAttribute("aria-label", t(key)); play.title = t(key);
    play.dataset.i18nAria = key; play.dataset.i18nTitle = key;
    play.disabled = !T();
  }
  const fm = $("#forward-mode");
  if (fm) fm.checked = state.forwardMode;
  renderCollapse();
  renderCue();
  const said = sentence();
  const ex = $("#explain");
  if (ex && ex.textContent !== said) ex.textContent = said;
  announce(stepText, said);
  const graph = $("#graph");
  if (graph) graph.classList.toggle("stale", state.stale);
  const note = $("#stale-note");
  if (note) note.hidden = !state.stale;
  renderPresent();
  const menu = $("#examples");
  if (menu && document.activeElement !== menu) {
    const id = exampleOnShow();
    if (menu.value !== id) menu.value = id;
  }
  const acc = $("#accumulate"); if (acc && acc.value !== state.accumulate) acc.value = state.accumulate;
  const ord = $("#order"); if (ord && ord.value !== state.order) ord.value = state.order;
}

// The cue under the sentence at the seed: what the first step does, until a step is taken.
let stepped = false;
function renderCue() {
  const cue = $("#step-cue");
  if (!cue) return;
  if (T() && pos() > 0) stepped = true;
  cue.hidden = stepped || !T() || inForward() || state.step !== 0 || T().N < 1 || state.present;
}

// The gallery's example whose program is on show (in either language), or "" for none: the
// menu names it after a reload, Back or Forward too.
function exampleOnShow() {
  const ex = (boot.examples || []).find((e) => e.source === state.source || e.source_zh === state.source);
  return ex ? ex.id : "";
}

// Presentation's two switches say what a press does next: "Exit presentation" whenever the
// mode is on (a link with present=1 too), "Show editor" / "Hide editor".
function renderPresent() {
  document.body.classList.toggle("present", state.present);
  document.documentElement.classList.toggle("present", state.present); // the root's size: app.css
  document.body.classList.toggle("show-editor", state.showEditor);
  const label = (sel, pressed, key) => {
    const b = $(sel);
    if (!b) return;
    b.setAttribute("aria-pressed", pressed ? "true" : "false");
    b.dataset.i18n = key;
    if (b.textContent !== t(key)) b.textContent = t(key);
  };
  label("#present-btn", state.present, state.present ? "present_exit" : "present");
  label("#editor-btn", state.showEditor, state.showEditor ? "present_hide_editor" : "show_editor");
}

// The collapse box and its note say what is drawn. A loop the server will not draw in full
// (`collapsed.refused`: too many nodes, or a layout past its budget) leaves the box ticked and
// disabled with the reason beside it, and the note offers nothing that cannot work.
function renderCollapse() {
  const cr = $("#collapse-row");
  if (cr) cr.hidden = !state.collapsible;
  const refused = (state.collapsed && state.collapsed.refused) || null;
  const cl = $("#collapse-loops");
  if (cl && !state.running) cl.checked = !!state.collapsed;
  if (cl) cl.disabled = !!refused;
  let why = $("#collapse-why");
  if (!why && cr && refused) {
    why = document.createElement("small");
    why.id = "collapse-why";
    cr.append(" ", why);
  }
  if (why) {
    why.hidden = !refused;
    const text = refused ? t("collapse_why_" + refused.code, refused) : "";
    if (why.textContent !== text) why.textContent = text;
  }
  const cn = $("#collapse-note");
  if (!cn) return;
  cn.hidden = !(state.collapsed && (state.collapse !== true || refused));
  if (refused) delete cn.dataset.i18n; // its words have numbers in them: written here
  else cn.dataset.i18n = "auto_collapsed";
  const note = refused ? t("collapse_refused_" + refused.code, refused) : t("auto_collapsed");
  if (cn.textContent !== note) cn.textContent = note;
}

export function renderLang() {
  if (renderedLang === state.lang) return;
  renderedLang = state.lang;
  document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
  document.title = t("title");
  $$("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
  $$("[data-i18n-aria]").forEach((el) => el.setAttribute("aria-label", t(el.dataset.i18nAria)));
  $$("[data-i18n-title]").forEach((el) => { el.title = t(el.dataset.i18nTitle); });
  $$("[data-i18n-placeholder]").forEach((el) => { el.placeholder = t(el.dataset.i18nPlaceholder); });
  $$("#examples option[data-title-en]").forEach((o) => { o.textContent = o.dataset["title" + (state.lang === "zh" ? "Zh" : "En")]; });
  $$(".lang button").forEach((b) => b.setAttribute("aria-pressed", b.dataset.lang === state.lang ? "true" : "false"));
  buildTable(); // row headers are words
  buildValueFields();
  renderError();
}
// Play steps on its own, one step every `speed` ms; at the last step it stops, and pressed
// there it starts over. A step taken any other way (a key, a button, the slider, a click on a
// node or a row, a class's instructor) pauses it.
let ticking = false; // the step being made is Play's own
let playedAt = null; // the position Play last knew
function setPlaying(on) {
  clearInterval(playTimer);
  playTimer = null;
  if (on) {
    if (pos() >= maxPos()) tick(0);
    playTimer = setInterval(() => {
      if (pos() >= maxPos()) { setPlaying(false); return; }
      tick(pos() + 1);
    }, state.speed);
  }
  playedAt = pos();
  setState({ playing: on });
}

function tick(p) {
  ticking = true;
  try { setPos(p); } finally { ticking = false; }
  playedAt = pos();
}

function pauseOnStep() {
  if (!state.playing || ticking || !T() || pos() === playedAt) return;
  setPlaying(false);
}

// The page's stepper, for the keys (keys.js): it takes whatever key no lesson wants.
const pageStepper = {
  wants: () => true,
  step(move) {
    if (!T()) return;
    if (move === "first") setPos(0);
    else if (move === "last") setPos(maxPos());
    else setPos(pos() + move);
  },
  passStep: (dir) => jumpPass(dir), // Shift+PageDown / Shift+PageUp: a whole pass
};

// Presentation on or off. Entering asks for the full screen (a nicety: refused, it stays a
// window); leaving the full screen (Esc, in most browsers) leaves presentation too.
let screenIsOurs = false;
function setPresent(present) {
  try {
    if (present && document.documentElement.requestFullscreen && !document.fullscreenElement) {
      document.documentElement.requestFullscreen().then(() => { screenIsOurs = true; }).catch(() => {});
    } else if (!present && document.fullscreenElement && screenIsOurs) {
      document.exitFullscreen().catch(() => {});
    }
  } catch (e) { /* full screen is a nicety */ }
  if (!present) screenIsOurs = false;
  setState({ present, showEditor: false });
  requestAnimationFrame(fitGraph);
}

function wireStepper() {
  on("#btn-first", "click", () => setPos(0));
  on("#btn-back", "click", () => setPos(pos() - 1));
  on("#btn-next", "click", () => setPos(pos() + 1));
  on("#btn-last", "click", () => setPos(maxPos()));
  on("#btn-play", "click", () => setPlaying(!state.playing));
  on("#speed", "change", (ev) => {
    setState({ speed: Number(ev.target.value) || 800 });
    if (state.playing) setPlaying(true);
  });
  on("#step-slider", "input", (ev) => setPos(Number(ev.target.value)));
  subscribe(pauseOnStep);
  on("#forward-mode", "change", (ev) => {
    const onFwd = ev.target.checked;
    setState({ forwardMode: onFwd, fwd: onFwd ? 0 : null, step: onFwd ? 0 : state.step });
  });
  addStepper(pageStepper);
  setEscape(() => {
    if (!state.present) return false;
    setPresent(false);
    return true;
  });
  wireKeys();
  document.addEventListener("fullscreenchange", () => {
    if (!document.fullscreenElement && screenIsOurs) {
      screenIsOurs = false;
      if (state.present) setPresent(false);
    }
  });
}

// A change of option or example runs the program again.
function wireOptions() {
  on("#accumulate", "change", (ev) => { setState({ accumulate: ev.target.value }); scheduleRun(0); });
  on("#order", "change", (ev) => { setState({ order: ev.target.value }); scheduleRun(0); });
  // The box shows what is drawn; while the run it asks for is on its way, what was clicked.
  on("#collapse-loops", "change", (ev) => { setState({ collapse: ev.target.checked, running: true }); scheduleRun(0); });
  on("#examples", "change", (ev) => {
    const ex = (boot.examples || []).find((e) => e.id === ev.target.value);
    if (!ex) return;
    const source = exampleSource(ex, state.lang);
    const ta = $("#source");
    if (ta) ta.value = source;
    newEntry("example"); // Back brings the program before it back
    setState({ source, values: Object.assign({}, ex.values), step: 0, fwd: state.forwardMode ? 0 : null });
    scheduleRun(0);
  });
}

function wireChrome() {
  $$(".lang button").forEach((b) => b.addEventListener("click", () => {
    setState({ lang: b.dataset.lang });
    if (state.collapsed) scheduleRun(0); // the loop's box is labelled by the server
  }));
  on("#present-btn", "click", () => setPresent(!state.present));
  on("#editor-btn", "click", () => {
    const show = !state.showEditor;
    const ta = $("#source");
    if (!show && ta && document.activeElement === ta) ta.blur(); // its keys step again
    setState({ showEditor: show });
    requestAnimationFrame(fitGraph);
  });
  wireLayout();
}

export function wireControls() {
  wireStepper();
  wireOptions();
  wireChrome();
}
