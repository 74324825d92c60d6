"""Judge-side checks of chapter 7. The initializers: the kernel draws with the student's initializer on the
shapes of the test cell and a secret seed, and returns the weights; the judge tests their statistics
(`autograder/student/checks/ch07_init.py`: mean, variance, uniform bound or normal tail, seeding) itself.

Only whether the value is a Tensor and its `requires_grad` are the kernel's word; they can only
fail a draw, never pass one: the numbers are the judge's to test.

`train_epoch` and `accuracy` run on stand-ins (a recording train_step, a model whose predictions the judge
knows) over secret batches: the losses returned, the running loss shown and the accuracy are checked
against the judge's numbers; which calls happened, with which objects, in which mode, is the kernel's word.
"""
import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, decode_array, returned
from autograder.student.checks import ch07_init as rules
from autograder.student.checks import ch07_init_training as loop
from autograder.student.verdict import failed
from autograder.grading.judge.registry import judges

SEED_RANGE = 2 ** 31 - 2        # the secret seed and seed + 1 are both valid seeds for default_rng


@judges("initializer")
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


@judges("train_epoch")
def train_epoch(rng):
    """train_epoch over secret batches, the recording train_step returning secret losses: the losses returned
    and the running loss shown must be the judge's; call counts, arguments and mode are the kernel's word. A second,
    longer epoch (55 to 79 batches) tells the mean of the last 50 losses from a mean over another window."""
    sizes = list(loop.TRAIN_EPOCH_SIZES)
    losses = [round(float(v), 4) for v in rng.uniform(0.05, 3.0, len(sizes))]
    while abs(np.mean(losses) - losses[-1]) < 0.05:         # a bar showing the last loss must be told apart
        losses[-1] = round(float(rng.uniform(0.05, 3.0)), 4)
    verdict = yield from train_epoch_run(rng, sizes, losses)
    if not verdict.passed:
        return verdict
    # a longer epoch than the running loss averages, its losses falling: the bar must show the mean of the last 50
    count = int(rng.integers(55, 80))
    while True:
        start, rate = rng.uniform(1.5, 3.0), rng.uniform(0.94, 0.98)
        long_losses = [round(max(0.05, start * rate ** i + float(rng.uniform(-0.05, 0.05))), 4) for i in range(count)]
        if loop.windows_telling(long_losses):
            break
    return (yield from train_epoch_run(rng, [int(v) for v in rng.integers(1, 3, count)], long_losses))


def train_epoch_run(rng, sizes, losses):
    """One train_epoch request over secret batches of `sizes`, train_step returning `losses`: its verdict."""
    reply = yield {"kind": "train_epoch", "losses": losses, "images": [rng.standard_normal((n, 3)) for n in sizes],
                   "labels": [rng.integers(0, 4, n) for n in sizes]}
    if "error" in reply:
        return failed(describe_error("train_epoch", "", returned(reply["error"])).replace(". ", " ", 1))
    counted = reply.get("calls")
    if not isinstance(counted, list) or len(counted) != 2 or not all(isinstance(c, int) for c in counted):
        raise ProbeFailure("the reply does not count train_step's calls")
    result = reply.get("result")
    result = [float(v) for v in decode_array(result).ravel()] if result is not None else str(reply.get("result_text"))[:200]
    shown = reply.get("shown")
    ran = {"calls": counted, "right_arguments": reply.get("right_arguments") is True,
           "training": reply.get("training") is True, "result": result,
           "updates": reply.get("updates") if isinstance(reply.get("updates"), int) else -1,
           "shown": float(shown) if isinstance(shown, (int, float)) and not isinstance(shown, bool) else None}
    return loop.train_epoch_verdict(ran, losses)


@judges("accuracy")
def accuracy(rng):
    """accuracy() on secret batches of a model with known predictions, against the judge's own count."""
    sizes = list(loop.TRAIN_EPOCH_SIZES)
    while True:
        batches = [([float(v) for v in rng.choice([-1.0, 1.0], n)], [int(v) for v in rng.integers(0, 4, n)])
                   for n in sizes]
        right, average = loop.scored(batches)
        if right > 0 and abs(right - average) > 0.01:        # a per-batch average must be told apart
            break
    images = []
    for firsts, _ in batches:
        x = rng.standard_normal((len(firsts), 3))
        x[:, 0] = np.abs(x[:, 0]) * firsts
        images.append(x)
    reply = yield {"kind": "accuracy", "images": images, "labels": [np.array(labels) for _, labels in batches]}
    if "error" in reply:
        return failed(describe_error("accuracy", "", returned(reply["error"])).replace(". ", " ", 1))
    result = reply.get("result")
    result = float(decode_array(result).ravel()[0]) if result is not None else None
    return loop.accuracy_verdict(batches, result, str(reply.get("type_name", ""))[:200], reply.get("trained") is True)
