"""`python -m autograder capstone mlp|cnn --mine`: the capstone recipe trained on the student's own library.

The graded capstones train on the course's earlier chapters. This trains the same recipe
(checks/capstone.RECIPES) on `mybabygrad/`, the chapters the student exported (the course's code
for the others), and then audits each op the training step used: the student's op and the course's
op run forward and backward on the same inputs, in float64, so a subtly wrong `Summation.backward`
is named here even when the accuracy looks fine.
"""
import copy
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograder.build import authoring
from autograder.student.checks.capstone import RECIPES, held_out_accuracy, mnist
from autograder.student.checks.ch09_trainer_facts import headless
from autograder.student.progress_bars import ENV_VAR as HEADLESS
from autograder.student.my_library import assemble

RTOL, ATOL = 1e-6, 1e-8     # float64 on both sides: a right op agrees to rounding, a wrong one by far more
SLOW_FACTOR = 3.0           # slower than this many times the course's op is worth a look
SLOW_FLOOR = 1e-4           # seconds: below this, timings are noise, whatever the ratio
REPEATS = 5                 # an op's time is the best of this many runs (the least disturbed one)


@dataclass(frozen=True)
class OpReport:
    """One op of the student's library against the course's: what differs, and how fast each is."""

    name: str
    problem: str            # "" when it agrees
    seconds: float          # the student's forward + backward
    course_seconds: float

    @property
    def slow(self):
        return self.seconds > SLOW_FLOOR and self.seconds > SLOW_FACTOR * self.course_seconds


def solved_sections(root):
    """{chapter module: (its solved export code, file name)} for every chapter with exports, in order."""
    return {name: ("\n".join(parts), str(script)) for name, (parts, script) in authoring.solved_exports(root).items()}


def library(root, package=None):
    """(namespace, mine, course): the whole library, the package's chapters where it has them."""
    namespace = {"__name__": "mybabygrad" if package else "babygrad"}
    mine, course = assemble(namespace, solved_sections(root), Path(package) if package else None)
    return namespace, mine, course


def recorded_ops(ns, kind, images, labels):
    """{op class name: (the op, its input arrays)}: the first call of each op in one training step (forward,
    backward and the optimizer's step, where a gradient of the wrong shape fails), and what the step raised, if
    it failed (the ops it reached are still worth comparing: one of them is why)."""
    function, seen = ns["Function"], {}
    original = function.__call__

    def record(op, *inputs):
        seen.setdefault(type(op).__name__, (op, [np.array(t.data) for t in inputs]))
        return original(op, *inputs)

    function.__call__ = record
    failure = None
    try:
        model = ns[f"build_{kind}"]()
        x = ns["Tensor"](images, requires_grad=False)
        y = ns["Tensor"](labels, dtype=np.int64, requires_grad=False)
        ns["SoftmaxLoss"]()(model(x), y).backward()
        ns["Adam"](model.parameters(), lr=RECIPES[kind].lr).step()
    except Exception as error:  # noqa: BLE001 (the student's library failing is the finding)
        failure = f"{type(error).__name__}: {error}"
    finally:
        function.__call__ = original
    return seen, failure


class OpFailed(Exception):
    """The student's op raised, in its forward or its backward (the message says which)."""


def as_arrays(grads):
    grads = grads if isinstance(grads, (tuple, list)) else (grads,)
    return [np.asarray(getattr(g, "data", g), dtype=np.float64) for g in grads]


def forward_backward(ns, op, arrays, out_grad):
    """(output, input gradients) of a fresh copy of `op` on float64 Tensors, and the seconds it took."""
    Tensor = ns["Tensor"]
    best, result = float("inf"), None
    for _ in range(REPEATS):
        fresh = copy.deepcopy(op)
        inputs = [Tensor(a, dtype=a.dtype, requires_grad=np.issubdtype(a.dtype, np.floating)) for a in arrays]
        start = time.perf_counter()
        try:
            stage = "forward"
            node = fresh(*inputs)
            stage = "backward"
            grads = fresh.backward(Tensor(out_grad, dtype=np.float64, requires_grad=False), node)
        except Exception as error:  # noqa: BLE001 (said with the stage it failed in)
            raise OpFailed(f"its {stage} raised {type(error).__name__}: {error}") from error
        best = min(best, time.perf_counter() - start)
        result = (np.asarray(node.data, dtype=np.float64), as_arrays(grads))
    return result, best


def worst(name, received, expected):
    """'' if they agree, else where they differ most (index, both values, relative error)."""
    if received.shape != expected.shape:
        return f"{name}: shape {received.shape}, the course's {expected.shape}"
    if np.allclose(received, expected, rtol=RTOL, atol=ATOL):
        return ""
    gap = np.abs(received - expected)
    gap = np.where(np.isnan(gap), np.inf, gap)
    index = np.unravel_index(int(np.argmax(gap)), gap.shape)
    relative = gap[index] / max(abs(expected[index]), ATOL)
    return (f"{name}: worst element {tuple(int(i) for i in index)}: yours {received[index]:.6g}, "
            f"the course's {expected[index]:.6g} (relative error {relative:.2g})")


