"""Judge-side checks of chapter 4's layers and losses, mirroring `autograder/student/checks/ch04_nn.py`.

The kernel builds each module from its class name and runs the judge's steps on it (`worker.layer`):
the parameters get the judge's secret values, forward runs on the judge's inputs, backward on its
out_grads, and the outputs, gradients and attributes come back as data. The judge computes the
expected output from `formulas` and every gradient by central differences of that formula, as the
in-kernel check does, with the same tolerances and messages (`checks.nn`).

Whether an attribute is a `Parameter` can only be reported by the kernel: it shapes the messages,
never a pass on its own, since every passing verdict also needs the numbers verified here.
"""
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from autograder.grading.judge import ch03_autodiff_ops as ops
from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.plan import OpSpec
from autograder.grading.judge.probes import ProbeFailure, Returned
from autograder.grading.judge.replies import Default, Flag, Int, ListOf, MapOf, Nested, Optional, Raised, Tag, read, wire
from autograder.student import gradcheck
from autograder.student.checks import formulas, ch04_nn as nn
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges

EPS = 1e-5          # the norm layers' eps: the default of the notebook's provided __init__ signature
MIN_SPREAD = 0.25   # std of each normalized group; near-equal values make a right float32 backward miss by 1e-3


def spread_sample(shape, axis, rng):
    """Inputs of a norm layer whose every normalized group (a row, a column) has std >= MIN_SPREAD.

    1 / std amplifies the float32 rounding of a right backward; on a row of two nearly equal values
    (about 1 draw in 200 for LayerNorm1d(2)) it exceeds the gradient tolerance. The course's fixed
    seeds never meet such a row; the judge's secret ones are redrawn away from it.
    """
    for _ in range(1000):
        x = gradcheck.sample(shape, "real", rng)
        if np.all(x.std(axis=axis) >= MIN_SPREAD):
            return x
    raise ValueError(f"no well-spread sample of shape {shape}")


def module(name, *args, **kwargs):
    return {"name": name, "args": tuple(args), "kwargs": kwargs}


def float32(values):
    """Parameter values a float32 Parameter holds exactly, so the judge's formula sees what the layer sees."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def secret_seed(rng):
    return int(rng.integers(2 ** 31))


def init_seed(rng, in_features, out_features):
    """A secret seed whose draw, made the way the chapter makes it, spreads over the range: the spread test
    then never fails a right layer drawn that way (a few weights can all land near 0 by chance)."""
    bound = 1 / np.sqrt(in_features)
    while True:
        seed = secret_seed(rng)
        weights = np.random.default_rng(seed).uniform(-bound, bound, (in_features, out_features))
        if np.abs(weights).max() >= bound / 2:
            return seed


def upstreams_for(shape, rng):
    return [("an all-ones out_grad", np.ones(shape)), ("a random out_grad", np.asarray(rng.standard_normal(shape)))]


def layer_steps(x, values, upstreams, extras=(), training=None, report=()):
    """check_layer's runs as steps: give the parameters the judge's values, then forward x and backward
    each out_grad; `report` names attributes read after the last run."""
    steps = []
    for _name, upstream in upstreams:
        steps.append({"module": 0, "forward": {"x": x, "upstream": upstream, "params": list(values),
                                               "extras": list(extras)}})
    steps[0].update({"set": dict(values)} if values else {})
    if training is not None:
        steps[0]["training"] = training
    steps[-1]["report"] = list(report)
    return steps


# ── the replies ──

@dataclass(frozen=True)
class NotBuilt:
    """A step on a module the kernel could not build: the error its constructor raised."""

    TAG: ClassVar[Tag] = Tag("built")
    built: Returned = wire(Raised())


@dataclass(frozen=True)
class Attribute:
    """One attribute the judge asked for: absent from the layer (`missing`), or its value; whether it is a Parameter
    and requires a gradient are the kernel's word (they shape messages, or fail a check, never pass one)."""

    value: Returned | None = wire(Optional(Raised()))
    missing: bool = wire(Flag())
    parameter: bool = wire(Flag())
    requires_grad: bool = wire(Flag())

    def invalid(self):
        return "'value' is missing" if self.value is None and not self.missing else None


