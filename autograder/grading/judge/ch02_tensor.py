"""Judge-side checks of chapter 2's Tensor constructor and factories, on the judge's secret values.

The kernel builds tensors from the judge's values and shapes (`in_kernel/ch02_tensor.py`) and reports their
`.data` as arrays; the judge compares them with the arrays it expects. Whether a field is None, True or
(), and whether a copy shares memory with its original, only the kernel can say: those are taken as
reported, never the values. The verdicts and messages are `checks/ch02_tensor.py`'s.
"""
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, Returned
from autograder.grading.judge.replies import (Array, AsText, Bool, Const, Either, Failed, Flag, Int, Json, ListOf,
                                              Nested, Optional, Or, Raised, Tag, Text, is_object, read, wire)
from autograder.student.checks import ch02_tensor as rules
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges


def values(rng, shape, low=-10, high=10):
    """Secret floats with two decimals, as a nested list: they read well in a message."""
    return np.round(rng.uniform(low, high, shape), 2).tolist()


def constructor_case(rng, case):
    """(the call as text, the request's case, the expected array, requires_grad)."""
    if case == "list":
        data = values(rng, (2, 3))
        return f"Tensor({data!r})", {"data": data, "kwargs": {}}, np.asarray(data, np.float32), True
    if case == "requires_grad":
        data = values(rng, 2)
        return (f"Tensor({data!r}, requires_grad=False)", {"data": data, "kwargs": {"requires_grad": False}},
                np.asarray(data, np.float32), False)
    if case == "ints":
        data = [int(i) for i in rng.integers(-50, 50, 3)]
        return f"Tensor({data!r})", {"data": data, "kwargs": {}}, np.asarray(data, np.float32), True
    if case == "scalar":
        data = float(np.round(rng.uniform(-10, 10), 2))
        return f"Tensor({data!r})", {"data": data, "kwargs": {}}, np.asarray(data, np.float32), True
    if case == "float64":
        data = [int(i) for i in rng.integers(-50, 50, 2)]
        return (f'Tensor({data!r}, dtype="float64")', {"data": data, "kwargs": {"dtype": "float64"}},
                np.asarray(data, np.float64), True)
    if case == "ndarray":
        data = rng.integers(-50, 50, (2, 3))
        return f"Tensor(np.array({data.tolist()!r}))", {"data": data, "kwargs": {}}, data.astype(np.float32), True
    data = rng.uniform(-1, 1, 4)                        # "float64 ndarray"
    return (f"Tensor(x) with x = np.array({data.tolist()!r}) (float64)", {"data": data, "kwargs": {}},
            data.astype(np.float32), True)


# ── the replies ──

@dataclass(frozen=True)
class Missing:
    """The tensor has no such attribute."""

    TAG: ClassVar[Tag] = Tag("missing", True)


@dataclass(frozen=True)
class Values:
    """A tensor's .data, an array of numbers."""

    TAG: ClassVar[Tag] = Tag("value")
    value: np.ndarray = wire(Array())


@dataclass(frozen=True)
class NotValues:
    """A tensor's .data that is not an array of numbers: its type."""

    type_name: str = wire(AsText(100, absent="?"))


DATA = Nested(Missing | Values | NotValues)


def shown_data(report):
    """A reported .data as `rules.shown` gives it: None (missing), the array, or its type's name."""
    return None if isinstance(report, Missing) else report.value if isinstance(report, Values) else report.type_name


@dataclass(frozen=True)
class FieldFacts:
    """One field of a new tensor, as `rules.field_facts` describes it: what only the kernel can say of it."""

    is_none: bool = wire(Flag())
    is_true: bool = wire(Flag())
    is_false: bool = wire(Flag())
    empty_tuple: bool = wire(Flag())
    repr: str = wire(AsText(60, absent="?"))


FACTS = Nested(Missing | FieldFacts)


