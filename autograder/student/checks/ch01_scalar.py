"""Checks of chapter 1's scalar `Value`: the graph `+` and `*` record, their `_backward` closures,
`backward()`, and the student's central differences.

Each check grades one exercise. The closure checks call `out._backward()` directly, never the
student's `backward()`; the `backward()` checks build graphs whose closures the check wires itself,
so a wrong `__mul__` costs the `__mul__` exercise only.
"""
import math
import operator
import random
from dataclasses import dataclass

from autograder.student.checks import kernel_facts, running
from autograder.student.checks.describe import number, type_name
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed

STEP = 1e-6   # central differences in float64: for + and * the error is rounding only, ~1e-10
TOL = 1e-6

# name: (symbol, method, Python operator, the hint for its closure)
OPS = {
    "add": ("+", "__add__", operator.add,
            "the local derivative of a + b is 1 for both inputs, so each input's gradient grows by out.grad "
            "times 1 (added to its .grad, not replacing it)."),
    "mul": ("*", "__mul__", operator.mul,
            "the local derivative of a * b with respect to a is b's value, and with respect to b it is a's: "
            "each input's gradient grows by out.grad times its local derivative (added to its .grad)."),
}


# ── graph tracking ──────────────────────────────────────────────────────────────────────────

def graph_numbers(seed):
    """x, y, z for a, b, c, the plain int k and the plain float f: round ones for seed 0, drawn for the others.
    Both kinds of number come in every case, so that wrapping only ints (or only floats) never passes."""
    rng = random.Random(seed)
    return (2.0, -3.5, 1.25, 4, 0.5) if seed == 0 else \
        (round(rng.uniform(-3, 3), 2), round(rng.uniform(-3, 3), 2), round(rng.uniform(-3, 3), 2), rng.choice([-2, 3, 5]),
         rng.choice([0.5, -1.5, 2.25]))


def graph_cases(Value, symbol, fn, seed=0):
    """(expression, thunk building it, inputs that must be parents, expected data, inputs).

    Seed 0 uses round numbers a student can redo by hand; other seeds draw them.
    """
    x, y, z, k, f = graph_numbers(seed)
    a, b, c = Value(x), Value(y), Value(z)
    return [
        (f"a {symbol} b with a = Value({x}), b = Value({y})", lambda: fn(a, b), (a, b), fn(x, y), (a, b), None),
        (f"a {symbol} {k} with a = Value({x})", lambda: fn(a, k), (a,), fn(x, k), (a,), k),
        (f"{k} {symbol} a with a = Value({x})", lambda: fn(k, a), (a,), fn(k, x), (a,), k),
        (f"c {symbol} c with c = Value({z})", lambda: fn(c, c), (c,), fn(z, z), (c,), None),
        (f"a {symbol} {f} with a = Value({x})", lambda: fn(a, f), (a,), fn(x, f), (a,), f),
    ]


def check_graph(Value, op, seed=0):
    """`a + b` (or `a * b`) returns a new Value with the right data, `_prev` and `_op`."""
    symbol, method, fn, _ = OPS[op]
    for text, build, _, want, inputs, number_input in graph_cases(Value, symbol, fn, seed):
        before = [(x.data, x.grad) for x in inputs]
        try:
            out = run_quietly(build)
        except Exception as error:  # noqa: BLE001 (any student error becomes a message)
            return graph_error(op, text, type(error).__name__, describe_exception("Value", method, error),
                               int_case([(case[0], case[5]) for case in graph_cases(Value, symbol, fn, seed)], text))
        problem = graph_problem(op, text, built(Value, out, inputs, before), want, [x.data for x in inputs],
                                number_input)
        if problem:
            return problem
    return passed(f"✔ Value.{method} and its reflected form build the graph: data, _prev and _op are right")


def int_case(cases, text):
    """The text of a case with a plain int among `cases`, (text, number) pairs, when it comes before the case
    `text` (so it was built without an error), else None."""
    texts = [case_text for case_text, _ in cases]
    return next((case_text for case_text, number in cases[:texts.index(text)] if type(number) is int), None)


