"""Checks of chapter 7's initializers, by the statistics of a large seeded draw.

A draw of n independent values has a sample mean within a few sqrt(var / n) of the true mean and a
sample variance within a few var * sqrt((kurtosis - 1) / n) of the true variance. The checks allow
six of those standard errors (a correct initializer fails with probability below 1e-8), while a
wrong gain or a wrong fan moves the variance by a factor, dozens of standard errors away.
"""
import math

import numpy as np

from autograder.student.checks.describe import type_name
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed

SIGMAS = 6.0
KURTOSIS = {"uniform": 1.8, "normal": 3.0}
# P(|z| > 2) for a standard normal: a normal draw has this share beyond two standard deviations,
# a uniform one none at all (its bound is sqrt(3) = 1.73 standard deviations).
NORMAL_TAIL = math.erfc(2 / math.sqrt(2))

# The notebook's provided table of gains (chapters/ch07_init.py): the judge's own copy, since the kernel's can be edited.
GAINS = {"linear": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3.0, "relu": math.sqrt(2.0)}

HINTS = {
    "xavier": "Xavier (Glorot) keeps the variance of activations AND gradients: Var(w) = gain² · 2 / (fan_in + fan_out).",
    "kaiming": "Kaiming (He) keeps the variance of the forward signal through ReLUs: Var(w) = gain² / fan_in, gain = √2 for relu.",
}


def expected_variance(family, fan_in, fan_out, gain):
    return gain ** 2 * (2.0 / (fan_in + fan_out) if family == "xavier" else 1.0 / fan_in)


def drawn_problem(label, fan_in, fan_out, type_name_, is_tensor, shape, dtype, requires_grad):
    """The message for a draw that is not a trainable float32 Tensor of shape (fan_in, fan_out), else None."""
    if not is_tensor:
        return f"{label} returned a {type_name_}, expected a Tensor: the drawn array, wrapped in one."
    if tuple(shape) != (fan_in, fan_out):
        return (f"{label} has shape {tuple(shape)}, expected ({fan_in}, {fan_out}): "
                "a weight maps fan_in inputs to fan_out outputs, as Linear's weight does.")
    if dtype != np.float32:
        return f"{label} has dtype {dtype}, expected float32 (the Tensor default)."
    if not requires_grad:
        return f"{label} has requires_grad=False: weights are trained, they need gradients."
    return None


def draw(fn, label, fan_in, fan_out, setting, seed, Tensor):
    """(float64 values, None) or (None, message)."""
    try:
        w = run_quietly(lambda: fn(fan_in, fan_out, *setting, seed=seed))
    except Exception as error:  # noqa: BLE001
        return None, describe_exception(label.split("(")[0], "", error).replace(". ", " ", 1)
    is_tensor = isinstance(w, Tensor)
    problem = drawn_problem(label, fan_in, fan_out, type_name(w), is_tensor, getattr(w, "shape", None) if is_tensor else (),
                            w.dtype if is_tensor else None, is_tensor and w.requires_grad)
    return (None, problem) if problem else (np.asarray(w.data, dtype=np.float64), None)


def initializer_label(name, fan_in, fan_out, setting, seed):
    return f"{name}({', '.join([str(fan_in), str(fan_out)] + [repr(s) for s in setting] + [f'seed={seed}'])})"


def check_initializer(namespace, name, fan_in=400, fan_out=600, setting=(), seed=0):
    """`name` is xavier_uniform, xavier_normal, kaiming_uniform or kaiming_normal; `setting` its gain or nonlinearity."""
    fn, Tensor = namespace[name], namespace["Tensor"]
    label = initializer_label(name, fan_in, fan_out, setting, seed)
    w, problem = draw(fn, label, fan_in, fan_out, setting, seed, Tensor)
    if problem:
        return failed(problem)
    verdict = statistics_verdict(label, name, fan_in, fan_out, setting, w, namespace["GAINS"])
    if not verdict.passed:
        return verdict
    try:
        again, _ = draw(fn, label, fan_in, fan_out, setting, seed, Tensor)
        other, _ = draw(fn, label, fan_in, fan_out, setting, seed + 1, Tensor)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception(name, "", error))
    return seeding_problem(label, seed, w, again, other) or verdict


