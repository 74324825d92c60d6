"""Judge-side checks of chapter 5's optimizers: the kernel runs the student's optimizer on the judge's
secret parameters and gradients and reports the values after every step; the judge runs the update
rules of `autograder/student/checks/ch05_optimizer.py` itself in float64 and gives that module's verdicts and hints.

`zero_grad` and `train_step` are about which calls happen when: the kernel reports what it saw (the
gradients' types, the calls in order, the gradient `step()` found) and the judge verifies every number
in it (values kept, this batch's gradient, the loss) against its own computation on secret inputs.
"""
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, Returned
from autograder.grading.judge.replies import (Array, AsText, Bool, Either, Failed, Flag, ListOf, Nested, Number, OneOf,
                                              Optional, Raised, Tag, Text, is_error, is_object, read, wire)
from autograder.student.checks import ch05_optimizer as rules
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges

EVENTS = frozenset({"forward", "loss", "loss_swapped", "backward", "zero_grad", "step"})


# ── the replies ──

@dataclass(frozen=True)
class StepsFailed:
    """The optimizer raised while it was built or stepped: `steps` is the exception."""

    TAG: ClassVar[Tag] = Tag("steps", when=is_object)
    steps: Returned = wire(Raised())


@dataclass(frozen=True)
class Float32Run:
    """Two steps on a float32 Parameter: what its .data became, and whether it is the array it was."""

    type_name: str = wire(Text(200))
    dtype: str = wire(Text(40))
    value: np.ndarray | None = wire(Optional(Array()))
    same_array: bool = wire(Bool())


@dataclass(frozen=True)
class Steps:
    """Each parameter's values and .grad (None: none) after each step, then the float32 run (or its exception)."""

    steps: list[list[np.ndarray]] = wire(ListOf(ListOf(Array(), length="params"), length="steps"))
    grads_after: list[list[np.ndarray | None]] = wire(ListOf(ListOf(Optional(Array()), length="params"), length="steps"))
    float32: Returned | Float32Run = wire(Either(is_error, Raised(), Nested(Float32Run)))


@dataclass(frozen=True)
class ZeroGrad:
    """Each parameter's .grad type after zero_grad, and its values before and after."""

    grad_types: list[str] = wire(ListOf(Text(100), length="params"))
    before: list[np.ndarray] = wire(ListOf(Array(), length="params"))
    after: list[np.ndarray] = wire(ListOf(Array(), length="params"))


@dataclass(frozen=True)
class TrainCall:
    """One call of train_step: the calls it made, the gradient step() found, and what it returned."""

    events: list[str] = wire(ListOf(OneOf(EVENTS), most=100))
    seen: np.ndarray | None = wire(Optional(Array()))
    real: bool = wire(Flag())               # the kernel's word that `result` is the number train_step returned
    result: float | None = wire(Number())
    shown: str = wire(AsText(60, absent="?"))


@dataclass(frozen=True)
class TrainStep:
    """The calls of train_step, until the first that raised."""

    calls: list[Failed | TrainCall] = wire(ListOf(Nested(Failed | TrainCall), least=1, most="batches"))


@judges("sgd")
def sgd(rng, lr=0.1, momentum=0.0, weight_decay=0.0, seed=0):
    """Four SGD steps on secret parameters and gradients, against the NumPy rule to 1e-6."""
    settings = {"lr": lr, "momentum": momentum, "weight_decay": weight_decay}
    verdict = yield from optimizer(rng, "SGD", settings, rules.sgd_label(lr, momentum, weight_decay),
                                   rules.sgd_rule(lr, momentum, weight_decay), rules.sgd_mistakes(lr, momentum, weight_decay),
                                   weight_decay)
    return rules.with_rule_hint(verdict, rules.SGD_RULE)


