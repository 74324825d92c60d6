"""Judge-side checks of chapter 5's optimizers: the kernel runs the student's optimizer on the judge's
secret parameters and gradients and reports the values after every step; the judge runs the update
rules of `autograder/student/checks/ch05_optimizer.py` itself in float64 and gives that module's verdicts and hints.

`zero_grad` and `train_step` are about which calls happen when: the kernel reports what it saw (the
gradients' types, the calls in order, the gradient `step()` found) and the judge verifies every number
in it (values kept, this batch's gradient, the loss) against its own computation on secret inputs.
"""
import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, decode_array, returned
from autograder.student.checks import ch05_optimizer as rules
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges

EVENTS = {"forward", "loss", "loss_swapped", "backward", "zero_grad", "step"}


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
    reply = yield {"kind": "optimizer", "optimizer": name, "settings": settings, "values": values, "grads": grads,
                   "float32": float32, "float32_grads": [rules.DTYPE_GRADS] * 2}
    steps = reply.get("steps")
    if isinstance(steps, dict):
        error = returned(steps)
        return failed(describe_error(label, "step", error) + rules.STEPS_CONTEXT
                      + rules.exception_hint(label, error.error_type))
    grads_after = reply.get("grads_after")
    if not all(isinstance(x, list) and len(x) == len(grads) for x in (steps, grads_after)) \
            or any(not isinstance(s, list) or len(s) != len(values) for s in steps + grads_after):
        raise ProbeFailure(f"the reply's steps are not {len(grads)} lists of {len(values)} arrays")
    got = [[decode_array(a) for a in step] for step in steps]
    grads_after = [[None if a is None else decode_array(a) for a in step] for step in grads_after]
    verdict = rules.grad_changed(label, values, grads, got, grads_after, weight_decay) \
        or rules.steps_verdict(label, rule, mistakes, values, grads, got)
    if not verdict.passed:
        return verdict
    kept = reply.get("float32")
    if not isinstance(kept, dict):
        raise ProbeFailure("the reply's float32 run is missing")
    if kept.get("kind") == "error":
        return failed(describe_error(label, "step", returned(kept)))
    data = decode_array(kept["value"]) if kept.get("value") is not None else None
    type_name = str(kept.get("type_name", ""))[:200]
    still_float32 = type_name == "numpy.ndarray" and data is not None and data.dtype == np.float32
    return rules.dtype_problem(label, type_name, still_float32, str(kept.get("dtype", ""))[:40],
                               kept.get("same_array") is True) or verdict


@judges("optimizer_zero_grad")
def optimizer_zero_grad(rng):
    """Optimizer.zero_grad on secret parameters: every .grad None, every value as it was."""
    values = [rng.standard_normal(s) for s in rules.ZERO_GRAD_SHAPES]
    reply = yield {"kind": "zero_grad", "values": values}
    if "error" in reply:
        return failed(describe_error("Optimizer", "zero_grad", returned(reply["error"])))
    types, before, after = reply.get("grad_types"), reply.get("before"), reply.get("after")
    if not all(isinstance(x, list) and len(x) == len(values) for x in (types, before, after)):
        raise ProbeFailure("the zero_grad reply does not describe every parameter")
    types = [str(t)[:100] for t in types]
    before, after = [decode_array(a) for a in before], [decode_array(a) for a in after]
    kept = all(b.shape == v.shape and np.allclose(b, v, rtol=1e-6, atol=1e-6) and np.array_equal(a, b)
               for v, b, a in zip(values, before, after))
    return rules.zero_grad_verdict(types, "numpy.ndarray" in types, kept)


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
    reply = yield {"kind": "train_step", "w": w, "batches": batches, "lr": rules.TRAIN_STEP_LR}
    calls = reply.get("calls")
    if not isinstance(calls, list) or not 1 <= len(calls) <= len(batches):
        raise ProbeFailure("the train_step reply does not describe the calls")
    seen_so_far = []
    for call, ((x, y), report) in enumerate(zip(batches, calls), 1):
        if not isinstance(report, dict):
            raise ProbeFailure("a train_step call report is not an object")
        if "error" in report:
            return failed(describe_error("train_step", "", returned(report["error"])).replace("train_step. ", "train_step ")
                          + f"\n  while running call {call}.")
        events = report.get("events")
        if not isinstance(events, list) or len(events) > 100 or not set(events) <= EVENTS:
            raise ProbeFailure("the calls a train_step made are not reported as known names")
        seen_so_far.append(None if report.get("seen") is None else decode_array(report["seen"]))
        result = report.get("result")
        if isinstance(result, (int, float)) and not isinstance(result, bool) and report.get("real") is True:
            result = float(result)
        else:
            result = Shown(str(report.get("shown", "?"))[:60])
        want_grad = 2 * x.T @ (x @ w - y)
        want_loss = float(np.sum((x @ w - y) ** 2))
        problem = rules.train_call_problem(call, events, seen_so_far, want_grad, result, want_loss)
        if problem:
            return problem
        w = w - rules.TRAIN_STEP_LR * want_grad    # what the recording optimizer did, with the verified gradient
    if len(calls) != len(batches):
        raise ProbeFailure("the train_step reply stops before the last call")
    return passed(f"✔ {rules.TRAIN_STEP_LABEL}: zero_grad → forward → loss → backward → step, "
                  "with fresh gradients at every call")
