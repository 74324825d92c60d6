"""Judge-side checks of chapter 8: state names, snapshots, loading and refusing, optimizer state, checkpoint files,
resumed training. The kernel (`in_kernel/ch08_persistence.py`) builds the chapter's stand-in models, gives every
holder the judge's secret values (and the optimizers secret state), calls the one student method under test with
the course's versions of the others swapped in, and reports names, arrays, exception types and messages.

Every array the student's code returns or leaves behind is compared with the judge's secret values; the
verdicts and messages are `autograder/student/checks/ch08_persistence.py`'s. Taken on the kernel's word (they can only
fail a cell): that a holder is the model's own object, that the Parameters are the same objects after loading,
whether an exception is a KeyError / ValueError, the Python types of a restored optimizer's numbers, and that the
resumed run really went through the checkpoint.
"""
import io
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, Returned
from autograder.grading.judge.replies import (MAX_LIST, Array, AsText, Const, Failed, Flag, ListOf, MapOf, Nested,
                                              OneOf, Optional, Or, Raised, Tag, Whole, read, wire)
from autograder.student.checks import ch08_persistence as rules
from autograder.student.checks.ch08_persistence_facts import net_shapes
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges

OWN_RTOL, OWN_ATOL = 1e-5, 1e-5     # float32 training (the kernel) against float64 (the judge) over 7 steps: ~3e-7 apart
FLOAT32_ROUNDING = np.finfo(np.float32).eps / 2
NOISY_RUNS = 8
# Some elements of the trained net are not pinned down by float32 arithmetic. BatchNorm removes the first Linear's
# bias from the loss, so its gradient is rounding noise, which Adam divides by its own size: the bias (and
# running_mean, a mean of x @ W + b) takes steps of up to lr in a direction no float64 run predicts. Now and then a
# weight's gradient cancels to within rounding at some step too, or a ReLU input sits within rounding of 0. The
# judge finds them by training NOISY_RUNS more times with every intermediate array perturbed by float32's rounding,
# and compares only the elements that all stay within a tenth of the tolerance (over 40,000 recorded kernel runs,
# a correct kernel's worst compared element was 0.14 of the tolerance: docs/grading-correctness.md).


