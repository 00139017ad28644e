/* The lessons that follow the page's own stepper: their rows are the backward steps, drawn by
 * `render(data, k, trace)` for the page's step k. */
import { setLesson } from "../store.js";
import { fwdCount, setPos } from "../trace.js";
import { chips, el, fmt, labels, t } from "./kit.js";
import { stepTable } from "./steptable.js";

export const VIEWS = {};

// 1. "= instead of +=" ---------------------------------------------------------------------
VIEWS.compare_assign = {
  follows: true,
  render(data, k, trace) {
    const names = labels(trace);
    const wrap = el("div", { class: "ls-compare" });
    const wrongs = data.final.filter((f) => f.wrong);
    const call = el("div", { class: "ls-callout " + (wrongs.length ? "bad" : "good"), role: "note" });
    if (!wrongs.length) call.append(t("ls_cmp_none"));
    else {
      call.append(el("strong", { text: t("ls_cmp_wrong_title") }));
      const ul = el("ul", { class: "ls-wrong-list" });
      wrongs.forEach((f) => ul.append(el("li", { "data-node": f.id },
        t("ls_cmp_wrong_item", { node: f.label, good: fmt(f.add), bad: fmt(f.assign) }))));
      call.append(ul);
      const row = data.rows.find((r) => r.overwritten.length);
      if (row) {
        const o = row.overwritten[0];
        call.append(el("p", { text: t("ls_cmp_why", { step: row.step, node: names[o.input], before: fmt(o.before), contribution: fmt(o.contribution), should: fmt(o.should_be) }) }));
      }
    }
    wrap.append(call);
    const tables = el("div", { class: "ls-two" });
    const kept = { tables: [], window: el("p", { class: "note ls-window", hidden: true }) };
    [["add", "ls_cmp_add"], ["assign", "ls_cmp_assign"]].forEach(([which, title]) => {
      const tb = stepTable({ id: "ls-table-" + which, caption: t(title), columns: data.columns, rows: data.rows, names, trace,
        written: (row) => row[which], mark: (td, row, id) => markCell(td, row, id, which) });
      kept.tables.push(tb);
      tables.append(tb.box);
    });
    wrap.append(tables, kept.window);
    wrap.append(el("p", { class: "note", text: t("ls_cmp_note") }));
    cmpKept.set(wrap, kept);
    this.step(wrap, data, k);
    return wrap;
  },
  // A step touches only the rows that come and go and the current rows: the two tables are
  // built once per trace (see steptable.js).
  step(wrap, data, k) {
    const kept = cmpKept.get(wrap);
    kept.tables.forEach((tb) => tb.show(k));
    const { rows, total } = kept.tables[0].shown();
    const windowed = rows[0] > 0; // the earlier rows are not on show
    kept.window.hidden = !windowed;
    if (windowed) kept.window.textContent = `${rows[0]}–${rows[1]} / ${total - 1}`;
  },
};
const cmpKept = new WeakMap(); // the compare view's element -> its two tables

function markCell(td, row, id, which) {
  if (row.diverged.includes(id)) td.classList.add("diverged");
  if (which !== "assign") return;
  const o = row.overwritten.find((x) => x.input === id);
  if (!o) return;
  td.classList.add("lost");
  td.title = t("ls_cmp_lost", { before: fmt(o.before), contribution: fmt(o.contribution) });
}

