"""Checks of chapter 7's training loop, `train_epoch`, and of `accuracy`, on probe models and loaders.

`train_epoch` is checked with a recording stand-in for chapter 5's `train_step`, so only the loop is
graded; `accuracy` with a probe model whose outputs are known (and useless in training mode). The
final check measures a trained model's held-out accuracy with the course's own arithmetic.
"""
import numpy as np

from autograder.student.checks import ch07_init_facts as facts
from autograder.student.checks.describe import type_name
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed


def probe_batches(Tensor, sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [(Tensor(rng.standard_normal((n, 3)), requires_grad=False),
             Tensor(rng.integers(0, 4, n), dtype=np.int64, requires_grad=False)) for n in sizes]


TRAIN_EPOCH_LOSSES = [0.9, 0.5, 0.4]    # mean 0.6, last 0.4: a bar showing the last loss is told apart
TRAIN_EPOCH_SIZES = [4, 4, 2]
RUNNING = 50                            # the running loss: the mean of the last 50 batch losses (section text)
# A longer epoch, of 63 one-sample batches, whose losses fall as training goes: the mean of the last 50 differs from
# the mean of every other number of last losses (all 63 among them) by more than 0.005.
LONG_EPOCH_LOSSES = [round(2.0 * 0.96 ** i + 0.05 * (i % 3), 4) for i in range(63)]


def windows_telling(losses, gap=0.005):
    """Whether the mean of the last RUNNING losses differs by more than `gap` from the mean of the last w, for every
    other w: so that a running loss over another window (or over all the losses) shows."""
    running = float(np.mean(losses[-RUNNING:]))
    return all(abs(float(np.mean(losses[-w:])) - running) > gap for w in range(1, len(losses) + 1) if w != RUNNING)


def run_train_epoch(namespace, batches, losses):
    """train_epoch with train_step swapped for a recorder that returns `losses` in turn, with and without a bar
    (`ch07_init_facts.train_epoch_run`): a dict of what happened, for `train_epoch_verdict`."""
    ran = facts.train_epoch_run(namespace, batches, losses, run_quietly)
    result = ran["result"]
    try:
        ran["result"] = [float(r) for r in result] if isinstance(result, list) else type_name(result)
    except (TypeError, ValueError):
        ran["result"] = repr(result)[:200]
    return ran


@register("train_epoch")
def check_train_epoch(namespace):
    """train_epoch: one train_step per batch, in training mode (train_step is swapped for a recorder)."""
    Tensor = namespace["Tensor"]
    try:
        ran = run_train_epoch(namespace, probe_batches(Tensor, TRAIN_EPOCH_SIZES), TRAIN_EPOCH_LOSSES)
        verdict = train_epoch_verdict(ran, TRAIN_EPOCH_LOSSES)
        if not verdict.passed:
            return verdict
        # more batches than the running loss averages: it must be the mean of the last 50, not of them all
        ran = run_train_epoch(namespace, probe_batches(Tensor, [1] * len(LONG_EPOCH_LOSSES), seed=1), LONG_EPOCH_LOSSES)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("train_epoch", "", error).replace(". ", " ", 1))
    return train_epoch_verdict(ran, LONG_EPOCH_LOSSES)


