/* Numbers and labels as the page shows them. `fmt` is the one display precision of the page and
 * the lessons, the same as engine/drawing/numbers.py fmt(): both pass tests/cases/number_format.json. */

export const LABEL_CHARS = 24; // engine/drawing/text.py shortens labels the same way

// 4 significant digits, trailing zeros dropped, an exponent outside 1e-4 <= |x| < 1e4.
export function fmt(x) {
  if (x === null || x === undefined) return "—";
  if (typeof x !== "number") return shapeBadge(shapeOf(x));
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return "0";
  const sign = x < 0 ? "-" : "";
  const m = Math.abs(x).toExponential(3).match(/^(\d)\.(\d{3})e([+-]\d+)$/);
  const digits = m[1] + m[2];
  const e = parseInt(m[3], 10);
  if (e >= -4 && e < 4) {
    let whole, frac;
    if (e >= 0) { whole = digits.slice(0, e + 1); frac = digits.slice(e + 1); }
    else { whole = "0"; frac = "0".repeat(-e - 1) + digits; }
    frac = frac.replace(/0+$/, "");
    return sign + whole + (frac ? "." + frac : "");
  }
  const frac = digits.slice(1).replace(/0+$/, "");
  return sign + digits[0] + (frac ? "." + frac : "") + "e" + e;
}

// Every digit, for a tooltip or a copy.
export function exact(x) {
  const s = JSON.stringify(x);
  return s.length > 2000 ? s.slice(0, 2000) + "…" : s;
}

export function shapeOf(v) {
  const shape = [];
  while (Array.isArray(v)) { shape.push(v.length); v = v[0]; }
  return shape;
}
export function shapeBadge(shape) { return shape && shape.length ? "[" + shape.join("×") + "]" : ""; }
export function flat(v) { return Array.isArray(v) ? v.flat(Infinity) : [v]; }

// A table cell: a number, a short tensor in full, a longer one by its shape and first elements.
export function fmtCell(v) {
  if (v === null || v === undefined) return "—";
  if (typeof v === "number") return fmt(v);
  const f = flat(v);
  if (f.length <= 4) return "[" + f.map(fmt).join(", ") + "]";
  return shapeBadge(shapeOf(v)) + " " + f.slice(0, 3).map(fmt).join(", ") + ", …";
}

// The lesson panel's tensors: its tables name the shape in their headers already.
export function fmtBrief(x) {
  if (x === null || x === undefined) return "—";
  if (typeof x === "number") return fmt(x);
  const f = flat(x);
  if (f.length <= 4) return "[" + f.map(fmtBrief).join(", ") + "]";
  return "[" + f.slice(0, 3).map(fmtBrief).join(", ") + ", …]";
}

// Code points, not UTF-16 units: a CJK or emoji label counts as one character each.
export function cps(s) { return Array.from(s); }
// A label's subscript (`sin(h)₂`, engine/tracing/labels.py) is what tells it from its
// neighbours: a cut keeps it, shortening the text before it instead.
export function shorten(s, n) {
  const a = cps(String(s).replace(/[\u0000-\u001f\u007f]/g, " "));
  n = n || LABEL_CHARS;
  if (a.length <= n) return a.join("");
  let k = a.length;
  while (k > 0 && /[\u2080-\u2089]/.test(a[k - 1])) k--;
  const sub = k > 0 && a.length - k < n - 1 ? a.slice(k) : [];
  return a.slice(0, n - 1 - sub.length).join("") + "…" + sub.join("");
}

export function zerosLike(shape) {
  if (!shape || !shape.length) return 0;
  const [n, ...rest] = shape;
  return Array.from({ length: n }, () => zerosLike(rest));
}
