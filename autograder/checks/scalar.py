"""Checks of chapter 1's scalar `Value`: the graph `+` and `*` record, their `_backward` closures,
`backward()`, and the student's central differences.

Each check grades one exercise. The closure checks call `out._backward()` directly, never the
student's `backward()`; the `backward()` checks build graphs whose closures the check wires itself,
so a wrong `__mul__` costs the `__mul__` exercise only.
"""
import math
import operator
import random

from ..verdict import failed, passed
from .describe import number, type_name
from .ops import describe_exception, run_quietly

STEP = 1e-6   # central differences in float64: for + and * the error is rounding only, ~1e-10
TOL = 1e-6

# name: (symbol, method, Python operator, the hint for its closure)
OPS = {
    "add": ("+", "__add__", operator.add,
            "the local derivative of a + b is 1 for both inputs: self.grad += out.grad and other.grad += out.grad."),
    "mul": ("*", "__mul__", operator.mul,
            "the local derivative of a * b for a is b, and for b it is a: "
            "self.grad += other.data * out.grad and other.grad += self.data * out.grad."),
}


def _describe_prev(prev):
    try:
        return "{" + ", ".join(f"Value({number(p.data)})" if hasattr(p, "data") else repr(p) for p in prev) + "}"
    except TypeError:
        return repr(prev)


# ── graph tracking ──────────────────────────────────────────────────────────────────────────

def graph_cases(Value, symbol, fn, seed=0):
    """(expression, thunk building it, inputs that must be parents, expected data, inputs).

    Seed 0 uses round numbers a student can redo by hand; other seeds draw them.
    """
    rng = random.Random(seed)
    x, y, z, k = (2.0, -3.5, 1.25, 4) if seed == 0 else \
        (round(rng.uniform(-3, 3), 2), round(rng.uniform(-3, 3), 2), round(rng.uniform(-3, 3), 2), rng.choice([-2, 3, 0.5]))
    a, b, c = Value(x), Value(y), Value(z)
    return [
        (f"a {symbol} b with a = Value({x}), b = Value({y})", lambda: fn(a, b), (a, b), fn(x, y), (a, b), None),
        (f"a {symbol} {k} with a = Value({x})", lambda: fn(a, k), (a,), fn(x, k), (a,), k),
        (f"{k} {symbol} a with a = Value({x})", lambda: fn(k, a), (a,), fn(k, x), (a,), k),
        (f"c {symbol} c with c = Value({z})", lambda: fn(c, c), (c,), fn(z, z), (c,), None),
    ]


def check_graph(Value, op, seed=0):
    """`a + b` (or `a * b`) returns a new Value with the right data, `_prev` and `_op`."""
    symbol, method, fn, _ = OPS[op]
    title = f"Value.{method}"
    for text, build, parents, want, inputs, number_input in graph_cases(Value, symbol, fn, seed):
        before = [(x.data, x.grad) for x in inputs]
        try:
            out = run_quietly(build)
        except RecursionError:
            return failed(f"{title}: `{text}` never returned: Python hit its recursion limit.\n"
                          f"  Hint: a reflected method such as __r{method[2:]} must not compute `other {symbol} self` "
                          f"(that calls it again); return `self {symbol} other`.")
        except Exception as error:  # noqa: BLE001 (any student error becomes a message)
            return failed(describe_exception("Value", method, error) + f"\n  while computing `{text}`."
                          + ("\n  Hint: a Python number has no .data: wrap it first, e.g. "
                             "`other = other if isinstance(other, Value) else Value(other)`."
                             if isinstance(error, AttributeError) else ""))
        if not isinstance(out, Value):
            return failed(f"{title}: `{text}` returned a {type_name(out)}, expected a new Value.")
        if any(out is x for x in inputs):
            return failed(f"{title}: `{text}` returned one of its inputs; it must build a NEW Value.")
        if [(x.data, x.grad) for x in inputs] != before:
            return failed(f"{title}: `{text}` changed its inputs; the inputs must stay as they were.")
        if not isinstance(out.data, float) or not math.isclose(out.data, want, rel_tol=1e-12, abs_tol=1e-12):
            return failed(f"{title}: `{text}` has data {out.data!r}, expected {number(want)}.")
        if out._op != symbol:
            return failed(f"{title}: `{text}` has _op {out._op!r}, expected {symbol!r}: pass the op's label "
                          f"as the third argument, Value(data, (self, other), {symbol!r}).")
        prev = out._prev
        try:
            members = list(prev)
        except TypeError:
            return failed(f"{title}: `{text}` has _prev = {prev!r}; it must hold the parent Values.")
        missing = [p for p in parents if not any(m is p for m in members)]
        strangers = [m for m in members if not isinstance(m, Value)]
        others = [m for m in members if isinstance(m, Value) and not any(m is p for p in parents)]
        if missing or strangers or len(set(map(id, members))) > 2 \
                or any(number_input is None or not math.isclose(m.data, number_input) for m in others):
            expected = f"{{a, Value({float(number_input)})}}" if number_input is not None else \
                ("{c}" if len(parents) == 1 else "{a, b}")
            return failed(f"{title}: `{text}` has _prev = {_describe_prev(members)}, expected {expected} "
                          f"(the very objects it was computed from).\n  Hint: pass the parents as the "
                          f"second argument: Value(data, (self, other), {symbol!r}).")
    return passed(f"✔ Value.{method} and its reflected form build the graph: data, _prev and _op are right")


