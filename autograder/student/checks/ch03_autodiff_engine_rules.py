"""Checks of the engine's rules around backward(): `zero_grad`, `no_grad`, and the two errors of backward()
(on a tensor that needs no gradient; on a result of several elements without a gradient).

The kernel runs the student's code and reports what happened as data (`engine_graph.rule_facts`); the
verdicts below read only those facts, so the course's check in the notebook and the judge (on inputs from
its secret seed) decide the same way with the same messages. Facts are dicts: a reported value is
{"kind": "none" | "array" | "tensor" | "other" | "error", "value": array, "type_name", "error_type",
"message", "line", "helper"}.
"""
import numpy as np

from autograder.student.checks.ch03_autodiff_engine_graph import rule_facts
from autograder.student.checks.registry import register
from autograder.student.checks.running import not_implemented, run_quietly, student_line
from autograder.student.verdict import failed, passed

ZERO_GRAD_HINT = ("zero_grad() forgets the gradient: it sets .grad back to None, the value of a tensor no "
                  "backward() has reached yet, and leaves .data alone.")
NO_GRAD_HINT = ("Function.__call__ records a graph only while Function.grad_enabled is true: no_grad switches it "
                "off for the length of the block and puts back the value it found when the block ends, in a "
                "`finally` (or `__exit__`), which runs even when the block raises.")
NESTED_HINT = ("a single block records nothing, but a block inside it switched recording back on: entering "
               "no_grad must set Function.grad_enabled off whatever it was (flipping it turns an outer block's "
               "off into on), and its end puts back the value it found.")
CONSTANT_HINT = ("backward() first checks that the tensor requires a gradient: one that does not (a constant, or "
                 "a result computed from constants only) has no graph to walk, so it raises RuntimeError, "
                 "whatever `grad` is given, before touching any .grad.")
NON_SCALAR_HINT = ("without `grad`, backward() can only start from a result of one element (a loss: shape (), "
                   "(1,) or (1, 1)), whose gradient is 1; for more elements it raises ValueError before touching "
                   "any .grad; the caller then reduces the result to one element (a sum, say) or passes a gradient of its shape.")


def one_axis_hint(shape):
    """The hint for a result of several elements along one axis that backward() let through without a gradient,
    after it refused one with several along every axis: its test reads one axis, not the number of elements."""
    which = "first" if shape[0] == 1 else "last"
    return (f"shape {shape} holds {int(np.prod(shape))} elements, though its {which} axis has length 1: what counts "
            "is the number of elements (the size), whatever the shape. Without `grad`, backward() starts only from a "
            "result of one element, and raises ValueError for more, before touching any .grad.")


RULE_TITLES = {
    "zero_grad": "Tensor.zero_grad()",
    "no_grad": "with no_grad()",
    "constant_error": "backward() on a tensor that does not require a gradient",
    "non_scalar_error": "backward() without grad on a result of several elements",
}


def rounded(value):
    return np.round(np.asarray(value, dtype=np.float64), 4).tolist()


def shown(fact):
    """A reported value, told in a message."""
    kind = fact.get("kind")
    if kind == "none":
        return "None"
    if kind in ("array", "tensor"):
        return f"{'a Tensor holding ' if kind == 'tensor' else ''}{rounded(fact['value'])}"
    if kind == "error":
        return f"an error ({fact.get('error_type')})"
    return f"a {fact.get('type_name') or kind}"


def raised(fact, method="Tensor.zero_grad"):
    """The message for a student's exception reported as data."""
    if fact.get("error_type") == "NotImplementedError":
        if "." not in method:
            return f"{method} is not implemented yet: replace `raise NotImplementedError()` with your code."
        return not_implemented(*method.split("."), fact.get("helper", ""))
    where = f"\n  at: {fact['line']}" if fact.get("line") else ""
    return f"{method} raised {fact.get('error_type')}: {fact.get('message')}{where}"


