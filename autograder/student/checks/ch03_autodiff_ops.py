"""Checks of one op at a time: its forward against NumPy, its backward against finite differences.

A backward is called directly as `op.backward(out_grad, node)` on a node built by hand, so a broken
engine or a broken `Function.__call__` never costs an op its points.
"""
import contextlib
import copy

import numpy as np

from autograder.student import gradcheck
from autograder.student.checks import ch03_autodiff_course_ops as course_ops, references, slips
from autograder.student.checks.describe import (
    INPUT_NAMES,
    index_label,
    number,
    op_label,
    shapes_label,
    type_name,
)
from autograder.student.checks.kernel_facts import changed_attributes, laid_out, op_attributes
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.hints import backward_hint, op_name
from autograder.student.verdict import failed, passed


def own_method(op, name):
    """The function of `op`'s class behind `op.name` (None if there is none): the code under test."""
    return getattr(type(op), name, None)


LAYOUTS = ("C", "batch_last", "fortran", "reversed")


def other_inputs(shapes, domains, seed):
    """Inputs of the same shapes and domains as the checked ones, for a second forward before backward."""
    others, _ = inputs_for(shapes, domains, seed + 7919)
    return others


def inputs_for(shapes, domains, seed):
    rng = np.random.default_rng(seed)
    domains = [domains] * len(shapes) if isinstance(domains, str) else list(domains)
    return [gradcheck.sample(tuple(s), d, rng) for s, d in zip(shapes, domains)], rng


def check_forward(op, expected, shapes, domains="real", seed=0, owns_memory=False, layout="C"):
    """op.forward on float64 arrays must return an ndarray equal to `expected(*arrays)`; with `owns_memory`,
    one that shares no memory with its inputs (the text asks Flip for a copy, not NumPy's view); `layout`:
    the inputs' memory order (laid_out)."""
    label = op_label(op)
    arrays, _ = inputs_for(shapes, domains, seed)
    want = np.asarray(expected(*[a.copy() for a in arrays]))
    given = [laid_out(a, layout) for a in arrays]
    try:
        got = run_quietly(op.forward, *given)
    except Exception as error:  # noqa: BLE001 (any student error becomes a message)
        return failed(describe_exception(label, "forward", error, own_method(op, "forward")))
    where = f"{label}.forward on inputs {shapes_label(arrays)}{layout_label(layout)}"
    if not isinstance(got, (np.ndarray, np.generic)):
        hint = " forward works on NumPy arrays; __call__ wraps the result in a Tensor for you." \
            if hasattr(got, "data") else ""
        return failed(f"{where} returned a {type_name(got)}, expected a numpy.ndarray.{hint}")
    if np.shape(got) != want.shape:
        return failed(f"{where}: expected output shape {want.shape}, received {np.shape(got)}.")
    mismatch = gradcheck.worst_mismatch(got, want, rtol=1e-5, atol=1e-6)
    if mismatch:
        return failed(forward_mismatch(where, op_name(op), arrays, got, want, mismatch,
                                       slips.params_of_instance(op_name(op), op), layout))
    problem = forward_side_effect_problem(where, arrays, given) \
        or (owns_memory and shared_memory_problem(where, [np.may_share_memory(got, g) for g in given]))
    if problem:
        return failed(problem)
    return passed(f"✔ {label}.forward matches NumPy on {shapes_label(arrays)}")


def shared_memory_problem(where, shares):
    """The message for a forward whose output is a view of an input (`shares`: per input, whether the output
    shares its memory), or None. Shared with the judge, which has `shares` from the kernel."""
    for name, shared in zip(INPUT_NAMES, shares):
        if shared:
            return (f"{where}: the output shares its memory with input {name}: it is a view of {name}, not an array "
                    f"of its own.\n  Hint: the text asks for an output that owns its memory. A view changes whenever "
                    f"{name} changes in place (an optimizer's step writes into the weights), so the output kept in "
                    "the graph would no longer be what forward computed: copy the view.")
    return None


# The layouts of views an op meets in a graph, whose failure the memory order alone explains (chapter 10's batch-last
# layout has messages of its own).
MEMORY_ORDER_LAYOUTS = ("fortran", "reversed")
MEMORY_ORDER_RULE = ("these inputs are views whose memory holds the numbers in another order than NumPy's default. "
                     "The answer depends on the values alone: work on them as NumPy's functions do, never on how "
                     "memory holds them (strides, buffers, an order argument).")


