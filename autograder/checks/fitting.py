"""Chapter 9's checks of the Trainer: evaluate, keep_best (checkpoint and patience) and fit.

Each method is graded alone: `fit` runs with scripted stand-ins for chapter 7's train_epoch and for
the student's evaluate and keep_best; keep_best is fed scripted validation losses; evaluate is
compared with NumPy's arithmetic on a small model with dropout.
"""
import contextlib
import io
import os
import tempfile

import numpy as np

from ..progress_bars import ENV_VAR as HEADLESS
from ..verdict import failed, passed
from .ops import describe_exception, run_quietly


def fmt(values):
    return "[" + ", ".join("None" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v) for v in values) + "]"


@contextlib.contextmanager
def headless():
    """No progress bars, and nothing printed, while a check runs the student's code."""
    saved = os.environ.get(HEADLESS)
    os.environ[HEADLESS] = "1"
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        if saved is None:
            os.environ.pop(HEADLESS, None)
        else:
            os.environ[HEADLESS] = saved


def quiet(fn, *args, **kwargs):
    """Run student code with warnings, progress bars, stdout and stderr swallowed."""
    with headless():
        return run_quietly(lambda: fn(*args, **kwargs))


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


def make_trainer(ns, seed=0, **options):
    model = ns["Sequential"](ns["Linear"](3, 4, seed=seed), ns["ReLU"](), ns["Linear"](4, 3, seed=seed + 1))
    optimizer = ns["SGD"](model.parameters(), lr=0.1)
    return ns["Trainer"](model, ns["SoftmaxLoss"](), optimizer, **options), model


# ── evaluate ──────────────────────────────────────────────────────────────────────────────────

def check_evaluate(ns, samples=10, batch_size=4, seed=0):
    Tensor = ns["Tensor"]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, 3)).astype(np.float32)
    y = rng.integers(0, 3, samples)
    model = ns["Sequential"](ns["Linear"](3, 5, seed=seed), ns["Dropout"](0.5, seed=seed), ns["Linear"](5, 3, seed=seed + 1))
    w1, b1 = (np.asarray(p.data, dtype=np.float64) for p in model.modules[0].parameters())
    w2, b2 = (np.asarray(p.data, dtype=np.float64) for p in model.modules[2].parameters())
    logits = (x @ w1 + b1) @ w2 + b2                         # dropout is the identity in eval mode
    shifted = logits - logits.max(axis=1, keepdims=True)
    losses = np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(samples), y]
    want = {"loss": float(losses.mean()), "accuracy": float((logits.argmax(axis=1) == y).mean())}
    sizes = [min(batch_size, samples - s) for s in range(0, samples, batch_size)]
    batch_means = [float(losses[s:s + batch_size].mean()) for s in range(0, samples, batch_size)]

    loader = ns["DataLoader"](ns["ArrayDataset"](x, y), batch_size=batch_size)
    trainer = ns["Trainer"](model, ns["SoftmaxLoss"](), ns["SGD"](model.parameters(), lr=0.1))
    before = [np.array(p.data) for p in model.parameters()]
    model.train()
    try:
        got = quiet(trainer.evaluate, loader)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Trainer", "evaluate", error))
    where = f"evaluate on {samples} samples in batches of {batch_size} ({', '.join(map(str, sizes))})"
    if not isinstance(got, dict) or set(got) != {"loss", "accuracy"}:
        return failed(f"{where} returned {got!r}; expected a dict with the keys 'loss' and 'accuracy'.")
    if any(not np.array_equal(np.asarray(p.data), b) for p, b in zip(model.parameters(), before)):
        return failed(f"{where} changed the model's weights: evaluation must not train (no backward, no step).")
    try:
        loss, acc = float(got["loss"]), float(got["accuracy"])
    except (TypeError, ValueError):
        return failed(f"{where}: loss and accuracy must be numbers; got {got!r}.")
    if not np.isclose(loss, want["loss"], rtol=1e-4, atol=1e-6):
        hint = ""
        if np.isclose(loss, np.mean(batch_means), rtol=1e-4):
            hint = ("\n  That is the mean of the batch means: weigh each batch's mean loss by its size, and divide the "
                    "total by the number of samples.")
        elif model.training:
            hint = "\n  Hint: call self.model.eval() first: dropout is still dropping units."
        return failed(f"{where}: loss {loss:.6g}, expected {want['loss']:.6g} (the mean loss per sample).{hint}")
    if not np.isclose(acc, want["accuracy"], atol=1e-9):
        return failed(f"{where}: accuracy {acc:.6g}, expected {want['accuracy']:.6g} "
                      "(right answers over all samples, divided once at the end).")
    return passed(f"✔ evaluate: loss {want['loss']:.4f} and accuracy {want['accuracy']:.0%} per sample on {samples} samples, in eval mode")