@dataclass(frozen=True)
class Step:
    """What one step did, each part only as far as it ran: giving the parameters the judge's values (`set`: the error
    it raised), forward's output and the count of the graph's other leaves, backward's error or the gradients of x
    and of the parameters the step named, and the attributes it reported."""

    set: Returned | None = wire(Optional(Raised()))
    output: Returned | None = wire(Optional(Raised()))
    stray: int | None = wire(Optional(Int(low=0)))
    backward: Returned | None = wire(Optional(Raised()))
    grads: list[Returned] | None = wire(Optional(ListOf(Raised(), length="grads")))
    attributes: dict[str, Attribute] = wire(Default(MapOf(Nested(Attribute)), {}))

    def needs(self, key):
        """A part the step must hold by now (forward ran, or backward returned): a missing one fails the probe."""
        value = getattr(self, key)
        if value is None:
            raise ProbeFailure(f"a step of the reply has no {key!r}")
        return value


STEP = Nested(NotBuilt | Step)


@dataclass(frozen=True)
class LayerReply:
    """One report per step the judge sent, in its order."""

    steps: list[NotBuilt | Step] = wire(ListOf(STEP, length="steps"))


def layer_steps_of(reply, steps, grads=0):
    """The reply to a layer request of `steps`, whose backward runs give `grads` gradients (x's and the parameters')."""
    return read(reply, LayerReply, steps=len(steps), grads=grads).steps


def not_built(label, step):
    """The failed verdict of a module the kernel could not build, or None."""
    return failed(describe_error(label, "__init__", step.built)) if isinstance(step, NotBuilt) else None


def reported(step, name):
    """The record of an attribute the step reported."""
    if name not in step.attributes:
        raise ProbeFailure(f"the reply does not report .{name}")
    return step.attributes[name]


def attribute(step, name):
    """(Returned, is a Parameter) of an attribute the kernel reported; a missing one reads as None."""
    data = reported(step, name)
    if data.missing or data.value is None:
        return Returned("none", type_name="NoneType"), False
    got = data.value
    if got.kind == "none":
        got.type_name = "NoneType"
    return got, data.parameter and got.kind == "tensor"


def kind_of(step, name, got):
    """The attribute's type name for the shared verdicts, or nn.MISSING when the layer has no such attribute."""
    return nn.MISSING if reported(step, name).missing else (got.type_name or got.kind)


def numbers(got):
    """An attribute's values as float64, or a nan scalar when it holds no numbers (fails every comparison)."""
    return np.asarray(got.value, dtype=np.float64) if got.kind in ("array", "tensor") else np.asarray(np.nan)


def layer_verdict(label, steps, x, values, reference, formula, hint, upstreams, data_name=None):
    """check_layer's verdict from the kernel's reports of `layer_steps`: output, then x's gradient and each
    parameter's, against the judge's formula and its central differences, for each out_grad."""
    params = list(values.values())
    want = np.asarray(reference(x, *params), dtype=np.float64)
    where = f"{label} on x of shape {x.shape}"
    for (upstream_name, upstream), step in zip(upstreams, steps):
        verdict = not_built(label, step)
        if verdict:
            return verdict
        if step.set is not None:
            return failed(describe_error(label, "parameters", step.set)
                          + f"\n  (the check gives {', '.join(values)} its own values).")
        got = step.needs("output")
        if got.failed:
            return failed(describe_error(label, "forward", got) + f"\n  while running {where}."
                          + nn.forward_error_hint(got.error_type))
        if got.kind != "tensor":
            return failed(f"{where}: forward returned a {got.type_name or got.kind}, expected a Tensor (build the output "
                          "with Tensor operations, so that backward can reach x and the parameters).")
        verdict = nn.compare_output(where, np.asarray(got.value, dtype=np.float64), want, formula, hint)
        if not verdict and data_name:
            verdict = nn.stray_target_problem(where, step.needs("stray"), data_name)
        if verdict:
            return verdict
        if step.backward is not None:
            return failed(describe_error(label, "backward through your forward", step.backward)
                          + f"\n  while running {where}.")
        grads = step.needs("grads")
        numeric = gradcheck.numerical_gradients(reference, [x, *params], upstream)
        for name, grad, expected in zip(["x", *values], grads, numeric):
            verdict = gradient_verdict(f"{where}, backward with {upstream_name}", name, grad, expected, hint)
            if verdict:
                return verdict
    return passed(f"✔ {label}: output and gradients match the NumPy formula on x{x.shape}")


