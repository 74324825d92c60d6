"""Judge-side checks of one op: `forward` against the test cell's trusted expected function, `backward`
against central differences the judge computes itself, on inputs drawn from the judge's secret seed.

Each check is a generator: it yields a request for the kernel, receives the reply's JSON, and
returns a Verdict (see `Judge`, which batches the requests of a cell into one probe). They mirror
`autograder/student/checks/ch03_autodiff_ops.py` (same order of checks, tolerances and messages), so a right
answer never fails; what changes is who decides: the numbers come back as data and are compared here.
"""
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from autograder.grading.judge.probes import ProbeFailure, Returned
from autograder.grading.judge.replies import Bool, Either, ListOf, Optional, Raised, Row, Tag, Text, read, wire
from autograder.student import gradcheck
from autograder.student.checks import ch03_autodiff_kinks as kinks, references, slips
from autograder.student.checks.ch10_conv import STANDINS
from autograder.student.checks.describe import INPUT_NAMES, shapes_label
from autograder.student.checks.ch03_autodiff_ops import (
    backward_where,
    changed_op_note,
    compared,
    count_problem,
    forward_mismatch,
    forward_side_effect_problem,
    forward_state_note,
    grad_set_problem,
    layout_hint,
    layout_label,
    gradient_mismatch,
    ignores_out_grad,
    not_a_tensor,
    shape_problem,
    one_gradient_expected,
    shared_memory_problem,
    side_effect_problem,
)
from autograder.student.checks.running import method_of, not_implemented
from autograder.student.hints import rule
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges


# ── the replies ──

# What became of the arguments of one call, one per argument (null: left as the judge sent it); none when it raised.
AFTER = Either(lambda value: value == [], ListOf(Optional(Raised()), length=0), ListOf(Optional(Raised()), length="sent"))


@dataclass(frozen=True)
class ForwardReply:
    """op.forward on the judge's one set of inputs: what it returned, what became of the inputs, and whether the
    output shares memory with each (the kernel's word: it can only fail a check)."""

    results: list[Returned] = wire(ListOf(Raised(), length=1))
    after: list[list[Returned | None]] = wire(ListOf(AFTER, length=1))
    shares: list[list[bool]] = wire(ListOf(ListOf(Bool(), length="sent"), length=1))


@dataclass(frozen=True)
class Backward:
    """op.backward for each out_grad: what it returned, what became of out_grad, the inputs and the output, the op's
    attributes it had changed by then ([name, repr before, repr after]), and whether it set the .grad of each input
    and of the output (the kernel's word: it can only fail the cell)."""

    TAG: ClassVar[Tag] = Tag("grads")
    grads: list[Returned] = wire(ListOf(Raised(), length="calls"))
    after: list[list[Returned | None]] = wire(ListOf(AFTER, length="calls"))
    changed: list[list[tuple[str, str, str]]] = wire(ListOf(ListOf(Row((Text(80), Text(80), Text(80)))), length="calls"))
    grads_set: list[list[bool]] = wire(ListOf(ListOf(Bool(), most=17), length="calls"))


@dataclass(frozen=True)
class Differenced(Backward):
    """Backward, then op.forward on the perturbed inputs, for the judge's central differences."""

    perturbed: Returned = wire(Raised())


@dataclass(frozen=True)
class FirstRound(Differenced):
    """The first round of a backward check: op.forward on the judge's inputs, then backward as `Differenced`."""

    forward: Returned = wire(Raised())


@dataclass(frozen=True)
class ForwardOnly:
    """The first round, when forward raised, returned no finite array, or an output larger than the judge's pool of
    out_grad values (a second round sends them)."""

    forward: Returned = wire(Raised())


def describe_error(label, method, outcome):
    """A student's exception, reported by the kernel, told as the in-kernel checks tell it."""
    if outcome.error_type == "NotImplementedError":
        return not_implemented(label, method, outcome.helper)
    where = f"\n  at: {outcome.line}" if outcome.line else ""
    return f"{method_of(label, method)} raised {outcome.error_type}: {outcome.message}{where}"


