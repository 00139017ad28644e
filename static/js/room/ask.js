/* A question put to the class, as both sides draw it: the distribution of answers as bars
 * (the instructor's tally, when it shows it, and everyone's reveal), and the student's
 * question card (a non-modal dialog: a number field or a button per choice, changeable until
 * the reveal, saying whether the answer is stored yet). */
import { $ } from "../dom.js";
import { fmt } from "../format.js";
import { t } from "../i18n.js";
import { el } from "../lessons/kit.js";
import { MISCONCEPTIONS, isRight, misconceptionOf, sameNumber } from "./misconceptions.js";

// The question's words in the reader's language (the instructor's text when it is no kind we
// know).
export function questionText(q) {
  if (q.topic === "grad" && q.name) return t("room_q_grad", { name: q.name });
  if (q.topic === "next") return t("room_q_next");
  if (q.topic === "pass" && q.name) return t("room_q_pass", { name: q.name, k: q.pass });
  return q.question || "";
}

// An answer as it is shown: a number in the page's format, a choice as it is.
export function shown(q, value) {
  if (q.kind === "value" && value !== null && value !== "" && Number.isFinite(Number(value))) return fmt(Number(value));
  return String(value);
}

// The rows of a distribution: [{value, n}], numbers that are the same answer merged; a
// choice question lists every choice, even one nobody picked.
function rows(q, counts) {
  const out = [];
  if (q.kind === "choice") (q.choices || []).forEach((c) => out.push({ value: c, n: 0 }));
  Object.entries(counts || {}).forEach(([key, n]) => {
    const row = out.find((r) => (q.kind === "value" ? sameNumber(r.value, key) : String(r.value) === key));
    if (row) row.n += Number(n) || 0;
    else out.push({ value: q.kind === "value" && Number.isFinite(Number(key)) ? Number(key) : key, n: Number(n) || 0 });
  });
  if (q.kind === "value") out.sort((a, b) => b.n - a.n);
  return out;
}

// The bars of `counts` ({answer: n}) out of `total`; after the reveal the right one is marked ✓
// and a wrong one a misconception explains is named (but not `mine`: the verdict names it).
export function bars(q, counts, total, revealed, mine) {
  const list = el("ul", { class: "room-bars" });
  const all = rows(q, counts);
  const most = Math.max(1, ...all.map((r) => r.n));
  all.forEach((r) => {
    const right = revealed && isRight(q, r.value);
    const why = revealed ? misconceptionOf(q, r.value) : null;
    const own = mine !== null && mine !== undefined && (q.kind === "value" ? sameNumber(mine, r.value) : String(mine) === String(r.value));
    const pct = total ? Math.round((100 * r.n) / total) : 0;
    const li = el("li", { class: "room-bar-row" + (right ? " right" : "") + (why ? " named" : ""), "data-value": String(r.value) },
      el("span", { class: "room-bar-label", text: shown(q, r.value) + (right ? " ✓" : "") }),
      el("span", { class: "room-bar", "aria-hidden": "true" }, el("span", { class: "room-bar-fill", style: { width: (100 * r.n) / most + "%" } })),
      el("span", { class: "room-bar-n", text: t("room_count", { n: r.n, pct }) }),
    );
    if (why && !own) li.append(el("span", { class: "room-bar-why", text: t(MISCONCEPTIONS[why]) }));
    list.append(li);
  });
  return list;
}

// The reveal's verdict on one student's answer: right, wrong (and why, when a misconception
// says), or no answer.
export function verdict(q, mine) {
  if (mine === null || mine === undefined) return { text: t("room_no_answer"), right: false, why: null };
  const right = isRight(q, mine);
  const why = right ? null : misconceptionOf(q, mine);
  const text = t(right ? "room_you_right" : "room_you_wrong", { value: shown(q, mine) });
  return { text: why ? text + " " + t("room_likely", { why: t(MISCONCEPTIONS[why]) }) : text, right, why };
}

// The student's card for `q` ({id, kind, choices, mine, revealed}); send(value) answers.
export function renderCard(q, send, close) {
  const card = $("#room-question");
  if (!card) return;
  if (!q) { card.hidden = true; card.replaceChildren(); return; }
  card.hidden = false;
  card.dataset.kind = q.kind;
  card.classList.toggle("revealed", !!q.revealed);
  const kids = [el("h2", { id: "room-q-text", text: questionText(q) })];
  if (!q.revealed) kids.push(q.kind === "choice" ? choiceButtons(q, send) : numberForm(q, send));
  if (!q.revealed && q.mine !== null && q.mine !== undefined) {
    // "Sent" only once the server has stored it; before that, that it is on its way.
    const word = q.status === "sent" ? "room_sent" : q.status === "retrying" ? "room_retrying" : "room_sending";
    kids.push(el("p", { class: "note room-sent", id: "room-sent", "data-status": q.status || "sending", text: t(word, { value: shown(q, q.mine) }) }));
  }
  if (q.revealed) {
    const v = verdict(q, q.mine);
    kids.push(
      el("p", { class: "room-answer", id: "room-answer", text: t("room_correct", { answer: shown(q, q.answer) }) }),
      el("p", { class: "room-verdict " + (v.right ? "right" : "wrong"), id: "room-verdict", "data-why": v.why || "", text: v.text }),
      bars(q, q.revealed.counts, q.revealed.total, true, q.mine),
      el("button", { type: "button", id: "room-q-close", text: t("room_close_q"), onclick: close }),
    );
  }
  const had = card.contains(document.activeElement) && document.activeElement.id;
  card.replaceChildren(...kids);
  if (had && document.getElementById(had)) document.getElementById(had).focus();
}

function choiceButtons(q, send) {
  const group = el("div", { class: "room-choices", role: "group", "aria-labelledby": "room-q-text" });
  (q.choices || []).forEach((c, i) => group.append(el("button", {
    type: "button", id: "room-choice-" + i, class: "room-choice", "aria-pressed": String(q.mine) === String(c) ? "true" : "false",
    text: c, onclick: () => send(c),
  })));
  return group;
}

function numberForm(q, send) {
  const input = el("input", { type: "text", id: "room-q-input", inputMode: "decimal", autocomplete: "off", "aria-describedby": "room-q-hint" });
  if (q.draft !== undefined) input.value = q.draft;
  else if (q.mine !== null && q.mine !== undefined) input.value = String(q.mine);
  input.addEventListener("input", () => { q.draft = input.value; input.removeAttribute("aria-invalid"); });
  const hint = el("p", { class: "note", id: "room-q-hint", text: t("room_number_hint") });
  const form = el("form", { class: "room-q-form" },
    el("label", { for: "room-q-input", text: t("room_your_answer") }), input,
    el("button", { type: "submit", id: "room-q-send", text: t("room_send") }), hint);
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const value = Number(input.value.trim().replace(",", "."));
    if (!input.value.trim() || !Number.isFinite(value)) {
      input.setAttribute("aria-invalid", "true");
      hint.textContent = t("room_number_invalid");
      return;
    }
    q.draft = undefined;
    send(value);
  });
  return form;
}
