"""Checks of chapter 4's layers and losses: outputs and gradients against NumPy formulas.

A layer is run forward on a float64 input, then backward with an all-ones and a random out_grad,
through the course's (provided) engine. Its output is compared with `formulas`, computed from the
layer's own parameters; every gradient, of the input and of each parameter, with central
differences of the same formula. Layers are called through `.forward`, never `module(x)`, so a
broken `Module.__call__` costs only its own exercise; the loss check swaps in a stand-in
`LogSumExp`, so a broken LogSumExp costs only its own.
"""
import numpy as np

from autograder.student import gradcheck
from autograder.student.checks import formulas, ch07_init as init
from autograder.student.checks.describe import index_label, number, type_name
from autograder.student.checks.kernel_facts import stray_leaves
from autograder.student.checks.ch04_nn_facts import logsumexp_standin, reachable_parameters
from autograder.student.checks.ch03_autodiff_ops import backward_check, check_forward, forward_check
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed

FORWARD_RTOL, FORWARD_ATOL = 1e-4, 1e-5      # float32 parameters and constants; wrong formulas are off by O(1)


def array(value):
    return np.asarray(getattr(value, "data", value), dtype=np.float64)


def forward_error_hint(error_type):
    """The hint for a module's forward that raised `error_type`: endless recursion has one usual cause here.
    Shared with the judge."""
    if error_type != "RecursionError":
        return ""
    return ("\n  Hint: forward called itself without end. A module's forward that calls a module of its own class "
            "(the ReLU module inside ReLU.forward) runs forward again, and again: compute with chapter 3's "
            "operations, through the helper functions, instead.")


def tensor(ns, values, requires_grad=True):
    return ns["Tensor"](np.asarray(values, dtype=np.float64), dtype=np.float64, requires_grad=requires_grad)


def sample(shape, domain, seed):
    return gradcheck.sample(shape, domain, np.random.default_rng(seed))


def compare_output(where, got, want, formula, hint):
    if got.shape != want.shape:
        return failed(f"{where}: expected output shape {want.shape}, received {got.shape}.\n  Hint: {hint}")
    mismatch = gradcheck.worst_mismatch(got, want, FORWARD_RTOL, FORWARD_ATOL)
    if mismatch:
        return failed(f"{where}: the output is wrong in {mismatch.count} of {mismatch.size} elements.\n"
                      f"  worst {index_label('out', mismatch.index)}: yours {number(mismatch.analytic)}, "
                      f"expected {number(mismatch.numeric)} ({formula}).\n  Hint: {hint}")
    return None


def stray_target_problem(where, stray, data_name):
    """The verdict on a loss whose graph holds `stray` leaves that require a gradient besides x (shared with the
    judge), or None: the `data_name` given as a NumPy array was wrapped as a Tensor that requires one."""
    if not stray:
        return None
    return failed(f"{where}: the loss's graph holds {stray} tensor(s) besides x that require a gradient: the "
                  f"{data_name}, given as a NumPy array, became a Tensor that requires one (the default).\n"
                  f"  Hint: the {data_name} are data, constants of the loss: wrap them with requires_grad=False, so "
                  "that backward computes no gradient for them and leaves no .grad on them.")


def check_layer(ns, label, forward, x_values, params, reference, formula, hint, seed=0, data_name=None):
    """`forward(x)` against `reference(x, *param values)`: the output, then the gradients of x and of
    every parameter in `params` [(name, Parameter)], for an all-ones and a random out_grad. `data_name`: a
    loss's targets, given as an array, which must not become a leaf that requires a gradient."""
    Tensor = ns["Tensor"]
    values = [array(p) for _, p in params]
    try:
        want = np.asarray(reference(x_values, *values), dtype=np.float64)
    except ValueError:
        shapes = ", ".join(f"{name} {tuple(np.shape(v))}" for (name, _), v in zip(params, values))
        return failed(f"{label}: its parameters have shapes that do not fit x of shape {x_values.shape}: {shapes}.")
    upstreams = [("an all-ones out_grad", np.ones(want.shape)),
                 ("a random out_grad", np.random.default_rng(seed + 100).standard_normal(want.shape))]
    where = f"{label} on x of shape {x_values.shape}"
    for upstream_name, upstream in upstreams:
        x = tensor(ns, x_values)
        for _, p in params:
            p.grad = None
        try:
            out = run_quietly(forward, x)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception(label, "forward", error) + f"\n  while running {where}."
                          + forward_error_hint(type(error).__name__))
        if not isinstance(out, Tensor):
            return failed(f"{where}: forward returned a {type_name(out)}, expected a Tensor (build the output "
                          "with Tensor operations, so that backward can reach x and the parameters).")
        verdict = compare_output(where, array(out), want, formula, hint) or (
            data_name and stray_target_problem(where, stray_leaves(out, [x] + [p for _, p in params]), data_name))
        if verdict:
            return verdict
        try:
            run_quietly(out.backward, Tensor(upstream.copy(), dtype=np.float64, requires_grad=False))
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception(label, "backward through your forward", error) + f"\n  while running {where}.")
        numeric = gradcheck.numerical_gradients(reference, [x_values, *values], upstream)
        for (name, t), expected in zip([("x", x), *params], numeric):
            verdict = compare_gradient(f"{where}, backward with {upstream_name}", name, t.grad, expected, hint)
            if verdict:
                return verdict
    return passed(f"✔ {label}: output and gradients match the NumPy formula on x{x_values.shape}")


def compare_gradient(where, name, got, expected, hint):
    if got is None:
        return failed(f"{where}: {name}.grad is None, so no gradient reached {name}.\n  Hint: {name} must enter the "
                      "output through Tensor operations (never through .data or NumPy), or backward cannot reach it.")
    got = np.asarray(got, dtype=np.float64)
    if got.shape != expected.shape:
        return failed(f"{where}: {name}.grad has shape {got.shape}, expected {expected.shape}.\n  Hint: {hint}")
    mismatch = gradcheck.worst_mismatch(got, expected)
    if mismatch:
        return failed(f"{where}: the gradient of {name} is wrong in {mismatch.count} of {mismatch.size} elements.\n"
                      f"  worst {index_label(name, mismatch.index)}: yours {number(mismatch.analytic)}, "
                      f"finite differences of the NumPy formula give {number(mismatch.numeric)}.\n  Hint: {hint}")
    return None


