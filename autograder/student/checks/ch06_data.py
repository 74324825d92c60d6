"""Checks of chapter 6's datasets and loaders: ArrayDataset, DataLoader and MNISTDataset.

Each check builds its own probe data, so a broken parser or transform costs only its own exercise:
the DataLoader check feeds a probe dataset, and the MNISTDataset check swaps in a known-good IDX
parser while it runs.
"""
import gzip
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograder.student.checks.ch06_data_facts import CountingTransform, parse_idx, stored_facts
from autograder.student.checks.describe import type_name
from autograder.student.checks.kernel_facts import holds_samples
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed


class ProbeDataset:
    """Sample i is (a (2, 3) float32 image filled with i, the int64 label i): batches show their indices."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        if not 0 <= index < self.n:
            raise IndexError(f"ProbeDataset index {index} out of range 0..{self.n - 1}")
        return np.full((2, 3), index, dtype=np.float32), np.int64(index)


# DataLoader may take a shortcut for the chapter's ArrayDataset (the solution's does): whole batches by
# fancy indexing instead of dataset[i]. The loader checks run a second time over the student's own
# ArrayDataset, whose labels are a list as in the chapter's example, so a shortcut answers to the same rules.
SHORTCUT = "ArrayDataset"
SHORTCUT_NOTE = ("\n  Note: over a plain dataset your loader passed; over an ArrayDataset it went wrong. A shortcut for "
                 "ArrayDataset must give exactly the batches that reading dataset[i] one sample at a time gives: the "
                 "same samples in the same order, and the same types and dtypes, whatever arrays or lists it holds.")


def probe_arrays(n):
    """ProbeDataset's n samples as ArrayDataset's arguments: the images stacked, the labels a list of ints."""
    return np.stack([np.full((2, 3), i, dtype=np.float32) for i in range(n)]), list(range(n))


def array_probe(namespace, n=23):
    """`n -> the student's ArrayDataset over probe_arrays(n)`, or None when there is none that serves the
    probe's samples: a broken ArrayDataset costs its own exercise, not the loader's."""
    ArrayDataset, arrays = namespace.get("ArrayDataset"), probe_arrays(n)
    try:
        usable = holds_samples(run_quietly(ArrayDataset, *arrays), *arrays, run_quietly)
    except Exception:  # noqa: BLE001
        usable = False
    return (lambda size: ArrayDataset(*probe_arrays(size))) if usable else None


def through_shortcut(verdict):
    """A loader's verdict over an ArrayDataset, after it passed over a plain dataset: the note says so."""
    return verdict if verdict.passed else failed(verdict.message + SHORTCUT_NOTE)


def shown(value):
    """A value as a verdict reads it: arrays and numbers as they are, anything else by its type's name."""
    return value if isinstance(value, (np.ndarray, np.generic, int, float)) else type_name(value)


def as_items(value):
    """A dataset item as a verdict reads it: a tuple of values (`shown`), or the one value returned instead."""
    return tuple(shown(v) for v in value) if isinstance(value, tuple) else shown(value)


def described(value):
    """What a verdict says was returned: the name given by `shown`, or the type of a value."""
    return value if isinstance(value, str) else type_name(value)


@register("array_dataset")
def check_array_dataset(namespace):
    """ArrayDataset: length, items as tuples, unequal lengths refused."""
    ArrayDataset = namespace["ArrayDataset"]
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.array([3, 1, 4, 1, 5, 9])
    try:
        ds = run_quietly(ArrayDataset, x, y)
        n = run_quietly(len, ds)
        sample = as_items(run_quietly(ds.__getitem__, 4))
        one = as_items(run_quietly(ArrayDataset(x).__getitem__, 2))
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("ArrayDataset", "__init__/__len__/__getitem__", error))
    z = np.linspace(0.5, 5.5, 6)
    try:
        triple = as_items(run_quietly(ArrayDataset(x, y, z).__getitem__, 4))
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("ArrayDataset", "__init__/__getitem__", error)
                      + "\n  on ArrayDataset(x, y, z), three arrays of 6 rows.")
    return array_dataset_verdict(x, y, 4, 2, n, sample, one, mismatch_of(ArrayDataset, x, y[:5]), z, triple,
                                 mismatch_of(ArrayDataset, x, y, z[:5]))


def mismatch_of(ArrayDataset, *arrays):
    """What ArrayDataset(*arrays) raised: "ValueError", another exception's type name, or None when it was accepted."""
    try:
        run_quietly(ArrayDataset, *arrays)
    except ValueError:
        return "ValueError"
    except Exception as error:  # noqa: BLE001
        return type(error).__name__
    return None


