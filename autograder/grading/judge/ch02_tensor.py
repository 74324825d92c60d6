"""Judge-side checks of chapter 2's Tensor constructor and factories, on the judge's secret values.

The kernel builds tensors from the judge's values and shapes (`in_kernel/ch02_tensor.py`) and reports their
`.data` as arrays; the judge compares them with the arrays it expects. Whether a field is None, True or
(), and whether a copy shares memory with its original, only the kernel can say: those are taken as
reported, never the values. The verdicts and messages are `checks/ch02_tensor.py`'s.
"""
import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, decode_array, returned
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


def shown_data(report):
    """A reported .data as `rules.shown` gives it."""
    if not isinstance(report, dict):
        raise ProbeFailure("a tensor's data in the reply is not an object")
    if report.get("missing") is True:
        return None
    if "value" in report:
        return decode_array(report["value"])
    return str(report.get("type_name", "?"))[:100]


def field_facts(report):
    if not isinstance(report, dict):
        raise ProbeFailure("a tensor's field in the reply is not an object")
    if report.get("missing") is True:
        return {"missing": True}
    facts = {k: report.get(k) is True for k in ("is_none", "is_true", "is_false", "empty_tuple")}
    return dict(facts, repr=str(report.get("repr", "?"))[:60])


def results_of(reply, count):
    results = reply.get("results")
    if not isinstance(results, list) or len(results) != count or not all(isinstance(r, dict) for r in results):
        raise ProbeFailure(f"the reply does not hold {count} results")
    return results


@judges("constructor")
def constructor(rng, case):
    """Tensor(...) on secret values for one kind of input, or "copies" (a tensor owns its values)."""
    if case == "copies":
        return (yield from copies(rng))
    text, request, want, requires_grad = constructor_case(rng, case)
    (result,) = results_of((yield {"kind": "tensor_constructor", "cases": [request]}), 1)
    if "error" in result:
        message = describe_error("Tensor", "__init__", returned(result["error"]))
        return failed(message + f"\n  while computing {text}." + rules.setter_hint(message))
    fields = result.get("fields")
    if not isinstance(fields, dict):
        raise ProbeFailure("the reply's fields are missing")
    return rules.constructor_verdict(text, shown_data(result.get("data")), want, requires_grad,
                                     {name: field_facts(fields.get(name)) for name in rules.FIELDS})


def copies(rng):
    data = values(rng, 3)
    cases = [{"data": data, "kwargs": {}, "copy_of": "array" if source == "array" else "tensor",
              "original_kwargs": rules.source_kwargs(source)} for source in rules.COPY_SOURCES]
    results = results_of((yield {"kind": "tensor_constructor", "cases": cases}), len(cases))
    for source, result in zip(rules.COPY_SOURCES, results):
        text = rules.copies_text(source, data)
        if "error" in result:
            message = describe_error("Tensor", "__init__", returned(result["error"]))
            hint = rules.setter_hint(message) or (f"\n  Hint: {rules.TENSOR_NOT_ARRAY}" if source != "array" else "")
            return failed(message + f"\n  while computing {text}." + hint)
        fields = result.get("fields")
        if not isinstance(fields, dict):
            raise ProbeFailure("the reply's fields are missing")
        problem = rules.copies_problem(text, source, np.asarray(data, np.float32), shown_data(result.get("data")),
                                       result.get("shares") is True, field_facts(fields.get("requires_grad")))
        if problem:
            return problem
    return passed("✔ a tensor made from a tensor or an array owns a copy of the values")


def made(result, name, shape, kwargs):
    """A reported factory call as a `rules.Made`."""
    text = rules.factory_text(name, shape, kwargs)
    if "error" in result:
        error = returned(result["error"])
        message = describe_error(name, "()", error).replace(f"{name}.()", f"{name}()", 1)
        return rules.Made(text, rules.factory_failure(name, shape, text, message))
    type_name = str(result.get("type_name", "?"))[:100]
    if result.get("is_tensor") is not True:
        return rules.Made(text, type_name=type_name)
    data = shown_data(result.get("data"))
    flag = result.get("requires_grad")
    return rules.Made(text, type_name=type_name, is_tensor=True,
                      data=data if isinstance(data, np.ndarray) else np.array(np.nan),
                      requires_grad=flag if isinstance(flag, bool) else str(flag)[:60])


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
    results = results_of((yield {"kind": "tensor_factories", "calls": calls}), len(calls))
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
    results = results_of((yield {"kind": "tensor_repr", "cases": request}), len(cases))
    for ((values, dtype, requires_grad, op), want), result in zip(cases, results):
        text = rules.repr_text(values, dtype, requires_grad, op)
        if "error" in result:
            return failed(describe_error("Tensor", "__repr__", returned(result["error"])) + f"\n  for {text}.")
        got = result.get("text")
        if not isinstance(got, str):
            raise ProbeFailure("a repr in the reply is not text")
        problem = rules.repr_problem(text, got, want)
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
    if not isinstance(report, dict):
        raise ProbeFailure("a property in the reply is not an object")
    kind, text = str(report.get("type_name", "?"))[:100], str(report.get("repr", "?"))[:100]
    value = Shown(text)
    if report.get("is_dtype") is True:
        try:
            value = np.dtype(str(report.get("dtype"))[:40])
        except TypeError:
            pass
    elif isinstance(report.get("int"), int):
        value = report["int"]
    elif isinstance(report.get("ints"), list) and all(isinstance(v, int) for v in report["ints"][:32]):
        value = (tuple if kind == "tuple" else list)(report["ints"][:32])
    return value, kind, report.get("method") is True