def inputs_for(shapes, domains, rng):
    domains = [domains] * len(shapes) if isinstance(domains, str) else list(domains)
    return [gradcheck.sample(tuple(s), d, rng) for s, d in zip(shapes, domains)]


@judges("forward")
def forward(rng, op, expected, shapes, domains="real", seed=0, owns_memory=False, layout="C"):
    """op.forward on the judge's float64 arrays must equal `expected(*arrays)`, computed here; with
    `owns_memory`, the kernel's report must say the output shares no memory with an input."""
    arrays = inputs_for(shapes, domains, rng)
    want = np.asarray(expected(*[a.copy() for a in arrays]))
    reply = yield {"kind": "forward", "op": op.request(), "inputs": [arrays], "keep": [op.name], "layout": layout}
    reply = read(reply, ForwardReply, sent=len(arrays))
    got = reply.results[0]
    after = reported_after(reply.after[0], arrays)
    if got.failed:
        return failed(describe_error(op.label, "forward", got))
    where = f"{op.label}.forward on inputs {shapes_label(arrays)}{layout_label(layout)}"
    if got.kind != "array":
        hint = " forward works on NumPy arrays; __call__ wraps the result in a Tensor for you." \
            if got.kind == "tensor" else ""
        return failed(f"{where} returned a {got.type_name or got.kind}, expected a numpy.ndarray.{hint}")
    if got.value.shape != want.shape:
        return failed(f"{where}: expected output shape {want.shape}, received {got.value.shape}.")
    mismatch = gradcheck.worst_mismatch(got.value, want, rtol=1e-5, atol=1e-6)
    if mismatch:
        return failed(forward_mismatch(where, op.name, arrays, got.value, want, mismatch,
                                       slips.params_of_call(op.name, op.args, op.kwargs), layout))
    problem = forward_side_effect_problem(where, arrays, after)
    if not problem and owns_memory:
        problem = shared_memory_problem(where, reply.shares[0])
    if problem:
        return failed(problem)
    return passed(f"✔ {op.label}.forward matches NumPy on {shapes_label(arrays)}")


def standins(names):
    """{op class name: the name of its slow forward in checks/slow.py}, for the worker to build stand-ins from."""
    return {name: STANDINS[name].__name__ for name in names}


