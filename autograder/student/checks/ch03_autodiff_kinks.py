"""ReLU's and Abs's backward at the kink, a = 0: the other case finite differences cannot judge.

At 0 neither function has a derivative, and central differences there give 1/2 (ReLU) or 0 (Abs), whatever
the student's rule. The text fixes the rule: 0 at the kink, as PyTorch does, so that an input of exactly 0
passes no gradient on. Random inputs are never exactly 0, so `check.backward` cannot see a mask written
with `>=`; these inputs hold exact zeros among ordinary values, and the check compares the gradient with
the rule itself, element by element.
"""
import numpy as np

from autograder.student import gradcheck
from autograder.student.checks.describe import number, op_label, shapes_label
from autograder.student.checks.ch03_autodiff_ops import one_input_gradient
from autograder.student.checks.registry import register
from autograder.student.hints import op_name
from autograder.student.verdict import failed, passed

# The local derivative each op's backward multiplies out_grad by, with the text's 0 at the kink.
SLOPES = {"ReLU": lambda a: (a > 0).astype(np.float64), "Abs": np.sign}
FORWARDS = {"ReLU": lambda a: np.maximum(a, 0), "Abs": np.abs}
# The expected gradients are exact (out_grad or 0, |out_grad| <= 2): atol is scaled by at most 2, so no element
# may miss by more than 1e-9 + 1e-6 of its value.
TOLERANCE = {"rtol": 1e-6, "atol": 5e-10}
KINK_RULE = ("the derivative at the kink a = 0 is taken to be 0 (the text's rule, as in PyTorch): an input of "
             "exactly 0 passes no gradient on")


def kink_case(name, shape, rng):
    """(a, out, upstream): ordinary nonzero inputs with a third of them (at least one) set to exactly 0,
    the op's output, and a random out_grad of either sign, kept away from 0 so every element shows."""
    a = gradcheck.sample(tuple(shape), "nonzero", rng)
    zeros = rng.permutation(a.size)[:max(1, a.size // 3)]
    a.flat[zeros] = 0.0
    upstream = rng.choice([-1.0, 1.0], a.shape) * rng.uniform(0.5, 2.0, a.shape)
    return a, FORWARDS[name](a), upstream


def kink_where(label, a):
    return f"{label}.backward on inputs {shapes_label([a])} with {int((a == 0).sum())} entries exactly 0"


def kink_verdict(name, label, a, upstream, grad):
    """The verdict on `grad`, the op's gradient on `a` (holding exact zeros) for `upstream`: the course's check's
    and the judge's."""
    where = kink_where(label, a)
    want = upstream * SLOPES[name](a)
    if grad.shape != a.shape:
        return failed(f"{where}: the gradient for a has shape {grad.shape}, expected {a.shape}.")
    mismatch = gradcheck.worst_mismatch(grad, want, **TOLERANCE)
    if mismatch is None:
        return passed(f"✔ {label}.backward gives 0 at the kink on {shapes_label([a])}")
    at = mismatch.index
    message = (f"{where}: the gradient for a is wrong in {mismatch.count} of {mismatch.size} elements.\n"
               f"  worst: a{list(at)} = {number(a[at])}, out_grad {number(upstream[at])}: your backward gives "
               f"{number(mismatch.analytic)}, expected {number(mismatch.numeric)}")
    if gradcheck.worst_mismatch(grad[a != 0], want[a != 0], **TOLERANCE) is None:
        message += f"\n  Every wrong element is an input of exactly 0.\n  Hint: {KINK_RULE}."
    return failed(message)


def check_kink(Tensor, op, shapes, seed=0):
    """op.backward (ReLU or Abs) on inputs holding exact zeros, against the text's rule."""
    name, label = op_name(op), op_label(op)
    a, out, upstream = kink_case(name, shapes[0], np.random.default_rng(seed))
    grad, failure = one_input_gradient(Tensor, op, label, a, out, upstream, kink_where(label, a))
    return failure or kink_verdict(name, label, a, upstream, grad)


@register("kink")
def kink_check(namespace, op, shapes, seed=0):
    """ReLU's or Abs's backward where some inputs are exactly 0: 0 at the kink, the text's rule."""
    return check_kink(namespace["Tensor"], op, shapes, seed)