def secret(rng, shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def net_sizes(rng):
    return [int(rng.integers(2, 6)), int(rng.integers(3, 7)), int(rng.integers(2, 5))]


def net_values(rng, sizes):
    """Secret values for every holder of small_net (running_var positive), by name in the course's order."""
    return {name: secret(rng, shape, *((0.5, 2.0) if name.endswith("running_var") else ()))
            for name, shape in net_shapes(sizes).items()}


# ── the replies ──

def present(value: Any) -> bool:
    return value is not None


@dataclass(frozen=True)
class Entry:
    """One entry of a state dict: its key, its value's type, and the value when it is a NumPy array of numbers."""

    key: str = wire(AsText(200, absent=None))
    type_name: str = wire(AsText(100, absent=None))
    ndarray: bool = wire(Flag())
    value: np.ndarray | None = wire(Optional(Array()))


@dataclass(frozen=True)
class StateReport:
    """A state dict as the kernel describes it: its type, and its entries when it is a dict."""

    type_name: str = wire(AsText(100, absent=None))
    entries: list[Entry] | None = wire(Optional(ListOf(Nested(Entry))))


@dataclass(frozen=True)
class Refusal:
    """An exception the student's code raised (a worker's error report), and whether it is a KeyError, a ValueError
    (the kernel's word)."""

    kind: str = wire(OneOf(frozenset({"error"})))
    type_name: str = wire(AsText(2000))
    error_type: str = wire(AsText(2000))
    message: str = wire(AsText(2000))
    line: str = wire(AsText(2000))
    helper: str = wire(AsText(2000))
    key_error: bool = wire(Flag())
    value_error: bool = wire(Flag())

    @property
    def outcome(self) -> Returned:
        return Returned("error", type_name=self.type_name, error_type=self.error_type, message=self.message,
                        line=self.line, helper=self.helper)


@dataclass(frozen=True)
class NamedPair:
    """One (name, holder) pair named_state() gave: the holder's type, its value, and which of the judge's holders
    it is (-1: none)."""

    name: str = wire(AsText(200, absent=None))
    type_name: str = wire(AsText(100, absent=None))
    own: int = wire(Whole(-1))
    value: Returned = wire(Raised())


@dataclass(frozen=True)
class NamedPairs:
    TAG: ClassVar[Tag] = Tag("pairs", when=present)
    pairs: list[NamedPair] = wire(ListOf(Nested(NamedPair)))


@dataclass(frozen=True)
class NotPairs:
    """named_state() gave something else than a list of pairs: its type and text."""

    type_name: str = wire(AsText(100, absent=None))
    text: str = wire(AsText(120, absent=None))


@dataclass(frozen=True)
class StateDict:
    """state_dict() of the net holding the judge's values, and the same dict after every holder changed in place."""

    state: StateReport = wire(Nested(StateReport))
    after: StateReport = wire(Nested(StateReport))


@dataclass(frozen=True)
class Loaded:
    """The holders after load_state_dict, whether they are the same objects, and a holder sharing the dict's memory."""

    holders: list[np.ndarray] = wire(ListOf(Array(), length="holders"))
    same: bool = wire(Flag())
    shared: str | None = wire(Optional(AsText(100)))


@dataclass(frozen=True)
class LoadResult:
    """One load of an ill-fitting state dict (or one file load_checkpoint refused): what it raised, the holders after."""

    raised: Refusal | None = wire(Optional(Nested(Refusal)))
    holders: list[np.ndarray] = wire(ListOf(Array(), length="holders"))


@dataclass(frozen=True)
class LoadResults:
    cases: list[LoadResult] = wire(ListOf(Nested(LoadResult), length="cases"))


@dataclass(frozen=True)
class StateFailed:
    TAG: ClassVar[Tag] = Tag("state_error")
    state_error: Returned = wire(Raised())


@dataclass(frozen=True)
class OptimizerState:
    """The optimizer's state_dict() of the judge's state, and the ids of its parameters."""

    state: StateReport = wire(Nested(StateReport))
    ids: list[str] = wire(ListOf(AsText(40)))


@dataclass(frozen=True)
class StepsFailed:
    TAG: ClassVar[Tag] = Tag("steps_error")
    steps_error: Returned = wire(Raised())


@dataclass(frozen=True)
class Stepped:
    """The same dict after two more steps."""

    after: StateReport = wire(Nested(StateReport))


@dataclass(frozen=True)
class LoadFailed:
    TAG: ClassVar[Tag] = Tag("load_error")
    load_error: Returned = wire(Raised())


@dataclass(frozen=True)
class NumberReport:
    """A restored optimizer's number as the kernel describes it (`kernel_facts.number_report`)."""

    type_name: str = wire(AsText(60, absent=None))
    int: bool = wire(Flag())
    float: bool = wire(Flag())
    text: str = wire(AsText(60, absent=None))


@dataclass(frozen=True)
class Restored:
    """A fresh optimizer's state after its load_state_dict of that dict (the course's walk), and its numbers."""

    loaded: dict[str, np.ndarray] = wire(MapOf(Array(), most=MAX_LIST))
    numbers: dict[str, NumberReport] = wire(MapOf(Nested(NumberReport), most=MAX_LIST))


@dataclass(frozen=True)
class FreshStepsFailed:
    TAG: ClassVar[Tag] = Tag("fresh_steps_error")
    fresh_steps_error: Returned = wire(Raised())


@dataclass(frozen=True)
class Kept:
    """The loaded dict after the restored optimizer's steps."""

    after_fresh: StateReport = wire(Nested(StateReport))


@dataclass(frozen=True)
class SaveFailed:
    """save_checkpoint raised."""

    TAG: ClassVar[Tag] = Tag("save", when=present)
    save: Refusal = wire(Nested(Refusal))


@dataclass(frozen=True)
class Written:
    """What save_checkpoint left: whether the file exists, the folder's files, and the archive's entry names (None:
    NumPy could not read it, and `unreadable` says why)."""

    exists: bool = wire(Flag())
    written: list[str] = wire(Or(ListOf(AsText(200)), Const([])))
    files: list[str] | None = wire(Or(ListOf(AsText(200)), Const(None)))
    unreadable: str = wire(AsText(300, absent=None))

    @property
    def names(self) -> list[str] | str:
        return self.files if self.files is not None else self.unreadable


@dataclass(frozen=True)
class Unread(Written):
    """The file is not there or NumPy could not read it: nothing was loaded."""

    TAG: ClassVar[Tag] = Tag("files", when=lambda _: False, or_absent=True)


@dataclass(frozen=True)
class CheckpointLoadFailed(Written):
    """load_checkpoint raised."""

    TAG: ClassVar[Tag] = Tag("load", when=present)
    load: Refusal = wire(Nested(Refusal))


@dataclass(frozen=True)
class ModelLoaded(Written):
    """load_checkpoint of the model-only checkpoint into a new model: its holders after."""

    model: list[np.ndarray] = wire(ListOf(Array(), length="holders"))


@dataclass(frozen=True)
class NoOptimizerFailed(ModelLoaded):
    """load_checkpoint without an optimizer raised."""

    TAG: ClassVar[Tag] = Tag("no_optimizer", when=present)
    loaded: dict[str, np.ndarray] = wire(MapOf(Array(), most=MAX_LIST))
    no_optimizer: Refusal = wire(Nested(Refusal))


@dataclass(frozen=True)
class RoundTripped(ModelLoaded):
    """load_checkpoint into new objects (the model's holders, the optimizer's state), and the model-only checkpoint."""

    loaded: dict[str, np.ndarray] = wire(MapOf(Array(), most=MAX_LIST))
    alone: SaveFailed | Unread | CheckpointLoadFailed | ModelLoaded = wire(
        Nested(SaveFailed | Unread | CheckpointLoadFailed | ModelLoaded))


@dataclass(frozen=True)
class Refusals:
    """load_checkpoint on each of the judge's files: what it raised, and the holders after."""

    results: list[LoadResult] = wire(ListOf(Nested(LoadResult), length="files"))


@dataclass(frozen=True)
class Resumed:
    """Both runs' state dicts (model and optimizer), eval-mode outputs, and the uninterrupted run's holders."""

    original: StateReport = wire(Nested(StateReport))
    original_optimizer: StateReport = wire(Nested(StateReport))
    resumed: StateReport = wire(Nested(StateReport))
    resumed_optimizer: StateReport = wire(Nested(StateReport))
    original_out: np.ndarray = wire(Array())
    resumed_out: np.ndarray = wire(Array())
    holders: list[np.ndarray] = wire(ListOf(Array(), length="holders"))


def entries(report):
    """A StateReport as `rules.state_entries` gives it: a type name, or [(key, type name, array or None)]."""
    if report.entries is None:
        return report.type_name
    return [(e.key, e.type_name, e.value if e.ndarray else None) for e in report.entries]


def raised(refusal):
    """(the Returned, is KeyError, is ValueError) of a worker's `raised`; None: it returned."""
    return None if refusal is None else (refusal.outcome, refusal.key_error, refusal.value_error)


def student_error(label, method, error):
    return failed(describe_error(label, method, error))


# ── 8.1 ──

@judges("named_state")
def named_state(rng, variant="flat", seed=0):
    """named_state() of the tree of stand-in modules, its holders of secret shapes and values."""
    want = rules.TREE_NAMES[variant]
    values = [secret(rng, tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 3))))) for _ in want]
    reply = read((yield {"kind": "persist_named_state", "variant": variant, "values": values}),
                 Failed | NamedPairs | NotPairs)
    if isinstance(reply, Failed):
        return student_error("Module", "named_state", reply.error)
    if isinstance(reply, NotPairs):
        return rules.named_state_verdict({"type_name": reply.type_name, "text": reply.text}, want)
    got = []
    for i, pair in enumerate(reply.pairs):
        value = pair.value
        own = (pair.own == i and i < len(values) and value.kind in ("array", "tensor")
               and value.value.shape == values[i].shape and np.array_equal(value.value, values[i]))
        got.append((pair.name, pair.type_name, own))
    return rules.named_state_verdict(got, want)


