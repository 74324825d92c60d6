"""Is a generated file what the build makes? Compared by meaning, reported in a few lines.

`make build` executes the solution notebooks, and a few cells print or plot floating-point results
of training (a loss, an accuracy, a table of activation statistics). Those numbers depend in their
last digits on the CPU: OpenBLAS picks its matrix kernels per processor model, so the same seed
gives 0.137 on one machine and 0.138 on another, and a run of many epochs drifts further. Everything
else the build writes is exact.

So the comparison is exact for every file and every cell, with one stated exception: in a cell
tagged `numeric-output` (marker `numeric` in a chapter script), numbers in text outputs may differ by
one unit of their last printed digit or by NUMBER_RELATIVE_TOLERANCE, and a PNG plot must have the
same size. No pixel tolerance is both safe and meaningful for a plot of a training run: which digits
a model gets wrong, drawn in chapter 7, changes discretely with the last bits of its weights. The
numbers such plots are drawn from are printed, and compared, in the same cells. Sources, metadata,
ids, the count and kind of outputs and all other text stay exact there too. A difference is reported as the first differing file, cell and
output, never as a diff of whole files (pytest's diff of two large strings is quadratic).
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

NUMERIC_TAG = "numeric-output"
# A loss of 0.137 on one CPU is 0.138 on another (0.7%), and after eight epochs of a small model that
# overfits, 0.081 on an Intel CPU is 0.079 on an AMD one (2.5%); a real change of a result moves it by more.
NUMBER_RELATIVE_TOLERANCE = 0.05
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
EXCERPT = 80


@dataclass(frozen=True)
class Difference:
    """Where a generated file first differs from what the build makes, and how."""

    path: str
    where: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.where}: {self.detail} (run `make build` and commit)"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def short(value) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return repr(text if len(text) <= EXCERPT else text[:EXCERPT] + "…")


def first_text_difference(expected: str, received: str) -> str:
    """`line N: 'expected' != 'received'` for the first line that differs."""
    lines_a, lines_b = expected.splitlines(), received.splitlines()
    for number, (a, b) in enumerate(zip(lines_a, lines_b), start=1):
        if a != b:
            return f"line {number}: {short(a)} != {short(b)}"
    return f"{len(lines_a)} lines != {len(lines_b)} lines"


def compare_files(path: str, expected: Path, received: Path) -> Difference | None:
    """Notebooks by meaning, every other file by digest."""
    a, b = expected.read_bytes(), received.read_bytes()
    if digest(a) == digest(b):
        return None
    if path.endswith(".ipynb"):
        return compare_notebooks(path, json.loads(a), json.loads(b))
    try:
        detail = first_text_difference(a.decode("utf-8"), b.decode("utf-8"))
    except UnicodeDecodeError:
        detail = f"sha256 {digest(a)[:12]} != {digest(b)[:12]}"
    return Difference(path, "contents", detail)


def compare_trees(expected_root: Path, received_root: Path, paths: list[str]) -> Difference | None:
    """The first difference among `paths` (relative, present under both roots)."""
    for path in paths:
        difference = compare_files(path, expected_root / path, received_root / path)
        if difference:
            return difference
    return None


def joined(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def compare_notebooks(path: str, expected: dict, received: dict) -> Difference | None:
    for key in ("nbformat", "nbformat_minor", "metadata"):
        if expected.get(key) != received.get(key):
            return Difference(path, f"notebook {key}", f"{short(expected.get(key))} != {short(received.get(key))}")
    cells_a, cells_b = expected["cells"], received["cells"]
    if len(cells_a) != len(cells_b):
        return Difference(path, "cells", f"{len(cells_a)} cells != {len(cells_b)} cells")
    for index, (a, b) in enumerate(zip(cells_a, cells_b)):
        difference = compare_cells(a, b)
        if difference:
            where, detail = difference
            return Difference(path, f"cell {index} ({a.get('id', '?')}){where}", detail)
    return None


def compare_cells(a: dict, b: dict) -> tuple[str, str] | None:
    for key in ("cell_type", "id", "metadata", "execution_count", "attachments"):
        if a.get(key) != b.get(key):
            return f" {key}", f"{short(a.get(key))} != {short(b.get(key))}"
    if joined(a["source"]) != joined(b["source"]):
        return " source", first_text_difference(joined(a["source"]), joined(b["source"]))
    outputs_a, outputs_b = a.get("outputs", []), b.get("outputs", [])
    if len(outputs_a) != len(outputs_b):
        return " outputs", f"{len(outputs_a)} outputs != {len(outputs_b)} outputs"
    numeric = NUMERIC_TAG in a.get("metadata", {}).get("tags", [])
    for index, (out_a, out_b) in enumerate(zip(outputs_a, outputs_b)):
        detail = compare_outputs(out_a, out_b, numeric)
        if detail:
            return f" output {index}", detail
    return None


def compare_outputs(a: dict, b: dict, numeric: bool) -> str | None:
    if set(a) != set(b):
        return f"fields {sorted(a)} != {sorted(b)}"
    for key in sorted(a):
        if key in ("text", "data"):
            continue
        if a[key] != b[key]:
            return f"{key}: {short(a[key])} != {short(b[key])}"
    if "text" in a:
        return compare_values("text", joined(a["text"]), joined(b["text"]), numeric)
    if "data" in a:
        if set(a["data"]) != set(b["data"]):
            return f"kinds {sorted(a['data'])} != {sorted(b['data'])}"
        for mime in sorted(a["data"]):
            detail = compare_values(mime, a["data"][mime], b["data"][mime], numeric)
            if detail:
                return detail
    return None


def compare_values(mime: str, a, b, numeric: bool) -> str | None:
    if isinstance(a, list):
        a, b = joined(a), joined(b)
    if a == b:
        return None
    if numeric and mime == "image/png":
        return compare_images(a, b)
    if numeric and isinstance(a, str) and isinstance(b, str):
        return compare_numbers_in_text(mime, a, b)
    if isinstance(a, str) and isinstance(b, str):
        return f"{mime}: {first_text_difference(a, b)}"
    return f"{mime}: {short(a)} != {short(b)}"


def compare_numbers_in_text(mime: str, a: str, b: str) -> str | None:
    """Equal text between the numbers; each pair of numbers within tolerance."""
    words_a, words_b = NUMBER.split(a), NUMBER.split(b)
    numbers_a, numbers_b = NUMBER.findall(a), NUMBER.findall(b)
    if words_a != words_b or len(numbers_a) != len(numbers_b):
        return f"{mime} (numeric): text around the numbers differs: {first_text_difference(a, b)}"
    for x, y in zip(numbers_a, numbers_b):
        if not numbers_agree(x, y):
            return f"{mime} (numeric): {x} != {y}, beyond one unit of the last digit and {NUMBER_RELATIVE_TOLERANCE:.0%}"
    return None


def last_digit_unit(number: str) -> float:
    mantissa, _, exponent = number.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def numbers_agree(x: str, y: str) -> bool:
    a, b = float(x), float(y)
    unit = max(last_digit_unit(x), last_digit_unit(y))
    return abs(a - b) <= unit * 1.0001 or abs(a - b) <= NUMBER_RELATIVE_TOLERANCE * max(abs(a), abs(b))


def png_size(data: str) -> tuple[int, int]:
    """(width, height) from a PNG's header chunk."""
    header = base64.b64decode(data[:64])
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def compare_images(a: str, b: str) -> str | None:
    if png_size(a) != png_size(b):
        return f"image/png (numeric): size {png_size(a)} != {png_size(b)}"
    return None