def array_dataset_verdict(x, y, item, single, n, sample, one, mismatch, z=None, triple=None, mismatch3=None):
    """The verdict on ArrayDataset(x, y): `n` its len(), `sample` its [item], `one` ArrayDataset(x)[single]
    (`as_items`), `mismatch` what ArrayDataset(x, y[:-1]) raised (None when it was accepted); `triple`
    ArrayDataset(x, y, z)[item] and `mismatch3` what ArrayDataset(x, y, z[:-1]) raised."""
    where = f"ArrayDataset(x of shape {x.shape}, y of shape {y.shape})"
    if n != len(x):
        return failed(f"{where}: len() is {n}, expected {len(x)}.\n"
                      "  Hint: the number of samples is the length of the arrays' first axis, one row per sample.")
    if not isinstance(sample, tuple) or len(sample) != 2:
        return failed(f"{where}[{item}] returned a {described(sample)}{' of ' + str(len(sample)) if isinstance(sample, tuple) else ''}, "
                      f"expected a tuple (x[{item}], y[{item}]).")
    if not (np.array_equal(sample[0], x[item]) and np.array_equal(sample[1], y[item])):
        return failed(f"{where}[{item}] returned {sample}, expected ({x[item]}, {y[item]}).\n"
                      "  Hint: item i takes row i of every array.")
    if not isinstance(one, tuple) or len(one) != 1 or not np.array_equal(one[0], x[single]):
        return failed(f"ArrayDataset(x)[{single}] returned {one!r}, expected the 1-tuple ({x[single]},): "
                      "a dataset of one array still returns a tuple, so loaders treat every dataset alike.")
    where = f"ArrayDataset(x of {len(x)} rows, y of {len(x) - 1})"
    if mismatch is not None and mismatch != "ValueError":
        return failed(f"{where} raised {mismatch}, expected ValueError.")
    if mismatch is None:
        return failed(f"{where} was accepted: raise ValueError when the arrays' lengths differ.")
    if z is not None:
        want = (x[item], y[item], z[item])
        if not isinstance(triple, tuple) or len(triple) != 3 \
                or not all(np.array_equal(got, w) for got, w in zip(triple, want)):
            got = f"a tuple of {len(triple)}, ({', '.join(map(str, triple))})" if isinstance(triple, tuple) \
                else f"a {described(triple)}"
            return failed(f"ArrayDataset(x, y, z), three arrays of {len(x)} rows: item {item} is {got}, expected the "
                          f"3-tuple (x[{item}], y[{item}], z[{item}]) = ({', '.join(map(str, want))}).\n"
                          "  Hint: ArrayDataset takes any number of arrays (*arrays), and item i takes row i of every "
                          "one of them, whatever their number.")
        where = f"ArrayDataset(x of {len(x)} rows, y of {len(x)}, z of {len(x) - 1})"
        if mismatch3 is not None and mismatch3 != "ValueError":
            return failed(f"{where} raised {mismatch3}, expected ValueError.")
        if mismatch3 is None:
            return failed(f"{where} was accepted, though x and y of different lengths were refused.\n"
                          "  Hint: every array's length must equal the others', not only the first two's: "
                          "ArrayDataset takes any number of arrays (*arrays).")
    return passed("✔ ArrayDataset: len, items as tuples, and a ValueError for arrays of different lengths")


def epoch(loader):
    """All batches of one pass, or the exception raised."""
    return run_quietly(lambda: list(iter(loader)))


@dataclass
class Field:
    """One field of a batch as data: is it a Tensor (what type), does it require grad, its values."""

    tensor: bool
    type_name: str
    requires_grad: bool = False
    data: np.ndarray = None


def describe_batch(Tensor, batch):
    """A batch as a verdict reads it: its (images, labels) `Field`s, or the name of what came instead."""
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        return type_name(batch)
    return [Field(True, type_name(t), bool(t.requires_grad), np.asarray(t.data)) if isinstance(t, Tensor)
            else Field(False, type_name(t)) for t in batch]


def batch_size(batch):
    """The number of labels in a described batch, or None when it has no labels Tensor to count."""
    ok = isinstance(batch, list) and batch[1].tensor and batch[1].data is not None and batch[1].data.ndim > 0
    return len(batch[1].data) if ok else None


def probe_matches(images, labels):
    """The probe dataset's rule: sample i is an image filled with i and the label i."""
    return np.array_equal(images[:, 0, 0], labels)