@judges("state_dict")
def state_dict(rng, seed=0):
    """state_dict() of small_net holding secret values, and the same dict after every holder changed in place."""
    sizes = net_sizes(rng)
    values = net_values(rng, sizes)
    reply = read((yield {"kind": "persist_state_dict", "sizes": sizes, "values": list(values.values())}),
                 Failed | StateDict)
    if isinstance(reply, Failed):
        return student_error("Module", "state_dict", reply.error)
    got, after = entries(reply.state), entries(reply.after)
    before = {} if isinstance(got, str) else {k: v for k, _, v in got if v is not None}
    after = {} if isinstance(after, str) else {k: v for k, _, v in after if v is not None}
    return rules.state_dict_verdict(got, values, before, after)


# ── 8.2 ──

@judges("load_state_dict")
def load_state_dict(rng, kind, seed=0):
    return (yield from (load_values(rng) if kind == "values" else load_errors(rng)))


def load_values(rng):
    """load_state_dict(a secret state) into small_net holding other secret values."""
    sizes = net_sizes(rng)
    before, state = net_values(rng, sizes), net_values(rng, sizes)
    reply = read((yield {"kind": "persist_load_values", "sizes": sizes, "values": list(before.values()), "state": state}),
                 Failed | Loaded, holders=len(state))
    if isinstance(reply, Failed):
        return student_error("Module", "load_state_dict", reply.error)
    return rules.load_values_verdict(reply.holders, state, reply.same, reply.shared)


