/* The sentence that says what the current step does (#explain), and what a screen reader hears
 * of the step (#announce, the page's one live region). */
import { $ } from "./dom.js";
import { fmt, fmtCell, shapeBadge, shapeOf } from "./format.js";
import { t } from "./i18n.js";
import { state } from "./store.js";
import { T, inForward, nodeLabel, nodeValue, passOf } from "./trace.js";
import { passCall } from "./table.js";

function who(id) {
  const n = T().byId[id];
  if (!n) return id;
  return n.text && n.text !== n.label && n.kind === "op" ? n.label + " = " + n.text : n.label;
}

// The sentence, after the pass it is in when the program has several passes ("Pass 2 of 3:
// loss.backward() at line 5. …").
export function sentence() {
  const said = stepSentence();
  const p = T() && !inForward() ? passOf(state.step) : null;
  if (p === null) return said;
  const ps = T().passes;
  return t("pass_sentence", { k: p + 1, n: ps.length, call: passCall(p), line: ps[p].line, sentence: said });
}

function stepSentence() {
  if (!T()) return "";
  if (inForward()) {
    const id = T().trace.topo[state.fwd];
    const n = T().byId[id];
    const value = n.shape.length ? shapeBadge(n.shape) : fmt(nodeValue(n));
    const said = n.kind === "op" && n.text && n.text !== n.label
      ? t("sent_forward_op", { node: n.label, text: n.text, value })
      : t("sent_forward", { node: n.label, value });
    const dot = tangentSentence(id);
    return dot ? said + " " + dot : said;
  }
  const st = T().trace.steps[state.step];
  if (!st) return t("no_steps");
  const label = nodeLabel(st.node);
  if (st.kind === "seed" || state.step === 0) {
    if (T().trace.seeded_with_ones) return t("sent_seed_ones", { node: label, shape: shapeBadge(T().trace.shape) });
    return t("sent_seed", { node: label });
  }
  const terms = st.terms || [];
  if (!terms.length) return t("sent_none", { node: label });
  const parts = terms.map((term) => {
    const input = nodeLabel(term.input);
    const scalar = typeof term.contribution === "number";
    if (!scalar) {
      return t("sent_term_tensor", { rule: term.rule, shape: shapeBadge(shapeOf(term.contribution)), input });
    }
    let calc = fmt(term.contribution);
    const up = st.upstream;
    if (term.local !== null && term.local !== undefined && typeof up === "number" && !(term.rule === "ū" && term.local === 1)) {
      calc = fmt(up) + "·" + fmt(term.local) + " = " + calc;
    }
    let s = t("sent_term", { rule: term.rule, calc, input, before: fmt(term.before), after: fmt(term.after) });
    if (state.trace && T().trace.options && T().trace.options.accumulate === "assign" && term.before !== 0 && term.before !== null) {
      s += " " + t("sent_assign", { before: fmt(term.before) });
    }
    return s;
  });
  return who(st.node) + " " + parts.join(t("sent_join"));
}


// A forward-mode transform's tangent at a node (jvp, jacfwd, linearize: the trace's
// tangent_passes), as the forward-mode lesson writes it: "ẏ = cos x·ẋ = 0.54".
function tangentSentence(id) {
  const kept = (T().trace.tangent_passes || []).filter((p) => id in p.tangents);
  if (!kept.length) return "";
  const p0 = kept[0];
  const values = kept.map((p) => fmtCell(p.tangents[id])).join(kept.length > 1 ? "; " : "");
  const key = p0.rules[id] ? "sent_tangent_op" : p0.seed.includes(id) ? "sent_tangent_seed" : "sent_tangent_leaf";
  return t(key, { dnode: p0.names[id], rule: p0.rules[id] || "", tangent: values, n: kept.length });
}

// What the drawing computes: the output node, as the sentence names it (`o = tanh(n)`).
export function program() {
  return T() ? who(T().output) : "";
}

// The one polite live region (#announce): "Step k of N: <sentence>", in the page's language,
// and the drawing's accessible name with the same step. Written only when the words change, so
// hovering or re-rendering announces nothing; a new step or language announces once.
export function announce(step, said) {
  const region = $("#announce");
  const text = T() ? t("sr_step", { step, sentence: said }) : "";
  if (region && region.textContent !== text) region.textContent = text;
  const svg = document.querySelector("#graph > svg");
  if (!svg || !T()) return;
  const name = t("graph_name", { program: program(), step });
  if (svg.getAttribute("aria-label") !== name) svg.setAttribute("aria-label", name);
  const title = svg.querySelector(":scope > title");
  if (title && title.textContent !== name) title.textContent = name;
}