// 6. Higher-order gradients ---------------------------------------------------------------
// Follows the main stepper: the page's trace is the second backward pass, through the
// nodes grad() built; those nodes are marked in the drawing too.
VIEWS.higher = {
  follows: true,
  render(data, k, trace) {
    const names = labels(trace);
    const wrap = el("div", { class: "ls-higher" });
    if (!data.calls.length) {
      wrap.append(el("p", { class: "ls-callout", text: t("ls_ho_none") }));
      return wrap;
    }
    const built = new Set();
    data.calls.forEach((c) => {
      c.nodes.forEach((id) => built.add(id));
      const box = el("div", { class: "ls-callout", role: "note" });
      box.append(el("p", { text: t("ls_ho_call", { y: names[c.output], x: names[c.wrt], n: c.nodes.length, result: names[c.result], value: fmt(c.value), line: c.line }) }));
      box.append(chips(c.nodes, names, null));
      wrap.append(box);
    });
    const step = trace.steps[k];
    const node = step ? step.node : null;
    let now;
    if (k === 0) now = t("ls_ho_seed", { node: names[node] });
    else if (built.has(node)) now = t("ls_ho_step_built", { node: names[node] });
    else now = t("ls_ho_step_orig", { node: names[node] });
    wrap.append(el("p", { class: "ls-now", id: "ls-ho-now", text: now }));
    const table = el("table", { class: "ls-table", id: "ls-ho-checks" });
    table.append(el("caption", { text: t("ls_ho_checks") }));
    table.append(el("thead", {}, el("tr", {}, ...["ls_ho_leaf", "ls_ho_value", "ls_ho_second", "ls_ho_numeric", "ls_ho_agree"].map((key) => el("th", { scope: "col", text: t(key) })))));
    const tb = el("tbody");
    const last = k >= trace.steps.length - 1;
    data.checks.forEach((c) => tb.append(el("tr", { "data-node": c.leaf },
      el("th", { scope: "row", text: c.label }),
      el("td", { text: fmt(c.value) }),
      el("td", { class: "ls-second", text: last ? fmt(c.analytic) : "?" }),
      el("td", { text: fmt(c.numeric) }),
      el("td", { text: last ? (c.agree ? "✓" : "✗") : "" }))));
    table.append(tb);
    wrap.append(table);
    if (!last) wrap.append(el("p", { class: "note", text: t("ls_ho_keep_stepping") }));
    return wrap;
  },
  decorate(data, on) {
    const ids = new Set(on && data ? data.calls.flatMap((c) => c.nodes) : []);
    document.querySelectorAll("#graph g.node").forEach((g) => g.classList.toggle("ls-built", ids.has(g.id)));
  },
};

// 5. Tensors, shape by shape ---------------------------------------------------------------
// Follows the main stepper: the current step's shape work, one sub-step per line, with the
// broadcast reduction on a line of its own.
function shp(s) { return !s || !s.length ? t("ls_sh_scalar") : "(" + s.join(",") + (s.length === 1 ? ",)" : ")"); }
function axesText(a) {
  if (a.length === 1) return t("ls_sh_axis", { a: a[0] });
  return t("ls_sh_axes", { a: a.slice(0, -1).join(", "), b: a[a.length - 1] });
}
VIEWS.shapes = {
  follows: true,
  render(data, k, trace) {
    const names = labels(trace);
    const wrap = el("div", { class: "ls-shapes" });
    if (!data.tensors) wrap.append(el("p", { class: "note", text: t("ls_sh_scalars") }));
    const st = data.steps[k];
    if (!st) return wrap;
    if (st.seed) {
      wrap.append(el("p", { class: "ls-now", id: "ls-sh-now", text: st.shape && st.shape.length ? t("ls_sh_seed", { node: names[st.node], shape: shp(st.shape) }) : t("ls_sh_seed_scalar", { node: names[st.node] }) }));
      return wrap;
    }
    wrap.append(el("p", { class: "ls-now", id: "ls-sh-now", text: t("ls_sh_step", { node: names[st.node], shape: shp(st.shape), up: shp(st.upstream), inputs: st.inputs.map(shp).join(", ") }) }));
    st.terms.forEach((term) => {
      const who = names[term.input];
      const ol = el("ol", { class: "ls-sub", "data-input": term.input });
      ol.append(el("li", { text: t("ls_sh_rule", { input: who, rule: term.rule }) }));
      term.work.forEach((w) => {
        if (w.kind === "matmul") ol.append(el("li", { class: "matmul", text: t("ls_sh_matmul", { a: shp(w.a), b: shp(w.b), out: shp(w.out) }) }));
        else if (w.kind === "broadcast") ol.append(el("li", { class: "broadcast", text: t("ls_sh_broadcast", { from: shp(w.from), to: shp(w.to) }) }));
        else if (w.kind === "scatter") ol.append(el("li", { text: t("ls_sh_scatter", { from: shp(w.from), to: shp(w.to) }) }));
        else if (w.kind === "reduce") {
          const why = [];
          if (w.added.length) why.push(t("ls_sh_added", { axes: axesText(w.added) }));
          if (w.ones.length) why.push(t("ls_sh_ones", { axes: axesText(w.ones), input: who }));
          ol.append(el("li", { class: "reduce", text: t("ls_sh_reduce", { from: shp(w.from), axes: axesText(w.axes), to: shp(w.to) }) + " — " + why.join("; ") }));
        }
      });
      ol.append(el("li", { text: t("ls_sh_add", { input: who, shape: shp(term.shape) }) }));
      wrap.append(ol);
    });
    if (st.softmax) {
      const sm = st.softmax;
      const table = el("table", { class: "ls-table", id: "ls-sh-softmax" });
      table.append(el("caption", { text: t("ls_sh_ce", { n: sm.rows }) }));
      const rows = [["p = softmax(z)", sm.p], ["onehot(t)", sm.onehot], ["p − onehot(t)", sm.grad]];
      const tb = el("tbody");
      rows.forEach(([name, v]) => {
        const f = Array.isArray(v) ? v.flat(Infinity) : [v];
        tb.append(el("tr", {}, el("th", { scope: "row", text: name }), ...f.slice(0, 12).map((x) => el("td", { text: fmt(x) }))));
      });
      table.append(tb);
      wrap.append(table);
    }
    return wrap;
  },
};

