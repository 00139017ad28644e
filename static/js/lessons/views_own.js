/* The lessons with a stepper of their own (the lesson panel's « ◀ ▶ » and slider): why
 * topological order, the gradient check, forward mode beside reverse mode, the misconceptions.
 * Each view: `count(data)` steps, `render(data, k, trace)` the element for lesson step k. */
import { setLesson, state } from "../store.js";
import { chips, el, fmt, labels, same, t } from "./kit.js";

export const VIEWS = {};
const ordKept = new WeakMap(); // the orders view's element -> the box a step redraws

// 2. Why topological order ---------------------------------------------------------------
// Three schedules of the same graph; the stepper walks the one chosen with the mode buttons.
VIEWS.orders = {
  modes: ["dfs", "kahn", "naive"],
  count(data) {
    const m = state.lesson.modes.orders || "naive";
    if (m === "dfs") return data.dfs.events.length;
    if (m === "kahn") return data.kahn.events.length;
    return Math.max(1, data.naive.calls.length);
  },
  render(data, k, trace) {
    const names = labels(trace);
    const mode = state.lesson.modes.orders || "naive";
    const wrap = el("div", { class: "ls-orders" });
    // The cost, always on show.
    const table = el("table", { class: "ls-table", id: "ls-calls" });
    table.append(el("caption", { text: t("ls_ord_calls") }));
    table.append(el("thead", {}, el("tr", {},
      el("th", { scope: "col", text: t("ls_ord_node") }),
      el("th", { scope: "col", text: t("ls_ord_dfs") }),
      el("th", { scope: "col", text: t("ls_ord_kahn") }),
      el("th", { scope: "col", text: t("ls_ord_naive") }))));
    const tb = el("tbody");
    data.dfs.backward.forEach((id) => {
      const n = data.naive.per_node[id];
      tb.append(el("tr", { "data-node": id },
        el("th", { scope: "row", text: names[id] }),
        el("td", { text: "1" }), el("td", { text: "1" }),
        el("td", { class: n !== 1 ? "many" : "", text: typeof n === "number" ? n.toLocaleString("en") : n })));
    });
    tb.append(el("tr", { class: "total" },
      el("th", { scope: "row", text: t("ls_ord_total") }),
      el("td", { id: "ls-total-dfs", text: String(data.counts.dfs) }),
      el("td", { id: "ls-total-kahn", text: String(data.counts.kahn) }),
      el("td", { id: "ls-total-naive", text: data.naive.total_text })));
    table.append(tb);
    const side = el("div");
    const c = data.counts;
    side.append(el("div", { class: "ls-callout " + (data.naive.total > c.dfs || data.naive.total === null ? "bad" : "good"), role: "note" },
      el("p", { text: t("ls_ord_summary", { n: c.dfs, naive: data.naive.total_text }) }),
      data.naive.stopped ? el("p", { id: "ls-limit-note", class: "ls-error", text: t("ls_ord_stopped", { limit: data.naive.limit.toLocaleString("en"), total: data.naive.total_text }) }) : null));
    const modes = el("div", { class: "ls-tabs", role: "group", "aria-label": t("ls_ord_mode") });
    this.modes.forEach((m) => modes.append(el("button", { type: "button", "data-mode": m, "aria-pressed": m === mode ? "true" : "false", text: t("ls_ord_" + m), onclick: () => setLesson({ modes: Object.assign({}, state.lesson.modes, { orders: m }), sub: 0 }) })));
    side.append(modes);
    const now = this[mode](data, k, names);
    side.append(now);
    wrap.append(el("div", { class: "ls-grid" }, side, el("div", { class: "ls-scroll" }, table)));
    ordKept.set(wrap, { now, names });
    return wrap;
  },
  // The cost table and the modes stay; a step draws the schedule's box again.
  step(wrap, data, k) {
    const o = ordKept.get(wrap);
    if (!o) return false;
    const now = this[state.lesson.modes.orders || "naive"](data, k, o.names);
    o.now.replaceWith(now);
    o.now = now;
    return true;
  },
  dfs(data, k, names) {
    const ev = data.dfs.events.slice(0, k + 1);
    const out = [], stack = [];
    ev.forEach((e) => { if (e.do === "enter") stack.push(e.node); else { stack.splice(stack.lastIndexOf(e.node), 1); out.push(e.node); } });
    const e = ev[ev.length - 1];
    const box = el("div");
    box.append(el("p", { class: "ls-now", text: t(e.do === "enter" ? "ls_ord_enter" : "ls_ord_emit", { node: names[e.node] }) }));
    box.append(el("h3", { text: t("ls_ord_stack") }), chips(stack, names, stack[stack.length - 1]));
    box.append(el("h3", { text: t("ls_ord_topo_so_far") }), chips(out, names, e.do === "emit" ? e.node : null));
    if (k === data.dfs.events.length - 1) box.append(el("p", { class: "note", text: t("ls_ord_dfs_done") }));
    return box;
  },
  kahn(data, k, names) {
    const counts = Object.assign({}, data.kahn.counts);
    const done = [];
    data.kahn.events.slice(0, k + 1).forEach((e) => { Object.assign(counts, e.lowered); done.push(e.node); });
    const e = data.kahn.events[k];
    const box = el("div");
    box.append(el("p", { class: "ls-now", text: t(e.runs ? "ls_ord_pop_runs" : "ls_ord_pop_leaf", { node: names[e.node] }) }));
    const tab = el("table", { class: "ls-table", id: "ls-kahn-counts" });
    tab.append(el("caption", { text: t("ls_ord_counts") }));
    const tr1 = el("tr", {}, el("th", { scope: "row", text: t("ls_ord_node") }));
    const tr2 = el("tr", {}, el("th", { scope: "row", text: t("ls_ord_waiting") }));
    Object.keys(data.kahn.counts).forEach((id) => {
      tr1.append(el("th", { scope: "col", "data-node": id, text: names[id] }));
      const td = el("td", { "data-node": id, text: done.includes(id) ? "✓" : String(counts[id]) });
      if (id in e.lowered) td.classList.add("changed");
      tr2.append(td);
    });
    tab.append(el("tbody", {}, tr1, tr2));
    box.append(el("div", { class: "ls-scroll" }, tab));
    box.append(el("h3", { text: t("ls_ord_ready") }), chips(e.ready, names, null));
    box.append(el("h3", { text: t("ls_ord_ran") }), chips(done, names, e.node));
    return box;
  },
  naive(data, k, names) {
    const box = el("div");
    const calls = data.naive.calls;
    if (!calls.length) { box.append(el("p", { class: "note", text: t("ls_ord_no_calls") })); return box; }
    const c = calls[k];
    const so = {};
    calls.slice(0, k + 1).forEach((x) => { so[x.node] = (so[x.node] || 0) + 1; });
    const key = c.from ? "ls_ord_call_from" : "ls_ord_call_root";
    box.append(el("p", { class: "ls-now", id: "ls-naive-now", text: t(key, { i: k + 1, node: names[c.node], from: names[c.from] || "", grad: c.grad === null ? "…" : fmt(c.grad), depth: c.depth }) }));
    const times = so[c.node];
    if (times > 1) box.append(el("p", { class: "ls-error", text: t("ls_ord_again", { node: names[c.node], n: times }) }));
    box.append(el("p", { class: "note", id: "ls-naive-count", text: t("ls_ord_calls_so_far", { k: k + 1, total: data.naive.total_text }) }));
    return box;
  },
};
// 4. Gradient check ----------------------------------------------------------------------
// One element per lesson step: its two nudged evaluations, the quotient, the verdict; the
// table fills in as the steps go.
VIEWS.gradcheck = {
  count(data) { return Math.max(1, data.rows.length); },
  render(data, k) {
    const wrap = el("div", { class: "ls-gradcheck" });
    const sum = data.summary;
    const bad = data.verdict !== "pass";
    const call = el("div", { class: "ls-callout " + (bad ? "bad" : "good"), role: "note", id: "ls-gc-summary" });
    call.append(el("p", {}, el("strong", { text: t("ls_gc_verdict_" + data.verdict) }), " ",
      t("ls_gc_counts", { pass: sum.pass, warn: sum.warn, fail: sum.fail, kink: sum.kink, n: data.checked })));
    if (data.truncated) call.append(el("p", { text: t("ls_gc_truncated", { n: data.checked, total: data.elements, limit: data.limit }) }));
    if (data.accumulate === "assign" && sum.fail) call.append(el("p", { text: t("ls_gc_assign") }));
    wrap.append(call);
    wrap.append(el("p", { class: "note", text: t("ls_gc_eps", { eps: data.eps, pass: data.thresholds.pass, warn: data.thresholds.warn }) }));
    if (!data.rows.length) return wrap;
    const r = data.rows[k];
    const name = r.label + (r.index.length ? "[" + r.index.join(", ") + "]" : "");
    wrap.append(el("p", { class: "ls-now", id: "ls-gc-now", text: t(r.texts ? "ls_gc_now_exact" : "ls_gc_now", {
      name, x: fmt(r.value), step: r.step.toPrecision(3),
      // enough digits to see the difference the check is about (engine/lessons/gradcheck.py)
      up: r.texts ? r.texts.up : fmt(r.up), down: r.texts ? r.texts.down : fmt(r.down), diff: r.texts ? r.texts.diff : "",
      numeric: r.numeric === null ? "—" : r.numeric.toPrecision(10), analytic: r.analytic.toPrecision(10),
      rel: r.rel_error === null ? "∞" : r.rel_error.toExponential(1) }) }));
    if (r.verdict === "kink") wrap.append(el("p", { class: "ls-verdict kink", text: t("ls_gc_kink") }));
    const table = el("table", { class: "ls-table", id: "ls-gc-table" });
    table.append(el("thead", {}, el("tr", {}, ...["ls_gc_element", "ls_gc_analytic", "ls_gc_numeric", "ls_gc_rel", "ls_gc_verdict"].map((key) => el("th", { scope: "col", text: t(key) })))));
    const tb = el("tbody");
    data.rows.slice(0, k + 1).forEach((row, i) => {
      const nm = row.label + (row.index.length ? "[" + row.index.join(", ") + "]" : "");
      const tr = el("tr", { "data-node": row.leaf },
        el("th", { scope: "row", text: nm }),
        el("td", { text: row.analytic.toPrecision(8) }),
        el("td", { text: row.numeric === null ? "—" : row.numeric.toPrecision(8) }),
        el("td", { text: row.rel_error === null ? "∞" : row.rel_error.toExponential(1) }),
        el("td", { class: "ls-verdict " + row.verdict, title: row.reason || "", text: t(row.verdict === "kink" ? "ls_gc_kinkword" : "ls_gc_" + row.verdict) }));
      if (i === k) tr.setAttribute("aria-current", "true");
      tb.append(tr);
    });
    table.append(tb);
    wrap.append(el("div", { class: "ls-scroll" }, table));
    return wrap;
  },
};

