"""Known wrong backwards, and the evidence that names one.

A hint names a specific mistake only when the student's gradients equal, on the very inputs checked,
the gradients that mistake computes; otherwise it gives the op's rule (`hints.rule`). Each slip
says what the gradient equals (an observation, true whenever it matches) and the rule it broke.
Chapter 3's ops keep their slips in their records (`ch03_autodiff_op_specs.py`); the later chapters' are here.
Shared by the in-kernel checks (checks/ch03_autodiff_ops.py) and the judge (grading/judge/ch03_autodiff_ops.py), so both say the same.
"""
from dataclasses import dataclass, field

import numpy as np

from autograder.student.checks import formulas
from autograder.student.checks.ch03_autodiff_op_specs import OPS as CH03_OPS
from autograder.student.checks.op_specs import Slip, u
from autograder.student.checks.references import SETTINGS
from autograder.student.hints import rule

# The constructor's parameters of the ops, in order (references.SETTINGS): the judge knows an op only by
# the arguments the test cell gave it (`Transpose((1, 2, 0))`), the kernel by the instance's attributes.
PARAMETERS = SETTINGS

# A slip matches when the student's gradient equals its prediction to float32 accuracy (the student's
# Tensor ops may round to float32); wrong and right gradients differ by O(1) on the checked inputs.
RTOL, ATOL = 1e-4, 1e-5


@dataclass(frozen=True)
class Case:
    """One call of op.backward as checked: the op's class name and parameters, its float64 inputs, its output
    and the out_grad it was given."""

    op: str
    params: dict = field(hash=False)
    arrays: list = field(hash=False)
    out: np.ndarray = field(hash=False)
    upstream: np.ndarray = field(hash=False)


def params_of_instance(name, op):
    """The kernel's view: the op's settings, read from the instance (its __init__ is provided code)."""
    return {p: getattr(op, p, None) for p in PARAMETERS.get(name, ())}


def params_of_call(name, args, kwargs):
    """The judge's view: the settings from the test cell's constructor call."""
    return {**dict(zip(PARAMETERS.get(name, ()), args)), **dict(kwargs)}


def one_hot_rows(c):
    """SoftmaxCrossEntropy's labels as one-hot rows of its logits' shape."""
    return np.eye(c.arrays[0].shape[1])[np.asarray(c.params["labels"], dtype=int)]


SLIPS = {
    **{name: list(op.slips) for name, op in CH03_OPS.items() if op.slips},
    "Softmax": [
        Slip("your gradient is out_grad times s, the diagonal term only; each s_i also falls when another input "
             "of its row grows (∂s_i/∂a_k = −s_i·s_k for i ≠ k), which subtracts s times the sum of out_grad·s "
             "along the axis.", lambda c: [u(c) * c.out]),
        Slip("your gradient is out_grad times s(1 − s), the derivative of each s_i with respect to its own input "
             "only; every s_i depends on the whole row along the axis, so the gradient needs the sum of out_grad·s "
             "along it.", lambda c: [u(c) * c.out * (1 - c.out)]),
        Slip("your gradient is s(1 − s) without out_grad: the chain rule multiplies the softmax's derivative by "
             "the upstream gradient.", lambda c: [c.out * (1 - c.out)]),
        Slip("your sum of out_grad·s runs over every axis; it belongs along the softmax's own axis only, one sum "
             "per row.", lambda c: [c.out * (u(c) - (u(c) * c.out).sum())] if c.out.ndim > 1 else None),
    ],
    "Affine": [
        Slip("your bias gradient is the mean of out_grad's rows; the one bias row was used by every row of the "
             "batch, so its gradient is their sum.",
             lambda c: [u(c) @ c.arrays[1].T, c.arrays[0].T @ u(c), u(c).mean(axis=0, keepdims=True)]),
        Slip("your bias gradient is out_grad itself, one row per sample; the one bias row was used by every row of "
             "the batch, so its gradient adds those rows up, in the bias's shape (1, out).",
             lambda c: [u(c) @ c.arrays[1].T, c.arrays[0].T @ u(c), u(c)]),
        Slip("your bias gradient is the sum of out_grad's rows with the leading axis dropped; a gradient has its "
             "input's shape, here (1, out).",
             lambda c: [u(c) @ c.arrays[1].T, c.arrays[0].T @ u(c), u(c).sum(axis=0)]),
        Slip("your weight gradient is Gᵀ X, of shape (out, in); a gradient has its input's shape, the weight's "
             "(in, out), which decides which factor is transposed and on which side out_grad goes.",
             lambda c: [u(c) @ c.arrays[1].T, u(c).T @ c.arrays[0], u(c).sum(axis=0, keepdims=True)]),
    ],
    "SoftmaxCrossEntropy": [
        Slip("your gradient is N times the finite differences: the loss is the mean over the batch's N rows, so "
             "every row's gradient is divided by N.",
             lambda c: [(formulas.softmax(c.arrays[0], 1) - one_hot_rows(c)) * u(c)]),
        Slip("your gradient is the softmax alone (over N, times out_grad): the label's logit also enters the loss "
             "on its own, with a minus sign, so its one-hot row is subtracted from the softmax.",
             lambda c: [formulas.softmax(c.arrays[0], 1) / len(c.arrays[0]) * u(c)]),
    ],
    "EmbeddingLookup": [
        Slip("your gradient keeps one contribution per row where an index repeats: an assignment through an "
             "index array (also an in-place add through one) writes a repeated row again instead of adding to it; every position that looked row r "
             "up adds its out_grad to row r's gradient.", lambda c: [assigned_rows(c)]),
        Slip("your gradient counts how often each row was looked up, without out_grad: each use adds that "
             "position's out_grad, not 1.", lambda c: [added_rows(c, np.ones_like(u(c)))]),
    ],
}










