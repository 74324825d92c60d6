"""Checks of Tensor.backward, the engine, on graphs of private ops whose backwards are known to be right.

The student's own op classes are not used, so a broken Mul costs the Mul exercise, not these.
Each check is a graph described as data (`Graph`): the course's check builds it in the notebook from
a fixed seed, the judge's worker builds the same kind of description from a secret seed, and both
compare the student's gradients with one reverse sweep written here (`expected_grads`).
"""
from dataclasses import dataclass, field

import numpy as np

from autograder.student.checks import kernel_facts, running
from autograder.student.checks.describe import type_name
from autograder.student.checks.ch03_autodiff_engine_graph import build, ownership
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed

ORDER_HINT = ("a node's backward may only run after every path into it has delivered its gradient: "
              "walk the nodes in reverse topological order.")
REUSE_HINT = ("when a tensor feeds several ops (or one op twice), each use sends it a share of the gradient, "
              "and the shares must be added up: keeping only the last one drops the others.")
ACCUMULATE_HINT = ("backward() adds to an existing .grad (that is why training loops call zero_grad); "
                   "it must not replace it.")
ALIAS_HINT = (".grad must be an array of its own: an op may hand the very same out_grad to several inputs "
              "(Add does), so storing out_grad.data itself and later adding to it in place changes every "
              "tensor that shares that array.")
OWN_HINT = ("each tensor's .grad is an array of its own, which only that tensor's gradient lives in (section 3.8): an op "
            "may hand the very same out_grad to several inputs (Add does), so a .grad that is the gradient's array "
            "itself, not a copy of it, is shared, and an in-place change to one tensor's gradient (an optimizer's, "
            "a clipping) changes the others' too.")
CONSTANT_HINT = ("only inputs with requires_grad=True receive a gradient; a constant (requires_grad=False) "
                 "keeps .grad = None.")
RECURSION_HINT = ("a recursive depth-first search needs one stack frame per node; build the topological "
                  "order with an explicit stack (a list) and a loop instead.")


@dataclass
class Graph:
    """Leaves (arrays; those in `constants` have requires_grad=False), then ops in topological order:
    ("scale", k, i), ("plus", i, j), ("times", i, j), ("chain", factors, i) for a chain of Scale ops,
    ("total", i) for the sum of every element (backward() without a gradient needs one element);
    `calls` are (node, upstream or None) backward() calls, the upstream given as a Tensor, or as a plain
    NumPy array for the calls numbered in `plain`; `report` the nodes whose .grad is compared,
    named in `names`; `listing` says how the graph was built, for the message; `own` asks whether each reported
    .grad is an array of the tensor's own (engine_graph.ownership)."""

    leaves: list
    ops: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    report: list = field(default_factory=list)
    names: list = field(default_factory=list)
    constants: list = field(default_factory=list)
    listing: list = field(default_factory=list)
    plain: list = field(default_factory=list)
    own: bool = False

    def add(self, *op):
        self.ops.append(op)
        return len(self.leaves) + len(self.ops) - 1

    def request(self):
        return {"leaves": self.leaves, "constants": list(self.constants), "ops": [list(op) for op in self.ops],
                "calls": [[n, g] for n, g in self.calls], "report": self.report, "plain": list(self.plain),
                "depth": self.chain_length() > 0, "own": self.own}

    def chain_length(self):
        """How many ops the graph's chains hold: a graph with one is walked with its depth counted."""
        return sum(len(op[1]) for op in self.ops if op[0] == "chain")


