/* A tensor's heat map, restyled at each step: the same blocks and colours as
 * engine/drawing/tensors.py heat_grid() and heat_colour(), which draw the first picture. */
import { flat } from "./format.js";

const HEAT_ROWS = 8, HEAT_COLS = 16;

// At most HEAT_ROWS × HEAT_COLS block means, row-major (rows = the leading dims).
export function heatGrid(v, shape) {
  const f = flat(v);
  let rows, cols;
  if (shape.length <= 1) { rows = 1; cols = f.length; }
  else { cols = shape[shape.length - 1]; rows = f.length / cols; }
  const r = Math.min(rows, HEAT_ROWS), c = Math.min(cols, HEAT_COLS);
  const out = [];
  for (let i = 0; i < r; i++) {
    const r0 = Math.floor((i * rows) / r), r1 = Math.floor(((i + 1) * rows) / r);
    for (let j = 0; j < c; j++) {
      const c0 = Math.floor((j * cols) / c), c1 = Math.floor(((j + 1) * cols) / c);
      let s = 0, n = 0;
      for (let a = r0; a < r1; a++) for (let b = c0; b < c1; b++) { s += f[a * cols + b]; n++; }
      out.push(n ? s / n : 0);
    }
  }
  return out;
}

// Diverging, white-centred: blue for negative, red for positive, full at ±scale.
export function heatColour(x, scale) {
  let tt = scale <= 0 ? 0 : Math.max(-1, Math.min(1, x / scale));
  const target = tt > 0 ? [214, 96, 77] : [67, 147, 195];
  tt = Math.abs(tt);
  return "#" + target.map((c) => Math.floor(255 + (c - 255) * tt + 0.5).toString(16).padStart(2, "0")).join("");
}