def construct(label, make):
    try:
        return run_quietly(make), None
    except Exception as error:  # noqa: BLE001
        return None, failed(describe_exception(label, "__init__", error))


# ── Linear ───────────────────────────────────────────────────────────────────────────────────────

def check_linear_init(ns, in_features, out_features):
    Parameter = ns["Parameter"]
    label = f"Linear({in_features}, {out_features}, seed=0)"
    make = ns["Linear"]
    layer, error = construct(label, lambda: make(in_features, out_features, seed=0))
    if error:
        return error
    twin, error = construct(label, lambda: make(in_features, out_features, seed=0))
    other, _ = construct(label, lambda: make(in_features, out_features, seed=1))
    no_bias, error2 = construct(label, lambda: make(in_features, out_features, bias=False, seed=0))
    if error or error2:
        return error or error2
    found = {}
    for name in ("weight", "bias"):
        p = getattr(layer, name, None)
        found[name] = (type_name(p), isinstance(p, Parameter), np.asarray(p.data) if isinstance(p, Parameter) else None)
    twin_values = [array(getattr(twin, name, None)) for name in ("weight", "bias")]
    other_weight = None if other is None else array(getattr(other, "weight", None))
    wide, error = construct(f"Linear({in_features}, {SPREAD_WIDTH}, seed=0)",
                            lambda: make(in_features, SPREAD_WIDTH, seed=0))
    return linear_init_problem(label, in_features, out_features, found, twin_values, other_weight,
                               getattr(no_bias, "bias", "missing") is None) \
        or error or linear_spread_problem(in_features, 0, array(getattr(wide, "weight", None))) \
        or passed(f"✔ {label}: Parameters of the right shapes, seeded, within ±1/sqrt(in_features)")


def linear_init_problem(label, in_features, out_features, found, twin_values, other_weight, no_bias_is_none):
    """What is wrong with a new Linear, or None (shared with the judge). `found`: {name: (type name, is a
    Parameter, values)}; `twin_values`: weight and bias of a twin made with the same seed; `other_weight`:
    the weight made with another seed (None if that layer could not be built)."""
    for name, shape in (("weight", (in_features, out_features)), ("bias", (1, out_features))):
        kind, is_parameter, values = found[name]
        if not is_parameter:
            return failed(f"{label}: .{name} is a {kind}, expected a Parameter (so that parameters() finds it "
                          "and an optimizer trains it).")
        if values.shape != shape:
            return failed(f"{label}: .{name} has shape {values.shape}, expected {shape}.")
        if values.dtype != np.float32:
            return failed(f"{label}: .{name} has dtype {values.dtype}, expected float32 (the Tensor default).")
    bound = in_features ** -0.5
    w, b = (found[name][2].astype(np.float64) for name in ("weight", "bias"))
    # Too small a spread means the wrong bound; tested on the largest value, not the std: with a secret seed
    # a right layer of 7 weights has std < bound/4 about once in 100 draws, all |w| < bound/4 once in 16,000.
    if np.abs(w).max() > bound * (1 + 1e-6) or np.abs(w).max() < bound / 4:
        return failed(f"{label}: weight values should be uniform in [-1/sqrt(in_features), 1/sqrt(in_features)] = "
                      f"[-{bound:.4g}, {bound:.4g}]; yours range over [{w.min():.4g}, {w.max():.4g}] with std {w.std():.3g}.")
    if np.abs(b).max() > bound * (1 + 1e-6):
        return failed(f"{label}: bias values should lie in [-{bound:.4g}, {bound:.4g}] too.")
    if np.ptp(b) == 0 and (b.size > 1 or b.flat[0] == 0):    # never so for a right layer: drawn values differ
        return failed(f"{label}: every bias value is {b.flat[0]:.4g}. The bias is drawn too, from the same generator "
                      f"and the same range [-{bound:.4g}, {bound:.4g}] as the weight, after it.")
    if np.array_equal(b.reshape(-1), w[0]):     # never so for a right layer: the bias takes the draws after the weight's
        return failed(f"{label}: the bias {np.array2string(b.reshape(-1), precision=4)} repeats the weight's first row "
                      "value for value: the two were drawn from two generators made with the same seed, so the second "
                      "started the same draws again.\n  Hint: one generator, NumPy's default_rng made from the seed, for the "
                      "layer: the weight is drawn from it first, then the bias, which continues where the weight stopped.")
    if not np.array_equal(w, twin_values[0]) or not np.array_equal(b, twin_values[1]):
        return failed(f"{label}: two layers built with seed=0 have different weights.\n  Hint: {SEEDED_HINT}")
    if other_weight is not None and np.array_equal(w, other_weight):
        return failed(f"{label}: seed=0 and seed=1 give the same weights: is the seed passed to the generator?")
    if not no_bias_is_none:
        return failed(f"Linear({in_features}, {out_features}, bias=False): .bias should be None.")
    return None


SPREAD_WIDTH = 500     # a wide layer: 500 · in_features uniform weights all within 0.9 of the bound: < 1e-22


def linear_spread_problem(in_features, seed, w):
    """The weights of a new Linear(in_features, SPREAD_WIDTH, seed=seed) must fill ±1/sqrt(in_features): the
    largest |w| near the bound (shared with the judge). A small layer's few weights cannot tell a bound a
    little too small (1/in_features for in_features = 3: 0.33 for 0.58) from chance; hundreds can."""
    label = f"Linear({in_features}, {SPREAD_WIDTH}, seed={seed})"
    bound = in_features ** -0.5
    w = np.asarray(w, dtype=np.float64)
    if w.size == 0:
        return None
    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.abs(w))), w.shape))
    top = float(np.abs(w[index]))
    if 0.9 * bound <= top <= bound * (1 + 1e-6):
        return None
    cause = ""
    if in_features > 1 and 0.9 / in_features <= top <= (1 + 1e-6) / in_features:
        cause = (f" Yours fill ±1/in_features = ±{1 / in_features:.4g}: the bound divides by the square root of "
                 "in_features, not by in_features itself.")
    return failed(f"{label}: its {w.size} weights should be uniform in [-{bound:.4g}, {bound:.4g}], so the largest "
                  f"|weight| comes close to {bound:.4g}; yours is weight{list(index)} = "
                  f"{w[index]:.4g} ({top / bound:.0%} of the bound).\n  Hint: every weight is drawn uniformly between "
                  "minus and plus one over the square root of in_features, the number of inputs each output sums."
                  + cause)


