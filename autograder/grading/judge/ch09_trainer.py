"""Judge-side checks of chapter 9's Trainer: evaluate on the judge's weights and samples (the judge computes
the loss and accuracy), keep_best on the judge's weights per epoch (the judge knows which epoch is best and
what its weights were), fit with stand-ins scripted from secret numbers (the judge knows the history).

Verdicts and messages are `autograder/student/checks/ch09_trainer.py`'s. Which calls fit made, with which objects (the
progress bar given or not, the epochs `report` printed), whether an epoch's training started from other weights than
the last one left, whether a batch went through the Dropout in training mode (which only picks a hint), whether
gradients were left, and the Python types of evaluate's values are the kernel's word (each can only fail a cell);
every number is checked here.
"""
import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, decode_array, returned
from autograder.student.checks import ch09_trainer as rules
from autograder.student.verdict import failed
from autograder.grading.judge.registry import judges

POOL = 64           # values per snapshot: the small trainer's model has 31 (Linear(3, 4), Linear(4, 3))


@judges("evaluate")
def evaluate(rng, samples=10, batch_size=4, seed=0):
    """Trainer.evaluate on secret samples and weights, against the per-sample loss and accuracy computed here."""
    for _ in range(100):
        x = rng.standard_normal((samples, 3)).astype(np.float32)
        y = rng.integers(0, 3, samples)
        weights = [rng.uniform(-1, 1, shape).astype(np.float32) for shape in [(3, 5), (1, 5), (5, 3), (1, 3)]]
        if telling(x, y, weights, batch_size):
            break
    reply = yield {"kind": "trainer_evaluate", "x": x, "y": y, "weights": weights, "batch_size": batch_size,
                   "seed": int(rng.integers(0, 2 ** 31 - 2))}
    if "error" in reply:
        return failed(describe_error("Trainer", "evaluate", returned(reply["error"])))
    params = reply.get("params")
    if not isinstance(params, list) or len(params) != len(weights):
        raise ProbeFailure("the reply does not hold the model's 4 parameters")
    changed = any(a.size != w.size or not np.array_equal(a.ravel(), w.ravel().astype(a.dtype))
                  for a, w in zip(map(decode_array, params), weights))
    keys = reply.get("keys")
    types = reply.get("types") if isinstance(reply.get("types"), dict) else {}
    types = {str(k): t for k, t in types.items() if isinstance(t, dict)}
    got = {"keys": [str(k) for k in keys] if isinstance(keys, list) else None, "text": str(reply.get("text"))[:300],
           "loss": real(reply.get("loss")), "accuracy": real(reply.get("accuracy")),
           "types": {k: str(t.get("type_name"))[:60] for k, t in types.items()},
           "floats": [k for k, t in types.items() if t.get("float") is True]}
    return rules.evaluate_verdict(samples, batch_size, got, changed, reply.get("training") is True,
                                  *rules.evaluate_expected(x, y, weights, batch_size),
                                  gradients=reply.get("gradients") is True)


def telling(x, y, weights, batch_size):
    """Whether the overall accuracy of these samples differs from the last batch's and from the mean of the batches'
    accuracies: a draw where they agree (about one in ten) would hand those mistakes the accuracy's points."""
    w1, b1, w2, b2 = (np.asarray(w, dtype=np.float64) for w in weights)
    hits = (((np.asarray(x, dtype=np.float64) @ w1 + b1) @ w2 + b2).argmax(axis=1) == y).astype(float)
    by_batch = [hits[s:s + batch_size].mean() for s in range(0, len(y), batch_size)]
    return not np.isclose(hits.mean(), by_batch[-1]) and not np.isclose(hits.mean(), np.mean(by_batch))


