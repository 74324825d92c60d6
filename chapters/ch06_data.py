# %% [markdown] locked
# # Chapter 6 · Data handling
#
# A model learns from examples, and it sees them in small groups: the gradient of one **batch** of
# 32 or 64 examples is a cheap, noisy estimate of the gradient over the whole training set, and taking
# many cheap steps beats taking a few exact ones. Between the files on disk and those batches sits
# a small pipeline that every deep-learning library has:
#
# ```
#   files ──parse──▶ Dataset ──ds[i]──▶ (image, label) ──transform──▶ DataLoader ──▶ batches of Tensors
#                    len(ds), ds[i]                     normalize, flatten,          (images, labels)
#                                                        random crop/flip            shuffled each epoch
# ```
#
# In this chapter you build it for babygrad, and at the end you read **MNIST**, the 70,000
# handwritten digits that chapter 7 trains a network on. You will write:
#
# 1. `ArrayDataset`, a dataset over NumPy arrays;
# 2. `DataLoader`, which cuts a dataset into batches, shuffled anew in every epoch;
# 3. five transforms: `Normalize`, `FlattenImage`, `RandomFlipHorizontal`, `RandomCrop`, `Compose`;
# 4. `parse_idx`, a reader for the IDX file format MNIST is stored in, and `MNISTDataset`.
#
# ### How to work in this notebook
#
# * Run the cells from the top. The first one loads chapters 2 to 5 (finished copies: your marks here
#   never depend on them) and the course's checks.
# * Fill in each cell that says `# YOUR CODE HERE` and delete the `raise NotImplementedError()`.
# * Run the check cell under it: `✔ ...` when it passes; otherwise it says what it tried, what it
#   expected, what it received, and the usual cause.
# * Check cells are locked and run again with **hidden tests** when you submit: more sizes, seeds
#   and files.

# %% provided
import gzip
import struct

import matplotlib.pyplot as plt
import numpy as np

from earlier_chapters import *          # chapters 2 to 5: Tensor, the operations, nn, optimizers
from autograder.student.checks import Checker
from autograder.student.datasets import describe_mnist, mnist_files

check = Checker(globals())

# %% [markdown] locked
# ## 6.1 Datasets
#
# A dataset answers two questions: how many samples are there, `len(ds)`, and what is sample `i`,
# `ds[i]`. Python calls `ds.__len__()` and `ds.__getitem__(i)` for them. Nothing else is asked of
# it, so a dataset can hold its samples in memory, read them from disk one at a time, or compute
# them on the fly: the code that consumes it does not change.
#
# In babygrad a sample is always a **tuple** of NumPy values, one per *field*: `(image, label)` for
# MNIST, `(features,)` for unlabelled data. The loader of section 6.2 relies on that. The base class
# below only names the two methods.

# %% provided export
class Dataset:
    """A collection of samples: `len(ds)` of them, and `ds[i]`, a tuple of NumPy values."""

    def __len__(self):
        raise NotImplementedError()

    def __getitem__(self, index):
        raise NotImplementedError()

# %% [markdown] locked
# ### Exercise: `ArrayDataset` (2 points)
#
# The simplest dataset wraps arrays that are already in memory, all with the same number of rows:
# sample `i` is row `i` of each. With `x` of shape `(6, 2)` and `y = [3, 1, 4, 1, 5, 9]`,
# `ArrayDataset(x, y)[4]` is `(x[4], 9)` and `len(...)` is 6. With a single array, `ArrayDataset(x)[2]`
# is still a tuple, `(x[2],)`.
#
# Arrays of different lengths are a bug in the caller: raise a `ValueError` saying so, at once,
# rather than failing later at some sample index.

