"""Chapter 9's checks of the Trainer: evaluate, keep_best (checkpoint and patience) and fit.

Each method is graded alone: `fit` runs with scripted stand-ins for chapter 7's train_epoch and for
the student's evaluate and keep_best; keep_best is fed scripted validation losses; evaluate is
compared with NumPy's arithmetic on a small model with dropout.
"""
import os
import tempfile

import numpy as np

from autograder.student.checks import ch09_trainer_facts as facts
from autograder.student.checks.ch09_trainer_facts import same_arrays
from autograder.student.checks.kernel_facts import dropout_modes, has_gradients, number_report
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.progress_bars import ENV_VAR as HEADLESS
from autograder.student.verdict import failed, passed


def fmt(values):
    return "[" + ", ".join("None" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v) for v in values) + "]"


def quiet(fn, *args, **kwargs):
    """Run student code with warnings, progress bars, stdout and stderr swallowed."""
    with facts.headless(HEADLESS):
        return run_quietly(lambda: fn(*args, **kwargs))


# ── evaluate ──────────────────────────────────────────────────────────────────────────────────

def evaluate_expected(x, y, weights, batch_size):
    """(the per-sample mean loss and accuracy, the mean of the batch means) of Linear → Dropout → Linear in
    eval mode with `weights` [w1, b1, w2, b2], on samples x and labels y in batches of `batch_size`."""
    w1, b1, w2, b2 = (np.asarray(w, dtype=np.float64) for w in weights)
    samples = len(y)
    logits = (np.asarray(x, dtype=np.float64) @ w1 + b1) @ w2 + b2     # dropout is the identity in eval mode
    shifted = logits - logits.max(axis=1, keepdims=True)
    losses = np.log(np.exp(shifted).sum(axis=1)) - shifted[np.arange(samples), y]
    want = {"loss": float(losses.mean()), "accuracy": float((logits.argmax(axis=1) == y).mean())}
    return want, [float(losses[s:s + batch_size].mean()) for s in range(0, samples, batch_size)]


def evaluate_where(samples, batch_size):
    sizes = [min(batch_size, samples - s) for s in range(0, samples, batch_size)]
    return f"evaluate on {samples} samples in batches of {batch_size} ({', '.join(map(str, sizes))})"


