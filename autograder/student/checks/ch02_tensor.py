"""Checks of chapter 2's Tensor: the constructor, properties, conversions, repr and factories.

Every check but the constructor's runs with the rest of the class swapped for stand-ins that are
known to be right (`ch02_tensor_facts.standins`), so a broken `__init__` or `dtype` costs its own exercise only.
"""
from dataclasses import dataclass

import numpy as np

from autograder.student.checks.ch02_tensor_facts import MISSING, Mul, field_facts, standins
from autograder.student.checks.describe import type_name
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed


def call(label, fn, *args, **kwargs):
    """(result, None) or (None, a failed Verdict that tells the student's exception).

    `label` names the student's code: "Tensor.numpy" for a method, "zeros" for a function.
    """
    try:
        return run_quietly(lambda: fn(*args, **kwargs)), None
    except Exception as error:  # noqa: BLE001 (any student error becomes a message)
        name, _, method = label.partition(".")
        message = describe_exception(name, method or "()", error)
        return None, failed(message if method else message.replace(f"{name}.()", f"{name}()", 1))


def show(x):
    return np.array2string(np.asarray(x), separator=", ") if np.ndim(x) else repr(np.asarray(x).item())


# ── the constructor ─────────────────────────────────────────────────────────────────────────

def constructor_cases(Tensor):
    """name: (the call as text, a thunk, the expected values, the expected dtype, requires_grad)."""
    ints = np.arange(6, dtype=np.int64).reshape(2, 3)
    doubles = np.linspace(-1, 1, 4)
    return {
        "list": ("Tensor([[1.5, 2.0, -3.0], [4.0, 5.0, 6.5]])",
                 lambda: Tensor([[1.5, 2.0, -3.0], [4.0, 5.0, 6.5]]), [[1.5, 2.0, -3.0], [4.0, 5.0, 6.5]], "float32", True),
        "requires_grad": ("Tensor([1.0, 2.0], requires_grad=False)",
                          lambda: Tensor([1.0, 2.0], requires_grad=False), [1.0, 2.0], "float32", False),
        "ints": ("Tensor([1, 2, 3])", lambda: Tensor([1, 2, 3]), [1.0, 2.0, 3.0], "float32", True),
        "scalar": ("Tensor(3.5)", lambda: Tensor(3.5), 3.5, "float32", True),
        "float64": ('Tensor([1, 2], dtype="float64")', lambda: Tensor([1, 2], dtype="float64"), [1.0, 2.0], "float64", True),
        "ndarray": ("Tensor(np.arange(6).reshape(2, 3))", lambda: Tensor(ints), ints, "float32", True),
        "float64 ndarray": ("Tensor(np.linspace(-1, 1, 4))", lambda: Tensor(doubles), doubles.astype(np.float32), "float32", True),
    }


def check_constructor(Tensor, case):
    """Tensor(data, dtype=..., requires_grad=...) stores a NumPy array of that dtype and no history. The rest of the
    class is the finished one meanwhile (stand-ins: its properties exist, as they do once section 2.3 is done), so a
    constructor that assigns to a property fails here, not only in later cells."""
    with standins(Tensor, keep=("__init__",)):
        if case == "copies":
            return check_copies(Tensor)
        return check_new_tensor(Tensor, case)


def check_new_tensor(Tensor, case):
    text, build, values, dtype, requires_grad = constructor_cases(Tensor)[case]
    t, error = call("Tensor.__init__", build)
    if error:
        return failed(error.message + f"\n  while computing {text}." + setter_hint(error.message))
    fields = vars(t)
    return constructor_verdict(text, shown(fields.get("data", MISSING)), np.asarray(values, dtype=dtype), requires_grad,
                               {name: field_facts(fields.get(name, MISSING)) for name in FIELDS})


FIELDS = ("requires_grad", "grad", "_op", "_inputs")