@dataclass
class Built:
    """What `a + b` gave back, as plain data: the judge gets the same from the kernel.

    `members`: the `_prev` entries, each ("input", i) for the i-th input object, ("value", data) for
    another Value, or ("other", repr); None when `_prev` is not iterable (`prev_repr` shows it)."""

    is_value: bool
    type_name: str
    is_input: bool = False
    inputs_changed: bool = False
    data: float = None          # None unless a float
    data_repr: str = ""
    op: str = None              # None unless a str
    op_repr: str = ""
    members: list = None
    distinct: int = 0
    prev_repr: str = ""


def built(Value, out, inputs, before):
    if not isinstance(out, Value):
        return Built(False, type_name(out))
    try:
        members = list(out._prev)
    except TypeError:
        members = None
    return Built(True, type_name(out), any(out is x for x in inputs), [(x.data, x.grad) for x in inputs] != before,
                 out.data if isinstance(out.data, float) else None, repr(out.data)[:100],
                 out._op if isinstance(out._op, str) else None, repr(out._op)[:100],
                 None if members is None else [member(m, Value, inputs) for m in members],
                 0 if members is None else len(set(map(id, members))), repr(out._prev)[:200])


def member(m, Value, inputs):
    index = next((i for i, x in enumerate(inputs) if m is x), None)
    if index is not None:
        return ("input", index)
    if isinstance(m, Value):
        return ("value", m.data if isinstance(m.data, float) else float("nan"))
    return ("other", repr(m)[:100])


def graph_error(op, text, error_type, described, int_case=None):
    """The message for `a + b` raising: the recursion of a reflected method, or the student's exception.
    `int_case`: the text of an earlier case with a plain int that was built without an error."""
    symbol, method, _, _ = OPS[op]
    if error_type == "RecursionError":
        return failed(f"Value.{method}: `{text}` never returned: Python hit its recursion limit.\n"
                      f"  Hint: {reflected_hint(method, symbol)}")
    hint = ""
    if error_type == "AttributeError" and number_without_data(described):
        hint = f"\n  Hint: {NUMBER_HINT}"
        if int_case and "'float' object has no attribute" in described:
            hint += (f" `{int_case.split(' with ')[0]}` with an int worked, so only ints were wrapped: a float is a "
                     "plain number too, and the test is whether the operand is a Value, not whether it is an int.")
    return failed(described + f"\n  while computing `{text}`." + hint)


def reflected_hint(method, symbol):
    """Why a reflected method recursed without end, and the rule that avoids it (the kernel's and the judge's)."""
    return (f"Python calls the reflected method __r{method[2:]} when the number is on the left of {symbol}; "
            f"computing the same {symbol} with the number still on the left calls that method again, without end. "
            f"{symbol} gives the same result in either order, so the reflected method can hand the work to "
            f"{method}, with the Value on the left.")


NUMBER_HINT = ("a Python number has no .data: when the other operand is not a Value already (isinstance tells), wrap "
               "it in a Value of its own first.")


def number_without_data(described):
    """True when the exception told is a plain number read as a Value: `'int' object has no attribute 'data'`."""
    return any(f"'{kind}' object has no attribute" in described for kind in ("int", "float"))


def graph_problem(op, text, seen, want, inputs, number_input):
    """What is wrong with the Value `text` built (`seen`), or None. `inputs`: the data of the input Values
    (a, b; or a; or c), each of which must be in _prev; `number_input`: the plain number of `a + 4`."""
    symbol, method, _, _ = OPS[op]
    title = f"Value.{method}"
    if not seen.is_value:
        return failed(f"{title}: `{text}` returned a {seen.type_name}, expected a new Value.")
    if seen.is_input:
        return failed(f"{title}: `{text}` returned one of its inputs; it must build a NEW Value.")
    if seen.inputs_changed:
        return failed(f"{title}: `{text}` changed its inputs; the inputs must stay as they were.")
    if seen.data is None or not math.isclose(seen.data, want, rel_tol=1e-12, abs_tol=1e-12):
        return failed(f"{title}: `{text}` has data {seen.data_repr}, expected {number(want)}.")
    if seen.op != symbol:
        return failed(f"{title}: `{text}` has _op {seen.op_repr}, expected {symbol!r}.\n  Hint: a new Value records "
                      "the op that made it, its symbol as a string, in _op: the constructor's third argument.")
    if seen.members is None:
        return failed(f"{title}: `{text}` has _prev = {seen.prev_repr}; it must hold the parent Values.")
    found = {i for kind, i in seen.members if kind == "input"}
    others = [data for kind, data in seen.members if kind == "value"]
    if found != set(range(len(inputs))) or any(kind == "other" for kind, _ in seen.members) or seen.distinct > 2 \
            or any(number_input is None or not math.isclose(data, number_input) for data in others):
        expected = f"{{a, Value({float(number_input)})}}" if number_input is not None else \
            ("{c}" if len(inputs) == 1 else "{a, b}")
        shown = ", ".join(f"Value({number(inputs[d] if kind == 'input' else d)})" if kind != "other" else d
                          for kind, d in seen.members)
        return failed(f"{title}: `{text}` has _prev = {{{shown}}}, expected {expected} "
                      "(the very objects it was computed from).\n  Hint: a new Value records its parents, the "
                      "Values it was computed from (a plain number wrapped in a Value of its own), in _prev: the "
                      "constructor's second argument.")
    return None


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
        (f"out.grad = {g}", 0.0, y, g, 0.0, 0.0),       # a = 0: the rule holds there too, a division by a does not
    ]