// 3. Forward mode beside reverse mode ------------------------------------------------------
// One lesson step per (pass, node): the tangent table fills in column by column.
VIEWS.forward = {
  count(data) { return Math.max(1, data.passes.length * data.topo.length); },
  render(data, k, trace) {
    const names = labels(trace);
    const byId = {};
    trace.nodes.forEach((n) => { byId[n.id] = n; });
    const wrap = el("div", { class: "ls-forward" });
    if (!data.passes[Math.floor(k / data.topo.length)]) { wrap.append(el("p", { class: "note", text: t("ls_fw_none") })); return wrap; }
    const f = { names, byId, now: el("p", { class: "ls-now", id: "ls-fw-now" }), heads: [], rows: [], cells: [], k: -1, p: 0, i: 0 };
    wrap.append(f.now);
    const table = el("table", { class: "ls-table", id: "ls-fw-table" });
    table.append(el("caption", { text: t("ls_fw_table") }));
    const hr = el("tr", {}, el("th", { scope: "col", text: t("ls_fw_node") }), el("th", { scope: "col", text: t("ls_fw_value") }));
    data.passes.forEach((ps) => { const th = el("th", { scope: "col", text: "∂/∂" + passName(ps) }); f.heads.push(th); hr.append(th); });
    table.append(el("thead", {}, hr));
    const tb = el("tbody");
    data.topo.forEach((id) => {
      const tr = el("tr", { "data-node": id }, el("th", { scope: "row", text: names[id] }), el("td", { text: fmt(byId[id] ? byId[id].value : null) }));
      const row = data.passes.map(() => el("td", { text: "" }));
      tr.append(...row);
      f.rows.push(tr);
      f.cells.push(row);
      tb.append(tr);
    });
    table.append(tb);
    fwKept.set(wrap, f);
    this.step(wrap, data, k);
    wrap.append(el("div", { class: "ls-scroll" }, table));
    if (data.shown < data.inputs) wrap.append(el("p", { class: "note", text: t("ls_fw_more", { shown: data.shown, n: data.inputs, computed: data.computed }) }));
    // The gradient both ways, and the cost.
    const g = el("table", { class: "ls-table", id: "ls-fw-grads" });
    g.append(el("caption", { text: t("ls_fw_grads") }));
    g.append(el("thead", {}, el("tr", {}, el("th", { scope: "col", text: t("ls_fw_node") }), el("th", { scope: "col", text: t("ls_fw_forward") }), el("th", { scope: "col", text: t("ls_fw_reverse") }))));
    const gb = el("tbody");
    Object.keys(data.reverse).forEach((id) => gb.append(el("tr", {}, el("th", { scope: "row", text: names[id] }), el("td", { text: fmt(data.forward[id]) }), el("td", { text: fmt(data.reverse[id]) }))));
    g.append(gb);
    const c = data.cost;
    const cost = el("table", { class: "ls-table", id: "ls-fw-cost" });
    cost.append(el("caption", { text: t("ls_fw_cost") }));
    cost.append(el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "" }), el("th", { scope: "col", text: t("ls_fw_forward") }), el("th", { scope: "col", text: t("ls_fw_reverse") }))));
    cost.append(el("tbody", {},
      el("tr", {}, el("th", { scope: "row", text: t("ls_fw_passes") }), el("td", { text: String(c.forward_passes) }), el("td", { text: String(c.reverse_passes) })),
      el("tr", {}, el("th", { scope: "row", text: t("ls_fw_evals", { ops: c.ops }) }), el("td", { text: String(c.forward_evals) }), el("td", { text: String(c.reverse_evals) })),
      el("tr", {}, el("th", { scope: "row", text: t("ls_fw_each") }), el("td", { class: "txt", text: t("ls_fw_jvp") }), el("td", { class: "txt", text: t("ls_fw_vjp") }))));
    wrap.append(el("div", { class: "ls-grid" }, g, cost));
    wrap.append(el("p", { class: "ls-callout " + (data.same ? "good" : "bad"), id: "ls-fw-same", text: t(data.same ? "ls_fw_same" : "ls_fw_differ", { n: c.inputs, k: c.outputs }) }));
    return wrap;
  },
  // Drawn once; a step fills in (or, stepping back, empties) only the cells between the two
  // steps, and moves the marks. Lesson step k is pass ⌊k/n⌋ at node k mod n: cell (pass j,
  // row r) is on show once k ≥ j·n + r.
  step(wrap, data, k) {
    const f = fwKept.get(wrap);
    const n = data.topo.length;
    const p = Math.floor(k / n), i = k % n;
    if (!f || !data.passes[p]) return false;
    setText(f.now, fwNow(data, p, i, f.names, f.byId));
    for (let x = Math.min(f.k, k) + 1; x <= Math.max(f.k, k); x++) {
      const j = Math.floor(x / n), r = x % n;
      setText(f.cells[r][j], x <= k ? fmt(data.passes[j].tangents[data.topo[r]]) : "");
    }
    f.cells[f.i][f.p].classList.remove("changed");
    f.cells[i][p].classList.add("changed");
    f.rows[f.i].removeAttribute("aria-current");
    f.rows[i].setAttribute("aria-current", "true");
    f.heads[f.p].classList.remove("cur");
    f.heads[p].classList.add("cur");
    Object.assign(f, { k, p, i });
    return true;
  },
};
const fwKept = new WeakMap(); // the forward view's element -> its cells and what they show
function passName(ps) { return ps.label + (ps.index.length ? "[" + ps.index.join(", ") + "]" : ""); }
function fwNow(data, p, i, names, byId) {
  const pass = data.passes[p];
  const node = data.topo[i];
  const nd = byId[node];
  const dnode = (data.tangents && data.tangents[node]) || names[node] + "\u0307"; // ẋ, d out
  if (!nd || nd.kind !== "op") {
    return t(node === pass.leaf ? "ls_fw_seed" : "ls_fw_leaf", { pass: p + 1, n: data.inputs, input: passName(pass), node: names[node], dnode, tangent: fmt(pass.tangents[node]) });
  }
  return t("ls_fw_op", { node: names[node], dnode, rule: data.rules[node], tangent: fmt(pass.tangents[node]) });
}
// Text set only when it differs: a cell rewritten with the same words still costs a layout.
function setText(e, text) { if (e.textContent !== text) e.textContent = text; }