SEEDED_HINT = ("draw the layer's values from a generator made from the seed (NumPy's default_rng), one generator "
               "per layer, so that the same seed gives the same values.")
LINEAR_HINT = ("the output is the batch x times the weight matrix, plus the bias; the bias, of shape (1, out), is "
               "stretched to (batch, out) explicitly with broadcast_to, because the course's elementwise ops do not "
               "broadcast in backward.")


def linear_weight_shape_problem(label, shape, in_features, out_features):
    if tuple(shape) != (in_features, out_features):
        return failed(f"{label}: weight has shape {tuple(shape)}, expected (in_features, out_features) = "
                      f"{(in_features, out_features)}, so that x @ weight works on rows x of shape (N, in_features).")
    return None


def check_linear(ns, in_features, out_features, batch, bias=True, seed=0):
    label = f"Linear({in_features}, {out_features}, bias={bias})"
    layer, error = construct(label, lambda: ns["Linear"](in_features, out_features, bias=bias, seed=seed))
    if error:
        return error
    params = [("weight", getattr(layer, "weight", None))] + ([("bias", getattr(layer, "bias", None))] if bias else [])
    for name, p in params:
        if not isinstance(p, ns["Tensor"]):
            return failed(f"{label}: .{name} is a {type_name(p)}, expected a Parameter.")
    verdict = linear_weight_shape_problem(label, layer.weight.shape, in_features, out_features)
    if verdict:
        return verdict
    return check_layer(ns, label, layer.forward, sample((batch, in_features), "real", seed), params,
                       formulas.linear, "x @ weight + bias" if bias else "x @ weight", LINEAR_HINT, seed)


# ── Activations, Sequential, Flatten ─────────────────────────────────────────────────────────────

ACTIVATIONS = {
    "ReLU": (formulas.relu, "nonzero", "max(x, 0): use the relu Function of chapter 3."),
    "Sigmoid": (formulas.sigmoid, "real", "1 / (1 + exp(-x)): use the sigmoid Function of chapter 3."),
    "Tanh": (np.tanh, "real", "tanh(x): use the tanh Function of chapter 3."),
    "Identity": (formulas.identity, "real", "Identity's output is its input, unchanged."),
}


def check_activation(ns, name, shape, seed=0):
    reference, domain, hint = ACTIVATIONS[name]
    module, error = construct(f"{name}()", ns[name])
    if error:
        return error
    return check_layer(ns, f"{name}()", module.forward, sample(shape, domain, seed), [], reference,
                       f"{name.lower()}(x)", hint, seed)


SEQUENTIAL_HINT = ("apply the modules one after the other, each to the output of the previous one, in the order "
                   "they were given.")


def sequential_reach_problem(label, reached):
    """Whether the Sequential's parameters can be found from it (`reached`), as a failed verdict or None."""
    if reached:
        return None
    return failed(f"{label}: the modules' parameters cannot be found from the Sequential.\n  Hint: keep the "
                  "modules in an attribute (a list), so that parameters() finds them.")


def empty_sequential_problem(is_tensor, unchanged):
    """Sequential() on x: a Tensor equal to x, or a failed verdict."""
    if is_tensor and unchanged:
        return None
    return failed("Sequential() with no modules should return its input unchanged.")


@register("sequential")
def check_sequential(ns, seed=0):
    """Sequential on stand-in modules: order, gradient, parameters reachable, empty = identity."""
    Module, Parameter = ns["Module"], ns["Parameter"]

    def standin(name, fn):
        def forward(self, x):
            self.seen.append(tuple(x.shape))
            return fn(self, x)
        methods = {"forward": forward, "__call__": forward}
        return type(name, (Module,), methods)

    Scale = standin("Times2", lambda self, x: x * 2.0)
    Shift = standin("Plus3", lambda self, x: x + 3.0)
    label = "Sequential(Times2(), Plus3())"
    try:
        parts = [Scale(), Shift()]
        for part in parts:
            part.seen = []
        parts[1].offset = Parameter(np.zeros(2))
        seq = run_quietly(ns["Sequential"], *parts)
        empty = run_quietly(ns["Sequential"])
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Sequential", "__init__", error))
    x_values = sample((3, 2), "real", seed)
    verdict = check_layer(ns, label, seq.forward, x_values, [], lambda x: x * 2 + 3,
                          "(x * 2) + 3: the modules in order", SEQUENTIAL_HINT, seed)
    if not verdict.passed:
        return verdict
    reached = any(p is parts[1].offset for p in reachable_parameters(seq, Module, Parameter))
    problem = sequential_reach_problem(label, reached)
    if problem:
        return problem
    try:
        x = tensor(ns, x_values)
        out = run_quietly(empty.forward, x)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Sequential()", "forward", error))
    is_tensor = isinstance(out, ns["Tensor"])
    return empty_sequential_problem(is_tensor, is_tensor and np.array_equal(array(out), x_values)) or \
        passed(f"✔ {label} applies its modules in order; an empty Sequential is the identity")


FLATTEN_HINT = "keep the first (batch) axis, merge all the others: reshape to (N, product of the other sizes)."
FLATTEN_FORMULA = "x with every axis after the first merged into one, shape (N, product of the other sizes)"


def check_flatten(ns, shape, seed=0):
    module, error = construct("Flatten()", ns["Flatten"])
    if error:
        return error
    return check_layer(ns, "Flatten()", module.forward, sample(shape, "real", seed), [], formulas.flatten,
                       FLATTEN_FORMULA, FLATTEN_HINT, seed)


# ── Dropout ──────────────────────────────────────────────────────────────────────────────────────

def check_dropout(ns, p, seed=0):
    Tensor = ns["Tensor"]
    label = f"Dropout(p={p}, seed={seed}) in training mode"
    make = ns["Dropout"]
    layer, error = construct(label, lambda: make(p, seed=seed))
    twin, error2 = construct(label, lambda: make(p, seed=seed))
    if error or error2:
        return error or error2
    layer.training = twin.training = True
    x_values = sample((400, 50), "positive", seed)
    outputs = []
    for module in (layer, layer, twin):
        x = tensor(ns, x_values)
        try:
            out = run_quietly(module.forward, x)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception(label, "forward", error))
        if not isinstance(out, Tensor) or tuple(out.shape) != x_values.shape:
            return failed(f"{label}: forward should return a Tensor of the input's shape {x_values.shape}, "
                          f"received {type_name(out)} {getattr(out, 'shape', '')}.")
        outputs.append((x, out))
    x, out = outputs[0]
    got = array(out)
    verdict = dropout_mask_problem(label, p, seed, x_values, got, array(outputs[1][1]), array(outputs[2][1]))
    if verdict:
        return verdict
    upstream = np.random.default_rng(seed + 100).standard_normal(x_values.shape)
    try:
        run_quietly(out.backward, Tensor(upstream, dtype=np.float64, requires_grad=False))
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception(label, "backward through your forward", error))
    return compare_gradient(f"{label}, backward with a random out_grad", "x", x.grad, upstream * (got != 0) * (1 / (1 - p)),
                            DROPOUT_GRADIENT_HINT) or dropout_passed(label, p)


