"""What chapter 7's training loop and accuracy did: train_epoch with a recording train_step and progress bar, and
accuracy on a model whose predictions are known.

NumPy and the standard library only, no course imports: the judge ships this file as text to the kernel
(`probes.SHIPPED`), so the course's checks and the judge's worker run the student's code the very same way.
`call` runs the student's code quietly (the checks' run_quietly, the worker's quietly).
"""
import numpy as np


def probe_module(Module):
    class Probe(Module):
        """Records the mode it was in at each forward call."""

        def __init__(self):
            self.modes = []

        def forward(self, x):
            self.modes.append(self.training)
            return x

    return Probe


def scorer_module(Module, Tensor):
    class Scorer(probe_module(Module)):
        """Logits that pick class 0 for positive first inputs, else class 1; noise in training mode."""

        def forward(self, x):
            super().forward(x)
            if self.training:
                return Tensor(np.random.default_rng(len(self.modes)).standard_normal((x.shape[0], 4)), requires_grad=False)
            first = x.data[:, 0]
            logits = np.zeros((x.shape[0], 4))
            logits[np.arange(len(first)), np.where(first > 0, 0, 1)] = 1.0
            return Tensor(logits, requires_grad=False)

    return Scorer


class RecordingBar:
    """Stands in for a tqdm bar: counts updates, keeps the last postfix."""

    def __init__(self):
        self.updates = 0
        self.postfix = {}

    def update(self, n=1):
        self.updates += n

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        self.postfix = dict(ordered_dict or {}, **kwargs)


def as_float(value):
    """`value` as a float, or None when it is not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def train_epoch_run(namespace, batches, losses, call):
    """train_epoch with train_step swapped for a recorder that returns `losses` in turn, with and without a bar:
    the calls counted, whether each got the batch's very objects in training mode, what it returned (as it is),
    the bar's updates and the running loss it shows (a float, or None)."""
    train_epoch = namespace["train_epoch"]
    model = probe_module(namespace["Module"])()
    loss_fn, optimizer = object(), object()
    calls = []

    def recording_train_step(m, lf, opt, x, y):
        calls.append((m, lf, opt, x, y, m.training))
        return losses[len(calls) - 1] if len(calls) <= len(losses) else float("nan")

    saved = namespace.get("train_step")
    namespace["train_step"] = recording_train_step
    bar = RecordingBar()
    try:
        call(model.eval)
        result = call(train_epoch, model, batches, loss_fn, optimizer, bar)
        calls_with_bar = len(calls)
        right_arguments = all(m is model and lf is loss_fn and opt is optimizer and x is bx and y is by
                              for (m, lf, opt, x, y, _), (bx, by) in zip(calls, batches))
        training = all(mode for *_, mode in calls)
        calls.clear()
        call(train_epoch, model, batches, loss_fn, optimizer)
        calls_without_bar = len(calls)
    finally:
        namespace["train_step"] = saved
    return {"calls": [calls_with_bar, calls_without_bar], "right_arguments": right_arguments, "training": training,
            "result": result, "updates": bar.updates, "shown": as_float(bar.postfix.get("loss"))}


def accuracy_run(namespace, loader, call):
    """accuracy(Scorer, loader): (what it returned, whether the model ran in training mode at all)."""
    model = scorer_module(namespace["Module"], namespace["Tensor"])()
    result = call(namespace["accuracy"], model, loader)
    return result, bool(model.modes and any(model.modes))
