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

from autograder.student.checks.fitting import quiet
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.datasets import mnist_files
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
    return capstone_verdict(kind, accuracy, seconds)


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
NEAR = 0.05            # this close under the threshold: the model learned, not enough


def capstone_hint(accuracy, threshold):
    """The hint for a capstone short of `threshold`: a cause is named only when the accuracy points at it."""
    if accuracy <= CHANCE:
        return ("  Hint: about 10% is what guessing scores: nothing was learned, so no useful gradient reached the "
                "weights (a gradient that does not flow: check the layers' backward).")
    if accuracy >= threshold - NEAR:
        return "  Hint: a few points short: the model learns, but it is too small or badly initialized for the recipe."
    return ("  Hint: about 10% means nothing was learned (a gradient that does not flow: check the layers' "
            "backward); a few points short means the model is too small or badly initialized.")


def capstone_verdict(kind, accuracy, seconds=None):
    """The verdict on the held-out `accuracy` of the trained model (the kernel's check and the judge both
    give it); `seconds`, the training time, when known."""
    recipe = RECIPES[kind]
    label = f"the {recipe.name} capstone"
    if not accuracy >= recipe.threshold:
        took = "" if seconds is None else f" (Training took {seconds:.0f} s.)"
        return failed(
            f"{label}: {accuracy:.2%} of the 10,000 test digits right after training; the capstone asks for "
            f"{recipe.threshold:.0%}.{took}\n"
            f"  Recipe: {recipe.epochs} epoch over 60,000 digits, batches of {recipe.batch_size}, Adam(lr={recipe.lr}).\n"
            + capstone_hint(accuracy, recipe.threshold))
    return passed(f"✔ {label}: {accuracy:.1%} of the 10,000 held-out test digits (needs {recipe.threshold:.0%})")