DROPOUT_GRADIENT_HINT = ("the gradient is out_grad times the same mask, scaled by 1 / (1 - p); "
                         "the mask must be a constant Tensor multiplied into x.")


def dropout_mask_problem(label, p, seed, x_values, got, second, twin):
    """What is wrong with three training outputs on x_values (two calls of one layer, then a twin made with the
    same seed), or None. Shared with the judge, which verifies the same arrays outside the kernel."""
    kept = got != 0
    scale = 1 / (1 - p)
    wrong = kept & ~np.isclose(got, x_values * scale, rtol=1e-5, atol=1e-6)
    if wrong.any():
        index = tuple(int(i) for i in np.argwhere(wrong)[0])
        plain = np.isclose(got[index], x_values[index], rtol=1e-5)
        return failed(f"{label}: out{list(index)} = {number(got[index])} for x = {number(x_values[index])}; a kept "
                      f"element must be x / (1 - p) = {number(x_values[index] * scale)}, a dropped one 0."
                      + ("\n  Hint: scale the kept elements by 1 / (1 - p) (inverted dropout), so that the "
                         "expected output equals the input and nothing changes at evaluation." if plain else ""))
    dropped = 1 - kept.mean()
    if abs(dropped - p) > 0.02:
        hint = ("\n  Hint: p is the probability of DROPPING an element, so an element is kept with probability "
                "1 - p; your layer drops about 1 - p of them and keeps about p."
                if abs(dropped - (1 - p)) < 0.02 else "")
        return failed(f"{label}: {dropped:.1%} of {kept.size} elements were dropped; expected about {p:.0%}.{hint}")
    if np.array_equal(second != 0, kept):
        return failed(f"{label}: two forward calls dropped exactly the same elements.\n  Hint: draw a new mask at "
                      "every forward call, from the one generator made from the seed in __init__ (NumPy's "
                      "default_rng), which moves on with every draw.")
    if not np.array_equal(twin, got):
        return failed(f"{label}: two Dropout layers made with seed={seed} drop different elements: the first "
                      "forward call of each should give the same mask.")
    return None


def dropout_passed(label, p):
    return passed(f"✔ {label}: drops about {p:.0%}, scales by 1/(1-p), fresh seeded masks, gradient through the mask")


DROPOUT_EVAL_HINT = ("in evaluation mode (self.training is False) dropout does nothing: its output is its input, "
                     "neither masked nor scaled.")


def check_dropout_eval(ns, p, seed=0):
    label = f"Dropout(p={p}) in evaluation mode (training = False)"
    layer, error = construct(label, lambda: ns["Dropout"](p, seed=seed))
    if error:
        return error
    layer.training = False
    return check_layer(ns, label, layer.forward, sample((6, 5), "positive", seed), [], formulas.identity,
                       "the input, unchanged", DROPOUT_EVAL_HINT, seed)


# ── BatchNorm1d and LayerNorm1d ──────────────────────────────────────────────────────────────────

def randomize(layer, names, dim, seed):
    """Give a norm layer's weight and bias random values, so that their gradients are not trivial."""
    rng = np.random.default_rng(seed + 7)
    for name in names:
        p = getattr(layer, name)
        p.data = np.asarray(rng.uniform(0.5, 1.5, dim), dtype=p.data.dtype)


NORM_STARTS = (("weight", 1.0), ("bias", 0.0))        # a new norm layer only normalizes
RUNNING_STARTS = (("running_mean", 0.0), ("running_var", 1.0))
MISSING = "missing"     # the `kind` of an attribute the layer does not have


def check_norm_parameters(ns, label, layer, dim):
    Parameter = ns["Parameter"]
    for name, start in NORM_STARTS:
        p = getattr(layer, name, None)
        kind = type_name(p) if hasattr(layer, name) else MISSING
        verdict = norm_parameter_problem(label, dim, name, start, kind, isinstance(p, Parameter),
                                         array(p) if isinstance(p, Parameter) else None)
        if verdict:
            return verdict
    return None


def norm_parameter_problem(label, dim, name, start, kind, is_parameter, values):
    """What is wrong with a new norm layer's weight or bias, or None (shared with the judge). `kind`: the
    attribute's type name, or MISSING."""
    if kind == MISSING:
        return failed(f"{label}: the layer has no attribute .{name}: __init__ must create it, a Parameter of shape "
                      f"({dim},).")
    if not is_parameter:
        return failed(f"{label}: .{name} is a {kind}, expected a Parameter.")
    if values.shape != (dim,):
        return failed(f"{label}: .{name} has shape {values.shape}, expected ({dim},).")
    if not np.all(values == start):
        return failed(f"{label}: .{name} should start as all {start:g}s, so that a new layer only normalizes.")
    return None


def running_buffer_problem(label, dim, name, start, kind, is_buffer, values):
    """What is wrong with a new BatchNorm1d's running_mean or running_var, or None (shared with the judge).
    `kind`: the attribute's type name, or MISSING."""
    if kind == MISSING:
        return failed(f"{label}: the layer has no attribute .{name}: __init__ must create it, a buffer (an ndarray) of "
                      f"{dim} {'zeros' if start == 0 else 'ones'}, under exactly that name (the text of section 4.6 "
                      "names both running statistics).")
    if not is_buffer:
        return failed(f"{label}: .{name} should be a buffer (an ndarray or a plain Tensor), not "
                      f"{kind}: an optimizer must not train it.")
    if np.shape(values) != (dim,) or not np.all(values == start):
        return failed(f"{label}: .{name} should start as {dim} {'zeros' if start == 0 else 'ones'}.")
    return None


RUNNING_STATS_OUTSIDE_GRAPH = ("running statistics are plain NumPy arrays of numbers, outside the graph: they "
                               "are updated from the values of the batch's statistics, not from Tensors.")


