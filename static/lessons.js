/* gradtrace lessons: the views the course notes teach, over the program on the page.
 *
 * The page (app.js) owns the program, the trace and the main step. This file adds the lesson
 * panel (#lessons): a tab per lesson; the chosen lesson's data comes from POST /api/trace with
 * {"lessons": [name]} and is fetched again whenever the program changes. A view either follows
 * the page's own step (its rows line up with the backward steps) or has its own stepper.
 * app.js tells us it rendered with the event "gradtrace:render" and keeps our `lesson=` in the
 * address through window.gradtraceLessons.pairs().
 */
(function () {
  "use strict";

  const $ = (sel, root) => (root || document).querySelector(sel);
  const panel = $("#lessons");
  const bootEl = $("#state");
  if (!panel || !bootEl) return; // the embed and the standalone file have no lesson panel
  const boot = JSON.parse(bootEl.textContent);
  const STRINGS = boot.strings || { en: {} };

  const ls = {
    name: null, // the lesson on show
    data: {}, // name -> lesson data for `key`
    key: null, // the program the data is for
    error: null,
    sub: 0, // the lesson's own step, for views with a stepper
    options: {}, // name -> options sent with the request
    modes: {}, // name -> the part of a lesson on show, for lessons with parts
    loading: false,
  };
  const initial = new URLSearchParams(location.search).get("lesson");

  function app() { return window.gradtrace; }
  function st() { return app() ? app().state : null; }
  function lang() { return (st() && st().lang) || "en"; }
  function t(key, params) {
    let s = (STRINGS[lang()] && STRINGS[lang()][key]) || STRINGS.en[key] || key;
    if (params) s = s.replace(/\{(\w+)\}/g, (m, k) => (k in params ? String(params[k]) : m));
    return s;
  }
  function fmt(x) {
    if (x === null || x === undefined) return "—";
    if (typeof x === "number") return app() ? app().fmt(x) : String(x);
    const f = Array.isArray(x) ? x.flat(Infinity) : [x];
    if (f.length <= 4) return "[" + f.map(fmt).join(", ") + "]";
    return "[" + f.slice(0, 3).map(fmt).join(", ") + ", …]";
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => {
      if (v === null || v === undefined || v === false) return;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k === "style") Object.assign(e.style, v); // CSSOM, which the CSP allows
      else if (k.startsWith("data-") || k.startsWith("aria-") || k === "role" || k === "scope" || k === "title" || k === "type" || k === "id" || k === "for") e.setAttribute(k, v);
      else e[k] = v;
    });
    kids.flat().forEach((k) => { if (k !== null && k !== undefined && k !== false) e.append(k); });
    return e;
  }
  function label(trace, id) {
    const n = trace && trace.nodes.find((x) => x.id === id);
    return n ? n.label : id;
  }
  function labels(trace) {
    const out = {};
    (trace ? trace.nodes : []).forEach((n) => { out[n.id] = n.label; });
    return out;
  }
  function same(a, b) {
    const fa = Array.isArray(a) ? a.flat(Infinity) : [a], fb = Array.isArray(b) ? b.flat(Infinity) : [b];
    if (fa.length !== fb.length) return false;
    return fa.every((x, i) => Math.abs(x - fb[i]) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(fb[i])));
  }
  function zeros(shape) {
    if (!shape || !shape.length) return 0;
    const [n, ...rest] = shape;
    return Array.from({ length: n }, () => zeros(rest));
  }

  // ------------------------------------------------------------------------------------------
  // The views. `follows`: the view's rows are the page's backward steps (the main stepper
  // drives it). Otherwise `count(data)` steps of its own, shown by `render(data, k)`.

  const VIEWS = {};

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
      [["add", "ls_cmp_add"], ["assign", "ls_cmp_assign"]].forEach(([which, title]) => {
        const table = el("table", { class: "ls-table", id: "ls-table-" + which });
        table.append(el("caption", { text: t(title) }));
        const hr = el("tr", {}, el("th", { scope: "col", text: t("step_col") }));
        data.columns.forEach((id) => hr.append(el("th", { scope: "col", "data-node": id, text: names[id] })));
        table.append(el("thead", {}, hr));
        const body = el("tbody");
        const run = {};
        data.columns.forEach((id) => { const n = trace.nodes.find((x) => x.id === id); run[id] = zeros(n ? n.shape : []); });
        data.rows.forEach((row) => {
          Object.assign(run, row[which]);
          const tr = el("tr", { "data-step": String(row.step) });
          if (row.step === k) tr.setAttribute("aria-current", "step");
          if (row.step > k) return; // revealed as the main stepper reaches each step
          tr.append(el("th", { scope: "row", text: String(row.step) + " · " + names[row.node] }));
          data.columns.forEach((id) => {
            const td = el("td", { "data-node": id, text: fmt(run[id]), title: JSON.stringify(run[id]) });
            if (id in row[which]) td.classList.add("changed");
            if (row.diverged.includes(id)) td.classList.add("diverged");
            if (which === "assign" && row.overwritten.some((o) => o.input === id)) {
              td.classList.add("lost");
              const o = row.overwritten.find((x) => x.input === id);
              td.title = t("ls_cmp_lost", { before: fmt(o.before), contribution: fmt(o.contribution) });
            }
            tr.append(td);
          });
          body.append(tr);
        });
        table.append(body);
        tables.append(el("div", { class: "ls-scroll" }, table));
      });
      wrap.append(tables);
      wrap.append(el("p", { class: "note", text: t("ls_cmp_note") }));
      return wrap;
    },
  };

  // 2. Why topological order ---------------------------------------------------------------
  // Three schedules of the same graph; the stepper walks the one chosen with the mode buttons.
  VIEWS.orders = {
    modes: ["dfs", "kahn", "naive"],
    count(data) {
      const m = ls.modes.orders || "naive";
      if (m === "dfs") return data.dfs.events.length;
      if (m === "kahn") return data.kahn.events.length;
      return Math.max(1, data.naive.calls.length);
    },
    render(data, k, trace) {
      const names = labels(trace);
      const mode = ls.modes.orders || "naive";
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
      this.modes.forEach((m) => modes.append(el("button", { type: "button", "data-mode": m, "aria-pressed": m === mode ? "true" : "false", text: t("ls_ord_" + m), onclick: () => { ls.modes.orders = m; ls.sub = 0; show(); } })));
      side.append(modes);
      side.append(this[mode](data, k, names));
      wrap.append(el("div", { class: "ls-grid" }, side, el("div", { class: "ls-scroll" }, table)));
      return wrap;
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
      wrap.append(el("p", { class: "ls-now", id: "ls-gc-now", text: t("ls_gc_now", {
        name, x: fmt(r.value), up: fmt(r.up), down: fmt(r.down), step: r.step.toPrecision(3),
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

  // 3. Forward mode beside reverse mode ------------------------------------------------------
  // One lesson step per (pass, node): the tangent table fills in column by column.
  VIEWS.forward = {
    count(data) { return Math.max(1, data.passes.length * data.topo.length); },
    render(data, k, trace) {
      const names = labels(trace);
      const byId = {};
      trace.nodes.forEach((n) => { byId[n.id] = n; });
      const wrap = el("div", { class: "ls-forward" });
      const n = data.topo.length;
      const p = Math.floor(k / n), i = k % n;
      const pass = data.passes[p];
      if (!pass) { wrap.append(el("p", { class: "note", text: t("ls_fw_none") })); return wrap; }
      const inName = (ps) => ps.label + (ps.index.length ? "[" + ps.index.join(", ") + "]" : "");
      const node = data.topo[i];
      const nd = byId[node];
      const dnode = /^\w+$/.test(names[node]) ? names[node] + "˙" : "(" + names[node] + ")˙";
      let now;
      if (!nd || nd.kind !== "op") {
        now = t(node === pass.leaf ? "ls_fw_seed" : "ls_fw_leaf", { pass: p + 1, n: data.inputs, input: inName(pass), node: names[node], dnode, tangent: fmt(pass.tangents[node]) });
      } else {
        now = t("ls_fw_op", { node: names[node], dnode, rule: data.rules[node], tangent: fmt(pass.tangents[node]) });
      }
      wrap.append(el("p", { class: "ls-now", id: "ls-fw-now", text: now }));
      const table = el("table", { class: "ls-table", id: "ls-fw-table" });
      table.append(el("caption", { text: t("ls_fw_table") }));
      const hr = el("tr", {}, el("th", { scope: "col", text: t("ls_fw_node") }), el("th", { scope: "col", text: t("ls_fw_value") }));
      data.passes.forEach((ps, j) => hr.append(el("th", { scope: "col", class: j === p ? "cur" : "", text: "∂/∂" + inName(ps) })));
      table.append(el("thead", {}, hr));
      const tb = el("tbody");
      data.topo.forEach((id, r) => {
        const tr = el("tr", { "data-node": id }, el("th", { scope: "row", text: names[id] }), el("td", { text: fmt(byId[id] ? byId[id].value : null) }));
        if (r === i) tr.setAttribute("aria-current", "true");
        data.passes.forEach((ps, j) => {
          const shown = j < p || (j === p && r <= i);
          const td = el("td", { text: shown ? fmt(ps.tangents[id]) : "" });
          if (j === p && r === i) td.classList.add("changed");
          tr.append(td);
        });
        tb.append(tr);
      });
      table.append(tb);
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
        wrap.append(el("p", { class: "ls-now", id: "ls-sh-now", text: t("ls_sh_seed", { node: names[st.node], shape: shp(st.shape) }) }));
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
      const st = data.steps[k];
      const pk = data.peak;
      wrap.append(el("div", { class: "ls-callout", role: "note", id: "ls-mem-summary" },
        el("p", { text: t("ls_mem_peak", { count: pk.count, elements: pk.elements, step: pk.step }) }),
        data.not_saved.length ? el("p", { text: t("ls_mem_not_saved", { n: data.not_saved.length, list: data.not_saved.map((i) => names[i]).join(", ") }) }) : null,
        data.detached.length ? el("p", { text: t("ls_mem_detached", { list: data.detached.map((i) => names[i]).join(", ") }) }) : null,
        data.cut.length ? el("p", { text: t("ls_mem_cut", { list: data.cut.map((i) => names[i]).join(", ") }) }) : null));
      wrap.append(el("p", { class: "ls-now", id: "ls-mem-now", text: t(k === 0 ? "ls_mem_now_start" : "ls_mem_now", {
        node: names[st.node], count: st.count, elements: st.elements,
        uses: st.uses.map((i) => names[i]).join(", ") || "—", freed: st.freed.map((i) => names[i]).join(", ") || "—" }) }));
      const table = el("table", { class: "ls-table", id: "ls-mem-table" });
      table.append(el("caption", { text: t("ls_mem_table") }));
      table.append(el("thead", {}, el("tr", {}, ...["ls_mem_value", "ls_mem_kind", "ls_mem_size", "ls_mem_by", "ls_mem_until", "ls_mem_now_col"].map((key) => el("th", { scope: "col", text: t(key) })))));
      const tb = el("tbody");
      data.saved.forEach((v) => {
        const alive = st.alive.includes(v.value), freedNow = st.freed.includes(v.value), used = st.uses.includes(v.value);
        const state = freedNow ? "ls_mem_freed_now" : used ? "ls_mem_used" : alive ? "ls_mem_held" : "ls_mem_gone";
        const tr = el("tr", { "data-node": v.value, class: alive ? "" : "later" },
          el("th", { scope: "row", text: names[v.value] }),
          el("td", { class: "txt", text: t("ls_mem_kind_" + v.kind) }),
          el("td", { text: String(v.elements) }),
          el("td", { class: "txt", text: v.by.map((i) => names[i]).join(", ") }),
          el("td", { text: String(v.last_step) }),
          el("td", { class: "txt ls-mem-state " + (used ? "changed" : ""), text: t(state) }));
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
        if (s.step === k) tr.setAttribute("aria-current", "step");
        bb.append(tr);
      });
      bars.append(bb);
      wrap.append(el("div", { class: "ls-grid" }, el("div", { class: "ls-scroll" }, table), el("div", { class: "ls-scroll" }, bars)));
      return wrap;
    },
  };

  // 7. The same program in PyTorch and JAX ----------------------------------------------------
  // Follows the main stepper: the step's node is named by the grad_fn PyTorch would run.
  VIEWS.code = {
    follows: true,
    render(data, k, trace) {
      const names = labels(trace);
      const wrap = el("div", { class: "ls-code-view" });
      const st = trace.steps[k];
      let now;
      if (!st || k === 0) now = t("ls_code_seed", { node: names[st ? st.node : ""] || "" });
      else if (data.node_grad_fns[st.node]) now = t("ls_code_step", { node: names[st.node], fn: data.node_grad_fns[st.node] });
      else now = t("ls_code_step_plain", { node: names[st.node] });
      wrap.append(el("p", { class: "ls-now", id: "ls-code-now", text: now }));
      const torchBox = el("div", {}, el("h3", { text: t("ls_code_torch") }),
        el("pre", { class: "ls-code", id: "ls-code-torch", text: data.torch }),
        el("h3", { text: t("ls_code_prints") }),
        el("pre", { class: "ls-code", id: "ls-code-torch-out", text: data.torch_output || "" }));
      const jaxBox = el("div", {}, el("h3", { text: t("ls_code_jax") }));
      if (data.jax) {
        jaxBox.append(el("pre", { class: "ls-code", id: "ls-code-jax", text: data.jax }),
          el("h3", { text: t("ls_code_prints") }),
          el("pre", { class: "ls-code", id: "ls-code-jax-out", text: data.jax_output || "" }));
      } else jaxBox.append(el("p", { class: "note", text: t("ls_code_no_jax") }));
      wrap.append(el("div", { class: "ls-grid" }, torchBox, jaxBox));
      wrap.append(el("p", { class: "note", text: t("ls_code_note") }));
      return wrap;
    },
  };

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
    mode() { return ls.modes.mistakes || "twice"; },
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
      this.modes.forEach((m) => modes.append(el("button", { type: "button", "data-mode": m, "aria-pressed": m === mode ? "true" : "false", text: t("ls_mis_" + m), onclick: () => { ls.modes.mistakes = m; ls.sub = 0; show(); } })));
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
      return box;
    },
    missing(data, k, names) {
      const d = data.missing;
      const box = el("div");
      if (!d.dropped) { box.append(el("p", { class: "note", text: t("ls_mis_missing_none") })); return box; }
      const sel = el("select", { id: "ls-mis-drop", "aria-label": t("ls_mis_drop") });
      d.candidates.forEach((id) => sel.append(el("option", { value: id, selected: id === d.dropped, text: names[id] })));
      sel.addEventListener("change", () => { ls.options.mistakes = Object.assign({}, ls.options.mistakes, { drop: sel.value }); load("mistakes"); });
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
        show();
      };
      wrap.append(el("div", { class: "ls-stepbar" },
        el("button", { type: "button", id: "ls-pr-check", text: t("ls_pr_check"), disabled: practice.checked, onclick: check }),
        el("button", { type: "button", id: "ls-pr-reveal", text: t("ls_pr_reveal"), onclick: () => { if (!practice.checked) check(); poke(k + 1); } })));
      return wrap;
    },
  };

  function chips(ids, names, cur) {
    const ol = el("ol", { class: "ls-chips" });
    ids.forEach((id) => ol.append(el("li", { "data-node": id, class: id === cur ? "cur" : "", text: names[id] })));
    return ol;
  }

  // ------------------------------------------------------------------------------------------
  // Fetching and rendering

  function programKey(s) {
    return JSON.stringify([s.source, s.values, s.accumulate, s.order]);
  }

  let seq = 0;
  async function load(name) {
    const s = st();
    if (!s || !name) return;
    if (VIEWS[name] && VIEWS[name].local) { // needs only the page's own trace
      ls.data = { [name]: {} };
      ls.trace = s.trace;
      ls.loading = false;
      ls.key = null;
      show();
      return;
    }
    const key = programKey(s) + JSON.stringify(ls.options[name] || null) + name;
    if (ls.key === key && ls.data[name]) return;
    const mine = ++seq;
    ls.loading = true;
    ls.error = null;
    show();
    let body = null;
    try {
      const options = {};
      if (ls.options[name]) options[name] = ls.options[name];
      const resp = await fetch("/api/trace", {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ source: s.source, values: s.values, accumulate: s.accumulate, order: s.order, lessons: [name], lesson_options: options }),
      });
      body = await resp.json();
      if (mine !== seq) return;
      if (!resp.ok) throw new Error((body.error && body.error.message) || "HTTP " + resp.status);
    } catch (e) {
      if (mine !== seq) return;
      ls.loading = false;
      ls.error = String(e && e.message ? e.message : e);
      ls.data = {};
      show();
      return;
    }
    ls.loading = false;
    ls.key = key;
    ls.data = { [name]: body.lessons[name] };
    ls.trace = body;
    const view = VIEWS[name];
    if (view && !view.follows && view.start) ls.sub = view.start(body.lessons[name]);
    else if (view && !view.follows) ls.sub = Math.min(ls.sub, Math.max(0, view.count(body.lessons[name]) - 1));
    show();
  }

  function choose(name) {
    if (ls.name === name) return;
    ls.name = name;
    ls.sub = 0;
    ls.error = null;
    if (!name) { show(); poke(); return; }
    load(name);
    poke();
  }

  // Ask app.js to write the address again (it calls pairs()).
  function poke(step) {
    const a = app();
    if (a && a.setPos && a.maxPos) {
      const s = st();
      const fwd = s.forwardMode ? (s.trace ? s.trace.topo.length : 0) : 0;
      if (step !== undefined) { a.setPos(fwd + step); return; }
      a.setPos(s.forwardMode && s.fwd != null ? s.fwd : fwd + s.step);
    }
  }

  function tabs() {
    panel.querySelectorAll("[data-lesson]").forEach((b) => {
      b.setAttribute("aria-pressed", b.dataset.lesson === ls.name ? "true" : "false");
    });
  }

  function stepper(view, data) {
    const n = view.count(data);
    const bar = el("div", { class: "ls-stepbar", role: "group", "aria-label": t("ls_steps") });
    const btn = (id, text, to, dis) => el("button", { type: "button", id, text, disabled: dis, onclick: () => { ls.sub = to; show(); } });
    bar.append(
      btn("ls-first", "«", 0, ls.sub <= 0),
      btn("ls-back", "◀", Math.max(0, ls.sub - 1), ls.sub <= 0),
      btn("ls-next", "▶", Math.min(n - 1, ls.sub + 1), ls.sub >= n - 1),
      btn("ls-last", "»", n - 1, ls.sub >= n - 1),
    );
    const slider = el("input", { type: "range", id: "ls-slider", min: "0", max: String(Math.max(0, n - 1)), value: String(ls.sub), "aria-label": t("ls_steps") });
    slider.addEventListener("input", () => { ls.sub = Number(slider.value); show(); });
    bar.append(slider, el("output", { id: "ls-step-label", text: t("ls_step_of", { k: ls.sub + 1, n }) }));
    return bar;
  }

  // Views may mark the drawing (it is redrawn on every re-run, so this is applied again).
  function decorate() {
    Object.entries(VIEWS).forEach(([name, v]) => {
      if (v.decorate) v.decorate(ls.data[name], ls.name === name);
    });
  }

  function show() {
    tabs();
    document.body.classList.toggle("ls-practice-on", ls.name === "practice");
    if (ls.name && VIEWS[ls.name] && VIEWS[ls.name].local && st()) ls.trace = st().trace;
    const body = $("#lesson-body");
    if (!body) return;
    const s = st();
    if (!ls.name) { body.replaceChildren(el("p", { class: "note", text: t("ls_pick") })); body.dataset.lesson = ""; decorate(); return; }
    body.dataset.lesson = ls.name;
    const intro = el("p", { class: "ls-intro", text: t("ls_intro_" + ls.name) });
    if (ls.error) { body.replaceChildren(intro, el("p", { class: "ls-error", role: "alert", text: ls.error })); return; }
    const data = ls.data[ls.name];
    const view = VIEWS[ls.name];
    if (!data || !view || !ls.trace) { body.replaceChildren(intro, el("p", { class: "note", text: t("running") })); return; }
    const kids = [intro];
    let content;
    try {
      if (view.follows) {
        const k = Math.min(s ? s.step : 0, ls.trace.steps.length - 1);
        content = view.render(data, k, ls.trace);
      } else {
        kids.push(stepper(view, data));
        content = view.render(data, ls.sub, ls.trace);
      }
    } catch (e) {
      content = el("p", { class: "ls-error", role: "alert", text: String(e) });
    }
    kids.push(content);
    body.replaceChildren(...kids);
    decorate();
    body.classList.toggle("ls-loading", ls.loading);
  }

  // ------------------------------------------------------------------------------------------
  // Wiring

  let lastKey = null, lastStep = null, lastLang = null;
  document.addEventListener("gradtrace:render", () => {
    const s = st();
    if (!s) return;
    const key = programKey(s);
    if (key !== lastKey && s.trace) {
      lastKey = key;
      if (ls.name && !s.error) load(ls.name);
    }
    if (s.step !== lastStep || s.lang !== lastLang) {
      const relabel = s.lang !== lastLang;
      lastStep = s.step; lastLang = s.lang;
      if (relabel) {
        panel.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = t(e.dataset.i18n); });
      }
      const view = VIEWS[ls.name];
      if (relabel || (view && view.follows)) show();
    }
  });

  panel.addEventListener("click", (ev) => {
    const b = ev.target.closest && ev.target.closest("button[data-lesson]");
    if (b) choose(b.dataset.lesson === ls.name ? null : b.dataset.lesson);
  });

  const examples = $("#examples");
  if (examples) {
    examples.addEventListener("change", () => {
      const ex = (boot.examples || []).find((e) => e.id === examples.value);
      if (ex && ex.lesson) {
        ls.options = Object.assign({}, ls.options, ex.lesson_options || {});
        if (ex.lesson_mode) ls.modes[ex.lesson] = ex.lesson_mode;
        ls.key = null;
        ls.name = null;
        ls.pending = ex.lesson; // chosen once the example's program has run
        lastKey = null;
      }
    });
    document.addEventListener("gradtrace:render", () => {
      if (ls.pending && st() && st().trace && !st().running) {
        const name = ls.pending;
        const ex = (boot.examples || []).find((e) => e.id === examples.value);
        if (ex && st().source === ex.source) { ls.pending = null; choose(name); }
      }
    });
  }

  window.gradtraceLessons = Object.freeze({
    pairs() { return ls.name ? [["lesson", ls.name]] : []; },
    choose,
    get state() { return ls; },
    views: VIEWS,
  });

  function start() {
    if (initial && VIEWS[initial]) choose(initial);
    else show();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
