/* The page's start-up data: the JSON the server (or the standalone export) put in
 * <script type="application/json" id="state">. No inline script: the CSP is script-src 'self'. */

const el = document.querySelector("#state");
export const boot = el ? JSON.parse(el.textContent) : {};
export const EMBED = !!boot.embed;
// A standalone file (gradtrace render --html, a notebook's output): no server to ask, so no
// re-runs, and the only address it keeps is `#step=k`.
export const STANDALONE = !!boot.standalone;
export const FIT_CONTENT = boot.fit === "content"; // the box is as tall as the drawing (an iframe)
// A stepper in a frame of fixed height (a docs page's iframe): the box takes what the frame
// leaves it, so the stepper fits the frame.
export const FIT_FRAME = boot.fit === "frame";

// A gallery example's program in the page's language: its comments translated (source_zh).
export function exampleSource(ex, lang) {
  return (lang === "zh" && ex.source_zh) || ex.source;
}
