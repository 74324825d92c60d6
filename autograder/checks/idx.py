"""Checks of parse_idx on small IDX files the check writes itself, good ones and broken ones."""
import tempfile
from pathlib import Path

import numpy as np

from ..verdict import failed, passed
from .data import idx_file
from .describe import type_name
from .ops import describe_exception, run_quietly


def raised(error):
    return describe_exception("parse_idx", "", error).replace("parse_idx. ", "parse_idx ")


def compare(parse_idx, path, want, label):
    """None when parse_idx(path) returns `want` (any byte order), else the message."""
    try:
        got = run_quietly(parse_idx, str(path))
    except Exception as error:  # noqa: BLE001
        return raised(error) + f"\n  on {label}."
    if not isinstance(got, np.ndarray):
        return f"parse_idx on {label} returned a {type_name(got)}, expected a numpy array."
    if got.shape != want.shape:
        return (f"parse_idx on {label}: shape {got.shape}, expected {want.shape}.\n"
                "  Hint: after the 4-byte magic number come ndim sizes, each a 4-byte big-endian integer ('>I').")
    if got.dtype.kind != want.dtype.kind or got.dtype.itemsize != want.dtype.itemsize:
        return (f"parse_idx on {label}: dtype {got.dtype}, expected {want.dtype}.\n"
                "  Hint: the third byte of the magic number is the type code: 0x08 uint8, 0x09 int8, 0x0B int16, "
                "0x0C int32, 0x0D float32, 0x0E float64.")
    if not np.array_equal(got, want):
        flat = int(np.argmax(got.ravel() != want.ravel()))
        index = list(np.unravel_index(flat, want.shape))
        endian = ("\n  Hint: IDX stores multi-byte numbers big-endian: read them with a '>' dtype such as '>i2'."
                  if want.dtype.itemsize > 1 else "")
        return f"parse_idx on {label}: element {index} is {got.ravel()[flat]}, expected {want.ravel()[flat]}.{endian}"
    return None


def check_idx_bytes(parse_idx):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, size=(5, 4, 3), dtype=np.uint8)
    labels = rng.integers(0, 10, size=9, dtype=np.uint8)
    with tempfile.TemporaryDirectory() as folder:
        cases = [(idx_file(folder, "images-idx3-ubyte", images, False), images, "a raw 3-D uint8 file of shape (5, 4, 3)"),
                 (idx_file(folder, "labels-idx1-ubyte", labels, False), labels, "a raw 1-D uint8 file of 9 labels"),
                 (idx_file(folder, "images-idx3-ubyte", images, True), images,
                  "a gzip-compressed file (name ending in .gz) of shape (5, 4, 3)")]
        for path, want, label in cases:
            problem = compare(parse_idx, path, want, label)
            if problem:
                return failed(problem)
    return passed("✔ parse_idx reads uint8 IDX files, raw and gzipped")


def check_idx_types(parse_idx, seed=2):
    rng = np.random.default_rng(seed)
    arrays = [rng.integers(-30000, 30000, size=(3, 4)).astype(np.int16),
              rng.integers(-2 ** 30, 2 ** 30, size=(6,)).astype(np.int32),
              rng.standard_normal((2, 3, 2)).astype(np.float32),
              rng.standard_normal((4,)).astype(np.float64),
              rng.integers(-128, 128, size=(2, 5)).astype(np.int8)]
    with tempfile.TemporaryDirectory() as folder:
        for i, want in enumerate(arrays):
            path = idx_file(folder, f"values{i}-idx", want, compress=bool(i % 2))
            problem = compare(parse_idx, path, want, f"a {'gzipped ' if i % 2 else ''}{want.dtype} file of shape {want.shape}")
            if problem:
                return failed(problem)
    return passed("✔ parse_idx reads big-endian int8, int16, int32, float32 and float64 files")


def broken_files(folder):
    """(name, bytes, what is wrong): files parse_idx must refuse."""
    good = Path(idx_file(folder, "good", np.arange(12, dtype=np.uint8).reshape(3, 4), False)).read_bytes()
    return [("notes.txt", b"hello, these are not digits\n", "a text file"),
            ("bad-magic", b"\x01\x02" + good[2:], "a file whose magic number does not start with two zero bytes"),
            ("bad-type", good[:2] + b"\x07" + good[3:], "a file with the unknown type code 0x07"),
            ("truncated", good[:-5], "a file with 5 bytes of data missing")]


def check_idx_errors(parse_idx):
    with tempfile.TemporaryDirectory() as folder:
        for name, payload, what in broken_files(folder):
            path = Path(folder) / name
            path.write_bytes(payload)
            try:
                result = run_quietly(parse_idx, str(path))
            except ValueError as error:
                if name not in str(error):
                    return failed(f"parse_idx on {what} raised ValueError({str(error)!r}), which does not say which file.\n"
                                  f"  Hint: name the file in the message, e.g. ValueError(f\"{{path}}: ...\"), so a user "
                                  "with many files knows which one is broken.")
                continue
            except NotImplementedError as error:
                return failed(raised(error))
            except Exception as error:  # noqa: BLE001
                return failed(f"parse_idx on {what} raised {type(error).__name__}: {error}\n"
                              "  expected a ValueError that names the file and says what is wrong.")
            return failed(f"parse_idx accepted {what} and returned a {type_name(result)} of shape {np.shape(result)}; "
                          "expected a ValueError that names the file.\n  Hint: check the two zero bytes, the type code, "
                          "and that the data has exactly prod(sizes) × itemsize bytes.")
    return passed("✔ parse_idx refuses broken files with a ValueError that names the file")
