"""Checks of chapter 7's training loop, `train_epoch`, and of `accuracy`, on probe models and loaders.

`train_epoch` is checked with a recording stand-in for chapter 5's `train_step`, so only the loop is
graded; `accuracy` with a probe model whose outputs are known (and useless in training mode). The
final check measures a trained model's held-out accuracy with the course's own arithmetic.
"""
import numpy as np

from ..verdict import failed, passed
from .describe import type_name
from .ops import describe_exception, run_quietly


def probe_batches(Tensor, sizes, seed=0):
    rng = np.random.default_rng(seed)
    return [(Tensor(rng.standard_normal((n, 3)), requires_grad=False),
             Tensor(rng.integers(0, 4, n), dtype=np.int64, requires_grad=False)) for n in sizes]


def probe_module(Module):
    class Probe(Module):
        """Records the mode it was in at each forward call."""

        def __init__(self):
            self.modes = []

        def forward(self, x):
            self.modes.append(self.training)
            return x

    return Probe


class RecordingBar:
    """Stands in for a tqdm bar: counts updates, keeps the last postfix."""

    def __init__(self):
        self.updates = 0
        self.postfix = {}

    def update(self, n=1):
        self.updates += n

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        self.postfix = dict(ordered_dict or {}, **kwargs)


def check_train_epoch(namespace):
    Tensor, train_epoch = namespace["Tensor"], namespace["train_epoch"]
    model = probe_module(namespace["Module"])()
    loss_fn, optimizer = object(), object()
    batches = probe_batches(Tensor, [4, 4, 2])
    calls = []
    losses = [0.9, 0.5, 0.4]          # mean 0.6, last 0.4: a bar showing the last loss is told apart

    def recording_train_step(m, lf, opt, x, y):
        calls.append((m, lf, opt, x, y, m.training))
        return losses[len(calls) - 1] if len(calls) <= len(losses) else float("nan")

    saved = namespace.get("train_step")
    namespace["train_step"] = recording_train_step
    bar = RecordingBar()
    try:
        run_quietly(model.eval)
        result = run_quietly(train_epoch, model, batches, loss_fn, optimizer, bar)
        calls_with_bar = len(calls)
        calls.clear()
        run_quietly(train_epoch, model, batches, loss_fn, optimizer)
        calls_without_bar = len(calls)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("train_epoch", "", error).replace(". ", " ", 1))
    finally:
        namespace["train_step"] = saved
    where = "train_epoch(model, loader of 3 batches, loss_fn, optimizer, progress)"
    if calls_with_bar != 3 or calls_without_bar != 3:
        return failed(f"{where} called train_step {calls_with_bar} times, expected once per batch: 3.")
    for (m, lf, opt, x, y, mode), (bx, by) in zip(calls, batches):
        if m is not model or lf is not loss_fn or opt is not optimizer or x is not bx or y is not by:
            return failed(f"{where}: call train_step(model, loss_fn, optimizer, images, labels) with one batch's "
                          "images and labels, in that order.")
    if not all(mode for *_, mode in calls):
        return failed(f"{where}: the model was in eval mode during training.\n  Hint: call model.train() at the start "
                      "of the epoch; accuracy() switches it to eval(), and dropout or batch norm behave differently there.")
    if not isinstance(result, list) or len(result) != 3 or not np.allclose(result, losses):
        return failed(f"{where} returned {result!r}, expected the list of the 3 batch losses {losses}.")
    if bar.updates != 3:
        return failed(f"{where}: the progress bar was advanced {bar.updates} times, expected once per batch: progress.update(1).")
    shown = bar.postfix.get("loss")
    try:
        shown = float(shown)
    except (TypeError, ValueError):
        return failed(f"{where}: the progress bar shows no running loss; after each batch call "
                      "progress.set_postfix(loss=<mean of the last 50 batch losses>).")
    if abs(shown - np.mean(losses)) > 1e-3:
        return failed(f"{where}: after the last batch the bar shows loss={shown:.4g}; the running loss, the mean of the "
                      f"last 50 batch losses (here all 3: {losses}), is {np.mean(losses):.4g}.")
    return passed("✔ train_epoch: one train_step per batch, in training mode, losses returned, progress advanced")