def real(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def snapshot(pool, shapes):
    """The judge's values, cut to the model's parameter shapes as the kernel fills them."""
    if not isinstance(shapes, list) or not all(isinstance(s, list) and all(isinstance(n, int) and n >= 0 for n in s)
                                               for s in shapes):
        raise ProbeFailure("the reply's parameter shapes are malformed")
    sizes = [int(np.prod(s)) for s in shapes]
    if sum(sizes) > pool.size:
        raise ProbeFailure(f"the model has {sum(sizes)} values, more than the {pool.size} the judge sent")
    starts = np.cumsum([0] + sizes)
    return [pool[a:a + n].reshape(s) for a, n, s in zip(starts, sizes, shapes)]


@judges("keep_best")
def keep_best(rng, kind, losses=None, patience=2, seed=0):
    """keep_best over the cell's validation losses, the model holding secret values in each epoch; for `checkpoint`,
    then over rules.MEMORY_LOSSES without a checkpoint_path, as the kernel's check does."""
    losses, patience = rules.keep_best_scenario(kind, losses, patience)
    problem = yield from keep_best_run(rng, kind, losses, patience)
    if not problem and kind == "checkpoint":
        problem = yield from keep_best_run(rng, "memory", rules.MEMORY_LOSSES, None)
    return problem or rules.keep_best_passed(kind, losses, patience)


def keep_best_run(rng, kind, losses, patience):
    """One run of keep_best in the kernel (`memory`: without a checkpoint_path): the first problem, or None."""
    want_flags, _ = rules.expected_keep_best(losses, patience)
    epochs = next((i + 1 for i, f in enumerate(want_flags) if f), len(losses)) if kind == "patience" else len(losses)
    pools = [rng.uniform(-1, 1, POOL).astype(np.float32) for _ in range(epochs)]
    reply = yield {"kind": "trainer_keep_best", "variant": kind, "losses": list(losses[:epochs]), "patience": patience,
                   "seed": int(rng.integers(0, 2 ** 31 - 2)), "pools": pools}
    records = reply.get("records", [])
    if not isinstance(records, list) or len(records) > epochs:
        raise ProbeFailure("the reply's keep_best records are malformed")
    shapes = reply.get("shapes")
    for epoch in range(1, len(records) + 1):
        problem = rules.keep_best_problem(kind, losses, patience, [record(r) for r in records[:epoch]],
                                          {e: snapshot(pools[e - 1], shapes) for e in range(1, epoch + 1)})
        if problem:
            return problem
    if "error" in reply:
        epoch = reply.get("epoch")
        where = rules.at_epoch(kind, epoch, losses[epoch - 1]) if isinstance(epoch, int) and 1 <= epoch <= epochs else ""
        return failed(describe_error("Trainer", "keep_best", returned(reply["error"])) + where)
    if len(records) != epochs:
        raise ProbeFailure(f"the reply holds {len(records)} keep_best records, expected {epochs}")
    return None


def record(data):
    """One untrusted keep_best record, as `fitting.keep_best_problem` reads it."""
    if not isinstance(data, dict):
        raise ProbeFailure("a keep_best record is not a JSON object")
    arrays = {key: [decode_array(a) for a in data[key]] if isinstance(data.get(key), list) else None
              for key in ("state", "file")}
    best_epoch = data.get("best_epoch")
    return {"flag": data.get("flag") if isinstance(data.get("flag"), bool) else None,
            "flag_text": str(data.get("flag_text"))[:100],
            "best_epoch": best_epoch if isinstance(best_epoch, int) and not isinstance(best_epoch, bool) else str(best_epoch)[:100],
            "best_loss": real(data.get("best_loss")), "best_loss_text": str(data.get("best_loss_text"))[:100],
            "state": arrays["state"], "state_type": str(data.get("state_type"))[:100], "file": arrays["file"],
            "file_optimizer": data.get("file_optimizer") is True}


@judges("fit")
def fit(rng, epochs=5, stop_after=3, validate=True, seed=0):
    """fit with stand-ins scripted from secret batch losses, validation results and best weights."""
    batch_losses, val_results = rules.fit_scenario(rng, epochs)
    best = rng.uniform(5, 9, POOL).astype(np.float32)
    reply = yield {"kind": "trainer_fit", "epochs": epochs, "stop_after": stop_after, "validate": validate,
                   "seed": int(rng.integers(0, 2 ** 31 - 2)), "batch_losses": [[float(v) for v in b] for b in batch_losses],
                   "val_results": val_results, "best": best}
    if "error" in reply:
        return failed(describe_error("Trainer", "fit", returned(reply["error"])))
    params, history = reply.get("params"), reply.get("history")
    calls, evaluated = reply.get("keep_best_calls"), reply.get("evaluate_calls")
    if not isinstance(params, list) or not isinstance(calls, list) or not isinstance(evaluated, list) \
            or not isinstance(reply.get("train_calls"), int) or not all(isinstance(c, list) and len(c) == 2 for c in calls):
        raise ProbeFailure("the reply does not describe fit's calls")
    if isinstance(history, dict):
        history = {key: [float(v) for v in value] if isinstance(value, list) and all(real(v) is not None for v in value)
                   else str(value)[:200] for key, value in history.items()}
    else:
        history = str(history)[:100]
    bars, restarts = reply.get("bars"), reply.get("restarts")
    if not isinstance(bars, list) or not isinstance(restarts, list) \
            or not all(isinstance(r, list) and len(r) == 2 and isinstance(r[0], int) for r in restarts):
        raise ProbeFailure("the reply does not describe how fit called train_epoch")
    ran = {"train_calls": reply["train_calls"], "first_right": reply.get("first_right") is True, "history": history,
           "evaluate_calls": [str(c)[:100] for c in evaluated], "keep_best_calls": [tuple(c) for c in calls],
           "params": [decode_array(p) for p in params], "bars": [b is True for b in bars],
           "restarts": [(r[0], r[1] is True) for r in restarts],
           "reports": [r if isinstance(r, int) and not isinstance(r, bool) else str(r)[:40]
                       for r in reply.get("reports")] if isinstance(reply.get("reports"), list) else []}
    return rules.fit_verdict(epochs, stop_after, validate, ran, batch_losses, val_results, snapshot(best, reply.get("shapes")))
