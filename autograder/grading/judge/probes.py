"""The data protocol between the judge and the kernel: JSON with arrays packed as `dtype;shape;base64 bytes`
(`pack`, `decode_array`), never pickles.

A probe is code the judge builds from a fixed template (`worker.py`) and a JSON request; the kernel
answers with one `display_data` output of PROBE_MIME. Everything in a reply is untrusted: any
malformed, oversized or ambiguous reply becomes a `ProbeFailure`, never an exception in the grader.
"""
import base64
import binascii
import json
import math
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograder.student.checks import (
    ch02_tensor_facts,
    ch03_autodiff_course_ops as course_ops,
    ch03_autodiff_engine_graph as engine_graph,
    ch04_nn_facts,
    ch05_optimizer_facts,
    ch06_data_facts,
    ch07_init_facts,
    ch08_persistence_facts,
    ch09_trainer_facts,
    ch10_conv_facts,
    describe,
    kernel_facts,
    running,
    slow,
)

PROBE_MIME = "application/vnd.babygrad.probe+json"
# Before the first request of each grade cell in a batch, the worker says which request it starts: the runner
# gives that cell's checks the whole probe timeout, and a stopped probe names the cell it stopped in.
PROGRESS_MIME = "application/vnd.babygrad.probe-progress+json"
MAX_REPLY_CHARS = 32_000_000        # a reply of ch03's largest probe is ~0.5 MB; a flood is refused
MAX_ARRAY_ELEMENTS = 1_000_000      # no judged check asks for more than a few thousand values
NUMERIC_KINDS = "biuf"              # bool, int, unsigned, float: what a gradient or output may be
# The kernel side, run in one scope: worker.py (the protocol and the ops' requests), then each chapter's own
# requests, which use worker.py's helpers; last, the text of the check modules that gather what the student's
# code did, the very code the visible checks import (SHIPPED: NumPy and the standard library only, compiled on
# first use by worker.shipped): the slow reference loops of chapter 10's stand-ins, the course's own chapter-3 ops
# and operators, the engine checks' graph builder, quiet runs and error lines, type names, facts of every chapter,
# and each chapter's own stand-ins and facts (chNN_<chapter>_facts).
WORKER_FILES = ("worker.py", "ch01_scalar.py", "ch05_optimizer.py", "ch06_data.py", "ch02_tensor.py",
                "ch07_init.py", "ch09_trainer.py", "ch04_nn.py", "ch08_persistence.py",
                "capstone.py")
SHIPPED = {                                         # worker.shipped(name)
    "slow": slow,
    "course_ops": course_ops,
    "engine_graph": engine_graph,
    "kernel_facts": kernel_facts,
    "running": running,
    "describe": describe,
    "ch02_tensor_facts": ch02_tensor_facts,
    "ch04_nn_facts": ch04_nn_facts,
    "ch05_optimizer_facts": ch05_optimizer_facts,
    "ch06_data_facts": ch06_data_facts,
    "ch07_init_facts": ch07_init_facts,
    "ch08_persistence_facts": ch08_persistence_facts,
    "ch09_trainer_facts": ch09_trainer_facts,
    "ch10_conv_facts": ch10_conv_facts,
}
KERNEL_SIDE = Path(__file__).parent / "in_kernel"
WORKER_SOURCE = ("\n\n".join((KERNEL_SIDE / name).read_text(encoding="utf-8") for name in WORKER_FILES)
                 + "\nSHIPPED_SOURCES = "
                 + repr({name: Path(str(module.__file__)).read_text(encoding="utf-8") for name, module in SHIPPED.items()}) + "\n")
# As the first probe of each kernel sends it: compressed, a quarter of the text for IPython to take in
# (a 115 kB cell costs the kernel ~25 ms more than a 37 kB one, every submission).
WORKER_PACKED = base64.b64encode(zlib.compress(WORKER_SOURCE.encode("utf-8"), 9)).decode("ascii")


class ProbeFailure(Exception):
    """The kernel did not give a usable answer (it raised, timed out, died, or replied malformed)."""


class ProbeStopped(Exception):
    """The grader stopped a probe: the student's code ran past its time, or printed without end. The
    message says which, to the student. `started`: the request of the last progress mark (the first
    request of the cell whose checks were running), or None; `killed`: the kernel ignored the interrupt
    and was killed; `out_of_time`: the notebook's budget, not the cell's limit, ran out."""

    def __init__(self, message: str, started: int | None = None, killed: bool = False, out_of_time: bool = False):
        super().__init__(message)
        self.started, self.killed, self.out_of_time = started, killed, out_of_time


