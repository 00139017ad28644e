/* The keyboard, and the clicker (which sends PageDown/PageUp): which stepper a key steps.
 *
 * The stepping keys step from wherever the focus is, except where the key already means
 * something: a text field types (Esc leaves it, so the clicker works again); Space and Enter on
 * a focused control press it; ↑/↓ belong to lists, menus and boxes that scroll. Esc elsewhere
 * leaves presentation. The keys go to the first stepper that wants them: a lesson with a
 * stepper of its own when the focus is in it or it is the one on show (lessons/panel.js adds
 * it), else the page's. The listener runs on window in the capture phase, before the slider's
 * and the menus' own key handling, and stops it (a menu keeps its value, the slider does not
 * move twice or backwards). */

// What each stepping key does.
const STEP_KEYS = {
  PageDown: 1, ArrowRight: 1, ArrowDown: 1, " ": 1,
  PageUp: -1, ArrowLeft: -1, ArrowUp: -1,
  Home: "first", End: "last",
};

// Inputs that are not for typing: a key on them may step.
const NOT_TYPED = ["button", "checkbox", "radio", "range", "submit", "reset", "image", "color", "file"];
// Inputs Space and Enter press (toggle, submit): never a step.
const PRESSED = ["button", "checkbox", "radio", "submit", "reset", "image", "color", "file"];
// Roles whose ↑/↓ move inside them.
const LIST_ROLES = ["listbox", "menu", "menubar", "radiogroup", "tablist", "tree", "grid", "treegrid", "option", "menuitem", "tab"];

export function isTextField(el) {
  if (!el || !el.tagName) return false;
  const tag = el.tagName;
  return tag === "TEXTAREA" || el.isContentEditable || (tag === "INPUT" && !NOT_TYPED.includes(el.type));
}

// A control that Space and Enter press: a button, a link, a menu, a box to tick, a summary.
function pressable(el) {
  if (!el || !el.tagName) return false;
  const tag = el.tagName;
  if (tag === "BUTTON" || tag === "SUMMARY" || tag === "SELECT" || (tag === "A" && el.hasAttribute("href"))) return true;
  if (tag === "INPUT") return PRESSED.includes(el.type);
  const role = el.getAttribute("role");
  return role === "button" || role === "link" || role === "checkbox" || role === "switch" || role === "tab";
}

// Where ↑/↓ already mean something: a menu, a list, a box that scrolls.
function ownsUpDown(el) {
  for (let e = el; e && e !== document.body && e.nodeType === 1; e = e.parentElement) {
    if (e.tagName === "SELECT" || LIST_ROLES.includes(e.getAttribute("role"))) return true;
    if (e.tabIndex >= 0 && !pressable(e) && e.tagName !== "INPUT" && e.scrollHeight > e.clientHeight + 1) return true;
  }
  return false;
}

// Steppers, each {wants(target) -> bool, step(move)}; `move` is ±1, "first" or "last"; one
// with passStep(±1) takes Shift+PageDown / Shift+PageUp (a whole pass).
const steppers = [];
let onEscape = null;

// A stepper asked before those added earlier (a lesson's, before the page's).
export function addStepper(s) {
  steppers.unshift(s);
}

// What Esc outside a text field does (leave presentation): true when it did something.
export function setEscape(fn) {
  onEscape = fn;
}

function onKey(ev) {
  if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.isComposing || ev.defaultPrevented) return;
  const el = ev.target;
  if (isTextField(el)) {
    if (ev.key === "Escape") el.blur();
    return;
  }
  if (ev.key === "Escape") {
    if (onEscape && onEscape()) ev.preventDefault();
    return;
  }
  if (ev.shiftKey && (ev.key === "PageDown" || ev.key === "PageUp")) {
    // A whole pass (timeline.js); a stepper that knows no passes leaves it to the page's.
    const passer = steppers.find((s) => s.passStep && s.wants(el));
    if (!passer) return;
    ev.preventDefault();
    ev.stopPropagation();
    passer.passStep(ev.key === "PageDown" ? 1 : -1);
    return;
  }
  const move = STEP_KEYS[ev.key];
  if (move === undefined) return;
  if (ev.key === " " && pressable(el)) return; // Space presses the control
  if ((ev.key === "ArrowUp" || ev.key === "ArrowDown") && ownsUpDown(el)) return;
  const stepper = steppers.find((s) => s.wants(el));
  if (!stepper) return;
  ev.preventDefault();
  ev.stopPropagation();
  stepper.step(move);
}

export function wireKeys() {
  window.addEventListener("keydown", onKey, { capture: true });
}
