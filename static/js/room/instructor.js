/* The instructor's side of a room: "Start a class" (POST /api/rooms with the view on show),
 * the card to project (the code, the join link and its QR, how many students are connected),
 * every change of the view sent as `state` (a step at once, typing debounced), and questions:
 * ask about the next step, watch the answers come in (hidden from the projector until the
 * instructor shows them), reveal.
 *
 * The instructor's key is kept in this tab only (sessionStorage), never in the address bar:
 * a link with #key=… is read into the tab and taken out of the address at once (index.js), and
 * the card's "Copy instructor link" makes one for a second device. A reload of the tab joins
 * again. Every hello carries the room as this page holds it (its last seq, view and question):
 * if Redis lost the room (a restart), the server puts it back from that, with the same code. */
import { $ } from "../dom.js";
import { t } from "../i18n.js";
import { state, subscribe } from "../store.js";
import { inForward } from "../trace.js";
import { bars, questionText, shown } from "./ask.js";
import { gradQuestion, nextQuestion, passQuestion } from "./misconceptions.js";
import { roomSocket } from "./socket.js";
import { positionKey, programKey, viewOf } from "./view.js";
import { say, showAsking, showChip } from "./ui.js";

export const SAVED = "gradtrace.room"; // sessionStorage: {room, key} of this tab's class
export const TYPING_MS = 50; // a burst of edits is sent once

export function savedRoom() {
  try { return JSON.parse(sessionStorage.getItem(SAVED) || "null"); } catch (e) { return null; }
}

export function saveRoom(room, key) {
  try { sessionStorage.setItem(SAVED, JSON.stringify({ room, key })); } catch (e) { /* private mode */ }
}

// The address with `room=CODE` in the query (or none); never the key.
export function roomAddress(room) {
  const params = new URLSearchParams(location.search);
  params.delete("room");
  let query = params.toString();
  if (room) query += (query ? "&" : "") + "room=" + encodeURIComponent(room);
  return location.pathname + (query ? "?" + query : "");
}

// A link that drives the class from another device: the address with the key in its
// fragment, which a browser never sends to a server (and the page takes out of the address).
export function instructorLink(room, key) {
  return location.origin + roomAddress(room) + "#key=" + encodeURIComponent(key);
}

export async function createRoom() {
  const resp = await fetch("/api/rooms", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify({ state: viewOf(state) }),
  });
  let body = {};
  try { body = await resp.json(); } catch (e) { /* not JSON: the status says it */ }
  if (!resp.ok) throw new Error((body.error && body.error.message) || body.detail || "HTTP " + resp.status);
  return body;
}

// The card sits just under the page's header (whatever its height: it wraps, and presentation
// mode changes it), or at the top once the header has scrolled away.
function placeCard() {
  const card = $("#room-card"), bar = $(".topbar");
  if (!card || card.hidden) return;
  const top = Math.max(8, bar ? Math.round(bar.getBoundingClientRect().bottom) + 8 : 8);
  card.style.top = top + "px";
  card.style.maxHeight = "calc(100vh - " + (top + 8) + "px)";
}

// The pass question, while the Training lesson is on show: about its pass on show.
function trainingQuestion() {
  const ls = state.lesson;
  if (ls.name !== "training" || ls.loading || !ls.data.training) return null;
  return passQuestion(ls.data.training, ls.sub);
}

class Instructor {
  constructor(room, key, onEnd) {
    Object.assign(this, { room, key, onEnd });
    this.students = 0;
    this.question = null;
    this.askMsg = null; // the open question as sent (what a room put back asks again)
    this.sent = null; // the view last sent (or due to be)
    this.timer = null;
    this.retryTimer = null;
    this.joinShown = true;
    this.showLive = false; // the bars on the projector before the reveal: the instructor's choice
    this.message = "";
    this.copied = "";
    this.lang = state.lang;
    this.socket = roomSocket(room, () => this.hello(), (m) => this.onMessage(m), (s) => this.onStatus(s));
    this.unsubscribed = false;
  }