def layout_hint(hint, layout):
    """The hint for a gradient that is wrong on inputs laid out as `layout` (shared with the judge)."""
    return MEMORY_ORDER_RULE if layout in MEMORY_ORDER_LAYOUTS else hint


def layout_label(layout):
    """How a message names inputs given in a memory order other than C's."""
    return LAYOUT_LABELS.get(layout, "")


LAYOUT_LABELS = {"batch_last": " (batch-last in memory: an NCHW view of (C, H, W, N) data)",
                 "fortran": " (in Fortran order: the first axis fastest in memory, as a transpose's view)",
                 "reversed": " (a view with negative strides: every axis runs backwards in memory, as a[::-1])"}


def one_input_gradient(Tensor, op, label, a, out, upstream, where):
    """op.backward for out_grad `upstream` on a node built by hand over the one input `a` and the output `out`,
    for the checks that judge a gradient by a rule rather than by finite differences (ties, kinks):
    (the gradient for a as float64, None), or (None, the failed Verdict)."""
    node = Tensor(out.copy(), dtype=np.float64, requires_grad=True)
    node._op, node._inputs = op, (Tensor(a.copy(), dtype=np.float64, requires_grad=True),)
    try:
        returned = run_quietly(op.backward, Tensor(upstream.copy(), dtype=np.float64, requires_grad=False), node)
    except Exception as error:  # noqa: BLE001
        return None, failed(describe_exception(label, "backward", error, own_method(op, "backward"))
                            + f"\n  while running {where}.")
    grads = list(returned) if isinstance(returned, (tuple, list)) else [returned]
    if len(grads) != 1 or not isinstance(grads[0], Tensor):
        return None, one_gradient_expected(where, type_name(returned))
    return np.asarray(grads[0].data, dtype=np.float64), None


def one_gradient_expected(where, returned):
    return failed(f"{where}: backward must return one Tensor, the gradient for a; it returned {returned}.")


def conv_forward_hint(arrays, got, want, params):
    """For Conv, the hint when the evidence names the slip (filters flipped; the right values in other places), or
    "". `params`: the op's stride and padding."""
    x, w = arrays
    stride, padding = params.get("stride", 1) or 1, params.get("padding", 0) or 0
    got = np.asarray(got, dtype=np.float64)
    if w.shape[2] * w.shape[3] > 1 and np.allclose(
            got, references.conv(stride, padding)(x, w[:, :, ::-1, ::-1]), rtol=1e-5, atol=1e-6):
        return ("\n  Hint: your output is the convolution with every filter rotated by half a turn (flipped along kh "
                "and kw), the textbook's 'true' convolution. This chapter's Conv, like PyTorch's, lays each filter "
                "over the patch as it is: w[o, c, i, j] multiplies the pixel at row s·y + i, column s·x + j.")
    if not np.allclose(np.sort(got.ravel()), np.sort(want.ravel()), rtol=1e-5, atol=1e-6):
        return ""
    n, n_out, height, width = want.shape
    product = want.transpose(1, 2, 3, 0).reshape(n_out, -1)          # the product's columns in (y, x, n) order
    if np.allclose(got, product.reshape(n_out, n, height, width).transpose(1, 0, 2, 3), rtol=1e-5, atol=1e-6):
        return ("\n  Hint: every value is right, in the wrong place: the product's columns run (H_out, W_out, N), the "
                "batch last, as im2col laid out the patches, and your forward read them as (N, H_out, W_out). "
                "Reshape to (O, H_out, W_out, N), in the columns' own order, then move the batch first.")
    return ("\n  Hint: every value is right, in the wrong place: an order of axes was mixed up (NCHW against the "
            "batch-last columns of im2col). The product's columns follow the order of the patches' columns, "
            "(H_out, W_out, N): reshape in that order, then transpose to NCHW.")