def running_stats_not_numbers(label, step, name, kind):
    """The verdict for a running statistic that is not an array of numbers. Shared with the judge."""
    return failed(f"{label}: after {step + 1} training batch(es), {name} is a {kind} that does not read as an "
                  f"array of numbers (an array of Tensors, say).\n  Hint: {RUNNING_STATS_OUTSIDE_GRAPH}")


def running_stats_in_graph(label, step, name):
    """The verdict for a running statistic that is a Tensor requiring a gradient. Shared with the judge."""
    return failed(f"{label}: after {step + 1} training batch(es), {name} is a Tensor that requires a gradient: it was "
                  "computed from the batch's statistic as a Tensor, so it joins the graph, and every later batch "
                  f"chains its graph to this one.\n  Hint: {RUNNING_STATS_OUTSIDE_GRAPH}")


def running_stats_problem(label, step, name, got, want):
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        return failed(f"{label}: after {step + 1} training batch(es), {name} = {np.round(got, 4).tolist()}, "
                      f"expected {np.round(want, 4).tolist()}.\n  Hint: each training batch moves a running statistic the "
                      "fraction momentum of the way towards this batch's statistic (an exponential moving average); "
                      "the variance is the biased one (divide by N).")
    return None


def scaled(x, scale):
    """Inputs shrunk by `scale` (rows of small variance, where eps matters), held exactly by a float32 Tensor."""
    return x if scale == 1 else np.asarray(x * scale, dtype=np.float32).astype(np.float64)


def check_norm_layer(ns, label, make, batch, dim, seed, formula, description, hint, training=None, scale=1.0):
    """A normalization layer's start, output and gradients against `formula(x, weight, bias, eps)`, on inputs
    shrunk by `scale`."""
    layer, error = construct(label, make)
    if error:
        return error
    if training is not None:
        layer.training = training
    verdict = check_norm_parameters(ns, label, layer, dim)
    if verdict:
        return verdict
    randomize(layer, ("weight", "bias"), dim, seed)
    eps = getattr(layer, "eps", 1e-5)
    return check_layer(ns, label, layer.forward, scaled(sample((batch, dim), "real", seed), scale),
                       [("weight", layer.weight), ("bias", layer.bias)],
                       lambda x, w, b: formula(x, w, b, eps), description, hint, seed)


BATCHNORM_FORMULA = "(x - mean) / sqrt(var + eps) * weight + bias over the batch"
BATCHNORM_HINT = ("normalize each feature (column) over the batch, axis 0: subtract its mean and divide by the square "
                  "root of its biased variance (divided by N) plus eps; then scale by weight and shift by bias; "
                  "broadcast every (dim,) Tensor to (N, dim) explicitly.")
BATCHNORM_EVAL_FORMULA = "(x - running_mean) / sqrt(running_var + eps) * weight + bias"
BATCHNORM_EVAL_HINT = ("in evaluation mode, normalize with the running statistics (not the batch's), eps added "
                       "to the running variance under the square root as in training, and do not update them.")
RUNNING_MOMENTUM = 0.2
RUNNING_EPS = 0.1       # large, so that an evaluation that forgets eps shows (with the default, by 5 parts in 10^6)


def running_label(dim):
    """The running-statistics scenario's layer (shared with the judge)."""
    return f"BatchNorm1d({dim}, eps={RUNNING_EPS}, momentum={RUNNING_MOMENTUM})"


def batchnorm_label(dim, scale=1.0):
    """`BatchNorm1d(3) in training mode`; with shrunk inputs, says that their features have a variance near eps
    (shared with the judge)."""
    return (f"BatchNorm1d({dim}) in training mode"
            + ("" if scale == 1 else f" with inputs × {scale:g} (features whose variance is near eps)"))


def check_batchnorm(ns, batch, dim, seed=0, scale=1.0):
    return check_norm_layer(ns, batchnorm_label(dim, scale), lambda: ns["BatchNorm1d"](dim), batch, dim,
                            seed, formulas.batchnorm_train, BATCHNORM_FORMULA, BATCHNORM_HINT, training=True,
                            scale=scale)


def check_batchnorm_running(ns, batch, dim, seed=0):
    Parameter = ns["Parameter"]
    momentum, label = RUNNING_MOMENTUM, running_label(dim)
    layer, error = construct(label, lambda: ns["BatchNorm1d"](dim, eps=RUNNING_EPS, momentum=momentum))
    if error:
        return error
    for name, start in RUNNING_STARTS:
        value = getattr(layer, name, None)
        is_buffer = not (value is None or isinstance(value, Parameter))
        kind = type_name(value) if hasattr(layer, name) else MISSING
        verdict = running_buffer_problem(label, dim, name, start, kind, is_buffer,
                                         array(value) if is_buffer else None)
        if verdict:
            return verdict
    verdict = check_norm_parameters(ns, label, layer, dim)
    if verdict:
        return verdict
    layer.training = True
    mean, var = np.zeros(dim), np.ones(dim)
    for step in range(2):
        x_values = sample((batch, dim), "real", seed + step)
        try:
            run_quietly(layer.forward, tensor(ns, x_values))
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception(label, "forward", error))
        mean = formulas.running_average(mean, x_values.mean(axis=0), momentum)
        var = formulas.running_average(var, x_values.var(axis=0), momentum)
        for name, want in (("running_mean", mean), ("running_var", var)):
            if isinstance(getattr(layer, name), ns["Tensor"]) and getattr(getattr(layer, name), "requires_grad", False) is True:
                return running_stats_in_graph(label, step, name)
            try:
                got = array(getattr(layer, name))
            except (TypeError, ValueError):
                return running_stats_not_numbers(label, step, name, type_name(getattr(layer, name)))
            verdict = running_stats_problem(label, step, name, got, want)
            if verdict:
                return verdict
    layer.training = False
    randomize(layer, ("weight", "bias"), dim, seed)

    def reference(x, w, b):
        return formulas.batchnorm_eval(x, w, b, mean, var, RUNNING_EPS)

    verdict = check_layer(ns, f"{label} in evaluation mode", layer.forward, sample((3, dim), "real", seed + 5),
                          [("weight", layer.weight), ("bias", layer.bias)], reference,
                          BATCHNORM_EVAL_FORMULA, BATCHNORM_EVAL_HINT, seed)
    if verdict.passed and not np.allclose(array(layer.running_mean), mean, rtol=1e-4, atol=1e-5):
        return failed(eval_changed_running_mean(label))
    return verdict if not verdict.passed else running_passed(label)


