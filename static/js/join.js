/* "Join a class" on the page's top bar: a student types the code the instructor reads out and
 * goes to that class's page (/r/CODE, static/js/room/student.js). The code is checked here only
 * for its form (6 to 8 letters and digits, as app/rooms/codes.py makes them); the room page says
 * whether such a class is running. */
import { $, on } from "./dom.js";
import { t } from "./i18n.js";
import { state } from "./store.js";

const CODE = /^[A-Z0-9]{6,8}$/;

export function wireJoin() {
  const form = $("#join");
  if (!form) return;
  const input = $("#join-code"), msg = $("#join-msg");
  const say = (text) => {
    msg.hidden = !text;
    msg.textContent = text;
    input.setAttribute("aria-invalid", text ? "true" : "false");
  };
  on(input, "input", () => say(""));
  on(form, "submit", (ev) => {
    ev.preventDefault();
    const code = input.value.trim().toUpperCase().replace(/[\s-]/g, "");
    if (!CODE.test(code)) { say(t("join_bad")); input.focus(); return; }
    location.href = "/r/" + encodeURIComponent(code) + (state.lang === "zh" ? "?lang=zh" : "");
  });
}