def expected_grads(graph, overwrite=False):
    """The course's own engine: forward values, then one reverse sweep per backward() call, accumulated.
    A constant's gradient is None. `overwrite=True` replays the classic mistake of keeping only the last
    share a node receives, so a message can name it when the student's numbers match it."""
    values = [np.asarray(v, dtype=np.float64) for v in graph.leaves]
    parents = [()] * len(values)
    for kind, *args in graph.ops:
        if kind == "scale":
            values.append(values[args[1]] * args[0])
        elif kind == "chain":
            values.append(values[args[1]] * float(np.prod(args[0])))
        elif kind == "total":
            values.append(np.asarray(values[args[0]].sum()))
        elif kind == "plus":
            values.append(values[args[0]] + values[args[1]])
        else:
            values.append(values[args[0]] * values[args[1]])
        parents.append((kind, *args))

    def share(grads, node, g):
        grads[node] = g if overwrite else grads[node] + g

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
                share(grads, args[1], g * k)
            elif kind == "total":
                share(grads, args[0], g * np.ones_like(values[args[0]]))
            elif kind == "plus":
                share(grads, args[0], g)
                share(grads, args[1], g)
            else:
                a, b = values[args[0]], values[args[1]]
                share(grads, args[0], g * b)
                share(grads, args[1], g * a)
        totals = [t + g for t, g in zip(totals, grads)]
    return [None if i in graph.constants else totals[i] for i in graph.report]


def factor(rng):
    """A nonzero scale: |k| in [0.5, 3], two decimals, either sign."""
    return float(np.round(rng.uniform(0.5, 3.0), 2) * rng.choice([-1.0, 1.0]))


def values(rng, shape, low=-2.0, high=2.0):
    return np.asarray(rng.uniform(low, high, size=shape), dtype=np.float32).astype(np.float64)


# ── the graphs: each returns (title, Graph, hint) ────────────────────────────────────────────────

def product(rng):
    """c = (a * b).sum(); and, on their own leaves, d = (m * k).sum() with a constant k, which must get no
    gradient."""
    g = Graph([values(rng, (2, 2)) for _ in range(4)], constants=[3])
    g.calls = [(g.add("total", g.add("times", 0, 1)), None), (g.add("total", g.add("times", 2, 3)), None)]
    g.report, g.names = [0, 1, 2, 3], ["a", "b", "m", "k (a constant)"]
    return ("two inputs: c = (a * b).sum(), so a.grad = b and b.grad = a; and d = (m * k).sum() with a constant k "
            "(requires_grad=False), so m.grad = k and k.grad stays None"), g, \
        "an op's backward returns one gradient per input, in the order of node._inputs; each belongs to its own input."


def random_dags(rng, g, count=6):
    """Add `count` random graphs of 5 to 9 ops to `g` (which has no ops yet), each over fresh leaves, one
    of them a constant, with its root backward()-ed once: nodes reused at different depths, both argument
    orders, fan-in and fan-out. Fixed graphs cannot cover the ways an order goes wrong; these can."""
    graphs = []
    for _ in range(count):
        shape, size = (int(rng.integers(1, 4)),), int(rng.integers(2, 4))
        leaves = list(range(len(g.leaves), len(g.leaves) + size + 1))
        g.leaves += [values(rng, shape, -1.5, 1.5) for _ in leaves]
        g.constants.append(leaves[-1])
        graphs.append(leaves)
    for number, leaves in enumerate(graphs, start=1):
        label = {leaf: f"x{i}" for i, leaf in enumerate(leaves[:-1])} | {leaves[-1]: "k"}
        lines = [f"x0..x{len(leaves) - 2} require grad, k is a constant"]
        nodes, used = list(leaves), set()

        def add(kind, *args, text):
            node = g.add(kind, *args)
            label[node] = f"v{len(lines) - 1}"
            lines.append(f"{label[node]} = {text}")
            nodes.append(node)
            return node

        for _ in range(int(rng.integers(5, 10))):
            kind = str(rng.choice(["scale", "plus", "times", "times"]))
            i, j = (int(n) for n in rng.choice(nodes, size=2))
            if kind == "scale":
                k = factor(rng)
                add("scale", k, i, text=f"{k:g} * {label[i]}")
                used.add(i)
            else:
                add(kind, i, j, text=f"{label[i]} {'+' if kind == 'plus' else '*'} {label[j]}")
                used.update((i, j))
        loose = [n for n in nodes if n not in used and n != leaves[-1]]
        root = loose[0]
        for node in loose[1:]:
            root = add("plus", root, node, text=f"{label[root]} + {label[node]}")
        lines.append(f"{label[root]}.sum().backward()")
        g.calls.append((g.add("total", root), None))
        for leaf in leaves[:-1]:
            g.report.append(leaf)
            g.names.append(f"{label[leaf]} (random graph {number})")
            g.listing.append("; ".join(lines))


