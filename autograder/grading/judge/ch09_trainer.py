"""Judge-side checks of chapter 9's Trainer: evaluate on the judge's weights and samples (the judge computes
the loss and accuracy), keep_best on the judge's weights per epoch (the judge knows which epoch is best and
what its weights were), fit with stand-ins scripted from secret numbers (the judge knows the history).

Verdicts and messages are `autograder/student/checks/ch09_trainer.py`'s. Which calls fit made, with which objects (the
progress bar given or not, the epochs `report` printed), whether an epoch's training started from other weights than
the last one left, whether a batch went through the Dropout in training mode (which only picks a hint), whether
gradients were left, and the Python types of evaluate's values are the kernel's word (each can only fail a cell);
every number is checked here.
"""
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, Returned
from autograder.grading.judge.replies import (Array, AsText, Bool, Const, Default, Either, Failed, Flag, Int, Json,
                                              ListOf, MapOf, Nested, Number, Optional, Or, Pair, Raised, Real, Tag,
                                              Text, Whole, is_object, read, wire)
from autograder.student.checks import ch09_trainer as rules
from autograder.student.verdict import failed
from autograder.grading.judge.registry import judges

POOL = 64           # values per snapshot: the small trainer's model has 31 (Linear(3, 4), Linear(4, 3))
SHAPES = ListOf(ListOf(Int(low=0), most=32), most=POOL)    # the model's parameter shapes, as the kernel fills them


# ── the replies ──

@dataclass(frozen=True)
class NumberType:
    """The Python type of one of evaluate's values (kernel_facts.number_report)."""

    type_name: str = wire(AsText(60, absent=None))
    float: bool = wire(Flag())


@dataclass(frozen=True)
class Evaluated:
    """What evaluate returned (its keys, its text, its numbers and their types), whether the model ran in training
    mode or kept gradients, and the model's parameters afterwards."""

    keys: list[str] | None = wire(Optional(ListOf(Text(None), most=100)))
    text: str = wire(AsText(300, absent=None))
    loss: float | None = wire(Number())
    accuracy: float | None = wire(Number())
    types: dict[str, NumberType] = wire(Default(MapOf(Nested(NumberType)), {}))
    gradients: bool = wire(Flag())
    training: bool = wire(Flag())
    params: list[np.ndarray] = wire(ListOf(Array(), length="params"))


@dataclass(frozen=True)
class KeepBestRecord:
    """What one keep_best call left, as `rules.keep_best_problem` reads it: its flag, best_epoch and best_loss (each
    also as text), best_state's arrays and type, and the checkpoint file's arrays."""

    flag: bool | None = wire(Or(Bool(), Const(None)))
    flag_text: str = wire(AsText(100, absent=None))
    best_epoch: int | str = wire(Or(Int(), AsText(100, absent=None)))
    best_loss: float | None = wire(Number())
    best_loss_text: str = wire(AsText(100, absent=None))
    state: list[np.ndarray] | None = wire(Optional(ListOf(Array())))
    state_type: str = wire(AsText(100, absent=None))
    file: list[np.ndarray] | None = wire(Optional(ListOf(Array())))
    file_optimizer: bool = wire(Flag())


@dataclass(frozen=True)
class KeepBestFailed:
    """keep_best (or the trainer) raised at `epoch` (0: building the trainer), after the records so far."""

    TAG: ClassVar[Tag] = Tag("error")
    error: Returned = wire(Raised())
    epoch: int = wire(Whole(0))
    records: list[KeepBestRecord] = wire(Default(ListOf(Nested(KeepBestRecord), most="epochs"), []))
    shapes: list[list[int]] | None = wire(Optional(SHAPES))


@dataclass(frozen=True)
class KeptBest:
    """One record per epoch, and the model's parameter shapes."""

    records: list[KeepBestRecord] = wire(Default(ListOf(Nested(KeepBestRecord), most="epochs"), []))
    shapes: list[list[int]] | None = wire(Optional(SHAPES))


