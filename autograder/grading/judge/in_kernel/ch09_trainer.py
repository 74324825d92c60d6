"""Kernel side of chapter 9's probes: the student's Trainer on the judge's weights, data and scripted stand-ins.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`packed`, `quietly`, `error_report`, `shipped`) and, like it, imports nothing from the course and decides
nothing: it reports what evaluate returned, what keep_best left behind (read back from its own temporary folder,
in the kernel's sandbox) and what fit called and returned. The trainer, its stand-ins and the quiet runs are the
course check's, `checks/ch09_trainer_facts.py` (shipped as text).
"""
import os
import tempfile

import numpy as np

HEADLESS = "BABYGRAD_HEADLESS"      # autograder/student/progress_bars.py: no progress bars while "1"


def in_headless(fn, *args):
    with shipped("ch09_trainer_facts")["headless"](HEADLESS):
        return quietly(fn, *args)


def fill(params, pool):
    """Each parameter's values, in order, from the judge's flat pool; their shapes, for the judge."""
    offset = 0
    for p in params:
        size = int(np.prod(p.data.shape))
        p.data[...] = pool[offset:offset + size].reshape(p.data.shape)
        offset += size
    return [list(p.data.shape) for p in params]


def number(value):
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return repr(value)[:100]


@handles("trainer_evaluate")
def trainer_evaluate(request, namespace):
    """Trainer.evaluate of Linear → Dropout → Linear holding the judge's weights, on the judge's samples."""
    seed = request["seed"]
    try:
        model = namespace["Sequential"](namespace["Linear"](3, 5, seed=seed), namespace["Dropout"](0.5, seed=seed),
                                        namespace["Linear"](5, 3, seed=seed + 1))
        params = [p for i in (0, 2) for p in model.modules[i].parameters()]
        for p, w in zip(params, request["weights"]):
            p.data = np.asarray(w, dtype=p.data.dtype).reshape(p.data.shape)
        loader = namespace["DataLoader"](namespace["ArrayDataset"](request["x"].copy(), request["y"].copy()),
                                         batch_size=request["batch_size"])
        trainer = namespace["Trainer"](model, namespace["SoftmaxLoss"](), namespace["SGD"](model.parameters(), lr=0.1))
        modes = shipped("kernel_facts")["dropout_modes"](model.modules[1])   # the evidence of dropping units
        model.train()
        got = in_headless(trainer.evaluate, loader)
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    keys = sorted(map(str, got)) if isinstance(got, dict) else None
    values, types = {}, {}
    if keys == ["accuracy", "loss"]:
        for key in keys:
            try:
                values[key] = float(got[key])
            except (TypeError, ValueError):
                values[key] = None
            types[key] = shipped("kernel_facts")["number_report"](got[key])
    return {"keys": keys, "text": repr(got)[:300], "loss": values.get("loss"), "accuracy": values.get("accuracy"),
            "types": types, "gradients": shipped("kernel_facts")["has_gradients"](model.parameters()),
            "training": any(modes), "params": [packed(np.asarray(p.data)) for p in params]}


@handles("trainer_keep_best")
def trainer_keep_best(request, namespace):
    """keep_best(epoch, loss) for the judge's losses, the model holding the judge's values of that epoch; after
    each call, what it left: flag, best_epoch, best_loss, best_state's arrays, the checkpoint file's arrays."""
    records, shapes = [], None
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "best.ckpt") if request["variant"] == "checkpoint" else None
        try:
            trainer, model = shipped("ch09_trainer_facts")["small_trainer"](namespace, request["seed"], checkpoint_path=path,
                                                                            patience=request["patience"])
        except Exception as error:  # noqa: BLE001
            return {"error": error_report(error), "epoch": 0}
        for epoch, (loss, pool) in enumerate(zip(request["losses"], request["pools"]), 1):
            try:
                shapes = fill(model.parameters(), pool)
                flag = in_headless(trainer.keep_best, epoch, loss)
                records.append(keep_best_report(trainer, flag, path))
            except Exception as error:  # noqa: BLE001
                return {"error": error_report(error), "epoch": epoch, "records": records, "shapes": shapes}
    return {"records": records, "shapes": shapes}


def state_value(value):
    """An entry of best_state as data: its array, or an empty one when it is not numbers (a Tensor, say), which
    matches no snapshot, as in the kernel's check."""
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001
        array = None
    return packed(array if array is not None and array.dtype.kind in "biuf" else np.zeros(0, dtype=np.float32))


def keep_best_report(trainer, flag, path):
    state = trainer.best_state
    report = {"flag": bool(flag) if isinstance(flag, (bool, np.bool_)) else None, "flag_text": str(flag)[:100],
              "best_epoch": number(trainer.best_epoch) if trainer.best_epoch is not None else None,
              "best_loss": number(trainer.best_loss), "best_loss_text": str(trainer.best_loss)[:100],
              "state": [state_value(v) for v in state.values()] if isinstance(state, dict) else None,
              "state_type": type(state).__name__, "file": None}
    if path is not None and os.path.exists(path):
        with np.load(path, allow_pickle=False) as archive:
            report["file"] = [packed(archive[name]) for name in archive.files if name.startswith("model.")]
            report["file_optimizer"] = any(name.startswith("optimizer.") for name in archive.files)
    return report


@handles("trainer_fit")
def trainer_fit(request, namespace):
    """fit with scripted stand-ins: train_epoch returning the judge's batch losses, evaluate its validation
    results, keep_best putting the judge's values in best_state at epoch 2 and saying stop at `stop_after`."""
    facts = shipped("ch09_trainer_facts")
    try:
        trainer, model = facts["small_trainer"](namespace, request["seed"])
        best = [np.array(p.data) for p in model.parameters()]
        shapes = fill([type("Slot", (), {"data": b})() for b in best], request["best"])
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    script = {key: request[key] for key in ("epochs", "stop_after", "validate", "batch_losses", "val_results")}
    try:
        record = facts["fit_run"](namespace, trainer, model, script, best, HEADLESS, quietly)
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    return dict(record, keep_best_calls=[[number(e), number(v)] for e, v in record["keep_best_calls"]],
                params=[packed(a) for a in record["params"]], shapes=shapes,
                reports=[number(e) for e in record["reports"][:100]])