// 8. What backward keeps alive --------------------------------------------------------------
// Follows the main stepper: which saved forward values are still held, used now, freed.
VIEWS.memory = {
  follows: true,
  render(data, k, trace) {
    const names = labels(trace);
    const wrap = el("div", { class: "ls-memory" });
    const pk = data.peak;
    wrap.append(el("div", { class: "ls-callout", role: "note", id: "ls-mem-summary" },
      el("p", { text: t("ls_mem_peak", { count: pk.count, elements: pk.elements, step: pk.step }) }),
      data.not_saved.length ? el("p", { text: t("ls_mem_not_saved", { n: data.not_saved.length, list: data.not_saved.map((i) => names[i]).join(", ") }) }) : null,
      data.detached.length ? el("p", { text: t("ls_mem_detached", { list: data.detached.map((i) => names[i]).join(", ") }) }) : null,
      data.cut.length ? el("p", { text: t("ls_mem_cut", { list: data.cut.map((i) => names[i]).join(", ") }) }) : null));
    const m = { names, now: el("p", { class: "ls-now", id: "ls-mem-now" }), rows: [], bars: [], k: null };
    wrap.append(m.now);
    const table = el("table", { class: "ls-table", id: "ls-mem-table" });
    table.append(el("caption", { text: t("ls_mem_table") }));
    table.append(el("thead", {}, el("tr", {}, ...["ls_mem_value", "ls_mem_kind", "ls_mem_size", "ls_mem_by", "ls_mem_until", "ls_mem_now_col"].map((key) => el("th", { scope: "col", text: t(key) })))));
    const tb = el("tbody");
    data.saved.forEach((v) => {
      const cell = el("td", { class: "txt ls-mem-state" });
      const tr = el("tr", { "data-node": v.value },
        el("th", { scope: "row", text: names[v.value] }),
        el("td", { class: "txt", text: t("ls_mem_kind_" + v.kind) }),
        el("td", { text: String(v.elements) }),
        el("td", { class: "txt", text: v.by.map((i) => names[i]).join(", ") }),
        el("td", { text: String(v.last_step) }),
        cell);
      m.rows.push({ tr, cell, value: v.value });
      tb.append(tr);
    });
    table.append(tb);
    const bars = el("table", { class: "ls-table", id: "ls-mem-bars" });
    bars.append(el("caption", { text: t("ls_mem_bars") }));
    const bb = el("tbody");
    const max = Math.max(1, ...data.steps.map((s) => s.elements));
    data.steps.forEach((s) => {
      const tr = el("tr", {}, el("th", { scope: "row", text: String(s.step) + " · " + names[s.node] }),
        el("td", { class: "txt" }, el("span", { class: "ls-bar", style: { width: Math.round(120 * s.elements / max) + "px" } })),
        el("td", { text: s.count + " / " + s.elements }));
      m.bars[s.step] = tr;
      bb.append(tr);
    });
    bars.append(bb);
    wrap.append(el("div", { class: "ls-grid" }, el("div", { class: "ls-scroll" }, table), el("div", { class: "ls-scroll" }, bars)));
    memKept.set(wrap, m);
    this.step(wrap, data, k);
    return wrap;
  },
  // Drawn once per trace: a step rewrites the sentence and only the cells whose state changed.
  step(wrap, data, k) {
    const m = memKept.get(wrap), names = m.names;
    const st = data.steps[k];
    setText(m.now, t(k === 0 ? "ls_mem_now_start" : "ls_mem_now", {
      node: names[st.node], count: st.count, elements: st.elements,
      uses: st.uses.map((i) => names[i]).join(", ") || "—", freed: st.freed.map((i) => names[i]).join(", ") || "—" }));
    const alive = new Set(st.alive), freed = new Set(st.freed), uses = new Set(st.uses);
    m.rows.forEach(({ tr, cell, value }) => {
      const used = uses.has(value);
      const state = freed.has(value) ? "ls_mem_freed_now" : used ? "ls_mem_used" : alive.has(value) ? "ls_mem_held" : "ls_mem_gone";
      tr.classList.toggle("later", !alive.has(value));
      cell.classList.toggle("changed", used);
      setText(cell, t(state));
    });
    if (m.k !== null && m.bars[m.k]) m.bars[m.k].removeAttribute("aria-current");
    if (m.bars[k]) m.bars[k].setAttribute("aria-current", "step");
    m.k = k;
  },
};
const memKept = new WeakMap(); // the memory view's element -> its rows and cells