def zero_grad_verdict(inputs, facts):
    title = RULE_TITLES["zero_grad"]
    if "error" in facts:
        return failed(f"{title}: {raised(facts['error'])}\n  Hint: {ZERO_GRAD_HINT}")
    cleared, data, fresh = facts["cleared"], facts["data"], facts["fresh"]
    if cleared.get("kind") != "none":
        zeros = cleared.get("kind") == "array" and np.shape(cleared["value"]) == np.shape(inputs["x"]) \
            and not np.any(cleared["value"])
        why = (" (an array of zeros would be added to like a gradient; None says no gradient was computed yet)"
               if zeros else "")
        return failed(f"{title}: x.grad was {rounded(inputs['old'])}; after x.zero_grad() it is {shown(cleared)}, "
                      f"expected None{why}.\n  Hint: {ZERO_GRAD_HINT}")
    if data.get("kind") != "array" or np.shape(data["value"]) != np.shape(inputs["x"]) \
            or not np.allclose(data["value"], inputs["x"]):
        return failed(f"{title}: x.zero_grad() changed x.data from {rounded(inputs['x'])} to {shown(data)}.\n"
                      f"  Hint: {ZERO_GRAD_HINT}")
    if fresh.get("kind") != "none":
        return failed(f"{title}: on a tensor whose .grad was None, zero_grad() left {shown(fresh)}; expected None.\n"
                      f"  Hint: {ZERO_GRAD_HINT}")
    graph = facts.get("graph") or {}
    if graph.get("op") is not True or graph.get("inputs") != 1:
        return failed(f"{title}: y = {inputs['k']:g} · x recorded a graph (one op, one input); after y.zero_grad() "
                      f"it has {'an op' if graph.get('op') else 'no op'} and {graph.get('inputs')} input(s).\n"
                      "  Hint: zero_grad forgets the gradient and nothing else: the graph is what a later "
                      "backward() walks, and it stays as forward recorded it.")
    return passed(f"✔ {title} sets .grad to None and leaves .data alone")


NO_GRAD_STAGES = [  # (stage, recorded?, what happened before it)
    ("before", True, "before any `with no_grad():` block"),
    ("inside", False, "inside `with no_grad():`"),
    ("after", True, "after the `with no_grad():` block ended"),
    ("nested_inner", False, "inside a `with no_grad():` nested in an outer one"),
    ("nested_inside", False, "inside an outer `with no_grad():`, after an inner one ended"),
    ("nested_after", True, "after the nested blocks ended"),
    ("after_error", True, "after a `with no_grad():` block that raised an exception"),
]


def no_grad_verdict(inputs, facts):
    title = RULE_TITLES["no_grad"]
    k, want = inputs["k"], inputs["k"] * np.asarray(inputs["x"], dtype=np.float64)
    if "error" in facts:
        return failed(f"{title}: {raised(facts['error'], 'no_grad')}\n  Hint: {NO_GRAD_HINT}")
    for stage, recorded, when in NO_GRAD_STAGES:
        if stage == "after_error" and facts.get("propagated") is not True:
            return failed(f"{title}: an exception raised inside the block did not reach the code around it: "
                          f"no_grad must let it propagate.\n  Hint: {NO_GRAD_HINT}")
        fact = facts[stage]
        value = fact["value"]
        if value.get("kind") != "array" or np.shape(value["value"]) != want.shape \
                or not np.allclose(value["value"], want, rtol=1e-4, atol=1e-5):
            return failed(f"{title}: {when}, y = {k:g} * x computed {shown(value)}, expected {rounded(want)}: "
                          f"operations still compute their values under no_grad, they only skip the record.\n"
                          f"  Hint: {NO_GRAD_HINT}")
        got = (fact["requires_grad"], fact["op"], fact["inputs"] > 0)
        if recorded and got != (True, True, True):
            return failed(f"{title}: {when}, y = {k:g} * x (x requires a gradient) recorded no graph "
                          f"(requires_grad={fact['requires_grad']}, _op {'set' if fact['op'] else 'None'}, "
                          f"{fact['inputs']} inputs): recording must be on again.\n  Hint: {NO_GRAD_HINT}")
        if not recorded and got != (False, False, False):
            hint = NESTED_HINT if stage == "nested_inner" and got == (True, True, True) else NO_GRAD_HINT
            return failed(f"{title}: {when}, y = {k:g} * x recorded a graph (requires_grad={fact['requires_grad']}, "
                          f"_op {'set' if fact['op'] else 'None'}, {fact['inputs']} inputs); expected "
                          f"requires_grad=False, no _op and no inputs.\n  Hint: {hint}")
    return passed(f"✔ {title} records no graph inside the block, also nested, and restores recording after it, "
                  "also after an exception")


CONSTANT_CASES = [  # (fact, what was called, names of the tensors whose .grad is reported)
    ("leaf", "c.backward() with c = Tensor(..., requires_grad=False)", ["c"]),
    ("explicit", "c.backward(g) with an explicit g, c a constant of several elements", ["c"]),
    ("derived", "y.backward() with y = k * c, c a constant (so y requires no gradient either)", ["y", "c"]),
    ("wide", "c.backward() with c a constant of several elements and no grad", ["c"]),
]

