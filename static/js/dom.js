/* Small DOM helpers every view uses. */

export const $ = (sel, root) => (root || document).querySelector(sel);
export const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

export function on(sel, ev, fn, opts) {
  const el = typeof sel === "string" ? $(sel) : sel;
  if (el) el.addEventListener(ev, fn, opts);
}

// Writing the same text again would still cost a layout: only write what changed.
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}