# ── the _backward closures ─────────────────────────────────────────────────────────────────

def central_difference(fn, x, y):
    """(d fn/dx, d fn/dy) at (x, y), by central differences in float64."""
    dx = (fn(x + STEP, y) - fn(x - STEP, y)) / (2 * STEP)
    dy = (fn(x, y + STEP) - fn(x, y - STEP)) / (2 * STEP)
    return dx, dy


def backward_cases(seed):
    """(description, x, y or None for `a op a`, out.grad, a.grad before, b.grad before)."""
    rng = random.Random(seed)

    def draw():
        return round(rng.choice([-1, 1]) * rng.uniform(0.5, 2.5), 3)

    x, y, g = draw(), draw(), draw()
    return [
        ("out.grad = 1.0", x, y, 1.0, 0.0, 0.0),
        (f"out.grad = {g}", x, y, g, 0.0, 0.0),
        (f"the same Value as both inputs and out.grad = {g}", x, None, g, 0.0, 0.0),
        (f"a and b already holding gradients from other uses (a.grad = 0.5, b.grad = -1.0) and out.grad = {g}",
         y, x, g, 0.5, -1.0),
    ]


def check_backward(Value, op, seed=0):
    """`out._backward()` of `a + b` (or `a * b`) adds out.grad × the local derivative to each input."""
    symbol, method, fn, hint = OPS[op]
    title = f"Value.{method}'s _backward"
    for case, x, y, g, grad_a, grad_b in backward_cases(seed):
        same = y is None
        a = Value(x)
        b = a if same else Value(y)
        expression = f"out = a {symbol} a with a = Value({x})" if same else \
            f"out = a {symbol} b with a = Value({x}), b = Value({y})"
        try:
            out = run_quietly(fn, a, b)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("Value", method, error) + f"\n  while computing {expression}.")
        if not isinstance(out, Value):
            return failed(f"{title}: {expression} returned a {type_name(out)}, expected a Value.")
        if not callable(getattr(out, "_backward", None)):
            return failed(f"{title}: out._backward is {out._backward!r}; assign your closure to it: out._backward = _backward.")
        a.grad, b.grad = grad_a, (grad_a if same else grad_b)
        out.grad = g
        try:
            run_quietly(out._backward)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("out", "_backward", error) + f"\n  for {expression} and {case}.")
        da, db = central_difference(fn, x, x if same else y)
        want = [("a", a, grad_a + g * (da + db if same else da))]
        if not same:
            want.append(("b", b, grad_b + g * db))
        for name, node, expected in want:
            got = node.grad
            if not isinstance(got, (int, float)) or not math.isclose(got, expected, rel_tol=TOL, abs_tol=TOL):
                return failed(f"{title}, for {expression} and {case}:\n"
                              f"  {name}.grad should be {number(expected)} (finite differences), received {got!r}.\n"
                              f"  Hint: {closure_hint(hint, case, same, got, expected, g, grad_a, da, db, x, fn)}")
    return passed(f"✔ Value.{method}'s _backward adds out.grad × the local derivative to each input")


