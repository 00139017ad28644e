/* A student's page in a room (/r/CODE): it follows every `state` the instructor sends (the
 * program, values, options, step, open lesson), until the student steps or edits on their own;
 * then "Following paused — Follow again" jumps back to the instructor's latest view. The
 * page's language stays the student's own (the address's, the browser's, or the one they
 * pick): the instructor's does not switch it. Questions come as a card (ask.js); no name or
 * other personal data is asked for.
 *
 * The tab keeps (sessionStorage) its member id, sent on every hello, so that a reconnect, a
 * failover or a rejoin is the same member with the same answer; and whether it follows, with
 * its own view when it does not. An answer is "Sent" only once the server says it stored
 * that one (`answered` with its ref); until then the card says it is being sent, and the page
 * sends it again: after an error that says to retry, after a reconnect, when the question
 * comes again (a rejoin, a room put back), and every RESEND_MS without word.
 *
 * While a question is open, the page shows no step after the instructor's: the grad table's
 * later rows are hidden (body.room-asking, room.css) and a step ahead is taken back. */
import { $ } from "../dom.js";
import { t } from "../i18n.js";
import { scheduleRun } from "../run.js";
import { setLesson, setState, state, subscribe } from "../store.js";
import { inForward } from "../trace.js";
import { questionText, renderCard, shown, verdict } from "./ask.js";
import { roomSocket } from "./socket.js";
import { ownKey, programKey, viewOf } from "./view.js";
import { say, showAsking, showChip } from "./ui.js";

const clamp = (x, lo, hi) => Math.max(lo, Math.min(hi, x));
export const RESEND_MS = 4000;
const RETRYABLE = new Set(["unavailable", "rate", "busy"]); // an answer refused for now
const SAVED = (code) => "gradtrace.member." + code; // sessionStorage: this tab in room CODE

function loadSaved(code) {
  try { return JSON.parse(sessionStorage.getItem(SAVED(code)) || "null") || {}; } catch (e) { return {}; }
}

class Student {
  constructor(code) {
    this.code = code;
    this.saved = loadSaved(code); // {id, answers: {qid: value}, following, view}
    this.target = null; // the instructor's latest view
    this.following = this.saved.following !== false;
    this.own = this.following ? null : this.saved.view || null; // a paused view to show again
    this.waiting = null; // a run asked for by apply(): {trace, error} it must replace
    this.syncing = false;
    this.baseline = null; // ownKey of the page as apply() left it
    this.question = null;
    this.error = null;
    this.resendTimer = null;
    this.warned = false;
    this.socket = roomSocket(code, () => this.hello(), (m) => this.onMessage(m), () => this.onStatus());
  }

  hello() {
    const h = { type: "hello", role: "student" };
    if (this.saved.id) h.id = this.saved.id;
    return h;
  }

  save() {
    try { sessionStorage.setItem(SAVED(this.code), JSON.stringify(this.saved)); } catch (e) { /* private mode */ }
  }

  start() {
    showChip(this.code);
    document.body.classList.add("room-student");
    subscribe((s) => this.onStore(s));
    $("#room-follow-again").addEventListener("click", () => this.followAgain());
    this.socket.open();
    this.render();
  }

  onStatus() {
    const q = this.question;
    if (this.socket.status === "live" && q && q.mine != null && !q.revealed && q.status !== "sent") this.sendAnswer(true);
    this.render();
  }

  onMessage(msg) {
    if (msg.type === "welcome") {
      if (this.saved.id !== msg.id) { this.saved.id = msg.id; this.save(); }
      this.error = null;
    } else if (msg.type === "state" && msg.state) {
      this.target = msg.state;
      if (this.following) this.apply(this.target);
      else if (this.own) { const v = this.own; this.own = null; this.apply(v); } // a rejoin, paused
      this.render();
    } else if (msg.type === "ask") this.ask(msg);
    else if (msg.type === "answered") this.answered(msg);
    else if (msg.type === "reveal") this.reveal(msg);
    else if (msg.type === "ended" || msg.type === "closed") {
      this.question = null;
      clearTimeout(this.resendTimer);
      showAsking(false);
      renderCard(null);
      say(t("room_status_ended"));
      this.render();
    } else if (msg.type === "error") this.refused(msg);
  }

