"""Judge-side checks of chapter 1's scalar `Value`: the kernel builds the judge's expressions on numbers
drawn from the secret seed and reports data (values, gradients, labels, which of the judge's objects
`_prev` holds); the judge computes the right numbers itself and gives `autograder/student/checks/ch01_scalar.py`'s
verdicts, through the same functions (`graph_problem`, `closure_problem`, `compare`, `numeric_problem`).
"""
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import Returned
from autograder.grading.judge.replies import (AsText, Bool, Const, Either, Failed, Flag, Int, Json, ListOf, Nested,
                                              Number, OneOf, Optional, Or, Raised, Real, Tag, Tagged, Text, Whole,
                                              read, wire)
from autograder.student.checks import ch01_scalar as rules
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges


def secret_seed(rng):
    """A seed for the course's own case generators (never 0, their worked example), from the secret rng."""
    return 1 + int(rng.integers(2 ** 62))


def number_or_shown(value, shown):
    """A reported .grad: the number itself, or a stand-in whose repr is the kernel's description."""
    if isinstance(value, (int, float)):
        return value
    return Shown(str(shown)[:60])


class Shown:
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


# ── the replies ──

# A member of _prev: one of the judge's inputs (by index), another Value (its data, NaN when not a float), or
# anything else (its repr).
MEMBER = Tagged({"input": OneOf(frozenset({0, 1})), "value": Or(Real(finite=False), Const(float("nan"))),
                 "other": AsText(100)})


@dataclass(frozen=True)
class Built:
    """The kernel's description of what `a op b` built: whether it is a Value (else its type), whether it is one
    of the inputs, whether the inputs changed, its data, _op and _prev (as members and as reprs)."""

    is_value: bool = wire(Flag())
    type_name: str = wire(AsText(200))
    is_input: bool = wire(Flag())
    inputs_changed: bool = wire(Or(Bool(), Const(True)))      # only a plain `false` says they did not
    data: float | None = wire(Number())
    data_repr: str = wire(AsText(200))
    op: str | None = wire(Or(Text(None), Const(None)))
    op_repr: str = wire(AsText(200))
    members: list[tuple[str, Any]] | None = wire(Optional(ListOf(MEMBER, most=16)))
    distinct: int = wire(Whole(99))
    prev_repr: str = wire(AsText(200))


@dataclass(frozen=True)
class Graphs:
    results: list[Failed | Built] = wire(ListOf(Nested(Failed | Built), length="cases"))


@dataclass(frozen=True)
class BuildRaised:
    """`a op b` raised before there was a closure to call."""

    TAG: ClassVar[Tag] = Tag("stage", "build")
    error: Returned = wire(Raised())


@dataclass(frozen=True)
class NotValue:
    """`a op b` gave something else than a Value."""

    TAG: ClassVar[Tag] = Tag("stage", "type")
    type_name: str = wire(AsText(100, absent=None))


@dataclass(frozen=True)
class NoClosure:
    """The Value built has no callable _backward: what it has instead."""

    TAG: ClassVar[Tag] = Tag("stage", "closure")
    shown: str = wire(AsText(100, absent=None))


@dataclass(frozen=True)
class ClosureRaised:
    """out._backward() raised."""

    TAG: ClassVar[Tag] = Tag("stage", "run")
    error: Returned = wire(Raised())


@dataclass(frozen=True)
class ClosureRan:
    """a.grad and b.grad after out._backward(): each a number, or None with its repr in `shown`."""

    stage: str = wire(OneOf(frozenset({"done"})))
    grads: list[Any] = wire(ListOf(Json(), length=2))
    shown: list[Any] = wire(ListOf(Json(), length=2))


CLOSURE_STAGES = BuildRaised | NotValue | NoClosure | ClosureRaised | ClosureRan


@dataclass(frozen=True)
class Closures:
    results: list[CLOSURE_STAGES] = wire(ListOf(Nested(CLOSURE_STAGES), length="cases"))


@dataclass(frozen=True)
class Backward:
    """Each reported node's .grad after backward() (a number, or None with its repr in `shown`), and how deep
    backward() nested its calls (kernel_facts.deepest_call; 0 when not asked)."""

    grads: list[Any] = wire(ListOf(Json(), length="report"))
    shown: list[Any] = wire(ListOf(Json(), length="report"))
    depth: int = wire(Int(low=0))