CONSTANT_FIRST_HINT = ("this constant also has several elements and no grad was given, so both rules apply; the "
                       "constant's comes first (section 3.8: RuntimeError, whatever grad is): a tensor that requires no "
                       "gradient has no graph to walk, and reducing it to one element would not give it one. Check "
                       "requires_grad before looking at grad.")
OWN_LEAF_HINT = ("only a tensor whose requires_grad is False is refused. A leaf that requires a gradient (no _op, no "
                 "inputs) is a graph of one node: backward() starts from 1 and stores it in its .grad. Test "
                 "requires_grad, not whether the tensor was made by an op.")


def expect_error(title, case, fact, names, want, hint):
    """The message when `fact` (an outcome) is not the error `want` ("RuntimeError"/"ValueError"), else None."""
    error = fact["raised"]
    if error is None:
        return failed(f"{title}: {case} returned without an error; expected {want}.\n  Hint: {hint}")
    if error.get("error_type") == "NotImplementedError":
        return failed(f"{title}: {not_implemented('Tensor', 'backward', error.get('helper', ''))}")
    right_kind = fact.get("runtime") if want == "RuntimeError" else fact.get("value")
    if not right_kind:
        return failed(f"{title}: {case} raised {error.get('error_type')}: {error.get('message')}; expected "
                      f"{want}.\n  Hint: {hint}")
    if not str(error.get("message", "")).strip():
        return failed(f"{title}: {case} raised {want} with an empty message: say what is wrong and what to do.\n"
                      f"  Hint: {hint}")
    for name, grad in zip(names, fact["grads"]):
        if grad.get("kind") != "none":
            return failed(f"{title}: {case} raised {want}, but left {name}.grad = {shown(grad)}; raise before "
                          f"touching any .grad.\n  Hint: {hint}")
    return None


def constant_verdict(inputs, facts):
    title = RULE_TITLES["constant_error"]
    for stage, case, names in CONSTANT_CASES:
        fact = facts[stage]
        hint = CONSTANT_FIRST_HINT if stage == "wide" and fact["raised"] is not None and fact.get("value") else \
            CONSTANT_HINT
        problem = expect_error(title, case, fact, names, "RuntimeError", hint)
        if problem:
            return problem
    own, case = facts["own_leaf"], "w.backward() with w = Tensor(x, requires_grad=True), a leaf of one element"
    if own["raised"] is not None:
        error = own["raised"]
        return failed(f"{title}: {case} raised {error.get('error_type')}: {error.get('message')}; expected no error "
                      f"and w.grad = 1.\n  Hint: {OWN_LEAF_HINT}")
    grad, want = own["grads"][0], np.ones(np.shape(inputs["c"]))
    if grad.get("kind") != "array" or np.shape(grad["value"]) != want.shape or not np.allclose(grad["value"], want):
        return failed(f"{title}: after {case}, w.grad is {shown(grad)}; expected {rounded(want)} (dw/dw = 1).\n"
                      f"  Hint: {OWN_LEAF_HINT}")
    return passed(f"✔ {title} raises RuntimeError ({facts['leaf']['raised'].get('message')})")


def non_scalar_verdict(inputs, facts):
    title = RULE_TITLES["non_scalar_error"]
    shape = np.shape(inputs["x"])
    problem = expect_error(title, f"y.backward() with y = k * x of shape {shape}", facts["implicit"], ["x"],
                           "ValueError", NON_SCALAR_HINT)
    if problem:
        return problem
    if len(facts["lines"]) != len(inputs["lines"]):
        raise ValueError("one outcome per result along one axis expected")
    for line, fact in zip(inputs["lines"], facts["lines"]):
        line_shape = np.shape(line)
        problem = expect_error(title, f"y.backward() with y = k * x of shape {line_shape} ({np.size(line)} elements)",
                               fact, ["x"], "ValueError", one_axis_hint(line_shape))
        if problem:
            return problem
    k = inputs["k"]
    if len(facts["scalar"]) != len(inputs["ones"]):
        raise ValueError("one outcome per one-element tensor expected")
    for scalar, s in zip(facts["scalar"], inputs["ones"]):
        one = np.shape(s)
        case = f"z.backward() with z = {k:g} * s, s of shape {one} (one element)"
        if "error" in scalar:
            return failed(f"{title}: {case} raised {scalar['error'].get('error_type')}: "
                          f"{scalar['error'].get('message')}; a one-element result starts from the gradient 1.\n"
                          f"  Hint: {NON_SCALAR_HINT}")
        grad, want = scalar["grad"], np.full(one, k, dtype=np.float64)
        if grad.get("kind") != "array" or np.shape(grad["value"]) != one or not np.allclose(grad["value"], want):
            return failed(f"{title}: after {case}, s.grad is {shown(grad)}; expected {rounded(want)} "
                          f"(dz/ds = {k:g}).\n  Hint: {NON_SCALAR_HINT}")
    return passed(f"✔ {title} raises ValueError ({facts['implicit']['raised'].get('message')}); "
                  "a one-element result starts from 1")


