"""Judge-side checks of chapter 10's layers, Conv2d and MaxPool2d, with the op inside swapped for a stand-in.

The kernel builds the layer, runs it on the judge's secret input and reports the numbers: the
weights (twice, from two layers of the same seed), the output. The judge computes the expected output
itself with the course's slow loops (`checks/slow.py`), from its own input and bias and the reported
weights. Whether a value is a Parameter and whether the output's graph reaches it can only be
reported by the kernel, as for the Tensor operators. Order of checks and messages: `checks/ch10_conv.py`.
"""
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error, rule_gradient, standins
from autograder.grading.judge.probes import Returned
from autograder.grading.judge.replies import (AsText, Const, Default, Failed, Flag, Int, ListOf, Nested, Optional, Or,
                                              Raised, Tag, Text, is_error, read, wire)
from autograder.student.checks import ch10_conv_pool_ties as pool_ties, slow
from autograder.student.checks.ch10_conv import (
    CONV2D_HINT,
    MAX_POOL2D_HINT,
    bias_backward_problem,
    bias_init_problem,
    conv2d_label,
    has_parameters,
    kaiming_problem,
    no_bias_problem,
    not_a_tensor,
    output_problem,
    parameter_problem,
    unreached,
    unseeded,
    untransposed_problem,
)
from autograder.student.checks.describe import shapes_label
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges


# ── the replies ──

@dataclass(frozen=True)
class NotBuilt:
    """Building the layer raised."""

    TAG: ClassVar[Tag] = Tag("built", when=is_error)
    built: Returned = wire(Raised())


@dataclass(frozen=True)
class ParameterReport:
    """One of the layer's parameters: its type, whether it is a Parameter, and its value."""

    type_name: str = wire(AsText(100, absent=None))
    is_parameter: bool = wire(Flag())
    value: Returned = wire(Raised())


@dataclass(frozen=True)
class BiasBackward:
    """Backward from the output with the weight held still: what it raised (or ""), .bias.grad, and the shapes
    of the output's operands (`checks/ch10_conv.bias_backward_facts`)."""

    error: str = wire(Or(Text(400), Const("")))
    grad: Returned | None = wire(Optional(Raised()))
    operands: list[list[int]] = wire(ListOf(ListOf(Int(low=0), most=32), most=8))


@dataclass(frozen=True)
class NoBias:
    """Conv2d(..., bias=False): the type of its .bias."""

    type_name: str = wire(AsText(100, absent=None))


@dataclass(frozen=True)
class Convolved:
    """The layer's parameters, the weight of a second layer of the same seed, kaiming_uniform's draw for the same
    seed (None: none to compare with), and the output; after an output, whether its graph reaches each parameter,
    the backward to .bias, and the layer without a bias."""

    weight: ParameterReport = wire(Nested(ParameterReport))
    bias: ParameterReport = wire(Nested(ParameterReport))
    again: Returned = wire(Raised())
    draw: Returned | None = wire(Optional(Raised()))
    out: Returned = wire(Raised())
    reaches: list[bool] = wire(Default(ListOf(Flag(), length=2), [False, False]))
    bias_backward: BiasBackward | None = wire(Optional(Nested(BiasBackward)))
    no_bias: Failed | NoBias | None = wire(Optional(Nested(Failed | NoBias)))

    def invalid(self):
        if not self.out.failed and self.bias_backward is None:
            return "'bias_backward' is missing"
        if not self.out.failed and self.no_bias is None:
            return "'no_bias' is missing"
        return None


@dataclass(frozen=True)
class Pooled:
    """The layer's parameter count (None: counting raised), its output, and whether the graph reaches the input."""

    out: Returned = wire(Raised())
    parameters: int | None = wire(Optional(Int(low=0)))
    reaches: bool = wire(Flag())

    def invalid(self):
        return "'parameters' is missing" if self.parameters is None and not self.out.failed else None