  // A view onto the page: the program first (a run), then the position.
  apply(v) {
    if (!v || typeof v.source !== "string") return; // a room made with no view: the page as it is
    this.syncing = true;
    this.applying = v;
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
    const v = this.applying || this.target;
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
    if (this.following && lesson !== (state.lesson.name || null)) {
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
    if (this.syncing) return;
    if (this.aheadTakenBack(s)) return;
    if (!this.following) {
      this.saved.view = viewOf(s); // a rejoin shows it again
      this.save();
      return;
    }
    if (this.baseline === null) return;
    if (ownKey(s) !== this.baseline) { // the student stepped or edited: their own way now
      this.following = false;
      Object.assign(this.saved, { following: false, view: viewOf(s) });
      this.save();
      say(t("room_paused"));
      this.render();
    }
  }

  // While a question is open, no step after the instructor's on the same program: a step
  // ahead (a key, the slider, the table) is taken back.
  aheadTakenBack(s) {
    const q = this.question, v = this.target;
    if (!q || q.revealed || !v || v.step == null || inForward() || !s.trace) return false;
    if (programKey(viewOf(s)) !== programKey(v) || !(s.step > Number(v.step))) return false;
    const cap = Number(v.step);
    queueMicrotask(() => setState({ step: cap, playing: false }));
    if (!this.warned) { this.warned = true; say(t("room_no_ahead")); }
    return true;
  }

  followAgain() {
    this.following = true;
    Object.assign(this.saved, { following: true, view: null });
    this.save();
    say(t("room_following"));
    this.apply(this.target);
    this.render();
  }

  ask(msg) {
    const old = this.question;
    if (old && old.id === msg.id) { // sent again: a reconnect, a rejoin, a room put back
      if (old.mine != null && !old.revealed) this.sendAnswer(true);
      return;
    }
    const kept = (this.saved.answers || {})[msg.id];
    this.question = {
      ...(msg.about || {}), id: msg.id, kind: msg.kind === "choice" ? "choice" : "value", question: msg.question,
      choices: msg.choices || [], mine: kept == null ? null : kept, status: null, ref: 0, revealed: null, named: [],
    };
    this.saved.answers = kept == null ? {} : { [msg.id]: kept }; // the open question's only
    this.save();
    this.warned = false;
    showAsking(true);
    if (kept != null) this.sendAnswer(true);
    this.drawCard();
    say(t("room_q_announce", { question: questionText(this.question) }));
  }

  answer(value) {
    const q = this.question;
    if (!q || q.revealed) return;
    q.mine = value;
    this.saved.answers = { [q.id]: value };
    this.save();
    this.sendAnswer(false);
    say(t("room_sending", { value: shown(q, value) }));
  }

  // Send the answer (again); it is "Sent" only once `answered` comes back with this ref.
  sendAnswer(again) {
    const q = this.question;
    if (!q || q.revealed || q.mine == null) return;
    q.ref += 1;
    q.status = again ? "retrying" : "sending";
    this.socket.send({ type: "answer", id: q.id, value: q.mine, ref: q.ref }); // false while down: sent on reconnect
    clearTimeout(this.resendTimer);
    this.resendTimer = setTimeout(() => this.sendAnswer(true), RESEND_MS);
    this.drawCard();
  }

  answered(msg) {
    const q = this.question;
    if (!q || msg.id !== q.id) return;
    if (msg.ref === undefined) { // on a rejoin: what the server holds for this member
      if (q.mine != null) return; // ours is on its way again
      q.mine = q.kind === "value" ? Number(msg.key) : msg.key;
    } else if (msg.ref !== q.ref) return; // an older send's: a newer one is on its way
    q.status = "sent";
    clearTimeout(this.resendTimer);
    this.drawCard();
    say(t("room_sent", { value: shown(q, q.mine) }));
  }

  refused(msg) {
    const q = this.question;
    if (q && msg.ref !== undefined && msg.ref === q.ref) {
      clearTimeout(this.resendTimer);
      if (RETRYABLE.has(msg.code)) {
        q.status = "retrying";
        this.resendTimer = setTimeout(() => this.sendAnswer(true), 1000 * (Number(msg.retry_after) || 1));
      } else q.status = null; // refused for good (revealed meanwhile, say): its words show
      this.drawCard();
    }
    this.error = msg.message || "";
    this.render();
  }

  reveal(msg) {
    const q = this.question;
    if (!q || q.id !== msg.id) return;
    clearTimeout(this.resendTimer);
    q.answer = msg.answer;
    q.named = (msg.hidden && msg.hidden.named) || [];
    q.revealed = { counts: msg.counts || {}, total: msg.total || 0 };
    showAsking(false);
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
    if (status === "waiting") st.textContent = t("room_status_waiting", { n: this.socket.retryIn });
    else st.textContent = this.error && status !== "live" ? t("room_error", { message: this.error }) : t("room_status_" + status);
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