@dataclass(frozen=True)
class Derivatives:
    """numerical_gradient's derivatives (numbers, or the type it returned instead) and the input list after the
    call; `count` and `args_count` are the lengths before the kernel cut them to 64."""

    returned: list[float] | str = wire(Either(lambda v: isinstance(v, list), ListOf(Real(finite=False)), Text(100)))
    count: int = wire(Int(low=0))
    args_after: list[Any] = wire(ListOf(Json()))
    args_count: int = wire(Int(low=0))

    def invalid(self):
        if isinstance(self.returned, list) and self.count != len(self.returned):
            return f"'count' is {self.count}, but 'returned' holds {len(self.returned)} derivatives"
        if self.args_count != len(self.args_after):
            return f"'args_count' is {self.args_count}, but 'args_after' holds {len(self.args_after)} values"
        return None


@dataclass(frozen=True)
class NumericalGradients:
    results: list[Failed | Derivatives] = wire(ListOf(Nested(Failed | Derivatives), length="cases"))


# ── value_graph ────────────────────────────────────────────────────────────────────────────

@judges("value_graph")
def value_graph(rng, op, seed=0):
    """`a op b`, `a op k`, `k op a`, `c op c`, `a op f` on secret numbers (k an int, f a float): data, _op and _prev."""
    symbol, method, fn, _ = rules.OPS[op]
    x, y, z, k, f = rules.graph_numbers(secret_seed(rng))
    cases = [(f"a {symbol} b with a = Value({x}), b = Value({y})", ("a", "b", [x, y]), fn(x, y), None),
             (f"a {symbol} {k} with a = Value({x})", ("a", k, [x]), fn(x, k), k),
             (f"{k} {symbol} a with a = Value({x})", (k, "a", [x]), fn(k, x), k),
             (f"c {symbol} c with c = Value({z})", ("c", "c", [z]), fn(z, z), None),
             (f"a {symbol} {f} with a = Value({x})", ("a", f, [x]), fn(x, f), f)]
    reply = yield {"kind": "value_graph", "symbol": symbol, "cases": [list(c[1]) for c in cases]}
    for (text, (_, _, inputs), want, number_input), result in zip(cases, read(reply, Graphs, cases=len(cases)).results):
        if isinstance(result, Failed):
            outcome = result.error
            return rules.graph_error(op, text, outcome.error_type, describe_error("Value", method, outcome),
                                     rules.int_case([(c[0], c[3]) for c in cases], text))
        problem = rules.graph_problem(op, text, built(result), want, inputs, number_input)
        if problem:
            return problem
    return passed(f"✔ Value.{method} and its reflected form build the graph: data, _prev and _op are right")


def built(result):
    """The kernel's description of a built Value, as graph_problem reads it (which checks its truth)."""
    if not result.is_value:
        return rules.Built(False, result.type_name)
    return rules.Built(True, result.type_name, result.is_input, result.inputs_changed, result.data, result.data_repr,
                       result.op, result.op_repr, result.members, result.distinct, result.prev_repr)


# ── value_backward: the _backward closures ─────────────────────────────────────────────────

@judges("value_backward")
def value_backward(rng, op, seed=0):
    """out._backward() of `a op b` on secret numbers, called once after the judge sets the gradients."""
    symbol, method, _, _ = rules.OPS[op]
    title = f"Value.{method}'s _backward"
    cases = rules.backward_cases(secret_seed(rng))
    reply = yield {"kind": "value_closure", "symbol": symbol,
                   "cases": [[x, y, g, grad_a, grad_b] for _, x, y, g, grad_a, grad_b in cases]}
    for (case, x, y, g, grad_a, grad_b), result in zip(cases, read(reply, Closures, cases=len(cases)).results):
        expression = rules.closure_expression(op, x, y)
        if isinstance(result, BuildRaised):
            return failed(describe_error("Value", method, result.error) + f"\n  while computing {expression}.")
        if isinstance(result, NotValue):
            return failed(f"{title}: {expression} returned a {result.type_name}, expected a Value.")
        if isinstance(result, NoClosure):
            return failed(rules.no_closure(title, result.shown))
        if isinstance(result, ClosureRaised):
            outcome = result.error
            return rules.closure_error(op, describe_error("out", "_backward", outcome), outcome.error_type, case, x, y)
        grads, shown = result.grads, result.shown
        problem = rules.closure_problem(op, case, x, y, g, grad_a, grad_b,
                                        number_or_shown(grads[0], shown[0]), number_or_shown(grads[1], shown[1]))
        if problem:
            return problem
    return passed(f"✔ Value.{method}'s _backward adds out.grad × the local derivative to each input")


# ── value_engine: backward() on graphs the judge wires ─────────────────────────────────────