def eval_changed_running_mean(label):
    return f"{label}: evaluation mode changed running_mean; only training batches may update it."


def running_passed(label):
    return passed(f"✔ {label}: running statistics updated in training, used (and left alone) in evaluation")


LAYERNORM_FORMULA = "(x - row mean) / sqrt(row var + eps) * weight + bias"
LAYERNORM_HINT = ("normalize each sample (row) over its features, axis 1: mean and biased variance per row, reshaped "
                  "to (N, 1) and broadcast to (N, dim); eps is added to the variance, inside the square root; then "
                  "scale by weight and shift by bias, broadcast from (dim,).")


def layernorm_label(dim, scale=1.0):
    """`LayerNorm1d(5)`; with shrunk inputs, says that their rows have a variance near eps (shared with the judge)."""
    return f"LayerNorm1d({dim})" + ("" if scale == 1 else f" with inputs × {scale:g} (rows whose variance is near eps)")


def check_layernorm(ns, batch, dim, seed=0, scale=1.0):
    return check_norm_layer(ns, layernorm_label(dim, scale), lambda: ns["LayerNorm1d"](dim), batch, dim, seed,
                            formulas.layernorm, LAYERNORM_FORMULA, LAYERNORM_HINT, scale=scale)


# ── Losses ───────────────────────────────────────────────────────────────────────────────────────

MSE_FORMULA = "mean((pred - target)²) over every element"
MSE_HINT = ("average the squared differences over ALL elements, every axis included (divide by how many there "
            "are), and return one number.")


def mse_label(target_as):
    return "MSELoss()" + (" with a NumPy array as target" if target_as == "array" else "")


def check_mse(ns, shape, seed=0, target_as="tensor"):
    loss_fn, error = construct("MSELoss()", ns["MSELoss"])
    if error:
        return error
    target = sample(shape, "real", seed + 1)
    given = tensor(ns, target, requires_grad=False) if target_as == "tensor" else target.copy()
    return check_layer(ns, mse_label(target_as), lambda pred: loss_fn.forward(pred, given),
                       sample(shape, "real", seed), [], lambda pred: formulas.mse(pred, target),
                       MSE_FORMULA, MSE_HINT, seed, data_name="targets" if target_as == "array" else None)


def softmax_loss_label(batch, classes, offset, labels_as):
    """The loss's label; the checks add the logits' shape ("on x of shape (5, 4)")."""
    return (f"SoftmaxLoss() with labels as {'a Tensor' if labels_as == 'tensor' else 'an int ndarray'}"
            f"{f' and logits around {offset:g}' if offset else ''}")


def softmax_loss_hint(offset):
    hint = ("the loss is the mean over the batch of logsumexp(logits_i) - logits_i[label_i]; pick the label's "
            "logit with a one-hot mask (the one_hot helper), and take logsumexp with the stable LogSumExp.")
    if offset:
        hint += (" Logits near 1000 overflow exp(): take exponentials only inside the stable LogSumExp, never of "
                 "the logits themselves.")
    return hint


def check_softmax_loss(ns, batch, classes, offset=0.0, labels_as="array", seed=0):
    Tensor = ns["Tensor"]
    loss_fn, error = construct("SoftmaxLoss()", ns["SoftmaxLoss"])
    if error:
        return error
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, batch)
    given = Tensor(labels, requires_grad=False) if labels_as == "tensor" else labels
    label, hint = softmax_loss_label(batch, classes, offset, labels_as), softmax_loss_hint(offset)
    saved = {name: ns.get(name) for name in ("LogSumExp", "logsumexp")}
    ns.update(logsumexp_standin(ns["Function"], ns["Tensor"]))
    try:
        return check_layer(ns, label, lambda logits: loss_fn.forward(logits, given),
                           sample((batch, classes), "real", seed) + offset, [],
                           lambda logits: formulas.softmax_loss(logits, labels),
                           "mean cross-entropy", hint, seed)
    finally:
        ns.update(saved)


def check_logsumexp_forward(ns, axes, shape, domain="real", seed=0):
    op = ns["LogSumExp"](axes)
    return check_forward(op, lambda a: formulas.logsumexp(a, axes), [shape], domain, seed)


# ── Softmax, BCEWithLogitsLoss, Embedding ────────────────────────────────────────────────────────

def check_softmax_forward(ns, axis, shape, domain="real", seed=0):
    op = ns["Softmax"](axis)
    return check_forward(op, lambda a: formulas.softmax(a, axis), [shape], domain, seed)


BCE_FORMULA = "mean of max(z, 0) - z·y + log(1 + exp(-|z|))"
BCE_HINT = ("the loss is the mean over ALL elements of max(z, 0) - z·y + log(1 + exp(-|z|)), built from Tensor "
            "operations (relu, absolute, exp, log), with the targets y as a constant Tensor.")
BCE_EXTREME_HINT = (" This check has logits of ±50 and ±1000: there sigmoid(z) rounds to exactly 0 or 1 in float64, "
                    "log(0) is -inf and 0·(-inf) is nan, and exp(z) overflows for z = 1000. The rule: never take "
                    "sigmoid(z) and then its log, and never exp of a positive number; the form above only ever "
                    "computes exp(-|z|), which lies in (0, 1].")
BCE_EXTREMES = (-1000.0, -50.0, 50.0, 1000.0)


def bce_label(shape, extreme, targets_as):
    return (f"BCEWithLogitsLoss() on logits of shape {tuple(shape)}{' including ±50 and ±1000' if extreme else ''}, "
            f"targets as {'a Tensor' if targets_as == 'tensor' else 'an ndarray'}")


def bce_hint(extreme):
    return BCE_HINT + (BCE_EXTREME_HINT if extreme else "")


def bce_inputs(shape, extreme, rng):
    """Logits in [-2, 2] and 0/1 targets; with `extreme`, the first elements of a random order get every pair of a
    logit near ±50 or ±1000 and a target 0 or 1 (both sides of the answer). Shared with the judge."""
    logits = gradcheck.sample(shape, "real", rng)
    targets = rng.integers(0, 2, shape).astype(np.float64)
    if extreme:
        pairs = [(offset, target) for offset in BCE_EXTREMES for target in (0.0, 1.0)]
        flat_logits, flat_targets = logits.reshape(-1), targets.reshape(-1)
        for position, (offset, target) in zip(rng.permutation(flat_logits.size), pairs):
            flat_logits[position] += offset
            flat_targets[position] = target
        logits = np.asarray(logits, dtype=np.float32).astype(np.float64)    # what a float32 Tensor holds
    return logits, targets