PROPERTY_SHAPES = {"matrix": (2,), "scalar": (), "float64": (3,), "empty": (3,)}


@judges("properties")
def properties(rng, case="matrix"):
    """shape, ndim, size and dtype of a tensor over a secret array of a secret shape."""
    _, dtype = rules.PROPERTY_CASES[case]
    shape = [int(s) for s in rng.integers(1, 6, len(PROPERTY_SHAPES[case]))]
    if case == "empty":
        shape[int(rng.integers(len(shape)))] = 0
    array = rng.standard_normal(tuple(shape)).astype(dtype)
    reply = yield {"kind": "tensor_properties", "values": array, "dtype": dtype}
    text = rules.properties_text(array)
    if "error" in reply:
        return failed(describe_error("Tensor", str(reply.get("name"))[:20], returned(reply["error"])) + f"\n  for {text}.")
    members = reply.get("members")
    if not isinstance(members, dict):
        raise ProbeFailure("the reply's properties are missing")
    return rules.properties_verdict(text, array, {name: member_value(members.get(name)) for name in rules.PROPERTIES})


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
    reply = yield {"kind": "tensor_conversions", "numpy": np.asarray(numpy_values), "numpy_dtype": plan["numpy"],
                   "sentinel": sentinel, "item": items, "detach": np.asarray(detach_values),
                   "detach_dtype": plan["detach"], "len": length}
    text = rules.numpy_text(numpy_values, plan["numpy"])
    numpy_reply = reply.get("numpy")
    if not isinstance(numpy_reply, dict):
        raise ProbeFailure("the reply's numpy() is missing")
    if "error" in numpy_reply:
        return failed(describe_error("Tensor", "numpy", returned(numpy_reply["error"])) + f"\n  for {text}.")
    after = decode_array(numpy_reply.get("after"))
    problem = rules.numpy_problem(text, plan["numpy"], np.asarray(numpy_values, plan["numpy"]),
                                  shown_data(numpy_reply.get("before")), bool(after.size and after.flat[0] == sentinel))
    if problem:
        return problem
    got_items = reply.get("item")
    if not isinstance(got_items, list) or not 1 <= len(got_items) <= len(items):
        raise ProbeFailure("the reply's item() results are missing")
    for value, got in zip(items, got_items):
        text = f"t = Tensor({value!r})"
        if not isinstance(got, dict):
            raise ProbeFailure("an item() result in the reply is not an object")
        if "error" in got:
            return failed(describe_error("Tensor", "item", returned(got["error"])) + f"\n  for {text}."
                          + f"\n  Hint: {rules.ITEM_HINT}")
        result, kind = got.get("value"), str(got.get("type_name", "?"))[:100]
        is_float = kind == "float" and isinstance(result, float)
        problem = rules.item_problem(text, float(np.asarray(value, dtype=np.float32).item()), is_float,
                                     result if is_float else None, str(got.get("repr", "?"))[:60], kind)
        if problem:
            return problem
    if len(got_items) != len(items):
        raise ProbeFailure("the reply stops before the last item()")
    detach = reply.get("detach")
    want = np.asarray(detach_values, plan["detach"])
    text = rules.detach_text(detach_values, plan["detach"])
    if not isinstance(detach, dict):
        raise ProbeFailure("the reply's detach() is missing")
    if "error" in detach:
        return failed(describe_error("Tensor", "detach", returned(detach["error"])) + f"\n  for {text}.")
    if "wrong" in detach:
        problem = rules.detach_problem(text, want, str(detach["wrong"])[:100])
    else:
        problem = rules.detach_problem(text, want, None, shown_data(detach.get("data")), detach.get("grad_off") is True,
                                       str(detach.get("grad_repr", "?"))[:60], detach.get("no_history") is True)
    if problem:
        return problem
    count = reply.get("len")
    if isinstance(count, dict):
        return failed(describe_error("Tensor", "__len__", returned(count.get("error"))) + f"\n  for a tensor of shape {length}.")
    if not isinstance(count, (int, str)) or isinstance(count, bool):
        raise ProbeFailure("the reply's len() is malformed")
    return rules.len_problem(length, count if isinstance(count, int) else Shown(count)) or passed(
        "✔ numpy(), item(), detach() and len() work" if case == "basic" else
        "✔ numpy(), item(), detach() and len() keep the dtype and work on every shape")
