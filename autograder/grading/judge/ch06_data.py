"""Judge-side checks of chapter 6: datasets, loaders, transforms and IDX files, on the judge's secret data.

The kernel builds the student's objects over the judge's arrays (`in_kernel/ch06_data.py`) and reports what came
back; the judge knows every sample, so it can tell each batch's samples by their secret labels, each
crop by its window, each parsed file by the array it wrote. Randomness it cannot predict (a seeded
shuffle, a flip, a crop) is verified as the course's checks verify it: every sample once per epoch,
every window reached, the same run from the same seed and another from another. The verdicts and
messages are those of `checks/ch06_data.py`, `checks/ch06_data_transforms.py` and `checks/ch06_data_idx.py`.
"""
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, Returned
from autograder.grading.judge.replies import (Array, AsText, Either, Failed, Flag, Int, ListOf, Nested, Optional, Raised,
                                              Tag, read, whole, wire)
from autograder.student.checks import ch06_data as rules
from autograder.student.checks import ch06_data_facts
from autograder.student.checks import ch06_data_idx as idx_rules
from autograder.student.checks import ch06_data_transforms as transform_rules
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges


# ── the replies ──

def is_true(value: Any) -> bool:
    return value is True


@dataclass(frozen=True)
class Shown:
    """A len() that gave something else than an int: its repr."""

    shown: str = wire(AsText(60, absent="?"))


# len(): an int, or the repr of what came instead
LENGTH = Either(whole, Int(), Nested(Shown))


@dataclass(frozen=True)
class TensorField:
    """A batch's field that is a Tensor: its type, whether it requires grad, its values."""

    TAG: ClassVar[Tag] = Tag("tensor", when=is_true)
    type_name: str = wire(AsText(100, absent=None))
    requires_grad: bool = wire(Flag())
    data: np.ndarray = wire(Array())


@dataclass(frozen=True)
class OtherField:
    """A batch's field that is not a Tensor: its type."""

    type_name: str = wire(AsText(100, absent=None))


FIELD = Nested(TensorField | OtherField)


@dataclass(frozen=True)
class BatchFailed:
    """Reading a batch raised."""

    TAG: ClassVar[Tag] = Tag("error")
    error: Returned = wire(Raised())


@dataclass(frozen=True)
class Batch:
    """A batch of two fields (image, label)."""

    TAG: ClassVar[Tag] = Tag("fields")
    fields: list[TensorField | OtherField] = wire(ListOf(FIELD, length=2))


@dataclass(frozen=True)
class FieldsBatch:
    """A batch of any number of fields."""

    TAG: ClassVar[Tag] = Tag("fields")
    fields: list[TensorField | OtherField] = wire(ListOf(FIELD))


@dataclass(frozen=True)
class NotBatch:
    """A batch that is not a tuple of fields: its type."""

    type_name: str = wire(AsText(100, absent="?"))


EPOCH = ListOf(Nested(BatchFailed | Batch | NotBatch))


@dataclass(frozen=True)
class Mismatch:
    """What ArrayDataset raised for arrays of unequal lengths."""

    error_type: str = wire(AsText(100, absent=None))
    value_error: bool = wire(Flag())


@dataclass(frozen=True)
class TripleFailed:
    TAG: ClassVar[Tag] = Tag("triple_error")
    triple_error: Returned = wire(Raised())


@dataclass(frozen=True)
class ArrayDatasetRan:
    """ArrayDataset(x, y): len, an item, a one-array item, the refusal of unequal lengths; then the three-array item
    and its refusal (None: accepted)."""

    n: int | Shown = wire(LENGTH)
    sample: Returned = wire(Raised())
    one: Returned = wire(Raised())
    mismatch: Mismatch | None = wire(Optional(Nested(Mismatch)))
    triple: Returned = wire(Raised())
    mismatch3: Mismatch | None = wire(Optional(Nested(Mismatch)))


@dataclass(frozen=True)
class Shortcut:
    """Whether the kernel has no ArrayDataset that holds the judge's samples (then the shortcut is not probed)."""

    unusable: bool = wire(Flag())