PROPERTY_SETTER = ("\n  Hint: shape, ndim, size and dtype are read-only properties of Tensor (section 2.3), computed from "
                   ".data: once they exist, assigning self.dtype (or self.shape, ...) in the constructor raises, and "
                   "then every Tensor(...) fails. Store the five fields of the table only.")


def setter_hint(message):
    """The hint for a constructor's exception `message` (as describe_exception tells it) that says it assigned to a
    property, or ""."""
    return PROPERTY_SETTER if "AttributeError" in message and ("no setter" in message or "can't set" in message) else ""


def shown(data):
    """A tensor's .data as a verdict reads it: an ndarray, None when missing, or the name of its type."""
    return None if data is MISSING else data if isinstance(data, np.ndarray) else type_name(data)


def constructor_verdict(text, data, want, requires_grad, fields):
    """The verdict on a new tensor: `data` (`shown`) must equal `want` in value and dtype, and `fields`
    (`field_facts`) say requires_grad, no gradient, no history."""
    if data is None:
        return failed(f"{text}: the tensor has no .data; store the values as a NumPy array in self.data.")
    if not isinstance(data, np.ndarray):
        return failed(f"{text}: .data is a {data}, expected a numpy.ndarray.\n  Hint: whatever the input is (a number, "
                      "a list, an array, a Tensor), .data holds a NumPy array of the requested dtype.")
    if data.dtype != want.dtype:
        hint = ("convert the values to the `dtype` argument: left to itself, NumPy keeps "
                f"{data.dtype} for this input" if data.dtype != np.float32 else "use the `dtype` argument, not a fixed float32")
        return failed(f"{text}: .data has dtype {data.dtype}, expected {want.dtype}.\n  Hint: {hint}.")
    if data.shape != want.shape:
        return failed(f"{text}: .data has shape {data.shape}, expected {want.shape}.")
    if not np.array_equal(data, want):
        return failed(f"{text}: .data is {show(data)}, expected {show(want)}.")
    expected = {"requires_grad": (requires_grad, "is_true" if requires_grad else "is_false"),
                "grad": (None, "is_none"), "_op": (None, "is_none"), "_inputs": ((), "empty_tuple")}
    for name, (value, fact) in expected.items():
        got = fields[name]
        if got.get("missing") or got.get(fact) is not True:
            got_text = "missing" if got.get("missing") else got.get("repr")
            why = "the `requires_grad` argument" if name == "requires_grad" else "a new tensor has no gradient and no history"
            return failed(f"{text}: .{name} is {got_text}, expected {value!r} ({why}).")
    return passed(f"✔ {text} holds {data.dtype} values of shape {data.shape}")


COPY_VALUES = [1.0, 2.0, 3.0]


COPY_SOURCES = ("tensor", "float64 tensor", "array", "constant tensor")   # what b = Tensor(...) is made from


def copies_text(source, values):
    if source == "array":
        return f"b = Tensor(x) with x = np.array({values!r}, dtype=np.float32)"
    kwarg = {"float64 tensor": ', dtype="float64"', "constant tensor": ", requires_grad=False"}.get(source, "")
    return f"b = Tensor(a) with a = Tensor({values!r}{kwarg})"


def source_kwargs(source):
    """The keyword arguments `a` of a COPY_SOURCES case is made with."""
    return {"float64 tensor": {"dtype": "float64"}, "constant tensor": {"requires_grad": False}}.get(source, {})


def check_copies(Tensor):
    """A tensor made from another tensor (of the default dtype, or of float64), or from an array, owns its values
    in the default dtype."""
    for source in COPY_SOURCES:
        text = copies_text(source, COPY_VALUES)
        if source == "array":
            src, error = np.array(COPY_VALUES, dtype=np.float32), None
        else:
            src, error = call("Tensor.__init__", Tensor, COPY_VALUES, **source_kwargs(source))
        b, error = (None, error) if error else call("Tensor.__init__", Tensor, src)
        if error:
            hint = setter_hint(error.message) or (f"\n  Hint: {TENSOR_NOT_ARRAY}" if source != "array" else "")
            return failed(error.message + f"\n  while computing {text}." + hint)
        original = src if source == "array" else src.data
        data = getattr(b, "data", None)
        problem = copies_problem(text, source, COPY_VALUES, shown(data) if data is not None else None,
                                 isinstance(data, np.ndarray) and np.shares_memory(data, original),
                                 field_facts(vars(b).get("requires_grad", MISSING)))
        if problem:
            return problem
    return passed("✔ a tensor made from a tensor or an array owns a copy of the values, in the requested dtype")


