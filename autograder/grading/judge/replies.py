"""The kernel's replies as typed records, read in one place.

A reply is untrusted JSON. Each request kind declares what its reply holds as a frozen dataclass whose
fields say how each value is read (`wire(Int())`, `wire(ListOf(Array(), length="params"))`, ...), and
`read(reply, Record)` gives that record or raises `ProbeFailure` naming the field: a judged check then
works on Python values whose types it can rely on, and never reads a dict by hand.

Two kinds of field: a *strict* one (`Int`, `Real`, `Bool`, `Text`, `OneOf`, `Array`, `Raised`, `ListOf`, `Row`,
`Pair`, `Tagged`, `MapOf`, `Nested`, and `Optional`, `Default`, `Either` around them) refuses anything but its
type; a *lenient* one (`AsText`, `Flag`, `Number`, `Whole`, `Or`, `Const`, `Json`) is the kernel's word that can
only fail a check, never pass one, and reads whatever came as the judge always did (a description shown as
text, `true` and nothing else as yes, a number or nothing).

A record whose fields must agree with each other says how in a method `invalid(self)`, which returns what is
wrong or None. A record may stand for one of several shapes of the same reply (the student's code raised, or
it ran): such a record names the key that tells it apart (`TAG`), and `read(reply, Failed | Ran)` reads the
first member whose tag the reply carries, else the last.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, TypeVar

from autograder.grading.judge.probes import ProbeFailure, Returned, decode_array, returned

R = TypeVar("R")
MISSING = object()      # the reply has no such key
MAX_LIST = 100_000      # values in one list of a reply: far more than any request asks for


def wire(spec: Spec, key: str | None = None) -> Any:
    """A record's field, read from the reply's `key` (the field's own name unless given) by `spec`."""
    return dataclasses.field(metadata={"wire": spec, "key": key})


def place(path: str) -> str:
    """How a message names a field: `the reply's 'steps'[2][0]`."""
    return f"the reply's {path}" if path else "the reply"


class Spec:
    """How one JSON value becomes one Python value; `read` raises ProbeFailure naming `path`."""

    def read(self, value: Any, path: str, sizes: Mapping[str, int]) -> Any:
        raise NotImplementedError

    def missing(self, path: str) -> Any:
        """The value of a field the reply does not hold: a strict field is then malformed."""
        raise ProbeFailure(f"{place(path)} is missing")


def whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Int(Spec):
    """A whole number (never a bool, never a float such as NaN) within [low, high], and below `below` (a number,
    or the name of a size given to `read`: an index into what the judge sent)."""

    low: int | None = None
    high: int | None = None
    below: int | str | None = None

    def read(self, value, path, sizes):
        if not whole(value):
            raise ProbeFailure(f"{place(path)} is not a whole number")
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise ProbeFailure(f"{place(path)} is {value}, outside [{self.low}, {self.high}]")
        below = sizes[self.below] if isinstance(self.below, str) else self.below
        if below is not None and value >= below:
            raise ProbeFailure(f"{place(path)} is {value}, not below {below}")
        return value


@dataclass(frozen=True)
class Real(Spec):
    """A number as a float (a JSON int too, never a bool); NaN and infinities only when `finite` is False."""

    finite: bool = True

    def read(self, value, path, sizes):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ProbeFailure(f"{place(path)} is not a number")
        if self.finite and not math.isfinite(value):
            raise ProbeFailure(f"{place(path)} is {value}, not a finite number")
        return float(value)


@dataclass(frozen=True)
class Bool(Spec):
    """JSON true or false, nothing else."""

    def read(self, value, path, sizes):
        if not isinstance(value, bool):
            raise ProbeFailure(f"{place(path)} is not true or false")
        return value


@dataclass(frozen=True)
class Text(Spec):
    """A string, cut to `limit` characters (the kernel cuts its own; a longer one is only shortened; None: as it
    is, bounded by the reply's own size)."""

    limit: int | None = 200

    def read(self, value, path, sizes):
        if not isinstance(value, str):
            raise ProbeFailure(f"{place(path)} is not a string")
        return value[:self.limit]


@dataclass(frozen=True)
class OneOf(Spec):
    """One of a few known values (a stage, an event's name, an input's index)."""

    choices: frozenset

    def read(self, value, path, sizes):
        if not isinstance(value, (str, int, float)) or value not in self.choices:
            raise ProbeFailure(f"{place(path)} is not one of {', '.join(sorted(map(str, self.choices)))}")
        return value


@dataclass(frozen=True)
class Array(Spec):
    """A packed array (`probes.decode_array`: a number dtype, at most MAX_ARRAY_ELEMENTS values); of exactly
    `size` values when given."""

    size: int | None = None

    def read(self, value, path, sizes):
        try:
            array = decode_array(value)
        except ProbeFailure as failure:
            raise ProbeFailure(f"{place(path)}: {failure}") from None
        if self.size is not None and array.size != self.size:
            raise ProbeFailure(f"{place(path)} holds {array.size} values, expected {self.size}")
        return array


@dataclass(frozen=True)
class Raised(Spec):
    """What one call of student code gave back (`probes.returned`): most often the exception it raised."""

    def read(self, value, path, sizes):
        try:
            return returned(value)
        except ProbeFailure as failure:
            raise ProbeFailure(f"{place(path)}: {failure}") from None


@dataclass(frozen=True)
class Optional(Spec):
    """`spec`, or None when the value is null or the key is absent."""

    spec: Spec

    def read(self, value, path, sizes):
        return None if value is None else self.spec.read(value, path, sizes)

    def missing(self, path):
        return None


@dataclass(frozen=True)
class ListOf(Spec):
    """A list of `item`s: exactly `length` of them (a number, or the name of a size given to `read`), or
    between `least` and `most`."""

    item: Spec
    length: int | str | None = None
    least: int | str = 0
    most: int | str = MAX_LIST

    def read(self, value, path, sizes):
        if not isinstance(value, list):
            raise ProbeFailure(f"{place(path)} is not a list")
        want, least, most = (sizes[n] if isinstance(n, str) else n for n in (self.length, self.least, self.most))
        if want is not None and len(value) != want:
            raise ProbeFailure(f"{place(path)} holds {len(value)} values, expected {want}")
        if not least <= len(value) <= most:
            raise ProbeFailure(f"{place(path)} holds {len(value)} values, expected {least} to {most}")
        return [self.item.read(v, f"{path}[{i}]", sizes) for i, v in enumerate(value)]


@dataclass(frozen=True)
class Row(Spec):
    """A JSON list of exactly one value per spec, each read by its own, as a tuple."""

    items: tuple[Spec, ...]

    def read(self, value, path, sizes):
        if not isinstance(value, list) or len(value) != len(self.items):
            raise ProbeFailure(f"{place(path)} is not a list of {len(self.items)} values")
        return tuple(spec.read(v, f"{path}[{i}]", sizes) for i, (spec, v) in enumerate(zip(self.items, value)))


def Pair(first: Spec, second: Spec) -> Row:  # noqa: N802 (read as a spec, as Row is)
    """A JSON list of two values, read by `first` and `second`, as a tuple."""
    return Row((first, second))


@dataclass(frozen=True)
class Tagged(Spec):
    """A JSON list `[tag, detail]` whose tag says how its detail is read (`by[tag]`), as a tuple."""

    by: Mapping[str, Spec]

    def read(self, value, path, sizes):
        if not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], str) or value[0] not in self.by:
            raise ProbeFailure(f"{place(path)} is not a pair [{' | '.join(self.by)}, value]")
        return (value[0], self.by[value[0]].read(value[1], f"{path}[1]", sizes))