@dataclass(frozen=True)
class Run:
    """One loader case: its batches over one epoch, and its len()."""

    batches: list[BatchFailed | Batch | NotBatch] = wire(EPOCH)
    count: int | Shown = wire(LENGTH)


@dataclass(frozen=True)
class Runs:
    """The loader cases, up to the first that raised."""

    runs: list[Failed | Run] = wire(ListOf(Nested(Failed | Run), least=1, most="cases"))


@dataclass(frozen=True)
class OneField:
    """The loader over samples of one field: its batches."""

    batches: list[FieldsBatch | NotBatch] = wire(ListOf(Nested(FieldsBatch | NotBatch)))


@dataclass(frozen=True)
class RunsOneField(Runs):
    """The loader cases, and the loader over samples of one field."""

    one_field: Failed | OneField = wire(Nested(Failed | OneField))


@dataclass(frozen=True)
class Epochs:
    """The thirteen epochs of the seeded, shuffled loaders."""

    epochs: list[list[BatchFailed | Batch | NotBatch]] = wire(ListOf(EPOCH, length=13))


@dataclass(frozen=True)
class Stacked:
    """A transform run's outputs, ndarrays of one shape stacked; whether a call wrote into its input."""

    TAG: ClassVar[Tag] = Tag("stacked")
    stacked: np.ndarray = wire(Array())
    changed: bool = wire(Flag())


@dataclass(frozen=True)
class Outputs:
    """A transform run's outputs, each reported; whether a call wrote into its input."""

    items: list[Returned] = wire(ListOf(Raised()))
    changed: bool = wire(Flag())


@dataclass(frozen=True)
class TransformRuns:
    """The transform runs, up to the first that raised."""

    runs: list[Failed | Stacked | Outputs] = wire(ListOf(Nested(Failed | Stacked | Outputs), least=1, most="runs"))


@dataclass(frozen=True)
class Parsed:
    """parse_idx on one file: what it returned or raised, and whether that is a ValueError."""

    returned: Returned = wire(Raised())
    value_error: bool = wire(Flag())


@dataclass(frozen=True)
class ParsedFiles:
    results: list[Parsed] = wire(ListOf(Nested(Parsed), length="files"))


@dataclass(frozen=True)
class Label:
    """A dataset item's label: its type, its repr, and its value when a number or an array."""

    type_name: str = wire(AsText(100, absent=None))
    repr: str = wire(AsText(60, absent=None))
    value: np.ndarray | None = wire(Optional(Array()))


@dataclass(frozen=True)
class Item:
    """A dataset item (image, label), and its own type."""

    image: Returned = wire(Raised())
    label: Label = wire(Nested(Label))
    type_name: str = wire(AsText(100, absent=None))


@dataclass(frozen=True)
class StoredArray:
    """An array a dataset keeps: its type, dtype and shape."""

    type_name: str = wire(AsText(100, absent=None))
    dtype: str = wire(AsText(40, absent=None))
    shape: list[int] = wire(ListOf(Int()))


@dataclass(frozen=True)
class Stored:
    """The dataset's `.images` and `.labels` (None: missing)."""

    images: StoredArray | None = wire(Optional(Nested(StoredArray)))
    labels: StoredArray | None = wire(Optional(Nested(StoredArray)))


@dataclass(frozen=True)
class Mnist:
    """MNISTDataset on the judge's files: len, an item, the arrays kept, and an augmented item with the transform's
    call counts after construction and after it."""

    n: int | Shown = wire(LENGTH)
    item: Item = wire(Nested(Item))
    other: Item = wire(Nested(Item))
    calls_after_init: int = wire(Int())
    calls: int = wire(Int())
    stored: Stored = wire(Nested(Stored))


@dataclass(frozen=True)
class RealSplit:
    """MNISTDataset on a real split: len and an item."""

    n: int | Shown = wire(LENGTH)
    item: Item = wire(Nested(Item))


@dataclass(frozen=True)
class MnistReal(Mnist):
    """MNISTDataset on the judge's files, and on a real split."""

    real: Failed | RealSplit = wire(Nested(Failed | RealSplit))