@register("evaluate")
def check_evaluate(ns, samples=10, batch_size=4, seed=0):
    """Trainer.evaluate against NumPy's loss and accuracy per sample, on a model with dropout."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, 3)).astype(np.float32)
    y = rng.integers(0, 3, samples)
    model = ns["Sequential"](ns["Linear"](3, 5, seed=seed), ns["Dropout"](0.5, seed=seed), ns["Linear"](5, 3, seed=seed + 1))
    weights = [np.asarray(p.data, dtype=np.float64) for i in (0, 2) for p in model.modules[i].parameters()]
    loader = ns["DataLoader"](ns["ArrayDataset"](x, y), batch_size=batch_size)
    trainer = ns["Trainer"](model, ns["SoftmaxLoss"](), ns["SGD"](model.parameters(), lr=0.1))
    before = [np.array(p.data) for p in model.parameters()]
    modes = dropout_modes(model.modules[1])
    model.train()
    try:
        got = quiet(trainer.evaluate, loader)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Trainer", "evaluate", error))
    changed = any(not np.array_equal(np.asarray(p.data), b) for p, b in zip(model.parameters(), before))
    return evaluate_verdict(samples, batch_size, evaluated(got), changed, any(modes),
                            *evaluate_expected(x, y, weights, batch_size), gradients=has_gradients(model.parameters()))


def evaluated(got):
    """What evaluate returned, as `evaluate_verdict` reads it: its keys, repr and numbers (None if not numbers)."""
    keys = sorted(map(str, got)) if isinstance(got, dict) else None
    try:
        numbers = (float(got["loss"]), float(got["accuracy"])) if keys == ["accuracy", "loss"] else (None, None)
    except (TypeError, ValueError):
        numbers = (None, None)
    reports = {key: number_report(got[key]) for key in keys} if keys == ["accuracy", "loss"] else {}
    types = {key: report["type_name"] for key, report in reports.items()}
    floats = [key for key, report in reports.items() if report["float"]]
    return {"keys": keys, "text": repr(got)[:300], "loss": numbers[0], "accuracy": numbers[1], "types": types,
            "floats": floats}


def evaluate_verdict(samples, batch_size, got, changed, training, want, batch_means, gradients=False):
    """The verdict on `evaluated(...)` of evaluate's answer; `changed`: the weights moved; `training`: a batch went
    through the model's Dropout in training mode; `gradients`: its parameters held gradients afterwards (none before)."""
    where = evaluate_where(samples, batch_size)
    if got["keys"] != ["accuracy", "loss"]:
        return failed(f"{where} returned {got['text']}; expected a dict with the keys 'loss' and 'accuracy'.")
    if changed:
        return failed(f"{where} changed the model's weights: evaluation must not train (no backward, no step).")
    if gradients:
        return failed(f"{where} left gradients in the model's parameters, which had none before: evaluate ran a "
                      "backward pass.\n  Hint: evaluation only measures: the loss of each batch is read as a number, "
                      "and no backward runs (it costs a pass through the graph, and its gradients would add to the next "
                      "training step's if nothing clears them).")
    loss, acc = got["loss"], got["accuracy"]
    if loss is None or acc is None:
        return failed(f"{where}: loss and accuracy must be numbers; got {got['text']}.")
    if not np.isclose(loss, want["loss"], rtol=1e-4, atol=1e-6):
        hint = ""
        if np.isclose(loss, np.mean(batch_means), rtol=1e-4):
            hint = ("\n  That is the mean of the batch means: weigh each batch's mean loss by its size, and divide the "
                    "total by the number of samples.")
        elif training:
            hint = ("\n  Hint: the batches went through the model in training mode, so dropout dropped units: "
                    "evaluation measures the model in evaluation mode, where dropout keeps every unit.")
        return failed(f"{where}: loss {loss:.6g}, expected {want['loss']:.6g} (the mean loss per sample).{hint}")
    if not np.isclose(acc, want["accuracy"], atol=1e-9):
        return failed(f"{where}: accuracy {acc:.6g}, expected {want['accuracy']:.6g} "
                      "(right answers over all samples, divided once at the end).")
    others = [f"{key} is a {got['types'][key]}" for key in ("loss", "accuracy") if key not in got.get("floats", [])]
    if others:
        return failed(f"{where}: the values are right, but {' and '.join(others)}, not a Python float.\n"
                      "  Hint: evaluate returns two Python floats (the history, the report and anything that saves "
                      "them expect plain numbers): a NumPy value or a tensor keeps its type through the sums, while "
                      "a one-element tensor's item() is a Python number.")
    return passed(f"✔ evaluate: loss {want['loss']:.4f} and accuracy {want['accuracy']:.0%} per sample on "
                  f"{samples} samples, in eval mode")


# ── keep_best ─────────────────────────────────────────────────────────────────────────────────

def expected_keep_best(losses, patience, slip=None):
    """(stop flags, best epoch after each call) for a sequence of validation losses; with `slip`, those of a known
    wrong rule instead (STOP_SLIPS), so that a hint can name it when a student's flags are that rule's."""
    best, best_epoch, stale, flags, bests = float("inf"), None, 0, [], []
    for epoch, loss in enumerate(losses, 1):
        if loss < best or (slip == "ties" and loss <= best):
            best, best_epoch = loss, epoch
            stale = stale if slip == "no_reset" else 0
            flags.append(False)
        else:
            stale += 1
            flags.append(patience is not None and stale >= patience)
        bests.append(best_epoch)
    return flags, bests


# Known wrong stopping rules, each with what the flags show: named only when a student's flags are that rule's.
STOP_SLIPS = {
    "no_reset": ("your returns are those of a count of stale epochs that a new best does not reset: the stale "
                 "epochs before an improvement still counted after it. A new best starts the count again from 0, "
                 "so that `patience` counts stale epochs in a row."),
    "ties": ("your returns are those of a rule that counts a loss equal to the best as an improvement: only a loss "
             "strictly lower than the best is one, and an equal loss is a stale epoch."),
}


