/* One room's socket (WS /api/rooms/CODE/ws): hello first, JSON messages, reconnection with
 * backoff, and the `seq` of the last state applied (a state not newer than it is dropped: a
 * reconnect sends the latest again).
 *
 * The status it reports: "connecting" (first try), "live" (open and greeted), "reconnecting"
 * (lost; trying again after 0.5 s, 1 s, 2 s ... up to BACKOFF_MAX_MS), "ended" (the room ended
 * or refused us for good: no retry).
 */

export const BACKOFF_MS = 500;
export const BACKOFF_MAX_MS = 8000;
// Close codes a retry cannot mend (app/rooms/protocol.py): a bad hello (4400), a wrong key
// (4403), no such room (4404), a full room or a flood (4429); 1008 is a policy refusal. 4408 (too
// slow to read) is worth another try.
const FINAL = (code) => code === 1008 || (code >= 4000 && code < 5000 && code !== 4408);

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
    this.setStatus(this.tries ? "reconnecting" : "connecting");
    let ws;
    try { ws = new WebSocket(this.url()); } catch (e) { this.retry(); return; }
    this.ws = ws;
    ws.onopen = () => {
      ws.send(JSON.stringify(this.hello()));
      this.tries = 0;
      this.setStatus("live");
    };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      if (!msg || typeof msg !== "object") return;
      if (msg.type === "state" && typeof msg.seq === "number") {
        if (msg.seq <= this.seq) return; // seen already (a reconnect sends the latest again)
        this.seq = msg.seq;
      }
      if (msg.type === "ended") this.stop("ended");
      this.onMessage(msg);
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (FINAL(ev.code)) { this.stop("ended"); this.onMessage({ type: "closed", code: ev.code, reason: ev.reason }); return; }
      this.retry();
    };
  }

  retry() {
    if (this.stopped) return;
    this.setStatus("reconnecting");
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_MS * 2 ** this.tries) * (0.75 + Math.random() * 0.5);
    this.tries += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
  }

  // Sends when open; a message sent while the socket is down is dropped (the instructor sends
  // its whole view again on every reconnect).
  send(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
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