def check_accuracy(namespace):
    Tensor, accuracy = namespace["Tensor"], namespace["accuracy"]
    Probe = probe_module(namespace["Module"])

    class Scorer(Probe):
        """Logits that pick class 0 for positive first inputs, else class 1; noise in training mode."""

        def forward(self, x):
            super().forward(x)
            if self.training:
                return Tensor(np.random.default_rng(len(self.modes)).standard_normal((x.shape[0], 4)), requires_grad=False)
            first = x.data[:, 0]
            logits = np.zeros((x.shape[0], 4))
            logits[np.arange(len(first)), np.where(first > 0, 0, 1)] = 1.0
            return Tensor(logits, requires_grad=False)

    def batch(firsts, labels):
        x = np.zeros((len(firsts), 3))
        x[:, 0] = firsts
        return Tensor(x, requires_grad=False), Tensor(np.array(labels), dtype=np.int64, requires_grad=False)

    # batch 1: 4 of 4 right; batch 2: 0 of 4; batch 3: 2 of 2. Overall 6 / 10, batch average 2 / 3.
    loader = [batch([1, 1, -1, -1], [0, 0, 1, 1]), batch([1, -1, 1, -1], [2, 3, 1, 0]), batch([-1, 1], [1, 0])]
    model = Scorer()
    try:
        result = run_quietly(accuracy, model, loader)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("accuracy", "", error).replace(". ", " ", 1))
    where = "accuracy(model, loader of batches of 4, 4 and 2 samples with 6 of 10 predictions right)"
    if model.modes and any(model.modes):
        return failed(f"{where}: the model ran in training mode.\n  Hint: call model.eval() first: dropout and batch norm "
                      "must behave as they will when the model is used.")
    if not isinstance(result, (float, np.floating)):
        return failed(f"{where} returned a {type_name(result)}, expected a float.")
    if np.isclose(result, 2 / 3):
        return failed(f"{where} returned {result:.4f}, the average of the per-batch accuracies; expected 0.6.\n"
                      "  Hint: count correct predictions and samples over all batches, then divide once: "
                      "the last batch is smaller and must weigh less.")
    if np.isclose(result, 60.0):
        return failed(f"{where} returned 60.0: return a fraction between 0 and 1, not a percentage.")
    if not np.isclose(result, 0.6):
        return failed(f"{where} returned {result!r}, expected 0.6.\n  Hint: the prediction is the class with the "
                      "largest logit, logits.numpy().argmax(axis=1), compared with the labels.")
    return passed("✔ accuracy: eval mode, argmax per sample, counted over all samples")


def held_out_accuracy(model, loader):
    """The course's own count of right answers, whatever the student's accuracy() does."""
    model.eval()
    right = total = 0
    for images, labels in loader:
        predicted = np.asarray(model(images).data).argmax(axis=1)
        right += int((predicted == np.asarray(labels.data)).sum())
        total += len(predicted)
    return right / total


def check_trained_model(model, loader, minimum):
    if model is None:
        return failed("there is no trained model: run the training cell above first (and fix any error it shows).")
    try:
        score = run_quietly(held_out_accuracy, model, loader)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("model", "forward", error) + "\n  while measuring the held-out accuracy.")
    if score < minimum:
        return failed(f"the trained model classifies {score:.1%} of the held-out digits right; at least {minimum:.0%} "
                      "expected. A model that learned nothing scores about 10%.\n  Hint: look at the loss curve: if the "
                      "loss did not fall, check train_epoch (does it call train_step on every batch?).")
    return passed(f"✔ the trained model classifies {score:.1%} of the {len(loader.dataset) if hasattr(loader, 'dataset') else ''} "
                  "held-out digits right")