def stop_hint(losses, patience, flags):
    """The hint for keep_best's wrong returns `flags` so far: a known wrong rule when the flags are exactly its,
    else the rule."""
    for slip, says in STOP_SLIPS.items():
        want, _ = expected_keep_best(losses[:len(flags)], patience, slip)
        right, _ = expected_keep_best(losses[:len(flags)], patience)
        if want != right and [f is True for f in flags] == want and all(isinstance(f, bool) for f in flags):
            return f"  Hint: {says}"
    return ("  Hint: a loss that is not strictly lower than the best is a stale epoch, even if it beats the epoch "
            "before; a new best resets the count; stop once `patience` stale epochs are in a row; never stop with "
            "patience None.")


# after a `checkpoint` run, the same trainer's logic without a checkpoint_path: a tie (stale), then a new best
# lower by only 1e-6 (strictly lower is better, by however little)
MEMORY_LOSSES = (0.9, 0.7, 0.8, 0.7, 0.699999, 0.75)


@register("keep_best")
def check_keep_best(ns, kind, losses=None, patience=2, seed=0):
    """Trainer.keep_best on scripted validation losses: `checkpoint` (snapshot and file, then the snapshot without
    a checkpoint_path) or `patience`."""
    losses, patience = keep_best_scenario(kind, losses, patience)
    problem = keep_best_run(ns, kind, losses, patience, seed)
    if not problem and kind == "checkpoint":
        problem = keep_best_run(ns, "memory", MEMORY_LOSSES, None, seed + 1)
    return problem or keep_best_passed(kind, losses, patience)


def keep_best_run(ns, kind, losses, patience, seed):
    """keep_best over `losses` on a new trainer, the weights changed before each call: the first problem, or None.
    `memory`: as `checkpoint`, without a checkpoint_path."""
    want_flags, _ = expected_keep_best(losses, patience)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "best.ckpt") if kind == "checkpoint" else None
        trainer, model = facts.small_trainer(ns, seed, checkpoint_path=path, patience=patience)
        rng = np.random.default_rng(seed)
        snapshots, records = {}, []
        for epoch, loss in enumerate(losses, 1):
            for p in model.parameters():                       # "training" changed the weights
                p.data[...] = rng.uniform(-1, 1, p.shape)
            snapshots[epoch] = [np.array(p.data) for p in model.parameters()]
            try:
                flag = quiet(trainer.keep_best, epoch, loss)
            except Exception as error:  # noqa: BLE001
                return failed(describe_exception("Trainer", "keep_best", error) + at_epoch(kind, epoch, loss))
            records.append(keep_best_record(trainer, flag, path))
            problem = keep_best_problem(kind, losses, patience, records, snapshots)
            if problem:
                return problem
            if kind == "patience" and want_flags[epoch - 1]:
                break
    return None


def at_epoch(kind, epoch, loss):
    """Where keep_best raised."""
    return f"\n  at epoch {epoch}, val_loss {loss}" + (", with no checkpoint_path." if kind == "memory" else ".")


def keep_best_scenario(kind, losses, patience):
    """The validation losses and patience a keep_best check uses: the cell's, or the defaults."""
    if kind == "checkpoint":        # 0.75 beats the epoch before it, not the best: no new best
        return tuple(losses or (0.9, 0.7, 0.8, 0.75, 0.6, 0.65)), None
    return tuple(losses or (0.9, 0.7, 0.8, 0.6, 0.75, 0.7)), patience      # a new best between stale epochs


def keep_best_record(trainer, flag, path):
    """What keep_best left after one call, as data: the flag, best_epoch, best_loss, best_state's arrays (in
    order) and the model arrays of the checkpoint file at `path` (None when there is no file)."""
    state = trainer.best_state
    try:
        best_loss = float(trainer.best_loss)
    except (TypeError, ValueError):
        best_loss = None
    record = {"flag": bool(flag) if isinstance(flag, (bool, np.bool_)) else None, "flag_text": str(flag)[:100],
              "best_epoch": int(trainer.best_epoch) if isinstance(trainer.best_epoch, (int, np.integer))
              else str(trainer.best_epoch)[:100],
              "best_loss": best_loss, "best_loss_text": str(trainer.best_loss)[:100],
              "state": [np.asarray(v) for v in state.values()] if isinstance(state, dict) else None,
              "state_type": type(state).__name__, "file": None}
    if path is not None and os.path.exists(path):
        with np.load(path, allow_pickle=False) as archive:
            record["file"] = [archive[name] for name in archive.files if name.startswith("model.")]
            record["file_optimizer"] = any(name.startswith("optimizer.") for name in archive.files)
    return record


