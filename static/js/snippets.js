/* What an author pastes into course notes to draw the program on screen at build time: the
 * Sphinx directive (reStructuredText), the MyST fence (Markdown pages, Jupyter Book) and the
 * MkDocs fence. The options are gradtrace/figure.py's: the step always (a snippet draws what
 * the page shows), the others only where they differ from its defaults. */
import { formatValues } from "./url.js";

// [name, value] pairs for a state: {source, values, step, accumulate, order, lang}.
function options(s) {
  const out = [];
  const values = formatValues(s.values || {});
  if (values) out.push(["values", values]);
  out.push(["step", String(s.step)]);
  if (s.accumulate && s.accumulate !== "add") out.push(["accumulate", s.accumulate]);
  if (s.order && s.order !== "dfs") out.push(["order", s.order]);
  if (s.lang === "zh") out.push(["lang", "zh"]);
  return out;
}

// The program without blank lines around it, one string per line.
const programLines = (source) =>
  (source || "").replace(/\r\n?/g, "\n").replace(/^\s*\n/, "").replace(/\s+$/, "").split("\n");

// A fence-line value as shell words read it (the MkDocs plugin splits the line with shlex).
const shellWord = (v) => (/^[\w.-]+$/.test(v) ? v : v.includes('"') ? "'" + v + "'" : '"' + v + '"');

export function rstDirective(s) {
  const lines = [".. gradtrace::"];
  options(s).forEach(([k, v]) => lines.push("   :" + k + ": " + v));
  lines.push("");
  programLines(s.source).forEach((line) => lines.push(line ? "   " + line : ""));
  return lines.join("\n") + "\n";
}

export function mystFence(s) {
  const lines = ["```{gradtrace}"];
  options(s).forEach(([k, v]) => lines.push(":" + k + ": " + v));
  lines.push("", ...programLines(s.source), "```");
  return lines.join("\n") + "\n";
}

export function mkdocsFence(s) {
  const words = options(s).map(([k, v]) => k + "=" + shellWord(v));
  return ["```gradtrace " + words.join(" "), ...programLines(s.source), "```"].join("\n") + "\n";
}
