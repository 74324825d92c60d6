"""Checks of parse_idx on small IDX files the check writes itself, good ones and broken ones."""
import re
import tempfile
from pathlib import Path

import numpy as np

from autograder.student.checks.ch06_data import idx_bytes, idx_file
from autograder.student.checks.describe import type_name
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed

NOT_IMPLEMENTED = "parse_idx is not implemented yet: replace `raise NotImplementedError()` with your code."


def raised(error):
    return describe_exception("parse_idx", "", error).replace("parse_idx. ", "parse_idx ")


def sizes_read_little_endian(text, shape):
    """A hint when `text` (a shape, or an error such as NumPy's "cannot reshape ... into shape (83886080, ...)")
    holds the sizes of `shape` byte-swapped, as a little-endian read of the header gives them; else ""."""
    swapped = [int.from_bytes(int(n).to_bytes(4, "big"), "little") for n in shape]
    found = [int(n) for n in re.findall(r"\d+", text)]
    if any(found[i:i + len(swapped)] == swapped for i in range(len(found))) and swapped != list(shape):
        return (f"\n  Hint: {tuple(swapped)} is the shape {tuple(shape)} with each size's 4 bytes read little-endian: "
                "IDX stores the sizes big-endian ('>I'), most significant byte first.")
    return ""


def compare(parse_idx, path, want, label):
    """None when parse_idx(path) returns `want` (any byte order), else the message. `path` goes as a str, unless
    it is the file given as a pathlib.Path (`AS_PATH`)."""
    try:
        got = run_quietly(parse_idx, path if Path(path).name == AS_PATH + ".gz" else str(path))
    except Exception as error:  # noqa: BLE001
        return raised(error) + f"\n  on {label}." + sizes_read_little_endian(str(error), want.shape) \
            + path_hint(raised(error))
    return parsed_problem(got if isinstance(got, np.ndarray) else type_name(got), want, label)


# The name of the one file parse_idx is given as a pathlib.Path, as mnist_files gives them (section 6.5 hands
# those to MNISTDataset, and so to parse_idx); every other file comes as a str.
AS_PATH = "digits-idx3-ubyte"


def path_hint(text):
    """A hint when `text` tells of a pathlib.Path used as a str ("'PosixPath' object has no attribute"), else ""."""
    if not re.search(r"'\w*Path' object (has no attribute|is not subscriptable)", text):
        return ""
    return ("\n  Hint: a path comes as a str or as a pathlib.Path: mnist_files gives Paths, and section 6.5 hands "
            "them to MNISTDataset and so to your parse_idx. A Path has no str methods (endswith, slicing): make a "
            "str of it first, or use what both kinds share.")


def parsed_problem(got, want, label):
    """What is wrong with the array parse_idx returned for `label` (or the name of the type it returned
    instead), or None."""
    if not isinstance(got, np.ndarray):
        return f"parse_idx on {label} returned a {got}, expected a numpy array."
    if got.shape != want.shape:
        return (f"parse_idx on {label}: shape {got.shape}, expected {want.shape}.\n"
                "  Hint: after the 4-byte magic number come ndim sizes, each a 4-byte big-endian integer ('>I')."
                + sizes_read_little_endian(str(got.shape), want.shape))
    if got.dtype.kind != want.dtype.kind or got.dtype.itemsize != want.dtype.itemsize:
        return (f"parse_idx on {label}: dtype {got.dtype}, expected {want.dtype}.\n"
                "  Hint: the third byte of the magic number is the type code: 0x08 uint8, 0x09 int8, 0x0B int16, "
                "0x0C int32, 0x0D float32, 0x0E float64.")
    if not np.array_equal(got, want):
        flat = int(np.argmax(got.ravel() != want.ravel()))
        index = [int(i) for i in np.unravel_index(flat, want.shape)]
        return (f"parse_idx on {label}: element {index} is {got.ravel()[flat]}, expected {want.ravel()[flat]}."
                + data_read_little_endian(got, want))
    return None


def data_read_little_endian(got, want):
    """A hint when the multi-byte data `got` is `want` with each number's bytes reversed (read little-endian),
    the rule alone for other wrong multi-byte data; "" for one-byte data."""
    if want.dtype.itemsize == 1:
        return ""
    rule = ("IDX stores every number of more than one byte big-endian, most significant byte first: read the data "
            "with the big-endian dtype of its type code.")
    if got.shape == want.shape and got.dtype.itemsize == want.dtype.itemsize \
            and got.astype(want.dtype).tobytes() == want.byteswap().tobytes():
        return f"\n  Hint: each value is the expected one with its {want.dtype.itemsize} bytes in reverse order: {rule}"
    return f"\n  Hint: {rule}"


def bytes_cases(rng, images_shape=(5, 4, 3), labels_count=9):
    """(name, array, compressed, label) of the uint8 files the `bytes` check reads."""
    images = rng.integers(0, 256, size=images_shape, dtype=np.uint8)
    labels = rng.integers(0, 10, size=labels_count, dtype=np.uint8)
    return [("images-idx3-ubyte", images, False, f"a raw 3-D uint8 file of shape {images.shape}"),
            ("labels-idx1-ubyte", labels, False, f"a raw 1-D uint8 file of {labels.size} labels"),
            ("images-idx3-ubyte", images, True, f"a gzip-compressed file (name ending in .gz) of shape {images.shape}"),
            (AS_PATH, images, True, f"a gzip-compressed file of shape {images.shape} given as a pathlib.Path "
             "(as mnist_files gives them), not a str")]