  hello() {
    const q = this.question;
    const restore = {
      seq: Math.max(0, this.socket.seq),
      state: this.sent || viewOf(state),
      question: this.askMsg,
      revealed: !!(q && q.revealed),
    };
    return { type: "hello", role: "instructor", key: this.key, restore };
  }

  start() {
    saveRoom(this.room, this.key);
    history.replaceState(null, "", roomAddress(this.room));
    showChip(this.room);
    document.body.classList.add("room-instructor");
    const card = $("#room-card");
    card.hidden = false;
    $("#room-code").textContent = this.room;
    const link = $("#room-link");
    link.href = location.origin + "/r/" + encodeURIComponent(this.room);
    link.textContent = link.href.replace(/^https?:\/\//, "");
    $("#room-qr").src = "/api/rooms/" + encodeURIComponent(this.room) + "/qr.svg";
    this.addCopyLink();
    subscribe((s) => { if (!this.unsubscribed) this.onStore(s); });
    this.place = () => { if (!this.unsubscribed) placeCard(); };
    window.addEventListener("resize", this.place);
    window.addEventListener("scroll", this.place, { passive: true });
    this.socket.open();
    this.render();
  }

  // "Copy instructor link", beside "End class": the link with the key, for a second device.
  addCopyLink() {
    if ($("#room-copy-key")) return;
    const b = document.createElement("button");
    Object.assign(b, { type: "button", id: "room-copy-key", onclick: () => this.copyLink() });
    const end = $("#room-end");
    end.parentNode.insertBefore(b, end);
    const note = document.createElement("p");
    Object.assign(note, { id: "room-copy-note", className: "note room-copy-note", hidden: true });
    note.setAttribute("role", "status");
    end.parentNode.after(note);
  }

  async copyLink() {
    const link = instructorLink(this.room, this.key);
    try {
      await navigator.clipboard.writeText(link);
      this.copied = "room_copied_key";
    } catch (e) {
      this.copied = "room_copy_key_failed";
    }
    this.render();
  }

  toggleCard() {
    const card = $("#room-card");
    card.hidden = !card.hidden;
    this.render();
  }

  toggleJoin() {
    this.joinShown = !this.joinShown;
    this.render();
  }

  onStatus(s) {
    if (s === "live") { this.sent = null; this.onStore(state); } // the whole view again
    this.render();
  }

  onMessage(msg) {
    if (msg.type === "state") { // its own view back, numbered: accepted, so an old refusal is over
      if (this.message) { this.message = ""; this.render(); }
      return;
    }
    if (msg.type === "welcome" || msg.type === "pong") return;
    if (msg.type === "presence") this.students = Number(msg.students) || 0;
    else if (msg.type === "ask") {
      if (!(this.question && this.question.id === msg.id)) {
        // The question still open when this tab joined again (a reload): its answers follow.
        this.question = Object.assign({ counts: {}, total: 0, revealed: false }, msg.about || {}, msg.hidden || {}, {
          id: msg.id, kind: msg.kind, choices: msg.choices, answer: msg.answer, question: msg.question,
        });
      }
      this.question.stored = true;
      const asked = Object.assign({}, msg);
      delete asked.type;
      delete asked.answer_key;
      this.askMsg = asked;
    } else if (msg.type === "tally" && this.question && msg.id === this.question.id) {
      Object.assign(this.question, { counts: msg.counts || {}, total: msg.total || 0 });
    } else if (msg.type === "reveal" && this.question && msg.id === this.question.id) {
      Object.assign(this.question, { revealed: true, revealing: false, counts: msg.counts || {}, total: msg.total || 0 });
    } else if (msg.type === "error") {
      this.message = msg.message || "";
      if (msg.code === "unavailable") this.again(Number(msg.retry_after) || 1);
    } else if (msg.type === "ended" || msg.type === "closed") { this.finish(); return; }
    showAsking(!!(this.question && !this.question.revealed));
    this.render();
  }

  // Redis could not store what was sent: send the view (and a question or reveal not yet
  // echoed) again, once it may.
  again(seconds) {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      if (this.unsubscribed) return;
      this.flush();
      const q = this.question;
      if (q && !q.stored && this.askMsg) this.socket.send({ type: "ask", ...this.askMsg });
      if (q && q.revealing && !q.revealed) this.reveal();
    }, seconds * 1000);
  }

  // Every change of the view goes to the class: a move of the step at once, an edit once its
  // burst is over (TYPING_MS).
  onStore(s) {
    if (s.lang !== this.lang) { this.lang = s.lang; this.render(); }
    const v = viewOf(s);
    const prev = this.sent;
    if (prev && JSON.stringify(prev) === JSON.stringify(v)) { this.renderAsk(); return; }
    this.sent = v;
    clearTimeout(this.timer);
    const moved = prev && programKey(prev) === programKey(v) && prev.lang === v.lang && prev.lesson === v.lesson && positionKey(prev) !== positionKey(v);
    if (moved) this.flush();
    else this.timer = setTimeout(() => this.flush(), TYPING_MS);
    this.renderAsk();
  }

  flush() {
    clearTimeout(this.timer);
    if (this.sent) this.socket.send({ type: "state", state: this.sent });
  }

  ask(kind) {
    if (!state.trace || inForward()) return;
    const q = kind === "grad" ? gradQuestion(state.trace, state.step) : kind === "pass" ? trainingQuestion() : nextQuestion(state.trace, state.step);
    if (!q) return;
    const id = "q" + Date.now().toString(36) + Math.floor(Math.random() * 1e6).toString(36);
    this.question = Object.assign({}, q, { id, counts: {}, total: 0, revealed: false, stored: false });
    // Which wrong answers a misconception explains goes to students only with the reveal.
    const asked = { id, question: questionText(q), kind: q.kind, answer: q.answer, about: { topic: q.topic, name: q.name, step: q.step, pass: q.pass }, hidden: { named: q.named } };
    if (q.kind === "choice") asked.choices = q.choices;
    this.askMsg = asked;
    this.flush(); // the class sees the step the question is about
    this.joinShown = false; // the class has joined: the card makes room for the answers
    this.showLive = false;
    showAsking(true);
    this.socket.send({ type: "ask", ...asked });
    say(t("room_q_announce", { question: questionText(q) }));
    this.render();
  }

  reveal() {
    if (!this.question) return;
    this.question.revealing = true;
    this.socket.send({ type: "reveal", id: this.question.id });
  }

  async end() {
    try {
      await fetch("/api/rooms/" + encodeURIComponent(this.room) + "/end", { method: "POST", headers: { "X-Instructor-Key": this.key } });
    } catch (e) { /* the socket's close says the rest */ }
    this.finish();
  }

  // The class is over (ended here, by the server, or refused): back to the page alone.
  finish() {
    if (this.unsubscribed) return;
    this.unsubscribed = true;
    clearTimeout(this.timer);
    clearTimeout(this.retryTimer);
    this.socket.stop("ended");
    showAsking(false);
    try { sessionStorage.removeItem(SAVED); } catch (e) { /* private mode */ }
    history.replaceState(null, "", roomAddress(null));
    $("#room-card").hidden = true;
    document.body.classList.remove("room-instructor", "room-card-open");
    window.removeEventListener("resize", this.place);
    window.removeEventListener("scroll", this.place);
    showChip(null);
    say(t("room_status_ended"));
    if (this.onEnd) this.onEnd();
  }

  renderAsk() {
    const can = !!state.trace && !inForward();
    const g = can ? gradQuestion(state.trace, state.step) : null;
    const n = can ? nextQuestion(state.trace, state.step) : null;
    const bg = $("#room-ask-grad"), bn = $("#room-ask-next");
    const gText = g ? t("room_ask_grad", { name: g.name }) : t("room_ask_none");
    if (bg.textContent !== gText) bg.textContent = gText;
    bg.disabled = !g;
    bn.disabled = !n;
    const p = can ? trainingQuestion() : null, bp = $("#room-ask-pass");
    if (bp) {
      bp.hidden = !p;
      const pText = p ? t("room_ask_pass", { name: p.name, k: p.pass }) : "";
      if (bp.textContent !== pText) bp.textContent = pText;
    }
  }

  render() {
    if (this.unsubscribed) return;
    const st = $("#room-status");
    st.dataset.status = this.socket.status;
    st.textContent = t("room_status_" + this.socket.status);
    const count = $("#room-count");
    count.hidden = false;
    count.textContent = t(this.students === 1 ? "room_students_one" : "room_students", { n: this.students });
    $("#room-students").textContent = count.textContent;
    const card = $("#room-card");
    $("#room-toggle").setAttribute("aria-expanded", card.hidden ? "false" : "true");
    document.body.classList.toggle("room-card-open", !card.hidden); // room.css keeps the layout clear of it
    placeCard();
    $("#room-join").hidden = !this.joinShown;
    const hide = $("#room-hide");
    hide.textContent = t(this.joinShown ? "room_hide_code" : "room_show_code");
    hide.setAttribute("aria-expanded", this.joinShown ? "true" : "false");
    const msg = $("#room-msg");
    msg.hidden = !this.message;
    msg.textContent = this.message ? t("room_error", { message: this.message }) : "";
    const copy = $("#room-copy-key"), copied = $("#room-copy-note");
    if (copy) copy.textContent = t("room_copy_key");
    if (copied) {
      copied.hidden = !this.copied;
      copied.textContent = this.copied ? t(this.copied) : "";
      if (this.copied === "room_copy_key_failed") copied.textContent += " " + instructorLink(this.room, this.key);
    }
    this.renderAsk();
    this.renderTally();
  }

  renderTally() {
    const box = $("#room-tally");
    const q = this.question;
    box.hidden = !q;
    if (!q) { box.replaceChildren(); return; }
    const h = document.createElement("h3");
    h.id = "room-tally-q";
    h.textContent = questionText(q);
    const total = document.createElement("p");
    total.id = "room-total";
    total.className = "room-total";
    total.textContent = t(q.total === 1 ? "room_answers_one" : "room_answers", { n: q.total });
    // Before the reveal the bars stay off the projector unless the instructor shows them.
    const live = q.revealed || this.showLive;
    const kids = [h, total];
    if (live) kids.push(bars(q, q.counts, q.total, q.revealed, null));
    else kids.push(Object.assign(document.createElement("p"), { className: "note room-live-hidden", id: "room-live-hidden", textContent: t("room_live_hidden") }));
    if (q.revealed) {
      const a = document.createElement("p");
      a.className = "room-answer";
      a.textContent = t("room_correct", { answer: shown(q, q.answer) });
      kids.push(a);
    }
    const actions = document.createElement("div");
    actions.className = "room-actions";
    const button = (id, word, fn) => {
      const b = document.createElement("button");
      Object.assign(b, { type: "button", id, textContent: t(word), onclick: fn });
      return b;
    };
    if (!q.revealed) {
      const show = button("room-show-live", "room_show_live", () => { this.showLive = !this.showLive; this.render(); });
      show.setAttribute("aria-pressed", this.showLive ? "true" : "false");
      actions.append(show, button("room-reveal", "room_reveal", () => this.reveal()));
    }
    actions.append(button("room-q-done", "room_close_q", () => { this.question = null; this.askMsg = null; showAsking(false); this.render(); }));
    kids.push(actions);
    const focused = box.contains(document.activeElement) ? document.activeElement.id : null;
    box.replaceChildren(...kids);
    if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
  }
}

// The instructor of `room` (holding `key`), joined; onEnd() once the class is over.
export function startInstructor(room, key, onEnd) {
  const i = new Instructor(room, key, onEnd);
  i.start();
  return i;
}
