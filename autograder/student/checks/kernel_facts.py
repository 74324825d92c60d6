"""Facts a check gathers in the kernel, gathered the same way by the course's checks and the judge's worker: how
deeply a call nests Python calls, whether a result's graph reaches a tensor and which leaves it holds, what a backward call changed on its op,
whether a dataset holds given samples, the memory order an op's inputs are laid out in, a number's type, whether parameters hold gradients, and the mode a
Dropout was in at each forward call.

NumPy and the standard library only, no course imports: the judge ships this file as text to the kernel (as it
ships `ch03_autodiff_engine_graph.py`), so both sides gather with the very same code.
"""
import sys

import numpy as np


def laid_out(array, layout):
    """A copy of `array` with the same values in the memory order `layout`: "C" (NumPy's default); "batch_last",
    an NCHW view of (C, H, W, N) memory as chapter 10's Conv hands its output on (other ranks: Fortran order);
    "fortran", the first axis fastest, as a transpose's view lies; "reversed", a view whose every axis runs backwards
    in memory (negative strides), as `a[::-1]` is. The judge's worker lays its
    inputs out with this same function."""
    if layout == "batch_last" and array.ndim == 4:
        return np.ascontiguousarray(array.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)
    if layout in ("batch_last", "fortran"):
        return np.asfortranarray(array)
    if layout == "reversed":
        backwards = (slice(None, None, -1),) * array.ndim
        return np.ascontiguousarray(array[backwards])[backwards]
    return np.array(array, order="C")


def deepest_call(fn, *args):
    """How deep fn(*args) nested Python calls below itself: about one frame per node for a recursive search of a
    graph, a few for a loop. A profile hook counts them, so a recursion limit the code raises for itself does not
    hide them (the judge's worker counts the same way)."""
    depth = deepest = 0

    def profile(frame, event, arg):
        nonlocal depth, deepest
        if event == "call":
            depth += 1
            deepest = max(deepest, depth)
        elif event == "return":
            depth -= 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(previous)
    return deepest


def reaches(result, leaf):
    """Whether `leaf` is among the ancestors of `result` in the recorded graph (its `_inputs`, followed back)."""
    stack, seen = [result], set()
    while stack:
        node = stack.pop()
        if node is leaf:
            return True
        if id(node) not in seen:
            seen.add(id(node))
            stack.extend(getattr(node, "_inputs", ()) or ())
    return False


def stray_leaves(result, given):
    """How many leaves of `result`'s recorded graph require a gradient and are none of the `given` tensors."""
    stack, seen, stray = [result], set(), 0
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        inputs = tuple(getattr(node, "_inputs", ()) or ())
        if not inputs and getattr(node, "requires_grad", False) is True and not any(node is g for g in given):
            stray += 1
        stack.extend(inputs)
    return stray


def op_attributes(op):
    """{attribute: its repr} of an op instance: what its backward may not change."""
    try:
        return {str(name): repr(value)[:80] for name, value in sorted(getattr(op, "__dict__", {}).items())}
    except Exception:  # noqa: BLE001 (an attribute whose repr fails: nothing is told about the op's attributes)
        return {}


def changed_attributes(before, after):
    """[(attribute, repr before, repr after)] for every attribute (at most 8) that a backward call added, dropped or
    changed, from two `op_attributes`."""
    return [(name, before.get(name, "nothing"), after.get(name, "nothing"))
            for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)][:8]


def holds_samples(dataset, images, labels, call):
    """Whether a dataset holds exactly these samples: its length, and each item the tuple (image, label). `call`
    runs the student's methods (the checks' run_quietly, the worker's quietly)."""
    items = [call(dataset.__getitem__, i) for i in range(call(len, dataset))]
    return len(items) == len(labels) and all(
        isinstance(item, tuple) and len(item) == 2 and np.array_equal(np.asarray(item[0]), image)
        and bool(np.asarray(item[1]) == label) for item, image, label in zip(items, images, labels))


def number_report(value):
    """A number as a verdict reads it: its type's name (`float`, `numpy.float32`), whether it is a Python int (not
    a bool) or a Python float, and its text."""
    cls = type(value)
    return {"type_name": f"numpy.{cls.__name__}" if cls.__module__ == "numpy" else cls.__name__,
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, float), "text": repr(value)[:60]}


def has_gradients(params):
    """Whether any parameter holds a gradient that is not zero: a backward ran. Cleared gradients (None or zeros)
    do not count."""
    return any(getattr(p, "grad", None) is not None and bool(np.any(np.asarray(p.grad) != 0)) for p in params)


def dropout_modes(dropout):
    """The list of `dropout`'s `training` flag at each of its forward calls from now on: the evidence that batches
    went through it in training mode (the model's mode after the calls says nothing of that)."""
    modes, forward = [], dropout.forward

    def recorded(*args, **kwargs):
        modes.append(bool(getattr(dropout, "training", False)))
        return forward(*args, **kwargs)

    dropout.forward = recorded
    return modes

