/* A student's page in a room (/r/CODE): it follows every `state` the instructor sends (the
 * program, values, options, step, open lesson, language), until the student steps or edits on
 * their own; then "Following paused — Follow again" jumps back to the instructor's latest view.
 * Questions come as a card (ask.js); no name or other personal data is asked for. */
import { $ } from "../dom.js";
import { t } from "../i18n.js";
import { scheduleRun } from "../run.js";
import { setLesson, setState, state, subscribe } from "../store.js";
import { questionText, renderCard, shown, verdict } from "./ask.js";
import { roomSocket } from "./socket.js";
import { ownKey, programKey, viewOf } from "./view.js";
import { say, showChip } from "./ui.js";

const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));

class Student {
  constructor(code) {
    this.code = code;
    this.target = null; // the instructor's latest view
    this.following = true;
    this.waiting = null; // a run asked for by apply(): {trace, error} it must replace
    this.syncing = false;
    this.baseline = null; // ownKey of the page as apply() left it
    this.lang = null; // the instructor's language last applied
    this.question = null;
    this.error = null;
    this.socket = roomSocket(code, () => ({ type: "hello", role: "student" }), (m) => this.onMessage(m), () => this.render());
  }

  start() {
    showChip(this.code);
    document.body.classList.add("room-student");
    subscribe((s) => this.onStore(s));
    $("#room-follow-again").addEventListener("click", () => this.followAgain());
    this.socket.open();
    this.render();
  }

  onMessage(msg) {
    if (msg.type === "state" && msg.state) { this.target = msg.state; if (this.following) this.apply(); this.render(); }
    else if (msg.type === "ask") this.ask(msg);
    else if (msg.type === "reveal") this.reveal(msg);
    else if (msg.type === "ended" || msg.type === "closed") { this.question = null; renderCard(null); say(t("room_status_ended")); this.render(); }
    else if (msg.type === "error") { this.error = msg.message || ""; this.render(); }
  }

  // The instructor's view onto the page: the program first (a run), then the position.
  apply() {
    const v = this.target;
    if (!v || typeof v.source !== "string") return; // a room made with no view: the page as it is
    this.syncing = true;
    if (v.lang && v.lang !== this.lang) {
      this.lang = v.lang; // the instructor switched: follow; a student's own choice stays till then
      if (state.lang !== v.lang) setState({ lang: v.lang });
    }
    if (programKey(viewOf(state)) !== programKey(v)) {
      const ta = $("#source");
      if (ta && ta.value !== v.source) ta.value = v.source; // the editor keeps a focused textarea's text
      if (!this.waiting) this.waiting = { trace: state.trace, error: state.error };
      setState({ source: v.source, values: Object.assign({}, v.values || {}), accumulate: v.accumulate || "add", order: v.order || "dfs", collapse: v.collapse == null ? null : !!v.collapse });
      scheduleRun(0);
      return;
    }
    if (!this.waiting) this.finish();
  }

  finish() {
    const v = this.target;
    const tr = state.trace;
    const patch = { playing: false };
    if (tr) {
      const n = tr.steps.length - 1;
      patch.step = clamp(v.step == null ? n : Number(v.step), 0, n);
      patch.forwardMode = v.fwd != null;
      patch.fwd = v.fwd == null ? null : clamp(Number(v.fwd), 0, tr.topo.length - 1);
    }
    setState(patch);
    const lesson = v.lesson || null;
    if (lesson !== (state.lesson.name || null)) {
      // The panel opens a pending lesson once the page's trace is there (lessons/panel.js).
      if (lesson) setLesson({ pending: { name: lesson, source: state.source, trace: null, error: null } });
      else setLesson({ name: null, sub: 0, error: null });
    }
    this.baseline = ownKey(state);
    this.syncing = false;
    this.render();
  }

  onStore(s) {
    if (this.waiting) {
      const w = this.waiting;
      if (!s.running && (s.trace !== w.trace || s.error !== w.error)) {
        this.waiting = null;
        queueMicrotask(() => this.finish()); // after every subscriber has seen the new trace
      }
      return;
    }
    if (this.syncing || !this.following || this.baseline === null) return;
    if (ownKey(s) !== this.baseline) { // the student stepped or edited: their own way now
      this.following = false;
      say(t("room_paused"));
      this.render();
    }
  }

  followAgain() {
    this.following = true;
    say(t("room_following"));
    this.apply();
    this.render();
  }

  ask(msg) {
    if (this.question && this.question.id === msg.id) return; // sent again on a reconnect
    this.question = { id: msg.id, kind: msg.kind === "choice" ? "choice" : "value", question: msg.question, choices: msg.choices || [], mine: null, revealed: null, ...(msg.about || {}) };
    this.drawCard();
    say(t("room_q_announce", { question: questionText(this.question) }));
  }

  answer(value) {
    const q = this.question;
    if (!q || q.revealed) return;
    q.mine = value;
    this.socket.send({ type: "answer", id: q.id, value });
    this.drawCard();
    say(t("room_sent", { value: shown(q, value) }));
  }

  reveal(msg) {
    const q = this.question;
    if (!q || q.id !== msg.id) return;
    q.answer = msg.answer;
    q.revealed = { counts: msg.counts || {}, total: msg.total || 0 };
    this.drawCard();
    say(t("room_correct", { answer: shown(q, q.answer) }) + " " + verdict(q, q.mine).text);
  }

  drawCard() {
    renderCard(this.question, (v) => this.answer(v), () => { this.question = null; renderCard(null); });
  }

  // The chip: the connection, and whether this page follows.
  render() {
    const status = this.socket.status;
    const st = $("#room-status");
    st.dataset.status = status;
    st.textContent = this.error && status !== "live" ? t("room_error", { message: this.error }) : t("room_status_" + status);
    const box = $("#room-follow");
    box.hidden = status === "ended";
    $("#room-follow-text").textContent = this.following ? t("room_following") : t("room_paused");
    box.classList.toggle("paused", !this.following);
    $("#room-follow-again").hidden = this.following;
    document.body.classList.toggle("room-follow", this.following && status !== "ended");
    if (this.question && this.lastLang !== state.lang) this.drawCard();
    this.lastLang = state.lang;
  }
}

// The student of room `code`, joined (its socket open).
export function startStudent(code) {
  const s = new Student(code);
  s.start();
  return s;
}
