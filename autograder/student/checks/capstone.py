"""The capstones: the student's model, trained by the student's library, against held-out MNIST digits.

The recipe (data, epochs, batch size, optimizer, seed) is the course's and fixed; the model is the
student's. The accuracy is counted here, on the 10,000 test digits, not by the student's code; while
grading, the judge counts it from the trained model's weights, and the check here only trains.
The thresholds below are the course's, and this is their one place: the check, the judge and the
prose read them here, because a student's notebook (on Colab, say) has the course's package but not
its configuration file.
"""
import time
from dataclasses import dataclass

import numpy as np

from autograder.student.checks.ch09_trainer import quiet
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.datasets import mnist_files
from autograder.student.progress_bars import show_progress_bars
from autograder.student.verdict import Verdict, failed, passed, run_for_judge

# Held-out accuracy a student's model must reach, trained by the fixed recipe with the student's library.
# The reference solutions reach about 96.5% (MLP; 96.6% on some CPUs) and 97.8% (CNN).
MLP_ACCURACY = 0.95
CNN_ACCURACY = 0.97

MNIST_MEAN, MNIST_STD = 0.1307, 0.3081

# The model the last check_capstone trained, per kind, with its training time: the judge asks the kernel
# for it after the cell (judge/capstone.py), so the model is trained once. A forged slot gains nothing:
# the judge measures whatever model it finds there on the test digits itself.
TRAINED = {}


@dataclass(frozen=True)
class Recipe:
    name: str
    image_shape: tuple      # one sample as the model receives it
    threshold: float
    lr: float
    batch_size: int = 64
    epochs: int = 1
    seed: int = 0


RECIPES = {
    "mlp": Recipe("MLP", (784,), MLP_ACCURACY, lr=0.002),
    "cnn": Recipe("CNN", (1, 28, 28), CNN_ACCURACY, lr=0.002),
}


def mnist_pixels(split):
    """The split's uint8 images (N, 28, 28) and uint8 labels, read from the IDX files with NumPy."""
    import gzip

    def read(path):
        with (gzip.open if str(path).endswith(".gz") else open)(path, "rb") as f:
            raw = f.read()
        ndim = raw[3]
        shape = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
        return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)

    images_path, labels_path = mnist_files(split)
    return read(images_path), read(labels_path)


# normalized = pixels * SCALE - SHIFT, in float32: (pixels / 255 - mean) / std in two roundings
SCALE, SHIFT = 1 / (255.0 * MNIST_STD), MNIST_MEAN / MNIST_STD


def normalized(pixels, image_shape):
    """uint8 images as the models see them: float32, normalized, in `image_shape`."""
    images = pixels.astype(np.float32)
    images *= np.float32(SCALE)
    images -= np.float32(SHIFT)
    return images.reshape((len(images),) + tuple(image_shape))


def mnist(split, image_shape):
    """Normalized float32 images in `image_shape` and int64 labels, read from the IDX files with NumPy."""
    pixels, labels = mnist_pixels(split)
    return normalized(pixels, image_shape), labels.astype(np.int64)


def held_out_accuracy(ns, model, images, labels, batch_size=500):
    """The share of test digits whose largest logit is their label, counted by the course."""
    Tensor = ns["Tensor"]
    model.eval()
    right = 0
    for start in range(0, len(images), batch_size):
        x = Tensor(images[start:start + batch_size], requires_grad=False)
        logits = np.asarray(model(x).data)
        right += int((logits.argmax(axis=1) == labels[start:start + batch_size]).sum())
    return right / len(images)