@judges("adam")
def adam(rng, lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, seed=0):
    """Four Adam steps on secret parameters and gradients, against the NumPy rule to 1e-6."""
    settings = {"lr": lr, "beta1": beta1, "beta2": beta2, "eps": eps, "weight_decay": weight_decay}
    verdict = yield from optimizer(rng, "Adam", settings, rules.adam_label(lr, beta1, beta2, eps, weight_decay),
                                   rules.adam_rule(lr, beta1, beta2, eps, weight_decay),
                                   rules.adam_mistakes(lr, beta1, beta2, eps, weight_decay), weight_decay)
    return rules.with_rule_hint(verdict, rules.ADAM_RULE)


def optimizer(rng, name, settings, label, rule, mistakes, weight_decay):
    values, grads = rules.scenario(rng)            # default_rng(rng) is rng itself: the secret draws
    float32 = rng.uniform(-1, 1, 3).astype(np.float32)
    reply = read((yield {"kind": "optimizer", "optimizer": name, "settings": settings, "values": values,
                         "grads": grads, "float32": float32, "float32_grads": [rules.DTYPE_GRADS] * 2}),
                 StepsFailed | Steps, steps=len(grads), params=len(values))
    if isinstance(reply, StepsFailed):
        return failed(describe_error(label, "step", reply.steps) + rules.STEPS_CONTEXT
                      + rules.exception_hint(label, reply.steps.error_type))
    verdict = rules.grad_changed(label, values, grads, reply.steps, reply.grads_after, weight_decay) \
        or rules.steps_verdict(label, rule, mistakes, values, grads, reply.steps)
    if not verdict.passed:
        return verdict
    kept = reply.float32
    if isinstance(kept, Returned):
        return failed(describe_error(label, "step", kept))
    still_float32 = kept.type_name == "numpy.ndarray" and kept.value is not None and kept.value.dtype == np.float32
    return rules.dtype_problem(label, kept.type_name, still_float32, kept.dtype, kept.same_array) or verdict


@judges("optimizer_zero_grad")
def optimizer_zero_grad(rng):
    """Optimizer.zero_grad on secret parameters: every .grad None, every value as it was."""
    values = [rng.standard_normal(s) for s in rules.ZERO_GRAD_SHAPES]
    reply = read((yield {"kind": "zero_grad", "values": values}), Failed | ZeroGrad, params=len(values))
    if isinstance(reply, Failed):
        return failed(describe_error("Optimizer", "zero_grad", reply.error))
    kept = all(b.shape == v.shape and np.allclose(b, v, rtol=1e-6, atol=1e-6) and np.array_equal(a, b)
               for v, b, a in zip(values, reply.before, reply.after))
    return rules.zero_grad_verdict(reply.grad_types, "numpy.ndarray" in reply.grad_types, kept)


class Shown:
    """A returned value the kernel could only describe: its repr, for the message."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


@judges("train_step")
def train_step(rng):
    """Two calls of train_step with a recording model, loss and optimizer, on secret weights and batches."""
    w = rng.uniform(-1, 1, (2, 1))
    batches = [(rng.uniform(-1, 1, (4, 2)), rng.uniform(-1, 1, (4, 1))) for _ in range(2)]
    calls = read((yield {"kind": "train_step", "w": w, "batches": batches, "lr": rules.TRAIN_STEP_LR}),
                 TrainStep, batches=len(batches)).calls
    seen_so_far = []
    for call, ((x, y), report) in enumerate(zip(batches, calls), 1):
        if isinstance(report, Failed):
            return failed(describe_error("train_step", "", report.error).replace("train_step. ", "train_step ")
                          + f"\n  while running call {call}.")
        seen_so_far.append(report.seen)
        result = report.result if report.result is not None and report.real else Shown(report.shown)
        want_grad = 2 * x.T @ (x @ w - y)
        want_loss = float(np.sum((x @ w - y) ** 2))
        problem = rules.train_call_problem(call, report.events, seen_so_far, want_grad, result, want_loss)
        if problem:
            return problem
        w = w - rules.TRAIN_STEP_LR * want_grad    # what the recording optimizer did, with the verified gradient
    if len(calls) != len(batches):
        raise ProbeFailure("the train_step reply stops before the last call")
    return passed(f"✔ {rules.TRAIN_STEP_LABEL}: zero_grad → forward → loss → backward → step, "
                  "with fresh gradients at every call")