// Text set only when it differs: a cell rewritten with the same words still costs a layout.
function setText(e, text) { if (e.textContent !== text) e.textContent = text; }

// 7. The same program in PyTorch and JAX ----------------------------------------------------
// Follows the main stepper: the step's node is named by the grad_fn PyTorch would run.
VIEWS.code = {
  follows: true,
  render(data, k, trace) {
    const names = labels(trace);
    const wrap = el("div", { class: "ls-code-view" });
    wrap.append(el("p", { class: "ls-now", id: "ls-code-now", text: codeNow(data, k, trace, names) }));
    const torchBox = el("div", {}, el("h3", { text: t("ls_code_torch") }),
      copyButton("ls-copy-torch", "ls_code_copy_torch", () => data.torch),
      el("pre", { class: "ls-code", id: "ls-code-torch", tabIndex: 0, text: data.torch }),
      el("h3", { text: t("ls_code_prints") }),
      el("pre", { class: "ls-code", id: "ls-code-torch-out", tabIndex: 0, text: data.torch_output || "" }));
    const jaxBox = el("div", {}, el("h3", { text: t("ls_code_jax") }));
    if (data.jax) {
      jaxBox.append(copyButton("ls-copy-jax", "ls_code_copy_jax", () => data.jax),
        el("pre", { class: "ls-code", id: "ls-code-jax", tabIndex: 0, text: data.jax }),
        el("h3", { text: t("ls_code_prints") }),
        el("pre", { class: "ls-code", id: "ls-code-jax-out", tabIndex: 0, text: data.jax_output || "" }));
    } else jaxBox.append(el("p", { class: "note", text: t("ls_code_no_jax") }));
    wrap.append(el("div", { class: "ls-grid" }, torchBox, jaxBox));
    wrap.append(el("p", { class: "note", text: t("ls_code_note") }));
    return wrap;
  },
  // The two programs and their output stay; a step only names its grad_fn.
  step(wrap, data, k, trace) {
    setText(wrap.querySelector("#ls-code-now"), codeNow(data, k, trace, labels(trace)));
  },
};
// Copy a program to paste into a notebook: the button says it is done (or, where the page may
// not write the clipboard, selects the code for Ctrl+C).
function copyButton(id, label, text) {
  const b = el("button", { type: "button", id, class: "ls-copy", "aria-label": t(label), text: t("ls_code_copy") });
  b.addEventListener("click", async () => {
    const pre = b.nextElementSibling;
    try {
      await navigator.clipboard.writeText(text());
      b.textContent = t("ls_code_copied");
    } catch (e) {
      if (pre) { const r = document.createRange(); r.selectNodeContents(pre); const sel = getSelection(); sel.removeAllRanges(); sel.addRange(r); }
      b.textContent = t("ls_code_copy_failed");
    }
    setTimeout(() => { if (b.isConnected) b.textContent = t("ls_code_copy"); }, 2500);
  });
  return b;
}

function codeNow(data, k, trace, names) {
  const st = trace.steps[k];
  if (!st || k === 0) return t("ls_code_seed", { node: names[st ? st.node : ""] || "" });
  if (data.node_grad_fns[st.node]) return t("ls_code_step", { node: names[st.node], fn: data.node_grad_fns[st.node] });
  return t("ls_code_step_plain", { node: names[st.node] });
}