def kept(value):
    """A dataset item's value as `rules.shown` keeps it: numbers and arrays as they are, else a type's name."""
    return value.value if value.kind == "array" else value.type_name if value.kind != "none" else "NoneType"


def items(value):
    """A reported dataset item as `rules.as_items` gives it."""
    if value.kind == "sequence" and value.type_name == "tuple":
        return tuple(kept(v) for v in value.items)
    return kept(value)


def length(value):
    """A reported len(): an int, or the repr of what came instead."""
    return value.shown if isinstance(value, Shown) else value


@judges("array_dataset")
def array_dataset(rng):
    """ArrayDataset over secret rows: len, an item, a one-array item, a three-array item, a ValueError for unequal
    lengths (of two arrays, and of the third of three)."""
    n, d = int(rng.integers(5, 10)), int(rng.integers(2, 5))
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.integers(0, 100, n)
    z = rng.standard_normal(n)
    item, single = (int(i) for i in rng.integers(0, n, 2))
    reply = read((yield {"kind": "array_dataset", "x": x, "y": y, "z": z, "item": item, "single": single}),
                 Failed | TripleFailed | ArrayDatasetRan)
    if isinstance(reply, Failed):
        return failed(describe_error("ArrayDataset", "__init__/__len__/__getitem__", reply.error))
    if isinstance(reply, TripleFailed):
        return failed(describe_error("ArrayDataset", "__init__/__getitem__", reply.triple_error)
                      + f"\n  on ArrayDataset(x, y, z), three arrays of {n} rows.")
    return rules.array_dataset_verdict(x, y, item, single, length(reply.n), items(reply.sample), items(reply.one),
                                       mismatch_of(reply.mismatch), z, items(reply.triple), mismatch_of(reply.mismatch3))


def mismatch_of(report):
    """A reported refusal as `rules.mismatch_of` gives it: "ValueError", another error's type name, or None."""
    if report is None:
        return None
    return "ValueError" if report.value_error else report.error_type


class Samples:
    """The judge's dataset: images (n, 2, 3) float32 and distinct secret labels; a batch's labels name its samples."""

    def __init__(self, rng, n):
        self.images = rng.random((n, 2, 3)).astype(np.float32)
        self.labels = rng.choice(10 ** 6, n, replace=False).astype(np.int64)
        self.index = {int(label): i for i, label in enumerate(self.labels)}

    def index_of(self, label):
        """The sample a label names, -1 for none (not a whole number, or no secret label)."""
        try:
            value = float(label)
        except (TypeError, ValueError):
            return -1
        return self.index.get(int(value), -1) if np.isfinite(value) and value == int(value) else -1

    def matches(self, images, labels):
        at = [self.index_of(label) for label in labels]
        return min(at, default=0) >= 0 and np.array_equal(images, self.images[at])


def described_batch(report):
    """A reported batch as `rules.describe_batch` gives it (`rules.describe_fields` for a batch of any fields)."""
    if isinstance(report, BatchFailed):
        return f"batch that could not be read ({report.error.error_type}: {report.error.message})"
    if isinstance(report, NotBatch):
        return report.type_name
    return [rules.Field(True, f.type_name, f.requires_grad, f.data) if isinstance(f, TensorField)
            else rules.Field(False, f.type_name) for f in report.fields]


def epoch(batches):
    return [described_batch(b) for b in batches]


@judges("data_loader")
def data_loader(rng, name):
    """DataLoader over the judge's samples: `batches` (secret sizes, order, drop_last, len, dtypes) or `shuffle`."""
    return (yield from (loader_batches if name == "batches" else loader_shuffle)(rng))


def loader_batches(rng):
    n, size = int(rng.integers(7, 14)), int(rng.integers(2, 6))
    while n % size == 0:
        size = int(rng.integers(2, 6))
    even, times, few = int(rng.integers(2, 6)), int(rng.integers(2, 4)), int(rng.integers(2, 5))
    # drop_last both with a partial last batch to drop and without one (then nothing is dropped)
    cases = [(n, size, False), (n, size, True), (even * times, even, False), (even * times, even, True),
             (few, 1, False)]
    one_field = (int(rng.integers(5, 10)), int(rng.integers(2, 5)))      # samples of one field: (image,)
    samples = Samples(rng, max([c[0] for c in cases] + [one_field[0]]))
    request = {"kind": "data_loader", "shuffle": False, "images": samples.images, "labels": samples.labels,
               "cases": cases, "one_field": one_field}
    return (yield from through_shortcut(request, lambda reply, dataset: batches_verdict(reply, cases, samples, dataset,
                                                                                         one_field)))