def check_backward(Value, op, seed=0):
    """`out._backward()` of `a + b` (or `a * b`) adds out.grad × the local derivative to each input."""
    symbol, method, fn, _ = OPS[op]
    title = f"Value.{method}'s _backward"
    for case, x, y, g, grad_a, grad_b in backward_cases(seed):
        same = y is None
        a = Value(x)
        b = a if same else Value(y)
        expression = closure_expression(op, x, y)
        try:
            out = run_quietly(fn, a, b)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("Value", method, error) + f"\n  while computing {expression}.")
        if not isinstance(out, Value):
            return failed(f"{title}: {expression} returned a {type_name(out)}, expected a Value.")
        if not callable(getattr(out, "_backward", None)):
            return failed(no_closure(title, repr(out._backward)))
        a.grad, b.grad = grad_a, (grad_a if same else grad_b)
        out.grad = g
        try:
            run_quietly(out._backward)
        except Exception as error:  # noqa: BLE001
            return closure_error(op, describe_exception("out", "_backward", error), type(error).__name__, case, x, y)
        problem = closure_problem(op, case, x, y, g, grad_a, grad_b, a.grad, b.grad)
        if problem:
            return problem
    return passed(f"✔ Value.{method}'s _backward adds out.grad × the local derivative to each input")


def no_closure(title, shown):
    """The message for an output whose _backward is not callable (the kernel's and the judge's)."""
    return (f"{title}: out._backward is {shown}.\n  Hint: the closure defined inside the method does nothing until "
            "it is stored on the output Value as its _backward; backward() calls what it finds there.")


def closure_error(op, described, error_type, case, x, y):
    """The message for out._backward() raising (shared with the judge); a ZeroDivisionError gets the rule that
    needs no division, which holds where an input is 0 as anywhere else."""
    hint = ""
    if error_type == "ZeroDivisionError":
        zeros = [name for name, v in (("a", x), ("b", y)) if v == 0]
        said = f"{' and '.join(zeros)} is 0 here, and your closure divided by zero" if zeros else \
            "your closure divided by zero"
        hint = f"\n  Hint: {said}; the local derivatives need no division and hold at 0 as anywhere else: {OPS[op][3]}"
    return failed(f"{described}\n  for {closure_expression(op, x, y)} and {case}.{hint}")


def closure_expression(op, x, y):
    symbol = OPS[op][0]
    return f"out = a {symbol} a with a = Value({x})" if y is None else \
        f"out = a {symbol} b with a = Value({x}), b = Value({y})"


def closure_problem(op, case, x, y, g, grad_a, grad_b, got_a, got_b):
    """What is wrong with a.grad and b.grad (`got_*`) after out._backward() of a case, or None.
    Shared with the judge, which gets the two numbers from the kernel."""
    _, method, fn, hint = OPS[op]
    same = y is None
    title, expression = f"Value.{method}'s _backward", closure_expression(op, x, y)
    da, db = central_difference(fn, x, x if same else y)
    want = [("a", got_a, grad_a + g * (da + db if same else da))]
    if not same:
        want.append(("b", got_b, grad_b + g * db))
    for name, got, expected in want:
        if not isinstance(got, (int, float)) or not math.isclose(got, expected, rel_tol=TOL, abs_tol=TOL):
            return failed(f"{title}, for {expression} and {case}:\n"
                          f"  {name}.grad should be {number(expected)} (finite differences), received {got!r}.\n"
                          f"  Hint: {closure_hint(hint, case, same, got, expected, g, grad_a, da, db, x, fn)}")
    return None


