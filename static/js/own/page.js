/* The own-engine page (/own): the student's engine runs in their browser, in a Web Worker on
 * Pyodide (worker.js, with recorder.py); POST /api/own validates the recording and answers with
 * the trace and its drawing; the main page's stepper (graph, grad table, strips, keys, 中文)
 * then steps through the student's own backward, with the bugs found marked on it.
 *
 * Nothing runs until the student presses Run, whatever the address holds. A run that takes
 * longer than max_own_run_seconds ends its worker (an infinite loop cannot be interrupted any
 * other way) and a new one starts for the next run. Each run gets a fresh worker: one run's
 * classes and globals never leak into the next.
 */
import { boot } from "../boot.js";
import { renderControls, renderLang, wireControls } from "../controls.js";
import { $, $$, on } from "../dom.js";
import { renderError } from "../editor.js";
import { fmt } from "../format.js";
import { prepareSvg, showDrawError } from "../graph.js";
import { replaceSvg } from "../graph_view.js";
import { wireGraph } from "../graph_input.js";
import { renderGraph } from "../graph_style.js";
import { t } from "../i18n.js";
import { setState, state, subscribe } from "../store.js";
import { buildStrips, renderStrips, wireStrips } from "../strips.js";
import { buildTable, renderTable, wireTable } from "../table.js";
import { T, deriveTrace, maxPos, setPos } from "../trace.js";
import { renderReport } from "./report.js";

const OWN = boot.own || {};
const LIMITS = OWN.limits || {};
const RUN_MS = (LIMITS.max_own_run_seconds || 10) * 1000;

// What the page knows of its worker and its last run, beside the store's state.
const own = {
  worker: null,
  ready: false,
  status: "own_loading",
  statusParams: {},
  recording: null, // the last recording, sent again when the language changes
  answer: null, // POST /api/own's last answer
  printed: [],
  boots: [], // {ms, warm} of every worker start, for the bench
  runs: [], // {ms, check} of every run
};

function setStatus(key, params) {
  own.status = key;
  own.statusParams = params || {};
  const el = $("#own-status");
  if (el) { el.dataset.i18n = key; el.textContent = t(key, own.statusParams); }
  const run = $("#own-run");
  if (run) run.disabled = !own.ready;
}

// A new worker, booting Pyodide in the background. The page is usable meanwhile.
function spawn() {
  own.ready = false;
  const version = (OWN.pyodide && OWN.pyodide.version) || "";
  const worker = new Worker("/static/js/own/worker.js?v=" + encodeURIComponent(version), { type: "module" });
  own.worker = worker;
  worker.onmessage = (ev) => {
    if (own.worker !== worker) return;
    const msg = ev.data || {};
    if (msg.type === "ready") {
      own.ready = true;
      own.boots.push({ ms: msg.ms, warm: msg.warm });
      if (!own.pending) setStatus(own.status === "own_loading" ? "own_ready" : own.status, own.statusParams);
      if (own.pending) { const p = own.pending; own.pending = null; send(p); }
    } else if (msg.type === "result") {
      finishRun(worker, msg);
    } else if (msg.type === "failed") {
      endWorker();
      fail({ message: t("own_crashed") + " " + (msg.message || "") });
      spawn();
    }
  };
  worker.onerror = (ev) => {
    if (own.worker !== worker) return;
    ev.preventDefault();
    endWorker();
    fail({ message: t("own_crashed") });
    spawn();
  };
}

function endWorker() {
  if (own.worker) own.worker.terminate();
  own.worker = null;
  own.ready = false;
  clearTimeout(own.timer);
}

function fail(error) {
  own.running = false;
  setState({ error, stale: !!state.trace });
  setStatus("own_ready");
}

// Run: the editor's code, in the worker that is ready (or the one booting).
function run() {
  const source = $("#own-source").value;
  if (source.length > (LIMITS.max_own_source_chars || 50000)) {
    fail({ message: t("own_too_long_source", { most: LIMITS.max_own_source_chars }) });
    return;
  }
  setState({ source, error: null });
  const note = $("#own-from-link");
  if (note) note.hidden = true;
  own.running = true;
  const job = { source };
  if (!own.worker) spawn();
  if (!own.ready) { own.pending = job; setStatus("own_loading"); return; }
  send(job);
}

function send(job) {
  setStatus("own_running");
  $("#own-run").disabled = true;
  const worker = own.worker;
  own.started = performance.now();
  worker.postMessage({ type: "run", source: job.source, limits: LIMITS });
  clearTimeout(own.timer);
  own.timer = setTimeout(() => {
    if (own.worker !== worker) return;
    endWorker(); // an infinite loop cannot be interrupted any other way
    fail({ message: t("own_timeout", { seconds: LIMITS.max_own_run_seconds }) });
    spawn();
  }, RUN_MS);
}