def forward_mismatch(where, name, arrays, got, want, mismatch, params=None, layout="C"):
    """The message for a forward whose values are wrong: the worst element, the inputs, and for the ops that
    exponentiate, what inf or nan where a finite value belongs says; for Conv, a slip the values show
    (`params`: the op's settings); for inputs in another memory order than C's (`layout`), the rule that the
    values alone decide. Shared with the judge."""
    hint = f"\n  Hint: {MEMORY_ORDER_RULE}" if layout in MEMORY_ORDER_LAYOUTS else ""
    if name == "Conv" and len(arrays) == 2 and np.shape(got) == want.shape and want.ndim == 4:
        hint = conv_forward_hint(arrays, got, want, params or {})
    lost = ~np.isfinite(np.asarray(got, dtype=np.float64)) & np.isfinite(want)
    if name in ("LogSumExp", "Softmax") and lost.any():
        hint = ("\n  Hint: inf or nan where the answer is finite: exp overflowed (above about 709 in float64; inf / inf "
                "is nan) or a whole row of exponentials underflowed to 0 (0 / 0). Subtract the maximum before "
                "exponentiating, and take it along the same axes as the sum, so that every row keeps an exponent "
                "of 0.")
    if name in slips.FROM_OUTPUT and lost.any():
        hint = ("\n  Hint: nan where the answer is finite: an exponential of a large positive number overflowed "
                "to inf (above about 709 in float64), and inf / inf is nan. Write the formula so that no exponential "
                "of a large positive number is ever taken.")
    return (f"{where}: {mismatch.count} of {mismatch.size} values are wrong.\n"
            f"  worst: out{list(mismatch.index)} = {number(mismatch.analytic)}, expected {number(mismatch.numeric)}\n"
            f"  input values: {np.array2string(arrays[0].ravel()[:6], precision=4)}{' ...' if arrays[0].size > 6 else ''}"
            f"{hint}")


def check_backward(Tensor, op, shapes, domains="real", seed=0, constant=(), layout="C", other_forward=False):
    """op.backward must match finite differences of op.forward, for an all-ones and a random out_grad. The
    inputs at the positions `constant` are built with requires_grad=False (a batch of data): their gradients are
    nobody's, and not compared, so a backward may skip them (MatMul's shortcut), and that branch is checked too.
    `layout`: the inputs' memory order (laid_out); `other_forward`: the op's forward runs on these inputs and
    then on others before backward is called for these, as an op used twice in one graph is."""
    label = op_label(op)
    arrays, rng = inputs_for(shapes, domains, seed)
    unrun = forward_not_run(op)         # backward's op: as the judge's, one whose forward never ran (text, 3.4)
    try:
        first = run_quietly(op.forward, *[laid_out(a, layout) for a in arrays])
        out = np.asarray(first, dtype=np.float64)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception(label, "forward", error, own_method(op, "forward")) + "\n  (backward is checked against your forward: fix forward first.)")
    if not np.all(np.isfinite(out)):
        return failed(f"{label}.forward returned inf or nan on inputs {shapes_label(arrays)} "
                      f"(values {np.array2string(arrays[0].ravel()[:4], precision=5)} ...).\n  backward is checked "
                      "against your forward, by finite differences: fix forward first.")
    reference = references.of_instance(op_name(op), op)
    problem = reference and references.wrong_shape(label, reference, arrays, out)
    if problem:
        return failed(problem)
    nudged = references.Nudged(reference, arrays) if reference else None
    upstreams = [("an all-ones out_grad", np.ones(out.shape)), ("a random out_grad", rng.standard_normal(out.shape))]
    # The op's settings and its forward's finite differences are read before backward first runs: a backward
    # that changes its op (a Transpose keeping the inverse in self.axes) must not change what it is measured on.
    params, differences = slips.params_of_instance(op_name(op), op), student_differences(op, arrays)
    if other_forward:
        try:
            for inputs in (arrays, other_inputs(shapes, domains, seed)):
                run_quietly(unrun.forward, *[laid_out(a, layout) for a in inputs])
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception(label, "forward", error, own_method(op, "forward")))
    before, changes, results = op_attributes(unrun), [], {}
    for name, upstream in upstreams:
        verdict, grads = backward_once(Tensor, unrun, label, arrays, out, upstream, name, nudged, constant,
                                       params, differences, getattr(first, "dtype", None), layout, other_forward)
        if not verdict.passed:
            if name == "a random out_grad" and "ones" in results and ignores_out_grad(grads, results["ones"], upstream):
                verdict.message += ("\n  Your gradients are those of an all-ones out_grad: does your backward multiply by out_grad?")
            verdict.message += changed_op_note(changes)
            return verdict
        results["ones" if "ones" in name else "random"] = grads
        changes = changed_attributes(before, op_attributes(unrun))
    return passed(f"✔ {label}.backward matches finite differences on {shapes_label(arrays)}")