def progress_mark(msg: Mapping[str, Any]) -> int | None:
    """The request index of a progress mark, read from the kernel's iopub message itself (a mark is never an
    output: not built and validated as one); None for any other message, or a mark that is not a small whole
    number (it is untrusted)."""
    data = msg.get("content", {}).get("data") if msg.get("msg_type") == "display_data" else None
    if not isinstance(data, dict) or PROGRESS_MIME not in data:
        return None
    mark = data[PROGRESS_MIME]
    try:
        index = (mark if isinstance(mark, dict) else json.loads(mark)).get("started")
    except (ValueError, TypeError, AttributeError, RecursionError):
        return None
    return index if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < 1_000_000 else None


# A packed array's header: its dtype as NumPy writes it (`<f8`), then its shape (`2,3`; empty for 0-d).
PACKED_HEADER = re.compile(r"([<>|=][a-zA-Z]\d{0,3});((?:\d{1,9}(?:,\d{1,9}){0,31})?);")


def pack(array: np.ndarray) -> str:
    """An array as text: `dtype;shape;base64 of its bytes` (worker.packed writes the same). Reading it takes
    no parsing of a Python literal, as a .npy header does (some 30 µs an array, thousands of arrays a notebook)."""
    if array.dtype.hasobject:
        raise TypeError("an object array cannot be packed")
    array = np.asarray(array, order="C")
    return f"{array.dtype.str};{','.join(map(str, array.shape))};{base64.b64encode(array.tobytes()).decode('ascii')}"


def encode(value: Any, sent: dict[int, int] | None = None) -> Any:
    """JSON-ready form of a request value: arrays packed, tuples kept apart from lists. An array the request
    holds more than once (a layer check's input, given to three steps) travels once: its later places say
    `{"__again__": n}`, the n-th array sent, and the kernel gives each place its own copy (worker.decode)."""
    sent = {} if sent is None else sent         # id of an array -> its number; the request keeps them all alive
    if isinstance(value, np.ndarray):
        if id(value) in sent:
            return {"__again__": sent[id(value)]}
        sent[id(value)] = len(sent)
        return {"__ndarray__": pack(value)}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, sent) for v in value]}
    if isinstance(value, slice):             # GetItem's index: np.s_[1:, ::-2]
        return {"__slice__": [encode(value.start, sent), encode(value.stop, sent), encode(value.step, sent)]}
    if isinstance(value, list):
        return [encode(v, sent) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v, sent) for k, v in value.items()}
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    return value


def decode_array(text: Any) -> np.ndarray:
    """An untrusted packed array (`pack`): a numeric dtype, a bounded size, bytes that fit both."""
    if not isinstance(text, str) or len(text) > MAX_REPLY_CHARS:
        raise ProbeFailure("an array in the reply is not a string of bounded size")
    header = PACKED_HEADER.match(text)
    if header is None:
        raise ProbeFailure("an array in the reply is not a valid packed array (dtype;shape;base64)")
    try:
        dtype = np.dtype(header[1])
    except TypeError:
        raise ProbeFailure(f"an array in the reply has dtype {header[1]!r}, not a NumPy dtype") from None
    if dtype.kind not in NUMERIC_KINDS:
        raise ProbeFailure(f"an array in the reply has dtype {dtype}, not a number type")
    shape = tuple(int(n) for n in header[2].split(",")) if header[2] else ()
    size = math.prod(shape)
    if size > MAX_ARRAY_ELEMENTS:
        raise ProbeFailure(f"an array in the reply has {size} elements (limit {MAX_ARRAY_ELEMENTS})")
    try:
        data = base64.b64decode(text[header.end():], validate=True)
    except binascii.Error as error:
        raise ProbeFailure(f"an array in the reply is not valid base64 ({error})") from None
    if len(data) != size * dtype.itemsize:
        raise ProbeFailure(f"an array in the reply holds {len(data)} bytes, not the {size * dtype.itemsize} "
                           f"its shape {shape} and dtype {dtype} need")
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy()


SERVE_NAME = "__babygrad_serve__"     # the worker's entry point, kept in the kernel between probes


