"""Chapter 6's catalog of typical mistakes, and of correct answers written another way.

Each entry is an answer a student might really write, given as edits to the solved exercise cell,
with the test cells it must lose (`loses`; empty for a correct alternative). The tests grade them
with the real `nbgrader autograde` and require exactly those cells to lose their points. The demo's
"partial" student makes the mistakes named in DEMO_PARTIAL.
"""
from autograder.build.submissions import Edit, Mistake, right, wrong



LENGTH_CHECK = '''        lengths = {len(a) for a in arrays}
        if len(lengths) != 1:
            raise ValueError(f"ArrayDataset needs arrays of equal length, got lengths {[len(a) for a in arrays]}")
'''
ORDER = "order = self.rng.permutation(n) if self.shuffle else np.arange(n)"
LOOP = "for start in range(0, len(self) * self.batch_size, self.batch_size):"
SHORTCUT = '''            if type(self.dataset) is ArrayDataset:      # rows of arrays: one fancy index per array, no per-sample calls
                rows = order[start:start + self.batch_size]
                yield tuple(Tensor(batch, dtype=batch.dtype, requires_grad=False)
                            for batch in (np.asarray(a)[rows] for a in self.dataset.arrays))
                continue
'''
MNIST_SCALING = ("        self.images = parse_idx(images_path).astype(np.float32)\n"
                 "        self.images /= 255.0                  # in place: no second 188 MB array\n")
SIZE_CHECK = '''    if len(raw) - start != expected:
        raise ValueError(f"{path}: {len(raw) - start} bytes of data, expected {expected} for shape {shape}")
'''
CROP_CORNER = '''        top = self.rng.integers(0, padded.shape[0] - size + 1)
        left = self.rng.integers(0, padded.shape[1] - size + 1)'''