def conv_weight_gradient(c):
    """Conv's gradient for w, for the case's inputs and out_grad: each filter tap (i, j) sums out_grad times the
    padded input it was laid over, at every output position."""
    x, w = c.arrays
    s, p = c.params.get("stride", 1), c.params.get("padding", 0)        # Conv's defaults, for Conv() and Conv(2)
    padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    rows, cols = c.upstream.shape[2:]
    grad = np.zeros(w.shape)
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            laid = padded[:, :, i:i + s * (rows - 1) + 1:s, j:j + s * (cols - 1) + 1:s]
            grad[:, :, i, j] = np.tensordot(c.upstream, laid, axes=([0, 2, 3], [0, 2, 3]))
    return grad


def conv_input_gradient(c, w):
    """Conv's gradient for x with the filters `w`: each output's out_grad, times each filter tap, added back at the
    padded pixel the tap was laid over; the padding cut off."""
    x = c.arrays[0]
    s, p = c.params.get("stride", 1), c.params.get("padding", 0)
    n, channels, height, width = x.shape
    rows, cols = c.upstream.shape[2:]
    padded = np.zeros((n, channels, height + 2 * p, width + 2 * p))
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            padded[:, :, i:i + s * (rows - 1) + 1:s, j:j + s * (cols - 1) + 1:s] += np.einsum(
                "noyx,oc->ncyx", c.upstream, w[:, :, i, j])
    return padded[:, :, p:p + height, p:p + width]


SLIPS["Conv"] = [
    Slip("your gradient for a, the images x, is all zeros, and your gradient for b, the filters w, is right. Zeros "
         "are the gradient only of images that require none (section 10.5's saving for a first layer, decided by the "
         "images' own requires_grad); here a requires a gradient and only b is a constant, so a needs the folded one.",
         lambda c: [np.zeros(c.arrays[0].shape), conv_weight_gradient(c)]),
    Slip("your gradient for a, the images x, is the transposed convolution of out_grad with filters that were not "
         "flipped: pixel x[s·y + i] met tap w[i] in output y, so its gradient takes out_grad[y] times that same tap, "
         "which, written as a convolution over out_grad, visits the filter backwards (section 10.5: Flip((2, 3)) of "
         "the channel-swapped filters).",
         lambda c: [conv_input_gradient(c, c.arrays[1][:, :, ::-1, ::-1]), conv_weight_gradient(c)]),
]