def through_shortcut(request, verdict_of):
    """The loader's verdict over the judge's plain dataset; once that passes, over the student's ArrayDataset
    too (`rules.SHORTCUT`), unless the kernel has none that holds the judge's samples."""
    verdict = verdict_of((yield request), "dataset")
    if not verdict.passed:
        return verdict
    reply = yield {**request, "shortcut": True}
    if read(reply, Shortcut).unusable:
        return verdict
    return rules.through_shortcut(verdict_of(reply, rules.SHORTCUT))


def batches_verdict(reply, cases, samples, dataset, one_field=None):
    with_one_field = dataset == "dataset" and one_field is not None
    reply = read(reply, RunsOneField if with_one_field else Runs, cases=len(cases))
    gathered = []
    for (n, size, drop_last), run in zip(cases, reply.runs):
        if isinstance(run, Failed):
            return failed(describe_error("DataLoader", "__iter__", run.error)
                          + f"\n  while iterating {rules.loader_label(n, size, drop_last, dataset)}.")
        gathered.append((n, size, drop_last, epoch(run.batches), length(run.count)))
    if len(gathered) != len(cases):
        raise ProbeFailure(f"the reply's 'runs' stops at {len(gathered)} of {len(cases)} cases, none of them failed")
    verdict = rules.loader_batches_verdict(gathered, samples.matches, samples.index_of, dataset)
    if not verdict.passed or not isinstance(reply, RunsOneField):
        return verdict
    n, size = one_field
    report = reply.one_field
    if isinstance(report, Failed):
        return failed(rules.one_field_error(n, size, describe_error("DataLoader", "__iter__", report.error)))
    return rules.one_field_verdict(n, size, [described_batch(b) for b in report.batches], samples.images[:n]) or verdict


def loader_shuffle(rng):
    n, size = int(rng.integers(17, 30)), int(rng.integers(3, 7))
    while n % size == 0:            # always a partial last batch: the one that `drop_last` and len() decide
        size = int(rng.integers(3, 7))
    seed = int(rng.integers(0, 2 ** 31))
    seeds = (seed, seed + 1 + int(rng.integers(0, 1000)))
    samples = Samples(rng, n)
    request = {"kind": "data_loader", "shuffle": True, "images": samples.images, "labels": samples.labels,
               "size": size, "seeds": seeds}
    return (yield from through_shortcut(request, lambda reply, dataset: shuffle_verdict(reply, n, size, seeds,
                                                                                         samples, dataset)))


def shuffle_verdict(reply, n, size, seeds, samples, dataset):
    reply = read(reply, Failed | Epochs)
    if isinstance(reply, Failed):
        return failed(describe_error("DataLoader", "__iter__", reply.error)
                      + f"\n  while iterating {rules.shuffle_label(n, size, seeds[0], dataset)}.")
    epochs = reply.epochs
    grouped = [rules.batch_indices(epoch(e), samples.index_of) for e in epochs[:3]]
    again_first, again_second, other, dropped, *rest = (rules.indices(epoch(e), samples.index_of) for e in epochs[3:])
    return rules.loader_shuffle_verdict(n, size, seeds, grouped, [again_first, again_second], other, dropped, dataset,
                                        turns=rest[:4], zero=rest[4:])


# ── transforms ──

def build(name, *args, **kwargs):
    return {"name": name, "args": list(args), "kwargs": kwargs}


def run(spec, x, count=1):
    return {"build": spec, "x": x, "count": count}


def shown(value):
    """An output as `transform_rules.shown` gives it: an ndarray, or its type's name."""
    if value.kind == "array" and value.type_name == "numpy.ndarray":
        return value.value
    return value.type_name if value.kind != "none" else "NoneType"