# %% solution id=array_dataset export
class ArrayDataset(Dataset):
    """Samples are the rows of arrays of equal length: ds[i] = (arrays[0][i], arrays[1][i], ...)."""

    def __init__(self, *arrays):
        ### BEGIN SOLUTION
        lengths = {len(a) for a in arrays}
        if len(lengths) != 1:
            raise ValueError(f"ArrayDataset needs arrays of equal length, got lengths {[len(a) for a in arrays]}")
        self.arrays = arrays
        ### END SOLUTION

    def __len__(self):
        ### BEGIN SOLUTION
        return len(self.arrays[0])
        ### END SOLUTION

    def __getitem__(self, index):
        ### BEGIN SOLUTION
        return tuple(a[index] for a in self.arrays)
        ### END SOLUTION

# %% test id=test_array_dataset points=2
verdict = check.array_dataset()
assert verdict.passed, verdict.message

# %% [markdown] locked
# ## 6.2 The `DataLoader`
#
# The loader walks through a dataset in batches. For a dataset of 10 samples and `batch_size=4`:
#
# ```
#   samples   0 1 2 3 | 4 5 6 7 | 8 9        three batches: 4, 4 and 2 samples
#                                            drop_last=True: only the two full ones
# ```
#
# so `len(loader)` is $\lceil 10/4 \rceil = 3$, or $\lfloor 10/4 \rfloor = 2$ with `drop_last=True`.
# Dropping the short batch keeps every step the same size, which some layers (batch norm) prefer.
#
# **Collating.** A batch of 4 MNIST samples is 4 tuples `(image, label)`. The network wants one
# tensor of images and one of labels, so the loader regroups the batch *field by field*:
# `zip(*samples)` gives all the images, then all the labels, and `np.stack` turns each group into
# one array with a new first axis, here `(4, 28, 28)` and `(4,)`. Each becomes a
# `Tensor(stacked, dtype=stacked.dtype, requires_grad=False)`: data is not a parameter, so it needs
# no gradient, and it **keeps its dtype**: images stay float32 and labels stay integers (the
# `Tensor` default, float32, would turn the class labels `3` into `3.0`, and the loss of chapter 4
# indexes with them).
#
# **Shuffling.** If the samples always come in the same order, consecutive steps see correlated
# data (all the zeros, then all the ones), and the model chases each group in turn. So with
# `shuffle=True` each **epoch**, each full pass over the data, visits the samples in a new random
# order: a permutation of `0 .. n-1`, so every sample is seen exactly once per epoch.
#
# The order must also be **reproducible**: with the same `seed`, a run must see the same batches, so
# that a result can be repeated and a bug chased. Both wishes are met by one random generator made
# from the seed in `__init__`, `np.random.default_rng(seed)`, that draws a fresh permutation
# (`self.rng.permutation(n)`) at the start of every `__iter__`. Epoch 2 continues the generator's
# stream, so it differs from epoch 1, and a new loader with the same seed replays the same stream.
#
# `__iter__` is easiest to write as a *generator*: a method that `yield`s one batch at a time.
#
# The course's solution adds a shortcut you need not write: when the dataset is an `ArrayDataset`,
# whose samples are rows of arrays, it takes a whole batch with one fancy index per array,
# `np.asarray(a)[order[start:stop]]`, instead of calling `dataset[i]` once per sample. The batches
# are the same, and chapter 9's MLP trains about a tenth faster. If you write such a shortcut too, the
# checks run your loader over your own `ArrayDataset` as well (its labels a list, as in the example
# above), and it must give exactly the batches that reading one sample at a time gives.

# %% solution id=data_loader export
def collate(values):
    """One field of a batch's samples, stacked along a new first axis, as a Tensor of the same dtype."""
    ### BEGIN SOLUTION
    stacked = np.stack([np.asarray(v) for v in values])
    return Tensor(stacked, dtype=stacked.dtype, requires_grad=False)
    ### END SOLUTION