def gradient_verdict(where, name, grad, expected, hint):
    if grad.failed or grad.kind in ("sequence", "other"):
        return failed(f"{where}: {name}.grad is a {grad.type_name or grad.kind}, expected a Tensor or an array.")
    return nn.compare_gradient(where, name, None if grad.kind == "none" else grad.value, expected, hint)


def layer_request(modules, steps, standin_logsumexp=False):
    return {"kind": "layer", "modules": modules, "steps": steps, "standin_logsumexp": standin_logsumexp}


# ── the checks, one per check.NAME of chapter 4 ──────────────────────────────────────────────────

@judges("linear")
def linear(rng, in_features=3, out_features=4, batch=5, bias=True, seed=0):
    label = f"Linear({in_features}, {out_features}, bias={bias})"
    bound = 1 / np.sqrt(in_features)
    values = {"weight": float32(rng.uniform(-bound, bound, (in_features, out_features)))}
    if bias:
        values["bias"] = float32(rng.uniform(-bound, bound, (1, out_features)))
    x = gradcheck.sample((batch, in_features), "real", rng)
    upstreams = upstreams_for((batch, out_features), rng)
    steps = [{"module": 0, "report": list(values)}, *layer_steps(x, values, upstreams)]
    reply = yield layer_request([module("Linear", in_features, out_features, bias=bias, seed=secret_seed(rng))], steps)
    first, *runs = layer_steps_of(reply, steps, 1 + len(values))
    verdict = not_built(label, first)
    if verdict:
        return verdict
    found = {name: attribute(first, name) for name in values}
    for name, (got, _) in found.items():
        if got.kind != "tensor":
            return failed(f"{label}: .{name} is a {got.type_name or got.kind}, expected a Parameter.")
    verdict = nn.linear_weight_shape_problem(label, found["weight"][0].value.shape, in_features, out_features)
    if verdict:
        return verdict
    return layer_verdict(label, runs, x, values, formulas.linear, "x @ weight + bias" if bias else "x @ weight",
                         nn.LINEAR_HINT, upstreams)


@judges("linear_init")
def linear_init(rng, in_features=3, out_features=4):
    label = f"Linear({in_features}, {out_features}, seed=0)"
    seed = init_seed(rng, in_features, out_features)
    modules = [module("Linear", in_features, out_features, seed=seed), module("Linear", in_features, out_features, seed=seed),
               module("Linear", in_features, out_features, seed=seed + 1),
               module("Linear", in_features, out_features, bias=False, seed=seed),
               module("Linear", in_features, nn.SPREAD_WIDTH, seed=seed)]
    steps = [{"module": i, "report": names} for i, names in
             enumerate((["weight", "bias"], ["weight", "bias"], ["weight"], ["bias"], ["weight"]))]
    layer, twin, other, no_bias, wide = layer_steps_of((yield layer_request(modules, steps)), steps)
    for step in (layer, twin, no_bias):
        verdict = not_built(label, step)
        if verdict:
            return verdict
    found = {}
    for name in ("weight", "bias"):
        got, is_parameter = attribute(layer, name)
        found[name] = (got.type_name or got.kind, is_parameter, got.value if is_parameter else None)
    twin_values = [numbers(attribute(twin, name)[0]) for name in ("weight", "bias")]
    other_weight = None if isinstance(other, NotBuilt) else numbers(attribute(other, "weight")[0])
    return nn.linear_init_problem(label, in_features, out_features, found, twin_values, other_weight,
                                  attribute(no_bias, "bias")[0].kind == "none") \
        or not_built(f"Linear({in_features}, {nn.SPREAD_WIDTH}, seed={seed})", wide) \
        or nn.linear_spread_problem(in_features, seed, numbers(attribute(wide, "weight")[0])) \
        or passed(f"✔ {label}: Parameters of the right shapes, seeded, within ±1/sqrt(in_features)")