def load_errors(rng):
    """Secret ill-fitting state dicts (which name is missing, which is extra, which shape is wrong) must be refused
    with the right exception naming them, leaving the model as it was; strict=False loads what is there."""
    sizes = net_sizes(rng)
    shapes = net_shapes(sizes)
    before, good = net_values(rng, sizes), net_values(rng, sizes)
    # the last weight and bias, as in the kernel's check: a load that checks while it copies is half done by then
    resized, missing = "modules.3.weight", "modules.3.bias"
    rows, cols = shapes[resized]
    scenario = (missing, f"modules.{int(rng.integers(4, 10))}.{rng.choice(['weight', 'bias', 'scale'])}",
                resized, (rows, cols + int(rng.integers(1, 4))), f"extra_{int(rng.integers(10, 1000))}")
    states = rules.load_error_states(good, *scenario)
    cases = rules.load_error_cases(shapes, *scenario[:4])
    requests = [{"state": states[which], "strict": strict} for _, strict, which, _, _ in cases]
    reply = read((yield {"kind": "persist_load_errors", "sizes": sizes, "values": list(before.values()),
                         "cases": requests + [{"state": states["partial"], "strict": False}]}),
                 Failed | LoadResults, cases=len(cases) + 1, holders=len(shapes))
    if isinstance(reply, Failed):
        return student_error("Module", "__init__", reply.error)
    results = reply.cases
    for (label, _, which, kind, words), result in zip(cases, results):
        label = f"load_state_dict with {label}"
        error = raised(result.raised)
        holders = list(zip(shapes, result.holders))
        hint = rules.refusal_hint(which, shapes, scenario[0])
        problem = (rules.refusal_problem(label, kind, words, None, False, "", hint) if error is None else
                   rules.refusal_problem(label, kind, words, error[0].error_type,
                                         error[1] if kind == "KeyError" else error[2], error[0].message, hint)) \
            or rules.changed_problem(label, holders, before)
        if problem:
            return problem
    error = raised(results[-1].raised)
    if error:
        return failed(describe_error("Module", "load_state_dict", error[0]) + rules.STRICT_FALSE_HINT)
    holders = list(zip(shapes, results[-1].holders))
    return rules.partial_load_problem(holders, before, good, scenario[0]) or passed(rules.ERRORS_PASSED)


# ── 8.3 ──

# secret settings, each far from what the optimizer is made with (rules.OPTIMIZER_SPECS and the defaults)
SECRET_SETTINGS = {"lr": lambda rng, lr: lr * rng.uniform(0.1, 0.5), "beta1": lambda rng, _: rng.uniform(0.6, 0.85),
                   "beta2": lambda rng, _: rng.uniform(0.99, 0.998), "eps": lambda rng, _: 10 ** rng.uniform(-6, -4),
                   "momentum": lambda rng, _: rng.uniform(0.5, 0.85),
                   "weight_decay": lambda rng, _: rng.uniform(0.02, 0.05)}