class DataLoader:
    """Iterates over `dataset` in batches: tuples of Tensors, one per field of the samples."""

    def __init__(self, dataset, batch_size=1, shuffle=False, *, seed=None, drop_last=False):
        ### BEGIN SOLUTION
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.rng = np.random.default_rng(seed)
        ### END SOLUTION

    def __len__(self):
        ### BEGIN SOLUTION
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        ### END SOLUTION

    def __iter__(self):
        ### BEGIN SOLUTION
        n = len(self.dataset)
        order = self.rng.permutation(n) if self.shuffle else np.arange(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            if type(self.dataset) is ArrayDataset:      # rows of arrays: one fancy index per array, no per-sample calls
                rows = order[start:start + self.batch_size]
                yield tuple(Tensor(batch, dtype=batch.dtype, requires_grad=False)
                            for batch in (np.asarray(a)[rows] for a in self.dataset.arrays))
                continue
            samples = [self.dataset[int(i)] for i in order[start:start + self.batch_size]]
            yield tuple(collate(field) for field in zip(*samples))
        ### END SOLUTION

# %% [markdown] locked
# The checks feed your loader a probe dataset whose sample `i` is an image filled with `i` and the
# label `i`, so they can see exactly which samples each batch holds.

# %% test id=test_data_loader_batches points=3
verdict = check.data_loader("batches")
assert verdict.passed, verdict.message

# %% test id=test_data_loader_shuffle points=3
verdict = check.data_loader("shuffle")
assert verdict.passed, verdict.message

# %% [markdown] locked
# ### Question 6.A · Why shuffle (2 points, graded by your instructor)
#
# Suppose MNIST's training file were sorted by label: all the 0s, then all the 1s, and so on. Describe
# what the loss and the model's predictions would do during one epoch trained with `shuffle=False`,
# and why the same data shuffled trains well. Then say why the test loader is not shuffled, and why a
# fixed `seed` is useful.
#
# ### BEGIN MARK SCHEME
# **2 points.** All of:
# * sorted: each stretch of steps shows one class; the model learns to answer that class (the loss
#   drops within the stretch), then the loss jumps when the next class starts; at the end of the epoch
#   it answers mostly 9. Batches of one class are biased estimates of the full gradient, and each
#   stretch undoes what the previous one taught;
# * shuffled: each batch is a random sample of all classes, so its gradient estimates the gradient over
#   the whole training set;
# * test: accuracy and mean loss do not depend on the order, so shuffling buys nothing (a fixed order
#   also makes runs comparable sample by sample); seed: the same permutation every run, so results can
#   be reproduced and compared (and graded).
#
# **1 point.** The sorted-data behaviour explained, but without the reason (biased gradient) or
# without the test/seed part.
#
# **0 points.** "Shuffling adds randomness, which is good" with no mechanism.
# ### END MARK SCHEME

# %% answer id=q_shuffle points=2
# Sorted, the first thousands of steps see only zeros. The quickest way to lower the loss on them is to
# answer "0" for everything, so the loss falls fast. When the ones start, every answer is wrong: the
# loss jumps, and the next steps push the model towards "1", undoing the zeros. This repeats for each
# class, and after the epoch the model mostly answers 9, the last class it saw. Each batch's gradient
# is meant to estimate the gradient over the whole training set, and a batch of a single class is a
# badly biased estimate. Shuffled, every batch mixes all classes in about their true proportions, so
# each step moves the model towards being right on all of them.
#
# The test loader only measures: accuracy and mean loss are the same in any order, so shuffling would
# change nothing but would make two evaluations harder to compare sample by sample. The seed makes the
# permutation the same on every run, so a result can be reproduced exactly, by me later or by a grader.

# %% [markdown] locked
# ## 6.3 Transforms
#
# Raw pixels are rarely what a model should see. A **transform** is any callable that takes one
# image, a NumPy array of shape `(H, W)` (or `(H, W, C)` with colour channels), and returns a new
# one. The dataset applies it each time a sample is read.
#
# **Normalize.** Pixels in $[0, 1]$ all share the sign and sit far from 0 on average; a layer's
# weights then all get gradients of the same sign and learn slowly. Subtracting the mean and
# dividing by the standard deviation of the training pixels centres the inputs at 0 with spread 1:
# $x' = (x - \mu)/\sigma$. For MNIST, $\mu = 0.1307$ and $\sigma = 0.3081$, so a black pixel becomes
# $(0 - 0.1307)/0.3081 = -0.424$ and a white one $(1 - 0.1307)/0.3081 = 2.82$. `mean` and `std` may
# also be arrays with one value per channel; NumPy's broadcasting handles both. Return float32.
#
# **FlattenImage.** The networks of chapter 7 take a vector per sample: a $28 \times 28$ image
# becomes 784 numbers, row after row. (It is not the `Flatten` module of chapter 4, which flattens
# a whole batch inside a network; this one works on a single image, before batching.)

# %% solution id=normalize export
class Normalize:
    """(image - mean) / std: inputs centred at 0 with spread 1."""

    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, image):
        ### BEGIN SOLUTION
        return ((image - self.mean) / self.std).astype(np.float32)
        ### END SOLUTION