def batch_problem(batch, want_size, image_shape=(2, 3), matches=probe_matches):
    """What is wrong with one described batch (`describe_batch`), or None; `matches(images, labels)`
    says whether the batch's images and labels come from the same samples."""
    if isinstance(batch, str):
        return f"a batch must be a tuple (images, labels); got a {batch}"
    images, labels = batch
    for name, t in (("images", images), ("labels", labels)):
        if not t.tensor:
            return f"{name} is a {t.type_name}, expected a Tensor (wrap the stacked array)"
        if t.requires_grad:
            return f"{name} has requires_grad=True: data is not a parameter, so its Tensor needs no gradient"
    if tuple(images.data.shape) != (want_size, *image_shape):
        return (f"images has shape {tuple(images.data.shape)}, expected {(want_size, *image_shape)}: "
                "stack the samples along a new first axis")
    if images.data.dtype != np.float32:
        return f"images has dtype {images.data.dtype}, expected float32"
    if tuple(labels.data.shape) != (want_size,):
        return f"labels has shape {tuple(labels.data.shape)}, expected {(want_size,)}"
    if not np.issubdtype(labels.data.dtype, np.integer):
        default = (": float32 is the Tensor default, which a Tensor made without the stacked array's dtype takes"
                   if labels.data.dtype == np.float32 else "")
        return (f"labels has dtype {labels.data.dtype}, expected an integer dtype{default}. Each field keeps its "
                "own dtype when it becomes a Tensor: class labels are integers, not floats")
    if not matches(images.data, labels.data):
        return "images and labels of a batch come from different samples"
    return None


def batch_indices(batches, index_of=int):
    """The samples of each described batch; `index_of(label)` names a label's sample (-1 for none, and [-1]
    for a batch without labels to read)."""
    return [[index_of(i) for i in np.asarray(b[1].data)] if batch_size(b) is not None else [-1] for b in batches]


def indices(batches, index_of=int):
    """The samples of described batches, in order (`batch_indices`, one after the other)."""
    return samples_of(batch_indices(batches, index_of))


def samples_of(epoch_batches):
    """An epoch's samples in the order they came, from its batches' samples."""
    return [i for batch in epoch_batches for i in batch]


LOADER_CASES = [(10, 4, False), (10, 4, True), (10, 5, False), (10, 5, True), (3, 1, False)]


def expected_sizes(n, size, drop_last):
    return [size] * (n // size) + ([n % size] if n % size and not drop_last else [])


def plain_then_shortcut(namespace, run):
    """`run(namespace, make_dataset, dataset)`'s verdict over the probe dataset; once that passes, over the
    student's ArrayDataset too, when it holds the probe's samples (`array_probe`)."""
    verdict = run(namespace, ProbeDataset)
    shortcut = array_probe(namespace)
    if not verdict.passed or shortcut is None:
        return verdict
    return through_shortcut(run(namespace, shortcut, SHORTCUT))


def check_loader_batches(namespace):
    return plain_then_shortcut(namespace, loader_batches_run)


def loader_batches_run(namespace, make_dataset, dataset="dataset"):
    """`loader_batches_verdict` on the LOADER_CASES, each loader over `make_dataset(n)`; over the plain dataset,
    then a loader over samples of one field (ONE_FIELD)."""
    Tensor, DataLoader = namespace["Tensor"], namespace["DataLoader"]
    runs = []
    for n, size, drop_last in LOADER_CASES:
        try:
            loader = run_quietly(lambda: DataLoader(make_dataset(n), batch_size=size, drop_last=drop_last))
            batches = [describe_batch(Tensor, b) for b in epoch(loader)]
            count = run_quietly(len, loader)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("DataLoader", "__iter__", error)
                          + f"\n  while iterating {loader_label(n, size, drop_last, dataset)}.")
        runs.append((n, size, drop_last, batches, count))
    verdict = loader_batches_verdict(runs, dataset=dataset)
    if not verdict.passed or make_dataset is not ProbeDataset:
        return verdict
    n, size = ONE_FIELD
    try:
        loader = run_quietly(lambda: DataLoader(OneFieldDataset(n), batch_size=size))
        batches = [describe_fields(Tensor, b) for b in epoch(loader)]
    except Exception as error:  # noqa: BLE001
        return failed(one_field_error(n, size, describe_exception("DataLoader", "__iter__", error)))
    return one_field_verdict(n, size, batches, OneFieldDataset(n).images()) or verdict


class OneFieldDataset(ProbeDataset):
    """Sample i is (a (2, 3) float32 image filled with i,): unlabelled data, one field per sample."""

    def __getitem__(self, index):
        return super().__getitem__(index)[:1]

    def images(self):
        return np.stack([self[i][0] for i in range(self.n)])


ONE_FIELD = (5, 2)          # samples, batch_size of the loader over one-field samples