# ── keep_best ─────────────────────────────────────────────────────────────────────────────────

def expected_keep_best(losses, patience):
    """(stop flags, best epoch after each call) for a sequence of validation losses."""
    best, best_epoch, stale, flags, bests = float("inf"), None, 0, [], []
    for epoch, loss in enumerate(losses, 1):
        if loss < best:
            best, best_epoch, stale = loss, epoch, 0
            flags.append(False)
        else:
            stale += 1
            flags.append(patience is not None and stale >= patience)
        bests.append(best_epoch)
    return flags, bests


def check_keep_best(ns, kind, losses=None, patience=2, seed=0):
    if kind == "checkpoint":
        losses = losses or (0.9, 0.7, 0.8, 0.6, 0.65)
        patience = None
    else:
        losses = losses or (0.9, 0.7, 0.8, 0.75, 0.6)
    want_flags, want_best = expected_keep_best(losses, patience)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "best.ckpt") if kind == "checkpoint" else None
        trainer, model = make_trainer(ns, seed, checkpoint_path=path, patience=patience)
        rng = np.random.default_rng(seed)
        snapshots, flags = {}, []
        for epoch, loss in enumerate(losses, 1):
            for p in model.parameters():                       # "training" changed the weights
                p.data[...] = rng.uniform(-1, 1, p.shape)
            snapshots[epoch] = [np.array(p.data) for p in model.parameters()]
            try:
                flag = quiet(trainer.keep_best, epoch, loss)
            except Exception as error:  # noqa: BLE001
                return failed(describe_exception("Trainer", "keep_best", error) + f"\n  at epoch {epoch}, val_loss {loss}.")
            flags.append(flag)
            where = f"keep_best with validation losses {fmt(list(losses[:epoch]))}" + \
                (f" and patience {patience}" if kind == "patience" else "")
            if kind == "patience":
                if flag is not want_flags[epoch - 1] and not (isinstance(flag, (bool, np.bool_)) and flag == want_flags[epoch - 1]):
                    return failed(f"{where}: returned {flag!r} at epoch {epoch}, expected {want_flags[epoch - 1]}.\n"
                                  f"  Expected returns so far: {fmt(want_flags[:epoch])}; yours: {fmt(flags)}.\n"
                                  "  Hint: a loss that is not strictly lower than the best is a stale epoch, even if it beats "
                                  "the epoch before; stop once `patience` stale epochs are in a row; never stop with patience None.")
                if want_flags[epoch - 1]:
                    break
                continue
            best_epoch = want_best[epoch - 1]
            if trainer.best_epoch != best_epoch or not np.isclose(trainer.best_loss, losses[best_epoch - 1]):
                return failed(f"{where}: best_epoch = {trainer.best_epoch}, best_loss = {trainer.best_loss}; expected "
                              f"epoch {best_epoch} with {losses[best_epoch - 1]} (strictly lower is better).")
            state = trainer.best_state
            if not isinstance(state, dict):
                return failed(f"{where}: best_state is {type(state).__name__}; expected model.state_dict() of the best epoch.")
            values = [np.asarray(v) for v in state.values()]
            if len(values) != len(snapshots[best_epoch]) or any(
                    v.shape != s.shape or not np.array_equal(v, s) for v, s in zip(values, snapshots[best_epoch])):
                return failed(f"{where}: best_state does not hold the weights of epoch {best_epoch}.\n"
                              "  Hint: take model.state_dict() (a copy) when the epoch is the best; keep it untouched otherwise.")
            if not os.path.exists(path):
                return failed(f"{where}: no checkpoint file at checkpoint_path: save_checkpoint(path, model, optimizer) "
                              "when the epoch is the best.")
            with np.load(path, allow_pickle=False) as archive:
                saved = [archive[name] for name in archive.files if name.startswith("model.")]
            if len(saved) != len(snapshots[best_epoch]) or any(
                    v.shape != s.shape or not np.array_equal(v, s) for v, s in zip(saved, snapshots[best_epoch])):
                return failed(f"{where}: the checkpoint file does not hold the weights of epoch {best_epoch}: write it "
                              "only when the epoch is the best.")
    if kind == "patience":
        stop = next((i + 1 for i, f in enumerate(want_flags) if f), None)
        when = f"stops at epoch {stop}" if stop else "never stops"
        return passed(f"✔ keep_best with patience {patience} and losses {fmt(list(losses))} {when}")
    return passed(f"✔ keep_best keeps epoch {want_best[-1]} of losses {fmt(list(losses))}, in memory and on disk")


# ── fit ───────────────────────────────────────────────────────────────────────────────────────

