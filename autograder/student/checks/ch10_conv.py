"""Chapter 10's checks beyond forward and backward: isolation, vectorization and the layers.

* `swapped` puts the slow, known-right ops of `slow.py` in the notebook's place for the length of
  one check, so a Conv.backward is graded with good Flip and Dilate whatever the student's are.
* `check_vectorized` counts the Python lines the student's code runs: vectorized NumPy runs the
  same lines for a 4-image batch of 12×12 images as for one 6×6 image; a loop over pixels does not.
* `check_conv2d` and `check_max_pool2d` grade the layers with stand-in ops.
"""
import os
import sys
import sysconfig
from pathlib import Path

import numpy as np

from autograder.student import gradcheck
from autograder.student.checks import ch07_init as init, slow
from autograder.student.checks.describe import number, op_label, shapes_label
from autograder.student.checks.ch03_autodiff_course_ops import stood_in
from autograder.student.checks.ch10_conv_facts import bias_backward_facts
from autograder.student.checks.kernel_facts import reaches
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed

STANDINS = {"Flip": slow.flip, "Dilate": slow.dilate, "Undilate": slow.undilate,
            "Conv": slow.conv, "MaxPool": slow.max_pool}


def swapped(namespace, names):
    """The notebook's ops `names` replaced by forward-only stand-ins known to be right, then restored."""
    return stood_in(namespace, {name: STANDINS[name] for name in names})


# ── vectorization ─────────────────────────────────────────────────────────────────────────────

LIBRARY_ROOTS = tuple(str(Path(p).resolve()) + os.sep for p in {
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
    str(Path(__file__).resolve().parents[2])})     # autograder/: the course package is no student code


def is_student_code(filename):
    """Notebook cells and earlier_chapters.py, not NumPy, the standard library or the course's checks."""
    if filename.startswith("<frozen"):
        return False
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return True
    return not path.startswith(LIBRARY_ROOTS)


def count_lines(fn, *args):
    """(result, number of lines of student code that `fn(*args)` ran)."""
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def scope(frame, event, arg):
        return local if is_student_code(frame.f_code.co_filename) else None

    previous = sys.gettrace()
    sys.settrace(scope)
    try:
        result = run_quietly(fn, *args)
    finally:
        sys.settrace(previous)
    return result, count


def forward_and_backward(Tensor, op, shapes, seed):
    """Run op.forward, then op.backward on a node built by hand, with random inputs of `shapes`."""
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1, 1, size=s) for s in shapes]
    out = np.asarray(op.forward(*[a.copy() for a in arrays]))
    node = Tensor(out, dtype=np.float64, requires_grad=True)
    node._op, node._inputs = op, tuple(Tensor(a, dtype=np.float64, requires_grad=True) for a in arrays)
    op.backward(Tensor(rng.standard_normal(out.shape), dtype=np.float64, requires_grad=False), node)


def check_vectorized(Tensor, op, shapes, larger, seed=0):
    """The student's forward and backward run no more Python lines on `larger` inputs than on `shapes`."""
    label = op_label(op)
    counts = []
    for sizes in (shapes, larger):
        try:
            _, lines = count_lines(forward_and_backward, Tensor, op, sizes, seed)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception(label, "forward or backward", error)
                          + f"\n  while running them on inputs {', '.join(map(str, sizes))}.")
        counts.append(lines)
    small, big = counts
    if big > small:
        return failed(
            f"{label}: forward and backward ran {small} lines of your code on inputs "
            f"{', '.join(map(str, shapes))}, but {big} lines on {', '.join(map(str, larger))}.\n"
            "  The number of Python steps grows with the batch or the image size: a Python loop over "
            "images or pixels.\n  Hint: build every window at once (sliding_window_view), then do one matmul; "
            "loops over the kernel's few offsets are fine, loops over the output's pixels are not.")
    return passed(f"✔ {label} is vectorized: {small} lines of your code run for inputs "
                  f"{', '.join(map(str, shapes))} and for inputs {', '.join(map(str, larger))}")


# ── the layers ───────────────────────────────────────────────────────────────────────────────

def _build(label, make):
    try:
        return run_quietly(make), None
    except Exception as error:  # noqa: BLE001
        return None, failed(describe_exception(label, "__init__", error))


def _call(label, module, x):
    try:
        return run_quietly(module, x), None
    except Exception as error:  # noqa: BLE001
        return None, failed(describe_exception(label, "forward", error))