def describe_fields(Tensor, batch):
    """A batch of any number of fields as a verdict reads it: its `Field`s, or the name of what came instead."""
    if not isinstance(batch, (tuple, list)):
        return type_name(batch)
    return [Field(True, type_name(t), bool(t.requires_grad), np.asarray(t.data)) if isinstance(t, Tensor)
            else Field(False, type_name(t)) for t in batch]


def one_field_label(n, size):
    return f"DataLoader(dataset of {n} samples of one field each, (image,), batch_size={size})"


ONE_FIELD_HINT = ("A sample holds one value per field, and a dataset may have any number of fields: (image, label), "
                  "or (features,) for unlabelled data (section 6.1). Regroup a batch's samples field by field, however "
                  "many fields there are, and make one Tensor of each: a batch is a tuple of as many Tensors as a "
                  "sample has fields.")


def one_field_error(n, size, described):
    """The message for a loader over one-field samples that raised (`described`)."""
    unpacked = "expected 2, got 1" in described
    return (described + f"\n  while iterating {one_field_label(n, size)}.\n  Hint: "
            + ("each batch was unpacked into two fields (images, labels), but these samples have one. " if unpacked
               else "") + ONE_FIELD_HINT)


def one_field_verdict(n, size, batches, images):
    """A failed verdict on a loader over n one-field samples whose images are `images`, from its described
    batches (`describe_fields`), or None when every batch is the 1-tuple of the right images."""
    where, sizes = one_field_label(n, size), expected_sizes(n, size, False)
    if len(batches) != len(sizes):
        return failed(f"{where} gave {len(batches)} batches, expected {len(sizes)}.")
    for k, (batch, want) in enumerate(zip(batches, sizes)):
        if isinstance(batch, str) or len(batch) != 1 or not batch[0].tensor:
            got = f"a {batch}" if isinstance(batch, str) else f"a batch of {len(batch)} fields" if len(batch) != 1 \
                else f"a 1-tuple holding a {batch[0].type_name}"
            return failed(f"{where}: batch {k} is {got}, expected a 1-tuple (images,) holding one Tensor.\n"
                          f"  Hint: {ONE_FIELD_HINT}")
        data, expected = batch[0].data, images[k * size:k * size + want]
        if data is None or data.shape != expected.shape or not np.array_equal(data, expected):
            return failed(f"{where}: batch {k} holds a Tensor of shape {None if data is None else data.shape}, "
                          f"expected the images of samples {k * size} to {k * size + want - 1}, of shape "
                          f"{expected.shape}.\n  Hint: {ONE_FIELD_HINT}")
    return None


def loader_label(n, size, drop_last, dataset="dataset"):
    return f"DataLoader({dataset} of {n} samples, batch_size={size}, drop_last={drop_last})"


def loader_batches_verdict(runs, matches=probe_matches, index_of=int, dataset="dataset"):
    """The verdict on DataLoader without shuffling: `runs` are (n, batch_size, drop_last, described batches,
    len(loader)) over a `dataset` of n samples; samples are `matches`'s pairs, and `index_of` names a label's sample."""
    for n, size, drop_last, batches, count in runs:
        where, sizes = loader_label(n, size, drop_last, dataset), expected_sizes(n, size, drop_last)
        got = [batch_size(b) for b in batches]
        held = batch_indices(batches, index_of)
        again = next(((k, j) for k in range(len(held)) for j in range(k) if held[k] == held[j] != [-1]), None)
        if got != sizes and again:
            k, j = again
            return failed(f"{where} gave batches of sizes {got}, expected {sizes}: batch {k + 1} held the same "
                          f"samples as batch {j + 1}, {held[k][:6]}.\n  Hint: each sample is in exactly one batch of "
                          "an epoch: the batches are consecutive pieces of the order, the last one the remainder.")
        if got != sizes:
            hint = ("the last, smaller batch is kept unless drop_last=True" if not drop_last else
                    f"{n} samples make exactly {n // size} full batches: drop_last=True drops only a last batch "
                    "smaller than batch_size, so here nothing is dropped" if n % size == 0 else
                    "with drop_last=True the last batch is dropped when it is smaller than batch_size")
            return failed(f"{where} gave batches of sizes {got}, expected {sizes}.\n  Hint: {hint}.")
        for batch, want in zip(batches, sizes):
            problem = batch_problem(batch, want, matches=matches)
            if problem:
                return failed(f"{where}: {problem}.")
        if indices(batches, index_of) != list(range(sum(sizes))):
            return failed(f"{where} without shuffling gave samples {indices(batches, index_of)}, expected 0, 1, 2, ... in order.")
        if count != len(sizes):
            return failed(f"{where}: len(loader) is {count}, but iterating gives {len(sizes)} batches.\n"
                          "  Hint: len() counts the batches __iter__ yields: n / batch_size rounded up, or rounded "
                          "down when drop_last=True.")
    return passed("✔ DataLoader: batches in order, the last partial batch kept (or dropped), len() and dtypes right")


