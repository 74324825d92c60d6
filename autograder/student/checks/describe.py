"""Small formatting helpers so that every failure message reads the same way."""
import numpy as np

INPUT_NAMES = "abcdefgh"


def op_label(op):
    """`Summation(axes=(0, -1))`: the op's class and the settings it was built with."""
    settings = ", ".join(f"{k}={plain(v)!r}" for k, v in vars(op).items() if not k.startswith("_"))
    return f"{type(op).__name__}({settings})"


def plain(value):
    """A setting as the test cell wrote it: an index array as its nested list, on one line."""
    return value.tolist() if isinstance(value, np.ndarray) else value


def shapes_label(arrays):
    return ", ".join(f"{INPUT_NAMES[i]}{tuple(np.shape(x))}" for i, x in enumerate(arrays))


def number(x):
    return f"{x + 0.0:.6g}"         # + 0.0: a negative zero reads as 0


def index_label(name, index):
    return f"{name}[{', '.join(map(str, index))}]" if index else name


def type_name(value):
    """How a message names a value's type: `numpy.ndarray` as NumPy's users know it, a class of another module
    by its name first (`Tensor (from earlier_chapters)`), so that "a" reads right before it."""
    kind = type(value)
    if kind.__module__ in ("builtins", "__main__"):
        return kind.__name__
    if kind.__module__.split(".")[0] == "numpy":
        return f"numpy.{kind.__name__}"
    return f"{kind.__name__} (from {kind.__module__})"