def field_facts(report):
    return {"missing": True} if isinstance(report, Missing) else dict(vars(report))


@dataclass(frozen=True)
class Fields:
    """The facts of each of `rules.FIELDS`."""

    requires_grad: Missing | FieldFacts = wire(FACTS)
    grad: Missing | FieldFacts = wire(FACTS)
    op: Missing | FieldFacts = wire(FACTS, key="_op")
    inputs: Missing | FieldFacts = wire(FACTS, key="_inputs")

    def named(self, name):
        return field_facts(getattr(self, name.lstrip("_")))


@dataclass(frozen=True)
class Constructed:
    """Tensor(...) of one case: its .data and fields, and (for a copy) whether it shares the original's memory."""

    data: Missing | Values | NotValues = wire(DATA)
    fields: Fields = wire(Nested(Fields))
    shares: bool = wire(Flag())


@dataclass(frozen=True)
class Constructions:
    results: list[Failed | Constructed] = wire(ListOf(Nested(Failed | Constructed), length="cases"))


@dataclass(frozen=True)
class MadeTensor:
    """A factory call that gave a Tensor: its .data and requires_grad (a bool, or its repr)."""

    TAG: ClassVar[Tag] = Tag("is_tensor", True)
    type_name: str = wire(AsText(100, absent="?"))
    data: Missing | Values | NotValues = wire(DATA)
    requires_grad: bool | str = wire(Or(Bool(), AsText(60, absent=None)))


@dataclass(frozen=True)
class MadeOther:
    """A factory call that gave something else than a Tensor: its type."""

    type_name: str = wire(AsText(100, absent="?"))


@dataclass(frozen=True)
class Factories:
    results: list[Failed | MadeTensor | MadeOther] = wire(
        ListOf(Nested(Failed | MadeTensor | MadeOther), length="cases"))


@dataclass(frozen=True)
class ReprText:
    """repr(t)'s text."""

    text: str = wire(Text(None))


@dataclass(frozen=True)
class Reprs:
    results: list[Failed | ReprText] = wire(ListOf(Nested(Failed | ReprText), length="cases"))


@dataclass(frozen=True)
class Member:
    """A property's value as data (in_kernel's member_report): its type and repr, and its value when it is a dtype,
    an int or a sequence of ints; whether it is a method."""

    type_name: str = wire(AsText(100, absent="?"))
    shown: str = wire(AsText(100, absent="?"), key="repr")
    is_dtype: bool = wire(Flag())
    dtype: str = wire(AsText(40, absent=None))
    whole: int | None = wire(Or(Int(), Const(None)), key="int")
    wholes: list[int] | None = wire(Or(ListOf(Int(), most=32), Const(None)), key="ints")
    method: bool = wire(Flag())


@dataclass(frozen=True)
class Members:
    shape: Member = wire(Nested(Member))
    ndim: Member = wire(Nested(Member))
    size: Member = wire(Nested(Member))
    dtype: Member = wire(Nested(Member))


@dataclass(frozen=True)
class PropertyFailed:
    """Reading the property `name` raised."""

    TAG: ClassVar[Tag] = Tag("error")
    error: Returned = wire(Raised())
    name: str = wire(AsText(20, absent=None))


@dataclass(frozen=True)
class Properties:
    members: Members = wire(Nested(Members))


@dataclass(frozen=True)
class NumpyRan:
    """t.numpy(): what it returned, then t.data after the judge's sentinel was written into that result."""

    before: Missing | Values | NotValues = wire(DATA)
    after: np.ndarray = wire(Array())


@dataclass(frozen=True)
class Item:
    """t.item(): its type, its repr, and its value when a float."""

    type_name: str = wire(AsText(100, absent="?"))
    repr: str = wire(AsText(60, absent="?"))
    value: Any = wire(Json())


@dataclass(frozen=True)
class NotATensor:
    """detach() gave t itself, or no Tensor: which."""

    TAG: ClassVar[Tag] = Tag("wrong")
    wrong: str = wire(AsText(100))