def check_loader_shuffle(namespace):
    return plain_then_shortcut(namespace, loader_shuffle_run)


def loader_shuffle_run(namespace, make_dataset, dataset="dataset"):
    """`loader_shuffle_verdict` on loaders of seeds 3 and 4 over `make_dataset(23)`, in batches of 5."""
    Tensor, DataLoader = namespace["Tensor"], namespace["DataLoader"]
    n, size = 23, 5

    def epochs(seed, count=2, drop_last=False):
        loader = DataLoader(make_dataset(n), batch_size=size, shuffle=True, seed=seed, drop_last=drop_last)
        return [batch_indices([describe_batch(Tensor, b) for b in epoch(loader)]) for _ in range(count)]

    def in_turns(seed):
        """Two loaders of one seed, both made first, then read in turns: the epochs A1, B1, A2, B2."""
        made = [DataLoader(make_dataset(n), batch_size=size, shuffle=True, seed=seed) for _ in range(2)]
        return [samples_of(batch_indices([describe_batch(Tensor, b) for b in epoch(loader)]))
                for _ in range(2) for loader in made]

    try:
        grouped = run_quietly(epochs, 3, 3)
        again = [samples_of(e) for e in run_quietly(epochs, 3)]
        (other,) = run_quietly(epochs, 4, 1)
        (dropped,) = run_quietly(epochs, 3, 1, True)
        turns = run_quietly(in_turns, 3)
        zero = [samples_of(run_quietly(epochs, 0, 1)[0]) for _ in range(2)]
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("DataLoader", "__iter__", error)
                      + f"\n  while iterating {shuffle_label(n, size, 3, dataset)}.")
    return loader_shuffle_verdict(n, size, (3, 4), grouped, again, samples_of(other), samples_of(dropped), dataset,
                                  turns, zero)


def epoch_coverage_hint(n, samples, batches=()):
    """What an epoch that is not a permutation of the n samples shows: a batch that came twice, repeats with
    misses (indices drawn at random), repeats alone, or only missing samples (too few batches, or a last batch
    cut short). `batches`: the epoch's batches' samples, when known."""
    repeated = sorted({i for i in samples if samples.count(i) > 1})
    missing = sorted(set(range(n)) - set(samples))
    again = next(((k, j) for k, batch in enumerate(batches) for j in range(k) if list(batches[j]) == list(batch)), None)
    if again and not missing:
        k, j = again
        return (f"every sample came, but batch {k + 1} held the same samples as batch {j + 1} ({len(samples)} samples "
                f"in all, for {n}): an epoch cuts one permutation into consecutive batches, so each sample is in "
                "exactly one batch, and the last batch is the remainder.")
    if repeated and not missing:
        return (f"every sample came, and samples {repeated[:6]} came more than once ({len(samples)} samples in all, "
                f"for {n}): an epoch visits every sample exactly once.")
    if repeated:
        return (f"samples {repeated[:6]} came more than once and {len(missing)} sample(s) never came "
                f"({missing[:6]}): an epoch visits every sample exactly once, so shuffle the order of the indices "
                "(a permutation); drawing indices at random repeats some and misses others.")
    return (f"{len(missing)} sample(s) never came ({missing[:6]}), none twice: an epoch of {n} samples ends with a "
            "smaller last batch unless drop_last=True; check how many batches __iter__ yields and how the last "
            "one is cut.")


def shuffle_label(n, size, seed, dataset="dataset"):
    return f"DataLoader({dataset} of {n} samples, batch_size={size}, shuffle=True, seed={seed})"


