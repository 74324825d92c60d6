"""Judge-side checks of the trained models (chapter 7's `trained_model`, the capstones of chapters 9 and 10).

MNIST's test labels are public, so predictions the kernel reports prove nothing. The judge asks the kernel for
the trained model's layers and weights as data and counts the held-out accuracy itself, with its own NumPy
forward (`forward.py`) on the 10,000 test digits it reads. A model it cannot walk (a layer it does not know,
arrays that do not fit the layer's configuration) is measured the weaker way: the kernel classifies the test
images, sent in a secret order, and the judge counts the answers against its own labels; a lookup of the
public test set defeats that, which the verdict's message and the log say. A capstone whose accuracy passes
must then show that the library that trained it computes its gradients (`capstone_gradients.py`).
"""
import base64
import logging
import zlib
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from autograder.grading.judge.capstone_gradients import NotFound, library_gradients
from autograder.grading.judge.forward import NotWalkable, flattened, model_from_record
from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, decode_array
from autograder.grading.judge.replies import (Array, Failed, Flag, Int, Json, ListOf, Optional, Pair, Tag, read,
                                              wire)
from autograder.student.checks import capstone as course
from autograder.student.checks.ch07_init_training import NO_TRAINED_MODEL, trained_model_verdict
from autograder.student.verdict import failed
from autograder.grading.judge.registry import judges

log = logging.getLogger(__name__)

MLP_SHAPE = (784,)            # chapter 7's test_loader: Normalize(0.1307, 0.3081), then FlattenImage
BATCH_SIZE = 500              # as the course's held_out_accuracy
MAX_ARRAY = 1_000_000         # probes.MAX_ARRAY_ELEMENTS: a larger array is measured the weaker way
MAX_TOTAL = 6_000_000         # ~32 MB of base64 float32, within probes.MAX_REPLY_CHARS
WEAKER = ("counted from the predictions your kernel returned for the test digits in a secret order, because the "
          "judge could not rebuild your model from its layers ({why}); a weaker proof than the judge's own forward")


# ── the replies (a reply that finds no model is capstone_gradients.NotFound) ──

@dataclass(frozen=True)
class Builds:
    """The build function called twice: whether it returned one object twice, how many parameters the two models
    share, and which parameters differ in value ([index, shape]; None when the two models have different counts)."""

    same: bool = wire(Flag())
    shared: int | None = wire(Optional(Int(low=0)))
    differ: list[tuple[int, list[int]]] | None = wire(Optional(ListOf(Pair(Int(low=0), ListOf(Int(low=0), most=32)))))


@dataclass(frozen=True)
class Walked:
    """The trained model's layers as data, read by `forward.model_from_record`, which checks them itself."""

    model: Any = wire(Json())


@dataclass(frozen=True)
class WrongLogits:
    """The model's output for a batch of test digits was not (batch, 10) logits: its shape."""

    TAG: ClassVar[Tag] = Tag("logits_shape")
    logits_shape: list[int] = wire(ListOf(Int(low=0), most=32))


@dataclass(frozen=True)
class Predicted:
    """The model's predicted class for each test digit, in the order sent."""

    predicted: np.ndarray = wire(Array())


@judges("trained_model")
def trained_model(rng, model, loader, minimum):
    """check.trained_model(model, test_loader, minimum): chapter 7's notebook global `model`."""
    where = {"global": model.name}
    counted = yield from held_out(rng, where, MLP_SHAPE)
    if counted is None:
        return failed(NO_TRAINED_MODEL)
    if isinstance(counted, str):
        return failed(f"the trained model: {counted}")
    accuracy, note, _ = counted
    return with_note(trained_model_verdict(accuracy, minimum, 10_000), note)