@register("capstone")
def check_capstone(ns, kind, build, *, check_name="capstone"):
    """Train `build()` (`mlp` or `cnn`) with the notebook's Trainer; held-out accuracy against the threshold.
    In a grading kernel whose judge counts the accuracy itself (verdict.run_for_judge), it trains only."""
    recipe = RECIPES[kind]
    label = f"the {recipe.name} capstone"
    TRAINED.pop(kind, None)
    try:
        model = run_quietly(build)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception(f"build_{kind}", "call", error).replace(f"build_{kind}.call", f"build_{kind}()"))
    if not isinstance(model, ns["Module"]):
        return failed(f"build_{kind}() returned a {type(model).__name__}; expected a Module (a fresh model).")
    params = model.parameters()
    if not params:
        return failed(f"build_{kind}() returned a model without parameters: nothing to train.")
    try:
        again = run_quietly(build)
        problem = fresh_model_problem(kind, *model_pair_facts(model, again))
    except Exception as error:  # noqa: BLE001
        problem = failed(f"build_{kind}() called a second time: "
                         + describe_exception(f"build_{kind}", "call", error).replace(f"build_{kind}.call ", ""))
    if problem:
        return problem

    train_x, train_y = mnist("train", recipe.image_shape)
    test_x, test_y = mnist("test", recipe.image_shape)
    probe = ns["Tensor"](test_x[:2], requires_grad=False)
    try:
        out = run_quietly(model, probe)
    except Exception as error:  # noqa: BLE001
        return failed(f"{label}: the model fails on a batch of shape {probe.shape}:\n  "
                      + describe_exception(type(model).__name__, "forward", error))
    if tuple(out.shape) != (2, 10):
        return failed(f"{label}: on a batch of shape {probe.shape} the model returns shape {tuple(out.shape)}; "
                      "expected (2, 10): one logit per digit class.")

    loader = ns["DataLoader"](ns["ArrayDataset"](train_x, train_y), batch_size=recipe.batch_size,
                              shuffle=True, seed=recipe.seed)
    trainer = ns["Trainer"](model, ns["SoftmaxLoss"](), ns["Adam"](params, lr=recipe.lr))
    start = time.perf_counter()
    try:
        quiet(trainer.fit, loader, None, recipe.epochs)
    except Exception as error:  # noqa: BLE001
        return failed(f"{label}: training raised an error.\n  " + describe_exception("Trainer", "fit", error))
    seconds = time.perf_counter() - start
    TRAINED[kind] = {"model": model, "seconds": seconds}
    if run_for_judge(check_name):
        return trained_for_judge(kind, seconds)
    accuracy = run_quietly(held_out_accuracy, ns, model, test_x, test_y)
    # The time is for a person: in nbgrader's outputs it would make the executed solutions irreproducible
    shown = seconds if show_progress_bars() else None
    return capstone_verdict(kind, accuracy, shown, leaf_names(model))


# The bonus assignment (capstone_mine): the same recipe, on the student's whole mybabygrad/ package, which the
# notebook's provided cell loaded into its namespace (autograder/student/my_package.py).
MY_LIBRARY, MY_LIBRARY_PROBLEM = "MY_LIBRARY", "MY_LIBRARY_PROBLEM"
LIBRARY_HINT = (
    "  This trained on your own library, mybabygrad/, and every chapter of it is graded on its own with the course's "
    "earlier chapters: a chapter that passed there can still fail here, on your earlier code. To find the op, run each "
    "chapter with USE_MY_LIBRARY = True (a check that fails with it and passes without it points at your earlier "
    "chapters); in the course's repository, `python -m autograder capstone {kind} --mine --from FOLDER` (FOLDER holds "
    "mybabygrad/) names each op that differs from the course's.")


@register("my_capstone")
def check_my_capstone(ns, kind):
    """check_capstone on the student's library; a failure says it is the library's and how to find the op."""
    if not ns.get(MY_LIBRARY):
        problem = ns.get(MY_LIBRARY_PROBLEM) or "the cell that loads it has not run (run the notebook from the top)"
        return failed(f"the {RECIPES[kind].name} capstone on your library: not trained, because {problem}")
    verdict = check_capstone(ns, kind, ns.get(f"build_{kind}"), check_name="my_capstone")
    return with_library_hint(verdict, kind)


def with_library_hint(verdict, kind):
    if not verdict.passed:
        verdict.message = f"{verdict.message}\n{LIBRARY_HINT.format(kind=kind)}"
    return verdict


def model_pair_facts(first, second):
    """What two calls of a build function returned, as data (the judge's worker gathers the same facts):
    whether they are one object, how many parameters the second shares with the first (the same Tensor
    objects), and the parameters whose values differ, as (index, shape) pairs, or None when the parameter
    lists differ in length or shapes."""
    one, two = list(first.parameters()), list(second.parameters()) if hasattr(second, "parameters") else []
    shared = len({id(p) for p in one} & {id(p) for p in two})
    if len(one) != len(two) or any(tuple(p.shape) != tuple(q.shape) for p, q in zip(one, two)):
        return first is second, shared, None
    differ = [(i, tuple(p.shape)) for i, (p, q) in enumerate(zip(one, two))
              if not np.array_equal(np.asarray(p.data), np.asarray(q.data))]
    return first is second, shared, differ


def fresh_model_problem(kind, same, shared, differ):
    """The verdict on two calls of build_KIND, from model_pair_facts' facts, or None when they returned two
    models equal in every weight, sharing none. Shared with the judge."""
    name = f"build_{kind}()"
    if same or shared:
        what = "the same model object" if same else f"two models that share {shared} parameter(s)"
        return failed(f"{name} returned {what} when called twice.\n  Hint: build_{kind} must return a fresh "
                      "model each time it is called, with its own parameters: one built and kept outside the "
                      "function is the model every caller trains, so a second training starts where the first "
                      "stopped. Build the layers inside the function.")
    if differ is None:
        return failed(f"{name} returned two models whose parameters differ in number or shape when called twice.\n"
                      f"  Hint: build_{kind} must build the same network every time.")
    if differ:
        index, shape = differ[0]
        return failed(f"{name} called twice returned models with different weights: {len(differ)} parameter(s) "
                      f"differ, the first parameter {index} of shape {shape}.\n  Hint: the text asks for a fixed "
                      "seed for every layer that has weights, so that the model, and its training, are the same "
                      "every time the notebook runs: pass each such layer a seed of its own.")
    return None