def train_epoch_verdict(ran, losses):
    """The verdict on what `run_train_epoch` saw, when train_step returned `losses` (one per batch)."""
    n = len(losses)
    where = f"train_epoch(model, loader of {n} batches, loss_fn, optimizer, progress)"
    if ran["calls"] != [n, n]:
        return failed(f"{where} called train_step {ran['calls'][0]} times, expected once per batch: {n}.")
    if not ran["right_arguments"]:
        return failed(f"{where}: train_step must get the model, the loss function and the optimizer train_epoch "
                      "was given, then one batch's images and labels, in that order.")
    if not ran["training"]:
        return failed(f"{where}: the model was in eval mode during training.\n  Hint: an epoch of training puts the "
                      "model in training mode at its start: accuracy() leaves it in evaluation mode, where dropout and "
                      "batch norm behave differently.")
    result = ran["result"]
    if not isinstance(result, list) or len(result) != n or not np.allclose(result, losses):
        if n > 10 and isinstance(result, list):
            return failed(f"{where} returned a list of {len(result)} numbers, expected the list of the {n} batch "
                          "losses, in order.")
        return failed(f"{where} returned {result!r}, expected the list of the {n} batch losses {list(losses)}.")
    if ran["updates"] != n:
        # the batch numbers added up: update(i) advances the bar by i steps, it does not move it to step i
        counted = ("\n  Hint: that is the sum of the batch numbers: the bar's update method, given k, advances it by k steps "
                   "(it does not set its position), so one batch is one step."
                   if n > 3 and ran["updates"] in (n * (n - 1) // 2, n * (n + 1) // 2) else "")
        return failed(f"{where}: the progress bar was advanced {ran['updates']} times, expected one step per "
                      f"batch: {n}.{counted}")
    shown = ran["shown"]
    if shown is None:
        return failed(f"{where}: the progress bar shows no running loss; after each batch, its postfix named loss "
                      f"(the bar's set_postfix) shows the mean of the last {RUNNING} batch losses.")
    running = float(np.mean(losses[-RUNNING:]))
    if abs(shown - running) > 1e-3:
        if n <= RUNNING:
            return failed(f"{where}: after the last batch the bar shows loss={shown:.4g}; the running loss, the mean of "
                          f"the last {RUNNING} batch losses (here all {n}: {list(losses)}), is {running:.4g}.")
        return failed(f"{where}: after the last batch the bar shows loss={shown:.4g}; the running loss, the mean of "
                      f"the last {RUNNING} batch losses (batches {n - RUNNING + 1} to {n}), is {running:.4g}."
                      + window_hint(losses, shown))
    return passed("✔ train_epoch: one train_step per batch, in training mode, losses returned, progress advanced")


def window_hint(losses, shown):
    """A hint naming the window the bar averaged, when exactly one number of last losses has the mean `shown`."""
    windows = [w for w in range(1, len(losses) + 1) if abs(float(np.mean(losses[-w:])) - shown) <= 1e-3]
    if windows == [len(losses)]:
        return (f"\n  Hint: that is the mean of all {len(losses)} batch losses so far. The running loss averages only "
                f"the last {RUNNING}, so that it follows the loss as training lowers it; a mean since the first batch "
                "lags further behind with every batch.")
    if len(windows) == 1:
        return (f"\n  Hint: that is the mean of the last {windows[0]} batch losses; the running loss is the mean of "
                f"the last {RUNNING}.")
    return ""


# batch 1: 4 of 4 right; batch 2: 0 of 4; batch 3: 2 of 2. Overall 6 / 10, batch average 2 / 3.
ACCURACY_BATCHES = [([1, 1, -1, -1], [0, 0, 1, 1]), ([1, -1, 1, -1], [2, 3, 1, 0]), ([-1, 1], [1, 0])]


def run_accuracy(namespace, batches):
    """accuracy(Scorer, loader of `batches` (first inputs, labels)): (result, ran in training mode at all)."""
    Tensor = namespace["Tensor"]

    def batch(firsts, labels):
        x = np.zeros((len(firsts), 3))
        x[:, 0] = firsts
        return Tensor(x, requires_grad=False), Tensor(np.array(labels), dtype=np.int64, requires_grad=False)

    return facts.accuracy_run(namespace, [batch(features, labels) for features, labels in batches], run_quietly)


def scored(batches):
    """(overall fraction right, average of the per-batch fractions) of the Scorer on `batches`."""
    rights = [[(0 if f > 0 else 1) == label for f, label in zip(firsts, labels)] for firsts, labels in batches]
    return sum(map(sum, rights)) / sum(map(len, rights)), float(np.mean([np.mean(r) for r in rights]))


@register("accuracy")
def check_accuracy(namespace):
    """accuracy(model, loader) on a probe model with known predictions."""
    try:
        result, trained = run_accuracy(namespace, ACCURACY_BATCHES)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("accuracy", "", error).replace(". ", " ", 1))
    return accuracy_verdict(ACCURACY_BATCHES, result if isinstance(result, (float, np.floating)) else None,
                            type_name(result), trained)


def accuracy_verdict(batches, result, result_type, trained):
    """The verdict on accuracy()'s float `result` (None when it returned a `result_type`) on `batches`."""
    right, average = scored(batches)
    sizes = ", ".join(str(len(labels)) for _, labels in batches)
    count = sum(len(labels) for _, labels in batches)
    where = (f"accuracy(model, loader of batches of {sizes} samples with "
             f"{round(right * count)} of {count} predictions right)")
    if trained:
        return failed(f"{where}: the model ran in training mode.\n  Hint: measure in evaluation mode: dropout and batch norm "
                      "must behave as they will when the model is used.")
    if result is None:
        return failed(f"{where} returned a {result_type}, expected a float.")
    if not np.isclose(result, right) and np.isclose(result, average):
        return failed(f"{where} returned {result:.4f}, the average of the per-batch accuracies; expected {right:.4g}.\n"
                      "  Hint: count correct predictions and samples over all batches, then divide once: "
                      "the last batch is smaller and must weigh less.")
    if not np.isclose(result, right) and np.isclose(result, 100 * right):
        return failed(f"{where} returned {result:.4g}: return a fraction between 0 and 1, not a percentage.")
    if not np.isclose(result, right):
        return failed(f"{where} returned {result!r}, expected {right:.4g}.\n  Hint: a sample's prediction is the class "
                      "with the largest logit in its row, and it is right when it equals the sample's label.")
    return passed("✔ accuracy: eval mode, argmax per sample, counted over all samples")


def held_out_accuracy(model, loader):
    """The course's own count of right answers, whatever the student's accuracy() does."""
    model.eval()
    right = total = 0
    for x, y in loader:
        predicted = np.asarray(model(x).data).argmax(axis=1)
        right += int((predicted == np.asarray(y.data)).sum())
        total += len(predicted)
    return right / total


NO_TRAINED_MODEL = "there is no trained model: run the training cell above first (and fix any error it shows)."


def check_trained_model(model, loader, minimum):
    if model is None:
        return failed(NO_TRAINED_MODEL)
    try:
        score = run_quietly(held_out_accuracy, model, loader)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("model", "forward", error) + "\n  while measuring the held-out accuracy.")
    return trained_model_verdict(score, minimum, len(loader.dataset) if hasattr(loader, "dataset") else "")


def trained_model_verdict(score, minimum, count):
    """The verdict on a trained model's held-out accuracy `score` over `count` digits (the kernel's check
    and the judge both give it)."""
    if score < minimum:
        return failed(f"the trained model classifies {score:.1%} of the held-out digits right; at least {minimum:.0%} "
                      "expected. A model that learned nothing scores about 10%.\n  Hint: look at the loss curve: if the "
                      "loss did not fall, the training steps did not change the model, so look at the training loop "
                      "(train_epoch's check above) and the steps it runs.")
    return passed(f"✔ the trained model classifies {score:.1%} of the {count:,} held-out digits right")


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──


@register("trained_model")
def trained_model_check(namespace, model, loader, minimum):
    """The held-out accuracy of a trained model, counted by the course, is at least `minimum`."""
    return check_trained_model(model, loader, minimum)