def outputs(report, at, count):
    """Run `at`'s reported outputs: `count` of them, each `shown`."""
    if isinstance(report, Stacked):
        got = list(report.stacked) if report.stacked.ndim > 0 else []
    else:
        got = [shown(v) for v in report.items]
    if len(got) != count:
        raise ProbeFailure(f"the reply's 'runs'[{at}] has {len(got)} outputs, expected {count}")
    return got


def transform_runs(runs, labels):
    """Send the runs; (each run's outputs, None), or (None, the failed Verdict of the first run that raised)."""
    reply = read((yield {"kind": "data_transform", "runs": runs}), TransformRuns, runs=len(runs))
    results = []
    for at, (spec, report, (label, context)) in enumerate(zip(runs, reply.runs, labels)):
        if isinstance(report, Failed):
            return None, failed(describe_error(label, "__call__", report.error) + context)
        results.append(outputs(report, at, spec["count"]))
        if report.changed:
            return None, transform_rules.changed_input(label + context)
    if len(results) != len(runs):
        raise ProbeFailure(f"the reply's 'runs' stops at {len(results)} of {len(runs)} runs, none of them failed")
    return results, None


def image(rng, shape):
    return rng.random(shape).astype(np.float32)


@judges("transform")
def transform(rng, name):
    """One transform on the judge's images: normalize, flatten_image, flip, crop or compose."""
    return (yield from TRANSFORMS[name](rng))


def normalize(rng):
    gray = float(np.round(rng.uniform(0.05, 0.5), 4)), float(np.round(rng.uniform(0.2, 0.5), 4))
    colour = np.round(rng.uniform(0.2, 0.6, 3), 3), np.round(rng.uniform(0.2, 0.4, 3), 3)
    cases = [(image(rng, (5, 5)), *gray), (image(rng, (4, 4, 3)), *colour)]
    labels = [transform_rules.normalize_label(x.shape, mean, std) for x, mean, std in cases]
    got, error = yield from transform_runs([run(build("Normalize", mean, std), x) for x, mean, std in cases],
                                           [(label, "") for label in labels])
    if error:
        return error
    for (x, mean, std), label, (out,) in zip(cases, labels, got):
        problem = transform_rules.normalize_problem(label, x, mean, std, out)
        if problem:
            return problem
    return passed("✔ Normalize computes (x - mean) / std and keeps float32")


def flatten_image(rng):
    images = [image(rng, tuple(rng.integers(2, 29, 2))), image(rng, tuple(rng.integers(2, 6, 3)))]
    labels = [transform_rules.flatten_label(x.shape) for x in images]
    got, error = yield from transform_runs([run(build("FlattenImage"), x) for x in images], [(label, "") for label in labels])
    if error:
        return error
    for x, label, (out,) in zip(images, labels, got):
        problem = transform_rules.same(label, out, x.reshape(-1), transform_rules.FLATTEN_HINT)
        if problem:
            return problem
    return passed("✔ FlattenImage turns an image into one flat vector, row by row")


def flip(rng):
    x, colour = image(rng, (3, 4)), image(rng, (3, 4, 2))
    seed = int(rng.integers(0, 2 ** 31))
    seeds = (seed + 1, seed + 2 + int(rng.integers(0, 1000)))
    counts = transform_rules.FLIP_COUNTS

    def flips(p, seed, count, on=x):
        return run(build("RandomFlipHorizontal", p=p, seed=seed), on, count)
    runs = [flips(1.0, seed, counts["always"]), flips(0.0, seed, counts["never"]), flips(0.5, seed, counts["half"]),
            flips(0.5, seeds[0], counts["seeded"]), flips(0.5, seeds[0], counts["seeded"]),
            flips(0.5, seeds[1], counts["seeded"]), flips(1.0, seed, counts["colour"], colour)]
    got, error = yield from transform_runs(runs, [("RandomFlipHorizontal", "")] * len(runs))
    if error:
        return error
    always, never, half, a, b, c, coloured = got
    return transform_rules.flip_verdict(x, colour, {"always": always, "never": never, "half": half,
                                                    "seeded": [a, b, c], "colour": coloured}, seeds)


