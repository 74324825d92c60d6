"""The course's forward of every op whose backward is checked, built from the op's settings.

A backward is checked against finite differences of the student's own forward. That alone would let a
forward that computes nothing (a constant has a zero gradient) pass any backward that returns zeros,
so the backward checks also hold those differences, and the output's shape, to the course's forward
here; a forward that fails them is sent back to its own check ("fix forward first").
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from autograder.student import gradcheck
from autograder.student.checks import ch03_autodiff_course_ops as course_ops, formulas, slow
from autograder.student.checks.ch03_autodiff_op_specs import OPS as CH03_OPS
from autograder.student.checks.describe import INPUT_NAMES, number, shapes_label

# op class name -> its settings' names, in the order its constructor takes them (as its __init__ stores
# them, provided code in every chapter); the slips of a backward read them too (slips.PARAMETERS). Chapter 3's
# ops keep theirs in their records (ch03_autodiff_op_specs.py).
SETTINGS = {**{name: op.settings for name, op in CH03_OPS.items() if op.settings},
            "EmbeddingLookup": ("indices",), "LogSumExp": ("axes",), "Softmax": ("axis",),
            "SoftmaxCrossEntropy": ("labels",),
            "Flip": ("axes",), "Dilate": ("axes", "dilation"), "Undilate": ("axes", "dilation"),
            "Conv": ("stride", "padding"), "MaxPool": ("kernel_size",)}


# Chapter 10's ops, as slow.py's loops define them, written with NumPy's own indexing: the same numbers, fast
# enough to run at every nudged input of a backward check (tests/unit/test_forged_forwards.py compares them).

def conv(stride=1, padding=0):
    def forward(x, w):
        padded = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
        windows = sliding_window_view(padded, w.shape[-2:], axis=(2, 3))[:, :, ::stride, ::stride]
        return np.einsum("ncyxij,ocij->noyx", windows, w)
    return forward


def flip(axes):
    return lambda a: np.flip(a, tuple(axes))


def spaced(axes, dilation, ndim):
    chosen = {ax % ndim for ax in axes}
    return tuple(slice(None, None, dilation + 1) if ax in chosen else slice(None) for ax in range(ndim))


def dilate(axes, dilation):
    def forward(a):
        chosen = {ax % a.ndim for ax in axes}
        out = np.zeros(tuple((n - 1) * (dilation + 1) + 1 if ax in chosen else n for ax, n in enumerate(a.shape)),
                       dtype=a.dtype)
        out[spaced(axes, dilation, a.ndim)] = a
        return out
    return forward


def undilate(axes, dilation):
    return lambda a: a[spaced(axes, dilation, a.ndim)].copy()


def max_pool(kernel_size=2):
    def forward(a):
        k, (n, c, h, w) = kernel_size, a.shape
        return a[:, :, :h // k * k, :w // k * k].reshape(n, c, h // k, k, w // k, k).max(axis=(3, 5))
    return forward


FORWARDS = {
    **course_ops.FORWARDS,        # the kernel's stand-ins: the chapter-3 ops the Tensor operators build, and more
    **{name: op.forward for name, op in CH03_OPS.items() if op.forward},       # chapter 3's other ops
    "EmbeddingLookup": lambda indices: lambda weight: formulas.embedding(weight, indices),
    "LogSumExp": lambda axes=None: lambda a: formulas.logsumexp(a, axes),
    "Softmax": lambda axis=-1: lambda a: formulas.softmax(a, axis),
    "Affine": lambda: lambda x, w, b: x @ w + b,
    "SoftmaxCrossEntropy": lambda labels: lambda z: formulas.softmax_loss(z, np.asarray(labels, dtype=int)),
    "Flip": flip, "Dilate": dilate, "Undilate": undilate, "MaxPool": max_pool, "Conv": conv,
}
SLOW = {"Flip": slow.flip, "Dilate": slow.dilate, "Undilate": slow.undilate, "MaxPool": slow.max_pool, "Conv": slow.conv}


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


class Nudged:
    """The course's forward at every input nudged as gradcheck nudges it, computed once for both out_grads."""

    def __init__(self, reference, arrays, step=gradcheck.STEP):
        self.reference, self.arrays, self.step = reference, [np.array(a, dtype=np.float64) for a in arrays], step
        self.outputs = gradcheck.perturbed_outputs(reference, self.arrays, step)

    def gradients(self, upstream):
        """The course forward's central differences for this out_grad, one array per input."""
        return gradcheck.central_differences(self.arrays, self.outputs, upstream, self.step)


def wrong_differences(label, nudged, arrays, out, numeric, upstream, out_dtype=None):
    """None when the finite differences of the student's forward (`numeric`, one array per input, for this
    `upstream`) are the course's forward's (`nudged`, a Nudged), else what to tell them: that forward is wrong
    at the checked point, or (one that remembers its first answer, say) only around it. A forward off by a
    constant keeps its differences right, and its backward is judged as it stands."""
    reference, want = nudged.reference, nudged.gradients(upstream)
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
                f"{number(mismatch.numeric)}.{FIX_FORWARD_FIRST}{rounded_note(out_dtype, arrays)}")
    return None


def rounded_note(out_dtype, arrays):
    """What to add when forward returned a float type of less precision than its float64 inputs (float32): its
    finite differences are rounding noise, whatever its values. "" otherwise. Shared with the judge."""
    if out_dtype is None or not all(np.asarray(a).dtype == np.float64 for a in arrays):
        return ""
    dtype = np.dtype(out_dtype)
    if dtype.kind != "f" or dtype.itemsize >= 8:
        return ""
    return (f"\n  Your forward returns {dtype} for these float64 inputs: {dtype} keeps about "
            f"{np.finfo(dtype).precision} significant digits, so a nudge of 1e-5 is lost to its rounding and the "
            "differences are noise. Compute in the inputs' own dtype (NumPy does by itself); Function.__call__ "
            "converts the result to the Tensor's dtype.")


FIX_FORWARD_FIRST = ("\n  backward is checked by finite differences of your forward, which must be right on these "
                     "very inputs and settings first: fix forward for them (the forward's own check may try other "
                     "settings and pass), then this check judges your backward.")