# %% test id=test_normalize points=1
verdict = check.transform("normalize")
assert verdict.passed, verdict.message

# %% solution id=flatten_image export
class FlattenImage:
    """One image of shape (H, W) or (H, W, C) as a vector of H·W·C values, row by row."""

    def __call__(self, image):
        ### BEGIN SOLUTION
        return image.reshape(-1)
        ### END SOLUTION

# %% test id=test_flatten_image points=1
verdict = check.transform("flatten_image")
assert verdict.passed, verdict.message

# %% [markdown] locked
# ### Data augmentation
#
# A digit shifted two pixels to the left is still the same digit. Showing the model such variants
# of its training images, made up fresh each time an image is read, multiplies the data for free
# and teaches the model not to care about the variation: this is **data augmentation**. Random
# transforms carry their own generator, made from a `seed` in `__init__` (given below), like the loader.
#
# **RandomFlipHorizontal(p).** With probability $p$, mirror the image left to right: reverse the
# **width** axis, axis 1, `image[:, ::-1]` (axis 0 would turn it upside down). Draw
# `self.rng.random()`, a number uniform in $[0, 1)$, and flip when it is below $p$: that happens with
# probability exactly $p$. Mirroring suits photographs (a cat facing left is still a cat); for
# digits it is a bad idea, as the picture further down shows, so chapter 7 does not use it.
#
# **RandomCrop(size, padding).** Surround the image with `padding` rows and columns of zeros on
# every side, then cut out a random `size` × `size` window. With a $28 \times 28$ digit,
# `padding=2` and `size=28`, the padded image is $32 \times 32$ and the window's top-left corner can
# be at rows and columns $0, 1, 2, 3, 4$: the digit moves by up to 2 pixels each way, 25 possible
# positions. In general, for an image of $H$ rows and $W$ columns (not always square: the check
# crops a $4 \times 7$ image too), the corner's row ranges over $0 \ldots H + 2p - \text{size}$ and
# its column over $0 \ldots W + 2p - \text{size}$, both inclusive: draw each on its own, the row with
# `self.rng.integers(0, H + 2 * p - size + 1)` and the column with `W` in place of `H` (`integers`
# excludes its upper bound).
# `np.pad(image, ((p, p), (p, p)))` pads with zeros; a colour image needs `(0, 0)` for its channel
# axis too, so the channels are never padded or cropped.

# %% solution id=random_flip export
class RandomFlipHorizontal:
    """Mirror an image left to right with probability p."""

    def __init__(self, p=0.5, *, seed=None):
        self.p = p
        self.rng = np.random.default_rng(seed)      # its own generator: a seed reproduces the flips

    def __call__(self, image):
        ### BEGIN SOLUTION
        if self.rng.random() < self.p:
            return image[:, ::-1]
        return image
        ### END SOLUTION

# %% test id=test_random_flip points=2
verdict = check.transform("flip")
assert verdict.passed, verdict.message

