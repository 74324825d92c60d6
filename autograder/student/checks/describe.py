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
    kind = type(value)
    return kind.__name__ if kind.__module__ in ("builtins", "__main__") else f"{kind.__module__}.{kind.__name__}"