@judges("backward")
def backward(rng, op, shapes, domains="real", seed=0, isolate=(), constant=(), layout="C", other_forward=False):
    """op.backward against central differences of op.forward, for an all-ones and a random out_grad.

    As in the course's check, the differences are those of the student's own forward, which must first
    agree with the course's (references.py: a forward that computes nothing has a zero gradient); the
    judge computes them itself from forward values on its perturbed inputs.
    As in the course's check, the kernel swaps every other chapter-3 op and the Tensor operators for the
    course's meanwhile (`keep`: the op under test; checks/ch03_autodiff_course_ops.py), and `isolate`: further ops
    (chapter 10's Flip, Dilate) for known-right stand-ins.
    """
    label = op.label
    arrays = inputs_for(shapes, domains, rng)
    pool = rng.standard_normal(pool_size(op, shapes))
    isolate = standins(isolate)
    constant = [int(i) for i in constant]
    state = {"layout": layout, "others": inputs_for(shapes, domains, rng) if other_forward else None}
    reply = yield {"kind": "backward", "op": op.request(), "arrays": arrays, "pool": pool, "step": gradcheck.STEP,
                   "isolate": isolate, "keep": [op.name], "constant": constant, **state}
    sizes = {"calls": 2, "sent": len(arrays) + 2}
    reply = read(reply, FirstRound | ForwardOnly, **sizes)
    first = reply.forward
    if first.failed:
        return failed(describe_error(label, "forward", first) + "\n  (backward is checked against your forward: fix forward first.)")
    if first.kind != "array":
        return failed(f"{label}.forward returned a {first.type_name or first.kind}, not a NumPy array: "
                      "backward is checked against your forward, fix forward first.")
    out = np.asarray(first.value, dtype=np.float64)
    if not np.all(np.isfinite(out)):
        return failed(f"{label}.forward returned inf or nan on inputs {shapes_label(arrays)} "
                      f"(values {np.array2string(arrays[0].ravel()[:4], precision=5)} ...).\n  backward is checked "
                      "against your forward, by finite differences: fix forward first.")
    reference = references.of_call(op.name, op.args, op.kwargs)
    problem = reference and references.wrong_shape(label, reference, arrays, out)
    if problem:
        return failed(problem)
    nudged = references.Nudged(reference, arrays) if reference else None
    random = pool[:out.size].reshape(out.shape) if out.size <= pool.size else rng.standard_normal(out.shape)
    upstreams = [("an all-ones out_grad", np.ones(out.shape)), ("a random out_grad", random)]
    if isinstance(reply, ForwardOnly):  # the output outgrew the pool: a second round with explicit out_grads
        reply = read((yield {"kind": "backward", "op": op.request(), "arrays": arrays, "out": out,
                             "upstreams": [u for _, u in upstreams], "step": gradcheck.STEP, "isolate": isolate,
                             "keep": [op.name], "constant": constant, **state}), Differenced, **sizes)
    afters = [reported_after(item, [upstream, *arrays, out]) for item, (_, upstream) in zip(reply.after, upstreams)]
    changes, results = [], {}
    changed_calls = [call[:8] for call in reply.changed]        # only ever told in a failing message
    for (name, upstream), answer, after, changed, grads_set in zip(upstreams, reply.grads, afters, changed_calls,
                                                                   reply.grads_set):
        verdict, grads = backward_once(op, arrays, out, upstream, name, answer, reply.perturbed, after, nudged, constant,
                                       grads_set, first.value.dtype, layout, other_forward)
        if not verdict.passed:
            if name == "a random out_grad" and "ones" in results and ignores_out_grad(grads, results["ones"], upstream):
                verdict.message += "\n  Your gradients are those of an all-ones out_grad: does your backward multiply by out_grad?"
            verdict.message += changed_op_note(changes)
            return verdict
        results["ones" if "ones" in name else "random"] = grads
        changes = changed
    return passed(f"✔ {label}.backward matches finite differences on {shapes_label(arrays)}")


def pool_size(op, shapes):
    """Enough random out_grad values for the op's output, guessed from its input shapes and its shape
    arguments (BroadcastTo grows its input); a bigger output costs one more round, not a wrong verdict."""
    sizes = [int(np.prod(s)) for s in shapes] + [int(np.prod(a)) for a in op.args
                                                if isinstance(a, tuple) and all(isinstance(n, int) for n in a)]
    return max(64, 2 * max(sizes, default=1))


def numeric_gradients(arrays, out, perturbed, upstream, step=gradcheck.STEP):
    """d/dx of sum(forward * upstream) from forward values at x ± step, in the order the worker made them."""
    values = np.asarray(perturbed, dtype=np.float64)
    if values.shape != (2 * sum(a.size for a in arrays),) + out.shape:
        raise ProbeFailure(f"forward's outputs on perturbed inputs have shape {values.shape}, "
                           f"expected {2 * sum(a.size for a in arrays)} of shape {out.shape}")
    return gradcheck.central_differences(arrays, values, upstream, step)


def reported_after(items, sent):
    """out_grad's, each input's and the output's data after backward: what the judge `sent` where the
    kernel reports it untouched (None), else the value it reports (an array, or None for anything else);
    [] when backward raised, and it is not read then. Only changed arguments travel, to keep probes small."""
    return [before if v is None else (v.value if v.kind == "array" else None) for v, before in zip(items, sent)]