@judges("conv2d")
def conv2d(rng, in_channels=3, out_channels=4, kernel_size=3, stride=1, padding=0, size=(5, 6), seed=0):
    """Conv2d: Parameters of the right shapes and scale, same seed same weights, and conv(x, W) + b."""
    label = conv2d_label(in_channels, out_channels, kernel_size, stride, padding, seed)
    x = rng.uniform(-1, 1, (2, in_channels) + tuple(size))
    bias = rng.uniform(-1, 1, out_channels)            # a zero bias would hide a missing + b
    want = slow.conv(stride, padding)(x, np.zeros((out_channels, in_channels, kernel_size, kernel_size)))
    upstream = rng.standard_normal(want.shape)
    reply = read((yield {"kind": "conv2d", "args": [in_channels, out_channels, kernel_size],
                         "kwargs": {"stride": stride, "padding": padding, "seed": seed},
                         "x": x, "bias": bias, "standins": standins(["Conv"]), "upstream": upstream}),
                 NotBuilt | Convolved)
    if isinstance(reply, NotBuilt):
        return describe_layer_error(label, "__init__", reply.built)
    shape = (out_channels, in_channels, kernel_size, kernel_size)
    params = {}
    for name, want in (("weight", shape), ("bias", (out_channels,))):
        param = getattr(reply, name)
        value = param.value
        problem = parameter_problem(label, name, param.type_name, param.is_parameter,
                                    value.value.shape if value.kind == "tensor" else (), want)
        if problem:
            return problem
        params[name] = np.asarray(value.value, dtype=np.float64)
    problem = kaiming_problem(label, params["weight"], in_channels, kernel_size) \
        or bias_init_problem(label, params["bias"])
    if problem:
        return problem
    again = reply.again
    if again.failed:
        return describe_layer_error(label, "__init__", again)
    if again.kind != "array" or not np.array_equal(again.value, params["weight"]):
        return unseeded(label)
    draw = reply.draw
    problem = untransposed_problem(label, params["weight"], np.asarray(draw.value, dtype=np.float64)
                                   if draw is not None and draw.kind in ("array", "tensor") else None, shape)
    if problem:
        return problem
    out = reply.out
    if out.failed:
        return describe_layer_error(label, "forward", out)
    if out.kind != "tensor":
        return not_a_tensor(label, out.type_name or out.kind)
    want = slow.conv(stride, padding)(x, params["weight"]) + bias[None, :, None, None]
    problem = output_problem(f"{label} on x{x.shape}", out.value, want, CONV2D_HINT)
    if problem:
        return problem
    for name, reached in zip(("weight", "bias"), reply.reaches):
        if not reached:
            return unreached(label, name)
    facts, grad = reply.bias_backward, reply.bias_backward.grad
    problem = bias_backward_problem(
        label, facts.error,
        None if grad is None or grad.kind not in ("array", "tensor") else np.asarray(grad.value, dtype=np.float64),
        upstream, [tuple(s) for s in facts.operands], want.shape)
    if problem:
        return problem
    if isinstance(reply.no_bias, Failed):
        return describe_layer_error(label, "__init__", reply.no_bias.error)
    return no_bias_problem(label, reply.no_bias.type_name) or \
        passed(f"✔ {label}: parameters {shape} and ({out_channels},), output {want.shape} = conv(x, W) + b")


@judges("max_pool2d")
def max_pool2d(rng, kernel_size=2, shape=(2, 3, 6, 7), seed=0):
    """MaxPool2d: no parameters, and the MaxPool op on its input."""
    label = f"MaxPool2d({kernel_size})"
    x = rng.uniform(-1, 1, shape)
    reply = read((yield {"kind": "max_pool2d", "kernel_size": kernel_size, "x": x, "standins": standins(["MaxPool"])}),
                 NotBuilt | Pooled)
    if isinstance(reply, NotBuilt):
        return describe_layer_error(label, "__init__", reply.built)
    out, count = reply.out, reply.parameters
    if out.failed and count is None:
        return describe_layer_error(label, "forward", out)
    if count:
        return has_parameters(label, count)
    if out.failed:
        return describe_layer_error(label, "forward", out)
    if out.kind != "tensor":
        return not_a_tensor(label, out.type_name or out.kind)
    problem = output_problem(f"{label} on x{tuple(shape)}", out.value, slow.max_pool(kernel_size)(x), MAX_POOL2D_HINT)
    if problem:
        return problem
    if not reply.reaches:
        return unreached(label, None)
    return passed(f"✔ {label}: {shapes_label([x])} → {tuple(out.value.shape)}")


def describe_layer_error(label, method, outcome):
    return failed(describe_error(label, method, outcome))


@judges("max_pool_ties")
def max_pool_ties(rng, op, shapes, seed=0):
    """MaxPool's backward on the judge's input whose every window's maximum is tied (`checks/ch10_conv_pool_ties.py`):
    the kernel runs backward on a node built by hand, as for `backward`, and the judge checks the shares."""
    k = int(op.args[0] if op.args else dict(op.kwargs).get("kernel_size", 2))
    a, out, upstream = pool_ties.tied_case(shapes[0], k, rng)
    grad, failure = yield from rule_gradient(op, a, out, upstream, pool_ties.ties_where(op.label, a))
    return failure or pool_ties.ties_verdict(op.label, a, k, upstream, grad)
