"""The course's own chapter-3 ops and Tensor operators, forward only, so that each op is graded alone.

While op X's forward or backward is checked (`swapped`), every other chapter-3 op class in the
notebook and every Tensor operator (`a * b`, `1 - a`, `a.sum(axes)`, `a.broadcast_to(shape)`, ...)
is the course's: a Summation.backward written with `broadcast_to` is graded the same whether the
student's BroadcastTo and `broadcast_to` are right, wrong or not written yet. A backward's result is
only read as values, so no stand-in needs a backward of its own.

NumPy only, no course imports: the judge ships this file as text to the kernel (as it ships
`slow.py`), so the kernel's check and the judge's probe swap exactly the same things.
"""
import contextlib

import numpy as np


def sigmoid(a):
    """The logistic function through tanh, (1 + tanh(a / 2)) / 2: the same values, and no exponential to overflow
    (nor a warning) for the very negative inputs some checks use."""
    return 0.5 * (1 + np.tanh(0.5 * a))


# op class name -> its settings -> a NumPy forward known to be right
FORWARDS = {
    "Add": lambda: lambda a, b: a + b,
    "Sub": lambda: lambda a, b: a - b,
    "Mul": lambda: lambda a, b: a * b,
    "Div": lambda: lambda a, b: a / b,
    "Pow": lambda: lambda a, b: np.power(a, b),
    "Negate": lambda: lambda a: -a,
    "Log": lambda: lambda a: np.log(a),
    "Exp": lambda: lambda a: np.exp(a),
    "Sqrt": lambda: lambda a: np.sqrt(a),
    "Abs": lambda: lambda a: np.abs(a),
    "ReLU": lambda: lambda a: np.maximum(a, 0),
    "Sigmoid": lambda: sigmoid,
    "Tanh": lambda: lambda a: np.tanh(a),
    "MatMul": lambda: lambda a, b: a @ b,
    "AddScalar": lambda scalar: lambda a: a + scalar,
    "MulScalar": lambda scalar: lambda a: a * scalar,
    "DivScalar": lambda scalar: lambda a: a / scalar,
    "PowerScalar": lambda scalar: lambda a: np.power(a, scalar),
    "Reshape": lambda shape: lambda a: np.reshape(a, shape),
    "Transpose": lambda axes=None: lambda a: np.swapaxes(a, -1, -2) if axes is None else np.transpose(a, axes),
    "Summation": lambda axes=None: lambda a: np.sum(a, axis=axes),
    "BroadcastTo": lambda shape: lambda a: np.broadcast_to(a, shape),
    "GetItem": lambda index: lambda a: a[index],
    "GELU": lambda: lambda a: 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3))),
}

MISSING = object()


def forward_only(Function, name, make_forward):
    """An op class named `name` on the notebook's own Function (so its __call__ records the graph), whose
    forward is `make_forward(*settings)`: a stand-in known to be right, with no backward of its own."""
    def __init__(self, *args, **kwargs):
        self._forward = make_forward(*args, **kwargs)

    def forward(self, *arrays):
        return self._forward(*arrays)

    return type(name, (Function,), {"__init__": __init__, "forward": forward})


def standin(Function, name):
    """The course's forward-only op class `name` (FORWARDS)."""
    return forward_only(Function, name, FORWARDS[name])


@contextlib.contextmanager
def stood_in(namespace, forwards):
    """The notebook's names `forwards` ({class name: make_forward}) bound to forward-only stand-ins for the block,
    then restored (a name the notebook lacked is removed again): yields {class name: stand-in class}."""
    saved = {name: namespace[name] for name in forwards if name in namespace}
    standins = {name: forward_only(namespace["Function"], name, make) for name, make in forwards.items()}
    namespace.update(standins)
    try:
        yield standins
    finally:
        for name in forwards:
            namespace.pop(name, None)
        namespace.update(saved)


