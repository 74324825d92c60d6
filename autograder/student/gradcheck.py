"""Finite-difference gradients, the yardstick every backward is measured against.

Everything here is float64 and calls an op's `forward` on plain arrays, never the Tensor
machinery, so a float32 Tensor or a broken engine cannot blur the reference.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

STEP = 1e-5          # central differences: truncation ~STEP**2, rounding ~1e-16/STEP
RTOL = 1e-3          # float32 backward arithmetic is good to ~1e-6; wrong backwards are off by O(1)
ATOL = 1e-4


def sample(shape: tuple[int, ...], domain: str, rng: np.random.Generator) -> np.ndarray:
    """Random inputs inside an op's safe domain, rounded to float32 so a float32 Tensor holds them exactly.

    `real`: uniform in [-2, 2]; `positive`: [0.5, 2.5] (log, sqrt, powers);
    `nonzero`: |x| in [0.25, 2] with a random sign (abs, relu, division: away from kinks and poles), and
    both signs in any sample of two or more (a draw of one sign would let `abs` or `relu` pass as the identity);
    `large` ([998, 1002]) and `very_negative` ([-1002, -998]): where exp() overflows or underflows;
    `rows_apart`: rows from -1000 to 1000, hundreds apart (each ± 2): one max for the whole array
    instead of one per row leaves the lower rows' exponentials at 0;
    `wide_rows`: along the last axis (at least 4 long), two values near 800 and the rest near -800 (each ± 2):
    a shift by the minimum or the mean, not the maximum, leaves an exponent above 709, which overflows;
    `with_zeros`: [-2, 2] with a third of the entries (at least one) exactly 0, in random places: where an op is
    smooth at 0 (a power a^n with n >= 1), a backward that divides by the input gives 0 / 0 = nan there;
    `distinct`: [-2, 2] with every two values at least 2/size apart, in random places (MaxPool): two values
    of one window within STEP of each other would split the finite-difference gradient between them.
    """
    if domain == "real":
        x = rng.uniform(-2.0, 2.0, size=shape)
    elif domain == "positive":
        x = rng.uniform(0.5, 2.5, size=shape)
    elif domain == "nonzero":
        magnitudes, signs = rng.uniform(0.25, 2.0, size=shape), rng.choice([-1.0, 1.0], size=shape)
        if signs.size > 1 and abs(signs.sum()) == signs.size:
            signs.flat[0] = -signs.flat[0]
        x = magnitudes * signs
    elif domain == "large":
        x = rng.uniform(998.0, 1002.0, size=shape)
    elif domain == "very_negative":
        x = rng.uniform(-1002.0, -998.0, size=shape)
    elif domain == "with_zeros":
        x = rng.uniform(-2.0, 2.0, size=shape)
        x.flat[rng.permutation(x.size)[:max(1, x.size // 3)]] = 0.0
    elif domain == "rows_apart":
        offsets = rng.permutation(np.linspace(-1000.0, 1000.0, shape[0]))
        x = offsets.reshape((-1,) + (1,) * (len(shape) - 1)) + rng.uniform(-2.0, 2.0, size=shape)
    elif domain == "wide_rows":
        x = -800.0 + rng.uniform(-2.0, 2.0, size=shape)
        for index in np.ndindex(shape[:-1]):
            x[index][rng.permutation(shape[-1])[:2]] += 1600.0
    elif domain == "distinct":
        size = int(np.prod(shape))
        gap = 4.0 / max(size, 1)
        centres = -2.0 + gap * (np.arange(size) + 0.5)      # one value per equal slice of [-2, 2]
        x = rng.permutation(centres + rng.uniform(-gap / 4, gap / 4, size)).reshape(shape)
    else:
        raise ValueError(f"unknown domain {domain!r}")
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def perturbed_outputs(forward: Callable[..., ArrayLike], arrays: Sequence[ArrayLike], step: float = STEP) -> np.ndarray:
    """forward's float64 outputs at each element of each input nudged by +step then -step, stacked in that order
    (the order `central_differences` reads, and the judge's probe collects): taken once, they serve every out_grad."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    outputs = []
    for which, x in enumerate(arrays):
        for index in np.ndindex(x.shape):
            for sign in (1.0, -1.0):
                moved = [a.copy() for a in arrays]
                moved[which][index] = x[index] + sign * step
                outputs.append(np.asarray(forward(*moved), dtype=np.float64))
    return np.stack(outputs) if outputs else np.zeros((0,))


def central_differences(arrays: Sequence[ArrayLike], values: ArrayLike, upstream: ArrayLike,
                        step: float = STEP) -> list[np.ndarray]:
    """d/dx of sum(forward * upstream) for every input x, from `values`: forward's outputs at each element of
    each input nudged by +step then -step, stacked in that order (what the judge's probe and references.Nudged
    collect)."""
    values = np.asarray(values, dtype=np.float64)
    objectives = (values * np.asarray(upstream, dtype=np.float64)).reshape(len(values), -1).sum(axis=1)
    grads, start = [], 0
    for a in arrays:
        size, shape = np.size(a), np.shape(a)
        pairs = objectives[start:start + 2 * size].reshape(size, 2)
        grads.append(((pairs[:, 0] - pairs[:, 1]) / (2 * step)).reshape(shape))
        start += 2 * size
    return grads


def numerical_gradients(forward: Callable[..., ArrayLike], arrays: Sequence[ArrayLike], upstream: ArrayLike,
                        step: float = STEP) -> list[np.ndarray]:
    """d/dx of sum(forward(*arrays) * upstream) for every input x, by central differences in float64."""
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    upstream = np.asarray(upstream, dtype=np.float64)

    def objective() -> float:
        return float(np.sum(np.asarray(forward(*[a.copy() for a in arrays]), dtype=np.float64) * upstream))

    grads = []
    for x in arrays:
        grad = np.zeros_like(x)
        for index in np.ndindex(x.shape):
            original = x[index]
            x[index] = original + step
            plus = objective()
            x[index] = original - step
            minus = objective()
            x[index] = original
            grad[index] = (plus - minus) / (2 * step)
        grads.append(grad)
    return grads


@dataclass
class Mismatch:
    """Where an analytic gradient strays furthest from the numeric one."""

    index: tuple[int, ...]
    analytic: float
    numeric: float
    count: int          # how many elements are out of tolerance
    size: int


def worst_mismatch(analytic: ArrayLike, numeric: ArrayLike, rtol: float = RTOL,
                   atol: float = ATOL) -> Mismatch | None:
    """None when the two agree everywhere; else the element that disagrees most, relative to tolerance."""
    analytic = np.asarray(analytic, dtype=np.float64)
    numeric = np.asarray(numeric, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(numeric), initial=0.0)))
    allowed = atol * scale + rtol * np.abs(numeric)
    excess = np.abs(analytic - numeric) - allowed
    excess = np.where(np.isnan(analytic) | np.isnan(numeric), np.inf, excess)   # nan never agrees
    bad = excess > 0
    if not bad.any():
        return None
    index = np.unravel_index(int(np.argmax(excess)), excess.shape) if excess.ndim else ()
    return Mismatch(tuple(int(i) for i in index), float(analytic[index]), float(numeric[index]),
                    int(bad.sum()), int(bad.size))