def closure_hint(hint, case, same, got, expected, g, before, da, db, x, fn):
    """The usual mistake behind a wrong gradient, recognised from the number received."""
    if not isinstance(got, (int, float)):
        return f"grad must stay a Python float; {hint}"
    if got == before and not math.isclose(got, expected):
        return "out._backward() did not change the gradient: the closure must add to the .grad of both inputs."
    if same and math.isclose(got, g * da, rel_tol=TOL, abs_tol=TOL):
        return ("a is both inputs, so both of the closure's updates land on a.grad and must BOTH count. An "
                "assignment makes the second replace the first; each update adds to .grad (gradients accumulate).")
    if before and math.isclose(got, expected - before, rel_tol=TOL, abs_tol=TOL):
        return ("a gradient that was already there got overwritten: the closure adds its share to .grad "
                "(gradients accumulate), it never assigns.")
    if g != 1.0 and math.isclose(got, before + (expected - before) / g, rel_tol=TOL, abs_tol=TOL):
        return "that is the gradient for an out.grad of 1: multiply the local derivative by out.grad (the chain rule)."
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


SEED_HINT = "seed the output: d(out)/d(out) = 1, so the output's own gradient is 1.0 before the walk starts."
ORDER_HINT = ("call each node's _backward in REVERSE topological order, output first: a node may pass its "
              "gradient on only after it has received it.")
REUSE_HINT = ("a node reached along two paths must be visited ONCE, and only after both paths have delivered "
              "their share: keep a set of visited nodes, and walk the topological order backwards.")
TWICE_HINT = ("the closures ADD to .grad, so backward() must first set every node's grad to 0.0 "
              "(then the output's to 1.0); otherwise a second call adds to the first one's gradients.")
TWICE_RULE = ("each call of backward() gives the gradients of one pass: every node's grad starts at 0.0, the "
              "output's at 1.0, and each closure runs once, in reverse topological order.")
CHAIN_HINT = "every node on the chain passes its gradient on."


def twice_hint(a, b, got_a, got_b):
    """The hint for out = a * b + a after two calls of backward(): TWICE_HINT only when the gradients are those
    of a walk in the right order that never reset the grads (the output seeded by = or by +=, or every
    gradient doubled); else the rule, since a wrong order, say, also gives wrong gradients. Shared with the judge."""
    left_over = [(3 * b + 2, 3 * a), (4 * b + 3, 4 * a), (2 * b + 2, 2 * a)]
    if all(isinstance(v, (int, float)) for v in (got_a, got_b)) and any(
            math.isclose(got_a, x, rel_tol=1e-9, abs_tol=1e-9) and math.isclose(got_b, y, rel_tol=1e-9, abs_tol=1e-9)
            for x, y in left_over):
        return TWICE_HINT
    return TWICE_RULE
CHAIN_LENGTH = 2000     # deeper than Python's default recursion limit (1000)


def run_backward(title, out, depth=None):
    """out.backward(), or the message for what it raised; with a list `depth`, appends how deep its calls nested."""
    try:
        if depth is None:
            run_quietly(out.backward)
        else:
            depth.append(kernel_facts.deepest_call(run_quietly, out.backward))
    except Exception as error:  # noqa: BLE001
        return backward_error(title, type(error).__name__, describe_exception("Value", "backward", error))
    return None


def backward_error(title, error_type, described):
    if error_type == "RecursionError":
        return failed(f"{title}: backward() hit Python's recursion limit (sys.getrecursionlimit() is 1000 by "
                      "default).\n  Hint: a recursive depth-first search needs one stack frame per node; build "
                      "the topological order with a loop and an explicit stack (a list) instead.")
    return failed(described + f"\n  while checking: {title}")