def keep_best_problem(kind, losses, patience, records, snapshots):
    """The failed verdict on the last of `records` (one per keep_best call so far), or None; `snapshots`:
    {epoch: the model's arrays in that epoch}."""
    want_flags, want_best = expected_keep_best(losses, patience)
    epoch, record = len(records), records[-1]
    where = f"keep_best with validation losses {fmt(list(losses[:epoch]))}" + \
        (f" and patience {patience}" if kind == "patience" else " and no checkpoint_path" if kind == "memory" else "")
    if kind == "patience":
        if record["flag"] is None or record["flag"] != want_flags[epoch - 1]:
            return failed(f"{where}: returned {record['flag_text']} at epoch {epoch}, expected {want_flags[epoch - 1]}.\n"
                          f"  Expected returns so far: {fmt(want_flags[:epoch])}; yours: {fmt([r['flag_text'] for r in records])}.\n"
                          + stop_hint(losses, patience, [r["flag"] for r in records]))
        return None
    best_epoch = want_best[epoch - 1]
    if record["best_epoch"] != best_epoch or record["best_loss"] is None \
            or not np.isclose(record["best_loss"], losses[best_epoch - 1]):
        before = want_best[epoch - 2] if epoch > 1 else None
        hint = ""
        best_so_far = losses[before - 1] if before else None
        if record["best_epoch"] == epoch and best_so_far is not None and losses[epoch - 1] == best_so_far:
            hint = (f"\n  Hint: {losses[epoch - 1]} equals the best loss so far, of epoch {before}: an equal loss is not "
                    "an improvement; only a strictly lower one is.")
        elif epoch > 1 and record["best_epoch"] == epoch and losses[epoch - 1] < losses[epoch - 2]:
            hint = (f"\n  Hint: {losses[epoch - 1]} beats the epoch before ({losses[epoch - 2]}) but not the best so "
                    f"far ({best_so_far}, epoch {before}): compare with the best loss so far, not with the epoch before.")
        elif before and best_epoch == epoch and record["best_epoch"] == before \
                and losses[before - 1] - losses[epoch - 1] < 1e-3:
            hint = (f"\n  Hint: {losses[epoch - 1]} is lower than the best so far, {losses[before - 1]}, by only "
                    f"{losses[before - 1] - losses[epoch - 1]:.2g}: any loss strictly lower than the best is an "
                    "improvement, however small.")
        return failed(f"{where}: best_epoch = {record['best_epoch']}, best_loss = {record['best_loss_text']}; expected "
                      f"epoch {best_epoch} with {losses[best_epoch - 1]} (strictly lower is better)." + hint)
    if record["state"] is None:
        return failed(f"{where}: best_state is {record['state_type']}; expected the model's state dict from the best epoch."
                      + ("\n  Hint: the snapshot in memory is kept in every best epoch, whether or not there is a "
                         "checkpoint_path; the file is written as well when there is one." if kind == "memory" else ""))
    if not same_arrays(record["state"], snapshots[best_epoch]):
        return failed(f"{where}: best_state does not hold the weights of epoch {best_epoch}.\n"
                      "  Hint: in an epoch that is the best, take the model's state dict (chapter 8's snapshot, a copy "
                      "of every array); in any other epoch, leave it as it is.")
    if kind == "memory":
        return None
    if record["file"] is None:
        return failed(f"{where}: no checkpoint file at checkpoint_path: in an epoch that is the best, write one "
                      "there with chapter 8's save_checkpoint.")
    if not same_arrays(record["file"], snapshots[best_epoch]):
        return failed(f"{where}: the checkpoint file does not hold the weights of epoch {best_epoch}: write it "
                      "only when the epoch is the best.")
    if not record.get("file_optimizer"):
        return failed(f"{where}: the checkpoint file holds the model but not the optimizer's state, so training "
                      "cannot resume from it as it was.\n  Hint: the best epoch's checkpoint is the model and the "
                      "trainer's optimizer, both (chapter 8's save_checkpoint takes them).")
    return None