@dataclass(frozen=True)
class MapOf(Spec):
    """A JSON object of at most `most` `item`s by name."""

    item: Spec
    most: int = 100

    def read(self, value, path, sizes):
        if not isinstance(value, dict) or len(value) > self.most:
            raise ProbeFailure(f"{place(path)} is not a JSON object of at most {self.most} entries")
        return {key: self.item.read(v, f"{path}[{key[:40]!r}]", sizes) for key, v in value.items()}


@dataclass(frozen=True)
class Default(Spec):
    """`spec`, or `value` when the key is absent (a null is read by `spec`)."""

    spec: Spec
    value: Any

    def read(self, value, path, sizes):
        return self.spec.read(value, path, sizes)

    def missing(self, path):
        return copy.copy(self.value)


@dataclass(frozen=True)
class Nested(Spec):
    """A JSON object read as a record (or a union of records, as `read` reads one)."""

    record: Any

    def read(self, value, path, sizes):
        return read_record(value, self.record, path, sizes)


@dataclass(frozen=True)
class Either(Spec):
    """`then` when `when(value)` holds, else `otherwise`: a value of two shapes told apart by the raw JSON."""

    when: Callable[[Any], bool]
    then: Spec
    otherwise: Spec

    def read(self, value, path, sizes):
        return (self.then if self.when(value) else self.otherwise).read(value, path, sizes)

    def missing(self, path):
        return self.otherwise.missing(path)


