"""Judge-side check of the Tensor operators: each expression runs in the kernel on the judge's secret
arrays with the op classes swapped for known-right stand-ins; the judge compares values with NumPy.

Whether the result carries a graph (`_op` is a stand-in, `a` is reachable) can only be reported by
the kernel; the values, which need a working operator on inputs the student never saw, are verified here.
"""
import numpy as np

from autograder.grading.judge.probes import ProbeFailure, returned
from autograder.student.checks.describe import number
from autograder.student.checks.operators import CASES, NO_GRAPH, STRAY_LEAF, only_ints_note
from autograder.student.verdict import failed, passed


def operators(rng):
    a, b, m = rng.uniform(0.5, 2, (2, 3)), rng.uniform(0.5, 2, (2, 3)), rng.uniform(-1, 1, (3, 4))
    reply = yield {"kind": "operators", "a": a, "b": b, "m": m, "cases": [text for text, *_ in CASES]}
    results = reply.get("results")
    if not isinstance(results, list) or len(results) != len(CASES):
        raise ProbeFailure("the operators reply does not hold one result per case")
    problems, failed_texts = [], set()
    for (text, _, expected, hint), result in zip(CASES, results):
        if not isinstance(result, dict):
            raise ProbeFailure("an operators result is not an object")
        got = returned(result.get("returned"))
        want = np.asarray(expected(a, b, m))
        if got.failed:
            if got.error_type == "NotImplementedError":
                problems.append(f"`{text}` is not written yet (its method still raises NotImplementedError). Hint: {hint}")
            else:
                problems.append(f"`{text}` raised {got.error_type}: {got.message}. Hint: {hint}")
        elif got.kind != "tensor":
            problems.append(f"`{text}` returned a {got.type_name or got.kind}, expected a Tensor. Hint: {hint}")
        elif got.value.shape != want.shape:
            problems.append(f"`{text}` has shape {got.value.shape}, expected {want.shape}. Hint: {hint}")
        elif not np.allclose(got.value, want, rtol=1e-5, atol=1e-6):
            worst = np.unravel_index(np.argmax(np.abs(got.value - want)), want.shape) if want.ndim else ()
            problems.append(f"`{text}` gives {number(float(got.value[worst]))} at {list(worst)}, "
                            f"expected {number(float(want[worst]))}. Hint: {hint}")
        elif result.get("standin") is not True or result.get("reaches") is not True:
            problems.append(f"`{text}` {NO_GRAPH} Hint: {hint}")
        elif result.get("stray", 0) != 0:
            problems.append(f"`{text}` {STRAY_LEAF} Hint: {hint}")
        if len(problems) > len(failed_texts):
            problems[-1] += only_ints_note(text, failed_texts)
            failed_texts.add(text)
    if problems:
        return failed(f"{len(problems)} of {len(CASES)} Tensor operators are not wired right:\n  - " + "\n  - ".join(problems))
    return passed(f"✔ all {len(CASES)} Tensor operators call the right Function")
