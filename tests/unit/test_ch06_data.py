"""Chapter 6's checks: the solution passes, realistic wrong answers fail with a message that teaches,
and the IDX reader and the MNIST lookup work on files these tests write themselves."""
import gzip
import struct

import numpy as np
import pytest

from autograder.student import datasets
from autograder.student.checks import Checker

from helpers.solved_code import solved_namespace


@pytest.fixture(scope="module")
def ns():
    return solved_namespace("ch06")


@pytest.fixture
def check(ns):
    return Checker(ns, verbose=False)


def variant(ns, name, **methods):
    """A subclass of the solution's class `name` with some methods replaced."""
    return type(f"My{name}", (ns[name],), methods)


def with_names(ns, **replacements):
    """A copy of the namespace with some names replaced: the checks look names up there."""
    return Checker(dict(ns, **replacements), verbose=False)


def test_the_solution_passes_every_check(check):
    verdicts = [check.array_dataset(), check.data_loader("batches"), check.data_loader("shuffle"),
                *[check.transform(n) for n in ("normalize", "flatten_image", "flip", "crop", "compose")],
                *[check.parse_idx(n) for n in ("bytes", "types", "errors")],
                *[check.parse_idx("types", seed=s) for s in range(5)],
                check.mnist_dataset(), check.mnist_dataset(real_split="test")]
    assert [v.message for v in verdicts if not v.passed] == []


def test_checks_write_nothing_to_stderr(ns, capfd):
    broken = variant(ns, "DataLoader", __iter__=lambda self: iter([np.float32(1) / np.float32(0)]))
    Checker(dict(ns, DataLoader=broken), verbose=True).data_loader("batches")
    Checker(ns, verbose=True).transform("crop")
    assert capfd.readouterr().err == ""


def test_array_dataset_without_length_check_fails(ns):
    def __init__(self, *arrays):
        self.arrays = arrays
    verdict = with_names(ns, ArrayDataset=variant(ns, "ArrayDataset", __init__=__init__)).array_dataset()
    assert not verdict.passed and "ValueError" in verdict.message


def test_loader_with_float_labels_is_told_to_keep_the_dtype(ns):
    Tensor = ns["Tensor"]

    def __iter__(self):
        for batch in ns["DataLoader"].__iter__(self):
            yield tuple(Tensor(t.data, requires_grad=False) for t in batch)     # float32, the Tensor default
    verdict = with_names(ns, DataLoader=variant(ns, "DataLoader", __iter__=__iter__)).data_loader("batches")
    assert not verdict.passed
    assert "labels has dtype float32" in verdict.message and "float32 is the Tensor default" in verdict.message
    assert "keeps its own dtype" in verdict.message and "Tensor(" not in verdict.message


def test_loader_that_reseeds_every_epoch_is_caught(ns):
    def __iter__(self):
        self.rng = np.random.default_rng(3)          # re-created from the seed: every epoch the same
        yield from ns["DataLoader"].__iter__(self)
    verdict = with_names(ns, DataLoader=variant(ns, "DataLoader", __iter__=__iter__)).data_loader("shuffle")
    assert not verdict.passed and "epoch 1 and epoch 2 came in the same order" in verdict.message


def test_loader_that_drops_the_partial_batch_names_the_sizes(ns):
    def __len__(self):
        return len(self.dataset) // self.batch_size
    verdict = with_names(ns, DataLoader=variant(ns, "DataLoader", __len__=__len__)).data_loader("batches")
    assert not verdict.passed and "batches of sizes [4, 4], expected [4, 4, 2]" in verdict.message


