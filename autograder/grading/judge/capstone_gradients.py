"""The capstone's second proof: the library that trained the model computes that model's gradients.

An accuracy proves only that good weights sit in the capstone's slot. Weights trained elsewhere (embedded in
the notebook, loaded by a redefined `fit`) would earn it without a working backward. So once the accuracy
passes, the judge sends secret test digits and a secret upstream gradient of the logits; the kernel
backpropagates them through the trained model with the student's library (its trained weights, eval mode),
and the judge compares each parameter's gradient with its own float64 one (`backward.py`). Near a kink (a ReLU
input near 0, a near-tie in a max pool) float32 and float64 could take different branches, and a right library
would differ from the judge by a whole term: digits with a near-tie are left out, and at a ReLU input near 0 the
judge follows the branch of the student's own value, which the kernel reports.

The rule is a backward check's: the gradients must be the model's, to float32 rounding (the course's solution
differs from the judge's float64 by 4e-7 of a gradient's size; the tolerance is 1e-3). A lenient rule would
not tell training libraries apart from the others: on one replay, the catalogue's mistakes that still train
the CNN (a fold that assigns, every tie given the gradient) point as far from the true gradient as some that
never learn. So a capstone counts a model trained by a library that computes its gradients.
"""
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from autograder.grading.judge.backward import kinked_digits, parameter_gradients, relu_kinks
from autograder.grading.judge.forward import flattened
from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import Returned, decode_array
from autograder.grading.judge.replies import Failed, ListOf, Raised, Tag, read, wire
from autograder.student.checks import capstone as course
from autograder.student.verdict import failed

IMAGES = 32                 # secret test digits per replay: every layer sees a real batch
CANDIDATES, MIN_IMAGES = 96, 8  # drawn, of which the first IMAGES clear of every kink are sent
KINK_MARGIN = 1e-5          # of a layer's largest value: float32's rounding of a ReLU input is ~1e-7 of it
TOLERANCE = 1e-3            # of a gradient's size: float32 rounding is about 1e-6 of it
NEGLIGIBLE = 1e-12          # a true gradient this small (a unit dead on every digit sent) is compared absolutely
HINT = ("  Hint: the capstone counts a model trained by your library, so it counts only when your library computes "
        "that model's gradients. A backward that is a little wrong can still train a network to the accuracy, but "
        "its gradients are not the model's. This chapter's backward checks name the op.")


# ── the replies ──

@dataclass(frozen=True)
class NotFound:
    """The kernel holds no trained model where the judge looked (`{"found": false}`)."""

    TAG: ClassVar[Tag] = Tag("found", when=lambda found: not found, or_absent=True)


@dataclass(frozen=True)
class Gradients:
    """Each asked parameter's .grad after backward, and the input of each leaf asked for (`inputs_at`)."""

    grads: list[Returned] = wire(ListOf(Raised(), length="grads"))
    inputs: list[Returned] = wire(ListOf(Raised(), length="inputs"))


