/* The page's words: engine/words/<lang>.json, which the server puts in the start-up data. */
import { boot } from "./boot.js";
import { state } from "./store.js";

const STRINGS = boot.strings || { en: {} };

// `{name}` in a string is filled from params; a missing word falls back to English, then the key.
export function t(key, params) {
  let s = (STRINGS[state.lang] && STRINGS[state.lang][key]) || STRINGS.en[key] || key;
  if (params) {
    s = s.replace(/\{(\w+)\}/g, (m, k) => (k in params ? String(params[k]) : m));
  }
  return s;
}