TENSOR_NOT_ARRAY = "a Tensor is not an array: take its .data first."
KEEPS_REQUIRES_GRAD = ("b took requires_grad from the tensor it was made from. A Tensor given as data is an input like "
                       "any other: only its values are taken, and requires_grad is the argument (True by default), "
                       "whatever the original's was.")
KEEPS_DTYPE = ("b kept the dtype of the tensor it was made from. A Tensor given as data is an input like any "
               "other: its values are converted to the `dtype` argument (float32 by default), whatever dtype "
               "they had.")


def copies_problem(text, source, values, data, shares, requires_grad=None):
    """What is wrong with b.data (`shown`) made from a `source` of COPY_SOURCES holding `values`, or None;
    `shares`: whether it shares memory with the original; `requires_grad`: b's requires_grad as `field_facts`
    tells it (None: not looked at)."""
    if not isinstance(data, np.ndarray) or data.dtype != np.float32 or not np.array_equal(data, values):
        hint = ""
        if source != "array" and not numeric(data):
            hint = f"\n  Hint: {TENSOR_NOT_ARRAY}"
        elif source == "float64 tensor" and isinstance(data, np.ndarray) and data.dtype == np.float64:
            hint = f"\n  Hint: {KEEPS_DTYPE}"
        return failed(f"{text}: b.data is {show(data) if isinstance(data, np.ndarray) else data} "
                      f"({data.dtype if isinstance(data, np.ndarray) else 'not an array'}), "
                      f"expected a float32 array {show(np.asarray(values, dtype=np.float32))}." + hint)
    if shares:
        return failed(f"{text}: b.data shares memory with the original, so changing one changes the other.\n"
                      "  Hint: np.asarray reuses an array that already has the right dtype; np.array copies it.")
    if requires_grad is not None and (requires_grad.get("missing") or requires_grad.get("is_true") is not True):
        got = "missing" if requires_grad.get("missing") else requires_grad.get("repr")
        hint = f"\n  Hint: {KEEPS_REQUIRES_GRAD}" if requires_grad.get("is_false") else ""
        return failed(f"{text}: b.requires_grad is {got}, expected True (the `requires_grad` argument, True by "
                      "default)." + hint)
    return None


def numeric(data):
    """True when `data` (`shown`) is an array of numbers: a Tensor given whole to NumPy makes an array of objects."""
    return isinstance(data, np.ndarray) and data.dtype.kind in "biuf"


# ── properties and conversions ────────────────────────────────────────────────────────────

def make(Tensor, values, dtype="float32", requires_grad=True):
    return Tensor(np.asarray(values), dtype=dtype, requires_grad=requires_grad)


PROPERTY_CASES = {
    "matrix": (lambda: np.arange(6.0).reshape(2, 3), "float32"),
    "scalar": (lambda: np.array(2.5), "float32"),
    "float64": (lambda: np.ones((4, 1, 2)), "float64"),
    "empty": (lambda: np.zeros((2, 0, 3)), "float32"),
}


PROPERTIES = ("shape", "ndim", "size", "dtype")


def properties_text(array):
    return f"a tensor whose .data has shape {array.shape} and dtype {array.dtype}"