def loader_shuffle_verdict(n, size, seeds, grouped, again, other, dropped, dataset="dataset", turns=None, zero=None):
    """The verdict on DataLoader(shuffle=True): `grouped` holds three epochs of a loader of seeds[0], each as its
    batches' samples; `again` the samples of a twin's first two epochs, `other` of one epoch with seeds[1], and
    `dropped` of one with drop_last; `turns` the epochs A1, B1, A2, B2 of two more loaders of seeds[0], both made
    before either was read, then read in turns; `zero` the first epochs of two loaders of seed 0. Batches that hold the same samples in every epoch fail: a real shuffle
    regroups them (for 17 samples or more in batches of 6 or fewer, the same grouping comes back twice running
    1 time in 3·10^6 at worst, three times 1 in 8·10^12)."""
    where = shuffle_label(n, size, seeds[0], dataset)
    first, second = samples_of(grouped[0]), samples_of(grouped[1])
    if sorted(first) != list(range(n)):
        return failed(f"{where}: one epoch gave samples {first}; every sample must appear exactly once.\n"
                      f"  Hint: {epoch_coverage_hint(n, first, grouped[0])}")
    if first == list(range(n)):
        return failed(f"{where}: the samples came in order 0, 1, 2, ...: shuffle=True must shuffle them.")
    if first == second:
        return failed(f"{where}: epoch 1 and epoch 2 came in the same order {first[:8]}...\n"
                      "  Hint: create the random generator once, in __init__, and draw a new permutation in every __iter__; "
                      "a generator re-created from the seed in __iter__ repeats the same order.")
    batches = [{frozenset(batch) for batch in e} for e in grouped]
    if all(b == batches[0] for b in batches):
        return failed(f"{where}: epochs 1 to {len(batches)} each put the same samples together: the batch of samples "
                      f"{sorted(grouped[0][0])} came in every epoch, as did every other batch; only the order of the "
                      "batches changed. Expected new batches each epoch.\n"
                      "  Hint: shuffle the samples, not the batches: take a new permutation of the n sample indices "
                      "in every __iter__ and cut it into batches, so each epoch mixes different samples together.")
    if [first, second] != again:
        return failed(f"{where}: two loaders with the same seed gave different orders ({first[:6]}... and {again[0][:6]}...).\n"
                      "  Hint: draw from a generator made from the seed (NumPy's default_rng), so a seed reproduces "
                      "the run: a generator made without the seed, or the global np.random functions, whose state "
                      "other code shares, draws differently every run.")
    problem = turns_problem(n, size, seeds[0], dataset, first, second, turns) if turns is not None else None
    if problem:
        return problem
    if zero is not None and zero[0] != zero[1]:
        return failed(f"{shuffle_label(n, size, 0, dataset)}: two loaders with seed=0 gave different orders "
                      f"({zero[0][:6]}... and {zero[1][:6]}...), though two with seed={seeds[0]} gave the same.\n"
                      "  Hint: 0 is a seed like any other, and it must reproduce its run too: a truth test of the seed "
                      "takes 0 for no seed at all; only None means no seed.")
    if first == other:
        return failed(f"{where}: seeds {seeds[0]} and {seeds[1]} gave the same order: the seed must drive the shuffle.")
    kept = n // size * size
    if len(dropped) != kept or len(set(dropped)) != kept or not set(dropped) <= set(range(n)):
        return failed(f"{where} with drop_last=True gave {len(dropped)} samples ({len(set(dropped))} distinct), "
                      f"expected {kept} distinct.")
    return passed("✔ DataLoader(shuffle=True): each epoch a new permutation, reproducible from the seed")


def turns_problem(n, size, seed, dataset, first, second, turns):
    """What is wrong with two loaders of `seed` read in turns (`turns`: epochs A1, B1, A2, B2), when a lone loader
    of that seed gave `first` and `second`: each must give those, whatever the other one does."""
    a1, b1, a2, b2 = turns
    if [a1, b1, a2, b2] == [first, first, second, second]:
        return None
    wrong, got, want = next(case for case in (("the first loader's epoch 1", a1, first), ("the second loader's epoch 1",
                            b1, first), ("the first loader's epoch 2", a2, second), ("the second loader's epoch 2", b2,
                            second)) if case[1] != case[2])
    shared = b1 == second and a1 == first
    return failed(f"two {shuffle_label(n, size, seed, dataset)}, both made before either was read and then read in "
                  f"turns (an epoch of one, then an epoch of the other): {wrong} came in the order {got[:6]}..., "
                  f"expected {want[:6]}..., the order a lone loader with seed={seed} gives.\n"
                  + ("  Hint: the second loader's first epoch came in the order of a lone loader's second epoch: the two "
                     "loaders draw from one shared stream. Each loader owns a generator made from its seed in __init__ "
                     "(NumPy's default_rng); NumPy's global generator (np.random.seed, np.random.permutation) is one "
                     "stream for all, which every new loader reseeds and every epoch read moves on."
                     if shared else
                     "  Hint: each loader draws from a generator of its own, made from its seed in __init__ (NumPy's "
                     "default_rng): reading one loader must not change the orders of another."))