# %% solution id=random_crop export
class RandomCrop:
    """A random size × size window of the image padded with `padding` zeros on every side."""

    def __init__(self, size, padding=0, *, seed=None):
        self.size, self.padding = size, padding
        self.rng = np.random.default_rng(seed)

    def __call__(self, image):
        ### BEGIN SOLUTION
        p, size = self.padding, self.size
        padded = np.pad(image, [(p, p), (p, p)] + [(0, 0)] * (image.ndim - 2))
        top = self.rng.integers(0, padded.shape[0] - size + 1)
        left = self.rng.integers(0, padded.shape[1] - size + 1)
        return padded[top:top + size, left:left + size]
        ### END SOLUTION

# %% test id=test_random_crop points=3
verdict = check.transform("crop")
assert verdict.passed, verdict.message

# %% [markdown] locked
# **Compose.** A dataset takes a single `transforms` callable, so several transforms are chained
# into one: `Compose([a, b, c])(x)` is `c(b(a(x)))`, **first to last**. Order matters:
# `Compose([RandomCrop(28, padding=2), Normalize(0.1307, 0.3081)])` pads with true black (0) and then
# normalizes it, while the opposite order would pad a normalized image with 0, which is now
# mid-grey.

# %% solution id=compose export
class Compose:
    """Several transforms applied in order, as one."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, image):
        ### BEGIN SOLUTION
        for transform in self.transforms:
            image = transform(image)
        return image
        ### END SOLUTION

# %% test id=test_compose points=1
verdict = check.transform("compose")
assert verdict.passed, verdict.message

# %% [markdown] locked
# ### Question 6.B · Whose statistics (1 point, graded by your instructor)
#
# `Normalize(0.1307, 0.3081)` uses the mean and standard deviation of the pixels of the 60,000
# training images, for training and for testing. Why not normalize each test batch with its own mean
# and standard deviation, or the test set with the test set's?
#
# ### BEGIN MARK SCHEME
# **1 point.** Two of: the model's weights were learned for inputs scaled by the training statistics,
# so a test image must go through the same fixed function; with per-batch statistics a prediction
# would depend on which other images are in the batch (and a single image could not be normalized
# meaningfully); statistics of the test set use the test data to prepare the model's input, and in
# real use there is no test set, only one new image at a time.
#
# **0.5 points.** One of those reasons.
#
# **0 points.** None, or "the test set is too small".
# ### END MARK SCHEME

# %% answer id=q_normalize points=1
# The network learned its weights for pixels transformed by $x \mapsto (x - 0.1307)/0.3081$; a test
# image must go through exactly that function, or the model sees inputs on a different scale from the
# ones it learned. With each batch's own statistics the same image would be transformed differently
# depending on which other images share its batch, so its prediction would depend on them, and a batch
# of a single image would have nothing to be normalized with. Statistics computed on the test set
# would also let the test data shape the model's input, and once the model is in use there is no test
# set at all, just one new image at a time.

# %% [markdown] locked
# ## 6.4 Reading MNIST: the IDX format
#
# MNIST comes as four files in Yann LeCun's **IDX** format, a header followed by the raw numbers:
#
# | bytes | meaning | in `train-images-idx3-ubyte` |
# |---|---|---|
# | 0–1 | always `00 00` | `00 00` |
# | 2 | type code of the numbers | `08`: unsigned bytes |
# | 3 | number of dimensions, `ndim` | `03` |
# | 4 … 4 + 4·ndim | each dimension's size, a 4-byte integer | `00 00 ea 60` = 60000, `00 00 00 1c` = 28, `00 00 00 1c` = 28 |
# | the rest | the numbers, row by row | 60000 · 28 · 28 bytes |
#
# The first four bytes together are the file's *magic number*. The type codes are
#
# | code | `0x08` | `0x09` | `0x0B` | `0x0C` | `0x0D` | `0x0E` |
# |---|---|---|---|---|---|---|
# | type | uint8 | int8 | int16 | int32 | float32 | float64 |
#
# Every number of more than one byte, sizes and data alike, is stored **big-endian**: most significant
# byte first. `00 00 ea 60` is $0xea \cdot 256 + 0x60 = 234 \cdot 256 + 96 = 60000$. Most computers
# are little-endian and would read those bytes as a very different number, so say the byte order
# explicitly: `struct.unpack(">3I", four_times_three_bytes)` reads three big-endian unsigned 4-byte
# integers, and NumPy's dtype `">i2"` means big-endian int16.
#
# The files are gzip-compressed, and a name ending in `.gz` says so: open those with `gzip.open`
# instead of `open`, and you get the same bytes. The cell below shows the first 16 bytes of the
# course's copy.

# %% provided
images_path, labels_path = mnist_files("train")
print(describe_mnist())
with gzip.open(images_path, "rb") as f:
    head = f.read(16)
print(images_path.name, "starts with", head.hex(" "))
print("as big-endian 4-byte integers:", struct.unpack(">4I", head))

# %% [markdown] locked
# ### Exercise: `parse_idx` (6 points)
#
# `parse_idx(path)` returns the file's numbers as a NumPy array of the shape its header gives, with
# the dtype of its type code (the table `IDX_TYPES` below has them as big-endian NumPy dtypes).
# `np.frombuffer(data, dtype=..., offset=...)` turns bytes into an array without copying them.
#
# Real files get truncated by a failed download, or a path points at the wrong file. Check what you
# read and raise a `ValueError` **that names the file** and says what is wrong when:
#
# * the file does not start with two zero bytes (it is not IDX);
# * the type code is not in the table;
# * the data is not exactly $\prod \text{sizes} \times$ itemsize bytes long.
#
# Otherwise a broken file surfaces as a `KeyError` or a reshape error far from its cause.

# %% provided export
import gzip
import struct

IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

# %% solution id=parse_idx export
def parse_idx(path):
    """The array stored in an IDX file (gzip-compressed when its name ends in .gz)."""
    ### BEGIN SOLUTION
    path = str(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path}: not an IDX file (it must start with two zero bytes)")
    code, ndim = raw[2], raw[3]
    if code not in IDX_TYPES:
        raise ValueError(f"{path}: unknown IDX type code {code:#04x}")
    start = 4 + 4 * ndim
    if len(raw) < start:
        raise ValueError(f"{path}: the header is cut short")
    shape = struct.unpack(f">{ndim}I", raw[4:start])
    dtype = np.dtype(IDX_TYPES[code])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - start != expected:
        raise ValueError(f"{path}: {len(raw) - start} bytes of data, expected {expected} for shape {shape}")
    return np.frombuffer(raw, dtype=dtype, offset=start).reshape(shape)
    ### END SOLUTION

# %% test id=test_parse_idx_bytes points=2
verdict = check.parse_idx("bytes")
assert verdict.passed, verdict.message

# %% test id=test_parse_idx_types points=2
verdict = check.parse_idx("types")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(*[check.parse_idx("types", seed=seed) for seed in (11, 12, 13)])
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_parse_idx_errors points=2
verdict = check.parse_idx("errors")
assert verdict.passed, verdict.message

# %% [markdown] locked
# ### Exercise: `MNISTDataset` (3 points)
#
# Now a dataset over a pair of IDX files. In `__init__`, read both with your `parse_idx` and keep
# them as two attributes: `self.images`, **float32 in $[0, 1]$** (the bytes are 0 to 255: divide by
# 255), and `self.labels`, integers of dtype **`int64`** (the file's bytes are `uint8`: convert them).
# The cells after this exercise read `train_set.labels`, and the check looks at both attributes.
# `__getitem__(i)` returns `(image, label)`: image `i`, of shape `(28, 28)`, after `transforms` when
# there are some, and its label.
#
# Apply the transforms in `__getitem__`, to the one image being read, never in `__init__` to all of
# them: a random crop applied once at load time would give the same crop in every epoch.
# Reading all 60,000 images into memory takes a second and 188 MB as float32, fine on a laptop.

# %% solution id=mnist_dataset export
class MNISTDataset(Dataset):
    """MNIST's images (float32 in [0, 1], shape (28, 28)) and labels (int64), read from IDX files."""

    def __init__(self, images_path, labels_path, transforms=None):
        ### BEGIN SOLUTION
        self.images = parse_idx(images_path).astype(np.float32)
        self.images /= 255.0                  # in place: no second 188 MB array
        self.labels = parse_idx(labels_path).astype(np.int64)
        if len(self.images) != len(self.labels):
            raise ValueError(f"{len(self.images)} images but {len(self.labels)} labels")
        self.transforms = transforms
        ### END SOLUTION

    def __len__(self):
        ### BEGIN SOLUTION
        return len(self.labels)
        ### END SOLUTION

    def __getitem__(self, index):
        ### BEGIN SOLUTION
        image = self.images[index]
        if self.transforms is not None:
            image = self.transforms(image)
        return image, self.labels[index]
        ### END SOLUTION