def check_properties(Tensor, case="matrix"):
    """shape, ndim, size and dtype describe .data, as NumPy does."""
    values, dtype = PROPERTY_CASES[case]
    with standins(Tensor, keep=PROPERTIES):
        t = make(Tensor, values(), dtype)
        text, got = properties_text(t.data), {}
        for name in PROPERTIES:
            value, error = call(f"Tensor.{name}", getattr, t, name)
            if error:
                return failed(error.message + f"\n  for {text}.")
            got[name] = (value, type_name(value), callable(value) and not isinstance(value, np.dtype))
        return properties_verdict(text, t.data, got)


def properties_verdict(text, array, got):
    """The verdict on the properties of a tensor over `array`: `got` {name: (value, its type's name, is it a method)}."""
    for name, want in [("shape", array.shape), ("ndim", array.ndim), ("size", array.size), ("dtype", array.dtype)]:
        value, kind, method = got[name]
        if method:
            return failed(f"Tensor.{name} for {text} is a method; it must be a property, read without a call as "
                          f"NumPy's array.{name} is.\n  Hint: Python's property decorator makes one; it goes below "
                          "@tensor_method (decorators apply from the bottom up), so that tensor_method attaches the "
                          "property.")
        if not same_kind(value, want) or value != want:
            return failed(f"Tensor.{name} for {text}: received {value!r} ({kind}), "
                          f"expected {want!r} ({type_name(want)}), what NumPy's array.{name} gives.")
    return passed(f"✔ shape, ndim, size and dtype are right for {text}")


def same_kind(got, want):
    """A tuple for shape, an integer for ndim and size, a NumPy dtype for dtype: what NumPy returns."""
    if isinstance(want, tuple):
        return isinstance(got, tuple)
    if isinstance(want, np.dtype):
        return isinstance(got, np.dtype)
    return isinstance(got, (int, np.integer)) and not isinstance(got, bool)


CONVERSION_CASES = {"basic": {"numpy": "float32", "item": [[[2.5]]], "detach": "float32", "len": (3, 2)},
                    "more": {"numpy": "float64", "item": [7, [-1.25]], "detach": "float64", "len": (4,)}}


def check_conversions(Tensor, case="basic"):
    """numpy() copies, item() gives a Python number, detach() cuts the history, len() counts rows."""
    plan = CONVERSION_CASES[case]
    with standins(Tensor, keep=("numpy", "item", "detach", "__len__")):
        problem = check_numpy(Tensor, plan["numpy"])
        for values in plan["item"]:
            problem = problem or check_item(Tensor, values)
        problem = problem or check_detach(Tensor, plan["detach"]) or check_len(Tensor, plan["len"])
    return problem or passed("✔ numpy(), item(), detach() and len() work" if case == "basic" else
                             "✔ numpy(), item(), detach() and len() keep the dtype and work on every shape")


def numpy_text(values, dtype):
    return f"t = Tensor({values!r}, dtype={dtype!r})"


NUMPY_VALUES = [[1.0, 2.0], [3.0, 4.0]]


def check_numpy(Tensor, dtype):
    t = make(Tensor, NUMPY_VALUES, dtype)
    text = numpy_text(NUMPY_VALUES, dtype)
    got, error = call("Tensor.numpy", lambda: t.numpy())
    if error:
        return failed(error.message + f"\n  for {text}.")
    before = shown(got.copy() if isinstance(got, np.ndarray) else got)
    if isinstance(got, np.ndarray) and got.size and got.flags.writeable:
        got.flat[0] = 99.0
    return numpy_problem(text, dtype, NUMPY_VALUES, before, bool(t.data.flat[0] == 99.0))


def numpy_problem(text, dtype, values, got, changed):
    """What is wrong with t.numpy() = `got` (`shown`) for a tensor of `values`, or None; `changed`: writing
    99 to the result's first element changed the tensor."""
    if not isinstance(got, np.ndarray) or got.dtype != np.dtype(dtype) or not np.array_equal(got, values):
        return failed(f"t.numpy() for {text} returned {got!r}, expected a {dtype} numpy.ndarray equal to t.data.")
    if changed:
        return failed(f"t.numpy() for {text} returned t.data itself: writing to the result changed the tensor.\n"
                      "  Hint: the caller owns what numpy() returns and may write to it, so it must be a copy of the "
                      "values, never the tensor's own array.")
    return None