@dataclass(frozen=True)
class Fitted:
    """The calls fit made of the stand-ins (train_epoch's count, whether its first got the trainer's objects,
    with a bar or not, and from which weights; evaluate's loaders; keep_best's arguments; report's epochs), the
    history it returned, and the model's parameters and shapes afterwards."""

    train_calls: int = wire(Int(low=0))
    first_right: bool = wire(Flag())
    history: dict[str, list[float] | str] | str = wire(
        Either(is_object, MapOf(Or(ListOf(Real(finite=False)), AsText(200))), AsText(100, absent=None)))
    evaluate_calls: list[str] = wire(ListOf(AsText(100)))
    keep_best_calls: list[tuple[Any, Any]] = wire(ListOf(Pair(Json(), Json())))
    params: list[np.ndarray] = wire(ListOf(Array()))
    shapes: list[list[int]] | None = wire(Optional(SHAPES))
    bars: list[bool] = wire(ListOf(Flag()))
    restarts: list[tuple[int, bool]] = wire(ListOf(Pair(Int(), Flag())))
    reports: list[int | str] = wire(Or(ListOf(Or(Int(), AsText(40))), Const([])))


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
    reply = read(reply, Failed | Evaluated, params=len(weights))
    if isinstance(reply, Failed):
        return failed(describe_error("Trainer", "evaluate", reply.error))
    changed = any(a.size != w.size or not np.array_equal(a.ravel(), w.ravel().astype(a.dtype))
                  for a, w in zip(reply.params, weights))
    got = {"keys": reply.keys, "text": reply.text, "loss": reply.loss, "accuracy": reply.accuracy,
           "types": {k: t.type_name for k, t in reply.types.items()},
           "floats": [k for k, t in reply.types.items() if t.float]}
    return rules.evaluate_verdict(samples, batch_size, got, changed, reply.training,
                                  *rules.evaluate_expected(x, y, weights, batch_size), gradients=reply.gradients)


def telling(x, y, weights, batch_size):
    """Whether the overall accuracy of these samples differs from the last batch's and from the mean of the batches'
    accuracies: a draw where they agree (about one in ten) would hand those mistakes the accuracy's points."""
    w1, b1, w2, b2 = (np.asarray(w, dtype=np.float64) for w in weights)
    hits = (((np.asarray(x, dtype=np.float64) @ w1 + b1) @ w2 + b2).argmax(axis=1) == y).astype(float)
    by_batch = [hits[s:s + batch_size].mean() for s in range(0, len(y), batch_size)]
    return not np.isclose(hits.mean(), by_batch[-1]) and not np.isclose(hits.mean(), np.mean(by_batch))


def snapshot(pool, shapes):
    """The judge's values, cut to the model's parameter shapes as the kernel fills them."""
    if shapes is None:
        raise ProbeFailure("the reply's 'shapes' is missing")
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
    reply = read(reply, KeepBestFailed | KeptBest, epochs=epochs)
    records = [vars(r) for r in reply.records]      # as `rules.keep_best_problem` reads them
    for epoch in range(1, len(records) + 1):
        problem = rules.keep_best_problem(kind, losses, patience, records[:epoch],
                                          {e: snapshot(pools[e - 1], reply.shapes) for e in range(1, epoch + 1)})
        if problem:
            return problem
    if isinstance(reply, KeepBestFailed):
        where = rules.at_epoch(kind, reply.epoch, losses[reply.epoch - 1]) if 1 <= reply.epoch <= epochs else ""
        return failed(describe_error("Trainer", "keep_best", reply.error) + where)
    if len(records) != epochs:
        raise ProbeFailure(f"the reply holds {len(records)} keep_best records, expected {epochs}")
    return None


@judges("fit")
def fit(rng, epochs=5, stop_after=3, validate=True, seed=0):
    """fit with stand-ins scripted from secret batch losses, validation results and best weights."""
    batch_losses, val_results = rules.fit_scenario(rng, epochs)
    best = rng.uniform(5, 9, POOL).astype(np.float32)
    reply = yield {"kind": "trainer_fit", "epochs": epochs, "stop_after": stop_after, "validate": validate,
                   "seed": int(rng.integers(0, 2 ** 31 - 2)), "batch_losses": [[float(v) for v in b] for b in batch_losses],
                   "val_results": val_results, "best": best}
    reply = read(reply, Failed | Fitted)
    if isinstance(reply, Failed):
        return failed(describe_error("Trainer", "fit", reply.error))
    ran = {key: getattr(reply, key) for key in ("train_calls", "first_right", "history", "evaluate_calls",
                                                "keep_best_calls", "params", "bars", "restarts", "reports")}
    return rules.fit_verdict(epochs, stop_after, validate, ran, batch_losses, val_results, snapshot(best, reply.shapes))