def plain_layer(rng, label, spec, x, reference, formula, hint, training=None):
    """A module without parameters (activations, Flatten, Dropout in evaluation) against its formula."""
    upstreams = upstreams_for(np.shape(reference(x)), rng)
    steps = layer_steps(x, {}, upstreams, training=training)
    reply = yield layer_request([spec], steps)
    return layer_verdict(label, layer_steps_of(reply, steps, 1), x, {}, reference, formula, hint, upstreams)


@judges("activation")
def activation(rng, name, shape=(4, 3), seed=0):
    reference, domain, hint = nn.ACTIVATIONS[name]
    x = gradcheck.sample(tuple(shape), domain, rng)
    return (yield from plain_layer(rng, f"{name}()", module(name), x, reference, f"{name.lower()}(x)", hint))


@judges("flatten")
def flatten(rng, shape=(2, 3, 4), seed=0):
    x = gradcheck.sample(tuple(shape), "real", rng)
    return (yield from plain_layer(rng, "Flatten()", module("Flatten"), x, formulas.flatten, nn.FLATTEN_FORMULA,
                                   nn.FLATTEN_HINT))


@judges("dropout_eval")
def dropout_eval(rng, p=0.25, seed=0):
    label = f"Dropout(p={p}) in evaluation mode (training = False)"
    x = gradcheck.sample((6, 5), "positive", rng)
    return (yield from plain_layer(rng, label, module("Dropout", p, seed=secret_seed(rng)), x, formulas.identity,
                                   "the input, unchanged", nn.DROPOUT_EVAL_HINT, training=False))


@judges("dropout")
def dropout(rng, p=0.25, seed=0):
    """Three training outputs (two calls of one layer, one of a twin with the same secret seed) and the
    gradient of the first, all verified from the arrays: kept = x / (1 - p), dropped = 0."""
    label = f"Dropout(p={p}, seed={seed}) in training mode"
    secret = secret_seed(rng)
    # 20,000 elements, for a dropped share within 0.02 of p at 5.7 standard deviations (p = 0.5). Values that
    # float32 holds exactly, sent as float32 (the kernel makes them float64 tensors again, the same numbers):
    # half the bytes of a probe whose size, not its work, is its cost (the kernel reads a probe's code at
    # about 0.25 s per MB, encode sends the shared input once).
    x = float32(gradcheck.sample((400, 50), "positive", rng))
    upstream = float32(rng.standard_normal(x.shape))
    x_sent, upstream_sent = x.astype(np.float32), upstream.astype(np.float32)
    steps = [{"module": 0, "training": True, "forward": {"x": x_sent, "upstream": upstream_sent}},
             {"module": 0, "forward": {"x": x_sent}},
             {"module": 1, "training": True, "forward": {"x": x_sent}}]
    reply = yield layer_request([module("Dropout", p, seed=secret)] * 2, steps)
    steps = layer_steps_of(reply, steps, 1)
    outputs = []
    for step in steps:
        verdict = not_built(label, step)
        if verdict:
            return verdict
        got = step.needs("output")
        if got.failed:
            return failed(describe_error(label, "forward", got))
        if got.kind != "tensor" or got.value.shape != x.shape:
            shape = got.value.shape if got.kind in ("array", "tensor") else ""
            return failed(f"{label}: forward should return a Tensor of the input's shape {x.shape}, "
                          f"received {got.type_name or got.kind} {shape}.")
        outputs.append(np.asarray(got.value, dtype=np.float64))
    verdict = nn.dropout_mask_problem(label, p, seed, x, *outputs)
    if verdict:
        return verdict
    if steps[0].backward is not None:
        return failed(describe_error(label, "backward through your forward", steps[0].backward))
    grad = steps[0].needs("grads")[0]
    expected = upstream * (outputs[0] != 0) * (1 / (1 - p))
    return gradient_verdict(f"{label}, backward with a random out_grad", "x", grad, expected, nn.DROPOUT_GRADIENT_HINT) \
        or nn.dropout_passed(label, p)


def norm_parameters_verdict(label, step, dim):
    for name, start in nn.NORM_STARTS:
        got, is_parameter = attribute(step, name)
        verdict = nn.norm_parameter_problem(label, dim, name, start, kind_of(step, name, got), is_parameter,
                                            numbers(got) if is_parameter else None)
        if verdict:
            return verdict
    return None


