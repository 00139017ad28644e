/* gradtrace's notebook widget, the front end (an anywidget module: render({ model, el })).
 *
 * The kernel runs the program and sends one frame per step (gradtrace/widget_frames.py: the
 * step's SVG, its label, the sentence and the grad table's row); this module only moves the
 * step and shows its frame, so stepping waits on nothing when every frame came at once. A large
 * trace sends the frame on show only: the front end sets `step`, the kernel answers with
 * `frame`, and frames already seen are kept here. Nothing is fetched; no host's own API is used,
 * so it runs wherever anywidget does (JupyterLab, Notebook, VS Code, Colab). */

const STEP_KEYS = { ArrowLeft: -1, ArrowRight: 1, PageUp: -1, PageDown: 1 };
const KEY_HINTS = { first: "Home", back: "←", next: "→", last: "End" };
// The page's step icons (templates/_partials.html), drawn, so that no font needs the glyphs.
const icon = (body) => `<svg viewBox="0 0 20 20" width="16" height="16" aria-hidden="true">${body}</svg>`;
const ARROW = 'fill="none" stroke="currentColor" stroke-width="2.6" stroke-linejoin="round" stroke-linecap="round"';
const ICONS = {
  first: icon('<rect x="3" y="4" width="2.4" height="12"/><path d="M10.5 4 4.8 10l5.7 6zM17 4l-5.7 6 5.7 6z"/>'),
  back: icon(`<path d="M13 3.5 6.5 10l6.5 6.5" ${ARROW}/>`),
  next: icon(`<path d="M7 3.5 13.5 10 7 16.5" ${ARROW}/>`),
  last: icon('<rect x="14.6" y="4" width="2.4" height="12"/><path d="M3 4l5.7 6L3 16zM9.5 4l5.7 6-5.7 6z"/>'),
};

function make(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text) node.textContent = text;
  return node;
}