def compare(title, expectations, hint):
    """(name, .grad received, expected) triples: the first wrong one fails. Shared with the judge."""
    for name, got, want in expectations:
        if not isinstance(got, (int, float)) or not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9):
            return failed(f"{title}:\n  {name}.grad should be {number(want)}, received {got!r}.\n  Hint: {hint}")
    return passed(f"✔ {title}")


def seed_problem(title, got):
    if got != 1.0:
        return failed(f"{title}:\n  out.grad should be 1.0 after out.backward(), received {got!r}.\n  Hint: {SEED_HINT}")
    return None


def check_order(Value):
    title = "backward() on a chain: x = a * b, y = 3x, out = y * c with a = 2, b = -1.5, c = 0.5"
    a, b, c = Value(2.0), Value(-1.5), Value(0.5)
    x = times(Value, a, b)
    y = scale(Value, x, 3.0)
    out = times(Value, y, c)
    error = run_backward(title, out) or seed_problem(title, out.grad)
    if error:
        return error
    # out = 3abc: d/da = 3bc, d/db = 3ac, d/dc = 3ab
    return compare(title, [("c", c.grad, 3 * 2.0 * -1.5), ("y", y.grad, 0.5), ("x", x.grad, 1.5),
                           ("a", a.grad, 3 * -1.5 * 0.5), ("b", b.grad, 3 * 2.0 * 0.5)], ORDER_HINT)


def check_reuse(Value):
    title = ("backward() with reuse: b = 2a, c = 3b, d = 1c, e = b + d, out1 = e * e with a = 0.5; and "
             "x = 1.5u, p = 2x, q = 3(0.5x), out2 = p + q with u = -1; out = out1 + out2")
    a = Value(0.5)
    b = scale(Value, a, 2.0)
    c = scale(Value, b, 3.0)
    d = scale(Value, c, 1.0)        # b is one step from e directly, three steps through c and d
    e = plus(Value, b, d)
    # x feeds both branches of out2, at different depths: a wrong order gets x wrong whichever branch
    # a search happens to take first (a Value's _prev is a set, so that choice follows memory addresses)
    u = Value(-1.0)
    x = scale(Value, u, 1.5)
    out2 = plus(Value, scale(Value, x, 2.0), scale(Value, scale(Value, x, 0.5), 3.0))
    out = plus(Value, times(Value, e, e), out2)
    error = run_backward(title, out)
    if error:
        return error
    # e = 4b = 8a = 4, out1 = e², d out/d e = 2e = 8, d e/d b = 4, d b/d a = 2; d out2/d x = 2 + 1.5 = 3.5
    return compare(title, [("e", e.grad, 8.0), ("b", b.grad, 32.0), ("a", a.grad, 64.0),
                           ("x", x.grad, 3.5), ("u", u.grad, 5.25)], REUSE_HINT)


def check_twice(Value):
    title = "backward() called twice: out = a * b + a with a = 3, b = -2, so a.grad = b + 1 = -1 and b.grad = 3 every time"
    a, b = Value(3.0), Value(-2.0)
    out = plus(Value, times(Value, a, b), a)
    for _ in range(2):
        error = run_backward(title, out)
        if error:
            return error
    return compare(title, [("a", a.grad, -1.0), ("b", b.grad, 3.0)], twice_hint(3.0, -2.0, a.grad, b.grad))


def check_long_chain(Value, length=CHAIN_LENGTH):
    title = f"backward() on a chain of {length:,} nodes, each 1.0 × the one before, so d out/d a = 1"
    a = Value(1.0)
    node = a
    for _ in range(length):
        node = scale(Value, node, 1.0)
    depth = []
    error = run_backward(title, node, depth)
    verdict = error or compare(title, [("a", a.grad, 1.0)], CHAIN_HINT)
    return (verdict.passed and recursion_problem(title, depth[0], length)) or verdict


def recursion_problem(title, depth, length):
    """The message for a long chain walked right by a recursive search under a raised limit, or None (the judge's too)."""
    problem = running.recursion_problem(title, depth, length, DEPTH_HINT)
    return problem and failed(problem)


DEPTH_HINT = ("Section 1.4 builds the topological order without recursion, with a loop and an explicit stack (a "
              "list), whose depth stays the same however deep the graph.")


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
        (CUBE, lambda x: x * x * x, [2.0], 0.1, [3 * 2.0 * 2.0 + 0.1 ** 2], 1e-9),
    ]