@dataclass(frozen=True)
class Detached:
    """detach()'s new tensor: its .data, whether requires_grad is False (and its repr), whether it has no history."""

    data: Missing | Values | NotValues = wire(DATA)
    grad_off: bool = wire(Flag())
    grad_repr: str = wire(AsText(60, absent="?"))
    no_history: bool = wire(Flag())


@dataclass(frozen=True)
class Conversions:
    """numpy(), item() on each value, detach() and len(), in that order: the kernel stops at the first that raises,
    so a later step is missing only after one that failed."""

    numpy: Failed | NumpyRan = wire(Nested(Failed | NumpyRan))
    item: list[Failed | Item] | None = wire(Optional(ListOf(Nested(Failed | Item), least=1, most="items")))
    detach: Failed | NotATensor | Detached | None = wire(Optional(Nested(Failed | NotATensor | Detached)))
    length: Failed | int | str | None = wire(
        Optional(Either(is_object, Nested(Failed), Either(lambda v: isinstance(v, str), Text(None), Int()))), key="len")

    def invalid(self):
        steps = [("numpy", self.numpy), ("item", self.item), ("detach", self.detach), ("len", self.length)]
        for (_, step), (name, following) in zip(steps, steps[1:]):
            failed_step = isinstance(step, Failed) or (isinstance(step, list) and isinstance(step[-1], Failed))
            if failed_step:
                return None
            if following is None:
                return f"{name!r} is missing"
        return None


@judges("constructor")
def constructor(rng, case):
    """Tensor(...) on secret values for one kind of input, or "copies" (a tensor owns its values)."""
    if case == "copies":
        return (yield from copies(rng))
    text, request, want, requires_grad = constructor_case(rng, case)
    (result,) = read((yield {"kind": "tensor_constructor", "cases": [request]}), Constructions, cases=1).results
    if isinstance(result, Failed):
        message = describe_error("Tensor", "__init__", result.error)
        return failed(message + f"\n  while computing {text}." + rules.setter_hint(message))
    return rules.constructor_verdict(text, shown_data(result.data), want, requires_grad,
                                     {name: result.fields.named(name) for name in rules.FIELDS})


def copies(rng):
    data = values(rng, 3)
    cases = [{"data": data, "kwargs": {}, "copy_of": "array" if source == "array" else "tensor",
              "original_kwargs": rules.source_kwargs(source)} for source in rules.COPY_SOURCES]
    results = read((yield {"kind": "tensor_constructor", "cases": cases}), Constructions, cases=len(cases)).results
    for source, result in zip(rules.COPY_SOURCES, results):
        text = rules.copies_text(source, data)
        if isinstance(result, Failed):
            message = describe_error("Tensor", "__init__", result.error)
            hint = rules.setter_hint(message) or (f"\n  Hint: {rules.TENSOR_NOT_ARRAY}" if source != "array" else "")
            return failed(message + f"\n  while computing {text}." + hint)
        problem = rules.copies_problem(text, source, np.asarray(data, np.float32), shown_data(result.data),
                                       result.shares, result.fields.named("requires_grad"))
        if problem:
            return problem
    return passed("✔ a tensor made from a tensor or an array owns a copy of the values")


def made(result, name, shape, kwargs):
    """A reported factory call as a `rules.Made`."""
    text = rules.factory_text(name, shape, kwargs)
    if isinstance(result, Failed):
        message = describe_error(name, "()", result.error).replace(f"{name}.()", f"{name}()", 1)
        return rules.Made(text, rules.factory_failure(name, shape, text, message))
    if isinstance(result, MadeOther):
        return rules.Made(text, type_name=result.type_name)
    data = shown_data(result.data)
    return rules.Made(text, type_name=result.type_name, is_tensor=True,
                      data=data if isinstance(data, np.ndarray) else np.array(np.nan), requires_grad=result.requires_grad)