function fill(template, params) {
  return String(template || "").replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

// The widget's parts, made once per view.
function build(root) {
  const box = make("div", {
    class: "gradtrace-widget",
    tabindex: "0",
    // JupyterLab (Lumino) leaves keys inside this element to it: the arrows step the graph.
    "data-lm-suppress-shortcuts": "true",
    "data-p-suppress-shortcuts": "true",
  });
  const bar = make("div", { class: "gtw-bar" });
  const buttons = {};
  for (const name of Object.keys(ICONS)) {
    buttons[name] = make("button", { type: "button", class: "gtw-" + name });
    buttons[name].innerHTML = ICONS[name]; // constant markup, no data in it
  }
  const slider = make("input", { type: "range", class: "gtw-slider", min: "0", step: "1" });
  const label = make("span", { class: "gtw-label", "aria-live": "polite" });
  bar.append(buttons.first, buttons.back, slider, buttons.next, buttons.last, label);
  const graph = make("div", { class: "gtw-graph" });
  const sentence = make("p", { class: "gtw-sentence" });
  const tableBox = make("div", { class: "gtw-table-box" });
  const table = make("table", { class: "gtw-table" });
  tableBox.append(table);
  const error = make("div", { class: "gtw-error", role: "alert" });
  error.hidden = true;
  box.append(bar, error, graph, sentence, tableBox);
  root.append(box);
  return { box, bar, buttons, slider, label, graph, sentence, table, tableBox, error };
}

function showError(parts, model, err) {
  const words = model.get("words") || {};
  parts.error.replaceChildren();
  parts.error.append(make("strong", {}, words.error_title || "The program cannot run"));
  const line = err.line ? String(model.get("program") || "").split("\n")[err.line - 1] : null;
  if (line !== null && line !== undefined) {
    const caret = " ".repeat(Math.max(0, (err.column || 1) - 1)) + "^";
    parts.error.append(make("pre", { class: "gtw-source" }, line + "\n" + caret));
  }
  parts.error.append(make("p", { class: "gtw-message" }, err.text || err.message || ""));
}

function showTable(parts, model, frame) {
  const words = model.get("words") || {};
  const head = make("tr");
  head.append(make("th", { scope: "col" }, words.step_col || "Step"));
  for (const column of model.get("columns") || []) {
    const th = make("th", { scope: "col" });
    th.append(make("code", {}, column.label));
    head.append(th);
  }
  const row = make("tr", { "aria-current": "step" });
  row.append(make("th", { scope: "row" }, frame.what));
  for (const [text, changed] of frame.cells) {
    const td = make("td", changed ? { class: "changed" } : {});
    if (changed) td.append(make("b", {}, text));
    else td.textContent = text;
    row.append(td);
  }
  const thead = make("thead"), tbody = make("tbody");
  thead.append(head);
  tbody.append(row);
  parts.table.replaceChildren(thead, tbody);
}

function render({ model, el }) {
  const parts = build(el);
  const seen = new Map(); // "rev:step" -> frame, for a trace sent one frame at a time
  let drawn = null; // the frame on show

  function frameAt(k) {
    const rev = model.get("rev");
    const frames = model.get("frames") || [];
    if (frames.length) return frames[k] || null;
    const one = model.get("frame");
    if (one && one.rev === rev && one.step !== undefined) seen.set(rev + ":" + one.step, one);
    return seen.get(rev + ":" + k) || null;
  }

  function go(k) {
    const n = model.get("n_steps");
    if (!n) return;
    k = Math.max(0, Math.min(n - 1, k));
    if (k === model.get("step")) return;
    model.set("step", k);
    model.save_changes();
    draw();
  }

  function draw() {
    const words = model.get("words") || {};
    const err = model.get("error");
    const n = model.get("n_steps") || 0;
    const k = model.get("step") || 0;
    parts.error.hidden = !err;
    if (err) showError(parts, model, err);
    parts.box.classList.toggle("gtw-failed", !!err);
    for (const [name, button] of Object.entries(parts.buttons)) {
      button.setAttribute("aria-label", words[name] || name);
      button.title = (words[name] || name) + " (" + KEY_HINTS[name] + ")";
    }
    parts.buttons.first.disabled = parts.buttons.back.disabled = !n || k <= 0;
    parts.buttons.next.disabled = parts.buttons.last.disabled = !n || k >= n - 1;
    parts.slider.max = String(Math.max(0, n - 1));
    parts.slider.value = String(k);
    parts.slider.disabled = n < 2;
    parts.slider.setAttribute("aria-label", words.slider || "Step");
    if (err || !n) {
      parts.graph.replaceChildren();
      parts.sentence.textContent = "";
      parts.table.replaceChildren();
      parts.label.textContent = "";
      drawn = null;
      return;
    }
    const frame = frameAt(k);
    parts.box.classList.toggle("gtw-waiting", !frame);
    parts.box.dataset.step = String(k);
    if (!frame) {
      // The kernel is drawing this step: say which, and keep the last drawing meanwhile.
      parts.label.textContent = fill(words.step_of, { k, n: n - 1 });
      return;
    }
    if (frame !== drawn) {
      parts.graph.innerHTML = frame.svg; // from engine.drawing, which escapes every text
      parts.label.textContent = frame.label;
      parts.sentence.textContent = frame.sentence;
      showTable(parts, model, frame);
      drawn = frame;
    }
  }

  const clicks = [
    [parts.buttons.first, () => go(0)],
    [parts.buttons.back, () => go(model.get("step") - 1)],
    [parts.buttons.next, () => go(model.get("step") + 1)],
    [parts.buttons.last, () => go(model.get("n_steps") - 1)],
  ];
  for (const [button, handler] of clicks) button.addEventListener("click", handler);
  parts.slider.addEventListener("input", () => go(Number(parts.slider.value)));
  parts.box.addEventListener("keydown", (event) => {
    if (event.target === parts.slider && event.key.startsWith("Arrow")) return; // its own
    let k = null;
    if (event.key in STEP_KEYS) k = model.get("step") + STEP_KEYS[event.key];
    else if (event.key === "Home") k = 0;
    else if (event.key === "End") k = model.get("n_steps") - 1;
    if (k === null) return;
    event.preventDefault();
    event.stopPropagation();
    go(k);
  });

  const events = ["step", "frames", "frame", "rev", "error", "n_steps", "columns", "words"];
  for (const name of events) model.on("change:" + name, draw);
  draw();
  return () => {
    for (const name of events) model.off("change:" + name, draw);
  };
}

export default { render };