def norm_layer(rng, label, spec, batch, dim, axis, formula, description, hint, training=None, scale=1.0):
    """A norm layer's start (weight ones, bias zeros), then output and gradients with random weight and bias,
    on inputs shrunk by `scale` (as the course's check)."""
    values = {name: float32(rng.uniform(0.5, 1.5, dim)) for name in ("weight", "bias")}
    x = nn.scaled(spread_sample((batch, dim), axis, rng), scale)
    upstreams = upstreams_for((batch, dim), rng)
    start = {"module": 0, "report": ["weight", "bias"]}
    if training is not None:
        start["training"] = training
    steps = [start, *layer_steps(x, values, upstreams)]
    first, *runs = layer_steps_of((yield layer_request([spec], steps)), steps, 1 + len(values))
    verdict = not_built(label, first) or norm_parameters_verdict(label, first, dim)
    if verdict:
        return verdict
    return layer_verdict(label, runs, x, values, lambda x, w, b: formula(x, w, b, EPS), description, hint, upstreams)


@judges("batchnorm")
def batchnorm(rng, batch=6, dim=3, seed=0, scale=1.0):
    return (yield from norm_layer(rng, nn.batchnorm_label(dim, scale), module("BatchNorm1d", dim), batch, dim, 0,
                                  formulas.batchnorm_train, nn.BATCHNORM_FORMULA, nn.BATCHNORM_HINT, training=True,
                                  scale=scale))


@judges("layernorm")
def layernorm(rng, batch=4, dim=5, seed=0, scale=1.0):
    return (yield from norm_layer(rng, nn.layernorm_label(dim, scale), module("LayerNorm1d", dim), batch, dim, 1,
                                  formulas.layernorm, nn.LAYERNORM_FORMULA, nn.LAYERNORM_HINT, scale=scale))


@judges("batchnorm_running")
def batchnorm_running(rng, batch=6, dim=3, seed=0):
    """The buffers' start, their values after two training batches (the judge's running averages), then
    evaluation mode against the running statistics, which it must leave alone."""
    momentum, label = nn.RUNNING_MOMENTUM, nn.running_label(dim)
    running = [name for name, _ in nn.RUNNING_STARTS]
    batches = [gradcheck.sample((batch, dim), "real", rng) for _ in range(2)]
    values = {name: float32(rng.uniform(0.5, 1.5, dim)) for name in ("weight", "bias")}
    x = gradcheck.sample((3, dim), "real", rng)
    upstreams = upstreams_for((3, dim), rng)
    steps = [{"module": 0, "report": [*running, "weight", "bias"]},
             *({"module": 0, "training": True, "forward": {"x": xb}, "report": running} for xb in batches),
             *layer_steps(x, values, upstreams, training=False, report=["running_mean"])]
    reply = yield layer_request([module("BatchNorm1d", dim, eps=nn.RUNNING_EPS, momentum=momentum)], steps)
    first, *trained = layer_steps_of(reply, steps, 1 + len(values))
    verdict = not_built(label, first)
    if verdict:
        return verdict
    for name, start in nn.RUNNING_STARTS:
        got, is_parameter = attribute(first, name)
        is_buffer = got.kind != "none" and not is_parameter
        verdict = nn.running_buffer_problem(label, dim, name, start, kind_of(first, name, got), is_buffer, numbers(got))
        if verdict:
            return verdict
    verdict = norm_parameters_verdict(label, first, dim)
    if verdict:
        return verdict
    mean, var = np.zeros(dim), np.ones(dim)
    for step, (reply, xb) in enumerate(zip(trained[:2], batches)):
        got = reply.needs("output")
        if got.failed:
            return failed(describe_error(label, "forward", got))
        mean = formulas.running_average(mean, xb.mean(axis=0), momentum)
        var = formulas.running_average(var, xb.var(axis=0), momentum)
        for name, want in (("running_mean", mean), ("running_var", var)):
            got = attribute(reply, name)[0]
            if got.kind == "tensor" and reported(reply, name).requires_grad:
                return nn.running_stats_in_graph(label, step, name)      # the kernel's word: it can only fail
            if got.kind not in ("array", "tensor"):
                return nn.running_stats_not_numbers(label, step, name, got.type_name or got.kind)
            verdict = nn.running_stats_problem(label, step, name, numbers(got), want)
            if verdict:
                return verdict

    def reference(x, w, b):
        return formulas.batchnorm_eval(x, w, b, mean, var, nn.RUNNING_EPS)

    verdict = layer_verdict(f"{label} in evaluation mode", trained[2:], x, values, reference,
                            nn.BATCHNORM_EVAL_FORMULA, nn.BATCHNORM_EVAL_HINT, upstreams)
    if not verdict.passed:
        return verdict
    after = numbers(attribute(trained[-1], "running_mean")[0])
    if after.shape != mean.shape or not np.allclose(after, mean, rtol=1e-4, atol=1e-5):
        return failed(nn.eval_changed_running_mean(label))
    return nn.running_passed(label)


