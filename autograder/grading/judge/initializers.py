"""Judge-side check of chapter 7's initializers: the kernel draws with the student's initializer on the
shapes of the test cell and a secret seed, and returns the weights; the judge tests their statistics
(`autograder/checks/init.py`: mean, variance, uniform bound or normal tail, seeding) itself.

Only whether the value is a Tensor and its `requires_grad` are the kernel's word; they can only
fail a draw, never pass one: the numbers are the judge's to test.
"""
import numpy as np

from ...checks import init as rules
from ...verdict import failed
from .ops import describe_error
from .probes import ProbeFailure, decode_array, returned

SEED_RANGE = 2 ** 31 - 2        # the secret seed and seed + 1 are both valid seeds for default_rng


def initializer(rng, name, fan_in=400, fan_out=600, setting=(), seed=0):
    """Three draws, with the secret seed twice and with the next seed, judged as the in-kernel check judges one."""
    seed = int(rng.integers(0, SEED_RANGE))
    setting = tuple(setting)
    label = rules.initializer_label(name, fan_in, fan_out, setting, seed)
    reply = yield {"kind": "initializer", "name": name, "fan_in": fan_in, "fan_out": fan_out,
                   "setting": list(setting), "seeds": [seed, seed, seed + 1]}
    draws = reply.get("draws")
    if not isinstance(draws, list) or len(draws) != 3:
        raise ProbeFailure("the reply does not hold the 3 draws")
    weights = []
    for data in draws:
        w, problem = drawn(label, fan_in, fan_out, data)
        if problem and not weights:
            return failed(problem)
        weights.append(w)
    first, again, other = weights
    verdict = rules.statistics_verdict(label, name, fan_in, fan_out, setting, first, rules.GAINS)
    if not verdict.passed:
        return verdict
    return rules.seeding_problem(label, seed, first, again, other) or verdict


def drawn(label, fan_in, fan_out, data):
    """(float64 weights, None) or (None, the in-kernel check's message) for one reported draw."""
    if not isinstance(data, dict):
        raise ProbeFailure("a draw in the reply is not a JSON object")
    if data.get("kind") == "error":
        return None, describe_error(label.split("(")[0], "", returned(data)).replace(". ", " ", 1)
    is_tensor = data.get("is_tensor") is True
    values = decode_array(data.get("value")) if is_tensor else None
    problem = rules.drawn_problem(label, fan_in, fan_out, str(data.get("type_name", ""))[:200], is_tensor,
                                  values.shape if is_tensor else (), values.dtype if is_tensor else None,
                                  data.get("requires_grad") is True)
    return (None, problem) if problem else (values.astype(np.float64), None)