def check_item(Tensor, values):
    t = make(Tensor, values)
    got, error = call("Tensor.item", lambda: t.item())
    text = f"t = Tensor({values!r})"
    if error:
        return failed(error.message + f"\n  for {text}.\n  Hint: {ITEM_HINT}")
    return item_problem(text, float(np.asarray(values, dtype=np.float32).item()), type(got) is float,
                        got if type(got) is float else None, repr(got)[:60], type_name(got))


ITEM_HINT = ("item() gives the single value of a one-element tensor, whatever its shape ((), (1,) or (1, 1)), as a "
             "Python number: NumPy's ndarray.item() does that for any one-element array.")


def item_problem(text, want, is_float, value, shown_repr, kind):
    """What is wrong with t.item() (a Python float `value`, or else told by its repr and type), or None."""
    if not is_float or value != want:
        scalar = ("a NumPy scalar is not a Python float, though it prints like one. "
                  if kind.startswith("numpy.") and not kind.endswith("ndarray") else "")
        return failed(f"t.item() for {text} returned {shown_repr} ({kind}), expected the Python float {want!r}.\n"
                      f"  Hint: {scalar}{ITEM_HINT}")
    return None


def detach_text(values, dtype):
    return f"t = Tensor({values!r}, dtype={dtype!r}), made by an op"


def check_detach(Tensor, dtype):
    values = [1.5, -2.0, 3.25]
    t = make(Tensor, values, dtype)
    t._op, t._inputs = object(), (make(Tensor, [0.0, 0.0, 0.0]),)
    text = detach_text(values, dtype)
    got, error = call("Tensor.detach", lambda: t.detach())
    if error:
        return failed(error.message + f"\n  for {text}.")
    if not isinstance(got, Tensor) or got is t:
        return detach_problem(text, t.data, "t itself" if got is t else type_name(got))
    return detach_problem(text, t.data, None, shown(got.data), got.requires_grad is False, repr(got.requires_grad),
                          got._op is None and tuple(got._inputs) == ())


def detach_problem(text, want, wrong=None, data=None, grad_off=True, grad_repr="", no_history=True):
    """What is wrong with t.detach() for a tensor of values `want`, or None: `wrong` names what came instead of
    a new Tensor; else its .data (`shown`), whether requires_grad is False (its repr), whether it has no history."""
    if wrong:
        return failed(f"t.detach() for {text} returned {wrong}; expected a NEW Tensor.")
    problems = []
    if not isinstance(data, np.ndarray) or not np.array_equal(data, want):
        problems.append(f"its data is {data!r}, expected the same values as t")
    elif data.dtype != want.dtype:
        problems.append(f"its dtype is {data.dtype}, expected {want.dtype}, t's own"
                        + ("; the constructor's default is float32, so a detached copy of another dtype must be told "
                           "t's dtype" if data.dtype == np.float32 else ""))
    if not grad_off:
        problems.append(f"requires_grad is {grad_repr}, expected False")
    if not no_history:
        problems.append("it still has a history (_op, _inputs); a detached tensor has none")
    if problems:
        return failed(f"t.detach() for {text}: " + "; ".join(problems) + ".")
    return None


def check_len(Tensor, shape):
    t = make(Tensor, np.zeros(shape))
    got, error = call("Tensor.__len__", len, t)
    if error:
        return failed(error.message + f"\n  for a tensor of shape {shape}.")
    return len_problem(shape, got)


def len_problem(shape, got):
    if got != shape[0]:
        return failed(f"len(t) for a tensor of shape {shape} is {got!r}, expected {shape[0]}: the length of the first axis.")
    return None


# ── repr ───────────────────────────────────────────────────────────────────────────────────