def output_problem(label, got, want, hint):
    """The verdict on a layer's output array against the expected one, or None when they agree.
    Shared with the judge (autograder/grading/judge/ch10_conv.py), so both say the same thing."""
    if tuple(np.shape(got)) != want.shape:
        return failed(f"{label}: output shape {tuple(np.shape(got))}, expected {want.shape}.\n  Hint: {hint}")
    mismatch = gradcheck.worst_mismatch(np.asarray(got), want, rtol=1e-4, atol=1e-5)
    if mismatch:
        return failed(f"{label}: {mismatch.count} of {mismatch.size} output values are wrong; worst: "
                      f"out{list(mismatch.index)} = {number(mismatch.analytic)}, expected {number(mismatch.numeric)}."
                      f"\n  Hint: {hint}")
    return None


CONV2D_HINT = ("the layer is this chapter's convolution of x with its weight, at its stride and padding, plus one "
               "bias per output channel, added at every sample and position (shape it to broadcast over them).")
MAX_POOL2D_HINT = "the layer is this chapter's max-pooling Function, with the layer's kernel size, on the whole input."


def conv2d_label(in_channels, out_channels, kernel_size, stride, padding, seed):
    return f"Conv2d({in_channels}, {out_channels}, {kernel_size}, stride={stride}, padding={padding}, seed={seed})"


def parameter_problem(label, name, type_name, is_parameter, shape, want):
    """`.weight` or `.bias` must be a Parameter of shape `want`; the verdict, or None."""
    if not is_parameter:
        return failed(f"{label}: .{name} is a {type_name}, expected a Parameter (so parameters() finds it).")
    if tuple(shape) != want:
        return failed(f"{label}: .{name} has shape {tuple(shape)}, expected {want}.")
    return None


def bias_init_problem(label, bias):
    """A new Conv2d's bias must be all zeros (shared with the judge); the verdict, or None."""
    bias = np.asarray(bias, dtype=np.float64).reshape(-1)
    if bias.size == 0 or not np.any(bias):
        return None
    worst = int(np.argmax(np.abs(bias)))
    return failed(f"{label}: a new layer's .bias should be {bias.size} zeros; yours holds {np.count_nonzero(bias)} "
                  f"nonzero values, the largest bias[{worst}] = {number(bias[worst])}.\n  Hint: only the weight is "
                  "drawn at random (Kaiming uniform); the bias of each output channel starts at zero.")


def kaiming_problem(label, w, in_channels, kernel_size):
    """Weights drawn in ±sqrt(6 / fan_in), fan_in = in_channels · kernel_size²; the verdict, or None. The largest
    weight must lie within the bound and near it; with enough weights (KAIMING_VARIANCE_FROM), their variance
    must also be the bound's 2 / fan_in, within init's six standard errors: a bound from the fan-out or
    Xavier's can leave the largest weight within reach of the right bound but not the variance."""
    fan_in = in_channels * kernel_size ** 2
    bound = np.sqrt(6.0 / fan_in)
    var, n = 2.0 / fan_in, w.size
    var_off = n >= KAIMING_VARIANCE_FROM and abs(float(w.var()) - var) > init.SIGMAS * var * np.sqrt(
        (init.KURTOSIS["uniform"] - 1) / n)
    if np.abs(w).max() > bound * (1 + 1e-5) or np.abs(w).max() < 0.5 * bound or var_off:
        spread = (f"the {n} weights have variance {float(w.var()):.4g}, ranging over ±{number(np.abs(w).max())}"
                  if var_off else f"weights range over ±{number(np.abs(w).max())}")
        return failed(f"{label}: {spread}; Kaiming uniform with fan_in = {in_channels}·{kernel_size}·{kernel_size} = "
                      f"{fan_in} gives ±sqrt(6 / {fan_in}) = ±{number(bound)}, variance 2 / {fan_in} = {var:.4g}.\n"
                      "  Hint: the fan-in of a convolution is in_channels · kernel_size², the inputs one output sums over.")
    return None


KAIMING_VARIANCE_FROM = 2000     # weights: enough to tell Xavier's variance from Kaiming's (hidden Conv2d(16, 32, 3): 4,608)


def unseeded(label):
    return failed(f"{label}: two layers built with the same seed have different weights: the layer's seed must "
                  "reach the initializer that draws them.")


def untransposed_problem(label, weight, draw, shape):
    """The verdict on weights that hold `draw`, kaiming_uniform's (fan_in, out_channels) array for the layer's
    seed, reshaped to `shape` without the transpose the text asks for; None otherwise (shared with the judge).
    Only that evidence fails here: other draws are judged by their scale (kaiming_problem)."""
    if draw is None or draw.ndim != 2 or draw.size != weight.size:
        return None
    if np.array_equal(weight, draw.reshape(shape)) and not np.array_equal(weight, draw.T.reshape(shape)):
        return failed(f"{label}: the weight holds kaiming_uniform({draw.shape[0]}, {draw.shape[1]})'s numbers "
                      f"reshaped straight to {shape}, without the transpose: each filter's numbers come from "
                      "several columns of the draw, so filter o is not column o.\n  Hint: column o of the "
                      "(in_channels·k², out_channels) draw holds the fan-in of output channel o, and becomes "
                      "filter o only when the columns turn into rows before the reshape (section 10.7).")
    return None


