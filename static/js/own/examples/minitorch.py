# A MiniTorch-style engine: each op is a ScalarFunction with forward(ctx, ...) and
# backward(ctx, d_output); apply() runs forward and remembers the inputs in the result's
# history. backpropagate() walks the graph in reverse topological order and accumulates each
# returned derivative into the input's .derivative.
import math


class Context:
    """What forward saves for backward."""

    def __init__(self):
        self.saved_values = ()

    def save_for_backward(self, *values):
        self.saved_values = values


class ScalarHistory:
    def __init__(self, last_fn=None, ctx=None, inputs=()):
        self.last_fn = last_fn
        self.ctx = ctx
        self.inputs = inputs


class Scalar:
    def __init__(self, v, back=None, name=None):
        self.data = float(v)
        self.history = back if back is not None else ScalarHistory()
        self.derivative = None
        self.name = name

    def is_leaf(self):
        return self.history.last_fn is None

    def accumulate_derivative(self, d):
        self.derivative = (self.derivative or 0.0) + d

    def __add__(self, b):
        return Add.apply(self, b)

    def __mul__(self, b):
        return Mul.apply(self, b)

    def __neg__(self):
        return Neg.apply(self)

    def log(self):
        return Log.apply(self)

    def sigmoid(self):
        return Sigmoid.apply(self)

    def relu(self):
        return ReLU.apply(self)

    def backward(self, d_output=1.0):
        backpropagate(self, d_output)


class ScalarFunction:
    @classmethod
    def apply(cls, *vals):
        scalars = [v if isinstance(v, Scalar) else Scalar(v) for v in vals]
        ctx = Context()
        c = cls.forward(ctx, *[s.data for s in scalars])
        return Scalar(c, ScalarHistory(cls, ctx, tuple(scalars)))


class Add(ScalarFunction):
    """f(x, y) = x + y"""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, d_output):
        return d_output, d_output


class Mul(ScalarFunction):
    """f(x, y) = x * y"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, d_output):
        a, b = ctx.saved_values
        return d_output * b, d_output * a


class Neg(ScalarFunction):
    """f(x) = -x"""

    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, d_output):
        return (-d_output,)


class Log(ScalarFunction):
    """f(x) = log(x)"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return math.log(a)

    @staticmethod
    def backward(ctx, d_output):
        (a,) = ctx.saved_values
        return (d_output / a,)


class Sigmoid(ScalarFunction):
    """f(x) = 1 / (1 + e^-x)"""

    @staticmethod
    def forward(ctx, a):
        s = 1.0 / (1.0 + math.exp(-a))
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, d_output):
        (s,) = ctx.saved_values
        return (d_output * s * (1.0 - s),)


class ReLU(ScalarFunction):
    """f(x) = max(0, x)"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return max(0.0, a)

    @staticmethod
    def backward(ctx, d_output):
        (a,) = ctx.saved_values
        return (d_output if a > 0 else 0.0,)


def topological_sort(variable):
    """Every node the variable depends on, each after all of its consumers (iterative DFS)."""
    order, seen, stack = [], set(), [(variable, False)]
    while stack:
        v, done = stack.pop()
        if done:
            order.append(v)
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        stack.append((v, True))
        for parent in v.history.inputs:
            stack.append((parent, False))
    return list(reversed(order))


def backpropagate(variable, deriv):
    variable.accumulate_derivative(deriv)
    for v in topological_sort(variable):
        if v.is_leaf():
            continue
        grads = v.history.last_fn.backward(v.history.ctx, v.derivative)
        for parent, g in zip(v.history.inputs, grads, strict=True):
            parent.accumulate_derivative(g)


# A logistic unit with a log-loss: sigmoid(w*x + b), then -log of it.
x = Scalar(1.5, name="x")
w = Scalar(-0.8, name="w")
b = Scalar(0.3, name="b")
z = w * x + b
p = z.sigmoid()
loss = -(p.log())
loss.backward()
print(w.derivative, b.derivative)