REPR_CASES = {
    "basic": [
        (([1.0, 2.0], "float32", True, None), "Tensor([1., 2.], requires_grad=True)"),
        (([0.5, -3.0, 1 / 3], "float32", False, None), "Tensor([ 0.5   , -3.    ,  0.3333])"),
    ],
    "more": [
        (([1.5], "float64", True, None), "Tensor([1.5], dtype=float64, requires_grad=True)"),
        (([2.0, 4.0], "float32", True, Mul()), "Tensor([2., 4.], requires_grad=True, op=Mul)"),
        ((3.5, "float32", True, None), "Tensor(3.5, requires_grad=True)"),
        (([[1.0, 2.0], [3.0, 4.0]], "float32", False, None), "Tensor([[1., 2.],\n        [3., 4.]])"),
        (([0.5, -1.25, 3.0], "float16", False, None), "Tensor([ 0.5 , -1.25,  3.  ], dtype=float16)"),
    ],
}


def repr_text(values, dtype, requires_grad, op):
    return (f"Tensor({values!r}" + (f", dtype={dtype!r}" if dtype != "float32" else "")
            + f", requires_grad={requires_grad})" + (" made by a Mul op" if op else ""))


def check_repr(Tensor, case="basic"):
    """repr(t) reads like the call that builds t, with dtype, requires_grad and op when they matter."""
    with standins(Tensor, keep=("__repr__",)):
        for (values, dtype, requires_grad, op), want in REPR_CASES[case]:
            t = make(Tensor, values, dtype, requires_grad)
            t._op = op
            text = repr_text(values, dtype, requires_grad, op)
            got, error = call("Tensor.__repr__", repr, t)
            if error:
                return failed(error.message + f"\n  for {text}.")
            problem = repr_problem(text, got, want)
            if problem:
                return problem
    return passed("✔ repr(t) shows values, dtype, requires_grad and op as specified")


def repr_problem(text, got, want):
    """What is wrong with the repr `got` of the tensor `text`, or None."""
    if got != want:
        at = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
        return failed(f"repr of {text}:\n  expected: {want}\n  received: {got}\n"
                      f"  first difference at character {at}: expected {want[at:at + 12]!r}, "
                      f"received {got[at:at + 12]!r}.\n  Hint: {repr_hint(want, got)}")
    return None


def repr_hint(want, got):
    if "\n" in want and "\n" in got and unindented(want) == unindented(got):
        return ("only the indentation of the rows differs: the rows of a matrix line up under the first one, which "
                "starts after \"Tensor(\", so each later row is indented by that prefix's width; np.array2string "
                "indents them when it is told the prefix (section 2.5).")
    if "dtype" in got and "dtype" not in want:
        return "show dtype only when it is not float32."
    if "dtype" in want and "dtype" not in got:
        if "dtype=float64" in want:
            return "show dtype when it is not float32, the default (section 2.5)."
        return ("show dtype whenever it is not float32, float64 or any other (section 2.5): compare the dtype "
                "with float32, the default, not with float64.")
    if "op=" in want:
        return "after the other fields comes the op that made the tensor, shown by the name of its class (Mul here)."
    return ("the values are np.array2string's, with 4 digits after the point and \", \" between values (section 2.5); "
            "after them come dtype when it is not float32, requires_grad when it is true, and op when an op made "
            "the tensor, each only when it applies.")


def unindented(text):
    """`text` with every line's leading spaces removed."""
    return [line.lstrip() for line in text.split("\n")]


# ── factories ──────────────────────────────────────────────────────────────────────────────

@register("factories")
def check_factories(namespace, kind, case="basic"):
    """zeros and ones ("constant"), or randn and rand ("random"): shape, values, dtype, requires_grad, seed."""
    Tensor = namespace["Tensor"]
    with standins(Tensor, keep=()):
        if kind == "constant":
            return check_constant(namespace, Tensor, case)
        return check_random(namespace, Tensor, case)