def forward_not_run(op):
    """A copy of `op` taken before its forward runs, for backward's calls: the judge's worker builds the op afresh
    for backward, so a backward that reads what forward kept on the op (`self.x = a`) fails alike on both sides."""
    try:
        return copy.deepcopy(op)
    except Exception:  # noqa: BLE001 (an op that cannot be copied is checked as it is)
        return op


def forward_state_note(op_class, error_type, message):
    """What to add to the message of a backward that raised AttributeError for an attribute of its own op, which its
    forward would have set (shared with the judge, which has the error's type name and message), or ""."""
    if error_type != "AttributeError" or not str(message).startswith(f"'{op_class}' object has no attribute "):
        return ""
    return ("\n  Your backward reads an attribute that forward sets on the op. The checks call backward on a node they "
            "build by hand, with an op whose forward has not run (section 3.4): take what backward needs from out_grad "
            "and node (node._inputs, node.data), never from values forward kept on the op.")


def student_differences(op, arrays):
    """(the student's forward at every nudged input, None), or (None, the exception it raised there)."""
    try:
        return gradcheck.perturbed_outputs(lambda *xs: run_quietly(op.forward, *xs), arrays), None
    except Exception as error:  # noqa: BLE001 (reported where the judge reports it, after backward's own checks)
        return None, error


def changed_op_note(changes):
    """What to add to the message of a backward that failed on its second call, when its first call changed the op
    (shared with the judge): the evidence, and the rule that one op's backward may run any number of times."""
    if not changes:
        return ""
    listed = ", ".join(f"self.{name} from {old} to {new}" for name, old, new in changes[:3])
    return (f"\n  This was backward's second call on the same op, and its first call changed the op: {listed}. "
            "An op's backward runs once per backward() through its graph, and a graph may be walked twice "
            "(gradients accumulate: chapter 3, section 3.8), so backward must leave the op's attributes as it "
            "found them and give the same answer every time.")


def ignores_out_grad(grads, grads_for_ones, upstream):
    return grads is not None and not np.allclose(upstream, 1) and all(
        g is not None and np.allclose(g, g1, rtol=1e-4, atol=1e-6) for g, g1 in zip(grads, grads_for_ones))


def backward_once(Tensor, op, label, arrays, out, upstream, upstream_name, nudged, constant, params, differences,
                  out_dtype=None, layout="C", other_forward=False):
    """One call of op.backward; returns (verdict, gradients as float64 arrays or None). `nudged`: the course's
    forward around the inputs (references.Nudged), whose finite differences the student's must agree with;
    `constant`: the positions of inputs that require no gradient (see check_backward); `params`: the op's settings
    and `differences`: `student_differences`, both taken before backward first ran."""
    where = backward_where(label, arrays, upstream_name, constant, layout, other_forward)
    case = slips.Case(op_name(op), params, arrays, out, upstream)
    inputs = tuple(Tensor(a.copy(), dtype=np.float64, requires_grad=i not in constant) for i, a in enumerate(arrays))
    for tensor, a in zip(inputs, arrays):
        tensor.data = laid_out(a, layout)
    node = Tensor(out.copy(), dtype=np.float64, requires_grad=True)
    node._op, node._inputs = op, inputs
    out_grad = Tensor(upstream.copy(), dtype=np.float64, requires_grad=False)
    try:
        returned = run_quietly(op.backward, out_grad, node)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception(label, "backward", error, own_method(op, "backward")) + f"\n  while running {where}.\n  Hint: {backward_hint(op)}"
                      + forward_state_note(type(op).__name__, type(error).__name__, error)), None
    grads_set = [getattr(t, "grad", None) is not None for t in (*inputs, node)]

    grads = list(returned) if isinstance(returned, (tuple, list)) else [returned]
    if returned is None:
        return failed(f"{where} returned None: did you forget `return`?"), None
    if len(grads) != len(arrays):
        return failed(count_problem(where, type(op).__name__, len(arrays), len(grads))), None
    for i, g in enumerate(grads):
        name = INPUT_NAMES[i]
        if i in constant:
            continue
        if not isinstance(g, Tensor):
            return not_a_tensor(where, name, type_name(g), isinstance(g, (np.ndarray, np.generic, float, int))), None
        if tuple(g.shape) != arrays[i].shape:
            hint = slips.shape_hint(case, [t.data if isinstance(t, Tensor) else None for t in grads], i)
            return failed(shape_problem(where, name, tuple(g.shape), arrays[i].shape, hint)), None

    after = [out_grad.data] + [t.data for t in inputs] + [node.data]
    outputs, error = differences
    if error is not None:
        return failed(describe_exception(label, "forward", error, own_method(op, "forward"))
                      + "\n  while computing finite differences of your forward."), None
    numeric = gradcheck.central_differences(arrays, outputs, upstream)
    analytic = compared(grads, numeric, constant, lambda g: g.data)
    problem = nudged and references.wrong_differences(label, nudged, arrays, out, numeric, upstream, out_dtype)
    if problem:
        return failed(problem), analytic
    message = (gradient_mismatch(where, arrays, analytic, numeric, layout_hint(slips.backward_hint(case, analytic), layout))
               or side_effect_problem(where, [upstream, *arrays, out], after)
               or grad_set_problem(where, grads_set))
    return (failed(message) if message else passed("ok")), analytic