def course_ops(course):
    """{name: class} of every Function subclass of the course's library. By the classes, not the
    namespace: chapter 4's module ReLU takes the name of chapter 3's op ReLU there."""
    found, todo = {}, [course["Function"]]
    while todo:
        for cls in todo.pop().__subclasses__():
            found.setdefault(cls.__name__, cls)
            todo.append(cls)
    return found


def audit_op(mine, course, name, op, arrays, seed=0):
    """The student's op against the course's on the same float64 inputs and out_grad."""
    arrays = [a.astype(np.float64) if np.issubdtype(a.dtype, np.floating) else a for a in arrays]
    theirs = course_ops(course).get(name)
    if theirs is None:
        return OpReport(name, "not in the course's library: not compared", 0.0, 0.0)
    course_op = object.__new__(theirs)
    course_op.__dict__.update(copy.deepcopy(op.__dict__))
    expected_out = np.asarray(course_op.forward(*arrays), dtype=np.float64)
    out_grad = np.random.default_rng(seed).standard_normal(expected_out.shape)
    (c_out, c_grads), c_seconds = forward_backward(course, course_op, arrays, out_grad)
    try:
        (m_out, m_grads), m_seconds = forward_backward(mine, op, arrays, out_grad)
    except OpFailed as error:
        return OpReport(name, str(error), 0.0, c_seconds)
    problems = [worst("forward", m_out, c_out)]
    problems += [worst(f"backward, gradient of input {i}", m, c) for i, (m, c) in enumerate(zip(m_grads, c_grads))
                 if np.issubdtype(arrays[i].dtype, np.floating)]
    return OpReport(name, "; ".join(p for p in problems if p), m_seconds, c_seconds)


def audit(mine, course, kind, images, labels):
    """(an OpReport per op the student's training step used, in the order it first used them; what the
    step raised, or None)."""
    seen, failure = recorded_ops(mine, kind, images, labels)
    return [audit_op(mine, course, name, op, arrays) for name, (op, arrays) in seen.items()], failure


def train(ns, kind, images, labels, test_images, test_labels):
    """(held-out accuracy, seconds for the epoch) of the course's recipe on library `ns`."""
    recipe = RECIPES[kind]
    model = ns[f"build_{kind}"]()
    loader = ns["DataLoader"](ns["ArrayDataset"](images, labels), batch_size=recipe.batch_size, shuffle=True,
                              seed=recipe.seed)
    trainer = ns["Trainer"](model, ns["SoftmaxLoss"](), ns["Adam"](model.parameters(), lr=recipe.lr))
    start = time.perf_counter()
    with headless(HEADLESS):                                # no progress bar, no line per epoch
        trainer.fit(loader, None, recipe.epochs)
    seconds = time.perf_counter() - start
    return held_out_accuracy(ns, model, test_images, test_labels), seconds


def run(root, kind, package, images=None, out=print):
    """Train and audit; print the report. `images` shortens the epoch (the full recipe has 60,000)."""
    recipe = RECIPES[kind]
    mine, own, borrowed = library(root, package)
    course, _, _ = library(root)
    out(f"Your library ({package}): {', '.join(n.split('_')[0] for n in own) or 'no chapter'}; "
        f"the course's: {', '.join(n.split('_')[0] for n in borrowed) or 'none'}")
    train_x, train_y = mnist("train", recipe.image_shape)
    test_x, test_y = mnist("test", recipe.image_shape)
    if images:
        train_x, train_y = train_x[:images], train_y[:images]
    reports, failure = audit(mine, course, kind, train_x[:recipe.batch_size], train_y[:recipe.batch_size])
    accuracy = per_epoch = None
    if failure:
        out(f"{recipe.name} capstone on your library: one training step failed ({failure}), so no training")
    else:
        accuracy, seconds = train(mine, kind, train_x, train_y, test_x, test_y)
        per_epoch = seconds * 60_000 / len(train_x)
        shorter = f", after {len(train_x):,} training images instead of 60,000" if len(train_x) < 60_000 else ""
        out(f"{recipe.name} capstone on your library: {accuracy:.2%} of the 10,000 test digits "
            f"(the capstone asks {recipe.threshold:.0%}{shorter}), {per_epoch:.1f} s per epoch of 60,000 images")
    wrong = [r for r in reports if r.problem]
    slow = [r for r in reports if r.slow and not r.problem]
    out(f"Ops your training step used: {', '.join(r.name for r in reports)}")
    for r in wrong:
        said = r.problem if r.problem.startswith(("its ", "not in")) else \
            f"on the same inputs it differs from the course's op: {r.problem}"
        out(f"  look at {r.name}: {said}")
    for r in slow:
        out(f"  {r.name} is slow: {r.seconds * 1e3:.2f} ms forward and backward, the course's "
            f"{r.course_seconds * 1e3:.2f} ms ({r.seconds / r.course_seconds:.0f}x)")
    if not wrong and not slow:
        out("  every op agrees with the course's and none is more than 3x slower")
    return accuracy, per_epoch, reports