def idx_bytes(array, compress=False):
    """The bytes of an IDX file, written the way LeCun's files are: big-endian header and data."""
    codes = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09, np.dtype(np.int16): 0x0B,
             np.dtype(np.int32): 0x0C, np.dtype(np.float32): 0x0D, np.dtype(np.float64): 0x0E}
    header = bytes([0, 0, codes[array.dtype], array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    payload = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    return gzip.compress(payload, mtime=0) if compress else payload


def idx_file(folder, name, array, compress):
    """A small IDX file (`idx_bytes`) in `folder`; its name ends in .gz when compressed."""
    path = Path(folder) / (name + (".gz" if compress else ""))
    path.write_bytes(idx_bytes(array, compress))
    return path


DIMMEST_WHITE = 240


def mnist_pixels(rng, shape):
    """The bytes of a file of dim images: 0 to DIMMEST_WHITE, both present, never 255, so that scaling by the file's
    own largest pixel (or its range) is told apart from dividing by 255."""
    raw = rng.integers(0, DIMMEST_WHITE + 1, size=shape, dtype=np.uint8)
    raw[0, 0, 0], raw[0, 0, 1] = 0, DIMMEST_WHITE
    return raw


def label_facts(label):
    """A label as a verdict reads it: (its value when it is an integer, else None; its repr; its type's name)."""
    integer = isinstance(label, (int, np.integer)) and not isinstance(label, bool)
    return int(label) if integer else None, repr(label)[:60], type_name(label)


def stored_problem(where, n, image_shape, stored):
    """What is wrong with the arrays `.images` and `.labels` a dataset of n images keeps, or None."""
    want = {"images": ("float32", (n, *image_shape)), "labels": ("int64", (n,))}
    for name, (dtype, shape) in want.items():
        facts = stored.get(name)
        if facts is None:
            return failed(f"{where}: the dataset has no attribute .{name}.\n  Hint: the text names the two arrays "
                          "the dataset keeps, .images and .labels: the cells after this exercise read them "
                          "(train_set.labels counts the digits per class).")
        kind, got_dtype, got_shape = facts
        if kind != "numpy.ndarray" or got_dtype != dtype or tuple(got_shape) != shape:
            return failed(f"{where}: .{name} is a {kind} of dtype {got_dtype or '-'} and shape {tuple(got_shape)}, "
                          f"expected a numpy array of dtype {dtype} and shape {shape}.\n  Hint: the text asks for "
                          "float32 images in [0, 1] and int64 labels: the bytes of the file are uint8, so convert "
                          "both when reading them.")
    return None


def check_mnist_dataset(namespace, real_files=None):
    MNISTDataset = namespace["MNISTDataset"]
    rng = np.random.default_rng(0)
    raw = mnist_pixels(rng, (7, 4, 5))
    labels = rng.integers(0, 10, size=7, dtype=np.uint8)
    saved = namespace.get("parse_idx")
    namespace["parse_idx"] = parse_idx
    try:
        with tempfile.TemporaryDirectory() as folder:
            images_path = str(idx_file(folder, "images-idx3-ubyte", raw, compress=True))
            labels_path = str(idx_file(folder, "labels-idx1-ubyte", labels, compress=True))
            try:
                ds = run_quietly(MNISTDataset, images_path, labels_path)
                n, sample = run_quietly(len, ds), run_quietly(ds.__getitem__, 3)
                stored = stored_facts(ds, type_name)
                image, label = sample
                counter = CountingTransform()
                augmented = run_quietly(MNISTDataset, images_path, labels_path, counter)
                calls_after_init = counter.calls
                doubled, label2 = run_quietly(augmented.__getitem__, 2)
            except Exception as error:  # noqa: BLE001
                return failed(describe_exception("MNISTDataset", "__init__/__getitem__", error))
            verdict = mnist_verdict(raw, labels, 3, 2, n, shown(image), label_facts(label), calls_after_init,
                                    (counter.calls, shown(doubled), label_facts(label2)[0]),
                                    "tuple" if isinstance(sample, tuple) else type_name(sample), stored)
        if real_files is None or not verdict.passed:
            return verdict
        want_images, want_labels = (parse_idx(path) for path in real_files)
        last = len(want_labels) - 1
        try:
            ds = run_quietly(MNISTDataset, *[str(p) for p in real_files])
            n = run_quietly(len, ds)
            image, label = run_quietly(ds.__getitem__, last)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("MNISTDataset", "__init__", error) + f"\n  while reading {real_files[0].name}.")
        return real_mnist_verdict(real_files[0].name, want_images, want_labels, last, n, shown(image), label_facts(label)[0])
    finally:
        if saved is None:
            namespace.pop("parse_idx", None)
        else:
            namespace["parse_idx"] = saved


def mnist_verdict(raw, labels, item, other, n, image, label, calls_after_init, augmented, item_type="tuple",
                  stored=None):
    """The verdict on MNISTDataset over IDX files of `raw` images and `labels`: `n` its len(), `image` and
    `label` (`label_facts`) its [item], `item_type` the type's name of that item; with a doubling transform, the
    calls while building, then `augmented` = (the calls, the image, the integer label) after reading [other];
    `stored` the arrays it keeps (`stored_facts`)."""
    where = f"MNISTDataset on a file of {len(raw)} images of {raw.shape[1]}×{raw.shape[2]} pixels"
    if n != len(raw):
        return failed(f"{where}: len() is {n}, expected {len(raw)}.")
    if item_type != "tuple":
        return failed(f"{where}: item {item} is a {item_type}, expected a tuple (image, label).\n"
                      "  Hint: in babygrad a sample is always a tuple of its fields (section 6.1), as ArrayDataset's "
                      "items are.")
    if not isinstance(image, np.ndarray) or image.shape != raw.shape[1:]:
        return failed(f"{where}: item {item}'s image is a {described(image)} of shape {np.shape(image)}, "
                      f"expected a numpy array of shape {raw.shape[1:]}.")
    if image.dtype != np.float32:
        return failed(f"{where}: images have dtype {image.dtype}, expected float32.")
    want = raw[item] / 255.0
    if not np.allclose(image, want, atol=1e-6):
        worst = np.unravel_index(np.argmax(np.abs(image - want)), image.shape)
        low, high = int(raw.min()), int(raw.max())
        own_range = high > low and np.allclose(image, (raw[item] - low) / (high - low), atol=1e-6)
        return failed(f"{where}: item {item} pixel {[int(i) for i in worst]} is {float(image[worst]):.4g}, expected "
                      f"{raw[item][worst]} / 255 = {raw[item][worst] / 255:.4g}.\n"
                      + (f"  Hint: these are the pixels scaled by the file's own range, {low} to {high}: the images of "
                         f"this file are dim, none reaches 255. The bytes' scale is 0..255 whatever a file holds, so "
                         "divide by 255: a pixel's value must not depend on the other images in the file."
                         if own_range else "  Hint: pixels are bytes 0..255; scale them to [0, 1] by dividing by 255."))
    value, text, kind = label
    if value is None or value != labels[item]:
        return failed(f"{where}: item {item}'s label is {text} ({kind}), expected the integer {labels[item]}.")
    problem = stored_problem(where, len(raw), raw.shape[1:], stored or {})
    if problem:
        return problem
    if calls_after_init != 0:
        return failed(f"{where}: the transform ran {calls_after_init} times while the dataset was built.\n"
                      "  Hint: apply transforms in __getitem__, to the one image read: a random augmentation "
                      "applied once at load time would never change from epoch to epoch.")
    calls, doubled, label2 = augmented
    if calls != 1 or not isinstance(doubled, np.ndarray) or doubled.shape != raw.shape[1:] \
            or not np.allclose(doubled, 2 * (raw[other] / 255.0), atol=1e-6) or label2 != labels[other]:
        return failed(f"{where} with transforms=t: reading item {other} called t {calls} time(s) and gave "
                      f"label {label2!r}; expected one call, on the scaled image only, and label {labels[other]}.")
    return passed("✔ MNISTDataset: images scaled to float32 in [0, 1], integer labels, transforms applied per item")


def real_mnist_verdict(name, want_images, want_labels, item, n, image, label):
    """The verdict on MNISTDataset over a real MNIST split: its len(), and its [item] (`label` an integer or None)."""
    if n != len(want_labels) or label is None or label != want_labels[item] or not isinstance(image, np.ndarray) \
            or image.shape != want_images.shape[1:] or not np.allclose(image, want_images[item] / 255.0, atol=1e-6):
        return failed(f"MNISTDataset on {name}: len {n}, label of item {item} {label}; "
                      f"expected {len(want_labels)} and {want_labels[item]}, with the image scaled to [0, 1].")
    return passed("✔ MNISTDataset: images scaled to float32 in [0, 1], integer labels, transforms applied per item")


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

LOADER_CHECKS = {"batches": check_loader_batches, "shuffle": check_loader_shuffle}


@register("data_loader")
def data_loader_check(namespace, name):
    """One property of DataLoader: `batches` (order, sizes, drop_last, len, dtypes) or `shuffle`."""
    return LOADER_CHECKS[name](namespace)


@register("mnist_dataset")
def mnist_dataset_check(namespace, real_split=None):
    """MNISTDataset with a known-good parser swapped in; with `real_split`, also on that MNIST split."""
    files = None
    if real_split:
        from autograder.student.datasets import mnist_files
        files = mnist_files(real_split)
    return check_mnist_dataset(namespace, files)