def diamond(rng):
    """The diamond b -> c -> e, b -> e, then random graphs."""
    k1, k2 = factor(rng), factor(rng)
    g = Graph([values(rng, (3,))])
    random_dags(rng, g)
    b = g.add("scale", k1, 0)
    g.calls.insert(0, (g.add("total", g.add("plus", b, g.add("scale", k2, b))), None))
    g.report, g.names, g.listing = [0, b] + g.report, ["a", "b"] + g.names, ["", ""] + g.listing
    return (f"the order: a diamond b = {k1:g}a, c = {k2:g}b, e = b + c, L = e.sum(), so dL/da = {k1:g}·(1 + {k2:g}) = "
            f"{k1 * (1 + k2):g}; then {len(g.calls) - 1} random graphs", g, ORDER_HINT)


def reuse(rng):
    g = Graph([values(rng, (2,)), values(rng, (3,))])
    y = g.add("times", 0, 0)
    b = g.add("plus", 1, 1)
    g.calls = [(g.add("total", y), None), (g.add("total", g.add("plus", b, b)), None)]
    g.report, g.names = [0, 1], ["a (in y = a * a)", "a (in b = a + a, c = b + b)"]
    return ("reuse: y = a * a, y.sum().backward(), so a.grad = 2a; and b = a + a, c = b + b, c.sum().backward(), "
            "so a.grad = 4"), g, REUSE_HINT


def accumulation(rng):
    """Two backward() calls add up; with L = p + q, whose backward hands both the very same out_grad, a
    second call must not leak through a shared array; and after M = (r + s).sum(), M.backward() once, r and s
    each own their .grad (a gradient stored without a copy is one array for both)."""
    k1, k2 = factor(rng), factor(rng)
    g = Graph([values(rng, (2,)), values(rng, (3,)), values(rng, (3,)), values(rng, (2, 2)), values(rng, (2, 2))],
              own=True)
    loss = g.add("total", g.add("plus", 1, 2))
    g.calls = [(g.add("total", g.add("scale", k1, 0)), None), (g.add("total", g.add("scale", k2, 0)), None),
               (loss, None), (loss, None), (g.add("total", g.add("plus", 3, 4)), None)]
    g.report, g.names = [0, 1, 2, 3, 4], ["a", "p", "q", "r", "s"]
    return (f"two backward() calls: ({k1:g}a).sum().backward() then ({k2:g}a).sum().backward() leave a.grad = "
            f"{k1 + k2:g}; L = (p + q).sum(), L.backward() twice leaves p.grad = q.grad = 2; M = (r + s).sum(), "
            "M.backward() once leaves r.grad and s.grad = 1, two arrays of their own"), g, ACCUMULATE_HINT


def explicit_grad(rng):
    """An explicit gradient, given as a Tensor, then as a NumPy array (section 3.8 accepts both)."""
    k, k2 = factor(rng), factor(rng)
    g = Graph([values(rng, (2, 3)), values(rng, (3,))])
    g.calls = [(g.add("scale", k, 0), values(rng, (2, 3))), (g.add("scale", k2, 1), values(rng, (3,)))]
    g.report, g.names, g.plain = [0, 1], ["a", "b"], [1]
    return (f"a non-scalar output with an explicit gradient: y = {k:g}a, y.backward(g) gives a.grad = {k:g}g; "
            f"z = {k2:g}b, z.backward(h) with h a NumPy array gives b.grad = {k2:g}h", g,
            "backward(grad) starts from `grad` when one is given, a Tensor or a NumPy array of the output's shape "
            "(wrap an array in a Tensor); only grad=None means all ones.")


