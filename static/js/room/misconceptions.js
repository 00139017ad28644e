/* The questions a class is asked about the next step, made from the trace on show, and the
 * misconceptions that name a wrong answer.
 *
 * Pure functions of a trace (the JSON of /api/render): no DOM, no store, so they are tested on
 * their own (tests/test_browser_room.py imports this module in the page).
 *   - "What is <name>.grad after the next step?": the grad the next step leaves on one of its
 *     inputs (a fan-out's input when the step has one: that is where `=` and `+=` differ).
 *     Named wrong values: `assign` (the last contribution only: `=` instead of `+=`) and
 *     `chain` (the grad before plus the local derivative, without × the upstream grad).
 *   - "Which node runs next?": a choice among the nodes that have not run yet. Named wrong
 *     choices: `fanout` (a node that is not ready: a node that uses it has not run).
 *   - "What is <name>.grad after pass k, if the zeroing line were missing?": from the training
 *     lesson's data (engine/lessons/training.py: the loop run again without its zeroing
 *     lines). Named wrong values: `nozero` (the grad with the zeroing: as if nothing changed)
 *     and `samepath` (the sum of the zeroed run's grads so far: but without zeroing the
 *     parameters move elsewhere, so every later pass's own grad differs too).
 */

// The word (engine/words/*.json) of each misconception's name.
export const MISCONCEPTIONS = Object.freeze({
  assign: "room_mis_assign",
  chain: "room_mis_chain",
  fanout: "room_mis_fanout",
  nozero: "room_mis_nozero",
  samepath: "room_mis_samepath",
});

// The most choices a "which node next" question offers.
export const MAX_CHOICES = 5;

// Two answers are the same number when they agree to about 4 significant digits (the tally
// groups floats so; a student types 0.7071 for 0.70710678).
export function sameNumber(a, b) {
  const x = Number(a), y = Number(b);
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  return Math.abs(x - y) <= 1e-9 + 5e-4 * Math.max(Math.abs(x), Math.abs(y));
}

// Whether `value` is the right answer to `q` ({kind, answer}).
export function isRight(q, value) {
  if (value === null || value === undefined || value === "") return false;
  return q.kind === "value" ? sameNumber(value, q.answer) : String(value) === String(q.answer);
}

// The misconception (a key of MISCONCEPTIONS) a wrong answer is explained by, or null.
export function misconceptionOf(q, value) {
  if (isRight(q, value)) return null;
  const hit = (q.named || []).find((m) => (q.kind === "value" ? sameNumber(m.value, value) : String(m.value) === String(value)));
  return hit ? hit.name : null;
}

function labels(trace) {
  const byId = {};
  trace.nodes.forEach((n) => { byId[n.id] = n; });
  return byId;
}

// The step after `k` and the grad question about it, or null when there is nothing to ask
// (the last step, or a step whose grads are tensors).
export function gradQuestion(trace, k) {
  const next = trace && trace.steps[k + 1];
  if (!next || k < 0) return null;
  const terms = (next.terms || []).filter((x) => typeof x.contribution === "number" && typeof x.after === "number");
  if (!terms.length) return null;
  const fan = terms.find((x) => typeof x.before === "number" && x.before !== 0);
  const id = (fan || terms[0]).input;
  const mine = terms.filter((x) => x.input === id); // x*x sends two terms to x
  const last = mine[mine.length - 1];
  const answer = last.after;
  const named = [];
  const add = (value, name) => {
    if (Number.isFinite(value) && !sameNumber(value, answer) && !named.some((m) => sameNumber(m.value, value))) named.push({ value, name });
  };
  add(last.contribution, "assign"); // `=`: the last write wins; what was there is lost
  const before = typeof mine[0].before === "number" ? mine[0].before : 0;
  if (typeof next.upstream === "number" && mine.every((x) => typeof x.local === "number")) {
    add(before + mine.reduce((s, x) => s + x.local, 0), "chain"); // the local derivative alone
  }
  const node = labels(trace)[id];
  return { kind: "value", topic: "grad", node: id, name: node ? node.label : id, step: k, answer, named };
}

// "Which node runs next?" after step `k`: the choices (labels, in topological order), the
// answer, and the choices that are not ready yet. Null when fewer than two nodes are left.
export function nextQuestion(trace, k) {
  const steps = trace ? trace.steps : [];
  const next = steps[k + 1];
  if (!next || k < 0) return null;
  const stepOf = {};
  steps.forEach((st, i) => { if (i > 0 && st.kind !== "seed") stepOf[st.node] = i; });
  const users = {}; // id -> the nodes that use it
  trace.nodes.forEach((n) => (n.inputs || []).forEach((i) => { (users[i] = users[i] || []).push(n.id); }));
  const notReady = (id) => (users[id] || []).some((u) => u in stepOf && stepOf[u] > k);
  const left = Object.keys(stepOf).filter((id) => stepOf[id] > k && id !== next.node);
  if (!left.length) return null;
  // The distractors that a misconception explains first, then the others, the nearest first.
  left.sort((a, b) => (notReady(b) - notReady(a)) || (stepOf[a] - stepOf[b]));
  const byId = labels(trace);
  const topo = {};
  trace.topo.forEach((id, i) => { topo[id] = i; });
  const picked = [next.node, ...left.slice(0, MAX_CHOICES - 1)].sort((a, b) => (topo[a] ?? 0) - (topo[b] ?? 0));
  const label = (id) => (byId[id] ? byId[id].label : id);
  const named = picked.filter((id) => id !== next.node && notReady(id)).map((id) => ({ value: label(id), name: "fanout" }));
  return { kind: "choice", topic: "next", step: k, choices: picked.map(label), answer: label(next.node), named };
}

// The pass question about pass `k` (0-based) of the training lesson's data, or null when the
// program has no zeroing loop or the answer is not a number.
export function passQuestion(training, k) {
  const z = training && training.training ? training.zero_grad : null;
  if (!z || !z.available || k < 0 || !training.coords.length) return null;
  const row = z.without.grads[k];
  const answer = row ? row[0] : null;
  if (typeof answer !== "number" || !Number.isFinite(answer)) return null;
  const named = [];
  const add = (value, name) => {
    if (Number.isFinite(value) && !sameNumber(value, answer) && !named.some((m) => sameNumber(m.value, value))) named.push({ value, name });
  };
  add(training.grads[k][0], "nozero");
  let sum = 0;
  for (let j = 0; j <= k; j++) sum += training.grads[j][0];
  add(sum, "samepath");
  const c = training.coords[0];
  return { kind: "value", topic: "pass", node: c.id, name: c.label, pass: k + 1, step: k, answer, named };
}