// 9. Misconceptions, each with its real symptom -------------------------------------------
function gradTable(id, names, cols) {
  // cols: [[title, {leafId: grad}, {leafId: true} marks]]
  const table = el("table", { class: "ls-table", id });
  table.append(el("thead", {}, el("tr", {}, el("th", { scope: "col", text: t("ls_fw_node") }), ...cols.map((c) => el("th", { scope: "col", text: c[0] })))));
  const tb = el("tbody");
  Object.keys(cols[0][1]).forEach((leaf) => {
    tb.append(el("tr", { "data-node": leaf }, el("th", { scope: "row", text: names[leaf] }),
      ...cols.map((c) => el("td", { class: c[2] && c[2][leaf] ? "diverged" : "", text: fmt(c[1][leaf]) }))));
  });
  table.append(tb);
  return table;
}
VIEWS.mistakes = {
  modes: ["twice", "zero_grad", "missing", "vector"],
  mode() { return state.lesson.modes.mistakes || "twice"; },
  count(data) {
    const m = this.mode();
    if (m === "twice") return 2;
    if (m === "zero_grad") return data.zero_grad.steps + 1;
    if (m === "vector") return data.vector.scalar ? 1 : data.vector.rows.length + 1;
    return 1;
  },
  render(data, k, trace) {
    const names = labels(trace);
    const mode = this.mode();
    const wrap = el("div", { class: "ls-mistakes" });
    const modes = el("div", { class: "ls-tabs", role: "group", "aria-label": t("ls_mis_which") });
    this.modes.forEach((m) => modes.append(el("button", { type: "button", "data-mode": m, "aria-pressed": m === mode ? "true" : "false", text: t("ls_mis_" + m), onclick: () => setLesson({ modes: Object.assign({}, state.lesson.modes, { mistakes: m }), sub: 0 }) })));
    wrap.append(modes);
    wrap.append(el("p", { class: "ls-intro", text: t("ls_mis_intro_" + mode) }));
    wrap.append(this[mode](data, k, names));
    return wrap;
  },
  twice(data, k, names) {
    const d = data.twice;
    const box = el("div");
    const marks = {};
    Object.keys(d.first).forEach((id) => { marks[id] = !same(d.first[id], d.second[id]); });
    if (k === 0) {
      box.append(el("p", { class: "ls-now", id: "ls-mis-now", text: t("ls_mis_twice_1") }));
      box.append(gradTable("ls-mis-table", names, [[t("ls_mis_after1"), d.first]]));
    } else {
      box.append(el("p", { class: "ls-now", id: "ls-mis-now", text: t("ls_mis_twice_2") }));
      box.append(gradTable("ls-mis-table", names, [[t("ls_mis_after1"), d.first], [t("ls_mis_after2"), d.second, marks]]));
      box.append(el("p", { class: "ls-callout bad", id: "ls-mis-torch", text: d.torch_error ? t("ls_mis_torch_raises", { error: d.torch_error }) : t("ls_mis_torch_silent") }));
    }
    return box;
  },
  zero_grad(data, k, names) {
    const d = data.zero_grad;
    const box = el("div");
    const leaves = data.leaves;
    box.append(el("p", { class: "ls-now", id: "ls-mis-now", text: k < d.steps ? t("ls_mis_zg_step", { t: k + 1, lr: d.lr }) : t("ls_mis_zg_end", { n: d.steps }) }));
    const table = el("table", { class: "ls-table", id: "ls-mis-table" });
    const hr = el("tr", {}, el("th", { scope: "col", text: "t" }));
    ["zeroed", "accumulated"].forEach((run) => {
      leaves.forEach((id) => hr.append(el("th", { scope: "col", text: t("ls_mis_zg_" + run) + ": " + names[id] })));
      leaves.forEach((id) => hr.append(el("th", { scope: "col", text: names[id] + ".grad" })));
      hr.append(el("th", { scope: "col", text: t("ls_mis_zg_loss") }));
    });
    table.append(el("thead", {}, hr));
    const tb = el("tbody");
    for (let i = 0; i <= k; i++) {
      const tr = el("tr", {}, el("th", { scope: "row", text: String(i + 1) }));
      ["zeroed", "accumulated"].forEach((run) => {
        const row = d[run][i];
        leaves.forEach((id) => tr.append(el("td", { text: fmt(row.params[id]) })));
        leaves.forEach((id) => {
          const held = row.held ? row.held[id] : null;
          const td = el("td", { text: held === null ? "" : fmt(held) });
          if (run === "accumulated" && held !== null && !same(held, row.fresh[id])) { td.classList.add("diverged"); td.title = t("ls_mis_zg_fresh", { g: fmt(row.fresh[id]) }); }
          tr.append(td);
        });
        tr.append(el("td", { text: fmt(row.loss) }));
      });
      if (i === k) tr.setAttribute("aria-current", "true");
      tb.append(tr);
    }
    table.append(tb);
    box.append(el("div", { class: "ls-scroll" }, table));
    if (d.loop) { // the program's own loop zeroes its grads: the training lesson runs it without
      const lines = d.loop.lines.map((l) => l.text).join(", ");
      box.append(el("div", { class: "ls-callout", id: "ls-mis-loop", role: "note" },
        el("p", { text: t("ls_mis_zg_loop", { lines, line: d.loop.lines[0].line }) }),
        // the panel opens the lesson the button names; its part on show is this one
        el("button", { type: "button", "data-lesson": "training", text: t("ls_mis_zg_open"), onclick: () => setLesson({ modes: Object.assign({}, state.lesson.modes, { training: "zero_grad" }) }) })));
    }
    return box;
  },
  missing(data, k, names) {
    const d = data.missing;
    const box = el("div");
    if (!d.dropped) { box.append(el("p", { class: "note", text: t("ls_mis_missing_none") })); return box; }
    const sel = el("select", { id: "ls-mis-drop", "aria-label": t("ls_mis_drop") });
    d.candidates.forEach((id) => sel.append(el("option", { value: id, selected: id === d.dropped, text: names[id] })));
    sel.addEventListener("change", () => {
      // New options: the panel asks for the lesson again.
      const mistakes = Object.assign({}, state.lesson.options.mistakes, { drop: sel.value });
      setLesson({ options: Object.assign({}, state.lesson.options, { mistakes }) });
    });
    box.append(el("label", { class: "ls-pick" }, t("ls_mis_drop") + " ", sel));
    const marks = {};
    d.wrong.forEach((id) => { marks[id] = true; });
    box.append(el("p", { class: "ls-now", id: "ls-mis-now", text: t(d.wrong.length ? "ls_mis_missing_lost" : "ls_mis_missing_same", { node: names[d.dropped], g: fmt(d.received), list: d.wrong.map((i) => names[i]).join(", ") }) }));
    box.append(gradTable("ls-mis-table", names, [[t("ls_mis_correct"), d.correct], [t("ls_mis_without", { node: names[d.dropped] }), d.without, marks]]));
    return box;
  },
  vector(data, k, names) {
    const d = data.vector;
    const box = el("div");
    if (d.scalar) { box.append(el("p", { class: "note", id: "ls-mis-now", text: t("ls_mis_vector_scalar") })); return box; }
    const row = d.rows[k];
    const v = row ? row.v : "ones";
    box.append(el("p", { class: "ls-now", id: "ls-mis-now", text: row ? t("ls_mis_vector_row", { i: row.index.join(", "), v: fmt(row.v), shape: "(" + d.shape.join(",") + ")" }) : t("ls_mis_vector_ones") }));
    box.append(gradTable("ls-mis-table", names, [[row ? "v = " + fmt(v) : "v = ones", row ? row.grads : d.ones]]));
    if (d.rows.length < d.size) box.append(el("p", { class: "note", text: t("ls_mis_vector_more", { n: d.rows.length, size: d.size }) }));
    return box;
  },
};