def types_cases(rng, shapes=((3, 4), (6,), (2, 3, 2), (4,), (2, 5))):
    """(name, array, compressed, label) of the files of every other type, every other one gzipped."""
    arrays = [rng.integers(-30000, 30000, size=shapes[0]).astype(np.int16),
              rng.integers(-2 ** 30, 2 ** 30, size=shapes[1]).astype(np.int32),
              rng.standard_normal(shapes[2]).astype(np.float32),
              rng.standard_normal(shapes[3]).astype(np.float64),
              rng.integers(-128, 128, size=shapes[4]).astype(np.int8)]
    return [(f"values{i}-idx", want, bool(i % 2), f"a {'gzipped ' if i % 2 else ''}{want.dtype} file of shape {want.shape}")
            for i, want in enumerate(arrays)]


def check_cases(parse_idx, cases):
    with tempfile.TemporaryDirectory() as folder:
        for name, want, compress, label in cases:
            problem = compare(parse_idx, idx_file(folder, name, want, compress), want, label)
            if problem:
                return failed(problem)
    return None


def check_idx_bytes(parse_idx):
    return check_cases(parse_idx, bytes_cases(np.random.default_rng(1))) or \
        passed("✔ parse_idx reads uint8 IDX files, raw and gzipped")


def check_idx_types(parse_idx, seed=2):
    return check_cases(parse_idx, types_cases(np.random.default_rng(seed))) or \
        passed("✔ parse_idx reads big-endian int8, int16, int32, float32 and float64 files")


def broken_files(good=None, magic=b"\x01\x02", code=0x07, missing=5, surplus=b"\x00\x07\x00", suffix=""):
    """(name, bytes, what is wrong): files parse_idx must refuse. Data cut short and data with bytes to spare
    are both wrong sizes: a reader that only checks for enough bytes passes the one and not the other."""
    array = np.arange(12, dtype=np.uint8).reshape(3, 4) if good is None else good
    good = idx_bytes(array)
    return [("notes" + suffix + ".txt", b"hello, these are not digits\n", "a text file"),
            ("empty" + suffix, b"", "an empty file"),
            ("bad-magic" + suffix, magic + good[2:], "a file whose magic number does not start with two zero bytes"),
            ("half-magic" + suffix, b"\x00" + magic[1:2] + good[2:],
             "a file whose first byte is zero but whose second is not"),
            ("bad-type" + suffix, good[:2] + bytes([code]) + good[3:], f"a file with the unknown type code {code:#04x}"),
            ("truncated" + suffix, good[:-missing], f"a file with {missing} bytes of data missing"),
            ("surplus" + suffix, good + surplus,
             f"a file of shape {array.shape} with {len(surplus)} byte{'s' * (len(surplus) != 1)} after its "
             f"{array.nbytes} bytes of data")]


def check_idx_errors(parse_idx):
    outcomes = []
    with tempfile.TemporaryDirectory() as folder:
        for name, payload, what in broken_files():
            path = Path(folder) / name
            path.write_bytes(payload)
            try:
                result = run_quietly(parse_idx, str(path))
                outcomes.append((name, what, refused(None, result=result)))
            except Exception as error:  # noqa: BLE001
                outcomes.append((name, what, refused(error)))
    return refusals_verdict(outcomes)


def refused(error, result=None):
    """What parse_idx did with a broken file, as `refusals_verdict` reads it."""
    if error is None:
        return {"accepted": type_name(result), "shape": np.shape(result)}
    return {"error_type": type(error).__name__, "message": str(error), "value_error": isinstance(error, ValueError)}


SURPLUS_HINT = ("the data must be exactly prod(sizes) × itemsize bytes, no fewer and no more: bytes to spare "
                "mean the header's sizes do not describe the file (a wrong header, or two files run together), "
                "so refuse them as you refuse a file cut short.")


EMPTY_HINT = ("a file cut short by a failed download can hold no bytes at all: it does not start with two zero "
              "bytes either, so it is refused like any file that is not IDX, before anything reads its bytes.")
BROKEN_HINTS = {"surplus": SURPLUS_HINT, "empty": EMPTY_HINT,
                "half": "an IDX file starts with two zero bytes: both must be zero, so a file is refused when "
                        "either of them is not."}


def refusals_verdict(outcomes):
    """The verdict on parse_idx over broken files: `outcomes` are (file name, what is wrong, `refused`)."""
    for name, what, outcome in outcomes:
        if "accepted" in outcome:
            hint = BROKEN_HINTS.get(name.split("-")[0],
                                    "check the two zero bytes, the type code, and that the data has exactly "
                                    "prod(sizes) × itemsize bytes.")
            return failed(f"parse_idx accepted {what} and returned a {outcome['accepted']} of shape {outcome['shape']}; "
                          f"expected a ValueError that names the file.\n  Hint: {hint}")
        if outcome["value_error"]:
            if name not in outcome["message"]:
                return failed(f"parse_idx on {what} raised ValueError({outcome['message']!r}), which does not say which file.\n"
                              "  Hint: the message names the file, by the path parse_idx was given, so a user "
                              "with many files knows which one is broken.")
        elif outcome["error_type"] == "NotImplementedError":
            return failed(NOT_IMPLEMENTED)
        else:
            hint = f"\n  Hint: {EMPTY_HINT}" if name.startswith("empty") else ""
            return failed(f"parse_idx on {what} raised {outcome['error_type']}: {outcome['message']}\n"
                          "  expected a ValueError that names the file and says what is wrong." + hint)
    return passed("✔ parse_idx refuses broken files with a ValueError that names the file")


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

IDX_CHECKS = {"bytes": check_idx_bytes, "types": check_idx_types, "errors": check_idx_errors}


@register("parse_idx")
def parse_idx_check(namespace, name, **options):
    """parse_idx on files the check writes: `bytes` (uint8, raw and gzip), `types` (seed=...), `errors`."""
    return IDX_CHECKS[name](namespace["parse_idx"], **options)