def trained_for_judge(kind, seconds):
    """The kernel's verdict while grading: the model is trained, and the judge counts its accuracy from its
    weights (judge/capstone.py), so counting it here too would only cost time."""
    return Verdict(True, f"→ the {RECIPES[kind].name} capstone trained in {seconds:.0f} s; the grader counts its "
                         "test accuracy outside your notebook", deferred=True)


def no_trained_capstone(kind):
    """The judge's verdict when the kernel holds no model trained by check_capstone (the check never ran)."""
    return failed(f"the {RECIPES[kind].name} capstone: there is no model trained by this cell's check in the kernel.\n"
                  f"  Hint: the cell itself trains the model your build_{kind}() returns; run it as it is.")


CHANCE = 0.2           # at most about twice what guessing among ten classes scores: nothing was learned

# What the kernel's check can and cannot tell; the prose of chapters 9 and 10 says the same.
LOCAL_LIMITS = ("This check counts the accuracy only. While grading, the grader also backpropagates secret test "
                "digits through the trained model with your library and compares every parameter's gradient "
                "with its own: a backward that is a little wrong can still reach the accuracy here and lose the "
                "capstone there. The backward checks of the chapters name such an op.")


WEIGHTED = {"Linear", "Conv2d"}                      # layers that are linear maps of their input
SHAPING = {"Flatten", "Identity", "Dropout"}           # layers that change no value a linear map would bend


def stacked_linear_layers(names):
    """(i, j) for the first two linear layers (Linear, Conv2d) of the leaf layers `names` with nothing but
    reshaping between them, or None. Two such layers compose to one linear map."""
    previous = None
    for index, name in enumerate(names):
        if name in WEIGHTED:
            if previous is not None:
                return previous, index
            previous = index
        elif name not in SHAPING:
            previous = None
    return None


def leaf_names(model, depth=0):
    """The type names of the model's leaf layers in call order, a Sequential's `modules` looked through."""
    if type(model).__name__ != "Sequential" or depth >= 8:
        return [type(model).__name__]
    return [name for child in list(getattr(model, "modules", []))[:200] for name in leaf_names(child, depth + 1)]


def capstone_hint(accuracy, threshold, names=None):
    """The hint for a capstone short of `threshold`: a cause is named only when the evidence points at it
    (chance-level accuracy; two linear layers with no nonlinearity between them, from the model's `names`);
    otherwise the hint states the rule."""
    if accuracy <= CHANCE:
        return ("  Hint: about 10% is what guessing scores: nothing was learned, so no useful gradient reached the "
                "weights (a gradient that does not flow: check the layers' backward).")
    stacked = stacked_linear_layers(names or [])
    if stacked:
        i, j = stacked
        return (f"  Hint: layer {i} ({names[i]}) feeds layer {j} ({names[j]}) with no nonlinearity between them: "
                "two linear maps in a row are one linear map, so the network is no better than a single layer. Put "
                "an activation such as ReLU after every weighted layer but the last.")
    return ("  Hint: the model learned something, not enough. The accuracy alone cannot say why: run the chapter's "
            "checks above this cell (they name an op whose gradient is wrong), then compare your network with the "
            "one the text describes, which reaches the accuracy with this recipe.")


def took(seconds):
    return "" if seconds is None else f" Training took {seconds:.0f} s."


def capstone_verdict(kind, accuracy, seconds=None, names=None):
    """The verdict on the held-out `accuracy` of the trained model (the kernel's check and the judge both
    give it); `seconds`, the training time, when known: shown as information, it grades nothing; `names`,
    the model's leaf layers, for the hint."""
    recipe = RECIPES[kind]
    label = f"the {recipe.name} capstone"
    if not accuracy >= recipe.threshold:
        return failed(
            f"{label}: {accuracy:.2%} of the 10,000 test digits right after training; the capstone asks for "
            f"{recipe.threshold:.0%}.{took(seconds)}\n"
            f"  Recipe: {recipe.epochs} epoch over 60,000 digits, batches of {recipe.batch_size}, Adam(lr={recipe.lr}).\n"
            + capstone_hint(accuracy, recipe.threshold, names))
    if seconds is not None:
        return passed(f"✔ {label}: {accuracy:.1%} of the 10,000 held-out test digits (needs {recipe.threshold:.0%})."
                      f"{took(seconds)}\n{LOCAL_LIMITS}")
    return passed(f"✔ {label}: {accuracy:.1%} of the 10,000 held-out test digits (needs {recipe.threshold:.0%})")
