"""Judge-side checks of Tensor.backward: the judge describes a graph of the course's private ops, the
kernel builds it and runs the student's engine, and the judge compares the leaf gradients with its own
reverse-mode pass over the same description (float64, values from the secret seed)."""
from dataclasses import dataclass, field

import numpy as np

from ...verdict import failed, passed
from .ops import describe_error
from .probes import ProbeFailure, returned, returned_list

ORDER_HINT = ("a node's backward may only run after every path into it has delivered its gradient: "
              "walk the nodes in reverse topological order.")
REUSE_HINT = ("when a tensor feeds several ops (or one op twice), its gradients must be ADDED: "
              "grads[id(parent)] = grads[id(parent)] + g, not overwritten.")


@dataclass
class Graph:
    """Leaves (arrays), then ops in topological order: ("scale", k, i), ("plus", i, j), ("times", i, j),
    ("chain", factors, i) for a chain of Scale ops; `calls` are (node, upstream or None) backward() calls;
    `report` the nodes whose .grad the kernel sends back, named in `names`."""

    leaves: list
    ops: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    report: list = field(default_factory=list)
    names: list = field(default_factory=list)

    def add(self, *op):
        self.ops.append(op)
        return len(self.leaves) + len(self.ops) - 1

    def request(self):
        return {"leaves": self.leaves, "ops": [list(op) for op in self.ops],
                "calls": [[n, g] for n, g in self.calls], "report": self.report}


def expected_grads(graph):
    """The judge's own engine: forward values, then one reverse sweep per backward() call, accumulated."""
    values = [np.asarray(v, dtype=np.float64) for v in graph.leaves]
    parents = [()] * len(values)
    for kind, *args in graph.ops:
        if kind == "scale":
            values.append(values[args[1]] * args[0])
        elif kind == "chain":
            values.append(values[args[1]] * float(np.prod(args[0])))
        elif kind == "plus":
            values.append(values[args[0]] + values[args[1]])
        else:
            values.append(values[args[0]] * values[args[1]])
        parents.append((kind, *args))
    totals = [np.zeros_like(v) for v in values]
    for start, upstream in graph.calls:
        grads = [np.zeros_like(v) for v in values]
        grads[start] = np.ones_like(values[start]) if upstream is None else np.asarray(upstream, dtype=np.float64)
        for node in range(start, len(graph.leaves) - 1, -1):
            if not parents[node]:
                continue
            kind, *args = parents[node]
            g = grads[node]
            if kind in ("scale", "chain"):
                k = args[0] if kind == "scale" else float(np.prod(args[0]))
                grads[args[1]] = grads[args[1]] + g * k
            elif kind == "plus":
                grads[args[0]] = grads[args[0]] + g
                grads[args[1]] = grads[args[1]] + g
            else:
                a, b = values[args[0]], values[args[1]]
                grads[args[0]] = grads[args[0]] + g * b
                grads[args[1]] = grads[args[1]] + g * a
        totals = [t + g for t, g in zip(totals, grads)]
    return [totals[i] for i in graph.report]


def factor(rng):
    """A secret nonzero scale: |k| in [0.5, 3], two decimals, either sign."""
    return float(np.round(rng.uniform(0.5, 3.0), 2) * rng.choice([-1.0, 1.0]))


def values(rng, shape):
    return np.asarray(rng.uniform(-2.0, 2.0, size=shape), dtype=np.float32).astype(np.float64)


def product(rng):
    g = Graph([values(rng, (2, 2)), values(rng, (2, 2))])
    g.calls = [(g.add("times", 0, 1), None)]
    g.report, g.names = [0, 1], ["a", "b"]
    return "two inputs: c = a * b, so a.grad = b and b.grad = a", g, \
        "call node._op.backward(out_grad, node) and hand the i-th gradient to node._inputs[i]."


def diamond(rng):
    k1, k2 = factor(rng), factor(rng)
    g = Graph([values(rng, (3,))])
    b = g.add("scale", k1, 0)
    g.calls = [(g.add("plus", b, g.add("scale", k2, b)), None)]
    g.report, g.names = [0, b], ["a", "b"]
    return (f"a diamond: b = {k1:g}a, c = {k2:g}b, e = b + c, so de/da = {k1:g}·(1 + {k2:g}) = {k1 * (1 + k2):g}",
            g, ORDER_HINT)