def check_bce(ns, shape, extreme=False, targets_as="array", seed=0):
    loss_fn, error = construct("BCEWithLogitsLoss()", ns["BCEWithLogitsLoss"])
    if error:
        return error
    logits, targets = bce_inputs(tuple(shape), extreme, np.random.default_rng(seed))
    given = tensor(ns, targets, requires_grad=False) if targets_as == "tensor" else targets.copy()
    return check_layer(ns, bce_label(shape, extreme, targets_as), lambda z: loss_fn.forward(z, given), logits, [],
                       lambda z: formulas.bce_with_logits(z, targets), BCE_FORMULA, bce_hint(extreme), seed,
                       data_name="targets" if targets_as == "array" else None)


EMBEDDING_FORMULA = "weight[indices]: row indices[p] of the weight at every position p"
EMBEDDING_HINT = ("forward returns, at every position of indices, that id's row of the weight (shape indices.shape + "
                  "(dim,)), through an operation whose input is the weight Parameter, so that backward reaches it; "
                  "a row's gradient is the sum of out_grad over every position that looked it up.")


def embedding_label(num_embeddings, dim):
    return f"Embedding({num_embeddings}, {dim})"


def embedding_indices(num_embeddings, shape, rng):
    """Integer ids of `shape` in [0, num_embeddings), with at least one id used twice (where two fit)."""
    indices = rng.integers(0, num_embeddings, shape).astype(np.int64)
    flat = indices.reshape(-1)
    if flat.size >= 2:
        flat[-1] = flat[0]
    return indices


def embedding_weight_problem(label, num_embeddings, dim, kind, is_parameter, values, twin_values, other_values):
    """What is wrong with a new Embedding's weight, or None (shared with the judge). `kind`: the attribute's type
    name or MISSING; `twin_values`, `other_values`: the weights of layers made with the same and another seed."""
    if kind == MISSING:
        return failed(f"{label}: the layer has no attribute .weight: __init__ must create it, a Parameter of shape "
                      f"({num_embeddings}, {dim}).")
    if not is_parameter:
        return failed(f"{label}: .weight is a {kind}, expected a Parameter (so that parameters() finds it).")
    if values.shape != (num_embeddings, dim):
        return failed(f"{label}: .weight has shape {values.shape}, expected (num_embeddings, dim) = "
                      f"{(num_embeddings, dim)}: one row per id.")
    if values.dtype != np.float32:
        return failed(f"{label}: .weight has dtype {values.dtype}, expected float32 (the Tensor default).")
    if values.size > 1 and np.all(values == values.flat[0]):
        return failed(f"{label}: every weight is {number(values.flat[0])}; draw them from a standard normal.")
    if twin_values is None or not np.array_equal(values, twin_values):
        return failed(f"{label}: two layers built with the same seed have different weights.\n  Hint: {SEEDED_HINT}")
    if other_values is not None and values.size > 1 and np.array_equal(values, other_values):
        return failed(f"{label}: two different seeds give the same weights: is the seed passed to the generator?")
    return None


EMBEDDING_SPREAD = (400, 50)      # a large table: 20,000 draws tell a standard normal from another law


def embedding_spread_problem(seed, values):
    """The weights of a new Embedding(*EMBEDDING_SPREAD, seed=seed) against a standard normal: mean, variance and
    the share beyond 2, each within init's six standard errors (shared with the judge); the verdict, or None."""
    label = f"Embedding({EMBEDDING_SPREAD[0]}, {EMBEDDING_SPREAD[1]}, seed={seed})"
    w = np.asarray(values, dtype=np.float64).reshape(-1)
    n = w.size
    if n == 0:
        return None
    mean, var = float(w.mean()), float(w.var())
    tail = float(np.mean(np.abs(w) > 2))
    mean_tol, var_tol, tail_tol = init.tolerances(1.0, n, "normal")
    if abs(mean) <= mean_tol and abs(var - 1) <= var_tol and abs(tail - init.NORMAL_TAIL) <= tail_tol:
        return None
    worst = int(np.argmax(np.abs(w)))
    return failed(f"{label}: its {n} weights have mean {mean:.3g}, variance {var:.4g}, and {tail:.2%} of them beyond "
                  f"±2; a standard normal draw has mean 0 (±{mean_tol:.2g}), variance 1 (±{var_tol:.2g}) and "
                  f"{init.NORMAL_TAIL:.2%} beyond ±2 (±{tail_tol:.1%}). Your largest |weight| is {number(w[worst])}.\n"
                  "  Hint: every row of an embedding is drawn from a standard normal, mean 0 and standard deviation 1, "
                  "with the layer's own generator: an id has no fan-in to scale by.")


def check_embedding(ns, num_embeddings, dim, index_shape, seed=0):
    Tensor, Parameter = ns["Tensor"], ns["Parameter"]
    label = embedding_label(num_embeddings, dim)
    make = ns["Embedding"]
    layer, error = construct(label, lambda: make(num_embeddings, dim, seed=seed))
    if error:
        return error
    twin, _ = construct(label, lambda: make(num_embeddings, dim, seed=seed))
    other, _ = construct(label, lambda: make(num_embeddings, dim, seed=seed + 1))
    weight = getattr(layer, "weight", None)
    is_parameter = isinstance(weight, Parameter)
    verdict = embedding_weight_problem(
        label, num_embeddings, dim, type_name(weight) if hasattr(layer, "weight") else MISSING, is_parameter,
        np.asarray(weight.data) if is_parameter else None,
        array(twin.weight) if isinstance(getattr(twin, "weight", None), Tensor) else None,
        array(other.weight) if isinstance(getattr(other, "weight", None), Tensor) else None)
    if verdict:
        return verdict
    wide, error = construct(f"Embedding({EMBEDDING_SPREAD[0]}, {EMBEDDING_SPREAD[1]}, seed={seed})",
                            lambda: make(*EMBEDDING_SPREAD, seed=seed))
    verdict = error or embedding_spread_problem(seed, array(getattr(wide, "weight", None)))
    if verdict:
        return verdict
    rng = np.random.default_rng(seed)
    indices = embedding_indices(num_embeddings, tuple(index_shape), rng)
    values = array(weight)
    want = formulas.embedding(values, indices)
    where = f"{label} on indices of shape {indices.shape} (ids {np.array2string(indices.reshape(-1)[:8])})"
    for upstream_name, upstream in (("an all-ones out_grad", np.ones(want.shape)),
                                    ("a random out_grad", rng.standard_normal(want.shape))):
        weight.grad = None
        try:
            out = run_quietly(layer.forward, indices.copy())
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception(label, "forward", error) + f"\n  while running {where}.")
        if not isinstance(out, Tensor):
            return failed(f"{where}: forward returned a {type_name(out)}, expected a Tensor (apply an operation to "
                          "the weight, so that backward can reach it).")
        verdict = compare_output(where, array(out), want, EMBEDDING_FORMULA, EMBEDDING_HINT)
        if verdict:
            return verdict
        try:
            run_quietly(out.backward, Tensor(upstream.copy(), dtype=np.float64, requires_grad=False))
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception(label, "backward through your forward", error) + f"\n  while running {where}.")
        expected = gradcheck.numerical_gradients(lambda w: formulas.embedding(w, indices), [values], upstream)[0]
        verdict = compare_gradient(f"{where}, backward with {upstream_name}", "weight", weight.grad, expected,
                                   EMBEDDING_HINT)
        if verdict:
            return verdict
    return passed(f"✔ {label}: a seeded Parameter; rows looked up on indices{indices.shape}, gradients added at repeats")


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