@dataclass(frozen=True)
class Probe:
    """What the kernel runs for one probe: `setup` statements (the worker's definition, or nothing), then
    `call`, one expression carrying the request. A kernel runner sends `call` as a user expression, which
    IPython evaluates as it is; as cell code, a probe's payload would pass through IPython's input
    transformers first, about 0.25 s per MB (chapter 4's dropout check sends 0.9 MB)."""

    setup: str
    call: str
    marks: tuple[int, ...] = ()       # the requests that start a grade cell's checks: each gets the whole timeout

    def as_code(self) -> str:
        """The probe as one cell of code, for a runner without user expressions (the tests' in-process one)."""
        return f"{self.setup}{self.call}\n"


def probe_code(request: Mapping[str, Any], install: bool, marks: Iterable[int] = ()) -> Probe:
    """The probe for this request: the worker's entry point called on it, after defining it from the
    template when `install` (the first probe of a kernel, or after the name went missing).

    Keeping the worker in the kernel gives the student nothing: everything the kernel runs is theirs
    to patch anyway, and the judge trusts only what it verifies. It saves compiling it at every probe.
    """
    payload = json.dumps(encode(request))
    setup = (f"def {SERVE_NAME}(request, namespace, packed={WORKER_PACKED!r}):\n"
             f"    import base64, zlib\n"
             f"    source = zlib.decompress(base64.b64decode(packed)).decode('utf-8')\n"
             f"    scope = {{'__name__': '__babygrad_probe__'}}\n"
             f"    exec(compile(source, '<babygrad probe>', 'exec'), scope)\n"
             f"    globals()['{SERVE_NAME}'] = scope['serve']\n"
             f"    scope['serve'](request, namespace)\n") if install else ""
    return Probe(setup, f"{SERVE_NAME}({payload!r}, globals())", tuple(marks))


def worker_missing(outputs: list[dict[str, Any]]) -> bool:
    """True when a probe failed because the kernel no longer holds the worker (a fresh kernel)."""
    return any(o.get("output_type") == "error" and o.get("ename") == "NameError" and SERVE_NAME in str(o.get("evalue"))
               for o in outputs)


def reply_from_outputs(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    """The one JSON reply among a probe cell's outputs; ProbeFailure for anything else."""
    errors = [o for o in outputs if o.get("output_type") == "error"]
    if errors:
        raise ProbeFailure(f"the probe raised {errors[0].get('ename')}: {str(errors[0].get('evalue'))[:300]}")
    replies = [o["data"][PROBE_MIME] for o in outputs
               if o.get("output_type") == "display_data" and PROBE_MIME in o.get("data", {})]
    if len(replies) != 1:
        raise ProbeFailure(f"the probe gave {len(replies)} replies, expected exactly one")
    reply = replies[0]
    if isinstance(reply, (dict, list)):       # nbformat may already have parsed the JSON
        reply = json.dumps(reply)
    if not isinstance(reply, str) or len(reply) > MAX_REPLY_CHARS:
        raise ProbeFailure("the reply is not JSON text of bounded size")
    try:
        data = json.loads(reply)
    except (ValueError, RecursionError) as error:
        raise ProbeFailure(f"the reply is not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise ProbeFailure("the reply is not a JSON object")
    return data


@dataclass
class Returned:
    """What one call of student code gave back, as the kernel reported it.

    kind: "array" (an ndarray or number), "tensor" (its .data in `value`), "none", "error"
    (`error_type`, `message`, `line`, and `helper`: the function that raised a NotImplementedError when it
    is not the one under test), "sequence" (`items`), or "other" (`type_name` only).
    """

    kind: str
    value: np.ndarray | None = None
    type_name: str = ""
    error_type: str = ""
    message: str = ""
    line: str = ""
    helper: str = ""
    items: list["Returned"] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.kind == "error"


KINDS = {"array", "tensor", "none", "error", "sequence", "other"}


def returned(data: Any, depth: int = 0) -> Returned:
    """Parse one untrusted `Returned` from the reply's JSON."""
    if not isinstance(data, dict) or data.get("kind") not in KINDS or depth > 3:
        raise ProbeFailure("a returned value in the reply is malformed")
    kind = data["kind"]
    text = {k: str(data.get(k, ""))[:2000] for k in ("type_name", "error_type", "message", "line", "helper")}
    value = decode_array(data.get("value")) if kind in ("array", "tensor") else None
    items = data.get("items", []) if kind == "sequence" else []
    if not isinstance(items, list) or len(items) > 16:
        raise ProbeFailure("a returned sequence in the reply is malformed")
    return Returned(kind, value, items=[returned(i, depth + 1) for i in items], **text)