@judges("factories")
def factories(rng, kind, case="basic"):
    """zeros and ones ("constant") on secret shapes, or randn and rand ("random") on secret shapes and seeds."""
    if kind == "constant":
        calls = [(name, tuple(int(s) for s in rng.integers(1, 5, len(shape))), kwargs)
                 for name, shape, kwargs in rules.CONSTANT_CALLS[case]]
    else:
        base, kwargs = rules.RANDOM_CASES[case][0], rules.RANDOM_CASES[case][2]
        shape = tuple(int(s) for s in rng.integers(1, 6, len(base)))
        while int(np.prod(shape)) < 12:          # two seeds never agree; 12 normals all in [0, 1) 1 time in 400,000
            shape = tuple(int(s) for s in rng.integers(1, 6, len(base)))
        # The first case seeds with 0, as the course's check does: `if seed:` would take it for no seed at all.
        seed = 0 if case == "basic" else int(rng.integers(0, 2 ** 31))
        seeds = (seed, seed + 1 + int(rng.integers(0, 1000)))
        calls = [(name, shape, dict(kwargs, seed=s)) for name in ("randn", "rand") for s in (seeds[0], seeds[0], seeds[1])]
        if case != "basic":
            draw = int(rng.integers(0, 2 ** 31))
            calls += [(name, (100, 100), {"seed": draw}) for name in ("randn", "rand")]
    results = read((yield {"kind": "tensor_factories", "calls": calls}), Factories, cases=len(calls)).results
    got = [made(result, name, shape, kwargs) for result, (name, shape, kwargs) in zip(results, calls)]
    if kind == "constant":
        return rules.constant_verdict(case, calls, got)
    runs = {"randn": got[0:3], "rand": got[3:6]}
    draws = None if case == "basic" else {"randn": got[6], "rand": got[7]}
    return rules.random_verdict(shape, kwargs, runs, draws, seeds[0])


@judges("tensor_repr")
def tensor_repr(rng, case="basic"):
    """repr(t) of the course's cases (`checks.tensor.REPR_CASES`): the text is the check's literal. The inputs are
    the course's, not secret: the expected text is a format the chapter fixes for those values, and answering
    exactly those strings takes what writing __repr__ takes."""
    cases = rules.REPR_CASES[case]
    request = [(values, dtype, requires_grad, op is not None) for (values, dtype, requires_grad, op), _ in cases]
    results = read((yield {"kind": "tensor_repr", "cases": request}), Reprs, cases=len(cases)).results
    for ((values, dtype, requires_grad, op), want), result in zip(cases, results):
        text = rules.repr_text(values, dtype, requires_grad, op)
        if isinstance(result, Failed):
            return failed(describe_error("Tensor", "__repr__", result.error) + f"\n  for {text}.")
        problem = rules.repr_problem(text, result.text, want)
        if problem:
            return problem
    return passed("✔ repr(t) shows values, dtype, requires_grad and op as specified")


class Shown:
    """A value the kernel could only describe: its repr, for the message; equal to nothing."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def member_value(report):
    """A reported property as the value `rules.properties_verdict` compares: a tuple or list of ints, an int,
    a dtype, or a `Shown`; and its type's name and whether it is a method."""
    value = Shown(report.shown)
    if report.is_dtype:
        try:
            value = np.dtype(report.dtype)
        except TypeError:
            pass
    elif report.whole is not None:
        value = report.whole
    elif report.wholes is not None:
        value = (tuple if report.type_name == "tuple" else list)(report.wholes)
    return value, report.type_name, report.method


PROPERTY_SHAPES = {"matrix": (2,), "scalar": (), "float64": (3,), "empty": (3,)}