# ── lenient fields: the kernel's word, read as the judge always read it ──

@dataclass(frozen=True)
class AsText(Spec):
    """Anything, shown as text cut to `limit` (a type name, a repr): `absent` stands for a missing key."""

    limit: int = 200
    absent: Any = ""

    def read(self, value, path, sizes):
        return str(value)[:self.limit]

    def missing(self, path):
        return str(self.absent)[:self.limit]


@dataclass(frozen=True)
class Flag(Spec):
    """The kernel says yes only with JSON true; anything else, or nothing, is no."""

    def read(self, value, path, sizes):
        return value is True

    def missing(self, path):
        return False


@dataclass(frozen=True)
class Number(Spec):
    """A number as a float, or None for anything else (the message then shows what came instead)."""

    def read(self, value, path, sizes):
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def missing(self, path):
        return None


@dataclass(frozen=True)
class Or(Spec):
    """`spec`, or what `instead` reads from any value `spec` refuses (and from a missing key): a value the kernel
    reports in one of two shapes, a number or its text, say."""

    spec: Spec
    instead: Spec

    def read(self, value, path, sizes):
        try:
            return self.spec.read(value, path, sizes)
        except ProbeFailure:
            return self.instead.read(value, path, sizes)

    def missing(self, path):
        return self.instead.missing(path)


@dataclass(frozen=True)
class Const(Spec):
    """Always `value`, whatever came: with `Or`, what the judge takes for a value of no use to it."""

    value: Any

    def read(self, value, path, sizes):
        return copy.copy(self.value)

    def missing(self, path):
        return copy.copy(self.value)


@dataclass(frozen=True)
class Json(Spec):
    """Any JSON value, as it came: the kernel's word the judge compares with its own value, never computes on."""

    def read(self, value, path, sizes):
        return value


@dataclass(frozen=True)
class Whole(Spec):
    """A whole number, or `otherwise` for anything else (a count the student's code advanced by other steps)."""

    otherwise: int = -1

    def read(self, value, path, sizes):
        return value if whole(value) else self.otherwise

    def missing(self, path):
        return self.otherwise


# ── records ──

@dataclass(frozen=True)
class Tag:
    """How a record of a union is told apart: the reply holds `key`, with this `value` when given, and a value
    `when` holds for when given; or, with `or_absent`, the reply has no `key` at all."""

    key: str
    value: Any = MISSING
    when: Callable[[Any], bool] | None = None
    or_absent: bool = False

    def matches(self, data: Mapping[str, Any]) -> bool:
        if self.key not in data:
            return self.or_absent
        return (self.value is MISSING or data[self.key] == self.value) \
            and (self.when is None or self.when(data[self.key]))


def members(record: Any) -> tuple:
    """The records of a union `A | B` (or the one record)."""
    return typing.get_args(record) if isinstance(record, types.UnionType) else (record,)


def read_record(data: Any, record: Any, path: str, sizes: Mapping[str, int]) -> Any:
    if not isinstance(data, dict):
        raise ProbeFailure(f"{place(path)} is not a JSON object")
    options = members(record)
    chosen = next((r for r in options if getattr(r, "TAG", None) is not None and r.TAG.matches(data)), options[-1])
    values = {}
    for f in dataclasses.fields(chosen):
        spec, key = f.metadata["wire"], f.metadata["key"] or f.name
        inner = f"{path}[{key!r}]" if path else repr(key)
        values[f.name] = spec.read(data[key], inner, sizes) if key in data else spec.missing(inner)
    made = chosen(**values)
    problem = made.invalid() if hasattr(made, "invalid") else None
    if problem:
        raise ProbeFailure(f"{place(path)}: {problem}")
    return made


def read(reply: Any, record: type[R], **sizes: int) -> R:
    """`reply` as `record` (a frozen dataclass of `wire` fields, or a union of them): ProbeFailure naming the first
    field missing or malformed. `sizes` give the lengths fields ask for by name (`ListOf(..., length="params")`)."""
    return read_record(reply, record, "", sizes)


@dataclass(frozen=True)
class Failed:
    """The student's code raised, and the reply says only that: `{"error": ...}`."""

    TAG: ClassVar[Tag] = Tag("error")
    error: Returned = wire(Raised())


def is_error(value: Any) -> bool:
    """Whether a raw value is a report of a raised exception (worker.error_report writes `kind: error`)."""
    return isinstance(value, dict) and value.get("kind") == "error"


def is_object(value: Any) -> bool:
    return isinstance(value, dict)

