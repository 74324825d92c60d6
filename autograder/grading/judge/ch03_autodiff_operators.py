"""Judge-side check of the Tensor operators: each expression runs in the kernel on the judge's secret
arrays with the op classes swapped for known-right stand-ins; the judge compares values with NumPy.

Whether the result carries a graph (`_op` is a stand-in, `a` is reachable) can only be reported by
the kernel; the values, which need a working operator on inputs the student never saw, are verified here.
"""
import numpy as np

from autograder.grading.judge.probes import ProbeFailure, returned
from autograder.student import gradcheck
from autograder.student.checks.describe import number
from autograder.student.checks.ch03_autodiff_indexing import Indexed, indexing_verdict
from autograder.student.checks.ch03_autodiff_operators import CASES, NO_GRAPH, STRAY_LEAF, operators_verdict
from autograder.grading.judge.registry import judges


@judges("operators")
def operators(rng):
    a, b, m = rng.uniform(0.5, 2, (2, 3)), rng.uniform(0.5, 2, (2, 3)), rng.uniform(-1, 1, (3, 4))
    reply = yield {"kind": "operators", "a": a, "b": b, "m": m, "cases": [text for text, *_ in CASES]}
    results = reply.get("results")
    if not isinstance(results, list) or len(results) != len(CASES):
        raise ProbeFailure("the operators reply does not hold one result per case")
    if not all(isinstance(result, dict) for result in results):
        raise ProbeFailure("an operators result is not an object")
    return operators_verdict([(text, case_problem(text, np.asarray(expected(a, b, m)), hint, result))
                              for (text, expected, hint), result in zip(CASES, results)])


def case_problem(text, want, hint, result):
    """What is wrong with the kernel's `result` for the case `text`, or None."""
    got = returned(result.get("returned"))
    if got.failed:
        if got.error_type == "NotImplementedError":
            return f"`{text}` is not written yet (its method still raises NotImplementedError). Hint: {hint}"
        return f"`{text}` raised {got.error_type}: {got.message}. Hint: {hint}"
    if got.kind != "tensor":
        return f"`{text}` returned a {got.type_name or got.kind}, expected a Tensor. Hint: {hint}"
    if got.value.shape != want.shape:
        return f"`{text}` has shape {got.value.shape}, expected {want.shape}. Hint: {hint}"
    if not np.allclose(got.value, want, rtol=1e-5, atol=1e-6):
        worst = np.unravel_index(np.argmax(np.abs(got.value - want)), want.shape) if want.ndim else ()
        return (f"`{text}` gives {number(float(got.value[worst]))} at {list(worst)}, "
                f"expected {number(float(want[worst]))}. Hint: {hint}")
    if result.get("standin") is not True or result.get("reaches") is not True:
        return f"`{text}` {NO_GRAPH} Hint: {hint}"
    if result.get("stray", 0) != 0:
        return f"`{text}` {STRAY_LEAF} Hint: {hint}"
    return None


@judges("indexing")
def indexing(rng, index, shape, seed=0):
    """x[index] through the student's Tensor.__getitem__, on the judge's secret values (checks/ch03_autodiff_indexing.py)."""
    a = gradcheck.sample(tuple(shape), "real", rng)
    reply = yield {"kind": "indexing", "x": a, "index": index}
    got = returned(reply.get("returned"))
    if got.failed:
        return indexing_verdict(index, a, Indexed(error=(got.error_type, got.message)))
    if got.kind != "tensor":
        return indexing_verdict(index, a, Indexed(type_name=got.type_name or got.kind))
    return indexing_verdict(index, a, Indexed(value=got.value, getitem=reply.get("getitem") is True,
                                              reaches=reply.get("reaches") is True))
