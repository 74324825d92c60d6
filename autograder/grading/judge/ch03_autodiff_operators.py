"""Judge-side check of the Tensor operators: each expression runs in the kernel on the judge's secret
arrays with the op classes swapped for known-right stand-ins; the judge compares values with NumPy.

Whether the result carries a graph (`_op` is a stand-in, `a` is reachable) can only be reported by
the kernel; the values, which need a working operator on inputs the student never saw, are verified here.
"""
from dataclasses import dataclass

import numpy as np

from autograder.grading.judge.probes import Returned
from autograder.grading.judge.replies import Default, Flag, Int, ListOf, Nested, Raised, read, wire
from autograder.student import gradcheck
from autograder.student.checks.describe import number
from autograder.student.checks.ch03_autodiff_indexing import Indexed, indexing_verdict
from autograder.student.checks.ch03_autodiff_operators import CASES, NO_GRAPH, STRAY_LEAF, operators_verdict
from autograder.grading.judge.registry import judges


@dataclass(frozen=True)
class Evaluated:
    """One expression (or x[index]): what it returned, whether its _op is a stand-in (GetItem for indexing) and the
    graph reaches `a`, and how many leaves it holds that are none of the judge's tensors."""

    returned: Returned = wire(Raised())
    standin: bool = wire(Flag())
    getitem: bool = wire(Flag())
    reaches: bool = wire(Flag())
    stray: int = wire(Default(Int(low=0), 0))


@dataclass(frozen=True)
class Operators:
    results: list[Evaluated] = wire(ListOf(Nested(Evaluated), length="cases"))


@judges("operators")
def operators(rng):
    a, b, m = rng.uniform(0.5, 2, (2, 3)), rng.uniform(0.5, 2, (2, 3)), rng.uniform(-1, 1, (3, 4))
    reply = yield {"kind": "operators", "a": a, "b": b, "m": m, "cases": [text for text, *_ in CASES]}
    results = read(reply, Operators, cases=len(CASES)).results
    return operators_verdict([(text, case_problem(text, np.asarray(expected(a, b, m)), hint, result))
                              for (text, expected, hint), result in zip(CASES, results)])


def case_problem(text, want, hint, result):
    """What is wrong with the kernel's `result` for the case `text`, or None."""
    got = result.returned
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
    if not result.standin or not result.reaches:
        return f"`{text}` {NO_GRAPH} Hint: {hint}"
    if result.stray != 0:
        return f"`{text}` {STRAY_LEAF} Hint: {hint}"
    return None


@judges("indexing")
def indexing(rng, index, shape, seed=0):
    """x[index] through the student's Tensor.__getitem__, on the judge's secret values (checks/ch03_autodiff_indexing.py)."""
    a = gradcheck.sample(tuple(shape), "real", rng)
    reply = read((yield {"kind": "indexing", "x": a, "index": index}), Evaluated)
    got = reply.returned
    if got.failed:
        return indexing_verdict(index, a, Indexed(error=(got.error_type, got.message)))
    if got.kind != "tensor":
        return indexing_verdict(index, a, Indexed(type_name=got.type_name or got.kind))
    return indexing_verdict(index, a, Indexed(value=got.value, getitem=reply.getitem, reaches=reply.reaches))