# %% [markdown] locked
# The check swaps in a parser that comes with the course while it runs, so this exercise is graded
# on its own, whatever the state of your `parse_idx`.

# %% test id=test_mnist_dataset points=3
verdict = check.mnist_dataset()
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.mnist_dataset(real_split="test")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 6.5 Looking at the data
#
# Always look at your data before training on it. Here are the first 24 training digits with
# their labels (you may recognise the famous 5, 0, 4, 1, 9 that open the file).

# %% provided
train_set = MNISTDataset(*mnist_files("train"))
test_set = MNISTDataset(*mnist_files("test"))
print(f"{len(train_set)} training and {len(test_set)} test digits")
print("digits per class in the training set:", np.bincount(train_set.labels, minlength=10).tolist())

fig, axes = plt.subplots(3, 8, figsize=(8, 3.4))
for i, ax in enumerate(axes.flat):
    image, label = train_set[i]
    ax.imshow(image, cmap="gray_r")
    ax.set_title(str(label), fontsize=10)
    ax.axis("off")
fig.suptitle("The first 24 MNIST training digits")
plt.tight_layout()
plt.show()

# %% [markdown] locked
# And augmentation at work: one digit, then eight random crops of it with `padding=3`, then the
# same digit mirrored. The crops are still plainly the same digit, a little shifted: good training
# variety. The mirrored 7 is no digit at all, which is why chapter 7 leaves flips out.