# The default step of section 1.5's numerical_gradient: where rounding and truncation balance in float64.
DEFAULT_STEP = 1e-5

# The one function here whose central difference depends on h (for a quadratic it is exact whatever h): the step
# the caller gives must be the step taken, as section 1.5 asks.
CUBE = "f(x) = x * x * x, whose central difference with step h is exactly 3x² + h²"


def check_numerical_gradient(numerical_gradient, case="basic"):
    """numerical_gradient(f, xs, h) returns every partial derivative by central differences."""
    for text, f, xs, h, want, tol in numeric_cases(case):
        args = list(xs)
        try:
            got = run_quietly(lambda: numerical_gradient(f, args) if h is None else numerical_gradient(f, args, h=h))
        except Exception as error:  # noqa: BLE001
            return failed(describe_call_error("numerical_gradient", error) + f"\n  while computing {numeric_call(xs, h)} for {text}.")
        try:
            got = [float(v) for v in got]
        except TypeError:
            got = type_name(got)
        problem = numeric_problem(text, f, xs, h, want, tol, args, got)
        if problem:
            return problem
    return passed("✔ numerical_gradient matches the exact derivatives")


def numeric_call(xs, h):
    return f"numerical_gradient(f, {list(xs)}{'' if h is None else f', h={h}'})"


def numeric_problem(text, f, xs, h, want, tol, args_after, got):
    """What is wrong with one call's result, or None: `args_after` is the caller's list after the call,
    `got` the floats returned (or the returned value's type name). Shared with the judge."""
    call = numeric_call(xs, h)
    if args_after != list(xs):
        return failed(f"{call} for {text} changed its input list to {args_after}.\n"
                      "  Hint: nudge a copy, or put every x back after nudging it: the caller's list must not change.")
    if isinstance(got, str):
        return failed(f"{call} returned a {got}; return a list of floats, one per input.")
    if len(got) != len(want):
        return failed(f"{call} for {text} returned {len(got)} numbers, expected {len(want)}: one per input.")
    for i, (g, w) in enumerate(zip(got, want)):
        if not math.isclose(g, w, rel_tol=tol, abs_tol=tol):
            return failed(f"{call} for {text}: the derivative for input {i} should be {number(w)}, "
                          f"received {number(g)}.\n  Hint: {numeric_hint(f, xs, i, h or DEFAULT_STEP, g, w)}")
    return None


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
        return ("that is the forward difference, which nudges one way only and is off by about h·f''/2: nudge "
                "both ways, by +h and by -h, and divide the change in f by the distance between the two points, 2h.")
    if math.isclose(got, 2 * want, rel_tol=1e-6, abs_tol=1e-9):
        return "twice the derivative: the two nudges are 2h apart, so divide by 2h, not h."
    derivative = (at(1e-5) - at(-1e-5)) / 2e-5
    if math.isclose(got, derivative, rel_tol=1e-6, abs_tol=1e-6) and not math.isclose(want, derivative, rel_tol=1e-6):
        return (f"that is the central difference for a much smaller step than the h = {h} this call gave: take the "
                "step you are given. The caller chooses h, and for a function like this one the result depends on it.")
    return ("nudge ONE input at a time, by +h and by -h, leaving the others as they are, and divide the change in f "
            "by the distance between the two points, 2h.")


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

@register("value_graph")
def value_graph_check(namespace, op, seed=0):
    """`a + b` or `a * b` ("add", "mul"), numbers on either side: a new Value with data, _prev and _op."""
    return check_graph(namespace["Value"], op, seed)


@register("value_backward")
def value_backward_check(namespace, op, seed=0):
    """The `_backward` closure of "add" or "mul", called directly: out.grad × local derivative, accumulated."""
    return check_backward(namespace["Value"], op, seed)


@register("value_engine")
def value_engine_check(namespace, name):
    """Value.backward on graphs whose closures the check wires: order, reuse, twice, long_chain."""
    return ENGINE_CHECKS[name](namespace["Value"])


@register("numerical_gradient")
def numerical_gradient_check(namespace, case="basic"):
    """The student's numerical_gradient against exact derivatives of small functions ("basic", "more")."""
    return check_numerical_gradient(namespace["numerical_gradient"], case)