def optimizer_secrets(rng, key, sizes):
    """The optimizer's class and settings, a secret state as the course names it (numbers as 0-d arrays), and the
    order in which the kernel puts the per-parameter arrays in: the positions, in a secret order."""
    cls, settings, label = rules.OPTIMIZER_SPECS[key]
    numbers = dict(rules.OPTIMIZER_DEFAULTS[cls], **settings)
    # every setting as the run has changed it since the optimizer was made (a schedule): the fresh optimizer, made
    # with the constructor's settings, holds others, so a load that skips a setting shows
    numbers = {name: float(f"{SECRET_SETTINGS[name](rng, value):.6g}") for name, value in numbers.items()}
    numbers.update({name: 0.0 for name in rules.OPTIMIZER_ZEROED.get(key, ())})     # turned off by the schedule
    state = {name: np.array(float(value)) for name, value in numbers.items()}
    if cls == "Adam":
        state["t"] = np.array(int(rng.integers(1, 40)))
    params = [shape for name, shape in net_shapes(sizes).items() if rules.is_parameter(name)]
    # the order each parameter first got its state in (some got their first gradient later): never params' order
    order = [int(i) for i in rng.permutation(len(params))]
    while order == sorted(order):
        order = [int(i) for i in rng.permutation(len(params))]
    for attribute in rules.OPTIMIZER_ARRAYS[cls]:
        low, high = (0.001, 0.1) if attribute == "v" else (-1.0, 1.0)
        arrays = {i: secret(rng, shape, low, high) for i, shape in enumerate(params)}
        state.update({f"{attribute}.{i}": arrays[i] for i in order})
    return {"class": cls, "settings": settings}, state, label, params, order


@judges("optimizer_state")
def optimizer_state(rng, *optimizers, seed=0):
    """For each optimizer: its state_dict() of a secret state, which more steps must not change, loaded by its
    load_state_dict into a fresh optimizer, which must then hold the secret state."""
    optimizers = optimizers or ("adam",)
    for key in optimizers:
        sizes = net_sizes(rng)
        spec, state, label, params, order = optimizer_secrets(rng, key, sizes)
        grads = [[secret(rng, shape) for shape in params] for _ in range(2)]
        reply = yield {"kind": "persist_optimizer", "sizes": sizes, "optimizer": spec, "state": state, "grads": grads}
        described = read(reply, Failed | StateFailed | OptimizerState)
        if isinstance(described, Failed):
            return student_error(label, "__init__", described.error)
        if isinstance(described, StateFailed):
            return student_error(label, "state_dict", described.state_error)
        got = entries(described.state)
        problem = rules.optimizer_state_problem(label, got, described.ids) \
            or rules.optimizer_positions_problem(label, {k: v for k, _, v in got}, state,
                                                 {table: order for table in rules.OPTIMIZER_ARRAYS[spec["class"]]})
        if problem:
            return problem
        stepped = read(reply, StepsFailed | Stepped)
        if isinstance(stepped, StepsFailed):
            return student_error(label, "step", stepped.steps_error)
        after = entries(stepped.after)
        problem = rules.optimizer_snapshot_problem(label, {k: v for k, _, v in got},
                                                   {} if isinstance(after, str) else {k: v for k, _, v in after})
        if problem:
            return problem
        restored = read(reply, LoadFailed | Restored)
        if isinstance(restored, LoadFailed):
            return student_error(label, "load_state_dict", restored.load_error)
        problem = rules.optimizer_restored_problem(label, restored.loaded, state) \
            or rules.optimizer_number_types_problem(label, number_reports(restored.numbers, spec["class"]))
        if problem:
            return problem
        kept = read(reply, FreshStepsFailed | Kept)
        if isinstance(kept, FreshStepsFailed):
            return student_error(label, "step", kept.fresh_steps_error)
        after_fresh = entries(kept.after_fresh)
        if isinstance(after, str) or isinstance(after_fresh, str):
            raise ProbeFailure("the reply's state dict after the restored optimizer's steps is missing")
        problem = rules.optimizer_load_kept_problem(label, {k: v for k, _, v in after}, {k: v for k, _, v in after_fresh})
        if problem:
            return problem
    return rules.optimizer_passed(optimizers)