async function finishRun(worker, msg) {
  clearTimeout(own.timer);
  const ms = performance.now() - own.started;
  endWorker(); // each run gets a fresh interpreter: the next boots once this one is drawn
  try {
    await showResult(msg, ms);
  } finally {
    if (!own.worker) spawn(); // from the snapshot, while the student reads the steps
  }
}

async function showResult(msg, ms) {
  let result;
  try { result = JSON.parse(msg.json); } catch (e) { fail({ message: t("own_crashed") }); return; }
  own.printed = result.printed || [];
  if (result.error) {
    const err = result.error;
    const message = err.code === "no_backward" ? t("own_no_backward") : t("own_code_error") + ": " + err.message;
    own.answer = null;
    fail({ message, line: err.line || null, column: err.line ? 1 : null });
    renderReport(null, own);
    return;
  }
  own.runs.push({ ms, run: result.timing && result.timing.run, check: result.timing && result.timing.check });
  own.recording = result.trace;
  setStatus("own_checking");
  await draw(true);
}

// POST /api/own: the recording drawn and worded (again after a change of language).
async function draw(fresh) {
  if (!own.recording) return;
  let resp, body;
  try {
    resp = await fetch("/api/own", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ recording: own.recording, lang: state.lang, layout: "lr" }),
    });
    body = await resp.json();
  } catch (e) {
    fail({ message: t("error_network") });
    return;
  }
  if (!resp.ok || body.error) {
    const err = body.error || {};
    fail({ message: t("own_server_error") + ": " + (err.message || resp.status) });
    return;
  }
  own.answer = body;
  own.running = false;
  if (body.svg) replaceSvg(body.svg); else if (body.draw_error) showDrawError(body.draw_error);
  const first = (body.findings || []).find((f) => f.step !== null && f.step !== undefined);
  const last = body.trace.steps.length - 1;
  const step = fresh ? (first ? first.step : last) : Math.min(state.step, last);
  setState({ trace: body.trace, error: null, stale: false, step, fwd: null, hover: null, drawError: body.draw_error });
  const runMs = own.runs.length ? Math.round(own.runs[own.runs.length - 1].ms) : 0;
  setStatus("own_done", { steps: last, ms: runMs });
}

// render(): the main page's views, then this page's own (the words of the step, the marks).
let renderedTrace = null;
function render() {
  if (state.trace !== renderedTrace) {
    renderedTrace = state.trace;
    deriveTrace();
    buildTable();
    buildStrips();
  }
  renderLang();
  document.title = t("own_title");
  renderGraph();
  renderTable();
  renderStrips();
  renderControls();
  renderError();
  renderReport(own.answer, own);
  renderWords();
}

// The step's words, as the server wrote them, and the live region that says them.
function renderWords() {
  const st = T() && T().trace.steps[state.step];
  const text = st ? st.words || "" : "";
  const ex = $("#own-explain");
  if (ex && ex.textContent !== text) ex.textContent = text;
  const region = $("#own-announce");
  const said = T() ? t("sr_step", { step: t("step_of", { k: state.step, n: T().N }), sentence: text }) : "";
  if (region && region.textContent !== said) region.textContent = said;
}

function wireOwn() {
  on("#own-run", "click", run);
  on("#own-example", "change", (ev) => {
    const ex = (OWN.examples || []).find((e) => e.id === ev.target.value);
    if (!ex) return;
    $("#own-source").value = ex.source;
    const note = $("#own-from-link");
    if (note) note.hidden = true;
  });
  // Ctrl/Cmd+Enter runs from the editor; Tab indents there (it is Python).
  on("#own-source", "keydown", (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "Enter") { ev.preventDefault(); if (own.ready) run(); }
    if (ev.key === "Tab" && !ev.shiftKey && !ev.ctrlKey && !ev.altKey) {
      const ta = ev.target;
      const a = ta.selectionStart;
      ev.preventDefault();
      ta.setRangeText("    ", a, ta.selectionEnd, "end");
    }
  });
  let lang = state.lang;
  subscribe((s) => {
    if (s.lang === lang) return;
    lang = s.lang;
    if (own.recording) draw(false); // the words and the findings are the server's, in one language
    setStatus(own.status, own.statusParams);
  });
}

function start() {
  prepareSvg();
  wireControls();
  wireTable();
  wireStrips();
  wireGraph();
  wireOwn();
  subscribe(render);
  render();
  if (!(OWN.pyodide && OWN.pyodide.version)) {
    setStatus("own_no_pyodide");
  } else {
    spawn(); // boot Pyodide now, so that Run is quick; nothing runs until it is pressed
  }
  window.gradtrace = Object.freeze({ fmt, get state() { return state; }, setPos, maxPos });
  window.gradtraceOwn = Object.freeze({
    get ready() { return own.ready; },
    get answer() { return own.answer; },
    get recording() { return own.recording; },
    get boots() { return own.boots.slice(); },
    get runs() { return own.runs.slice(); },
    get status() { return own.status; },
    run,
  });
  document.documentElement.classList.add("js-ready");
  $$("#own-report").forEach((el) => { el.hidden = true; });
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