// 10. Predict, then reveal ------------------------------------------------------------------
// Page-only (it needs nothing but the main trace): before the next step, type the grads it
// will write; Check says right or wrong and shows the chain-rule term; Reveal steps on.
// While it is on, the main table hides the rows still to come.
const practice = { step: null, answers: {}, checked: false, right: 0, total: 0 };
function closeEnough(a, b) { return Math.abs(a - b) <= 1e-3 * Math.max(1, Math.abs(b)); }
VIEWS.practice = {
  local: true,
  follows: true,
  render(data, k, trace) {
    const names = labels(trace);
    if (practice.step !== k) { practice.step = k; practice.answers = {}; practice.checked = false; }
    const wrap = el("div", { class: "ls-practice" });
    wrap.append(el("p", { class: "note", id: "ls-pr-score", text: t("ls_pr_score", { right: practice.right, total: practice.total }) }));
    const next = trace.steps[k + 1];
    if (!next) { wrap.append(el("p", { class: "ls-callout good", id: "ls-pr-now", text: t("ls_pr_done", { right: practice.right, total: practice.total }) })); return wrap; }
    const byId = {};
    trace.nodes.forEach((n) => { byId[n.id] = n; });
    wrap.append(el("p", { class: "ls-now", id: "ls-pr-now", text: t("ls_pr_ask", { k: k + 1, node: names[next.node], op: (byId[next.node] && byId[next.node].symbol) || next.op || "" }) }));
    const form = el("div", { class: "ls-pr-form" });
    const ids = Object.keys(next.grads);
    ids.forEach((id) => {
      const actual = next.grads[id];
      const row = el("p", { class: "ls-pr-row", "data-node": id });
      if (typeof actual !== "number") {
        row.append(t("ls_pr_tensor", { node: names[id] }));
        form.append(row);
        return;
      }
      const input = el("input", { type: "text", id: "ls-pr-" + id, inputmode: "decimal", "aria-label": names[id] + ".grad", value: practice.answers[id] !== undefined ? practice.answers[id] : "" });
      input.addEventListener("input", () => { practice.answers[id] = input.value; });
      input.addEventListener("keydown", (ev) => { if (ev.key === "Enter") check(); ev.stopPropagation(); });
      row.append(el("label", { for: "ls-pr-" + id, text: names[id] + ".grad = " }), input);
      if (practice.checked) {
        const guess = Number(String(practice.answers[id] || "").replace("−", "-"));
        const ok = practice.answers[id] !== undefined && practice.answers[id] !== "" && Number.isFinite(guess) && closeEnough(guess, actual);
        row.append(" ", el("span", { class: ok ? "right" : "wrong", text: ok ? t("ls_pr_right") : t("ls_pr_wrong", { v: fmt(actual) }) }));
        const terms = (next.terms || []).filter((tm) => tm.input === id);
        terms.forEach((tm) => {
          let calc = fmt(tm.contribution);
          if (tm.local !== null && tm.local !== undefined && typeof next.upstream === "number") calc = fmt(next.upstream) + "·" + fmt(tm.local) + " = " + calc;
          row.append(el("span", { class: "ls-pr-term", text: " " + t("ls_pr_term", { node: names[id], before: fmt(tm.before), rule: tm.rule, calc, after: fmt(tm.after) }) }));
        });
      }
      form.append(row);
    });
    wrap.append(form);
    const check = () => {
      if (practice.checked) return;
      practice.checked = true;
      ids.forEach((id) => {
        const actual = next.grads[id];
        if (typeof actual !== "number") return;
        const guess = Number(String(practice.answers[id] || "").replace("−", "-"));
        practice.total += 1;
        if (practice.answers[id] && Number.isFinite(guess) && closeEnough(guess, actual)) practice.right += 1;
      });
      setLesson({}); // a new lesson object: the panel draws the view again
    };
    wrap.append(el("div", { class: "ls-stepbar" },
      el("button", { type: "button", id: "ls-pr-check", text: t("ls_pr_check"), disabled: practice.checked, onclick: check }),
      el("button", { type: "button", id: "ls-pr-reveal", text: t("ls_pr_reveal"), onclick: () => { if (!practice.checked) check(); setPos(fwdCount() + k + 1); } })));
    return wrap;
  },
};