def number_reports(numbers, cls):
    """The kernel's report of the restored optimizer's numbers, as `rules.optimizer_number_types_problem` reads it."""
    reports = {}
    for name in rules.OPTIMIZER_NUMBERS[cls]:
        if name not in numbers:
            raise ProbeFailure(f"the reply's 'numbers'[{name!r}] is missing")
        got = numbers[name]
        reports[name] = {"type_name": got.type_name, "int": got.int, "float": got.float, "text": got.text}
    return reports


# ── 8.4 ──

@judges("checkpoint")
def checkpoint(rng, kind, *files, seed=0):
    return (yield from (round_trip(rng) if kind == "round_trip" else refuses(rng, files or ("text", "npz"))))


def round_trip(rng):
    """save_checkpoint of small_net + Adam holding secret values, then load_checkpoint into new objects."""
    sizes = net_sizes(rng)
    values = net_values(rng, sizes)
    spec, state, _, _, _ = optimizer_secrets(rng, "adam", sizes)
    name = "run.ckpt"
    reply = read((yield {"kind": "persist_checkpoint", "sizes": sizes, "values": list(values.values()),
                         "optimizer": spec, "fresh": {"class": "Adam", "settings": {"lr": 0.5}}, "state": state,
                         "name": name}),
                 Failed | SaveFailed | Unread | CheckpointLoadFailed | NoOptimizerFailed | RoundTripped,
                 holders=len(values))
    if isinstance(reply, Failed):
        return student_error("small_net", "__init__", reply.error)
    if isinstance(reply, SaveFailed):
        return failed(describe_error("save_checkpoint", "call", reply.save.outcome))
    problem = rules.checkpoint_file_problem(name, reply.exists, reply.written, reply.names,
                                            rules.checkpoint_entries(values, state))
    if problem or isinstance(reply, Unread):     # a file not there, or not readable, is a problem
        return problem
    if isinstance(reply, CheckpointLoadFailed):
        return failed(describe_error("load_checkpoint", "call", reply.load.outcome))
    problem = rules.checkpoint_loaded_problem(dict(zip(values, reply.model)), values, reply.loaded, state)
    if problem:
        return problem
    if isinstance(reply, NoOptimizerFailed):
        return failed(describe_error("load_checkpoint", "call without an optimizer", reply.no_optimizer.outcome))
    return model_only(reply.alone, values) or passed(rules.ROUND_TRIP_PASSED)


def model_only(reply, values):
    """The kernel's save_checkpoint(path, model) without an optimizer, and load_checkpoint of that file into a new
    model: the file's entries, and the model's state after loading, against the secret values saved."""
    if isinstance(reply, SaveFailed):
        return failed(describe_error("save_checkpoint", "call without an optimizer", reply.save.outcome)
                      + rules.MODEL_ONLY_HINT)
    problem = rules.checkpoint_file_problem(rules.MODEL_ONLY, reply.exists, reply.written, reply.names,
                                            rules.checkpoint_entries(values, {}), rules.MODEL_ONLY_WHAT)
    if problem or isinstance(reply, Unread):
        return problem
    if isinstance(reply, CheckpointLoadFailed):
        return failed(describe_error("load_checkpoint", "call on a checkpoint without an optimizer",
                                     reply.load.outcome))
    return rules.checkpoint_loaded_problem(dict(zip(values, reply.model)), values, {}, {})