def long_chain(rng, length=10_000):
    signs = rng.choice([-1.0, 1.0], size=length)
    g = Graph([values(rng, (1,))])
    g.calls = [(g.add("chain", signs, 0), None)]
    g.report, g.names = [0], ["a"]
    return (f"a chain of {length:,} ops: y = ±1 · ±1 · ... · a, so dy/da = {float(np.prod(signs)):g}", g,
            "every node on the chain passes out_grad on.")


GRAPHS = {"product": product, "diamond": diamond, "reuse": reuse, "accumulation": accumulation,
          "explicit_grad": explicit_grad, "long_chain": long_chain}


# ── the verdict, shared by the course's check and the judge ──────────────────────────────────────

@dataclass
class Grad:
    """A tensor's .grad as reported: None, or an array with its type's name."""

    is_none: bool
    type_name: str = ""
    value: np.ndarray = None


def evidence_hint(graph, got, index, hint):
    """The hint the numbers support: a known mistake is named only when the wrong gradient (entry
    `index`) is exactly what that mistake gives; otherwise the property's general rule."""
    value = got[index].value

    def gives(want):
        return want is not None and value.shape == want.shape and np.allclose(value, want, rtol=1e-4, atol=1e-5)

    if gives(expected_grads(graph, overwrite=True)[index]):
        return REUSE_HINT
    names = graph.names
    if hint == ACCUMULATE_HINT and names[index] in ("p", "q") and gives(np.full(value.shape, 4.0)):
        return ALIAS_HINT         # one array shared by c, p and q, added to in place three times
    return hint


def ownership_verdict(title, graph, owned):
    """Pass, or the first .grad that is not its tensor's own array (`owned`: engine_graph.ownership's facts)."""
    names = graph.names
    for i, j in (owned or {}).get("shared", []):
        return failed(f"{title}: {names[i]}.grad and {names[j]}.grad are one array (they share memory), so changing "
                      f"one in place changes the other.\n  Hint: {OWN_HINT}")
    for i in (owned or {}).get("readonly", []):
        return failed(f"{title}: {names[i]}.grad is a read-only array (a view that nobody may write into), so an "
                      f"in-place change to it fails.\n  Hint: {OWN_HINT}")
    return passed(f"✔ {title}")


def grads_verdict(title, graph, hint, got, owned=None):
    """Pass, or the first wrong gradient: its name, expected and received values, and a hint; then, for a graph
    that asks (`own`), the first .grad that is not an array of its tensor's own."""
    for index, (name, want, g) in enumerate(zip(graph.names, expected_grads(graph), got)):
        where = f"\n  The graph: {graph.listing[index]}" if graph.listing and graph.listing[index] else ""
        if want is None:
            if not g.is_none:
                return failed(f"{title}: {name}.grad is {g.type_name or 'set'} after backward(); expected None.{where}\n"
                              f"  Hint: {CONSTANT_HINT}")
            continue
        if g.is_none:
            return failed(f"{title}: {name}.grad is None after backward(); expected {np.round(want, 4).tolist()}.{where}\n"
                          f"  Hint: {hint}")
        if g.value is None or g.type_name != "numpy.ndarray":
            return failed(f"{title}: {name}.grad is a {g.type_name}; .grad holds a NumPy array of the gradient's values"
                          + (", and a Tensor's values are its .data." if "Tensor" in str(g.type_name) else "."))
        if g.value.shape != want.shape:
            return failed(f"{title}: {name}.grad has shape {g.value.shape}, expected {want.shape}.{where}\n"
                          f"  Hint: {hint}")
        if not np.allclose(g.value, want, rtol=1e-4, atol=1e-5):
            return failed(f"{title}: {name}.grad is {np.round(g.value, 4).tolist()}, expected "
                          f"{np.round(want, 4).tolist()}.{where}\n  Hint: {evidence_hint(graph, got, index, hint)}")
    return ownership_verdict(title, graph, owned)