def reuse(rng):
    g = Graph([values(rng, (2,)), values(rng, (3,))])
    y = g.add("times", 0, 0)
    b = g.add("plus", 1, 1)
    g.calls = [(y, None), (g.add("plus", b, b), None)]
    g.report, g.names = [0, 1], ["a (in y = a * a)", "a (in b = a + a, c = b + b)"]
    return "reuse: y = a * a, so dy/da = 2a; and b = a + a, c = b + b, so dc/da = 4", g, REUSE_HINT


def accumulation(rng):
    k1, k2 = factor(rng), factor(rng)
    g = Graph([values(rng, (2,))])
    g.calls = [(g.add("scale", k1, 0), None), (g.add("scale", k2, 0), None)]
    g.report, g.names = [0], ["a"]
    return (f"two backward() calls: ({k1:g}a).backward() then ({k2:g}a).backward() leave a.grad = {k1 + k2:g}", g,
            "backward() adds to an existing .grad (that is why training loops call zero_grad); it must not replace it.")


def explicit_grad(rng):
    k = factor(rng)
    g = Graph([values(rng, (2, 3))])
    g.calls = [(g.add("scale", k, 0), values(rng, (2, 3)))]
    g.report, g.names = [0], ["a"]
    return (f"a non-scalar output with an explicit gradient: y = {k:g}a, y.backward(g) gives a.grad = {k:g}g", g,
            "backward(grad) starts from `grad` when one is given; only grad=None means all ones.")


def long_chain(rng, length=10_000):
    signs = rng.choice([-1.0, 1.0], size=length)
    g = Graph([values(rng, (1,))])
    g.calls = [(g.add("chain", signs, 0), None)]
    g.report, g.names = [0], ["a"]
    return (f"a chain of {length:,} ops: y = ±1 · ±1 · ... · a, so dy/da = {float(np.prod(signs)):g}", g,
            "every node on the chain passes out_grad on.")


GRAPHS = {"product": product, "diamond": diamond, "reuse": reuse, "accumulation": accumulation,
          "explicit_grad": explicit_grad, "long_chain": long_chain}


def engine(rng, name):
    """One property of the student's Tensor.backward, on a secret graph of private ops."""
    title, graph, hint = GRAPHS[name](rng)
    reply = yield {"kind": "engine", "graph": graph.request()}
    if "error" in reply:
        outcome = returned(reply["error"])
        if not reply.get("built"):
            return failed(f"{title}: the course's graph could not be built with your Tensor and Function: "
                          f"{outcome.error_type}: {outcome.message}")
        if outcome.error_type == "RecursionError":
            return failed(f"{title}: backward() hit Python's recursion limit (sys.getrecursionlimit() = 1000 by default).\n"
                          "  Hint: a recursive depth-first search needs one stack frame per node; build the topological "
                          "order with an explicit stack (a list) and a loop instead.")
        return failed(describe_error("Tensor", "backward", outcome) + f"\n  while checking: {title}")
    got = returned_list(reply, "grads", len(graph.report))
    for name, want, g in zip(graph.names, expected_grads(graph), got):
        if g.kind == "none":
            return failed(f"{title}: {name}.grad is None after backward(); expected {np.round(want, 4).tolist()}.\n  Hint: {hint}")
        if g.failed:
            raise ProbeFailure(f"reading {name}.grad raised {g.error_type}")
        if g.kind != "array" or g.type_name != "numpy.ndarray":
            return failed(f"{title}: {name}.grad is a {g.type_name or g.kind}; store a numpy array in .grad (out_grad.data).")
        if g.value.shape != want.shape:
            return failed(f"{title}: {name}.grad has shape {g.value.shape}, expected {want.shape}.\n  Hint: {hint}")
        if not np.allclose(g.value, want, rtol=1e-4, atol=1e-5):
            return failed(f"{title}: {name}.grad is {np.round(g.value, 4).tolist()}, "
                          f"expected {np.round(want, 4).tolist()}.\n  Hint: {hint}")
    return passed(f"✔ {title}")