VERDICTS = {"zero_grad": zero_grad_verdict, "no_grad": no_grad_verdict, "constant_error": constant_verdict,
            "non_scalar_error": non_scalar_verdict}


def values(rng, shape):
    return np.asarray(rng.uniform(-2.0, 2.0, size=shape), dtype=np.float32).astype(np.float64)


def factor(rng):
    return float(np.round(rng.uniform(0.5, 3.0), 2) * rng.choice([-1.0, 1.0]))


def wide_shape(rng):
    """A shape of 2 to 12 elements."""
    return tuple(int(n) for n in rng.integers(2, 4, size=int(rng.integers(1, 3))))


def rule_inputs(name, rng):
    """The numbers a rule's check runs on, from `rng` (a fixed seed in the notebook, the secret in the judge)."""
    shape = wide_shape(rng)
    if name == "zero_grad":
        return {"x": values(rng, shape), "old": values(rng, shape) + 3.0, "k": factor(rng)}
    if name == "no_grad":
        return {"x": values(rng, shape), "k": factor(rng)}
    if name == "constant_error":
        return {"c": values(rng, ()), "wide": values(rng, shape), "g": values(rng, shape), "k": factor(rng)}
    inputs = {"x": values(rng, shape), "ones": [values(rng, one) for one in ((), (1,), (1, 1))], "k": factor(rng)}
    return dict(inputs, lines=[values(rng, line) for line in line_shapes(rng)])


def line_shapes(rng):
    """(1, n) and (n, 1) for an n of 2 to 4: several elements, along one axis, after an axis of length 1."""
    n = int(rng.integers(2, 5))
    return [(1, n), (n, 1)]


def rule_verdict(name, inputs, facts):
    """The verdict on the facts reported for rule `name`; malformed facts raise (the judge: a failed probe)."""
    return VERDICTS[name](inputs, facts)


# ── the course's check, in the notebook ───────────────────────────────────────────────────────────

CHECK_SEEDS = {"zero_grad": 7, "no_grad": 8, "constant_error": 9, "non_scalar_error": 10}


def local_report(value):
    """A value as the verdicts read it (the judge's worker reports the same through JSON)."""
    if value is None:
        return {"kind": "none"}
    data = getattr(value, "data", None)
    if isinstance(value, (np.ndarray, np.generic)):
        return {"kind": "array", "value": np.asarray(value, dtype=np.float64), "type_name": type(value).__name__}
    if isinstance(data, np.ndarray) and type(value).__name__ == "Tensor":
        return {"kind": "tensor", "value": np.asarray(data, dtype=np.float64), "type_name": "Tensor"}
    return {"kind": "other", "type_name": type(value).__name__}


def local_error(error):
    from autograder.student.checks.running import raised_elsewhere
    report = {"kind": "error", "error_type": type(error).__name__, "message": str(error)[:1000],
              "line": student_line(error.__traceback__)}
    if isinstance(error, NotImplementedError):
        report["helper"] = raised_elsewhere(error, None)
    return report


@register("engine_rule")
def check_engine_rule(namespace, name):
    """One rule of the student's engine, on inputs from a fixed seed."""
    inputs = rule_inputs(name, np.random.default_rng(CHECK_SEEDS[name]))
    try:
        facts = run_quietly(rule_facts, name, inputs, namespace["Tensor"], namespace["Function"],
                            namespace.get("no_grad"), local_report, local_error)
    except Exception as error:  # noqa: BLE001 (the check's tensors could not even be made)
        return failed(f"{RULE_TITLES[name]}: the check could not build its tensors with your Tensor and Function: "
                      f"{type(error).__name__}: {error}")
    return rule_verdict(name, inputs, facts)
