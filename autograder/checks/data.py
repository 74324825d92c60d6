"""Checks of chapter 6's datasets and loaders: ArrayDataset, DataLoader and MNISTDataset.

Each check builds its own probe data, so a broken parser or transform costs only its own exercise:
the DataLoader check feeds a probe dataset, and the MNISTDataset check swaps in a known-good IDX
parser while it runs.
"""
import gzip
import struct
import tempfile
from pathlib import Path

import numpy as np

from ..verdict import failed, passed
from .describe import type_name
from .ops import describe_exception, run_quietly


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


def check_array_dataset(namespace):
    ArrayDataset = namespace["ArrayDataset"]
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    y = np.array([3, 1, 4, 1, 5, 9])
    try:
        ds = run_quietly(ArrayDataset, x, y)
        n = run_quietly(len, ds)
        sample = run_quietly(ds.__getitem__, 4)
        one = run_quietly(ArrayDataset(x).__getitem__, 2)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("ArrayDataset", "__init__/__len__/__getitem__", error))
    where = "ArrayDataset(x of shape (6, 2), y of shape (6,))"
    if n != 6:
        return failed(f"{where}: len() is {n}, expected 6.\n  Hint: the number of samples is len(arrays[0]).")
    if not isinstance(sample, tuple) or len(sample) != 2:
        return failed(f"{where}[4] returned a {type_name(sample)}, expected a tuple (x[4], y[4]).")
    if not (np.array_equal(sample[0], x[4]) and np.asarray(sample[1]) == y[4]):
        return failed(f"{where}[4] returned {sample}, expected ({x[4]}, {y[4]}).\n"
                      "  Hint: item i takes row i of every array.")
    if not isinstance(one, tuple) or len(one) != 1 or not np.array_equal(one[0], x[2]):
        return failed(f"ArrayDataset(x)[2] returned {one!r}, expected the 1-tuple ({x[2]},): "
                      "a dataset of one array still returns a tuple, so loaders treat every dataset alike.")
    try:
        run_quietly(ArrayDataset, x, y[:5])
    except ValueError:
        return passed("✔ ArrayDataset: len, items as tuples, and a ValueError for arrays of different lengths")
    except Exception as error:  # noqa: BLE001
        return failed(f"ArrayDataset(x of 6 rows, y of 5) raised {type(error).__name__}, expected ValueError.")
    return failed("ArrayDataset(x of 6 rows, y of 5) was accepted: raise ValueError when the arrays' lengths differ.")


def epoch(loader):
    """All batches of one pass, or the exception raised."""
    return run_quietly(lambda: list(iter(loader)))


def batch_problem(Tensor, batch, want_size):
    """What is wrong with one batch of the probe dataset, or None."""
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        return f"a batch must be a tuple (images, labels); got a {type_name(batch)}"
    images, labels = batch
    for name, t in (("images", images), ("labels", labels)):
        if not isinstance(t, Tensor):
            return f"{name} is a {type_name(t)}, expected a Tensor (wrap the stacked array)"
        if t.requires_grad:
            return f"{name} has requires_grad=True: data is not a parameter, make it requires_grad=False"
    if tuple(images.shape) != (want_size, 2, 3):
        return f"images has shape {tuple(images.shape)}, expected {(want_size, 2, 3)}: stack the samples along a new first axis"
    if images.dtype != np.float32:
        return f"images has dtype {images.dtype}, expected float32"
    if tuple(labels.shape) != (want_size,):
        return f"labels has shape {tuple(labels.shape)}, expected {(want_size,)}"
    if not np.issubdtype(labels.dtype, np.integer):
        return (f"labels has dtype {labels.dtype}, expected an integer dtype: keep each field's own dtype, "
                "Tensor(stacked, dtype=stacked.dtype, requires_grad=False); class labels are not floats")
    if not np.array_equal(images.data[:, 0, 0], labels.data):
        return "images and labels of a batch come from different samples"
    return None


def indices(batches):
    return [int(i) for batch in batches for i in np.asarray(batch[1].data)]