MISTAKES = [
    # DataLoader
    wrong("loader_len_drops_a_full_batch", "with drop_last, counts ceil(n / batch_size) - 1 batches: a full last "
          "batch is dropped when batch_size divides n", "data_loader",
          "return n // self.batch_size if self.drop_last else -(-n // self.batch_size)",
          "return -(-n // self.batch_size) - (1 if self.drop_last else 0)", ["test_data_loader_batches"]),
    # DataLoader's shortcut for ArrayDataset: the checks run the loader over the student's ArrayDataset too, when it
    # holds their samples (a broken ArrayDataset costs its own exercise only)
    wrong("loader_shortcut_ignores_shuffle", "the shortcut for ArrayDataset takes rows start..start+size, not the "
          "shuffled order's", "data_loader", "rows = order[start:start + self.batch_size]",
          "rows = np.arange(start, min(start + self.batch_size, n))", ["test_data_loader_shuffle"],
          needs=["array_dataset"]),
    wrong("loader_shortcut_default_dtype", "the shortcut for ArrayDataset wraps its batches with the Tensor default "
          "dtype: float labels", "data_loader", "yield tuple(Tensor(batch, dtype=batch.dtype, requires_grad=False)",
          "yield tuple(Tensor(batch, requires_grad=False)", ["test_data_loader_batches"],
          needs=["array_dataset"]),
    wrong("loader_shortcut_indexes_lists", "the shortcut for ArrayDataset fancy-indexes what it holds as is: a list "
          "of labels, as in the chapter's example, raises", "data_loader", "(np.asarray(a)[rows] for a in",
          "(a[rows] for a in", ["test_data_loader_batches", "test_data_loader_shuffle"],
          needs=["array_dataset"]),
    Mistake("loader_global_seed", "seeds NumPy's global generator in __init__ and shuffles with np.random.permutation: "
            "two loaders share one stream", (Edit("data_loader", "self.rng = np.random.default_rng(seed)",
                                                  "np.random.seed(seed)"),
                                             Edit("data_loader", ORDER,
                                                  "order = np.random.permutation(n) if self.shuffle else np.arange(n)")),
            ("test_data_loader_shuffle",)),
    wrong("loader_seed_truthiness", "`if seed` takes seed=0 for no seed: seed 0 does not reproduce its run",
          "data_loader", "self.rng = np.random.default_rng(seed)",
          "self.rng = np.random.default_rng(seed) if seed else np.random.default_rng()", ["test_data_loader_shuffle"]),
    wrong("loader_two_fields", "unpacks every batch into images and labels: samples of one field, (features,), fail",
          "data_loader", "            yield tuple(collate(field) for field in zip(*samples))",
          "            images, labels = zip(*samples)\n            yield collate(images), collate(labels)",
          ["test_data_loader_batches"]),
    # ArrayDataset
    wrong("array_dataset_first_two_lengths", "compares the lengths of the first two arrays only", "array_dataset",
          LENGTH_CHECK, """        if len(arrays) > 1 and len(arrays[0]) != len(arrays[1]):
            raise ValueError("arrays of different lengths")
""", ["test_array_dataset"]),
    wrong("array_dataset_two_fields", "items hold rows of the first two arrays only", "array_dataset",
          "return tuple(a[index] for a in self.arrays)", "return tuple(a[index] for a in self.arrays[:2])",
          ["test_array_dataset"]),
    wrong("array_dataset_no_length_check", "accepts arrays of different lengths", "array_dataset",
          LENGTH_CHECK, "", ["test_array_dataset"]),
    wrong("array_dataset_bare_single", "returns a bare row, not a 1-tuple, for a single array", "array_dataset",
          "return tuple(a[index] for a in self.arrays)",
          "items = tuple(a[index] for a in self.arrays)\n        return items[0] if len(items) == 1 else items",
          ["test_array_dataset"]),
    wrong("array_dataset_len_of_arrays", "len() counts the arrays instead of the samples", "array_dataset",
          "return len(self.arrays[0])", "return len(self.arrays)", ["test_array_dataset"]),
    # DataLoader
    wrong("loader_float_labels", "collates every field with the Tensor default dtype, float32", "data_loader",
          "return Tensor(stacked, dtype=stacked.dtype, requires_grad=False)",
          "return Tensor(stacked, requires_grad=False)", ["test_data_loader_batches"]),
    wrong("loader_always_drops_last", "stops before the last partial batch even without drop_last", "data_loader",
          LOOP, "for start in range(0, n - self.batch_size + 1, self.batch_size):",
          ["test_data_loader_batches", "test_data_loader_shuffle"]),
    wrong("loader_len_floor", "len() rounds down even when the partial batch is kept", "data_loader",
          "return n // self.batch_size if self.drop_last else -(-n // self.batch_size)", "return n // self.batch_size",
          ["test_data_loader_batches", "test_data_loader_shuffle"]),
    Mistake("loader_reseeds_every_epoch", "builds the generator from the seed in __iter__: every epoch in the same order",
            (Edit("data_loader", "self.rng = np.random.default_rng(seed)", "self.seed = seed"),
             Edit("data_loader", ORDER, "order = np.random.default_rng(self.seed).permutation(n) if self.shuffle else np.arange(n)")),
            ("test_data_loader_shuffle",)),
    wrong("loader_shuffles_batches_not_samples", "shuffles the order of the batches: each batch keeps the same samples every epoch",
          "data_loader", ORDER + "\n        " + LOOP, """order = np.arange(n)
        starts = list(range(0, len(self) * self.batch_size, self.batch_size))
        if self.shuffle:
            self.rng.shuffle(starts)
        for start in starts:""", ["test_data_loader_shuffle"]),
    wrong("loader_global_random", "shuffles with the global np.random: the seed does nothing", "data_loader",
          ORDER, "order = np.random.permutation(n) if self.shuffle else np.arange(n)", ["test_data_loader_shuffle"]),
    # Normalize
    wrong("normalize_in_place", "normalizes the image it is given in place (-=, /=) and returns it", "normalize",
          "return ((image - self.mean) / self.std).astype(np.float32)",
          "image -= self.mean\n        image /= self.std\n        return image.astype(np.float32, copy=False)",
          ["test_normalize"]),
    wrong("normalize_swapped", "divides by the mean and subtracts the std", "normalize",
          "return ((image - self.mean) / self.std).astype(np.float32)",
          "return ((image - self.std) / self.mean).astype(np.float32)", ["test_normalize"]),
    wrong("normalize_denormalizes", "x * std + mean: the inverse", "normalize",
          "return ((image - self.mean) / self.std).astype(np.float32)",
          "return (image * self.std + self.mean).astype(np.float32)", ["test_normalize"]),
    # FlattenImage
    wrong("flatten_adds_batch_axis", "returns shape (1, H·W)", "flatten_image",
          "return image.reshape(-1)", "return image.reshape(1, -1)", ["test_flatten_image"]),
    wrong("flatten_column_order", "flattens column by column", "flatten_image",
          "return image.reshape(-1)", "return image.T.reshape(-1)", ["test_flatten_image"]),
    # RandomFlipHorizontal
    wrong("flip_in_place", "mirrors the image it is given in place and returns it", "random_flip",
          "return image[:, ::-1]", "image[...] = image[:, ::-1].copy()\n            return image", ["test_random_flip"]),
    wrong("flip_vertical", "mirrors top to bottom", "random_flip",
          "return image[:, ::-1]", "return image[::-1]", ["test_random_flip"]),
    wrong("flip_inverted_probability", "flips when the draw is above p", "random_flip",
          "if self.rng.random() < self.p:", "if self.rng.random() > self.p:", ["test_random_flip"]),
    wrong("flip_global_random", "draws from np.random instead of its own generator", "random_flip",
          "if self.rng.random() < self.p:", "if np.random.random() < self.p:", ["test_random_flip"]),
    # RandomCrop
    wrong("crop_off_by_one", "integers(0, H + 2p - size) never reaches the last position", "random_crop",
          CROP_CORNER, '''        top = self.rng.integers(0, padded.shape[0] - size)
        left = self.rng.integers(0, padded.shape[1] - size)''', ["test_random_crop"]),
    wrong("crop_ignores_padding", "crops the unpadded image", "random_crop",
          "padded = np.pad(image, [(p, p), (p, p)] + [(0, 0)] * (image.ndim - 2))", "padded = image",
          ["test_random_crop"]),
    wrong("crop_pads_channels", "np.pad(image, p) pads the channel axis too", "random_crop",
          "padded = np.pad(image, [(p, p), (p, p)] + [(0, 0)] * (image.ndim - 2))", "padded = np.pad(image, p)",
          ["test_random_crop"]),
    wrong("crop_square_only", "draws the left edge from the height's range too (copy-paste): right for square images only",
          "random_crop", CROP_CORNER, '''        top = self.rng.integers(0, padded.shape[0] - size + 1)
        left = self.rng.integers(0, padded.shape[0] - size + 1)''', ["test_random_crop"]),
    # Compose
    wrong("compose_reversed", "applies the transforms last to first", "compose",
          "for transform in self.transforms:", "for transform in reversed(self.transforms):", ["test_compose"]),
    wrong("compose_not_chained", "applies each transform to the original image", "compose",
          "        for transform in self.transforms:\n            image = transform(image)\n        return image",
          "        result = image\n        for transform in self.transforms:\n            result = transform(image)\n        return result",
          ["test_compose"]),
    # parse_idx
    wrong("idx_little_endian_sizes", "reads the sizes little-endian", "parse_idx",
          'shape = struct.unpack(f">{ndim}I", raw[4:start])', 'shape = struct.unpack(f"<{ndim}I", raw[4:start])',
          ["test_parse_idx_bytes", "test_parse_idx_types"]),
    wrong("idx_native_byte_order", "reads multi-byte numbers in the machine's byte order", "parse_idx",
          "dtype = np.dtype(IDX_TYPES[code])", "dtype = np.dtype(IDX_TYPES[code].lstrip('>'))",
          ["test_parse_idx_types"]),
    wrong("idx_no_gzip", "opens .gz files as raw bytes", "parse_idx",
          'opener = gzip.open if path.endswith(".gz") else open', "opener = open",
          ["test_parse_idx_bytes", "test_parse_idx_types"]),
    wrong("idx_no_size_check", "trusts the sizes: a truncated file fails inside NumPy", "parse_idx",
          SIZE_CHECK, "", ["test_parse_idx_errors"]),
    wrong("idx_accepts_surplus_bytes", "checks only that enough bytes are there: extra bytes after the data pass", "parse_idx",
          SIZE_CHECK + "    return np.frombuffer(raw, dtype=dtype, offset=start).reshape(shape)",
          SIZE_CHECK.replace("len(raw) - start != expected", "len(raw) - start < expected")
          + "    return np.frombuffer(raw, dtype=dtype, count=int(np.prod(shape)), offset=start).reshape(shape)",
          ["test_parse_idx_errors"]),
    wrong("idx_magic_both_nonzero", "refuses a file only when both of its first two bytes are nonzero", "parse_idx",
          "raw[0] != 0 or raw[1] != 0", "raw[0] != 0 and raw[1] != 0", ["test_parse_idx_errors"]),
    wrong("idx_empty_file_index_error", "reads the first bytes before checking there are any: an empty file raises "
          "IndexError", "parse_idx", "len(raw) < 4 or raw[0] != 0", "raw[0] != 0", ["test_parse_idx_errors"]),
    wrong("idx_path_as_str", "calls str methods on the path: a pathlib.Path, as mnist_files gives, fails", "parse_idx",
          "    path = str(path)\n", "", ["test_parse_idx_bytes"]),
    wrong("idx_error_without_file", "raises a ValueError that does not say which file", "parse_idx",
          'raise ValueError(f"{path}: not an IDX file (it must start with two zero bytes)")',
          'raise ValueError("not an IDX file")', ["test_parse_idx_errors"]),
    # MNISTDataset
    wrong("mnist_no_scaling", "keeps pixels in 0..255", "mnist_dataset",
          MNIST_SCALING, "        self.images = parse_idx(images_path).astype(np.float32)\n", ["test_mnist_dataset"]),
    wrong("mnist_transforms_at_load", "applies the transforms once, to every image, in __init__", "mnist_dataset",
          "        self.transforms = transforms\n",
          "        if transforms is not None:\n            self.images = np.stack([transforms(im) for im in self.images])\n"
          "        self.transforms = None\n", ["test_mnist_dataset"]),
    wrong("mnist_divides_by_max", "scales by the file's largest pixel instead of 255", "mnist_dataset",
          "self.images /= 255.0", "self.images /= self.images.max()", ["test_mnist_dataset"]),
    wrong("mnist_item_list", "returns [image, label], a list", "mnist_dataset", "return image, self.labels[index]",
          "return [image, self.labels[index]]", ["test_mnist_dataset"]),
    wrong("mnist_float_labels", "keeps the labels as floats", "mnist_dataset",
          "self.labels = parse_idx(labels_path).astype(np.int64)",
          "self.labels = parse_idx(labels_path).astype(np.float32)", ["test_mnist_dataset"]),
    wrong("mnist_uint8_labels", "keeps the labels as the file's uint8 bytes, not int64", "mnist_dataset",
          "self.labels = parse_idx(labels_path).astype(np.int64)", "self.labels = parse_idx(labels_path)",
          ["test_mnist_dataset"]),
    Mistake("mnist_other_attribute_names", "keeps the arrays as .x and .y, not .images and .labels",
            (Edit("mnist_dataset", MNIST_SCALING + "        self.labels = parse_idx(labels_path).astype(np.int64)\n"
                  "        if len(self.images) != len(self.labels):\n"
                  "            raise ValueError(f\"{len(self.images)} images but {len(self.labels)} labels\")",
                  "        self.x = parse_idx(images_path).astype(np.float32) / 255.0\n"
                  "        self.y = parse_idx(labels_path).astype(np.int64)\n"
                  "        if len(self.x) != len(self.y):\n"
                  "            raise ValueError(f\"{len(self.x)} images but {len(self.y)} labels\")"),
             Edit("mnist_dataset", "        return len(self.labels)", "        return len(self.y)"),
             Edit("mnist_dataset", "        image = self.images[index]", "        image = self.x[index]"),
             Edit("mnist_dataset", "        return image, self.labels[index]", "        return image, self.y[index]")),
            ("test_mnist_dataset",)),
    Mistake("loader_last_batch_twice", "adds the start of the last partial batch to starts that already hold it: "
            "the last batch comes twice", (Edit("data_loader", LOOP,
            "starts = list(range(0, n, self.batch_size))\n"
            "        if not self.drop_last and n % self.batch_size:\n"
            "            starts.append(n - n % self.batch_size)\n"
            "        for start in starts:"),), ("test_data_loader_batches", "test_data_loader_shuffle")),
]