def bias_backward_problem(label, error, grad, upstream, operand_shapes, out_shape):
    """The verdict on the gradient that reaches `.bias` when the output's gradient is `upstream` (the weight held
    still), or None. `error`: what backward raised, as text; `operand_shapes`: the shapes of the inputs of the
    op that made the output. Shared with the judge."""
    want = upstream.sum(axis=(0, 2, 3))
    unbroadcast = [tuple(s) for s in operand_shapes if tuple(s) != tuple(out_shape)]
    rule = ("the bias's gradient is out_grad summed over the samples and the positions, one number per output "
            "channel")
    if unbroadcast:
        rule = (f"the output {tuple(out_shape)} was made from an operand of shape {unbroadcast[0]}. babygrad's + does "
                "not broadcast (chapter 4): each operand gets back a gradient of the output's shape, which does not "
                "fit a smaller operand. Shape the bias to (1, out_channels, 1, 1) and broadcast_to the output's "
                "shape, so the broadcast's own backward sums the gradient back to the bias's shape")
    if error:
        return failed(f"{label}: backward from the output to .bias raised {error}\n  Hint: {rule}.")
    if grad is None:
        return failed(f"{label}: after backward from the output, .bias.grad is None: the output's graph does not "
                      f"carry a gradient to the bias.\n  Hint: {rule}.")
    if tuple(grad.shape) != want.shape:
        return failed(f"{label}: after backward from the output, .bias.grad has shape {tuple(grad.shape)}, expected "
                      f"{want.shape}.\n  Hint: {rule}.")
    mismatch = gradcheck.worst_mismatch(np.asarray(grad, dtype=np.float64), want, rtol=1e-4, atol=1e-5)
    if mismatch:
        return failed(f"{label}: after backward from the output, {mismatch.count} of {mismatch.size} values of "
                      f".bias.grad are wrong; worst: bias.grad[{mismatch.index[0]}] = {number(mismatch.analytic)}, "
                      f"expected {number(mismatch.numeric)}.\n  Hint: {rule}.")
    return None


def not_a_tensor(label, type_name):
    return failed(f"{label}: forward returned a {type_name}, expected a Tensor.")


def unreached(label, name):
    """The output's graph misses a Parameter (`.weight`, `.bias`) or the input (`name` = None)."""
    if name is None:
        return failed(f"{label}: the output's graph does not reach the input: use the MaxPool Function.")
    return failed(f"{label}: the output's graph does not reach .{name}, so it would never learn. "
                  "Build the output from Tensor operations on the Parameter itself.")


def kaiming_draw(namespace, in_channels, out_channels, kernel_size, seed):
    """The notebook's kaiming_uniform(in_channels·k², out_channels, seed=seed) as an array, or None."""
    try:
        draw = run_quietly(lambda: namespace["kaiming_uniform"](in_channels * kernel_size ** 2, out_channels, seed=seed))
        return np.asarray(getattr(draw, "data", draw), dtype=np.float64)
    except Exception:  # noqa: BLE001 (no draw to compare with: the scale checks still judge the weights)
        return None


