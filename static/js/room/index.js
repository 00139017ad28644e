/* The class room on the page: which side this page is, and its start.
 *   - /r/CODE (the page's root carries data-room="CODE"): a student of that room.
 *   - an address with room=CODE and #key=KEY (an instructor link, for a second device), or a
 *     reload of a tab that drives a room (its sessionStorage has the key): the instructor,
 *     joined again. The key is read into this tab and taken out of the address at once, so
 *     that it never shows in the address bar (a projector shows it to the whole room).
 *   - otherwise: the "Start a class" button makes a room, and this tab drives it.
 * Read-only handle for the tests: window.gradtraceRoom (role, status, seq, following). */
import { $, on } from "../dom.js";
import { t } from "../i18n.js";
import { SAVED, createRoom, roomAddress, saveRoom, savedRoom, startInstructor } from "./instructor.js";
import { startStudent } from "./student.js";
import { say } from "./ui.js";

function reloaded() {
  const nav = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  return !!nav && nav.type === "reload";
}

// The class this tab drives, if any: from the address (a link with the key), or from this
// tab's sessionStorage when the page was reloaded or its address names the same room.
function instructorRoom() {
  const room = new URLSearchParams(location.search).get("room");
  const key = /^#key=([A-Za-z0-9_%=-]+)$/.exec(location.hash);
  if (location.hash.startsWith("#key=")) history.replaceState(null, "", roomAddress(room)); // out of sight
  if (room && key) {
    const mine = { room, key: decodeURIComponent(key[1]) };
    saveRoom(mine.room, mine.key);
    return mine;
  }
  const saved = savedRoom();
  if (saved && saved.room && saved.key && (room === saved.room || reloaded())) return saved;
  if (saved && !room) { try { sessionStorage.removeItem(SAVED); } catch (e) { /* private mode */ } }
  return null;
}

export function startRoom() {
  if (!$("#room-chip")) return null; // a page without the class room (the embed)
  const side = { role: null, current: null };
  const code = document.documentElement.dataset.room;
  const drive = (room, key) => {
    side.role = "instructor";
    side.current = startInstructor(room, key, () => { side.role = null; side.current = null; });
  };
  if (code) {
    side.role = "student";
    side.current = startStudent(code);
  } else {
    const mine = instructorRoom();
    if (mine) drive(mine.room, mine.key);
  }
  const instructor = (fn) => () => { if (side.role === "instructor") fn(side.current); };
  on("#room-toggle", "click", instructor((i) => i.toggleCard()));
  on("#room-hide", "click", instructor((i) => i.toggleJoin()));
  on("#room-end", "click", instructor((i) => i.end()));
  on("#room-ask-grad", "click", instructor((i) => i.ask("grad")));
  on("#room-ask-next", "click", instructor((i) => i.ask("next")));
  on("#room-ask-pass", "click", instructor((i) => i.ask("pass")));
  on("#room-start", "click", async () => {
    if (side.role) return;
    const btn = $("#room-start");
    btn.disabled = true;
    try {
      const made = await createRoom();
      drive(made.room, made.instructor_key);
    } catch (e) {
      say(t("room_start_failed", { message: e.message }));
      const msg = $("#room-start-msg");
      if (msg) { msg.hidden = false; msg.textContent = t("room_start_failed", { message: e.message }); }
    } finally {
      btn.disabled = false;
    }
  });
  window.gradtraceRoom = Object.freeze({
    get role() { return side.role; },
    get status() { return side.current ? side.current.socket.status : null; },
    get seq() { return side.current ? side.current.socket.seq : 0; },
    get following() { return side.role === "student" ? side.current.following : null; },
    get code() { return side.current ? (side.current.room || side.current.code) : null; },
  });
  return side;
}