@dataclass
class Made:
    """What one factory call gave, as the verdicts read it: the failed Verdict of an exception, or whether
    it is a Tensor (its type's name), its .data, and its requires_grad (True, False, or a repr)."""

    text: str
    failure: object = None
    type_name: str = ""
    is_tensor: bool = False
    data: np.ndarray = None
    requires_grad: object = None


def factory_text(name, shape, kwargs):
    return f"{name}({', '.join([*map(repr, shape), *(f'{k}={v!r}' for k, v in kwargs.items())])})"


def factory_failure(name, shape, text, message):
    """The failed Verdict of a factory that raised `message` (as describe_exception tells it)."""
    hint = ("\n  Hint: the factory gathers its numbers into one tuple, shape; NumPy takes that tuple whole, as "
            "its first argument: spread back into separate numbers, the second one is read as a dtype."
            if name in ("zeros", "ones") and len(shape) > 1 and "data type" in message else "")
    return failed(message + f"\n  while computing {text}." + hint)


def produce(namespace, Tensor, name, *shape, **kwargs):
    """`name`(*shape, **kwargs) called in the notebook, as a `Made`."""
    text = factory_text(name, shape, kwargs)
    t, error = call(name, namespace[name], *shape, **kwargs)
    if error:
        return Made(text, factory_failure(name, shape, text, error.message))
    if not isinstance(t, Tensor):
        return Made(text, type_name=type_name(t))
    flag = t.requires_grad
    return Made(text, type_name=type_name(t), is_tensor=True, data=t.data,
                requires_grad=flag if isinstance(flag, bool) else repr(flag)[:60])


def made_problem(made):
    if made.failure:
        return made.failure
    if not made.is_tensor:
        return failed(f"{made.text} returned a {made.type_name}, expected a Tensor.")
    return None


def expect_layout(t, text, shape, dtype, requires_grad):
    if t.data.shape != shape:
        return failed(f"{text} has shape {t.data.shape}, expected {shape}.")
    if t.data.dtype != np.dtype(dtype):
        return failed(f"{text} has dtype {t.data.dtype}, expected {dtype}: the factory's dtype argument must reach "
                      "the Tensor it makes.")
    if t.requires_grad is not requires_grad:
        return failed(f"{text} has requires_grad={t.requires_grad!r}, expected {requires_grad}: the factory's "
                      "requires_grad argument must reach the Tensor it makes.")
    return None


CONSTANT_CALLS = {"basic": [("zeros", (2, 3), {}), ("ones", (4,), {})],
                  "more": [("zeros", (2,), {"dtype": "float64"}), ("ones", (3, 1, 2), {"requires_grad": False}),
                           ("zeros", (), {}), ("ones", (2, 2), {"dtype": "float64", "requires_grad": False}),
                           ("zeros", (3,), {"requires_grad": False})]}


def check_constant(namespace, Tensor, case):
    calls = CONSTANT_CALLS[case]
    return constant_verdict(case, calls, [produce(namespace, Tensor, name, *shape, **kwargs) for name, shape, kwargs in calls])


def constant_verdict(case, calls, made):
    """The verdict on zeros and ones: `made` holds what each of `calls` (name, shape, kwargs) gave."""
    for (name, shape, kwargs), t in zip(calls, made):
        error = made_problem(t) or expect_layout(t, t.text, shape, kwargs.get("dtype", "float32"),
                                                 kwargs.get("requires_grad", True))
        if error:
            return error
        fill = 0.0 if name == "zeros" else 1.0
        if not np.all(t.data == fill):
            return failed(f"{t.text} holds {show(t.data)}, expected every value to be {fill}.")
    return passed(f"✔ zeros and ones give the right shape, values, dtype and requires_grad ({case} cases)")


RANDOM_CASES = {"basic": ((2, 3), (0, 1), {}), "more": ((4, 1, 5), (12, 13), {"dtype": "float64", "requires_grad": False})}
DISTRIBUTION_SEED = 2024