def assigned_rows(c):
    """An EmbeddingLookup gradient made by buffered indexing: one repeat per row survives."""
    grad = np.zeros(c.arrays[0].shape)
    grad[np.asarray(c.params["indices"], dtype=np.int64)] += u(c)
    return grad


def added_rows(c, values):
    grad = np.zeros(c.arrays[0].shape)
    np.add.at(grad, np.asarray(c.params["indices"], dtype=np.int64), values)
    return grad




def matches(grads, predicted):
    """True when every gradient equals the prediction: same shape, same values to float32 accuracy."""
    if predicted is None or len(predicted) != len(grads):
        return False
    for g, p in zip(grads, predicted):
        if g is None:
            return False
        g, p = np.asarray(g, dtype=np.float64), np.asarray(p, dtype=np.float64)
        if g.shape != p.shape or not np.all(np.isfinite(p)) or not np.allclose(g, p, rtol=RTOL, atol=ATOL):
            return False
    return True


def slip_of(case, grads):
    """The first known slip whose gradients equal `grads` on this case, or None."""
    with np.errstate(all="ignore"):
        for slip in SLIPS.get(case.op, ()):
            try:
                predicted = slip.gradients(case)
            except Exception:  # noqa: BLE001 (a slip that cannot happen for these settings)
                continue
            if matches(grads, predicted):
                return slip
    return None


def backward_hint(case, grads):
    """The hint for gradients `grads` (arrays, None where not one) that failed on `case`: the known mistake
    they match, with its rule, or else the op's rule; then what its nan or inf values say, if they say anything."""
    slip = slip_of(case, grads)
    return (slip.says if slip else rule(case.op)) + nonfinite_note(case, grads)


# Ops whose derivative the text writes with the output, where a backward recomputed from the input can overflow.
FROM_OUTPUT = {name: op.from_output for name, op in CH03_OPS.items() if op.from_output}


def nonfinite_note(case, grads):
    """What a gradient's nan or inf values say, as a sentence to add to a hint, or "": when every one sits at an
    input of exactly 0, the backward divides by that input (0 / 0); when every one sits at an input beyond ±700
    (Sigmoid, Tanh), an exponential of the input overflowed. The evidence alone decides, never the op's name."""
    with np.errstate(all="ignore"):
        for g in grads:
            if g is None:
                continue
            g = np.asarray(g, dtype=np.float64)
            bad = ~np.isfinite(g)
            inputs = [np.asarray(a, dtype=np.float64) for a in case.arrays if np.shape(a) == g.shape]
            if not bad.any() or not inputs:
                continue
            if any(np.all(a[bad] == 0) for a in inputs):
                return ("\n  Your gradient is nan or inf only where an input is exactly 0: it divides by that input "
                        "(as node / a does, reusing the output), which is 0 / 0 there, though the function is smooth "
                        "at 0. Write the derivative without dividing by the input.")
            if case.op in FROM_OUTPUT and any(np.all(np.abs(a[bad]) > 700) for a in inputs):
                return (f"\n  Your gradient is nan or inf only at inputs beyond ±700, where an exponential of the input "
                        f"overflows (above about 709 in float64; inf / inf is nan). Write the derivative as the text "
                        f"does, {FROM_OUTPUT[case.op]}: it stays finite for any input.")
    return ""


def shape_hint(case, grads, index):
    """The hint for input `index`'s gradient having the wrong shape: a matching slip's, or what the shapes say."""
    slip = slip_of(case, grads)
    if slip:
        return slip.says
    expected, received = case.arrays[index].shape, np.shape(grads[index])
    if int(np.prod(received)) > int(np.prod(expected)) or len(received) > len(expected):
        return ("it is larger than the input: each input's gradient has that input's shape, so where the forward "
                "copied an input's values along axes (broadcasting), the gradient adds up the shares of the copies "
                f"over those axes. The rule: {rule(case.op)}")
    if int(np.prod(received)) == int(np.prod(expected)):
        return f"it has as many elements as the input, in another shape. The rule: {rule(case.op)}"
    return rule(case.op)