def check_loader_batches(namespace):
    Tensor, DataLoader = namespace["Tensor"], namespace["DataLoader"]
    cases = [(10, 4, False, [4, 4, 2]), (10, 4, True, [4, 4]), (10, 5, False, [5, 5]), (3, 1, False, [1, 1, 1])]
    for n, size, drop_last, sizes in cases:
        where = f"DataLoader(dataset of {n} samples, batch_size={size}, drop_last={drop_last})"
        try:
            loader = run_quietly(lambda: DataLoader(ProbeDataset(n), batch_size=size, drop_last=drop_last))
            batches = epoch(loader)
            count = run_quietly(len, loader)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("DataLoader", "__iter__", error) + f"\n  while iterating {where}.")
        got = [len(np.asarray(b[1].data)) if isinstance(b, (tuple, list)) and len(b) == 2 and isinstance(b[1], Tensor)
               else None for b in batches]
        if got != sizes:
            hint = ("the last, smaller batch is kept unless drop_last=True" if not drop_last else
                    "with drop_last=True the last batch is dropped when it is smaller than batch_size")
            return failed(f"{where} gave batches of sizes {got}, expected {sizes}.\n  Hint: {hint}.")
        for batch, want in zip(batches, sizes):
            problem = batch_problem(Tensor, batch, want)
            if problem:
                return failed(f"{where}: {problem}.")
        if indices(batches) != list(range(sum(sizes))):
            return failed(f"{where} without shuffling gave samples {indices(batches)}, expected 0, 1, 2, ... in order.")
        if count != len(sizes):
            return failed(f"{where}: len(loader) is {count}, but iterating gives {len(sizes)} batches.\n"
                          "  Hint: ceil(n / batch_size) batches, or floor when drop_last=True.")
    return passed("✔ DataLoader: batches in order, the last partial batch kept (or dropped), len() and dtypes right")


def check_loader_shuffle(namespace):
    DataLoader = namespace["DataLoader"]
    n, size = 23, 5
    where = f"DataLoader(dataset of {n} samples, batch_size={size}, shuffle=True, seed=3)"

    def epochs(seed, count=2, drop_last=False):
        loader = DataLoader(ProbeDataset(n), batch_size=size, shuffle=True, seed=seed, drop_last=drop_last)
        return [indices(epoch(loader)) for _ in range(count)]

    try:
        first, second = run_quietly(epochs, 3)
        again = run_quietly(epochs, 3)
        other = run_quietly(epochs, 4)
        (dropped,) = run_quietly(epochs, 3, 1, True)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("DataLoader", "__iter__", error) + f"\n  while iterating {where}.")
    if sorted(first) != list(range(n)):
        return failed(f"{where}: one epoch gave samples {first}; every sample must appear exactly once.\n"
                      "  Hint: shuffle a permutation of the indices, np.random.Generator.permutation(len(dataset)).")
    if first == list(range(n)):
        return failed(f"{where}: the samples came in order 0, 1, 2, ...: shuffle=True must shuffle them.")
    if first == second:
        return failed(f"{where}: epoch 1 and epoch 2 came in the same order {first[:8]}...\n"
                      "  Hint: create the random generator once, in __init__, and draw a new permutation in every __iter__; "
                      "a generator re-created from the seed in __iter__ repeats the same order.")
    if [first, second] != again:
        return failed(f"{where}: two loaders with the same seed gave different orders ({first[:6]}... and {again[0][:6]}...).\n"
                      "  Hint: use np.random.default_rng(seed), not the global np.random functions, so a seed reproduces the run.")
    if first == other[0]:
        return failed(f"{where}: seeds 3 and 4 gave the same order: the seed must drive the shuffle.")
    if len(dropped) != 20 or len(set(dropped)) != 20:
        return failed(f"{where} with drop_last=True gave {len(dropped)} samples ({len(set(dropped))} distinct), expected 20 distinct.")
    return passed("✔ DataLoader(shuffle=True): each epoch a new permutation, reproducible from the seed")