def check_fit(ns, epochs=5, stop_after=3, validate=True, seed=0):
    """fit with scripted train_epoch, evaluate and keep_best: calls, history, early stop, best weights."""
    rng = np.random.default_rng(seed)
    trainer, model = make_trainer(ns, seed)
    train_loader, val_loader = ProbeLoader("train_loader"), ProbeLoader("val_loader")
    batch_losses = [list(np.round(rng.uniform(0.1, 2.0, 3), 4)) for _ in range(epochs)]
    val_results = [{"loss": float(np.round(rng.uniform(0.1, 1.0), 4)), "accuracy": float(np.round(rng.uniform(0.5, 1.0), 4))}
                   for _ in range(epochs)]
    best = [np.array(p.data) + 7.0 for p in model.parameters()]
    calls = {"train": [], "evaluate": [], "keep_best": []}

    def train_epoch(m, loader, loss_fn, optimizer, progress=None):
        calls["train"].append((m, loader, loss_fn, optimizer))
        for p in model.parameters():
            p.data[...] = p.data + 1.0                      # training moves the weights
        return list(batch_losses[len(calls["train"]) - 1])

    def evaluate(loader):
        calls["evaluate"].append(loader)
        return dict(val_results[len(calls["evaluate"]) - 1])

    def keep_best(epoch, val_loss):
        calls["keep_best"].append((epoch, val_loss))
        if epoch == 2:
            trainer.best_state = {name: value.copy() for name, value in
                                  zip([f"p{i}" for i in range(len(best))], best)}
        return stop_after is not None and epoch >= stop_after

    def load_state_dict(state, strict=True):
        for p, value in zip(model.parameters(), state.values()):
            p.data[...] = value

    saved = ns.get("train_epoch")
    ns["train_epoch"] = train_epoch
    trainer.evaluate, trainer.keep_best, model.load_state_dict = evaluate, keep_best, load_state_dict
    try:
        history = quiet(trainer.fit, train_loader, val_loader if validate else None, epochs)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Trainer", "fit", error))
    finally:
        ns["train_epoch"] = saved
    ran = min(epochs, stop_after) if (validate and stop_after) else epochs
    where = f"fit(epochs={epochs}{'' if validate else ', no val_loader'})" + \
        (f" with keep_best saying stop at epoch {stop_after}" if validate and stop_after else "")
    if len(calls["train"]) != ran:
        return failed(f"{where}: train_epoch ran {len(calls['train'])} times, expected {ran}"
                      + (" (stop when keep_best returns True)." if validate and stop_after and len(calls["train"]) > ran else "."))
    first = calls["train"][0]
    if first[0] is not model or first[1] is not train_loader or first[2] is not trainer.loss_fn or first[3] is not trainer.optimizer:
        return failed(f"{where}: call train_epoch(self.model, train_loader, self.loss_fn, self.optimizer, bar).")
    if not isinstance(history, dict):
        return failed(f"{where} returned {type(history).__name__}; expected the history dict.")
    want = {"train_loss": [float(np.mean(b)) for b in batch_losses[:ran]],
            "val_loss": [r["loss"] for r in val_results[:ran]] if validate else [],
            "val_accuracy": [r["accuracy"] for r in val_results[:ran]] if validate else []}
    for key, values in want.items():
        got = history.get(key)
        if got is None or len(got) != len(values) or not np.allclose(np.asarray(got, dtype=float), values, rtol=1e-6):
            return failed(f"{where}: history[{key!r}] is {got!r}, expected {fmt(values)}."
                          + ("\n  train_loss holds the mean of each epoch's batch losses." if key == "train_loss" else ""))
    if not validate:
        if calls["evaluate"] or calls["keep_best"]:
            return failed(f"{where}: evaluate or keep_best was called without a val_loader.")
    else:
        if calls["evaluate"] != [val_loader] * ran:
            return failed(f"{where}: evaluate(val_loader) should run once after each epoch's training.")
        want_keep = [(e, val_results[e - 1]["loss"]) for e in range(1, ran + 1)]
        if calls["keep_best"] != want_keep:
            return failed(f"{where}: keep_best was called with {calls['keep_best']}, expected {want_keep} "
                          "(the epoch, counted from 1, and its validation loss).")
        if ran >= 2 and any(not np.array_equal(np.asarray(p.data), b) for p, b in zip(model.parameters(), best)):
            return failed(f"{where}: after fit the model does not hold best_state: load it back with "
                          "self.model.load_state_dict(self.best_state) after the loop.")
    if not validate:
        done = " without validation"
    else:
        done = ", validated each" + (", stopped when keep_best said so" if stop_after and stop_after < epochs else "") \
            + ", restored the best weights"
    return passed(f"✔ fit ran {ran} of {epochs} epochs{done}; the history is right")