def operator_results(namespace, texts, arrays, call, told=lambda facts: facts):
    """Each Tensor operator expression of `texts` (`a * b`, `2 / a`, ...) on fresh float64 Tensors a, b, m of
    `arrays` that require a gradient, with every op class the course's stand-in meanwhile: the operators check's
    facts {"text", "tensors": (a, b, m), "result", "error" (None, or what it raised), "standin" (whether the result was
    made by a stand-in)}, each passed to `told` while the stand-ins are in place; the list of what `told` made.
    `call` runs the student's code (the checks' run_quietly, the worker's quietly)."""
    Tensor, results = namespace["Tensor"], []
    with stood_in(namespace, FORWARDS) as standins:
        for text in texts:
            tensors = tuple(Tensor(np.array(x), dtype=np.float64, requires_grad=True) for x in arrays)
            try:
                result = call(eval, text, {"__builtins__": __builtins__}, dict(zip("abm", tensors)))
            except Exception as error:  # noqa: BLE001 (the student's error is a fact of the case)
                results.append(told({"text": text, "tensors": tensors, "result": None, "error": error, "standin": False}))
                continue
            results.append(told({"text": text, "tensors": tensors, "result": result, "error": None,
                                 "standin": isinstance(getattr(result, "_op", None), tuple(standins.values()))}))
    return results


def operator_methods(Tensor, ops):
    """The Tensor operators as the course writes them, building the op classes `ops` (name -> class)."""

    def binary(tensor_op, scalar_op):
        def method(self, other):
            return ops[tensor_op]()(self, other) if isinstance(other, Tensor) else ops[scalar_op](other)(self)
        return method

    def __sub__(self, other):
        return ops["Sub"]()(self, other) if isinstance(other, Tensor) else ops["AddScalar"](-other)(self)

    def transpose(self, axes=None):
        return ops["Transpose"](axes)(self)

    def total(self, axes=None):
        return ops["Summation"](axes)(self)

    return {
        "__add__": binary("Add", "AddScalar"),
        "__radd__": lambda self, other: ops["AddScalar"](other)(self),
        "__mul__": binary("Mul", "MulScalar"),
        "__rmul__": lambda self, other: ops["MulScalar"](other)(self),
        "__neg__": lambda self: ops["Negate"]()(self),
        "__sub__": __sub__,
        "__rsub__": lambda self, other: ops["AddScalar"](other)(ops["Negate"]()(self)),
        "__truediv__": binary("Div", "DivScalar"),
        "__rtruediv__": lambda self, other: ops["MulScalar"](other)(ops["PowerScalar"](-1)(self)),
        "__pow__": binary("Pow", "PowerScalar"),
        "__matmul__": lambda self, other: ops["MatMul"]()(self, other),
        "matmul": lambda self, other: ops["MatMul"]()(self, other),
        "reshape": lambda self, shape: ops["Reshape"](tuple(shape))(self),
        "transpose": transpose,
        "sum": total,
        "broadcast_to": lambda self, shape: ops["BroadcastTo"](tuple(shape))(self),
        "__getitem__": lambda self, index: ops["GetItem"](index)(self),
    }


def is_op(value, Function):
    return isinstance(value, type) and issubclass(value, Function)


@contextlib.contextmanager
def swapped(namespace, keep=()):
    """The notebook's chapter-3 op classes but those named in `keep` (the op under test), and the Tensor
    operators but those named in `keep` (`__getitem__`), replaced by the course's for the block, then restored.

    Only names that hold an op class are swapped (chapter 4's `ReLU` module keeps its name); a
    namespace without `Function` and `Tensor` (chapters 1 and 2) is left alone.
    """
    Function, Tensor = namespace.get("Function"), namespace.get("Tensor")
    if not (isinstance(Function, type) and isinstance(Tensor, type)):
        yield
        return
    ops = {name: standin(Function, name) for name in FORWARDS}
    names = [name for name in FORWARDS if name not in keep and is_op(namespace.get(name), Function)]
    saved_names = {name: namespace[name] for name in names}
    methods = {name: method for name, method in operator_methods(Tensor, ops).items() if name not in keep}
    saved_methods = {name: Tensor.__dict__.get(name, MISSING) for name in methods}
    namespace.update({name: ops[name] for name in names})
    for name, method in methods.items():
        setattr(Tensor, name, method)
    try:
        yield
    finally:
        namespace.update(saved_names)
        for name, method in saved_methods.items():
            if method is MISSING:
                delattr(Tensor, name)
            else:
                setattr(Tensor, name, method)