def grad_set_problem(where, grads_set):
    """The first argument whose `.grad` backward set, or None. `grads_set`: for each input, then the output (node),
    whether its `.grad`, None when backward was called, is no longer None (shared with the judge, which takes it
    from the kernel's report)."""
    names = [f"input {name}" for name in INPUT_NAMES[:len(grads_set) - 1]] + ["the output (node)"]
    for name, was_set in zip(names, grads_set):
        if was_set:
            return f"{where}: backward set the .grad of {name}, which was None.\n  Hint: {GRAD_SET_RULE}"
    return None


GRAD_SET_RULE = ("backward returns the gradients and leaves its arguments as they were: writing .grad is the "
                 "engine's job (section 3.8), which adds what backward returns to each tensor's .grad, so a .grad "
                 "that backward sets as well counts that gradient twice.")


def count_problem(where, op_name, inputs, returned):
    """The message for a backward that returned `returned` gradients to an op of `inputs` inputs (shared with the
    judge)."""
    plural = "a tuple of" if inputs > 1 else "exactly"
    return (f"{where}: {op_name} has {inputs} input(s), so backward must return {plural} {inputs} gradient(s), "
            f"one per input; it returned {returned}.")


def shape_problem(where, name, got, want, hint):
    """The message for input `name`'s gradient of shape `got` where the input's shape `want` was due (shared with
    the judge)."""
    return f"{where}: the gradient for {name} has shape {got}, expected {want} (the shape of input {name}).\n  Hint: {hint}"


def not_a_tensor(where, name, kind, plain):
    """The message for a gradient that is a `kind`, not a Tensor; `plain`: an array or a number, whose values only need
    a Tensor around them (shared with the judge)."""
    fix = (" Its values belong in a Tensor: make one from them, or build the gradient from Tensor operations, which "
           "give one." if plain else "")
    return failed(f"{where}: the gradient for {name} is a {kind}, but backward must return Tensors.{fix}")


def backward_where(label, arrays, upstream_name, constant=(), layout="C", other_forward=False):
    constants = "".join(f" ({INPUT_NAMES[i]} is a constant: requires_grad=False)" for i in constant)
    second = (", called after the same op's forward ran on these inputs and then on others (an op used twice "
              "before one backward: backward reads its inputs from node, never what the last forward kept)"
              if other_forward else "")
    return f"{label}.backward with inputs {shapes_label(arrays)}{layout_label(layout)}{constants} and {upstream_name}{second}"


def compared(grads, numeric, constant, values):
    """The gradients as float64 arrays, those of the `constant` inputs replaced by the finite differences: a
    constant's gradient is nobody's, so it is not compared (shared with the judge)."""
    return [np.asarray(n if i in constant else values(g), dtype=np.float64)
            for i, (g, n) in enumerate(zip(grads, numeric))]


def side_effect_problem(where, sent, after):
    """The first argument backward changed: `sent` and `after` hold out_grad, each input and the output
    (node), before and after the call. None when backward left them all alone."""
    names = ["out_grad"] + [f"input {name}" for name in INPUT_NAMES[:len(sent) - 2]] + ["the output (node)"]
    return changed_argument(where, "backward", names, sent, after, SIDE_EFFECT_RULE)


