"""Checks of Tensor.backward, the engine, on graphs of private ops whose backwards are known to be right.

The student's own op classes are not used, so a broken Mul costs the Mul exercise, not these.
"""
import numpy as np

from ..verdict import failed, passed
from .describe import type_name
from .ops import describe_exception, run_quietly


def probe_ops(Function, Tensor):
    """Scale, Plus and Times: tiny ops with numpy backwards, subclassing the notebook's Function."""

    def tensor(x):
        return Tensor(x, dtype=np.float64, requires_grad=False)

    class Scale(Function):
        def __init__(self, k):
            self.k = k

        def forward(self, a):
            return a * self.k

        def backward(self, out_grad, node):
            return tensor(out_grad.data * self.k)

    class Plus(Function):
        def forward(self, a, b):
            return a + b

        def backward(self, out_grad, node):
            return tensor(out_grad.data), tensor(out_grad.data)

    class Times(Function):
        def forward(self, a, b):
            return a * b

        def backward(self, out_grad, node):
            a, b = node._inputs
            return tensor(out_grad.data * b.data), tensor(out_grad.data * a.data)

    return Scale, Plus, Times


def leaf(Tensor, values):
    return Tensor(np.asarray(values, dtype=np.float64), dtype=np.float64, requires_grad=True)


def compare_grads(title, expectations, hint):
    """expectations: (name, tensor, expected ndarray). The first wrong one becomes the message."""
    for name, t, want in expectations:
        got = t.grad
        if got is None:
            return failed(f"{title}: {name}.grad is None after backward(); expected {np.round(want, 4).tolist()}.\n  Hint: {hint}")
        if not isinstance(got, np.ndarray):
            return failed(f"{title}: {name}.grad is a {type_name(got)}; store a numpy array in .grad (out_grad.data).")
        if got.shape != np.shape(want):
            return failed(f"{title}: {name}.grad has shape {got.shape}, expected {np.shape(want)}.\n  Hint: {hint}")
        if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            return failed(f"{title}: {name}.grad is {np.round(got, 4).tolist()}, expected {np.round(want, 4).tolist()}.\n  Hint: {hint}")
    return passed(f"✔ {title}")


def run_backward(title, output, *args):
    try:
        run_quietly(output.backward, *args)
    except RecursionError:
        return failed(f"{title}: backward() hit Python's recursion limit (sys.getrecursionlimit() = 1000 by default).\n"
                      "  Hint: a recursive depth-first search needs one stack frame per node; build the topological "
                      "order with an explicit stack (a list) and a loop instead.")
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Tensor", "backward", error) + f"\n  while checking: {title}")
    return None


def check_diamond(Tensor, Function):
    Scale, Plus, Times = probe_ops(Function, Tensor)
    title = "a diamond: b = 2a, c = 3b, e = b + c, so de/da = 2 + 6 = 8"
    a = leaf(Tensor, [1.0, -2.0, 0.5])
    b = Scale(2.0)(a)
    e = Plus()(b, Scale(3.0)(b))
    error = run_backward(title, e)
    return error or compare_grads(title, [("a", a, np.full(3, 8.0)), ("b", b, np.full(3, 4.0))],
                                  "a node's backward may only run after every path into it has delivered its gradient: "
                                  "walk the nodes in reverse topological order.")


def check_product(Tensor, Function):
    Scale, Plus, Times = probe_ops(Function, Tensor)
    title = "two inputs: c = a * b, so a.grad = b and b.grad = a"
    a, b = leaf(Tensor, [[1.0, 2.0], [3.0, 4.0]]), leaf(Tensor, [[-1.0, 0.5], [2.0, 3.0]])
    error = run_backward(title, Times()(a, b))
    return error or compare_grads(title, [("a", a, b.data), ("b", b, a.data)],
                                  "call node._op.backward(out_grad, node) and hand the i-th gradient to node._inputs[i].")


def check_reuse(Tensor, Function):
    Scale, Plus, Times = probe_ops(Function, Tensor)
    hint = ("when a tensor feeds several ops (or one op twice), its gradients must be ADDED: "
            "grads[id(parent)] = grads[id(parent)] + g, not overwritten.")
    title = "reuse: y = a * a, so dy/da = 2a"
    a = leaf(Tensor, [3.0, -1.0])
    verdict = run_backward(title, Times()(a, a)) or compare_grads(title, [("a", a, 2 * a.data)], hint)
    if not verdict.passed:
        return verdict
    title = "reuse: b = a + a, c = b + b, so dc/da = 4"
    a = leaf(Tensor, [1.0, 2.0, 3.0])
    b = Plus()(a, a)
    return run_backward(title, Plus()(b, b)) or compare_grads(title, [("a", a, np.full(3, 4.0))], hint)


def check_accumulation(Tensor, Function):
    Scale, Plus, Times = probe_ops(Function, Tensor)
    title = "two backward() calls: (3a).backward() then (2a).backward() leave a.grad = 3 + 2 = 5"
    a = leaf(Tensor, [1.0, 2.0])
    error = run_backward(title, Scale(3.0)(a)) or run_backward(title, Scale(2.0)(a))
    return error or compare_grads(title, [("a", a, np.full(2, 5.0))],
                                  "backward() adds to an existing .grad (that is why training loops call zero_grad); "
                                  "it must not replace it.")


def check_explicit_grad(Tensor, Function):
    Scale, Plus, Times = probe_ops(Function, Tensor)
    title = "a non-scalar output with an explicit gradient: y = 3a, y.backward(g) gives a.grad = 3g"
    a = leaf(Tensor, np.arange(6.0).reshape(2, 3))
    g = np.array([[1.0, -1.0, 2.0], [0.5, 0.0, -3.0]])
    error = run_backward(title, Scale(3.0)(a), Tensor(g, dtype=np.float64, requires_grad=False))
    return error or compare_grads(title, [("a", a, 3 * g)],
                                  "backward(grad) starts from `grad` when one is given; only grad=None means all ones.")


def check_long_chain(Tensor, Function, length=10_000):
    Scale, Plus, Times = probe_ops(Function, Tensor)
    title = f"a chain of {length:,} ops: y = 1.0 * 1.0 * ... * a, so dy/da = 1"
    a = leaf(Tensor, [2.0])
    y = a
    for _ in range(length):
        y = Scale(1.0)(y)
    return run_backward(title, y) or compare_grads(title, [("a", a, np.ones(1))], "every node on the chain passes out_grad on.")
