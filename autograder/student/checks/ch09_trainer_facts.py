"""What chapter 9's Trainer did: fit with scripted stand-ins for train_epoch, evaluate and keep_best, run with no
progress bars and nothing printed.

NumPy and the standard library only, no course imports: the judge ships this file as text to the kernel
(`probes.SHIPPED`), so the course's checks and the judge's worker run the student's code the very same way.
`call` runs the student's code quietly (the checks' run_quietly, the worker's quietly).
"""
import contextlib
import io
import os

import numpy as np


@contextlib.contextmanager
def headless(variable):
    """No progress bars (the environment `variable` progress_bars reads set to "1"), and nothing printed, meanwhile."""
    saved = os.environ.get(variable)
    os.environ[variable] = "1"
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        if saved is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = saved


class ProbeLoader:
    """Stands in for a DataLoader that fit only hands on: it has a length, for the progress bar."""

    def __init__(self, name):
        self.name = name

    def __len__(self):
        return 3

    def __iter__(self):
        return iter(())

    def __repr__(self):
        return self.name


def small_trainer(namespace, seed, **options):
    """A Trainer of Linear(3, 4) → ReLU → Linear(4, 3) with SGD: (the trainer, its model)."""
    model = namespace["Sequential"](namespace["Linear"](3, 4, seed=seed), namespace["ReLU"](),
                                    namespace["Linear"](4, 3, seed=seed + 1))
    optimizer = namespace["SGD"](model.parameters(), lr=0.1)
    return namespace["Trainer"](model, namespace["SoftmaxLoss"](), optimizer, **options), model


def same_arrays(values, snapshot):
    return len(values) == len(snapshot) and all(v.shape == s.shape and np.array_equal(v, s) for v, s in zip(values, snapshot))


def fit_history(history):
    """fit's returned history as data: {key: list of floats, or the repr of what is there}, or a type's name."""
    if not isinstance(history, dict):
        return type(history).__name__
    shown = {}
    for key in ("train_loss", "val_loss", "val_accuracy"):
        value = history.get(key)
        try:
            shown[key] = [float(v) for v in value]
        except (TypeError, ValueError):
            shown[key] = repr(value)[:200]
    return shown


def fit_run(namespace, trainer, model, script, best, headless_variable, call):
    """trainer.fit(train_loader, val_loader or None, epochs) with scripted stand-ins: chapter 7's train_epoch (in
    `namespace`) moving every weight by 1 and returning `script["batch_losses"]` of its epoch, evaluate returning
    `script["val_results"]` of its epoch, keep_best putting `best` in best_state at epoch 2 and saying stop from
    epoch `script["stop_after"]` on, the model's load_state_dict putting a state's arrays in, and the notebook's
    report recording the epochs it prints. What fit did, as data (the record `fit_verdict` reads), and what it
    left in the parameters it started with."""
    epochs, stop_after = script["epochs"], script["stop_after"]
    batch_losses, val_results = script["batch_losses"], script["val_results"]
    params = model.parameters()
    train_loader, val_loader = ProbeLoader("train_loader"), ProbeLoader("val_loader")
    calls = {"train": [], "evaluate": [], "keep_best": [], "bars": [], "restarts": [], "reports": []}
    left = []                                               # the weights the last epoch's training ended with

    def train_epoch(m, loader, loss_fn, optimizer, progress=None):
        calls["train"].append((m, loader, loss_fn, optimizer))
        calls["bars"].append(progress is not None)
        now = [np.asarray(p.data) for p in model.parameters()]
        if left and not same_arrays(now, left):
            calls["restarts"].append([len(calls["train"]), same_arrays(now, best)])
        for p in model.parameters():
            p.data[...] = p.data + 1.0                      # training moves the weights
        left[:] = [np.array(p.data) for p in model.parameters()]
        return list(batch_losses[len(calls["train"]) - 1])

    def evaluate(loader):
        calls["evaluate"].append(loader)
        return dict(val_results[len(calls["evaluate"]) - 1])

    def keep_best(epoch, val_loss):
        calls["keep_best"].append((epoch, val_loss))
        if epoch == 2:
            trainer.best_state = {f"p{i}": value.copy() for i, value in enumerate(best)}
        return stop_after is not None and epoch >= stop_after

    def load_state_dict(state, strict=True):
        for p, value in zip(model.parameters(), state.values()):
            p.data[...] = value

    def report(epoch, train_loss, val=None):
        calls["reports"].append(epoch)

    saved, saved_report = namespace.get("train_epoch"), namespace.get("report")
    namespace["train_epoch"], namespace["report"] = train_epoch, report
    trainer.evaluate, trainer.keep_best, model.load_state_dict = evaluate, keep_best, load_state_dict
    try:
        with headless(headless_variable):
            history = call(trainer.fit, train_loader, val_loader if script["validate"] else None, epochs)
    finally:
        namespace["train_epoch"], namespace["report"] = saved, saved_report
    first = calls["train"][0] if calls["train"] else None
    return {"train_calls": len(calls["train"]),
            "first_right": first is not None and first[0] is model and first[1] is train_loader
            and first[2] is trainer.loss_fn and first[3] is trainer.optimizer,
            "history": fit_history(history),
            "evaluate_calls": ["val_loader" if c is val_loader else repr(c)[:100] for c in calls["evaluate"]],
            "keep_best_calls": calls["keep_best"], "params": [np.asarray(p.data) for p in params],
            "bars": calls["bars"], "restarts": calls["restarts"], "reports": calls["reports"]}