def not_checkpoint(rng, kind, sizes):
    """(kind, secret file name, secret bytes) of a file of `kind` that is not a checkpoint of the model (for
    `pickled`, a checkpoint of a small_net of `sizes`, secret values, a secret entry stored as an object array; for
    `other_model`, one whose last layer sits at another position). The judge only writes these bytes; the kernel's
    reply never holds anything but JSON."""
    name = rules.NOT_CHECKPOINTS[kind][1]
    stem, dot, extension = name.partition(".")
    name = f"{stem}_{int(rng.integers(100, 100000))}{dot}{extension}"
    if kind == "text":
        data = f"epoch {int(rng.integers(1, 99))}: loss {rng.uniform(0, 3):.4f}\n".encode()
    elif kind == "empty":
        data = b""
    elif kind == "random":
        data = b"\x00" + rng.bytes(int(rng.integers(100, 500)))     # never a zip's or a .npy's magic bytes
    elif kind == "zip":
        data = b"PK\x03\x04" + rng.bytes(int(rng.integers(20, 80)))
    else:
        buffer = io.BytesIO()
        array = secret(rng, int(rng.integers(2, 9)))
        if kind == "npy":
            np.save(buffer, array)
        elif kind == "npz":
            np.savez(buffer, **{str(rng.choice(["weight", "bias", "scale", "values"])): array})
        else:
            state = net_values(rng, sizes)
            if kind == "other_model":
                rules.other_model_checkpoint(buffer, state)
            elif kind == "unmarked":
                rules.unmarked_checkpoint(buffer, state)
            else:
                rules.pickled_checkpoint(buffer, state, str(rng.choice(list(state))))
        data = buffer.getvalue()
    return kind, name, np.frombuffer(data, dtype=np.uint8).copy()


def refuses(rng, kinds):
    """load_checkpoint on secret files that are not checkpoints: a ValueError naming the file, the model untouched."""
    sizes = net_sizes(rng)
    values = net_values(rng, sizes)
    files = [not_checkpoint(rng, kind, sizes) for kind in kinds]
    reply = read((yield {"kind": "persist_refuses", "sizes": sizes, "values": list(values.values()),
                         "names": [name for _, name, _ in files], "contents": [data for _, _, data in files]}),
                 Failed | Refusals, files=len(files), holders=len(values))
    if isinstance(reply, Failed):
        return student_error("small_net", "__init__", reply.error)
    for (kind, name, _), result in zip(files, reply.results):
        error = raised(result.raised)
        holders = result.holders
        changed = any(not np.array_equal(h, v) for h, v in zip(holders, values.values()))
        problem = (rules.refused_file_problem(kind, name, None, False, "", changed=changed) if error is None else
                   rules.refused_file_problem(kind, name, error[0].error_type, error[2], error[0].message,
                                              error[1], changed))
        if problem:
            return problem
        if changed:
            return failed(f"load_checkpoint refused {rules.NOT_CHECKPOINTS[kind][0]} but changed the model first.")
    return rules.refuses_passed([kind for kind, _, _ in files])


# ── 8.5 ──

@judges("resume_training")
def resume_training(rng, optimizer="adam", seed=0):
    """Train from secret values on secret batches, checkpoint, train on; new objects resumed from the checkpoint must
    agree bit for bit (as in the kernel's check), and the uninterrupted run must be the judge's own training."""
    cls, settings, label = rules.OPTIMIZER_SPECS[optimizer]
    sizes = net_sizes(rng)
    values, clone_values = net_values(rng, sizes), net_values(rng, sizes)
    data = [(secret(rng, (8, sizes[0])), rng.integers(0, sizes[2], 8)) for _ in range(7)]
    shapes = net_shapes(sizes)
    reply = read((yield {"kind": "persist_resume", "sizes": sizes, "values": list(values.values()),
                         "clone_values": list(clone_values.values()), "optimizer": {"class": cls, "settings": settings},
                         "first": data[:3], "second": data[3:]}),
                 Failed | Resumed, holders=len(shapes))
    if isinstance(reply, Failed):
        return failed("resuming from a checkpoint: " + describe_error("training", "step", reply.error))
    states = [entries(state) for state in (reply.original, reply.original_optimizer, reply.resumed,
                                           reply.resumed_optimizer)]
    for state in states:
        if isinstance(state, str):
            return failed(f"resuming from a checkpoint: state_dict() returned a {state}.")
    model_state, optimizer_state, clone_state, resumed_state = (
        {key: value if value is not None else np.array(np.nan) for key, _, value in state} for state in states)
    ours, theirs = rules.both_states(model_state, optimizer_state), rules.both_states(clone_state, resumed_state)
    verdict = rules.resume_verdict(label, ours, theirs, reply.original_out, reply.resumed_out)
    if not verdict.passed:
        return verdict
    final = dict(zip(shapes, reply.holders))
    settings = dict(rules.OPTIMIZER_DEFAULTS[cls], **settings)
    want = train_small_net(values, data, cls, settings)
    determined = float32_determined(values, data, cls, settings, want)
    for name, value in want.items():
        if final[name].shape != value.shape:
            return failed(own_training_differs(name, "shape"))
        off = np.abs(final[name] - value)[determined[name]]
        if not np.all(off <= OWN_ATOL + OWN_RTOL * np.abs(value[determined[name]])):     # nan fails too
            return failed(own_training_differs(name, float(off.max())))
    return verdict