def seeding_problem(label, seed, w, again, other):
    """A failed verdict when the same seed gives other weights or the next seed the same ones, else None."""
    if again is None or not np.array_equal(w, again):
        return failed(f"{label} gave different weights on a second call with the same seed.\n"
                      "  Hint: draw from a generator made from the seed (NumPy's default_rng): a generator made "
                      "without it, or the global np.random functions, draws differently every call.")
    if other is not None and np.array_equal(w, other):
        return failed(f"{label}: seeds {seed} and {seed + 1} gave the same weights: the seed must drive the draw, "
                      "so the generator is made from it.")
    return None


def std_as_variance(sample_var, var, n):
    """For a normal draw of the wrong variance: the note that NumPy's normal takes the standard deviation, when
    `sample_var` is the square of the expected `var` (the variance given where the std belongs); else ""."""
    if abs(sample_var - var ** 2) <= SIGMAS * var ** 2 * math.sqrt((KURTOSIS["normal"] - 1) / n):
        return (f" {sample_var:.4g} is the expected variance squared: NumPy's normal takes the standard deviation "
                "as its scale, not the variance.")
    return ""


def tolerances(var, n, distribution):
    """How far n draws of variance `var` may stray, SIGMAS standard errors each: (their mean from 0, their variance
    from `var`, their share beyond two standard deviations from a normal's NORMAL_TAIL)."""
    return (SIGMAS * math.sqrt(var / n), SIGMAS * var * math.sqrt((KURTOSIS[distribution] - 1) / n),
            SIGMAS * math.sqrt(NORMAL_TAIL * (1 - NORMAL_TAIL) / n))


def statistics_verdict(label, name, fan_in, fan_out, setting, w, gains):
    """Mean, variance and shape of the distribution of the float64 values `w`, against the initializer's law."""
    family, distribution = name.split("_")
    if family == "xavier":
        gain = float(setting[0]) if setting else 1.0
    else:
        gain = float(gains[setting[0] if setting else "relu"])
    n, var = w.size, expected_variance(family, fan_in, fan_out, gain)
    mean, sample_var = float(w.mean()), float(w.var())
    mean_tol, var_tol, tail_tol = tolerances(var, n, distribution)
    if abs(mean) > mean_tol:
        return failed(f"{label}: the {n} weights have mean {mean:.3g}, expected 0 (within ±{mean_tol:.2g}).\n"
                      "  Hint: draw symmetrically around 0: uniformly between -a and a, or from a normal of mean 0.")
    if abs(sample_var - var) > var_tol:
        ratio = sample_var / var
        return failed(f"{label}: the weights have variance {sample_var:.4g}, expected {var:.4g} "
                      f"(within ±{var_tol:.2g}): {ratio:.3g} times too {'large' if ratio > 1 else 'small'}.\n"
                      f"  Hint: {HINTS[family]}" + (" For uniform(-a, a) the variance is a²/3, so a = √3 · std."
                                                     if distribution == "uniform" else std_as_variance(sample_var, var, n)))
    spread = float(np.abs(w).max())
    if distribution == "uniform":
        bound = math.sqrt(3 * var)
        if spread > bound * (1 + 1e-6) or spread < bound * (1 - 20 / n):
            return failed(f"{label}: the largest |weight| is {spread:.4g}, but a uniform(-a, a) draw of {n} values "
                          f"with the right variance has a = {bound:.4g} and comes within {20 / n:.1e} of it (relatively).\n"
                          "  Hint: the weights are uniform between -a and a, with a = √3 · std: the largest of many "
                          "comes right up to a and none goes past it.")
    else:
        tail = float(np.mean(np.abs(w) > 2 * math.sqrt(var)))
        if abs(tail - NORMAL_TAIL) > tail_tol:
            return failed(f"{label}: {tail:.2%} of the weights lie beyond 2 standard deviations; a normal draw has "
                          f"{NORMAL_TAIL:.2%} there.\n  Hint: the weights follow a normal distribution of mean 0 "
                          "and the expected standard deviation.")
    return passed(f"✔ {label}: mean {mean:+.1e}, variance {sample_var:.4g} (expected {var:.4g}), "
                  f"{distribution} shape, reproducible")


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

@register("initializer")
def initializer_check(namespace, name, fan_in=400, fan_out=600, setting=(), seed=0):
    """xavier_uniform, xavier_normal, kaiming_uniform or kaiming_normal, by the statistics of a large draw."""
    return check_initializer(namespace, name, fan_in, fan_out, tuple(setting), seed)
