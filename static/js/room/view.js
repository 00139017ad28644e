/* The view a class follows: what the instructor's page sends as `state` (the page's query
 * parameters: source, values, accumulate, order, step, fwd, lang, lesson, collapse), and how
 * two views compare. */

// Values in one order, so that {x, y} and {y, x} are the same values.
function canonical(values) {
  const out = {};
  Object.keys(values || {}).sort().forEach((k) => { out[k] = values[k]; });
  return out;
}

// The view of the page's state, as sent in a `state` message (only the keys app/rooms/protocol.py
// knows). `fwd` is the forward-pass position, null at a backward step.
export function viewOf(s) {
  return {
    source: s.source,
    values: canonical(s.values),
    accumulate: s.accumulate,
    order: s.order,
    step: s.step,
    fwd: s.forwardMode && s.fwd != null ? s.fwd : null,
    lang: s.lang,
    lesson: (s.lesson && s.lesson.name) || null,
    collapse: s.collapse == null ? null : !!s.collapse,
  };
}

// What must be run again to show a view: the program and its options.
export function programKey(v) {
  return JSON.stringify([v.source, canonical(v.values), v.accumulate, v.order, v.collapse == null ? null : !!v.collapse]);
}

// Where in the trace a view is.
export function positionKey(v) {
  return JSON.stringify([v.step, v.fwd == null ? null : v.fwd]);
}

// What a student changes when they go their own way: the program or the position (not the
// language, nor the lesson, which are theirs to choose while following).
export function ownKey(s) {
  const v = viewOf(s);
  return programKey(v) + positionKey(v);
}