# %% provided
digit, label = train_set[15]
crop = RandomCrop(28, padding=3, seed=0)
variants = [digit] + [crop(digit) for _ in range(8)] + [RandomFlipHorizontal(p=1.0)(digit)]
titles = ["original"] + [f"crop {i}" for i in range(1, 9)] + ["flipped"]
fig, axes = plt.subplots(1, 10, figsize=(10, 1.6))
for ax, image, title in zip(axes, variants, titles):
    ax.imshow(image, cmap="gray_r")
    ax.set_title(title, fontsize=8)
    ax.axis("off")
plt.show()

# %% [markdown] locked
# Finally the whole pipeline, as chapter 7 uses it: normalize, flatten, shuffle, batch. Every batch
# is a pair of Tensors ready for a network: 64 vectors of 784 inputs, and 64 integer labels.

# %% provided
pipeline = Compose([Normalize(0.1307, 0.3081), FlattenImage()])
loader = DataLoader(MNISTDataset(*mnist_files("train"), transforms=pipeline), batch_size=64, shuffle=True, seed=0)
images, labels = next(iter(loader))
print(f"{len(loader)} batches per epoch")
print("images:", images.shape, images.dtype, f"mean {images.data.mean():.3f}, std {images.data.std():.3f}")
print("labels:", labels.shape, labels.dtype, labels.data[:12])

# %% [markdown] locked
# Your pipeline now turns files on disk into shuffled, normalized batches. Chapter 7 decides how a
# network's weights should start, and then trains one on these digits.