def own_training_differs(name, by):
    return (f"resuming from a checkpoint: the uninterrupted run in your kernel is not the judge's own training of the "
            f"same network on the same batches: {name} differs by {by}.\n"
            "  Hint: chapters 4 and 5's Linear, BatchNorm1d, SoftmaxLoss and optimizers must stay as provided.")


def float32_determined(values, data, cls, settings, want):
    """{name: mask} of the elements that float32 rounding cannot move by a tenth of the tolerance (see NOISY_RUNS)."""
    noise = np.random.default_rng(0)
    runs = [train_small_net(values, data, cls, settings, noise) for _ in range(NOISY_RUNS)]
    return {name: np.max([np.abs(run[name] - value) for run in runs], axis=0)
            <= (OWN_ATOL + OWN_RTOL * np.abs(value)) / 10 for name, value in want.items()}


def train_small_net(values, data, cls, settings, noise=None, eps=1e-5, momentum=0.1):
    """Linear → BatchNorm1d → ReLU → Linear trained with SoftmaxLoss and the course's SGD or Adam, in float64;
    with a `noise` generator, every intermediate array is perturbed by float32's relative rounding."""
    def rounded(array):
        return array if noise is None else array * (1 + FLOAT32_ROUNDING * noise.standard_normal(np.shape(array)))
    state = {name: np.array(value, dtype=np.float64) for name, value in values.items()}
    names = [n for n in state if rules.is_parameter(n)]
    slots = {name: {} for name in names}
    t = 0
    for x, y in data:
        w1, b1, g, beta, w2, b2 = (state[n] for n in names)
        x = x.astype(np.float64)
        h = rounded(x @ w1 + b1)
        mean = rounded(h.mean(axis=0))
        centred = rounded(h - mean)
        var = rounded((centred * centred).mean(axis=0))
        state["modules.1.running_mean"] = (1 - momentum) * state["modules.1.running_mean"] + momentum * mean
        state["modules.1.running_var"] = (1 - momentum) * state["modules.1.running_var"] + momentum * var
        std = rounded(np.sqrt(var + eps))
        normal = rounded(centred / std)
        z = rounded(normal * g + beta)
        relu = np.maximum(z, 0)
        logits = rounded(relu @ w2 + b2)
        soft = np.exp(logits - logits.max(axis=1, keepdims=True))
        soft = rounded(soft / soft.sum(axis=1, keepdims=True))
        dlogits = rounded((soft - np.eye(logits.shape[1])[y]) / len(y))
        dz = rounded(dlogits @ w2.T) * (z > 0)
        dnormal = rounded(dz * g)
        dh = rounded((dnormal - dnormal.mean(axis=0) - normal * (dnormal * normal).mean(axis=0)) / std)
        grads = [rounded(grad) for grad in (x.T @ dh, dh.sum(axis=0, keepdims=True), (dz * normal).sum(axis=0),
                                            dz.sum(axis=0), relu.T @ dlogits, dlogits.sum(axis=0, keepdims=True))]
        t += 1
        for name, grad in zip(names, grads):
            p, slot = state[name], slots[name]
            grad = grad + settings["weight_decay"] * p
            if cls == "Adam":
                slot["m"] = settings["beta1"] * slot.get("m", 0.0) + (1 - settings["beta1"]) * grad
                slot["v"] = settings["beta2"] * slot.get("v", 0.0) + (1 - settings["beta2"]) * grad * grad
                m_hat = slot["m"] / (1 - settings["beta1"] ** t)
                v_hat = slot["v"] / (1 - settings["beta2"] ** t)
                state[name] = p - settings["lr"] * m_hat / (np.sqrt(v_hat) + settings["eps"])
            else:
                if settings["momentum"]:
                    grad = grad if "u" not in slot else settings["momentum"] * slot["u"] + grad
                    slot["u"] = grad
                state[name] = p - settings["lr"] * grad
    return state