def closure_hint(hint, case, same, got, expected, g, before, da, db, x, fn):
    """The usual mistake behind a wrong gradient, recognised from the number received."""
    if not isinstance(got, (int, float)):
        return f"grad must stay a Python float; {hint}"
    if got == before and not math.isclose(got, expected):
        return "out._backward() did not change the gradient: does your closure update self.grad and other.grad?"
    if same and math.isclose(got, g * da, rel_tol=TOL, abs_tol=TOL):
        return ("a is both inputs, so the closure's two lines must BOTH add to a.grad. With `=` the second line "
                "overwrites the first: use +=.")
    if before and math.isclose(got, expected - before, rel_tol=TOL, abs_tol=TOL):
        return "a gradient that was already there got overwritten: accumulate with +=, never assign with =."
    if g != 1.0 and math.isclose(got, before + (expected - before) / g, rel_tol=TOL, abs_tol=TOL):
        return "that is the gradient for out.grad = 1: multiply the local derivative by out.grad (the chain rule)."
    if fn is operator.mul and not same and math.isclose(got, before + g * x, rel_tol=TOL, abs_tol=TOL):
        return "each input's local derivative is the OTHER input's data, not its own."
    return hint


# ── backward(): order, reuse, repeated calls, depth ────────────────────────────────────────

def wired(Value, parents, local_grads, label):
    """A node whose `_backward` the check writes: parent.grad += local derivative × out.grad."""
    data = {"+": sum(p.data for p in parents), "*": math.prod(p.data for p in parents)}.get(label)
    out = Value(parents[0].data * local_grads[0] if data is None else data, tuple(parents), label)

    def _backward():
        for parent, local in zip(parents, local_grads):
            parent.grad += local * out.grad

    out._backward = _backward
    return out


def scale(Value, x, k):
    return wired(Value, [x], [k], f"×{k}")


def times(Value, x, y):
    return wired(Value, [x, y], [y.data, x.data], "*")


def plus(Value, x, y):
    return wired(Value, [x, y], [1.0, 1.0], "+")


def run_backward(title, out):
    try:
        run_quietly(out.backward)
    except RecursionError:
        return failed(f"{title}: backward() hit Python's recursion limit (sys.getrecursionlimit() is 1000 by "
                      "default).\n  Hint: a recursive depth-first search needs one stack frame per node; build "
                      "the topological order with a loop and an explicit stack (a list) instead.")
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Value", "backward", error) + f"\n  while checking: {title}")
    return None


def compare(title, expectations, hint):
    for name, node, want in expectations:
        got = node.grad
        if not isinstance(got, (int, float)) or not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9):
            return failed(f"{title}:\n  {name}.grad should be {number(want)}, received {got!r}.\n  Hint: {hint}")
    return passed(f"✔ {title}")


def check_order(Value):
    title = "backward() on a chain: x = a * b, y = 3x, out = y * c with a = 2, b = -1.5, c = 0.5"
    a, b, c = Value(2.0), Value(-1.5), Value(0.5)
    x = times(Value, a, b)
    y = scale(Value, x, 3.0)
    out = times(Value, y, c)
    error = run_backward(title, out)
    if error:
        return error
    if out.grad != 1.0:
        return failed(f"{title}:\n  out.grad should be 1.0 after out.backward(), received {out.grad!r}.\n"
                      "  Hint: seed the output: d(out)/d(out) = 1, so set self.grad = 1.0 before the walk.")
    hint = ("call each node's _backward in REVERSE topological order, output first: a node may pass its "
            "gradient on only after it has received it.")
    # out = 3abc: d/da = 3bc, d/db = 3ac, d/dc = 3ab
    return compare(title, [("c", c, 3 * 2.0 * -1.5), ("y", y, 0.5), ("x", x, 1.5),
                           ("a", a, 3 * -1.5 * 0.5), ("b", b, 3 * 2.0 * 0.5)], hint)


def check_reuse(Value):
    title = "backward() with reuse: b = 2a, c = 3b, d = 1c, e = b + d, out = e * e with a = 0.5"
    a = Value(0.5)
    b = scale(Value, a, 2.0)
    c = scale(Value, b, 3.0)
    d = scale(Value, c, 1.0)        # b is one step from e directly, three steps through c and d
    e = plus(Value, b, d)
    out = times(Value, e, e)
    error = run_backward(title, out)
    if error:
        return error
    # e = 4b = 8a = 4, out = e², d out/d e = 2e = 8, d e/d b = 4, d b/d a = 2
    hint = ("a node reached along two paths must be visited ONCE, and only after both paths have delivered "
            "their share: keep a set of visited nodes, and walk the topological order backwards.")
    return compare(title, [("e", e, 8.0), ("b", b, 32.0), ("a", a, 64.0)], hint)


def check_twice(Value):
    title = "backward() called twice: out = a * b + a with a = 3, b = -2, so a.grad = b + 1 = -1 and b.grad = 3 every time"
    a, b = Value(3.0), Value(-2.0)
    out = plus(Value, times(Value, a, b), a)
    for _ in range(2):
        error = run_backward(title, out)
        if error:
            return error
    return compare(title, [("a", a, -1.0), ("b", b, 3.0)],
                   "the closures ADD to .grad, so backward() must first set every node's grad to 0.0 "
                   "(then the output's to 1.0); otherwise a second call adds to the first one's gradients.")