@judges("capstone")
def capstone(rng, kind, build):
    """check.capstone(kind, build_KIND): the model the cell's check trained, which it left in its slot."""
    recipe, where = course.RECIPES[kind], {"capstone": kind}
    label = f"the {recipe.name} capstone"
    if build is not None:
        problem = yield from fresh_builds(kind, build)
        if problem:
            return problem
    counted = yield from held_out(rng, where, recipe.image_shape)
    if counted is None:
        return course.no_trained_capstone(kind)
    if isinstance(counted, str):
        return failed(f"{label}: {counted}")
    accuracy, note, record = counted
    names = [r.get("name") for r in flattened(record)] if record is not None else None
    verdict = with_note(course.capstone_verdict(kind, accuracy, names=names), note)
    if not verdict.passed and record is not None and accuracy > course.CHANCE:
        try:      # the evidence that names a cause: gradients that are not the model's
            problem = yield from library_gradients(rng, where, record, recipe.image_shape, label)
        except NotWalkable:
            problem = None
        if problem:
            evidence = problem.message.split("\n", 1)[0].replace(
                f"{label}: the model reaches the accuracy, but your library", "Your library")
            verdict.message = (verdict.message.split("\n  Hint:", 1)[0] + f"\n  {evidence}\n  Hint: a wrong gradient "
                               "trains the model less well than the right one; this chapter's backward checks name the op.")
        return verdict
    if verdict.passed and record is not None:
        try:
            problem = yield from library_gradients(rng, where, record, recipe.image_shape, label)
        except NotWalkable as why:
            log.warning("judge: %s: the model's gradients were not checked (%s)", label, why)
            problem = None
        return problem or verdict
    return verdict


def fresh_builds(kind, build):
    """None when the notebook's build function, called twice in the kernel, returns two separate models equal in
    every weight (the text's fixed seeds); else the failed Verdict, as the course's check words it."""
    reply = read((yield {"kind": "capstone_builds", "build": getattr(build, "name", f"build_{kind}")}),
                 NotFound | Failed | Builds)
    if isinstance(reply, NotFound):
        return None                   # no such function: the check that trains says so, and no model is found
    if isinstance(reply, Failed):
        return failed(f"build_{kind}() called a second time: "
                      + describe_error(f"build_{kind}", "call", reply.error).replace(f"build_{kind}.call ", ""))
    differ = None if reply.differ is None else [(i, tuple(shape)) for i, shape in reply.differ]
    return course.fresh_model_problem(kind, reply.same, reply.shared or 0, differ)


@judges("my_capstone")
def my_capstone(rng, kind):
    """check.my_capstone(kind), the bonus: the same measure of the model its check trained on the student's
    library; a failure says so."""
    verdict = yield from capstone(rng, kind, None)
    return course.with_library_hint(verdict, kind)


def held_out(rng, where, image_shape):
    """(accuracy, note, record) of the kernel's trained model on the test digits; None when there is no model,
    a message (str) when it cannot be measured. The note is empty, and the model's record (its layers as data)
    given, unless the weaker count was used."""
    walk = read((yield {"kind": "model_walk", "where": where, "max_array": MAX_ARRAY, "max_total": MAX_TOTAL}),
                NotFound | Failed | Walked)
    if isinstance(walk, NotFound):
        return None
    pixels, labels = course.mnist_pixels("test")
    try:
        if isinstance(walk, Failed):
            raise NotWalkable(f"reading the model raised {walk.error.error_type}")
        forward = model_from_record(walk.model, decode_array)
        images = course.normalized(pixels, image_shape)
        predicted = np.concatenate([forward(images[start:start + BATCH_SIZE]).argmax(axis=1)
                                    for start in range(0, len(images), BATCH_SIZE)])
        return float(np.mean(predicted == labels)), "", walk.model
    except NotWalkable as why:
        log.warning("judge: the trained model is not walkable (%s): counting the kernel's predictions, a weaker proof", why)
        reason = str(why)
    order = rng.permutation(len(pixels))
    reply = yield {"kind": "model_predict", "where": where, "shape": list(image_shape), "batch_size": BATCH_SIZE,
                   "scale": course.SCALE, "shift": course.SHIFT,
                   "pixels": base64.b64encode(zlib.compress(pixels[order].tobytes(), 6)).decode("ascii")}
    reply = read(reply, NotFound | Failed | WrongLogits | Predicted)
    if isinstance(reply, NotFound):
        return None
    if isinstance(reply, Failed):
        return f"the model raised {reply.error.error_type} on the test digits: {reply.error.message}"
    if isinstance(reply, WrongLogits):
        return f"the model returned logits of shape {tuple(reply.logits_shape)} for a batch of test digits"
    predicted = reply.predicted
    if predicted.shape != order.shape:
        raise ProbeFailure(f"the kernel returned {predicted.size} predictions for {order.size} digits")
    return float(np.mean(predicted == labels[order])), WEAKER.format(why=reason), None


def with_note(verdict, note):
    """The verdict, its message followed by how the accuracy was counted when it was the weaker way."""
    if note:
        verdict.message = f"{verdict.message}\n  ({note}.)"
    return verdict