def check_random(namespace, Tensor, case):
    shape, seeds, kwargs = RANDOM_CASES[case]
    runs = {name: [produce(namespace, Tensor, name, *shape, seed=seed, **kwargs) for seed in (seeds[0], seeds[0], seeds[1])]
            for name in ("randn", "rand")}
    draws = None if case == "basic" else \
        {name: produce(namespace, Tensor, name, 100, 100, seed=DISTRIBUTION_SEED) for name in ("randn", "rand")}
    return random_verdict(shape, kwargs, runs, draws, seeds[0])


def random_verdict(shape, kwargs, runs, draws, seed=None):
    """The verdict on randn and rand: `runs` {name: [seed a, seed a again, seed b]} of `Made`s of `shape`,
    `seed` being seed a; `draws` {name: a 100×100 draw} for the distributions, or None."""
    for name in ("randn", "rand"):
        first, again, other = runs[name]
        error = made_problem(first) or expect_layout(first, first.text, shape, kwargs.get("dtype", "float32"),
                                                     kwargs.get("requires_grad", True))
        if error:
            return error
        error = made_problem(again) or made_problem(other)
        if error:
            return error
        text = first.text
        if not np.array_equal(first.data, again.data):
            hint = ("draw from a generator made from the seed (NumPy's default_rng), so that the same seed starts "
                    "the same sequence.") + (
                " And seed=0 is a seed too: ask whether the seed is None, not whether it is true." if seed == 0 else "")
            return failed(f"{text} called twice gave different values: the same seed must give the same numbers.\n"
                          f"  Hint: {hint}")
        if np.array_equal(first.data, other.data):
            return failed(f"{text} and {other.text} gave the same values: a different seed must give different numbers.")
        if name == "rand" and not (np.all(first.data >= 0) and np.all(first.data < 1)):
            return failed(f"{text} holds {show(first.data)}; rand draws uniformly from [0, 1).\n"
                          "  Hint: the generator's random method draws uniformly from [0, 1); its standard_normal "
                          "is randn's.")
    if draws is not None:
        return distributions_verdict(draws)
    return passed(f"✔ randn and rand are seeded, shaped {shape} and {kwargs.get('dtype', 'float32')}")


def distributions_verdict(draws):
    """10,000 draws: for randn the mean is 0 ± 0.05 and the std 1 ± 0.05 (more than 5 standard errors)."""
    for name, mean, std in [("randn", 0.0, 1.0), ("rand", 0.5, 12 ** -0.5)]:
        t = draws[name]
        error = made_problem(t)
        if error:
            return error
        got_mean, got_std = float(np.mean(t.data)), float(np.std(t.data))
        if abs(got_mean - mean) > 0.05 or abs(got_std - std) > 0.05:
            return failed(f"{t.text}: 10,000 draws have mean {got_mean:.3f} and standard deviation {got_std:.3f}; "
                          f"expected about {mean} and {std:.3f}.\n  Hint: randn is standard normal, rand uniform on [0, 1).")
    return passed("✔ randn and rand are seeded, shaped, typed, and draw from the right distributions")


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

@register("constructor")
def constructor_check(namespace, case):
    """Tensor(...) for one kind of input: list, requires_grad, ints, scalar, float64, ndarray,
    float64 ndarray, or "copies" (a tensor made from a tensor or an array owns its values)."""
    return check_constructor(namespace["Tensor"], case)


@register("properties")
def properties_check(namespace, case="matrix"):
    """shape, ndim, size, dtype on a matrix, scalar, float64 or empty tensor (the rest of Tensor stood in)."""
    return check_properties(namespace["Tensor"], case)


@register("conversions")
def conversions_check(namespace, case="basic"):
    """numpy(), item(), detach(), len(): "basic", or "more" (float64, other shapes)."""
    return check_conversions(namespace["Tensor"], case)


@register("tensor_repr")
def tensor_repr_check(namespace, case="basic"):
    """repr(t) against the specified text: "basic", or "more" (dtype, op, scalar, matrix)."""
    return check_repr(namespace["Tensor"], case)