def keep_best_passed(kind, losses, patience):
    want_flags, want_best = expected_keep_best(losses, patience)
    if kind == "patience":
        stop = next((i + 1 for i, f in enumerate(want_flags) if f), None)
        when = f"stops at epoch {stop}" if stop else "never stops"
        return passed(f"✔ keep_best with patience {patience} and losses {fmt(list(losses))} {when}")
    return passed(f"✔ keep_best keeps epoch {want_best[-1]} of losses {fmt(list(losses))}, in memory and on disk")


# ── fit ───────────────────────────────────────────────────────────────────────────────────────

RUNNING_LOSS_BATCHES = 50       # chapter 7's running loss: the mean of the last 50 batch losses


def fit_scenario(rng, epochs):
    """Scripted batch losses and validation results for `epochs` epochs, drawn from `rng`. The first epoch has
    more batches than chapter 7's running loss averages, so a train_loss of only the last 50 shows."""
    counts = [int(rng.integers(RUNNING_LOSS_BATCHES + 1, 80))] + [int(rng.integers(2, 6)) for _ in range(epochs - 1)]
    batch_losses = [list(np.round(rng.uniform(0.1, 2.0, count), 4)) for count in counts]
    val_results = [{"loss": float(np.round(rng.uniform(0.1, 1.0), 4)), "accuracy": float(np.round(rng.uniform(0.5, 1.0), 4))}
                   for _ in range(epochs)]
    return batch_losses, val_results


@register("fit")
def check_fit(ns, epochs=5, stop_after=3, validate=True, seed=0):
    """fit with scripted train_epoch, evaluate and keep_best: calls, history, early stop, best weights."""
    rng = np.random.default_rng(seed)
    trainer, model = facts.small_trainer(ns, seed)
    batch_losses, val_results = fit_scenario(rng, epochs)
    best = [np.array(p.data) + 7.0 for p in model.parameters()]
    script = {"epochs": epochs, "stop_after": stop_after, "validate": validate, "batch_losses": batch_losses,
              "val_results": val_results}
    try:
        record = facts.fit_run(ns, trainer, model, script, best, HEADLESS, run_quietly)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Trainer", "fit", error))
    return fit_verdict(epochs, stop_after, validate, record, batch_losses, val_results, best)


def train_loss_hint(got, batch_losses):
    """The rule for history["train_loss"]; it names the running loss only when `got` is exactly that."""
    running = [float(np.mean(b[-RUNNING_LOSS_BATCHES:])) for b in batch_losses]
    if isinstance(got, list) and len(got) == len(running) and np.allclose(np.asarray(got, dtype=float), running, rtol=1e-6):
        return (f"\n  Those are the means of each epoch's last {RUNNING_LOSS_BATCHES} batch losses (chapter 7's running "
                f"loss), but epoch 1 had {len(batch_losses[0])} batches: train_loss holds the mean of all of an "
                "epoch's batch losses.")
    return "\n  train_loss holds the mean of each epoch's batch losses."


NO_VALIDATION_HINT = ("\n  Hint: fit was called without a val_loader (val_loader=None, as the capstone calls it): "
                      "there is nothing to validate on, so no epoch calls evaluate or keep_best, and the validation "
                      "lists stay empty.")


def missing_epochs_hint(got, values, ran):
    """The hint for a history list that is right but short of its last epochs, or ""."""
    if not isinstance(got, list) or not 0 < len(values) - len(got) < len(values) or \
            not np.allclose(np.asarray(got, dtype=float), values[:len(got)], rtol=1e-6):
        return ""
    return (f"\n  Hint: its first {len(got)} entries are right, but {ran} epochs ran: the last epoch is missing. "
            "Every epoch that ran is recorded, the one after which keep_best says stop too: record the epoch's "
            "numbers first, then ask keep_best.")