def draw(rng):
    """A secret number for a leaf or a factor: |v| in [0.5, 2], two decimals, either sign."""
    return float(np.round(rng.uniform(0.5, 2.0), 2) * rng.choice([-1.0, 1.0]))


class Graph:
    """Leaves, then ("scale", k, i), ("times", i, j), ("plus", i, j) in topological order; the last
    node is the output. `values` and `grads` are the judge's own forward and reverse sweep."""

    def __init__(self, *leaves):
        self.leaves, self.ops = list(leaves), []

    def add(self, *op):
        self.ops.append(op)
        return len(self.leaves) + len(self.ops) - 1

    def grads(self):
        values = list(self.leaves)
        for kind, *args in self.ops:
            values.append(args[0] * values[args[1]] if kind == "scale" else
                          values[args[0]] * values[args[1]] if kind == "times" else values[args[0]] + values[args[1]])
        grads = [0.0] * len(values)
        grads[-1] = 1.0
        for node in range(len(values) - 1, len(self.leaves) - 1, -1):
            kind, *args = self.ops[node - len(self.leaves)]
            g = grads[node]
            if kind == "scale":
                grads[args[1]] += args[0] * g
            elif kind == "times":
                grads[args[0]] += values[args[1]] * g
                grads[args[1]] += values[args[0]] * g
            else:
                grads[args[0]] += g
                grads[args[1]] += g
        return grads


def order(rng):
    a, b, c, k = draw(rng), draw(rng), draw(rng), draw(rng)
    g = Graph(a, b, c)
    x = g.add("times", 0, 1)
    y = g.add("scale", k, x)
    out = g.add("times", y, 2)
    title = f"backward() on a chain: x = a * b, y = {k:g}x, out = y * c with a = {a:g}, b = {b:g}, c = {c:g}"
    return title, g, 1, [("out", out), ("c", 2), ("y", y), ("x", x), ("a", 0), ("b", 1)], rules.ORDER_HINT


def reuse(rng):
    """As the course's check: e = b + d with b reused three steps deeper, and x feeding both branches of
    out2 at different depths, so that a wrong order fails whichever branch a search takes first."""
    a, u, k1, k2, k3, k4, k5, k6, k7 = (draw(rng) for _ in range(9))
    while abs(1 + k2 * k3) < 0.25:        # e = b (1 + k2 k3) near 0 would hide a wrong order: draw again
        k2, k3 = draw(rng), draw(rng)
    while abs(k5 + k6 * k7) < 0.25:       # the same for x's two shares
        k6, k7 = draw(rng), draw(rng)
    g = Graph(a, u)
    b = g.add("scale", k1, 0)
    c = g.add("scale", k2, b)
    d = g.add("scale", k3, c)         # b is one step from e directly, three steps through c and d
    e = g.add("plus", b, d)
    out1 = g.add("times", e, e)
    x = g.add("scale", k4, 1)
    out2 = g.add("plus", g.add("scale", k5, x), g.add("scale", k6, g.add("scale", k7, x)))
    g.add("plus", out1, out2)
    title = (f"backward() with reuse: b = {k1:g}a, c = {k2:g}b, d = {k3:g}c, e = b + d, out1 = e * e with a = {a:g}; "
             f"and x = {k4:g}u, p = {k5:g}x, q = {k6:g}({k7:g}x), out2 = p + q with u = {u:g}; out = out1 + out2")
    return title, g, 1, [("e", e), ("b", b), ("a", 0), ("x", x), ("u", 1)], rules.REUSE_HINT


def twice(rng):
    a, b = draw(rng), draw(rng)
    g = Graph(a, b)
    g.add("plus", g.add("times", 0, 1), 0)
    title = (f"backward() called twice: out = a * b + a with a = {a:g}, b = {b:g}, so a.grad = b + 1 = {b + 1:g} "
             f"and b.grad = {a:g} every time")
    return title, g, 2, [("a", 0), ("b", 1)], rules.TWICE_HINT


def long_chain(rng, length=rules.CHAIN_LENGTH):
    g = Graph(draw(rng))
    node = 0
    for sign in rng.choice([-1.0, 1.0], size=length):
        node = g.add("scale", float(sign), node)
    slope = g.grads()[0]
    title = f"backward() on a chain of {length:,} nodes, each ±1.0 × the one before, so d out/d a = {slope:g}"
    return title, g, 1, [("a", 0)], rules.CHAIN_HINT


GRAPHS = {"order": order, "reuse": reuse, "twice": twice, "long_chain": long_chain}


