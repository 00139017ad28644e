"""The passes of a run: each `backward()` (and `torch.autograd.grad`, `jax.grad(f)(x)`) runs
where the program calls it, and is recorded as one pass: its output, seed, order and steps, the
leaves' values and grads before and after. Grads accumulate on leaves across passes, as
PyTorch's do; a pass frees its graph unless `retain_graph`, and backward through a freed node
that saved tensors is PyTorch's error. A program with no such call gets one implicit pass on
its last statement.

What the trace keeps is bounded: the first pass and the latest are kept whole, and the passes
between are summarised (their steps and the nodes only they made dropped, their value and
grads kept) whenever the trace would pass max_trace_numbers or the graph max_nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.autograd.backward import BackwardError
from engine.autograd.backward import backward as walk_backward
from engine.autograd.graph import topological_order
from engine.autograd.ops import shape_text
from engine.autograd.value import Span, Value, creation_mark
from engine.errors import fail
from engine.tracing.cost import NUMBERS_PER_EDGE
from engine.tracing.record import TraceRecorder


def saves_something(node: Value) -> bool:
    """Does node's backward read a tensor its forward saved (then a second backward through
    it, once freed, is PyTorch's error)? The op says (Op.saves)."""
    assert node.op is not None
    return bool(node.op.saves([x.requires_grad for x in node.inputs]))


@dataclass(eq=False)
class Pass:
    """One backward pass as the trace shows it."""

    index: int
    kind: str  # "backward", "grad" (torch.autograd.grad, jax.grad) or "implicit"
    output: Value
    span: Span | None
    seed: np.ndarray | None
    value: np.ndarray
    leaves_before: dict[int, np.ndarray]
    grads_before: dict[int, np.ndarray | None]
    topo: list[Value] = field(default_factory=list)
    records: list[Any] | None = None  # None once summarised
    grads_after: dict[int, np.ndarray | None] = field(default_factory=dict)
    walked: dict[int, Any] = field(default_factory=dict)  # each node's grad after the walk
    numbers: int = 0

    @property
    def kept(self) -> bool:
        return self.records is not None