def forward_side_effect_problem(where, sent, after):
    """The first input array forward changed (`sent`, `after`: the arrays before and after the call), or None."""
    names = [f"input {name}" for name in INPUT_NAMES[:len(sent)]]
    return changed_argument(where, "forward", names, sent, after, FORWARD_SIDE_EFFECT_RULE)


def changed_argument(where, method, names, sent, after, rule):
    for name, before, now in zip(names, sent, after):
        now = np.asarray(now, dtype=np.float64) if isinstance(now, (np.ndarray, np.generic)) else None
        if now is None or now.shape != np.shape(before):
            return (f"{where}: after {method}, {name}'s data is no longer the array it was "
                    f"(shape {np.shape(before)}).\n  Hint: {rule}")
        changed = ~np.isclose(now, before, rtol=1e-6, atol=1e-7, equal_nan=True)
        if changed.any():
            index = tuple(int(i) for i in np.argwhere(changed)[0])
            return (f"{where}: {method} changed {name} in place: {int(changed.sum())} of {changed.size} values, "
                    f"e.g. at {list(index)} it was {number(np.asarray(before)[index])} and is {number(now[index])}.\n"
                    f"  Hint: {rule}")
    return None


SIDE_EFFECT_RULE = ("backward must leave its arguments as they were and build new arrays: in a graph, Add hands "
                    "the same out_grad to both of its inputs, and the inputs and the output are read again by "
                    "other ops' backwards, so a change made in place gives them wrong gradients.")
FORWARD_SIDE_EFFECT_RULE = ("forward must leave its input arrays as they were and return a new array (a view made "
                            "by reshaping or slicing is fine, a write is not): Function.__call__ hands forward the "
                            "input tensors' own arrays, so a write into one (an assignment into it, out=, a new "
                            ".shape) changes the input tensor itself and every later use of it.")


def gradient_mismatch(where, arrays, analytic, numeric, hint):
    """The teaching message for the first input whose gradient disagrees with finite differences, or None.
    Shared with the judge (autograder/grading/judge/ch03_autodiff_ops.py), so both say the same thing."""
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        mismatch = gradcheck.worst_mismatch(a, n)
        if mismatch:
            element = index_label(INPUT_NAMES[i], mismatch.index)
            sign = ("\n  Your gradient has the opposite sign everywhere: a minus sign is missing or extra."
                    if np.allclose(a, -n, rtol=gradcheck.RTOL, atol=gradcheck.ATOL) and np.abs(n).max() > 1e-3 else "")
            return (f"{where}: the gradient for {INPUT_NAMES[i]} is wrong in {mismatch.count} of {mismatch.size} elements.\n"
                    f"  worst element {element}: your backward gives {number(mismatch.analytic)}, "
                    f"finite differences give {number(mismatch.numeric)} (input value {number(arrays[i][mismatch.index])}){sign}\n"
                    f"  Hint: {hint}")
    return None


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

@register("forward")
def forward_check(namespace, op, expected, shapes, domains="real", seed=0, owns_memory=False, layout="C"):
    """op.forward against NumPy's `expected` on random inputs of these shapes, with the course's
    own versions of every other chapter-3 op and of the Tensor operators meanwhile (`course_ops`)."""
    with course_ops.swapped(namespace, keep=[type(op).__name__]):
        return check_forward(op, expected, shapes, domains, seed, owns_memory, layout)


@register("backward")
def backward_check(namespace, op, shapes, domains="real", seed=0, isolate=(), constant=(), layout="C",
                   other_forward=False):
    """op.backward against finite differences of op.forward, with all-ones and random out_grad.

    Meanwhile every other chapter-3 op and the Tensor operators are the course's (`course_ops`), and
    `isolate` names further ops (chapter 10's Flip, Dilate, ...) replaced by known-right stand-ins,
    so that a backward built from other ops is graded on its own.
    """
    from autograder.student.checks.ch10_conv import (
        swapped as isolating,  # convolution imports this module
    )
    isolated = isolating(namespace, isolate) if isolate else contextlib.nullcontext()
    with course_ops.swapped(namespace, keep=[type(op).__name__]), isolated:
        return check_backward(namespace["Tensor"], op, shapes, domains, seed, tuple(constant), layout, other_forward)