ALTERNATIVES = [
    right("loader_shortcut_isinstance", "the shortcut for ArrayDataset tested with isinstance", "data_loader",
          "type(self.dataset) is ArrayDataset", "isinstance(self.dataset, ArrayDataset)"),
    right("loader_without_shortcut", "no shortcut: every batch read sample by sample", "data_loader", SHORTCUT, ""),
    right("array_dataset_any", "compares every length with the first", "array_dataset", LENGTH_CHECK,
          '''        if any(len(a) != len(arrays[0]) for a in arrays):
            raise ValueError("arrays of different lengths")
'''),
    Mistake("loader_shuffle_in_place", "np.ceil for len(); an index array shuffled in place; np.array to collate",
            (Edit("data_loader", "return n // self.batch_size if self.drop_last else -(-n // self.batch_size)",
                  "return n // self.batch_size if self.drop_last else int(np.ceil(n / self.batch_size))"),
             Edit("data_loader", ORDER, "order = np.arange(n)\n        if self.shuffle:\n            self.rng.shuffle(order)"),
             Edit("data_loader", "stacked = np.stack([np.asarray(v) for v in values])", "stacked = np.array(list(values))")),
            ()),
    right("normalize_float32_call", "np.float32(...) around the arithmetic", "normalize",
          "return ((image - self.mean) / self.std).astype(np.float32)",
          "return np.float32(image - self.mean) / np.float32(self.std)"),
    right("flatten_ravel", "np.ravel", "flatten_image", "return image.reshape(-1)", "return np.ravel(image)"),
    right("flip_fliplr", "np.fliplr and the complementary test", "random_flip",
          "        if self.rng.random() < self.p:\n            return image[:, ::-1]\n        return image",
          "        if self.rng.random() >= self.p:\n            return image\n        return np.fliplr(image)"),
    right("crop_zeros_canvas", "an explicit zero canvas instead of np.pad", "random_crop",
          "padded = np.pad(image, [(p, p), (p, p)] + [(0, 0)] * (image.ndim - 2))",
          '''padded = np.zeros((image.shape[0] + 2 * p, image.shape[1] + 2 * p) + image.shape[2:], dtype=image.dtype)
        padded[p:p + image.shape[0], p:p + image.shape[1]] = image'''),
    right("compose_reduce", "functools.reduce", "compose",
          "        for transform in self.transforms:\n            image = transform(image)\n        return image",
          "        import functools\n        return functools.reduce(lambda x, t: t(x), self.transforms, image)"),
    right("idx_magic_as_bytes", "compares the first two bytes with two zero bytes at once", "parse_idx",
          "raw[0] != 0 or raw[1] != 0", 'raw[:2] != b"\\x00\\x00"'),
    right("idx_sniffs_gzip", "recognises gzip by its magic bytes; converts to native byte order", "parse_idx",
          '''    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()''', '''    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\\x1f\\x8b":
        raw = gzip.decompress(raw)'''),
    right("mnist_multiply", "scales by multiplying with 1/255", "mnist_dataset", MNIST_SCALING,
          "        self.images = np.asarray(parse_idx(images_path), dtype=np.float32) * np.float32(1 / 255)\n"),
    right("mnist_divide_into_new_array", "divides into a new array rather than in place", "mnist_dataset", MNIST_SCALING,
          "        self.images = parse_idx(images_path).astype(np.float32) / 255.0\n"),
]

DEMO_PARTIAL = ["loader_reseeds_every_epoch", "flip_vertical", "crop_off_by_one", "idx_no_size_check", "mnist_no_scaling"]
