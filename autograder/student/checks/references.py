"""The course's forward of every op whose backward is checked, built from the op's settings.

A backward is checked against finite differences of the student's own forward. That alone would let a
forward that computes nothing (a constant has a zero gradient) pass any backward that returns zeros,
so the backward checks also hold those differences, and the output's shape, to the course's forward
here; a forward that fails them is sent back to its own check ("fix forward first").
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from autograder.student import gradcheck
from autograder.student.checks import course_ops, formulas, slow
from autograder.student.checks.describe import INPUT_NAMES, number, shapes_label

# op class name -> its settings' names, in the order its constructor takes them (as its __init__ stores
# them, provided code in every chapter); chapter 3's scalar and shape ops are course_ops.FORWARDS'.
SETTINGS = {"Transpose": ("axes",), "Summation": ("axes",), "Reshape": ("shape",), "BroadcastTo": ("shape",),
            "AddScalar": ("scalar",), "MulScalar": ("scalar",), "DivScalar": ("scalar",),
            "PowerScalar": ("scalar",), "GetItem": ("index",),
            "EmbeddingLookup": ("indices",), "LogSumExp": ("axes",), "Softmax": ("axis",),
            "Flip": ("axes",), "Dilate": ("axes", "dilation"), "Undilate": ("axes", "dilation"),
            "Conv": ("stride", "padding"), "MaxPool": ("kernel_size",)}


def conv(stride=1, padding=0):
    """slow.conv's formula with NumPy's sliding windows: the same numbers, fast enough to run at every
    nudged input of a backward check (tests/test_checks_conv.py compares the two)."""
    def forward(x, w):
        padded = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
        windows = sliding_window_view(padded, w.shape[-2:], axis=(2, 3))[:, :, ::stride, ::stride]
        return np.einsum("ncyxij,ocij->noyx", windows, w)
    return forward


FORWARDS = {
    **course_ops.FORWARDS,
    "EmbeddingLookup": lambda indices: lambda weight: formulas.embedding(weight, indices),
    "LogSumExp": lambda axes=None: lambda a: formulas.logsumexp(a, axes),
    "Softmax": lambda axis=-1: lambda a: formulas.softmax(a, axis),
    "Flip": slow.flip, "Dilate": slow.dilate, "Undilate": slow.undilate, "MaxPool": lambda kernel_size=2: slow.max_pool(kernel_size),
    "Conv": conv,
}


def of_instance(name, op):
    """The kernel's view: the course's forward for the settings the op instance holds; None for an op
    the course has no forward for."""
    if name not in FORWARDS:
        return None
    return FORWARDS[name](**{p: getattr(op, p) for p in SETTINGS.get(name, ()) if hasattr(op, p)})


def of_call(name, args, kwargs):
    """The judge's view: the course's forward for the settings of the test cell's constructor call."""
    if name not in FORWARDS:
        return None
    return FORWARDS[name](*args, **dict(kwargs))


def wrong_shape(label, reference, arrays, out):
    """None when the student's forward output `out` has the shape of the course's on `arrays`, else what to
    tell them: out_grad takes the output's shape, so a backward cannot be checked against this forward."""
    want = np.shape(reference(*[a.copy() for a in arrays]))
    if np.shape(out) == want:
        return None
    return f"{label}.forward returned shape {np.shape(out)} on inputs {shapes_label(arrays)}, expected {want}.{FIX_FORWARD_FIRST}"


def wrong_differences(label, reference, arrays, out, numeric, upstream):
    """None when the finite differences of the student's forward (`numeric`, one array per input, for this
    `upstream`) are the course's forward's, else what to tell them: that forward is wrong at the checked
    point, or (one that remembers its first answer, say) only around it. A forward off by a constant
    keeps its differences right, and its backward is judged as it stands."""
    want = gradcheck.numerical_gradients(reference, arrays, upstream)
    for i, (got, expected) in enumerate(zip(numeric, want)):
        mismatch = gradcheck.worst_mismatch(got, expected)
        if not mismatch:
            continue
        at_point = gradcheck.worst_mismatch(out, reference(*[a.copy() for a in arrays]), rtol=gradcheck.RTOL,
                                            atol=gradcheck.ATOL)
        if at_point:
            return (f"{label}.forward is wrong on inputs {shapes_label(arrays)}: out{list(at_point.index)} = "
                    f"{number(at_point.analytic)}, expected {number(at_point.numeric)}.{FIX_FORWARD_FIRST}")
        return (f"{label}.forward is right on inputs {shapes_label(arrays)} but not when an input is nudged by a "
                f"tiny step: finite differences of your forward give {number(mismatch.analytic)} at "
                f"{INPUT_NAMES[i]}{list(mismatch.index)}, those of the course's forward "
                f"{number(mismatch.numeric)}.{FIX_FORWARD_FIRST}")
    return None


FIX_FORWARD_FIRST = ("\n  backward is checked by finite differences of your forward, which must be right first: "
                     "fix forward (its own check says more), then this check judges your backward.")