class Passes:
    """The passes of one run, and the leaves' state between them."""

    def __init__(self, it: Any, options: Any) -> None:
        self.it = it
        self.accumulate = getattr(options, "accumulate", "add")
        self.order = getattr(options, "order", "dfs")
        self.passes: list[Pass] = []
        self.leaves: list[Value] = []
        self.pass_of: dict[int, int] = {}
        self.freed: set[int] = set()
        self.folded: set[int] = set()
        self.retained: set[int] = set()
        self.views: dict[int, Value] = {}
        self.grads_built: list[dict[str, Any]] = []
        self.transforming = 0
        self.forward_output: Value | None = None  # a forward-mode transform's function
        self.tangent_passes: list[dict[str, Any]] = []  # forward-mode transforms' passes
        self.forward_made: set[int] = set()  # the constants those transforms gave
        self.numbers = 0  # what the kept passes' steps and summaries hold
        self.modified: dict[int, int] = {}  # a tensor changed in place: the seq made then

    # --- the graph as it grows ------------------------------------------------------------
    def joined(self, node: Value) -> None:
        if node.kind == "leaf":
            self.leaves.append(node)
            return
        current = len(self.passes)
        self.pass_of[node.seq] = current
        for x in node.inputs:  # a node an earlier pass made, used again: it lives with this one
            p = self.pass_of.get(x.seq)
            if p is not None and 0 < p < current:
                self.pass_of[x.seq] = current

    def make_room(self) -> bool:
        """Summarise the oldest pass that may be (neither the first nor the latest): its
        steps and the nodes only it made leave the trace. False when none may."""
        for p in self.passes[1:-1]:
            if p.kept:
                self.summarise(p)
                return True
        return False

    def summarise(self, p: Pass) -> None:
        it = self.it
        self.numbers -= p.numbers
        p.records, p.topo, p.walked = None, [], {}
        p.numbers = self.summary_numbers()
        self.numbers += p.numbers
        gone = {seq for seq, k in self.pass_of.items() if k == p.index}
        if gone:
            kept = [n for n in it.nodes if n.seq not in gone]
            it.elements -= sum(n.data.size for n in it.nodes if n.seq in gone)
            it.nodes[:] = kept
            it.registered -= gone
            for seq in gone:
                del self.pass_of[seq]

    def summary_numbers(self) -> int:
        return 3 * sum(leaf.data.size for leaf in self.leaves) + 2

    # --- updates between passes --------------------------------------------------------------
    def updated(self, owner: Value, data: np.ndarray, counted: bool = True) -> None:
        """A tensor's numbers changed in place (an update under no_grad, an optimizer's step):
        a new array, so what the passes before kept of it stays as it was. `counted`: the
        change bumps its version, as PyTorch's in-place ops do (through `.data` it does not),
        so a node made before that saved it cannot go backward any more."""
        owner.data = np.asarray(data, dtype=np.float64).reshape(owner.data.shape)
        if counted:
            self.modified[owner.seq] = creation_mark()

    def check_saved(self, topo: list[Value], node: Any) -> None:
        """PyTorch's version check: a node whose backward reads an input that was changed in
        place after the node was made is an error, not a grad from the new numbers."""
        for n in topo:
            if n.op is None or not n.requires_grad:
                continue
            changed = [
                (k, x) for k, x in enumerate(n.inputs) if self.modified.get(x.seq, -1) > n.seq
            ]
            if changed:
                saved = n.op.saves([x.requires_grad for x in n.inputs])
                for k, x in changed:
                    if f"in{k}" in saved:
                        name = x.name or (self.it.src.segment(x.span) if x.span else "?")
                        raise self.it.error("backward_saved_modified", node, "backward",
                                            name=name, op=n.op.name)  # fmt: skip

    def set_grad(self, owner: Value, grad: np.ndarray | None) -> None:
        if grad is not None and np.shape(grad) != owner.data.shape:
            raise self.it.error("grad_shape", None, "shape", a=shape_text(np.shape(grad)),
                                b=shape_text(owner.data.shape))  # fmt: skip
        owner.grad = grad

    def make_leaf(self, owner: Value, node: Any) -> Value:
        """`requires_grad_()` on a tensor that needs no grad: it is a leaf from now on (the
        constants it was computed from are not kept)."""
        if owner.requires_grad:
            if owner.kind != "leaf":
                raise self.it.error("requires_grad_non_leaf", node, "invalid")
            return owner
        made_of = owner.inputs
        owner.kind, owner.op, owner.inputs, owner.requires_grad = "leaf", None, (), True
        self.pass_of.pop(owner.seq, None)
        self.drop_unused(made_of)
        if owner.seq in self.it.registered:
            self.leaves.append(owner)
        self.folded.add(owner.seq)
        return owner

    def make_constant(self, owner: Value) -> None:
        """`x.requires_grad = False` on a leaf: a plain tensor from now on (its grad as it is;
        a pass through a graph made before adds nothing to it, as PyTorch's)."""
        owner.kind, owner.requires_grad = "const", False
        if owner in self.leaves:
            self.leaves.remove(owner)

    def drop_unused(self, made_of: tuple[Value, ...]) -> None:
        """The unnamed constants a new leaf was computed from leave the graph when nothing
        else uses them (`V = 0.01 * torch.randn(2, 3)`, then `V.requires_grad_()`)."""
        it = self.it
        todo, found = list(made_of), {}
        while todo:
            n = todo.pop()
            if n.seq in it.registered and n.name is None and not n.requires_grad:
                found[n.seq] = n
                todo.extend(n.inputs)
        if not found:
            return
        used = {x.seq for n in it.nodes if n.seq not in found for x in n.inputs}
        gone = {seq for seq in found if seq not in used}
        it.nodes[:] = [n for n in it.nodes if n.seq not in gone]
        it.registered -= gone
        it.elements -= sum(found[seq].data.size for seq in gone)

    def retains(self, owner: Value) -> bool:
        return owner.seq in self.retained

    # --- passes --------------------------------------------------------------------------------
    def backward(self, root: Value, seed: Value | None, retain: bool, node: Any) -> None:
        """`root.backward(gradient=seed)`: a pass, the leaves' grads added to."""
        self.check_root(root, seed, node)
        self.run("backward", root, seed, retain, node, accumulate=True)

    def gradients(
        self, root: Value, wrt: list[Value], seed: Value | None, retain: bool, node: Any
    ) -> list[Any]:
        """torch.autograd.grad(root, wrt): a pass whose grads are returned, the leaves' .grad
        left as they were."""
        self.check_root(root, seed, node)
        saved = [(leaf, leaf.grad) for leaf in self.leaves]
        for leaf in self.leaves:
            leaf.grad = None
        try:
            p = self.run("grad", root, seed, retain, node, accumulate=False)
            in_topo = {n.seq for n in p.topo} if p.topo else set(p.walked)
            found = [x.grad if x.seq in in_topo or x is root else None for x in wrt]
        finally:
            for leaf, g in saved:
                leaf.grad = g
        p.grads_before = {leaf.seq: g for leaf, g in saved}  # .grad as the program sees it
        p.grads_after = dict(p.grads_before)
        return found

    def implicit(self, root: Value) -> None:
        """The pass of a program with no backward call: on its output, seeded with ones."""
        self.run("implicit", root, None, True, None, accumulate=True)

    def check_root(self, root: Value, seed: Value | None, node: Any) -> None:
        it = self.it
        if not root.requires_grad:
            raise it.error("backward_no_grad", node, "backward", name=self.text(node))
        if seed is None and root.data.size != 1:
            raise it.error("backward_not_scalar", node, "backward", name=self.text(node),
                           shape=shape_text(root.data.shape))  # fmt: skip
        if seed is not None and seed.data.shape != root.data.shape:
            raise it.error("backward_seed_shape", node, "shape", name=self.text(node),
                           a=shape_text(root.data.shape),
                           b=shape_text(seed.data.shape))  # fmt: skip

    def text(self, node: Any) -> str:
        func = getattr(node, "func", None)
        owner = getattr(func, "value", None)
        span = self.it.where(owner if owner is not None else node)
        return self.it.src.segment(span) if span is not None else "the output"

    def run(
        self, kind: str, root: Value, seed: Value | None, retain: bool, node: Any, accumulate: bool
    ) -> Pass:
        it = self.it
        topo = topological_order(root, self.order)
        it.count("ops", node, len(topo))
        for n in topo:
            if n.seq in self.freed and n.requires_grad and saves_something(n):
                raise it.error("backward_twice", node, "backward")
        if self.modified:
            self.check_saved(topo, node)
        p = Pass(
            len(self.passes), kind, root, it.where(node),
            None if seed is None else np.array(seed.data, dtype=np.float64),
            root.data, {leaf.seq: leaf.data for leaf in self.leaves},
            {leaf.seq: leaf.grad for leaf in self.leaves},
        )  # fmt: skip
        p.topo = topo
        p.numbers = self.cost(topo, root)
        self.room_for(p, node)
        recorder = TraceRecorder(self.accumulate)
        buffers = self.start_buffers(topo) if accumulate and self.accumulate == "add" else {}
        try:
            walk_backward(root, recorder, self.accumulate, self.order, p.seed, topo,
                          keep_leaf_grads=accumulate)  # fmt: skip
        except BackwardError as err:
            for leaf, (prior, _) in buffers.items():
                leaf.grad = prior
            raise backward_error(err) from None
        it.count("work", node, sum(n.data.size for n in topo))
        records = recorder.records
        if buffers:
            records = self.add_buffers(buffers, records)
        p.records, p.topo = records, topo
        p.walked = {n.seq: n.grad for n in topo}
        self.numbers += p.numbers
        p.grads_after = {leaf.seq: leaf.grad for leaf in self.leaves}
        if not retain:
            self.freed.update(n.seq for n in topo if n.op is not None)
        self.passes.append(p)
        return p

    # A pass sums what reaches each leaf in a buffer of its own, then adds the sum to the
    # leaf's .grad, as PyTorch's AccumulateGrad does: `.grad + (c1 + c2)`, not
    # `(.grad + c1) + c2`, which rounds otherwise (2.0 + 0.68 - 0.68 is 1.9999999999999998).
    # The buffer starts at -0.0, the identity of +: its first contribution is kept exactly as it
    # comes, -0.0 too, as PyTorch stores a leaf's first grad.
    def start_buffers(self, topo: list[Value]) -> dict[Value, tuple[Any, Any]]:
        """Each leaf of the pass: its grad before, and the buffer it starts this pass with."""
        out = {}
        for n in topo:
            if n.op is None and n.requires_grad:
                start = empty_buffer(n.data.shape)
                out[n] = (n.grad, start)
                n.grad = start
        return out

    def add_buffers(self, buffers: dict[Value, tuple[Any, Any]], records: list[Any]) -> list[Any]:
        """Each leaf's .grad after the pass, its grad before plus its buffer; and the records
        with a leaf's terms carried on from its grad before the pass, so that a leaf's column
        shows the accumulation (its first pass carries on from 0)."""
        shift: dict[int, Any] = {}
        for leaf, (prior, start) in buffers.items():
            got = leaf.grad
            if got is start:  # nothing reached it: its grad as it was (0 for its first pass)
                leaf.grad = zero_like(start) if prior is None else prior
            else:
                leaf.grad = got if prior is None else prior + got
            shift[leaf.seq] = np.zeros(np.shape(start)) if prior is None else prior
        out = []
        for node, upstream, edges in records:
            if edges is None:
                if node.seq in shift:  # the output is a leaf: its seed is its buffer
                    upstream = shift[node.seq] + upstream
                out.append((node, upstream, edges))
                continue
            inputs = node.inputs
            if any(inputs[e[0]].seq in shift for e in edges):
                edges = [
                    (i, c, shift[inputs[i].seq] + b, shift[inputs[i].seq] + a)
                    if inputs[i].seq in shift
                    else (i, c, b, a)
                    for i, c, b, a in edges
                ]
            out.append((node, upstream, edges))
        return out

    def cost(self, topo: list[Value], root: Value) -> int:
        """The numbers this pass's trace will carry, counted before it runs: the seed, each
        op's upstream grad and its edges' terms, the value and grad of each node it made (the
        leaves' with the first pass), and its summary."""
        return sum(self.costs(topo, root).values()) + root.data.size + self.summary_numbers()

    def costs(self, topo: list[Value], root: Value) -> dict[int, int]:
        """The numbers each node adds to this pass's trace, by seq."""
        index = len(self.passes)
        out: dict[int, int] = {}
        for n in self.it.nodes:
            if self.pass_of.get(n.seq) == index or (index == 0 and n.kind == "leaf"):
                out[n.seq] = 2 * n.data.size
        for n in topo:
            if n.op is not None and n.requires_grad:
                out[n.seq] = (
                    out.get(n.seq, 0)
                    + n.data.size
                    + sum(NUMBERS_PER_EDGE * x.data.size for x in n.inputs if x.requires_grad)
                )
        return out

    def room_for(self, p: Pass, node: Any) -> None:
        """Make room for this pass's steps, which are kept (it is the latest): the passes
        between the first and it are summarised, oldest first, until it fits; a pass too large
        to keep beside the first is the limit's error, at the node that takes it over (or at
        the backward call)."""
        limit = self.it.limits.max_trace_numbers
        while self.numbers + p.numbers > limit and self.make_room():
            pass
        if self.numbers + p.numbers > limit and len(self.passes) > 1 and self.passes[-1].kept:
            self.summarise(self.passes[-1])  # the latest until now: this one is later
        if self.numbers + p.numbers > limit:
            where = self.it.where(node) if node is not None else self.crossing(p, limit)
            raise fail("limit_max_trace_numbers", where, code="too_large",
                       limit="max_trace_numbers", max=limit)  # fmt: skip

    def crossing(self, p: Pass, limit: int) -> Span | None:
        """The node whose numbers take this pass's trace over `limit`, in creation order."""
        total = self.numbers + p.value.size + self.summary_numbers()
        by_seq = {n.seq: n for n in p.topo} | {n.seq: n for n in self.it.nodes}
        for seq, numbers in sorted(self.costs(p.topo, p.output).items()):
            total += numbers
            if total > limit:
                return by_seq[seq].span
        return None


def empty_buffer(shape: tuple[int, ...]) -> Any:
    """A grad buffer before anything reaches it: -0.0, which any first contribution replaces
    exactly when added to it (-0.0 + c is c, -0.0 included)."""
    return np.full(shape, -0.0) if shape else np.float64(-0.0)


def zero_like(buffer: Any) -> Any:
    """A buffer that nothing reached, as the grad it stands for: +0."""
    shape = np.shape(buffer)
    return np.zeros(shape) if shape else np.float64(0.0)


def backward_error(err: BackwardError) -> Any:
    """A non-finite grad as the program's error, at the op that made it (the node's text is
    in the message already)."""
    return fail(err.msg.key, err.node.span, code=err.code, **err.msg.params)