def backward_once(op, arrays, out, upstream, upstream_name, answer, perturbed, after, nudged=None, constant=(),
                  grads_set=(), out_dtype=None, layout="C", other_forward=False):
    """Judge one reply of op.backward; returns (verdict, gradients as float64 arrays or None). `nudged`: the
    course's forward around the inputs (references.Nudged), whose finite differences the student's must agree with."""
    label = op.label
    case = slips.Case(op.name, slips.params_of_call(op.name, op.args, op.kwargs), arrays, out, upstream)
    where = backward_where(label, arrays, upstream_name, constant, layout, other_forward)
    if answer.failed:
        return failed(describe_error(label, "backward", answer) + f"\n  while running {where}.\n  Hint: {rule(op.name)}"
                      + forward_state_note(op.name, answer.error_type, answer.message)), None
    if answer.kind == "none":
        return failed(f"{where} returned None: did you forget `return`?"), None
    grads = answer.items if answer.kind == "sequence" else [answer]
    if len(grads) != len(arrays):
        return failed(count_problem(where, op.name, len(arrays), len(grads))), None
    for i, g in enumerate(grads):
        name = INPUT_NAMES[i]
        if i in constant:
            continue
        if g.kind != "tensor":
            kind = g.type_name or g.kind
            return not_a_tensor(where, name, kind, g.kind == "array" or kind in ("float", "int")), None
        if g.value.shape != arrays[i].shape:
            hint = slips.shape_hint(case, [v.value if v.kind == "tensor" else None for v in grads], i)
            return failed(shape_problem(where, name, g.value.shape, arrays[i].shape, hint)), None
    if perturbed.failed:
        return failed(describe_error(label, "forward", perturbed) + "\n  while computing finite differences of your forward."), None
    if perturbed.kind != "array":
        raise ProbeFailure("the perturbed forward values are not an array")
    if len(after) != len(arrays) + 2:
        raise ProbeFailure("backward returned, but the reply does not say what became of its arguments")
    numeric = numeric_gradients(arrays, out, perturbed.value, upstream)
    analytic = compared(grads, numeric, constant, lambda g: g.value)
    problem = nudged and references.wrong_differences(label, nudged, arrays, out, numeric, upstream, out_dtype)
    if problem:
        return failed(problem), analytic
    message = (gradient_mismatch(where, arrays, analytic, numeric, layout_hint(slips.backward_hint(case, analytic), layout))
               or side_effect_problem(where, [upstream, *arrays, out], after)
               or grad_set_problem(where, grads_set))
    return (failed(message) if message else passed("ok")), analytic


def rule_gradient(op, a, out, upstream, where):
    """The kernel's op.backward on a node built by hand over `a` and `out`, for out_grad `upstream`, with no finite
    differences (the gradient is judged by a rule: ties, kinks): (the gradient for a, None), or (None, the failed
    Verdict), as `checks.ops.one_input_gradient` gives them in the kernel."""
    reply = read((yield {"kind": "backward", "op": op.request(), "arrays": [a], "out": out, "upstreams": [upstream],
                         "isolate": {}, "keep": [op.name]}), Backward, calls=1, sent=3)
    answer = reply.grads[0]
    if answer.failed:
        return None, failed(describe_error(op.label, "backward", answer) + f"\n  while running {where}.")
    grads = answer.items if answer.kind == "sequence" else [answer]
    if len(grads) != 1 or grads[0].kind != "tensor":
        return None, one_gradient_expected(where, answer.type_name or answer.kind)
    return np.asarray(grads[0].value, dtype=np.float64), None


@judges("kink")
def kink(rng, op, shapes, seed=0):
    """ReLU's or Abs's backward on the judge's input holding exact zeros (`checks/ch03_autodiff_kinks.py`), against the rule."""
    a, out, upstream = kinks.kink_case(op.name, shapes[0], rng)
    grad, failure = yield from rule_gradient(op, a, out, upstream, kinks.kink_where(op.label, a))
    return failure or kinks.kink_verdict(op.name, op.label, a, upstream, grad)