def test_loader_that_drops_a_full_last_batch_is_told_nothing_is_dropped_then(ns):
    def __len__(self):
        return -(-len(self.dataset) // self.batch_size) - (1 if self.drop_last else 0)
    verdict = with_names(ns, DataLoader=variant(ns, "DataLoader", __len__=__len__)).data_loader("batches")
    assert not verdict.passed and "batch_size=5, drop_last=True) gave batches of sizes [5], expected [5, 5]" \
        in verdict.message and "so here nothing is dropped" in verdict.message, verdict.message


def with_shortcut(ns, rows_of):
    """The solution's DataLoader, with a shortcut for ArrayDataset that takes each batch's rows as
    `rows_of(order, start, batch_size)` by fancy indexing."""
    Tensor, ArrayDataset, DataLoader = ns["Tensor"], ns["ArrayDataset"], ns["DataLoader"]

    def __iter__(self):
        if type(self.dataset) is not ArrayDataset:
            yield from DataLoader.__iter__(self)
            return
        n = len(self.dataset)
        order = self.rng.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            rows = rows_of(order, start, self.batch_size)
            yield tuple(Tensor(np.asarray(a)[rows], dtype=np.asarray(a).dtype, requires_grad=False)
                        for a in self.dataset.arrays)
    return with_names(ns, DataLoader=variant(ns, "DataLoader", __iter__=__iter__))


def test_a_shortcut_for_array_datasets_that_ignores_the_shuffle_is_caught(ns):
    check = with_shortcut(ns, lambda order, start, size: np.arange(start, min(start + size, len(order))))
    assert check.data_loader("batches").passed
    verdict = check.data_loader("shuffle")
    assert not verdict.passed and "DataLoader(ArrayDataset of 23 samples" in verdict.message
    assert "came in order 0, 1, 2" in verdict.message and "over a plain dataset your loader passed" in verdict.message


def test_a_right_shortcut_for_array_datasets_passes(ns):
    check = with_shortcut(ns, lambda order, start, size: order[start:start + size])
    assert [v.message for v in (check.data_loader("batches"), check.data_loader("shuffle")) if not v.passed] == []


def test_a_broken_array_dataset_costs_the_loader_nothing(ns):
    """The loader checks run over the student's ArrayDataset only when it holds the probe's samples."""
    def __getitem__(self, index):
        return self.arrays[0][index]                 # a bare row, no label
    check = with_names(ns, ArrayDataset=variant(ns, "ArrayDataset", __getitem__=__getitem__))
    assert not check.array_dataset().passed
    assert check.data_loader("batches").passed and check.data_loader("shuffle").passed


@pytest.mark.parametrize("name, check_name", [("Normalize", "normalize"), ("RandomFlipHorizontal", "flip")])
def test_a_transform_that_writes_into_its_input_is_caught(ns, name, check_name):
    """Right outputs, written back into the image given: a dataset's stored image would change."""
    right = ns[name].__call__

    def in_place(self, image):
        image[...] = np.array(right(self, image))
        return image
    verdict = with_names(ns, **{name: variant(ns, name, __call__=in_place)}).transform(check_name)
    assert not verdict.passed and "changed the image it was given" in verdict.message, verdict.message


def test_loader_that_shuffles_the_batches_not_the_samples_is_caught(ns):
    def __iter__(self):
        n, size = len(self.dataset), self.batch_size
        starts = list(range(0, n, size))
        self.rng.shuffle(starts)                    # the same samples share a batch every epoch
        for start in starts:
            samples = [self.dataset[i] for i in range(start, min(start + size, n))]
            yield tuple(ns["collate"](field) for field in zip(*samples))
    verdict = with_names(ns, DataLoader=variant(ns, "DataLoader", __iter__=__iter__)).data_loader("shuffle")
    assert not verdict.passed and "only the order of the batches changed" in verdict.message, verdict.message


def test_vertical_flip_is_named(ns):
    def __call__(self, image):
        return image[::-1] if self.rng.random() < self.p else image
    verdict = with_names(ns, RandomFlipHorizontal=variant(ns, "RandomFlipHorizontal", __call__=__call__)).transform("flip")
    assert not verdict.passed and "upside down" in verdict.message


def test_crop_that_never_reaches_the_last_position_says_which(ns):
    def __call__(self, image):
        p, size = self.padding, self.size
        padded = np.pad(image, [(p, p), (p, p)] + [(0, 0)] * (image.ndim - 2))
        top = self.rng.integers(0, padded.shape[0] - size)       # off by one
        left = self.rng.integers(0, padded.shape[1] - size)
        return padded[top:top + size, left:left + size]
    verdict = with_names(ns, RandomCrop=variant(ns, "RandomCrop", __call__=__call__)).transform("crop")
    assert not verdict.passed and "never came up" in verdict.message, verdict.message
    assert "top edges stopped at 3, one short of 4" in verdict.message
    assert "leaves out its upper bound" in verdict.message and "integers(0" not in verdict.message


def test_crop_that_draws_both_edges_from_the_height_is_named(ns):
    def __call__(self, image):
        p, size = self.padding, self.size
        padded = np.pad(image, [(p, p), (p, p)] + [(0, 0)] * (image.ndim - 2))
        top = self.rng.integers(0, padded.shape[0] - size + 1)
        left = self.rng.integers(0, padded.shape[0] - size + 1)      # the height's range: right for squares only
        return padded[top:top + size, left:left + size]
    verdict = with_names(ns, RandomCrop=variant(ns, "RandomCrop", __call__=__call__)).transform("crop")
    assert not verdict.passed and "on a 4×7 image" in verdict.message, verdict.message
    assert "the range of the top edges" in verdict.message and "upper bound" not in verdict.message


def test_reversed_compose_is_named(ns):
    def __call__(self, image):
        for t in reversed(self.transforms):
            image = t(image)
        return image
    verdict = with_names(ns, Compose=variant(ns, "Compose", __call__=__call__)).transform("compose")
    assert not verdict.passed and "last to first" in verdict.message


def write_idx(path, array, code):
    """An IDX file written by hand, byte by byte, independently of the checks' own writer."""
    header = bytes([0, 0, code, array.ndim]) + b"".join(struct.pack(">I", n) for n in array.shape)
    body = array.astype(array.dtype.newbyteorder(">")).tobytes()
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(header + body)
    return path


@pytest.mark.parametrize("name, array, code", [
    ("a-idx3-ubyte.gz", np.arange(24, dtype=np.uint8).reshape(2, 3, 4), 0x08),
    ("b-idx2-short", np.array([[-300, 2], [1000, -1]], dtype=np.int16), 0x0B),
    ("c-idx1-float.gz", np.array([1.5, -2.25, 1e-3], dtype=np.float32), 0x0D),
    ("d-idx1-double", np.array([np.pi, -np.e]), 0x0E),
])
def test_solution_parse_idx_reads_files_written_by_hand(ns, tmp_path, name, array, code):
    got = ns["parse_idx"](write_idx(tmp_path / name, array, code))
    assert got.shape == array.shape and np.array_equal(got, array)


def test_solution_parse_idx_names_the_file_of_a_truncated_one(ns, tmp_path):
    path = write_idx(tmp_path / "cut-idx2", np.ones((4, 4), dtype=np.int32), 0x0C)
    path.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(ValueError, match="cut-idx2"):
        ns["parse_idx"](path)


def test_parse_idx_without_size_check_fails_the_errors_check(ns):
    def parse_idx(path):                 # trusts the header: a truncated file fails inside NumPy
        raw = open(path, "rb").read()
        if raw[:2] != b"\0\0" or raw[2] not in ns["IDX_TYPES"]:
            raise ValueError(f"{path}: not IDX")
        shape = struct.unpack(f">{raw[3]}I", raw[4:4 + 4 * raw[3]])
        return np.frombuffer(raw, ns["IDX_TYPES"][raw[2]], offset=4 + 4 * raw[3]).reshape(shape)
    verdict = with_names(ns, parse_idx=parse_idx).parse_idx("errors")
    assert not verdict.passed and "does not say which file" in verdict.message


def test_parse_idx_that_accepts_bytes_to_spare_fails_the_errors_check(ns):
    def parse_idx(path):
        raw = open(path, "rb").read()
        if raw[:2] != b"\0\0" or raw[2] not in ns["IDX_TYPES"]:
            raise ValueError(f"{path}: not IDX")
        start, dtype = 4 + 4 * raw[3], np.dtype(ns["IDX_TYPES"][raw[2]])
        shape = struct.unpack(f">{raw[3]}I", raw[4:start])
        if len(raw) - start < int(np.prod(shape)) * dtype.itemsize:        # short data refused, surplus data read
            raise ValueError(f"{path}: data cut short")
        return np.frombuffer(raw, dtype, count=int(np.prod(shape)), offset=start).reshape(shape)
    verdict = with_names(ns, parse_idx=parse_idx).parse_idx("errors")
    assert not verdict.passed and "3 bytes after its 12 bytes of data" in verdict.message, verdict.message
    assert "no fewer and no more" in verdict.message


def test_mnist_dataset_check_grades_with_its_own_parser_and_restores_the_students(ns):
    def broken(path):
        raise RuntimeError("a broken parser")
    namespace = dict(ns, parse_idx=broken)
    assert Checker(namespace, verbose=False).mnist_dataset().passed
    assert namespace["parse_idx"] is broken


def test_mnist_dataset_that_transforms_at_load_time_is_caught(ns):
    def __init__(self, images_path, labels_path, transforms=None):
        ns["MNISTDataset"].__init__(self, images_path, labels_path)
        if transforms is not None:
            self.images = np.stack([transforms(im) for im in self.images])
    verdict = with_names(ns, MNISTDataset=variant(ns, "MNISTDataset", __init__=__init__)).mnist_dataset()
    assert not verdict.passed and "while the dataset was built" in verdict.message


def test_mnist_dataset_keeps_int64_labels_in_the_attributes_the_text_names(ns):
    """The text names .images and .labels (later cells read train_set.labels) and asks for int64 labels."""
    def uint8(self, images_path, labels_path, transforms=None):
        ns["MNISTDataset"].__init__(self, images_path, labels_path, transforms)
        self.labels = self.labels.astype(np.uint8)

    def renamed(self, images_path, labels_path, transforms=None):
        ns["MNISTDataset"].__init__(self, images_path, labels_path, transforms)
        self.x, self.y = self.images, self.labels
        del self.images, self.labels
    methods = {"__len__": lambda self: len(self.y), "__getitem__": lambda self, i: (self.x[i], self.y[i])}
    verdict = with_names(ns, MNISTDataset=variant(ns, "MNISTDataset", __init__=uint8)).mnist_dataset()
    assert not verdict.passed and ".labels is a numpy.ndarray of dtype uint8" in verdict.message, verdict.message
    verdict = with_names(ns, MNISTDataset=variant(ns, "MNISTDataset", __init__=renamed, **methods)).mnist_dataset()
    assert not verdict.passed and "no attribute .images" in verdict.message, verdict.message


def test_a_last_batch_that_comes_twice_is_told_as_such(ns):
    """Every sample came, one batch twice: neither a missing sample nor the partial batch's rule is the cause."""
    def __iter__(self):
        n = len(self.dataset)
        order = self.rng.permutation(n) if self.shuffle else np.arange(n)
        starts = list(range(0, n, self.batch_size))
        if not self.drop_last and n % self.batch_size:
            starts.append(n - n % self.batch_size)
        for start in starts:
            samples = [self.dataset[int(i)] for i in order[start:start + self.batch_size]]
            yield tuple(ns["collate"](field) for field in zip(*samples))
    check = with_names(ns, DataLoader=variant(ns, "DataLoader", __iter__=__iter__))
    batches, shuffle = check.data_loader("batches"), check.data_loader("shuffle")
    assert not batches.passed and "batch 4 held the same samples as batch 3" in batches.message, batches.message
    assert not shuffle.passed and "every sample came, but batch 6 held the same samples as batch 5" in shuffle.message
    assert "never came" not in shuffle.message


def test_embedded_mnist_is_all_of_mnist(ns):
    images, labels = (ns["parse_idx"](p) for p in datasets.mnist_files("train"))
    assert images.shape == (60_000, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    test_images, test_labels = (ns["parse_idx"](p) for p in datasets.mnist_files("test"))
    assert test_images.shape == (10_000, 28, 28) and test_labels[:5].tolist() == [7, 2, 1, 0, 4]
    assert "ships with the course" in datasets.describe_mnist()


def test_a_students_own_copy_comes_first(tmp_path, monkeypatch):
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte"):
        (tmp_path / stem).write_bytes(b"")
    monkeypatch.setenv(datasets.ENV_VAR, str(tmp_path))
    monkeypatch.setattr(datasets, "HOME_DIR", tmp_path / "nowhere")
    assert datasets.mnist_dir() == datasets.EMBEDDED_DIR          # three of four files: not a copy
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(b"")
    assert datasets.mnist_files("test") == (tmp_path / "t10k-images-idx3-ubyte", tmp_path / "t10k-labels-idx1-ubyte.gz")
    assert str(tmp_path) in datasets.describe_mnist()
    with pytest.raises(ValueError):
        datasets.mnist_files("validation")


def test_an_epoch_that_is_not_a_permutation_is_told_by_what_it_shows():
    from autograder.student.checks.ch06_data import loader_shuffle_verdict
    n, order = 23, [int(i) for i in np.random.default_rng(0).permutation(23)]

    def batches(samples):
        return [samples[i:i + 5] for i in range(0, len(samples), 5)]

    drawn = [int(i) for i in np.random.default_rng(1).integers(0, n, size=n)]       # indices drawn at random
    verdict = loader_shuffle_verdict(n, 5, (3, 4), [batches(drawn), batches(order), batches(order[::-1])],
                                     [drawn, order], order, order[:20])
    assert not verdict.passed and "came more than once" in verdict.message, verdict.message
    cut = order[:20]                                                                  # the last batch never came
    verdict = loader_shuffle_verdict(n, 5, (3, 4), [batches(cut), batches(order), batches(order[::-1])],
                                     [cut, order], order, order[:20])
    assert not verdict.passed and "none twice" in verdict.message and "drawing" not in verdict.message, verdict.message


def test_sizes_read_little_endian_are_named():
    import gzip as _gzip

    from autograder.student.checks.ch06_data_idx import check_idx_bytes

    def little_endian_sizes(path):
        raw = _gzip.open(path).read() if str(path).endswith(".gz") else open(path, "rb").read()
        ndim = raw[3]
        sizes = struct.unpack("<" + "I" * ndim, raw[4:4 + 4 * ndim])
        return np.frombuffer(raw[4 + 4 * ndim:], dtype=np.uint8).reshape(sizes)

    verdict = check_idx_bytes(little_endian_sizes)
    assert not verdict.passed and "read little-endian" in verdict.message, verdict.message


def test_data_read_little_endian_is_named_only_when_the_bytes_are_reversed():
    from autograder.student.checks.ch06_data_idx import parsed_problem

    want = np.array([[300, -2], [7, 1000]], dtype=np.int16)
    reversed_bytes = parsed_problem(want.byteswap(), want, "a file")
    assert "with its 2 bytes in reverse order" in reversed_bytes and "big-endian" in reversed_bytes, reversed_bytes
    assert "'>i2'" not in reversed_bytes
    other = parsed_problem(want + 1, want, "a file")
    assert "big-endian" in other and "reverse order" not in other, other
    assert "Hint" not in parsed_problem(np.array([1, 2], dtype=np.uint8), np.array([1, 3], dtype=np.uint8), "a file")


@pytest.mark.parametrize("broken, shown", [
    (lambda raw: len(raw) < 4 or raw[0] != 0 and raw[1] != 0, "accepted a file whose first byte is zero but whose second is not"),
    (lambda raw: raw[0] != 0 or raw[1] != 0, "on an empty file raised IndexError")])
def test_parse_idx_must_refuse_half_a_magic_number_and_an_empty_file(ns, broken, shown):
    """Two zero bytes both, and before anything reads them, that there are bytes at all."""
    def parse_idx(path):
        with open(path, "rb") as f:
            raw = f.read()
        if broken(raw) or raw[2] not in ns["IDX_TYPES"]:
            raise ValueError(f"{path}: not an IDX file, or an unknown type")
        start, dtype = 4 + 4 * raw[3], np.dtype(ns["IDX_TYPES"][raw[2]])
        shape = struct.unpack(f">{raw[3]}I", raw[4:start])
        if len(raw) - start != int(np.prod(shape)) * dtype.itemsize:
            raise ValueError(f"{path}: wrong size")
        return np.frombuffer(raw, dtype=dtype, offset=start).reshape(shape)
    verdict = with_names(ns, parse_idx=parse_idx).parse_idx("errors")
    assert not verdict.passed and shown in verdict.message, verdict.message
    assert "Hint:" in verdict.message