@judges("properties")
def properties(rng, case="matrix"):
    """shape, ndim, size and dtype of a tensor over a secret array of a secret shape."""
    _, dtype = rules.PROPERTY_CASES[case]
    shape = [int(s) for s in rng.integers(1, 6, len(PROPERTY_SHAPES[case]))]
    if case == "empty":
        shape[int(rng.integers(len(shape)))] = 0
    array = rng.standard_normal(tuple(shape)).astype(dtype)
    reply = read((yield {"kind": "tensor_properties", "values": array, "dtype": dtype}), PropertyFailed | Properties)
    text = rules.properties_text(array)
    if isinstance(reply, PropertyFailed):
        return failed(describe_error("Tensor", reply.name, reply.error) + f"\n  for {text}.")
    return rules.properties_verdict(text, array, {name: member_value(getattr(reply.members, name))
                                                  for name in rules.PROPERTIES})


@judges("conversions")
def conversions(rng, case="basic"):
    """numpy(), item(), detach() and len() on secret values, shapes and dtypes."""
    plan = rules.CONVERSION_CASES[case]
    numpy_values = values(rng, (2, 2))
    items = [values(rng, (1, 1)), float(np.round(rng.uniform(-10, 10), 2))] if case == "basic" else \
        [int(rng.integers(-50, 50)), values(rng, 1), float(np.round(rng.uniform(-10, 10), 2))]
    detach_values = (rng.integers(-40, 40, 3) / 4).tolist()     # exact in float32: a lost dtype shows as the dtype
    length = tuple(int(s) for s in rng.integers(1, 6, len(plan["len"])))
    sentinel = float(rng.integers(100, 1000))
    reply = read((yield {"kind": "tensor_conversions", "numpy": np.asarray(numpy_values), "numpy_dtype": plan["numpy"],
                         "sentinel": sentinel, "item": items, "detach": np.asarray(detach_values),
                         "detach_dtype": plan["detach"], "len": length}), Conversions, items=len(items))
    text = rules.numpy_text(numpy_values, plan["numpy"])
    if isinstance(reply.numpy, Failed):
        return failed(describe_error("Tensor", "numpy", reply.numpy.error) + f"\n  for {text}.")
    after = reply.numpy.after
    problem = rules.numpy_problem(text, plan["numpy"], np.asarray(numpy_values, plan["numpy"]),
                                  shown_data(reply.numpy.before), bool(after.size and after.flat[0] == sentinel))
    if problem:
        return problem
    for value, got in zip(items, reply.item):
        text = f"t = Tensor({value!r})"
        if isinstance(got, Failed):
            return failed(describe_error("Tensor", "item", got.error) + f"\n  for {text}."
                          + f"\n  Hint: {rules.ITEM_HINT}")
        is_float = got.type_name == "float" and isinstance(got.value, float)
        problem = rules.item_problem(text, float(np.asarray(value, dtype=np.float32).item()), is_float,
                                     got.value if is_float else None, got.repr, got.type_name)
        if problem:
            return problem
    if len(reply.item) != len(items):
        raise ProbeFailure("the reply stops before the last item()")
    detach = reply.detach
    want = np.asarray(detach_values, plan["detach"])
    text = rules.detach_text(detach_values, plan["detach"])
    if isinstance(detach, Failed):
        return failed(describe_error("Tensor", "detach", detach.error) + f"\n  for {text}.")
    if isinstance(detach, NotATensor):
        problem = rules.detach_problem(text, want, detach.wrong)
    else:
        problem = rules.detach_problem(text, want, None, shown_data(detach.data), detach.grad_off, detach.grad_repr,
                                       detach.no_history)
    if problem:
        return problem
    count = reply.length
    if isinstance(count, Failed):
        return failed(describe_error("Tensor", "__len__", count.error) + f"\n  for a tensor of shape {length}.")
    return rules.len_problem(length, count if isinstance(count, int) else Shown(count)) or passed(
        "✔ numpy(), item(), detach() and len() work" if case == "basic" else
        "✔ numpy(), item(), detach() and len() keep the dtype and work on every shape")