@register("linear_init")
def linear_init_check(namespace, in_features=3, out_features=4):
    """Linear's weight and bias: Parameters of the right shapes, seeded, in ±1/sqrt(in_features)."""
    return check_linear_init(namespace, in_features, out_features)


@register("linear")
def linear_check(namespace, in_features=3, out_features=4, batch=5, bias=True, seed=0):
    """Linear.forward and its gradients against x @ W + b."""
    return check_linear(namespace, in_features, out_features, batch, bias, seed)


@register("activation")
def activation_check(namespace, name, shape=(4, 3), seed=0):
    """The ReLU, Sigmoid, Tanh or Identity module against its formula."""
    return check_activation(namespace, name, tuple(shape), seed)


@register("flatten")
def flatten_check(namespace, shape=(2, 3, 4), seed=0):
    return check_flatten(namespace, tuple(shape), seed)


@register("dropout")
def dropout_check(namespace, p=0.25, seed=0):
    """Dropout in training: drop rate, 1/(1-p) scaling, fresh seeded masks, gradient."""
    return check_dropout(namespace, p, seed)


@register("dropout_eval")
def dropout_eval_check(namespace, p=0.25, seed=0):
    return check_dropout_eval(namespace, p, seed)


@register("batchnorm")
def batchnorm_check(namespace, batch=6, dim=3, seed=0, scale=1.0):
    """BatchNorm1d in training mode: output and gradients of x, weight and bias; `scale` shrinks the inputs to
    features whose variance is near eps."""
    return check_batchnorm(namespace, batch, dim, seed, scale)


@register("batchnorm_running")
def batchnorm_running_check(namespace, batch=6, dim=3, seed=0):
    """BatchNorm1d's running statistics, and evaluation mode."""
    return check_batchnorm_running(namespace, batch, dim, seed)


@register("layernorm")
def layernorm_check(namespace, batch=4, dim=5, seed=0, scale=1.0):
    """LayerNorm1d: output and gradients; `scale` shrinks the inputs to rows whose variance is near eps."""
    return check_layernorm(namespace, batch, dim, seed, scale)


@register("mse_loss")
def mse_loss_check(namespace, shape=(5, 1), seed=0, target_as="tensor"):
    return check_mse(namespace, tuple(shape), seed, target_as)


@register("softmax_loss")
def softmax_loss_check(namespace, batch=5, classes=4, offset=0.0, labels_as="array", seed=0):
    """SoftmaxLoss (with a stand-in LogSumExp) against the mean cross-entropy and its gradient."""
    return check_softmax_loss(namespace, batch, classes, offset, labels_as, seed)


@register("logsumexp_forward")
def logsumexp_forward_check(namespace, axes, shape, domain="real", seed=0):
    """LogSumExp(axes).forward against a stable NumPy log-sum-exp."""
    return check_logsumexp_forward(namespace, axes, tuple(shape), domain, seed)


def cross_entropy_labels(batch, classes, rng):
    """The integer labels of a SoftmaxCrossEntropy check, drawn before its logits (the judge draws them secretly)."""
    return rng.integers(0, classes, batch)


@register("cross_entropy_forward")
def cross_entropy_forward_check(namespace, batch=5, classes=4, domain="real", seed=0):
    """SoftmaxCrossEntropy(labels).forward against the float64 mean cross-entropy, labels drawn from the seed."""
    labels = cross_entropy_labels(batch, classes, np.random.default_rng([seed, 1]))
    op = namespace["SoftmaxCrossEntropy"](labels)
    return forward_check(namespace, op, lambda z: formulas.softmax_loss(z, labels), [(batch, classes)], domain, seed)


@register("cross_entropy_backward")
def cross_entropy_backward_check(namespace, batch=5, classes=4, domain="real", seed=0):
    """SoftmaxCrossEntropy(labels).backward against finite differences of its forward, labels drawn from the seed."""
    labels = cross_entropy_labels(batch, classes, np.random.default_rng([seed, 1]))
    return backward_check(namespace, namespace["SoftmaxCrossEntropy"](labels), [(batch, classes)], domain, seed)


@register("softmax_forward")
def softmax_forward_check(namespace, axis, shape, domain="real", seed=0):
    """Softmax(axis).forward against a stable NumPy softmax."""
    return check_softmax_forward(namespace, axis, tuple(shape), domain, seed)


@register("bce_loss")
def bce_loss_check(namespace, shape=(6,), extreme=False, targets_as="array", seed=0):
    """BCEWithLogitsLoss against the float64 mean binary cross-entropy and its gradient; `extreme` adds
    logits of ±50 and ±1000 on both sides of the answer."""
    return check_bce(namespace, tuple(shape), extreme, targets_as, seed)


@register("embedding")
def embedding_check(namespace, num_embeddings=5, dim=3, index_shape=(2, 4), seed=0):
    """Embedding: a seeded weight Parameter, rows looked up for indices of any shape, gradients added at repeats."""
    return check_embedding(namespace, num_embeddings, dim, tuple(index_shape), seed)