def fit_verdict(epochs, stop_after, validate, record, batch_losses, val_results, best):
    """The verdict on what fit did with the scripted stand-ins (`record`, see check_fit); `best`: the arrays
    keep_best put in best_state at epoch 2, which the model must hold at the end."""
    ran = min(epochs, stop_after) if (validate and stop_after) else epochs
    where = f"fit(epochs={epochs}{'' if validate else ', no val_loader'})" + \
        (f" with keep_best saying stop at epoch {stop_after}" if validate and stop_after else "")
    if record["train_calls"] != ran:
        return failed(f"{where}: train_epoch ran {record['train_calls']} times, expected {ran}"
                      + (" (stop when keep_best returns True)." if validate and stop_after and record["train_calls"] > ran else "."))
    if not record["first_right"]:
        return failed(f"{where}: train_epoch must get the trainer's model, the train_loader, the trainer's loss "
                      "function and its optimizer, in that order (then the progress bar).")
    if not all(record.get("bars", [])):
        return failed(f"{where}: train_epoch did not get the progress bar (its progress argument was None), so the "
                      "bar of each epoch never moves.\n  Hint: the skeleton makes a bar for each epoch; train_epoch "
                      "takes it after the optimizer and advances it batch by batch.")
    history = record["history"]
    if not isinstance(history, dict):
        return failed(f"{where} returned {history}; expected the history dict.")
    want = {"train_loss": [float(np.mean(b)) for b in batch_losses[:ran]],
            "val_loss": [r["loss"] for r in val_results[:ran]] if validate else [],
            "val_accuracy": [r["accuracy"] for r in val_results[:ran]] if validate else []}
    for key, values in want.items():
        got = history.get(key)
        if not isinstance(got, list) or len(got) != len(values) or not np.allclose(np.asarray(got, dtype=float), values, rtol=1e-6):
            return failed(f"{where}: history[{key!r}] is {got if isinstance(got, str) else fmt(got)}, expected {fmt(values)}."
                          + (missing_epochs_hint(got, values, ran) or
                             (train_loss_hint(got, batch_losses[:ran]) if key == "train_loss" else
                              NO_VALIDATION_HINT if not validate else "")))
    reports = record.get("reports")
    if reports is not None and list(reports) != list(range(1, ran + 1)):
        return failed(f"{where}: report(...) printed the lines of epochs {reports}, expected one line for each epoch "
                      f"that ran, {list(range(1, ran + 1))}.\n  Hint: step 3 prints each epoch's line with the "
                      "skeleton's report, once the epoch's numbers are known, so that a long run shows where it is.")
    if not validate:
        if record["evaluate_calls"] or record["keep_best_calls"]:
            return failed(f"{where}: evaluate or keep_best was called without a val_loader.")
    else:
        if record["evaluate_calls"] != ["val_loader"] * ran:
            return failed(f"{where}: evaluate(val_loader) should run once after each epoch's training.")
        want_keep = [(e, val_results[e - 1]["loss"]) for e in range(1, ran + 1)]
        if [tuple(c) for c in record["keep_best_calls"]] != want_keep:
            return failed(f"{where}: keep_best was called with {record['keep_best_calls']}, expected {want_keep} "
                          "(the epoch, counted from 1, and its validation loss).")
        restarts = record.get("restarts", [])
        if restarts:
            epoch, from_best = restarts[0]
            return failed(f"{where}: the training of epoch {epoch} did not start from the weights epoch {epoch - 1} "
                          "ended with" + (", but from best_state's" if from_best else "") + ": each epoch trains on "
                          "from where the last one stopped." + ("\n  Hint: the best weights go back into the model "
                                                                "once, after the loop." if from_best else ""))
        if ran >= 2 and not same_arrays(record["params"], best):
            return failed(f"{where}: after fit the model does not hold best_state: once the loop is over, "
                          "load the best state back into the model (chapter 8's load_state_dict).")
    if not validate:
        done = " without validation"
    else:
        done = ", validated each" + (", stopped when keep_best said so" if stop_after and stop_after < epochs else "") \
            + ", restored the best weights"
    return passed(f"✔ fit ran {ran} of {epochs} epochs{done}; the history is right")
