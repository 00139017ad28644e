/* Sharing: copy the permalink, an <iframe> embed code, an <img> of the step or its Markdown
 * image line, the Sphinx directive, MyST fence or MkDocs fence that draws it at build time,
 * download the step as SVG or PNG. */
import { $, on } from "./dom.js";
import { t } from "./i18n.js";
import { mkdocsFence, mystFence, rstDirective } from "./snippets.js";
import { state } from "./store.js";
import { ensureCompressed, queryPairs } from "./url.js";

function status(msg) {
  const s = $("#share-status");
  if (s) s.textContent = msg;
}

async function copyText(text) {
  const box = $("#share-text");
  if (box) box.value = text;
  try {
    await navigator.clipboard.writeText(text);
    status(t("copied"));
  } catch (e) {
    if (box) { box.focus(); box.select(); }
    status(t("copy_failed"));
  }
}

async function permalinkUrl(path) {
  await ensureCompressed();
  return location.origin + (path || "/") + "?" + queryPairs(path === "/embed" ? { noPresent: true } : {});
}

async function download(kind) {
  await ensureCompressed();
  const url = "/api/svg?" + queryPairs({ backwardOnly: true, noPresent: true });
  const resp = await fetch(url);
  const svgText = await resp.text();
  const name = "gradtrace-step-" + state.step;
  if (kind === "svg") {
    saveBlob(new Blob([svgText], { type: "image/svg+xml" }), name + ".svg");
    return;
  }
  const blobUrl = URL.createObjectURL(new Blob([svgText], { type: "image/svg+xml" }));
  const img = new Image();
  img.onload = () => {
    const scale = 2;
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(1, Math.round(img.naturalWidth * scale));
    canvas.height = Math.max(1, Math.round(img.naturalHeight * scale));
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    URL.revokeObjectURL(blobUrl);
    canvas.toBlob((b) => { if (b) saveBlob(b, name + ".png"); }, "image/png");
  };
  img.onerror = () => { URL.revokeObjectURL(blobUrl); status("PNG failed"); };
  img.src = blobUrl;
}

// The step on show as an image address (/api/svg) and the words it is described by.
async function imageOfStep() {
  await ensureCompressed();
  const src = location.origin + "/api/svg?" + queryPairs({ backwardOnly: true, noPresent: true });
  const first = (state.source || "").split("\n")[0].slice(0, 60);
  return { src, alt: "gradtrace: " + first + " (step " + state.step + ")" };
}

const attr = (s) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

function saveBlob(blob, filename) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  document.body.append(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

// The build-time snippets' buttons, after the Markdown image's (made here when the page's
// markup has none; data-i18n words them again when the language changes).
const SNIPPETS = [
  ["copy-rst", "copy_rst", rstDirective],
  ["copy-myst", "copy_myst", mystFence],
  ["copy-mkdocs", "copy_mkdocs", mkdocsFence],
];

function wireSnippets() {
  let after = $("#copy-markdown");
  if (!after) return;
  SNIPPETS.forEach(([id, key, make]) => {
    let button = $("#" + id);
    if (!button) {
      button = document.createElement("button");
      button.type = "button";
      button.id = id;
      button.dataset.i18n = key;
      button.textContent = t(key);
      after.after(button);
    }
    after = button;
    on(button, "click", () => copyText(make(state)));
  });
}

export function wireShare() {
  on("#copy-link", "click", async () => copyText(await permalinkUrl("/")));
  on("#copy-embed", "click", async () => {
    const w = Math.max(200, Math.min(3000, Number($("#embed-w").value) || 800));
    const h = Math.max(150, Math.min(3000, Number($("#embed-h").value) || 520));
    const src = await permalinkUrl("/embed");
    const code = '<iframe src="' + src.replace(/&/g, "&amp;").replace(/"/g, "&quot;") + '" width="' + w + '" height="' + h +
      '" title="gradtrace" loading="lazy" style="border:1px solid #d0d7de;border-radius:6px"></iframe>';
    copyText(code);
  });
  on("#copy-img", "click", async () => {
    const { src, alt } = await imageOfStep();
    copyText('<img src="' + attr(src) + '" alt="' + attr(alt) + '">');
  });
  on("#copy-markdown", "click", async () => {
    const { src, alt } = await imageOfStep();
    copyText("![" + alt.replace(/[\\\[\]]/g, "\\$&") + "](" + src.replace(/[()]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase()) + ")");
  });
  on("#download-svg", "click", () => download("svg"));
  on("#download-png", "click", () => download("png"));
  wireSnippets();
}
