/* What every lesson view builds with: elements, node names, the lesson panel's number format. */
import { fmtBrief, zerosLike } from "../format.js";

export { t } from "../i18n.js";
export const fmt = fmtBrief;
export const zeros = zerosLike;

// An element with attributes and children; no innerHTML, so no program text is ever markup.
export function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  Object.entries(attrs || {}).forEach(([k, v]) => {
    if (v === null || v === undefined || v === false) return;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k === "style") Object.assign(e.style, v); // CSSOM, which the CSP allows
    else if (k.startsWith("data-") || k.startsWith("aria-") || k === "role" || k === "scope" || k === "title" || k === "type" || k === "id" || k === "for") e.setAttribute(k, v);
    else e[k] = v;
  });
  kids.flat().forEach((k) => { if (k !== null && k !== undefined && k !== false) e.append(k); });
  return e;
}

export function labels(trace) {
  const out = {};
  (trace ? trace.nodes : []).forEach((n) => { out[n.id] = n.label; });
  return out;
}

// Equal to a relative 1e-9: two runs of the same sums in another order.
export function same(a, b) {
  const fa = Array.isArray(a) ? a.flat(Infinity) : [a], fb = Array.isArray(b) ? b.flat(Infinity) : [b];
  if (fa.length !== fb.length) return false;
  return fa.every((x, i) => Math.abs(x - fb[i]) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(fb[i])));
}

export function chips(ids, names, cur) {
  const ol = el("ol", { class: "ls-chips" });
  ids.forEach((id) => ol.append(el("li", { "data-node": id, class: id === cur ? "cur" : "", text: names[id] })));
  return ol;
}
