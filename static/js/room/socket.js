/* One room's socket (WS /api/rooms/CODE/ws): hello first, JSON messages, reconnection with
 * backoff, and the `seq` of the last state applied (a state not newer than it is dropped: a
 * reconnect sends the latest again).
 *
 * The status it reports: "connecting" (first try), "live" (open and greeted), "reconnecting"
 * (lost; trying again after 0.5 s, 1 s, 2 s ... up to BACKOFF_MAX_MS), "waiting" (refused for
 * now: the room is full, or the server busy; trying again when its error said, `retryIn`
 * seconds), "ended" (the room ended or refused us for good: no retry).
 */

export const BACKOFF_MS = 500;
export const BACKOFF_MAX_MS = 8000;
// Close codes a retry cannot mend (app/rooms/protocol.py): a bad hello (4400), a wrong key
// (4403), no such room (4404), a flood (4429); 1008 is another site's page. 1013 (try again
// later: the room is full, the server busy) waits as the error before it said; 1012 (the
// instructor's room is to be put back) reconnects at once; 4408 (too slow) tries again.
const FINAL = (code) => code === 1008 || (code >= 4000 && code < 5000 && code !== 4408);
const AT_ONCE_MS = 150;

class RoomSocket {
  // hello(): the first message, asked for on every (re)connect; onMessage(msg), onStatus(s).
  constructor(code, hello, onMessage, onStatus) {
    Object.assign(this, { code, hello, onMessage, onStatus });
    this.ws = null;
    this.seq = -1; // the last state's seq (the room's first view is seq 0)
    this.tries = 0;
    this.status = "connecting";
    this.stopped = false;
    this.timer = null;
    this.retryAfter = null; // seconds the last refusal said to wait
    this.retryIn = 0;
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    return scheme + location.host + "/api/rooms/" + encodeURIComponent(this.code) + "/ws";
  }

  setStatus(s) {
    if (this.status === s) return;
    this.status = s;
    this.onStatus(s);
  }

  open() {
    if (this.stopped) return;
    if (this.status !== "waiting") this.setStatus(this.tries ? "reconnecting" : "connecting");
    let ws;
    try { ws = new WebSocket(this.url()); } catch (e) { this.retry(); return; }
    this.ws = ws;
    this.retryAfter = null;
    ws.onopen = () => { ws.send(JSON.stringify(this.hello())); };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      if (!msg || typeof msg !== "object") return;
      if (msg.type === "welcome") { this.tries = 0; this.setStatus("live"); }
      if (msg.type === "state" && typeof msg.seq === "number") {
        if (msg.seq <= this.seq) return; // seen already (a reconnect sends the latest again)
        this.seq = msg.seq;
      }
      if (msg.type === "error" && typeof msg.retry_after === "number") this.retryAfter = msg.retry_after;
      if (msg.type === "ended") this.stop("ended");
      this.onMessage(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (FINAL(ev.code)) { this.stop("ended"); this.onMessage({ type: "closed", code: ev.code, reason: ev.reason }); return; }
      if (ev.code === 1012) { this.retry(AT_ONCE_MS); return; }
      if (ev.code === 1013 && this.retryAfter) { this.wait(this.retryAfter); return; }
      this.retry();
    };
  }

  retry(ms) {
    if (this.stopped) return;
    this.setStatus("reconnecting");
    const delay = ms !== undefined ? ms : Math.min(BACKOFF_MAX_MS, BACKOFF_MS * 2 ** this.tries) * (0.75 + Math.random() * 0.5);
    this.tries += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
  }

  // Refused for now (the room is full, the server busy): try again when told, with a little
  // spread so that a class refused together does not come back together.
  wait(seconds) {
    const ms = seconds * 1000 * (1 + Math.random() * 0.3);
    this.retryIn = Math.ceil(ms / 1000);
    const was = this.status;
    this.setStatus("waiting");
    if (was === "waiting") this.onStatus("waiting"); // a new wait: the words say how long
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), ms);
  }

  // Sends when open (true); a message sent while the socket is down is not sent (false): the
  // instructor sends its whole view again on every reconnect, a student its answer.
  send(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN || this.status !== "live") return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  stop(status) {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) { const ws = this.ws; this.ws = null; try { ws.close(); } catch (e) { /* closing */ } }
    this.setStatus(status || "ended");
  }
}

// A room's socket, not yet open (`.open()`).
export function roomSocket(code, hello, onMessage, onStatus) {
  return new RoomSocket(code, hello, onMessage, onStatus);
}
