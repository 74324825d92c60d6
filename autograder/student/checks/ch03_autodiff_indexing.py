"""Check `x[index]` as a student writes it: through the notebook's `Tensor.__getitem__`, which must build the
notebook's GetItem with the index as given (an int, a slice with a step, a list of ints, a tuple of those).

The op checks call `GetItem(index)` directly, with the course's Tensor operators meanwhile, so only this check
reaches the student's `__getitem__`. Its verdict is shared with the judge, which has the same facts as data.
"""
from dataclasses import dataclass

import numpy as np

from autograder.student import gradcheck
from autograder.student.checks import ch03_autodiff_course_ops as course_ops
from autograder.student.checks.describe import number, type_name
from autograder.student.checks.kernel_facts import reaches
from autograder.student.checks.registry import register
from autograder.student.checks.running import run_quietly
from autograder.student.verdict import failed, passed

HINT = ("Python hands Tensor.__getitem__ the index exactly as written between the brackets: a tuple when several "
        "indices are given, a list when a list is. Pass it on to GetItem unchanged: GetItem applies it as NumPy does.")
GRAPH_HINT = ("Tensor.__getitem__ builds its result by calling a GetItem op on the tensor, whose __call__ records "
              "the graph that backward walks.")


@dataclass
class Indexed:
    """What `x[index]` gave: an exception (its type's name and message), or a value with whether its graph
    records the notebook's GetItem and reaches x."""

    error: tuple = None
    type_name: str = ""
    value: np.ndarray = None
    getitem: bool = False
    reaches: bool = False


def index_text(index):
    """`1:, ::-2` for np.s_[1:, ::-2], as it is written between brackets."""
    if isinstance(index, tuple):
        return ", ".join(index_text(i) for i in index)
    if isinstance(index, slice):
        parts = ["" if v is None else str(v) for v in (index.start, index.stop, index.step)]
        return ":".join(parts if index.step is not None else parts[:2])
    if isinstance(index, np.ndarray):
        return f"np.array({index.tolist()})"
    return repr(index)


def indexing_verdict(index, a, got):
    """The verdict on `got` (Indexed) for x[index] with x's values `a` (shared with the judge)."""
    where = f"x[{index_text(index)}] on x of shape {a.shape}"
    want = np.asarray(a[index])
    if got.error:
        if got.error[0] == "NotImplementedError":
            return failed(f"{where} raised NotImplementedError: GetItem is not written yet.")
        return failed(f"{where} raised {got.error[0]}: {got.error[1]}.\n  Hint: {HINT}")
    if got.value is None:
        return failed(f"{where} returned a {got.type_name}, expected a Tensor.\n  Hint: {HINT}")
    if got.value.shape != want.shape:
        return failed(f"{where}: expected shape {want.shape} (NumPy's a[{index_text(index)}]), received "
                      f"{got.value.shape}.\n  Hint: {HINT}")
    mismatch = gradcheck.worst_mismatch(got.value, want, rtol=1e-6, atol=1e-9)
    if mismatch:
        return failed(f"{where}: {mismatch.count} of {mismatch.size} values are wrong; worst at {list(mismatch.index)}: "
                      f"{number(float(got.value[mismatch.index]))}, expected {number(float(want[mismatch.index]))}."
                      f"\n  Hint: {HINT}")
    if not (got.getitem and got.reaches):
        return failed(f"{where} has the right values, but its graph does not record your GetItem with x as its input: "
                      f"backward could not reach x.\n  Hint: {GRAPH_HINT}")
    return passed(f"✔ x[{index_text(index)}] builds GetItem through Tensor.__getitem__ on x{a.shape}")


@register("indexing")
def indexing_check(namespace, index, shape, seed=0):
    """`x[index]` through the notebook's Tensor.__getitem__: NumPy's values, and a graph that records GetItem."""
    Tensor, GetItem = namespace["Tensor"], namespace["GetItem"]
    a = gradcheck.sample(tuple(shape), "real", np.random.default_rng(seed))
    with course_ops.swapped(namespace, keep=["GetItem", "__getitem__"]):
        x = Tensor(a.copy(), dtype=np.float64, requires_grad=True)
        try:
            result = run_quietly(lambda: x[index])
        except Exception as error:  # noqa: BLE001
            return indexing_verdict(index, a, Indexed(error=(type(error).__name__, str(error))))
    if not isinstance(result, Tensor):
        return indexing_verdict(index, a, Indexed(type_name=type_name(result)))
    return indexing_verdict(index, a, Indexed(value=np.asarray(result.data, dtype=np.float64),
                                              getitem=isinstance(getattr(result, "_op", None), GetItem),
                                              reaches=reaches(result, x)))