@judges("value_engine")
def value_engine(rng, name):
    """Value.backward on a secret graph whose closures the kernel side wires (so only backward() is judged)."""
    title, graph, calls, report, hint = GRAPHS[name](rng)
    deep = name == "long_chain"             # how deep backward() nests its calls: a recursive search's one per node
    reply = yield {"kind": "value_engine", "leaves": graph.leaves, "ops": [list(op) for op in graph.ops],
                   "calls": calls, "report": [node for _, node in report], "depth": deep}
    reply = read(reply, Failed | Backward, report=len(report))
    if isinstance(reply, Failed):
        return rules.backward_error(title, reply.error.error_type, describe_error("Value", "backward", reply.error))
    got = [number_or_shown(g, s) for g, s in zip(reply.grads, reply.shown)]
    want = graph.grads()
    expectations = [(label, value, want[node]) for (label, node), value in zip(report, got)]
    if expectations[0][0] == "out":
        problem = rules.seed_problem(title, expectations[0][1])
        if problem:
            return problem
        expectations = expectations[1:]
    if name == "twice":                     # name the reset only when the gradients are those of a missing reset
        hint = rules.twice_hint(graph.leaves[0], graph.leaves[1], got[0], got[1])
    verdict = rules.compare(title, expectations, hint)
    if verdict.passed and deep:
        return rules.recursion_problem(title, reply.depth, len(graph.ops)) or verdict
    return verdict


# ── numerical_gradient: on functions the judge picks ───────────────────────────────────────

def points(rng, low, high, count):
    return [float(np.round(rng.uniform(low, high), 3)) for _ in range(count)]


# case: [(f as text, parameters, body, inputs drawn from rng, h or None, exact gradient, tolerance)]
FUNCTIONS = {
    "basic": [
        ("f(x) = x * x", "x", "x * x", lambda r: points(r, -3, 3, 1), 0.01, lambda x: [2 * x], 1e-9),
        ("f(x, y) = x * x * y + y", "x, y", "x * x * y + y", lambda r: points(r, -2, 2, 2), 0.01,
         lambda x, y: [2 * x * y, x * x + 1], 1e-9),
        ("f(x, y, z) = x * y + sin(z)", "x, y, z", "x * y + math.sin(z)", lambda r: points(r, -2, 2, 3), None,
         lambda x, y, z: [y, x, math.cos(z)], 1e-6),
        (rules.CUBE, "x", "x * x * x", lambda r: points(r, 1, 3, 1), 0.1, lambda x: [3 * x * x + 0.1 ** 2], 1e-9),
    ],
    "more": [
        ("f(x) = exp(x)", "x", "math.exp(x)", lambda r: points(r, -1, 1, 1), None, lambda x: [math.exp(x)], 1e-6),
        ("f(x, y) = x / y", "x, y", "x / y", lambda r: points(r, 0.5, 2, 1) + points(r, 2, 5, 1), 1e-3,
         lambda x, y: [1 / y, -x / (y * y)], 1e-6),
        ("f(w, x, y, z) = w * x - y * y * z", "w, x, y, z", "w * x - y * y * z", lambda r: points(r, -2, 2, 4), 0.05,
         lambda w, x, y, z: [x, w, -2 * y * z, -y * y], 1e-9),
    ],
}


@judges("numerical_gradient")
def numerical_gradient(rng, case="basic"):
    """The student's numerical_gradient on the judge's functions at secret points, against exact derivatives."""
    cases = [(text, params, body, draw_xs(rng), h, exact, tol) for text, params, body, draw_xs, h, exact, tol
             in FUNCTIONS[case]]
    reply = yield {"kind": "numerical_gradient",
                   "cases": [{"params": params, "body": body, "xs": xs, "h": h} for _, params, body, xs, h, _, _ in cases]}
    for (text, params, body, xs, h, exact, tol), result in zip(cases, read(reply, NumericalGradients,
                                                                           cases=len(cases)).results):
        if isinstance(result, Failed):
            described = describe_error("numerical_gradient", "", result.error)
            return failed(described.replace("numerical_gradient. ", "numerical_gradient ", 1) + f"\n  while computing {rules.numeric_call(xs, h)} for {text}.")
        f = eval(f"lambda {params}: {body}", {"math": math})  # noqa: S307 (the judge's own text)
        problem = rules.numeric_problem(text, f, xs, h, exact(*xs), tol, result.args_after, result.returned)
        if problem:
            return problem
    return passed("✔ numerical_gradient matches the exact derivatives")

