"""Judge-side checks of chapter 7. The initializers: the kernel draws with the student's initializer on the
shapes of the test cell and a secret seed, and returns the weights; the judge tests their statistics
(`autograder/student/checks/ch07_init.py`: mean, variance, uniform bound or normal tail, seeding) itself.

Only whether the value is a Tensor and its `requires_grad` are the kernel's word; they can only
fail a draw, never pass one: the numbers are the judge's to test.

`train_epoch` and `accuracy` run on stand-ins (a recording train_step, a model whose predictions the judge
knows) over secret batches: the losses returned, the running loss shown and the accuracy are checked
against the judge's numbers; which calls happened, with which objects, in which mode, is the kernel's word.
"""
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import Returned
from autograder.grading.judge.replies import (Array, AsText, Either, Failed, Flag, Int, ListOf, Nested, Number, Optional,
                                              Raised, Tag, Whole, is_error, read, wire)
from autograder.student.checks import ch07_init as rules
from autograder.student.checks import ch07_init_training as loop
from autograder.student.verdict import failed
from autograder.grading.judge.registry import judges

SEED_RANGE = 2 ** 31 - 2        # the secret seed and seed + 1 are both valid seeds for default_rng


# ── the replies ──

@dataclass(frozen=True)
class TensorDrawn:
    """A draw that gave a Tensor: its values and whether it requires a gradient."""

    TAG: ClassVar[Tag] = Tag("is_tensor", True)
    value: np.ndarray = wire(Array())
    requires_grad: bool = wire(Flag())


@dataclass(frozen=True)
class OtherDrawn:
    """A draw that gave something else than a Tensor: its type."""

    type_name: str = wire(AsText(200))


@dataclass(frozen=True)
class Draws:
    """The three draws: with the secret seed twice, then with the next seed; each a value or an exception."""

    draws: list[Returned | TensorDrawn | OtherDrawn] = wire(
        ListOf(Either(is_error, Raised(), Nested(TensorDrawn | OtherDrawn)), length=3))


@dataclass(frozen=True)
class Epoch:
    """train_epoch over the judge's batches: train_step's calls counted in two epochs, whether they got the
    right objects in training mode, the losses returned (or their repr), and what the progress bar showed."""

    calls: list[int] = wire(ListOf(Int(low=0), length=2))
    right_arguments: bool = wire(Flag())
    training: bool = wire(Flag())
    result: np.ndarray | None = wire(Optional(Array()))
    result_text: str = wire(AsText(200, absent=None))
    updates: int = wire(Whole(-1))      # -1: not a whole number
    shown: float | None = wire(Number())


@dataclass(frozen=True)
class Accuracy:
    """accuracy()'s value when a float, its type, and whether the model ran in training mode."""

    result: np.ndarray | None = wire(Optional(Array(size=1)))
    type_name: str = wire(AsText(200))
    trained: bool = wire(Flag())


@judges("initializer")
def initializer(rng, name, fan_in=400, fan_out=600, setting=(), seed=0):
    """Three draws, with the secret seed twice and with the next seed, judged as the in-kernel check judges one."""
    seed = int(rng.integers(0, SEED_RANGE))
    setting = tuple(setting)
    label = rules.initializer_label(name, fan_in, fan_out, setting, seed)
    reply = yield {"kind": "initializer", "name": name, "fan_in": fan_in, "fan_out": fan_out,
                   "setting": list(setting), "seeds": [seed, seed, seed + 1]}
    weights = []
    for data in read(reply, Draws).draws:
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
    if isinstance(data, Returned):
        return None, describe_error(label.split("(")[0], "", data).replace(". ", " ", 1)
    is_tensor = isinstance(data, TensorDrawn)
    values = data.value if is_tensor else None
    problem = rules.drawn_problem(label, fan_in, fan_out, "" if is_tensor else data.type_name, is_tensor,
                                  values.shape if is_tensor else (), values.dtype if is_tensor else None,
                                  is_tensor and data.requires_grad)
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
    reply = read((yield {"kind": "train_epoch", "losses": losses, "images": [rng.standard_normal((n, 3)) for n in sizes],
                         "labels": [rng.integers(0, 4, n) for n in sizes]}), Failed | Epoch)
    if isinstance(reply, Failed):
        return failed(describe_error("train_epoch", "", reply.error).replace(". ", " ", 1))
    ran = {"calls": reply.calls, "right_arguments": reply.right_arguments, "training": reply.training,
           "result": [float(v) for v in reply.result.ravel()] if reply.result is not None else reply.result_text,
           "updates": reply.updates, "shown": reply.shown}
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
    reply = read((yield {"kind": "accuracy", "images": images, "labels": [np.array(labels) for _, labels in batches]}),
                 Failed | Accuracy)
    if isinstance(reply, Failed):
        return failed(describe_error("accuracy", "", reply.error).replace(". ", " ", 1))
    result = float(reply.result.ravel()[0]) if reply.result is not None else None
    return loop.accuracy_verdict(batches, result, reply.type_name, reply.trained)