def check_long_chain(Value, length=2000):
    title = f"backward() on a chain of {length:,} nodes, each 1.0 × the one before, so d out/d a = 1"
    a = Value(1.0)
    node = a
    for _ in range(length):
        node = scale(Value, node, 1.0)
    error = run_backward(title, node)
    return error or compare(title, [("a", a, 1.0)], "every node on the chain passes its gradient on.")


ENGINE_CHECKS = {"order": check_order, "reuse": check_reuse, "twice": check_twice, "long_chain": check_long_chain}


# ── numerical_gradient ─────────────────────────────────────────────────────────────────────

def numeric_cases(case="basic"):
    """(f as text, f, inputs, h or None for the default, exact gradient, tolerance)."""
    if case == "more":
        return [
            ("f(x) = exp(x)", math.exp, [0.7], None, [math.exp(0.7)], 1e-6),
            ("f(x, y) = x / y", lambda x, y: x / y, [1.0, 4.0], 1e-3, [0.25, -0.0625], 1e-6),
            ("f(w, x, y, z) = w * x - y * y * z", lambda w, x, y, z: w * x - y * y * z, [2.0, -1.0, 0.5, 3.0], 0.05,
             [-1.0, 2.0, -3.0, -0.25], 1e-9),
        ]
    return [
        ("f(x) = x * x", lambda x: x * x, [3.0], 0.01, [6.0], 1e-9),
        ("f(x, y) = x * x * y + y", lambda x, y: x * x * y + y, [1.5, -2.0], 0.01, [-6.0, 3.25], 1e-9),
        ("f(x, y, z) = x * y + sin(z)", lambda x, y, z: x * y + math.sin(z), [0.5, -1.25, 0.3], None,
         [-1.25, 0.5, math.cos(0.3)], 1e-6),
    ]


def check_numerical_gradient(numerical_gradient, case="basic"):
    """numerical_gradient(f, xs, h) returns every partial derivative by central differences."""
    for text, f, xs, h, want, tol in numeric_cases(case):
        args = list(xs)
        call = f"numerical_gradient(f, {args}{'' if h is None else f', h={h}'})"
        try:
            got = run_quietly(lambda: numerical_gradient(f, args) if h is None else numerical_gradient(f, args, h=h))
        except Exception as error:  # noqa: BLE001
            return failed(describe_call_error("numerical_gradient", error) + f"\n  while computing {call} for {text}.")
        if args != xs:
            return failed(f"{call} for {text} changed its input list to {args}.\n"
                          "  Hint: nudge a copy, or put every x back after nudging it: the caller's list must not change.")
        try:
            got = [float(v) for v in got]
        except TypeError:
            return failed(f"{call} returned a {type_name(got)}; return a list of floats, one per input.")
        if len(got) != len(want):
            return failed(f"{call} for {text} returned {len(got)} numbers, expected {len(want)}: one per input.")
        for i, (g, w) in enumerate(zip(got, want)):
            if not math.isclose(g, w, rel_tol=tol, abs_tol=tol):
                return failed(f"{call} for {text}: the derivative for input {i} should be {number(w)}, "
                              f"received {number(g)}.\n  Hint: {numeric_hint(f, xs, i, h or 1e-6, g, w)}")
    return passed("✔ numerical_gradient matches the exact derivatives")


def describe_call_error(name, error):
    if isinstance(error, NotImplementedError):
        return f"{name} is not implemented yet: replace `raise NotImplementedError()` with your code."
    return describe_exception(name, "", error).replace(f"{name}. raised", f"{name} raised", 1)


def numeric_hint(f, xs, i, h, got, want):
    def at(delta):
        shifted = list(xs)
        shifted[i] += delta
        return f(*shifted)

    if math.isclose(got, (at(h) - at(0.0)) / h, rel_tol=1e-9, abs_tol=1e-12):
        return "that is the forward difference (f(x + h) - f(x)) / h, off by about h·f''/2; " \
               "nudge both ways: (f(x + h) - f(x - h)) / (2h)."
    if math.isclose(got, 2 * want, rel_tol=1e-6, abs_tol=1e-9):
        return "twice the derivative: the two nudges are 2h apart, so divide by 2h, not h."
    return "nudge ONE input at a time, by +h and by -h, leaving the others as they are: (f(x + h) - f(x - h)) / (2h)."