def idx_file(folder, name, array, compress):
    """A small IDX file written the way LeCun's files are: big-endian header and data."""
    codes = {np.dtype(np.uint8): 0x08, np.dtype(np.int8): 0x09, np.dtype(np.int16): 0x0B,
             np.dtype(np.int32): 0x0C, np.dtype(np.float32): 0x0D, np.dtype(np.float64): 0x0E}
    header = bytes([0, 0, codes[array.dtype], array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    payload = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    path = Path(folder) / (name + (".gz" if compress else ""))
    path.write_bytes(gzip.compress(payload, mtime=0) if compress else payload)
    return path


def reference_parse_idx(path):
    """A known-good IDX reader, swapped in while MNISTDataset is checked."""
    raw = Path(path).read_bytes()
    raw = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    dtype = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}[raw[2]]
    shape = struct.unpack(f">{raw[3]}I", raw[4:4 + 4 * raw[3]])
    return np.frombuffer(raw, dtype=dtype, offset=4 + 4 * raw[3]).reshape(shape).astype(np.dtype(dtype).newbyteorder("="))


class CountingTransform:
    """Doubles an image and counts its calls: shows when and to what a dataset applies its transforms."""

    def __init__(self):
        self.calls = 0

    def __call__(self, image):
        self.calls += 1
        return image * 2


def check_mnist_dataset(namespace, real_files=None):
    MNISTDataset = namespace["MNISTDataset"]
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=(7, 4, 5), dtype=np.uint8)
    raw[0, 0, 0], raw[0, 0, 1] = 0, 255
    labels = rng.integers(0, 10, size=7, dtype=np.uint8)
    saved = namespace.get("parse_idx")
    namespace["parse_idx"] = reference_parse_idx
    try:
        with tempfile.TemporaryDirectory() as folder:
            images_path = str(idx_file(folder, "images-idx3-ubyte", raw, compress=True))
            labels_path = str(idx_file(folder, "labels-idx1-ubyte", labels, compress=True))
            where = "MNISTDataset on a file of 7 images of 4×5 pixels"
            try:
                ds = run_quietly(MNISTDataset, images_path, labels_path)
                n, (image, label) = run_quietly(len, ds), run_quietly(ds.__getitem__, 3)
                counter = CountingTransform()
                augmented = run_quietly(MNISTDataset, images_path, labels_path, counter)
                calls_after_init = counter.calls
                doubled, label2 = run_quietly(augmented.__getitem__, 2)
            except Exception as error:  # noqa: BLE001
                return failed(describe_exception("MNISTDataset", "__init__/__getitem__", error))
            if n != 7:
                return failed(f"{where}: len() is {n}, expected 7.")
            if not isinstance(image, np.ndarray) or image.shape != (4, 5):
                return failed(f"{where}: item 3's image is a {type_name(image)} of shape {np.shape(image)}, "
                              "expected a numpy array of shape (4, 5).")
            if image.dtype != np.float32:
                return failed(f"{where}: images have dtype {image.dtype}, expected float32.")
            if not np.allclose(image, raw[3] / 255.0, atol=1e-6):
                worst = np.unravel_index(np.argmax(np.abs(image - raw[3] / 255.0)), image.shape)
                return failed(f"{where}: item 3 pixel {list(worst)} is {float(image[worst]):.4g}, expected "
                              f"{raw[3][worst]} / 255 = {raw[3][worst] / 255:.4g}.\n"
                              "  Hint: pixels are bytes 0..255; scale them to [0, 1] by dividing by 255.")
            if not isinstance(label, (int, np.integer)) or label != labels[3]:
                return failed(f"{where}: item 3's label is {label!r} ({type_name(label)}), expected the integer {labels[3]}.")
            if calls_after_init != 0:
                return failed(f"{where}: the transform ran {calls_after_init} times while the dataset was built.\n"
                              "  Hint: apply transforms in __getitem__, to the one image read: a random augmentation "
                              "applied once at load time would never change from epoch to epoch.")
            if counter.calls != 1 or not np.allclose(doubled, 2 * (raw[2] / 255.0), atol=1e-6) or label2 != labels[2]:
                return failed(f"{where} with transforms=t: reading item 2 called t {counter.calls} time(s) and gave "
                              f"label {label2!r}; expected one call, on the scaled image only, and label {labels[2]}.")
        if real_files is not None:
            want_images, want_labels = (reference_parse_idx(path) for path in real_files)
            last = len(want_labels) - 1
            try:
                ds = run_quietly(MNISTDataset, *[str(p) for p in real_files])
                image, label = run_quietly(ds.__getitem__, last)
            except Exception as error:  # noqa: BLE001
                return failed(describe_exception("MNISTDataset", "__init__", error) + f"\n  while reading {real_files[0].name}.")
            if len(ds) != len(want_labels) or label != want_labels[last] or \
                    not np.allclose(image, want_images[last] / 255.0, atol=1e-6):
                return failed(f"MNISTDataset on {real_files[0].name}: len {len(ds)}, last label {label}; "
                              f"expected {len(want_labels)} and {want_labels[last]}, with the last image scaled to [0, 1].")
    finally:
        if saved is None:
            namespace.pop("parse_idx", None)
        else:
            namespace["parse_idx"] = saved
    return passed("✔ MNISTDataset: images scaled to float32 in [0, 1], integer labels, transforms applied per item")