DEPTH_HINT = ("Section 3.8 writes the search with an explicit stack (a list) and a loop, whose depth stays the same "
              "however deep the graph.")


HANDED_HINT = ("the gradient backward() starts from, ones or a NumPy `grad` it wraps, is a constant: a Tensor with "
               "requires_grad=False, so that no graph of the gradients' own computation is recorded (every op's "
               "backward would otherwise build one, and keep it alive, at every step).")


DTYPE_HINT = ("the gradient backward() starts from, ones or a NumPy `grad` it wraps, has the output's dtype, "
              "whatever the dtype of the array it was given (section 3.8).")


def handed_verdict(title, verdict, handed):
    """`verdict`, unless an op's backward was handed an out_grad that requires a gradient, or one of another dtype
    than its output. `handed`: engine_graph.probe_ops's record. Shared with the judge."""
    if not verdict.passed:
        return verdict
    if any(requires_grad for _, requires_grad, *_ in handed or []):
        return failed(f"{title}: an op's backward was handed an out_grad that requires a gradient, so the "
                      f"computation of the gradients was itself recorded as a graph.\n  Hint: {HANDED_HINT}")
    other = next(((got, want) for got, _, want, engines in handed or [] if engines and got != want), None)
    if other:
        return failed(f"{title}: an op's backward was handed an out_grad of dtype {other[0]} for an output of dtype "
                      f"{other[1]}.\n  Hint: {DTYPE_HINT}")
    return verdict


def depth_verdict(title, graph, depth, verdict):
    """`verdict`, unless a graph with a chain was walked right at about one nested Python call per node (a recursive
    search under a raised limit). Shared with the judge."""
    problem = verdict.passed and running.recursion_problem(title, depth, graph.chain_length(), DEPTH_HINT)
    return failed(problem) if problem else verdict


RECURSION_MESSAGE = ("backward() hit Python's recursion limit (sys.getrecursionlimit() = 1000 by default).\n"
                     f"  Hint: {RECURSION_HINT}")


# ── the course's check, in the notebook ───────────────────────────────────────────────────────────

CHECK_SEEDS = {"product": 1, "diamond": 2, "reuse": 3, "accumulation": 4, "explicit_grad": 5, "long_chain": 6}


def check_engine(Tensor, Function, name):
    """One property of the student's Tensor.backward, on the course's graph `name` (a fixed seed)."""
    title, graph, hint = GRAPHS[name](np.random.default_rng(CHECK_SEEDS[name]))
    handed = []
    nodes = build(graph.leaves, graph.constants, graph.ops, Tensor, Function, handed)
    depth = 0
    for index, (node, upstream) in enumerate(graph.calls):
        args = () if upstream is None else (np.array(upstream, dtype=np.float64),) if index in graph.plain else \
            (Tensor(upstream, dtype=nodes[node].data.dtype, requires_grad=False),)   # a Tensor: the output's dtype
        try:
            if graph.chain_length():
                depth = max(depth, kernel_facts.deepest_call(run_quietly, nodes[node].backward, *args))
            else:
                run_quietly(nodes[node].backward, *args)
        except RecursionError:
            return failed(f"{title}: {RECURSION_MESSAGE}")
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("Tensor", "backward", error) + f"\n  while checking: {title}")
    got = [Grad(True) if nodes[i].grad is None else
           Grad(False, type_name(nodes[i].grad), nodes[i].grad if isinstance(nodes[i].grad, np.ndarray) else None)
           for i in graph.report]
    owned = ownership([nodes[i].grad for i in graph.report]) if graph.own else None
    return depth_verdict(title, graph, depth, handed_verdict(title, grads_verdict(title, graph, hint, got, owned), handed))


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

@register("engine")
def engine_check(namespace, name):
    """One property of Tensor.backward: product, diamond, reuse, accumulation, explicit_grad, long_chain."""
    return check_engine(namespace["Tensor"], namespace["Function"], name)