def library_gradients(rng, where, record, image_shape, label):
    """None when the kernel's gradients for the trained model agree with the judge's, else a failed Verdict."""
    pixels, _ = course.mnist_pixels("test")
    candidates = course.normalized(pixels[rng.choice(len(pixels), CANDIDATES, replace=False)], image_shape)
    relu_kinked, near_tied = kinked_digits(record, decode_array, candidates, KINK_MARGIN)
    clear, kinked_relu_only = ~relu_kinked & ~near_tied, relu_kinked & ~near_tied      # ReLU kinks: asked below
    images = np.concatenate([candidates[clear], candidates[kinked_relu_only]])[:IMAGES]
    if len(images) < MIN_IMAGES:     # no honest model comes near this; a model made so would skip the check
        return failed(f"{label}: the model reaches the accuracy, but the grader cannot check that your library "
                      f"computes its gradients: on {CANDIDATES - len(images)} of {CANDIDATES} secret test digits a "
                      f"max pool's two largest inputs differ by less than {KINK_MARGIN:g} of the layer's largest value, "
                      f"where float32 and float64 may pick different winners. Models trained by the recipe never do "
                      f"this (they leave over 75 of {CANDIDATES} clear); if you think yours does it honestly, show "
                      f"your instructor.")
    upstream = rng.standard_normal((len(images), 10)).astype(np.float32)
    kinks = relu_kinks(record, decode_array, images, KINK_MARGIN)
    want = parameter_gradients(record, decode_array, images, upstream)
    keys = sorted(want)
    reply = read((yield {"kind": "model_gradient", "where": where, "parameters": [list(k) for k in keys],
                         "images": images, "upstream": upstream, "inputs_at": sorted(kinks)}),
                 NotFound | Failed | Gradients, grads=len(keys), inputs=len(kinks))
    if isinstance(reply, NotFound):
        return failed(f"{label}: the trained model left the kernel before its gradients could be checked.")
    if isinstance(reply, Failed):
        return failed(f"{label}: backpropagating through your trained model raised an error.\n  "
                      + describe_error(record["name"], "backward", reply.error) + "\n" + HINT)
    if kinks:                                   # the judge's gradient again, on the student's branches
        overrides, problem = students_branches(record, kinks, reply.inputs)
        if problem:
            return failed(f"{label}: {problem}")
        want = parameter_gradients(record, decode_array, images, upstream, overrides)
    problems = {key: gradient_problem(want[key], data) for key, data in zip(keys, reply.grads)}
    wrong = [key for key in keys if problems[key]]
    if not wrong:
        return None
    leaf, key = wrong[-1]                       # the wrong gradient nearest the output: the error enters there
    names = [r["name"] for r in flattened(record)]
    return failed(f"{label}: the model reaches the accuracy, but your library does not compute its gradients. "
                  f"For layer {leaf} ({names[leaf]}), {key} of shape {want[leaf, key].shape}, on {len(images)} secret test "
                  f"digits (the trained weights, eval mode, a random upstream gradient of the logits): "
                  f"{problems[leaf, key]}\n{where_it_enters(names, leaf, keys, problems)}{HINT}")


def students_branches(record, kinks, inputs):
    """(overrides for parameter_gradients, None) or (None, why not): the student's own values of each kinked
    ReLU's input, where they lie near 0, so that the judge follows the branch the student's float32 took.
    A value there may differ from the judge's by the kink's own margin, no more: the student's forward is the
    model's, so reporting other values gains nothing, and a value beyond the margin is a forward that is not."""
    names = [r["name"] for r in flattened(record)]
    overrides = {}
    for (index, (mask, tolerance, own)), got in zip(sorted(kinks.items()), inputs):
        if got.kind not in ("array", "tensor") or got.value.shape != mask.shape:
            return None, (f"the input of layer {index} ({names[index]}) in your library's forward is not an array of "
                          f"shape {mask.shape}.")
        values = got.value.astype(np.float64)[mask]
        if not np.all(np.isfinite(values)) or np.any(np.abs(values - own) > tolerance):
            return None, (f"your library's forward does not compute the model: the input of layer {index} "
                          f"({names[index]}) differs from the model's where it lies near 0.")
        overrides[index] = (mask, values)
    return overrides, None


def where_it_enters(names, leaf, keys, problems):
    """The layers whose backward the error must be in, when a layer nearer the output has right gradients."""
    right_after = sorted({index for index, _ in keys if index > leaf and not any(
        problems[k] for k in keys if k[0] == index)})
    if not right_after:
        return ""
    after = right_after[0]
    between = ", ".join(f"{names[i]} ({i})" for i in range(leaf, after))
    return (f"  Layer {after} ({names[after]}) gets right gradients, so the error is in the backward of the layers "
            f"from {leaf} to it: {between}, or {names[after]}'s gradient for its input.\n")


def gradient_problem(want, got):
    """What is wrong with one parameter's gradient, as a sentence, or None."""
    if got.kind == "none":
        return "its .grad is None after backward: no gradient reached it."
    if got.kind != "array" and got.kind != "tensor":
        return f"its .grad is a {got.type_name or got.kind}, not a Tensor of numbers."
    if got.value.shape != want.shape:
        return f"expected a gradient of shape {want.shape}, received {got.value.shape}."
    received = got.value.astype(np.float64)
    if not np.all(np.isfinite(received)):
        return "the gradient holds NaN or infinity."
    error = np.linalg.norm(received - want) / max(np.linalg.norm(want), NEGLIGIBLE)
    if error <= TOLERANCE:
        return None
    worst = np.unravel_index(np.argmax(np.abs(received - want)), want.shape)
    what = "received all zeros" if not np.any(received) else f"it differs from the true gradient by {error:.1%} of its size"
    return (f"{what} (float32 rounding allows {TOLERANCE:.1%}). The largest difference is at "
            f"{[int(i) for i in worst]}: expected {want[worst]:.4g}, received {received[worst]:.4g}.")
