/* gradtrace's reveal.js plugin: each backward step of a figure made by `gradtrace reveal` is a
 * fragment, so the clicker (→, PageDown, Space) walks the graph one step at a time, with the
 * step's sentence and the leaves' grads under it; going back undoes the steps.
 *
 *   <script src="gradtrace-reveal.js"></script>
 *   <script>Reveal.initialize({ plugins: [RevealGradtrace] });</script>
 *
 * A figure (<figure class="gradtrace">) holds step 0's drawing and, in its gradtrace-data
 * script, the changes each step makes to the drawing's elements (attributes and texts, the
 * elements counted in document order), the sentences and the grads. The step on show is the
 * number of the figure's fragments that reveal.js has made visible, read again after every
 * fragment and slide event, so any way of moving (keys, jumps, the overview) lands right.
 * No network, no module: a classic script that works from file://. */
(function () {
  "use strict";

  var STYLE_ID = "gradtrace-reveal-style";
  var STYLE = [
    ".reveal section[data-gradtrace] > h3 { text-transform: none; }",
    ".reveal figure.gradtrace { margin: 0 auto; }",
    ".reveal figure.gradtrace .gradtrace-drawing svg { display: block; width: 100%; height: auto; max-height: 430px; margin: 0 auto; }",
    ".reveal figure.gradtrace .gradtrace-sentence { font-size: 0.5em; line-height: 1.35; min-height: 2.7em; margin: 0.4em 0 0.2em; text-align: left; }",
    ".reveal figure.gradtrace .gradtrace-step { font-weight: bold; margin-right: 0.4em; }",
    ".reveal figure.gradtrace .gradtrace-grads { font-size: 0.5em; margin: 0; font-family: 'DejaVu Sans Mono', monospace; text-align: left; }",
    ".reveal figure.gradtrace .gradtrace-grad { margin-right: 1.2em; white-space: nowrap; }",
    ".reveal figure.gradtrace .gradtrace-grad.changed .v { background: #ffd43b; font-weight: bold; padding: 0 0.15em; }",
    ".reveal figure.gradtrace figcaption { font-size: 0.5em; }",
    ".reveal figure.gradtrace .gradtrace-fragment { display: none; }",
  ].join("\n");

  function addStyle() {
    if (document.getElementById(STYLE_ID)) return;
    var style = document.createElement("style");
    style.id = STYLE_ID;
    style.textContent = STYLE;
    document.head.appendChild(style);
  }

  function elementsOf(host) {
    var svg = host.querySelector("svg");
    return svg ? [svg].concat(Array.prototype.slice.call(svg.querySelectorAll("*"))) : [];
  }

  // What every change overwrites, found by walking the steps forward once from step 0 (the
  // figure as written): undo[k] takes step k back to step k-1.
  function undoPatches(els, patches) {
    var now = {};
    function current(i, name) {
      var key = i + "\u0000" + name;
      if (!(key in now)) now[key] = name === null ? els[i].textContent : els[i].getAttribute(name);
      return key;
    }
    return patches.map(function (changes) {
      return changes.map(function (c) {
        var i = c[0], attrs = {}, text = null;
        Object.keys(c[1]).forEach(function (name) {
          var key = current(i, name);
          attrs[name] = now[key];
          now[key] = c[1][name];
        });
        if (c[2] !== null) {
          var tkey = current(i, null);
          text = now[tkey];
          now[tkey] = c[2];
        }
        return [i, attrs, text];
      });
    });
  }

  function apply(els, changes) {
    changes.forEach(function (c) {
      var el = els[c[0]];
      Object.keys(c[1]).forEach(function (name) {
        var v = c[1][name];
        if (v === null) el.removeAttribute(name);
        else el.setAttribute(name, v);
      });
      if (c[2] !== null) el.textContent = c[2];
    });
  }

  function prepare(fig) {
    var script = fig.querySelector("script.gradtrace-data");
    var host = fig.querySelector(".gradtrace-drawing");
    if (!script || !host) return null;
    var data = JSON.parse(script.textContent);
    var els = elementsOf(host);
    if (els.length !== data.elements) {
      console.error("gradtrace: the drawing has " + els.length + " elements, its data expects " + data.elements);
      return null;
    }
    var marks = Array.prototype.slice.call(fig.querySelectorAll(".fragment[data-gradtrace-step]"));
    if (!marks.length) {
      for (var k = 1; k < data.steps; k++) {
        var m = document.createElement("span");
        m.className = "fragment gradtrace-fragment";
        m.setAttribute("data-gradtrace-step", String(k));
        m.setAttribute("aria-hidden", "true");
        fig.appendChild(m);
        marks.push(m);
      }
    }
    return {
      fig: fig, host: host, data: data, els: els, marks: marks, step: 0,
      undo: undoPatches(els, data.patches),
      says: fig.querySelector(".gradtrace-says"),
      label: fig.querySelector(".gradtrace-step"),
      grads: Array.prototype.slice.call(fig.querySelectorAll(".gradtrace-grad")),
    };
  }

  function show(f, k) {
    if (k === f.step) return;
    for (; f.step < k; f.step++) apply(f.els, f.data.patches[f.step + 1]);
    for (; f.step > k; f.step--) apply(f.els, f.undo[f.step]);
    f.step = k;
    f.fig.setAttribute("data-gradtrace-step", String(k));
    if (f.label) f.label.textContent = f.data.stepOf.replace("{k}", k).replace("{n}", f.data.steps - 1);
    if (f.says) f.says.textContent = f.data.sentences[k];
    var row = f.data.grads[k] || [];
    f.grads.forEach(function (span, i) {
      if (!row[i]) return;
      span.querySelector(".v").textContent = row[i][0];
      span.classList.toggle("changed", !!row[i][1]);
    });
  }

  // The step on show: one more for each of the figure's fragments on show.
  function sync(figures) {
    figures.forEach(function (f) {
      var k = 0;
      f.marks.forEach(function (m) { if (m.classList.contains("visible")) k++; });
      show(f, Math.min(k, f.data.steps - 1));
    });
  }

  function plugin() {
    var figures = [];
    return {
      id: "gradtrace",
      init: function (deck) {
        addStyle();
        var root = deck.getRevealElement ? deck.getRevealElement() : document;
        Array.prototype.forEach.call(root.querySelectorAll("figure.gradtrace"), function (fig) {
          var f = prepare(fig);
          if (f) figures.push(f);
        });
        var again = function () { sync(figures); };
        ["ready", "slidechanged", "fragmentshown", "fragmenthidden", "overviewhidden"].forEach(function (type) {
          deck.on(type, again);
        });
      },
      // For tests and authors' scripts: the step each stepped figure shows.
      steps: function () { return figures.map(function (f) { return f.step; }); },
    };
  }

  window.RevealGradtrace = plugin;
})();