def check_conv2d(namespace, in_channels=3, out_channels=4, kernel_size=3, stride=1, padding=0, size=(5, 6), seed=0):
    """Conv2d: Parameters of the right shapes and scale, same seed same weights, and conv(x, W) + b."""
    Tensor, Conv2d, Parameter = namespace["Tensor"], namespace["Conv2d"], namespace["Parameter"]
    label = conv2d_label(in_channels, out_channels, kernel_size, stride, padding, seed)

    def make():
        return Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, seed=seed)

    layer, error = _build(label, make)
    if error:
        return error
    weight, bias = getattr(layer, "weight", None), getattr(layer, "bias", None)
    shape = (out_channels, in_channels, kernel_size, kernel_size)
    for name, value, want in (("weight", weight, shape), ("bias", bias, (out_channels,))):
        problem = parameter_problem(label, name, type(value).__name__, isinstance(value, Parameter),
                                    getattr(value, "shape", ()), want)
        if problem:
            return problem
    problem = kaiming_problem(label, np.asarray(weight.data, dtype=np.float64), in_channels, kernel_size) \
        or bias_init_problem(label, bias.data)
    if problem:
        return problem
    again, error = _build(label, make)
    if error:
        return error
    if not np.array_equal(np.asarray(again.weight.data), np.asarray(weight.data)):
        return unseeded(label)
    problem = untransposed_problem(label, np.asarray(weight.data), kaiming_draw(namespace, in_channels, out_channels,
                                                                                kernel_size, seed), shape)
    if problem:
        return problem

    rng = np.random.default_rng(seed + 1)
    x_np = rng.uniform(-1, 1, (2, in_channels) + tuple(size))
    bias.data = np.asarray(rng.uniform(-1, 1, out_channels), dtype=bias.data.dtype)   # a zero bias would hide a missing + b
    x = Tensor(x_np, dtype=np.float64, requires_grad=False)
    with swapped(namespace, ["Conv"]):
        out, error = _call(label, layer, x)
    if error:
        return error
    if not isinstance(out, Tensor):
        return not_a_tensor(label, type(out).__name__)
    want = slow.conv(stride, padding)(x_np, np.asarray(weight.data, dtype=np.float64)) \
        + np.asarray(bias.data, dtype=np.float64)[None, :, None, None]
    problem = output_problem(f"{label} on x{x_np.shape}", out.data, want, CONV2D_HINT)
    if problem:
        return problem
    for name, param in (("weight", weight), ("bias", bias)):
        if not reaches(out, param):
            return unreached(label, name)
    upstream = rng.standard_normal(want.shape)
    error, grad, operands = bias_backward_facts(Tensor, layer, x, upstream, run_quietly,
                                                lambda: swapped(namespace, ["Conv"]))
    error = "" if error is None else f"{type(error).__name__}: {error}"
    grad = grad.data if isinstance(grad, Tensor) else grad
    grad = None if grad is None else np.asarray(grad, dtype=np.float64)
    problem = bias_backward_problem(label, error, grad, upstream, operands, want.shape)
    if problem:
        return problem
    no_bias, error = _build(label, lambda: Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                                                  padding=padding, bias=False, seed=seed))
    if error:
        return error
    bias_kind = "None" if getattr(no_bias, "bias", "missing") is None else type(getattr(no_bias, "bias", None)).__name__
    return no_bias_problem(label, bias_kind) or \
        passed(f"✔ {label}: parameters {shape} and ({out_channels},), output {want.shape} = conv(x, W) + b")


def no_bias_problem(label, bias_kind):
    """Conv2d(..., bias=False) must have .bias None: `bias_kind` is the type name of what it has (shared with the judge)."""
    if bias_kind == "None":
        return None
    return failed(f"{label.replace('seed=', 'bias=False, seed=')}: .bias is a {bias_kind}, expected None.\n  Hint: "
                  "bias=False means no bias at all: not a Parameter of zeros, which parameters() would still list "
                  "and an optimizer would train.")


def check_max_pool2d(namespace, kernel_size=2, shape=(2, 3, 6, 7), seed=0):
    """MaxPool2d: no parameters, and the MaxPool op on its input."""
    Tensor, MaxPool2d = namespace["Tensor"], namespace["MaxPool2d"]
    label = f"MaxPool2d({kernel_size})"
    layer, error = _build(label, lambda: MaxPool2d(kernel_size))
    if error:
        return error
    params = run_quietly(layer.parameters)
    if list(params):
        return has_parameters(label, len(params))
    x_np = np.random.default_rng(seed).uniform(-1, 1, shape)
    x = Tensor(x_np, dtype=np.float64, requires_grad=True)
    with swapped(namespace, ["MaxPool"]):
        out, error = _call(label, layer, x)
    if error:
        return error
    if not isinstance(out, Tensor):
        return not_a_tensor(label, type(out).__name__)
    problem = output_problem(f"{label} on x{shape}", out.data, slow.max_pool(kernel_size)(x_np), MAX_POOL2D_HINT)
    if problem:
        return problem
    if not reaches(out, x):
        return unreached(label, None)
    return passed(f"✔ {label}: {shapes_label([x_np])} → {tuple(out.shape)}")


def has_parameters(label, count):
    return failed(f"{label}: has {count} parameter(s); pooling learns nothing.")


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

@register("vectorized")
def vectorized_check(namespace, op, shapes, larger, seed=0):
    """op's forward and backward run as many Python lines on `larger` inputs as on `shapes`: no pixel loops."""
    return check_vectorized(namespace["Tensor"], op, shapes, larger, seed)


@register("conv2d")
def conv2d_check(namespace, **options):
    """The Conv2d layer: Parameters, Kaiming scale, seed, conv(x, W) + b (with a stand-in Conv)."""
    return check_conv2d(namespace, **options)


@register("max_pool2d")
def max_pool2d_check(namespace, **options):
    """The MaxPool2d layer: no parameters, MaxPool on its input (with a stand-in MaxPool)."""
    return check_max_pool2d(namespace, **options)