def crop(rng):
    x, colour = image(rng, (6, 6)) + 1.0, image(rng, (6, 6, 3)) + 1.0     # no pixel is 0: the zero padding shows
    seed = int(rng.integers(0, 2 ** 31))
    seeds = (seed + 1, seed + 2 + int(rng.integers(0, 1000)))
    # the course's runs, as many crops (transform_rules.CROP_RUNS), the wide image's pixels secret too
    windows = [(x if shape == x.shape else image(rng, shape) + 1.0, size, padding, seed, count)
               for shape, size, padding, count in transform_rules.CROP_RUNS]

    def crops(size, padding, seed, count, on=x):
        return run(build("RandomCrop", size, padding=padding, seed=seed), on, count)
    runs = [crops(s, p, sd, count, on) for on, s, p, sd, count in windows] \
        + [crops(6, 2, s, 40) for s in (seeds[0], seeds[0], seeds[1])] + [crops(5, 1, seed, 20, colour)]
    labels = [("RandomCrop", f"\n  in {transform_rules.crop_label(on.shape, s, p, sd)}.") for on, s, p, sd, _ in windows]
    got, error = yield from transform_runs(runs, labels + [("RandomCrop", "")] * 4)
    if error:
        return error
    k = len(windows)
    return transform_rules.crop_verdict(x, colour, [(*w[:4], out) for w, out in zip(windows, got)], seeds,
                                        got[k:k + 3], got[k + 3])


def compose(rng):
    x = image(rng, (2, 3))
    cases = [[("add", 1), ("mul", 10)], [], [("mul", 2), ("sub", 1), ("pow", 2)]]   # transform_rules.COMPOSE_CASES
    got, error = yield from transform_runs([run(build("Compose", steps), x) for steps in cases], [("Compose", "")] * 3)
    if error:
        return error
    return transform_rules.compose_verdict(x, *(out for (out,) in got))


TRANSFORMS = {"normalize": normalize, "flatten_image": flatten_image, "flip": flip, "crop": crop, "compose": compose}


# ── IDX files ──

def as_payload(data):
    return np.frombuffer(data, dtype=np.uint8).copy()


def parsed(cases):
    """parse_idx on the files of `cases` (name, array, compressed, label), written by the judge."""
    files = [(name + (".gz" if compress else ""), as_payload(rules.idx_bytes(want, compress)))
             for name, want, compress, _ in cases]
    as_path = [name + ".gz" for name, _, compress, _ in cases if name == idx_rules.AS_PATH and compress]
    results = returned_list_of((yield {"kind": "parse_idx", "files": files, "as_path": as_path}), len(files))
    for (_, want, _, label), (got, _) in zip(cases, results):
        if got.failed:
            return failed(idx_error(got) + f"\n  on {label}." + idx_rules.sizes_read_little_endian(got.message, want.shape)
                          + idx_rules.path_hint(idx_error(got)))
        problem = idx_rules.parsed_problem(shown(got), want, label)
        if problem:
            return failed(problem)
    return None


def returned_list_of(reply, count):
    return [(r.returned, r.value_error) for r in read(reply, ParsedFiles, files=count).results]


def idx_error(got):
    return describe_error("parse_idx", "", got).replace("parse_idx. ", "parse_idx ")


def random_shape(rng):
    return tuple(int(s) for s in rng.integers(1, 6, int(rng.integers(1, 4))))


@judges("parse_idx")
def parse_idx(rng, name, seed=0):
    """parse_idx on IDX files of secret contents: `bytes` (uint8, raw and gzip), `types`, `errors`."""
    if name == "errors":
        return (yield from parse_errors(rng))
    if name == "bytes":
        cases = idx_rules.bytes_cases(rng, tuple(int(s) for s in rng.integers(2, 7, 3)), int(rng.integers(5, 13)))
        done = "✔ parse_idx reads uint8 IDX files, raw and gzipped"
    else:
        cases = idx_rules.types_cases(rng, [random_shape(rng) for _ in range(5)])
        done = "✔ parse_idx reads big-endian int8, int16, int32, float32 and float64 files"
    return (yield from parsed(cases)) or passed(done)


