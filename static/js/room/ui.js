/* What both sides of a room share on the page: the room's chip in the toolbar, saying a room
 * event through the page's one polite live region (#announce, explain.js), and the class that
 * hides what a question asks about. */
import { $ } from "../dom.js";

// The chip with the room's code; the "Start a class" button goes while a room is on.
export function showChip(code) {
  const chip = $("#room-chip");
  if (chip) chip.hidden = !code;
  const small = $("#room-code-small");
  if (small) small.textContent = code || "";
  const startBtn = $("#room-start");
  if (startBtn) startBtn.hidden = !!code;
}

// A room event for a screen reader: a question, a reveal, following paused. The next step
// says itself over it, as every step does.
export function say(text) {
  const region = $("#announce");
  if (region && text) region.textContent = text;
}

// A question is open and not yet revealed: the grad table shows no row after the step on
// show, on the projector and on every phone (room.css hides body.room-asking's later rows).
export function showAsking(on) {
  document.body.classList.toggle("room-asking", !!on);
}