@judges("mse_loss")
def mse_loss(rng, shape=(5, 1), seed=0, target_as="tensor"):
    target = gradcheck.sample(tuple(shape), "real", rng)
    pred = gradcheck.sample(tuple(shape), "real", rng)
    upstreams = upstreams_for((), rng)
    steps = layer_steps(pred, {}, upstreams, extras=[{"value": target, "as": "tensor64" if target_as == "tensor" else "array"}])
    reply = yield layer_request([module("MSELoss")], steps)
    return layer_verdict(nn.mse_label(target_as), layer_steps_of(reply, steps, 1), pred, {},
                         lambda p: formulas.mse(p, target), nn.MSE_FORMULA, nn.MSE_HINT, upstreams,
                         data_name="targets" if target_as == "array" else None)


@judges("softmax_loss")
def softmax_loss(rng, batch=5, classes=4, offset=0.0, labels_as="array", seed=0):
    """SoftmaxLoss with the kernel's LogSumExp swapped for a stand-in, as in the course's check."""
    labels = rng.integers(0, classes, batch)
    logits = gradcheck.sample((batch, classes), "real", rng) + offset
    upstreams = upstreams_for((), rng)
    extras = [{"value": labels, "as": "tensor" if labels_as == "tensor" else "array"}]
    steps = layer_steps(logits, {}, upstreams, extras=extras)
    reply = yield layer_request([module("SoftmaxLoss")], steps, standin_logsumexp=True)
    return layer_verdict(nn.softmax_loss_label(batch, classes, offset, labels_as), layer_steps_of(reply, steps, 1), logits,
                         {}, lambda z: formulas.softmax_loss(z, labels), "mean cross-entropy",
                         nn.softmax_loss_hint(offset), upstreams)


@judges("logsumexp_forward")
def logsumexp_forward(rng, axes, shape, domain="real", seed=0):
    return (yield from ops.forward(rng, OpSpec("LogSumExp", (axes,)), lambda a: formulas.logsumexp(a, axes),
                                   [tuple(shape)], domain))


def cross_entropy_op(rng, batch, classes):
    """SoftmaxCrossEntropy with secret labels, as the op the kernel builds."""
    labels = nn.cross_entropy_labels(batch, classes, rng)
    return OpSpec("SoftmaxCrossEntropy", (), (("labels", tuple(int(y) for y in labels)),)), labels


@judges("cross_entropy_forward")
def cross_entropy_forward(rng, batch=5, classes=4, domain="real", seed=0):
    op, labels = cross_entropy_op(rng, batch, classes)
    return (yield from ops.forward(rng, op, lambda z: formulas.softmax_loss(z, labels), [(batch, classes)], domain))


@judges("cross_entropy_backward")
def cross_entropy_backward(rng, batch=5, classes=4, domain="real", seed=0):
    op, _ = cross_entropy_op(rng, batch, classes)
    return (yield from ops.backward(rng, op, [(batch, classes)], domain))


@judges("softmax_forward")
def softmax_forward(rng, axis, shape, domain="real", seed=0):
    return (yield from ops.forward(rng, OpSpec("Softmax", (axis,)), lambda a: formulas.softmax(a, axis),
                                   [tuple(shape)], domain))