UNKNOWN_CODES = [c for c in range(0x10) if c not in (0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E)]


def parse_errors(rng):
    good = rng.integers(0, 256, tuple(int(s) for s in rng.integers(2, 6, 2))).astype(np.uint8)
    broken = idx_rules.broken_files(good, magic=bytes(int(b) for b in rng.integers(1, 256, 2)),
                                    code=int(rng.choice(UNKNOWN_CODES)), missing=int(rng.integers(1, good.size + 1)),
                                    surplus=bytes(int(b) for b in rng.integers(0, 256, int(rng.integers(1, 9)))),
                                    suffix=f"-{int(rng.integers(16 ** 6)):06x}")
    results = returned_list_of((yield {"kind": "parse_idx", "files": [(n, as_payload(b)) for n, b, _ in broken]}),
                               len(broken))
    outcomes = []
    for (name, _, what), (got, value_error) in zip(broken, results):
        if got.failed:
            outcome = {"error_type": got.error_type, "message": got.message, "value_error": value_error}
        else:
            outcome = {"accepted": shown(got) if isinstance(shown(got), str) else "numpy.ndarray",
                       "shape": np.shape(got.value) if got.value is not None else ()}
        outcomes.append((name, what, outcome))
    return idx_rules.refusals_verdict(outcomes)


# ── MNISTDataset ──

def label_facts(report):
    """A reported label as `rules.label_facts` gives it: (its integer value or None, its repr, its type)."""
    kind, text, value = report.type_name, report.repr, report.value
    integer = kind == "int" or kind.startswith(("numpy.int", "numpy.uint"))
    if value is None or value.ndim != 0 or value.dtype.kind not in "iu" or not integer:
        return None, text, kind
    return int(value), text, kind


def item(report):
    return shown(report.image), label_facts(report.label)


def stored(report):
    """The reply's `.images` and `.labels` facts as `ch06_data_facts.stored_facts` gives them."""
    return {name: None if entry is None else (entry.type_name, entry.dtype, tuple(entry.shape[:8]))
            for name, entry in (("images", report.images), ("labels", report.labels))}


@judges("mnist_dataset")
def mnist_dataset(rng, real_split=None):
    """MNISTDataset (with a stand-in parser) on secret IDX files; with `real_split`, on that MNIST split too."""
    k, h, w = int(rng.integers(5, 10)), int(rng.integers(3, 7)), int(rng.integers(3, 7))
    raw = rules.mnist_pixels(rng, (k, h, w))
    labels = rng.integers(0, 10, size=k, dtype=np.uint8)
    first, other = (int(i) for i in rng.choice(k, 2, replace=False))
    files = [("images-idx3-ubyte.gz", as_payload(rules.idx_bytes(raw, True))),
             ("labels-idx1-ubyte.gz", as_payload(rules.idx_bytes(labels, True)))]
    request = {"kind": "mnist_dataset", "files": files, "item": first, "other": other, "real": None}
    if real_split:
        from autograder.student.datasets import mnist_files
        real_files = mnist_files(real_split)
        want_images, want_labels = (ch06_data_facts.parse_idx(path) for path in real_files)
        request.update(real=real_split, real_item=int(rng.integers(len(want_labels))))
    reply = read((yield request), Failed | (MnistReal if real_split else Mnist))
    if isinstance(reply, Failed):
        return failed(describe_error("MNISTDataset", "__init__/__getitem__", reply.error))
    image, label = item(reply.item)
    doubled, (label2, _, _) = item(reply.other)
    verdict = rules.mnist_verdict(raw, labels, first, other, length(reply.n), image, label,
                                  reply.calls_after_init, (reply.calls, doubled, label2),
                                  reply.item.type_name, stored(reply.stored))
    if not isinstance(reply, MnistReal) or not verdict.passed:
        return verdict
    real = reply.real
    if isinstance(real, Failed):
        return failed(describe_error("MNISTDataset", "__init__", real.error)
                      + f"\n  while reading {real_files[0].name}.")
    image, (label, _, _) = item(real.item)
    return rules.real_mnist_verdict(real_files[0].name, want_images, want_labels, request["real_item"],
                                    length(real.n), image, label)
