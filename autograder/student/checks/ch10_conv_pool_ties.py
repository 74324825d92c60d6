"""MaxPool's backward where a window's maximum is tied: the one case finite differences cannot judge.

At a tie, max has no derivative. Raising any one of the tied elements raises the output, so every way of
sharing the window's out_grad among its tied maxima, in shares of out_grad's sign that add up to it, is a
valid gradient (the text gives it all to the first, as PyTorch does). What is never valid is gradient on an
element that is not the maximum, or shares that add up to more or less than out_grad: a backward that
hands every tied element all of out_grad counts the window's output once per tie. Random inputs never
tie, so `check.backward` cannot see that; these inputs tie in every window.
"""
import numpy as np

from autograder.student.checks import slow
from autograder.student.checks.describe import number, op_label, shapes_label
from autograder.student.checks.ch03_autodiff_ops import one_input_gradient
from autograder.student.checks.registry import register
from autograder.student.verdict import failed, passed

# The rule as the text states it (section 10.6). It says what to do, not why a tie may be split so: that is
# written question 10.A's to answer. The check accepts any split of the same sign that adds up to out_grad.
TIES_RULE = ("where a window's maximum is tied, section 10.6 gives the window's out_grad to the first of its tied "
             "maxima, and 0 to every other element of the window")
TOLERANCE = 1e-6


def tiles(array, k):
    """(N, C, H//k, W//k, k*k): each k × k window of the pooled region as one row; leftover rows and columns dropped."""
    n, c, h, w = array.shape
    rows, cols = h // k, w // k
    return (array[:, :, :rows * k, :cols * k].reshape(n, c, rows, k, cols, k)
            .transpose(0, 1, 2, 4, 3, 5).reshape(n, c, rows, cols, k * k))


def untiled(windows, k):
    """tiles' inverse: the (N, C, H//k*k, W//k*k) region the windows were cut from."""
    n, c, rows, cols, _ = windows.shape
    return windows.reshape(n, c, rows, cols, k, k).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, rows * k, cols * k)


def tied_input(shape, k, rng):
    """An input whose every window holds its maximum two to k*k times, at random places; the rest below it."""
    a = rng.uniform(-1.0, 0.5, shape)
    windows = tiles(a, k)
    count = rng.integers(2, k * k + 1, windows.shape[:-1])
    rank = np.argsort(np.argsort(rng.random(windows.shape), axis=-1), axis=-1)     # a random order per window
    windows = np.where(rank < count[..., None], rng.uniform(1.0, 2.0, count.shape)[..., None], windows)
    a[:, :, :a.shape[2] // k * k, :a.shape[3] // k * k] = untiled(windows, k)
    return a


def tied_case(shape, k, rng):
    """(input, MaxPool(k)'s output by the course's loops, out_grad): one draw of the tie check."""
    a = tied_input(shape, k, rng)
    out = slow.max_pool(k)(a)
    return a, out, tied_upstream(out.shape, rng)


def tied_upstream(shape, rng):
    """out_grad of either sign, away from 0, so that a share's sign and a sum's size both show."""
    return rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)


def tie_split_problem(where, a, k, upstream, grad):
    """What is wrong with `grad` as MaxPool(k)'s gradient on the tied input `a` for `upstream`, or None."""
    if grad.shape != a.shape:
        return f"{where}: the gradient has shape {grad.shape}, expected {a.shape} (the input's shape)."
    n, c, h, w = a.shape
    leftover = grad.copy()
    leftover[:, :, :h // k * k, :w // k * k] = 0
    if np.abs(leftover).max(initial=0) > TOLERANCE:
        index = tuple(int(i) for i in np.argwhere(np.abs(leftover) > TOLERANCE)[0])
        return (f"{where}: a[{', '.join(map(str, index))}] is in the rows or columns pooling drops, yet its "
                f"gradient is {number(grad[index])}.\n  Hint: an element no window covers does not move the "
                "output: its gradient is 0.")
    values, shares = tiles(a, k), tiles(grad, k)
    is_max = values == values.max(axis=-1, keepdims=True)
    sums = shares.sum(axis=-1)
    off = np.where(is_max, 0.0, np.abs(shares)).max(axis=-1)
    wrong_sum = ~np.isclose(sums, upstream, rtol=TOLERANCE, atol=TOLERANCE)
    fraction = shares / upstream[..., None]
    wrong_sign = np.where(is_max, (fraction < -TOLERANCE) | (fraction > 1 + TOLERANCE), False).any(axis=-1)
    bad = (off > TOLERANCE) | wrong_sum | wrong_sign
    if not bad.any():
        return None
    where_bad = tuple(int(i) for i in np.argwhere(bad)[0])
    y, x = where_bad[2] * k, where_bad[3] * k
    window = f"a[{where_bad[0]}, {where_bad[1]}, {y}:{y + k}, {x}:{x + k}]"
    ties, g = int(is_max[where_bad].sum()), float(upstream[where_bad])
    told = (f"\n  in the window {window} (values {np.array2string(values[where_bad].reshape(k, k), precision=3)}), "
            f"the maximum {number(values[where_bad].max())} appears {ties} times and out_grad there is {number(g)}; "
            f"your gradient there is {np.array2string(shares[where_bad].reshape(k, k), precision=3)}")
    if off[where_bad] > TOLERANCE:
        return f"{where}: gradient reaches an element that is not its window's maximum.{told}\n  Hint: {TIES_RULE}."
    if wrong_sum[where_bad]:
        every = np.isclose(sums[where_bad], ties * g, rtol=TOLERANCE, atol=TOLERANCE) and ties > 1
        cause = (f"\n  It adds up to {ties} times out_grad: every tied maximum got all of it, so the window's "
                 "output is counted once per tie." if every else
                 f"\n  It adds up to {number(sums[where_bad])}, not out_grad.")
        return f"{where}: the shares of the tied maxima do not add up to out_grad.{told}{cause}\n  Hint: {TIES_RULE}."
    return (f"{where}: a tied maximum's share has the opposite sign to out_grad, or is larger than it.{told}\n"
            f"  Hint: {TIES_RULE}.")


def ties_where(label, a):
    return f"{label}.backward on inputs {shapes_label([a])} with tied maxima in every window"


def ties_verdict(label, a, k, upstream, grad):
    """The verdict on `grad`, MaxPool(k)'s gradient on the tied input `a` for `upstream`: the course's check's and the judge's."""
    problem = tie_split_problem(ties_where(label, a), a, k, upstream, grad)
    return failed(problem) if problem else passed(f"✔ {label}.backward shares out_grad among tied maxima on "
                                                  f"{shapes_label([a])}")


def check_max_pool_ties(Tensor, op, shapes, seed=0):
    """op.backward on an input whose every window's maximum is tied, with a random out_grad of either sign."""
    label, k = op_label(op), int(getattr(op, "kernel_size", 2))
    a, out, upstream = tied_case(shapes[0], k, np.random.default_rng(seed))
    grad, failure = one_input_gradient(Tensor, op, label, a, out, upstream, ties_where(label, a))
    return failure or ties_verdict(label, a, k, upstream, grad)


@register("max_pool_ties")
def max_pool_ties_check(namespace, op, shapes, seed=0):
    """MaxPool's backward where every window's maximum is tied: shares of out_grad among the tied maxima."""
    return check_max_pool_ties(namespace["Tensor"], op, shapes, seed)