@judges("bce_loss")
def bce_loss(rng, shape=(6,), extreme=False, targets_as="array", seed=0):
    """BCEWithLogitsLoss on the judge's logits and targets (with extreme logits at secret places), as mse_loss."""
    logits, targets = nn.bce_inputs(tuple(shape), extreme, rng)
    upstreams = upstreams_for((), rng)
    steps = layer_steps(logits, {}, upstreams,
                        extras=[{"value": targets, "as": "tensor64" if targets_as == "tensor" else "array"}])
    reply = yield layer_request([module("BCEWithLogitsLoss")], steps)
    return layer_verdict(nn.bce_label(shape, extreme, targets_as), layer_steps_of(reply, steps, 1), logits, {},
                         lambda z: formulas.bce_with_logits(z, targets), nn.BCE_FORMULA, nn.bce_hint(extreme), upstreams,
                         data_name="targets" if targets_as != "tensor" else None)


@judges("embedding")
def embedding(rng, num_embeddings=5, dim=3, index_shape=(2, 4), seed=0):
    """Three layers (a secret seed twice, then the next seed) report their weights; the first then gets the judge's
    secret weight and looks up secret indices (with a repeat), backward with an all-ones and a random out_grad."""
    label = nn.embedding_label(num_embeddings, dim)
    secret = secret_seed(rng)
    values = {"weight": float32(rng.standard_normal((num_embeddings, dim)))}
    indices = nn.embedding_indices(num_embeddings, tuple(index_shape), rng)
    upstreams = upstreams_for(tuple(index_shape) + (dim,), rng)
    modules = [module("Embedding", num_embeddings, dim, seed=s) for s in (secret, secret, secret + 1)] \
        + [module("Embedding", *nn.EMBEDDING_SPREAD, seed=secret)]
    runs = [{"module": 0, "forward": {"x": indices, "indices": True, "upstream": upstream, "params": ["weight"]}}
            for _, upstream in upstreams]
    runs[0]["set"] = values
    steps = [{"module": i, "report": ["weight"]} for i in range(3)] + runs + [{"module": 3, "report": ["weight"]}]
    layer, twin, other, *runs, wide = layer_steps_of((yield layer_request(modules, steps)), steps, 1)
    verdict = not_built(label, layer)
    if verdict:
        return verdict
    got, is_parameter = attribute(layer, "weight")
    twin_values = None if isinstance(twin, NotBuilt) else numbers(attribute(twin, "weight")[0])
    other_values = None if isinstance(other, NotBuilt) else numbers(attribute(other, "weight")[0])
    verdict = nn.embedding_weight_problem(label, num_embeddings, dim, kind_of(layer, "weight", got), is_parameter,
                                          np.asarray(got.value) if is_parameter else None, twin_values, other_values) \
        or not_built(f"Embedding({nn.EMBEDDING_SPREAD[0]}, {nn.EMBEDDING_SPREAD[1]}, seed={secret})", wide) \
        or nn.embedding_spread_problem(secret, numbers(attribute(wide, "weight")[0]))
    if verdict:
        return verdict
    want = formulas.embedding(values["weight"], indices)
    where = f"{label} on indices of shape {indices.shape} (ids {np.array2string(indices.reshape(-1)[:8])})"
    for (upstream_name, upstream), step in zip(upstreams, runs):
        if step.set is not None:
            return failed(describe_error(label, "parameters", step.set)
                          + "\n  (the check gives weight its own values).")
        out = step.needs("output")
        if out.failed:
            return failed(describe_error(label, "forward", out) + f"\n  while running {where}.")
        if out.kind != "tensor":
            return failed(f"{where}: forward returned a {out.type_name or out.kind}, expected a Tensor (apply an "
                          "operation to the weight, so that backward can reach it).")
        verdict = nn.compare_output(where, np.asarray(out.value, dtype=np.float64), want, nn.EMBEDDING_FORMULA,
                                    nn.EMBEDDING_HINT)
        if verdict:
            return verdict
        if step.backward is not None:
            return failed(describe_error(label, "backward through your forward", step.backward)
                          + f"\n  while running {where}.")
        grad = step.needs("grads")[0]
        expected = gradcheck.numerical_gradients(lambda w: formulas.embedding(w, indices), [values["weight"]], upstream)[0]
        verdict = gradient_verdict(f"{where}, backward with {upstream_name}", "weight", grad, expected, nn.EMBEDDING_HINT)
        if verdict:
            return verdict
    return passed(f"✔ {label}: a seeded Parameter; rows looked up on indices{indices.shape}, gradients added at repeats")
