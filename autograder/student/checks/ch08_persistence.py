"""Chapter 8's checks: names of a model's state, snapshots, loading and refusing, checkpoint files.

Each check builds what it needs from the notebook's classes and calls only the method under test,
with the course's own versions of the others swapped in (`named_state` for `state_dict` and
`load_state_dict`, the state dicts for the checkpoint files), so one slip costs one exercise.
"""
import os
import tempfile
from pathlib import Path

import numpy as np

from autograder.student.checks.ch08_persistence_facts import (
    NET_SIZES,
    OPTIMIZER_ARRAYS,
    OPTIMIZER_DEFAULTS,
    OPTIMIZER_NUMBERS,
    TENSOR_BUFFER,
    course_methods,
    course_optimizer_state,
    net_state,
    values_of,
)
from autograder.student.checks.kernel_facts import number_report
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed

# ── the course's own versions (ch08_persistence_facts.course_methods) swapped in to keep exercises apart ──


def attempt(label, fn, *args, **kwargs):
    """(result, None) or (None, a failed verdict that tells the student's exception). `label`: "Owner.method"."""
    try:
        return run_quietly(lambda: fn(*args, **kwargs)), None
    except Exception as error:  # noqa: BLE001
        owner, _, method = label.rpartition(".")
        return None, failed(describe_exception(owner or label, method or "call", error))


# ── stand-in models ───────────────────────────────────────────────────────────────────────────

# the names probe_model's trees must give, in order (the judge builds the same trees in the kernel)
TREE_NAMES = {
    "flat": ["embed", "block.layers.0.weight", "block.layers.1.weight", "block.norm.gain", "block.norm.shift",
             "block.running_mean", "block.step_count", "pair.0.weight"],
    "nested": ["stages.0.a.0.weight", "stages.0.a.1.weight", "stages.0.stats.0", "stages.0.stats.1",
               "tail.layers.0.weight", "tail.layers.1.weight", "tail.norm.gain", "tail.norm.shift",
               "tail.running_mean", "tail.step_count"],
}
# what load_checkpoint must refuse: kind -> (description, file name as the kernel's check writes it)
NOT_CHECKPOINTS = {
    "unmarked": ("a checkpoint of this very model without the babygrad.checkpoint entry", "unmarked.ckpt"),
    "text": ("a text file", "notes.txt"), "empty": ("an empty file", "empty.ckpt"),
    "random": ("random bytes", "noise.ckpt"), "zip": ("a zip archive that is not NumPy's", "other.zip"),
    "npy": ("a plain .npy array", "weights.npy"),
    "npz": ("an .npz archive without the babygrad.checkpoint entry", "arrays.npz"),
    "pickled": ("a checkpoint file whose entry needs pickle", "pickled.ckpt"),
    "other_model": ("a checkpoint of another model", "other_model.ckpt"),
}
CHECKPOINT_MARK = "babygrad.checkpoint"
PICKLE_RULE = "a checkpoint never needs pickle, and loading with pickle allowed runs whatever code the file names"


def is_parameter(name):
    """Whether small_net's state entry `name` is a Parameter (the optimizer's), not a buffer."""
    return "running" not in name and name != TENSOR_BUFFER


def probe_model(ns, seed=0, variant="flat"):
    """A tree of stand-in modules hiding state everywhere, and the (name, holder) pairs it must yield.

    `nested`: modules inside a tuple inside a dict inside a list, a buffer in a list, a shared buffer."""
    Tensor, Module, Parameter = ns["Tensor"], ns["Module"], ns["Parameter"]
    rng = np.random.default_rng(seed)

    def param(*shape):
        return Parameter(rng.uniform(-1, 1, shape))

    class Leaf(Module):
        def __init__(self, n):
            self.weight = param(n, 2)
            self.scale = 1.5                     # a number: not state
            self.name = "leaf"                   # a string: not state

    class Block(Module):
        def __init__(self):
            self.layers = [Leaf(3), Leaf(2)]
            self.norm = {"gain": param(2), "shift": param(2)}
            self.running_mean = np.zeros(2, dtype=np.float32)     # an array buffer
            self.step_count = Tensor(np.array([0.0]), requires_grad=False)   # a Tensor buffer
            self.rng = np.random.default_rng(0)  # not state
            self.head = None

    class Model(Module):
        def __init__(self):
            self.embed = param(4, 3)
            self.block = Block()
            self.tied = self.embed               # the same Parameter again
            self.again = self.block.layers[0]    # the same module again
            self.pair = (Leaf(1),)

    if variant == "nested":
        class Deep(Module):
            def __init__(self):
                self.stages = [{"a": (Leaf(2), Leaf(3)), "stats": [np.ones(3), Tensor(np.zeros(2), requires_grad=False)]}]
                self.shared = self.stages[0]["stats"][0]      # the same buffer again
                self.tail = Block()

        model = Deep()
        stage, tail = model.stages[0], model.tail
        expected = [("stages.0.a.0.weight", stage["a"][0].weight), ("stages.0.a.1.weight", stage["a"][1].weight),
                    ("stages.0.stats.0", stage["stats"][0]), ("stages.0.stats.1", stage["stats"][1]),
                    ("tail.layers.0.weight", tail.layers[0].weight), ("tail.layers.1.weight", tail.layers[1].weight),
                    ("tail.norm.gain", tail.norm["gain"]), ("tail.norm.shift", tail.norm["shift"]),
                    ("tail.running_mean", tail.running_mean), ("tail.step_count", tail.step_count)]
        return model, expected

    model = Model()
    b = model.block
    expected = [("embed", model.embed), ("block.layers.0.weight", b.layers[0].weight),
                ("block.layers.1.weight", b.layers[1].weight), ("block.norm.gain", b.norm["gain"]),
                ("block.norm.shift", b.norm["shift"]), ("block.running_mean", b.running_mean),
                ("block.step_count", b.step_count), ("pair.0.weight", model.pair[0].weight)]
    return model, expected


def small_net(ns, seed):
    """Linear → BatchNorm1d → ReLU → Linear: parameters and buffers, as a real model has; one buffer is a
    Tensor (TENSOR_BUFFER), which the forward does not use."""
    a, b, c = NET_SIZES
    model = ns["Sequential"](ns["Linear"](a, b, seed=seed), ns["BatchNorm1d"](b), ns["ReLU"](),
                             ns["Linear"](b, c, seed=seed + 1))
    setattr(model, TENSOR_BUFFER, ns["Tensor"](np.random.default_rng(seed).uniform(0.5, 1.5, c), requires_grad=False))
    return model


def batches(ns, count, seed=0):
    rng = np.random.default_rng(seed)
    return [(ns["Tensor"](rng.uniform(-1, 1, (8, 4)), requires_grad=False), rng.integers(0, 3, 8))
            for _ in range(count)]


def train(ns, model, optimizer, data, frozen=0):
    """A step per batch; the first `frozen` parameters get no gradient (a layer frozen for those steps)."""
    loss_fn = ns["SoftmaxLoss"]()
    for x, y in data:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        for p in optimizer.params[:frozen]:
            p.grad = None
        optimizer.step()


def warm_up(ns, model, seed=0):
    """A few training steps so that weights and BatchNorm's running statistics differ from a fresh model's."""
    train(ns, model, ns["SGD"](model.parameters(), lr=0.1), batches(ns, 3, seed))
    model.zero_grad()


# ── 8.1 named_state and state_dict ────────────────────────────────────────────────────────────

@register("named_state")
def check_named_state(ns, variant="flat"):
    """Module.named_state on a stand-in model that hides state everywhere (`flat` or `nested`)."""
    model, expected = probe_model(ns, variant=variant)
    got, error = attempt("Module.named_state", model.named_state)
    if error:
        return error
    if not isinstance(got, list) or not all(isinstance(p, tuple) and len(p) == 2 for p in got):
        return named_state_verdict({"type_name": type(got).__name__, "text": str(got)[:120]}, [])
    pairs = [(name, type(holder).__name__, i < len(expected) and holder is expected[i][1])
             for i, (name, holder) in enumerate(got)]
    return named_state_verdict(pairs, [name for name, _ in expected])


def named_state_verdict(got, want):
    """got: [(name, the holder's type name, whether it is the model's own object)], or {type_name, text} for a
    value that is not a list of pairs; want: the names in order."""
    if isinstance(got, dict):
        return failed(f"named_state() returned {got['type_name']} {got['text']}; expected a list of (name, holder) pairs.")
    names = [name for name, _, _ in got]
    if names != want:
        missing = [n for n in want if n not in names]
        extra = [n for n in names if n not in want]
        hints = []
        if any(n.startswith(".") for n in names):
            hints.append("the top module has no name: its attributes are `embed`, not `.embed`.")
        if "tied" in " ".join(extra) or "again" in " ".join(extra):
            hints.append("an object reached twice (a tied weight, a module used twice) keeps only its first name.")
        if any("rng" in n or "scale" in n or "name" in n.split(".")[-1:] for n in extra):
            hints.append("only Tensors and ndarrays are state; numbers, strings and generators are not.")
        if any(n.endswith(("running_mean", "step_count")) or ".stats." in n for n in missing):
            hints.append("buffers count: an ndarray, or a Tensor that is not a Parameter.")
        if any(n.startswith(("block.norm", "block.layers", "pair", "stages", "tail.norm", "tail.layers")) for n in missing):
            hints.append("look inside lists, tuples and dicts, with the position or the key as part of the name.")
        return failed("named_state() of the check's model gives the wrong names.\n"
                      f"  expected: {want}\n  received: {names}\n"
                      + (f"  missing: {missing}\n" if missing else "") + (f"  not state: {extra}\n" if extra else "")
                      + ("  Hint: " + " ".join(hints) if hints else "  Hint: walk the attributes in the order they "
                         "were set (the order vars() lists them), and keep the first name of each object."))
    for name, type_name, own in got:
        if not own:
            return failed(f"named_state(): the holder of {name!r} is a {type_name}, not the model's own object.\n"
                          "  Hint: return the Parameter / Tensor / array itself (load_state_dict writes into it), not a copy or its .data.")
    return passed(f"✔ named_state() names all {len(want)} arrays of the check's model, each once")


@register("state_dict")
def check_state_dict(ns):
    """Module.state_dict (with the course's named_state): every array, copied."""
    with course_methods(ns, ("Module", "named_state")):
        model = small_net(ns, seed=0)
        warm_up(ns, model)
        got, error = attempt("Module.state_dict", model.state_dict)
        if error:
            return error
        want = {name: np.array(values_of(h)) for name, h in net_state(model)}
        entries = state_entries({k: np.array(v) if isinstance(v, np.ndarray) else v for k, v in got.items()}
                                if isinstance(got, dict) else got)
        holders = [values_of(h) for _, h in net_state(model)]
        before = {name: value.copy() for name, value in got.items()
                  if isinstance(value, np.ndarray)} if isinstance(got, dict) else {}
        for values in holders:
            values[...] += 1.0                               # training changes the model in place
        after = {name: np.array(got[name]) for name in before}
    return state_dict_verdict(entries, want, before, after)


def state_entries(state):
    """A state dict as the verdicts read it: None if it is not a dict, else [(key, type name, the array or None)]."""
    if not isinstance(state, dict):
        return type(state).__name__
    return [(key, type(value).__name__, value if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" else None)
            for key, value in state.items()]


def state_dict_verdict(entries, want, before, after):
    """entries: `state_entries` of what state_dict() returned; want: {name: the holder's values} in order;
    before/after: the returned arrays before and after every holder changed in place (+1)."""
    if isinstance(entries, str):
        return failed(f"state_dict() returned a {entries}; expected a dict from names to arrays.")
    got = {key: (type_name, value) for key, type_name, value in entries}
    if sorted(got) != sorted(want):
        return failed(f"state_dict() has keys {sorted(got)}, expected {sorted(want)} (the names of named_state()).")
    for name, values in want.items():
        type_name, value = got[name]
        if value is None and type_name == "ndarray":
            return failed(f"state_dict()[{name!r}] is an array of Python objects, not of numbers.\n  Hint: a state "
                          "dict holds values: for every Tensor, a Parameter or a buffer, the array of its data (an "
                          "array made of the Tensor object itself holds the object, not its numbers).")
        if value is None:
            return failed(f"state_dict()[{name!r}] is a {type_name}; expected a NumPy array: a state dict holds "
                          "values, so for a Tensor it holds the array of its data, not the Tensor.")
        if value.shape != values.shape or not np.array_equal(value, values):
            return failed(f"state_dict()[{name!r}] does not hold the values of {name}.")
    changed = [name for name in got if not np.array_equal(after.get(name), before.get(name))]
    if changed:
        return failed(f"state_dict() is not a snapshot: changing the model in place also changed {changed}.\n"
                      "  Hint: a snapshot holds a copy of each array, not the array itself: the model's own arrays "
                      "keep changing as it trains.")
    return passed(f"✔ state_dict() snapshots all {len(got)} arrays of Linear → BatchNorm1d → ReLU → Linear")


# ── 8.2 load_state_dict ───────────────────────────────────────────────────────────────────────

def check_load_values(ns):
    with course_methods(ns, ("Module", "named_state"), ("Module", "state_dict")):
        source = small_net(ns, seed=0)
        warm_up(ns, source)
        target = small_net(ns, seed=5)
        objects = [holder for _, holder in net_state(target)]
        params_before = target.parameters()
        state = {name: values.copy() for name, values in source.state_dict().items()}
        _, error = attempt("Module.load_state_dict", target.load_state_dict, state)
        if error:
            return error
        want = {name: values_of(h) for name, h in net_state(source)}
        got = [values_of(h) for _, h in net_state(target)]
        after = [holder for _, holder in net_state(target)]
        same = all(a is b for a, b in zip(after, objects)) and all(a is b for a, b in zip(target.parameters(), params_before))
        return load_values_verdict(got, want, same, shared_with(net_state(target), state))


def shared_with(named_holders, state):
    """The first holder whose array shares memory with the state dict it was loaded from, or None."""
    return next((name for name, holder in named_holders
                 if name in state and np.shares_memory(values_of(holder), np.asarray(state[name]))), None)


def load_values_verdict(got, want, same, shared=None):
    """got: the target's holder values after loading, in order; want: {name: the values loaded}; same: the
    holders and Parameters are still the objects they were; shared: a holder whose array is the loaded state
    dict's own (both the kernel's word)."""
    for (name, values), loaded in zip(want.items(), got):
        if loaded.shape != values.shape or not np.array_equal(loaded, values):
            return failed(f"after load_state_dict, {name} holds {np.round(loaded.ravel()[:3], 4).tolist()}..., "
                          f"expected {np.round(values.ravel()[:3], 4).tolist()}...")
    if not same:
        return failed("load_state_dict replaced the model's Parameters or buffers by new objects: an optimizer "
                      "built before loading would go on updating the old ones.\n"
                      "  Hint: loading copies the values into the arrays the model already has, in place, so every "
                      "Parameter and buffer stays the object it was.")
    if shared:
        return failed(f"after load_state_dict, the model's {shared} is the state dict's own array (they share "
                      "memory): the next training step changes the state dict too, so a best-so-far snapshot "
                      "loaded back would drift with the model.\n"
                      "  Hint: loading copies the values into the model's own arrays and keeps no reference to "
                      "the dict's.")
    return passed("✔ load_state_dict copies every parameter and buffer in place")


def raised_by(fn):
    """None when fn() returned, else (the exception's type name, the exception) for the refusal verdicts."""
    try:
        run_quietly(fn)
    except Exception as error:  # noqa: BLE001
        return error
    return None


def refusal_problem(label, kind, must_mention, error_type, is_kind, text, hint=""):
    """The call must raise `kind` (is_kind) and say `must_mention`; error_type None: it returned. `hint`: the
    case's own, told with any failure."""
    if error_type is None:
        return failed(f"{label}: loaded without complaint; expected a {kind}." + hint)
    if not is_kind:
        return failed(f"{label}: raised {error_type}: {text}; expected a {kind}." + hint)
    missing = [word for word in must_mention if word not in text]
    if missing:
        return failed(f"{label}: raised {kind}({text!r}); the message should name {missing}." + hint)
    return None


def changed_problem(label, holders, before):
    """A refused load must leave the model as it was: holders [(name, values)] against before {name: values}."""
    for name, values in holders:
        if not np.array_equal(values, before[name]):
            return failed(f"{label}: the load was refused, but {name} had already been changed.\n"
                          "  Hint: check every name and shape first, and copy only when everything fits.")
    return None


def load_error_cases(shapes, missing, unexpected, resized, wrong_shape):
    """The refusal cases of check.load_state_dict("errors"), for a model with these names and shapes:
    [(label, strict, which state: "missing" | "unexpected" | "resized" | "both", kind, words)]."""
    column = shapes[missing][::-1]          # the bias as a column: as many values, another shape
    return [
        (f"a state dict without {missing}", True, "missing", "KeyError", [missing]),
        (f"a state dict with an extra {unexpected}", True, "unexpected", "KeyError", [unexpected]),
        (f"{resized} of shape {wrong_shape} for a {shapes[resized]} weight", True, "resized", "ValueError",
         [resized, str(wrong_shape), str(shapes[resized])]),
        (f"{missing} of shape {column} for a {shapes[missing]} bias", True, "column", "ValueError",
         [missing, str(column), str(shapes[missing])]),
        (f"strict=False with {resized} of shape {wrong_shape}", False, "both", "ValueError", [resized]),
    ]


def refusal_hint(which, shapes, missing):
    """Told with any failure of the refusal case `which`: for the bias as a column, that the shapes differ though
    the sizes are the same."""
    if which != "column":
        return ""
    row = shapes[missing]
    return (f"\n  Hint: a {row[::-1]} array holds as many values as a {row} one, but it is another shape: the same name "
            "with a different shape is refused, whatever the sizes, before anything is copied.")


def load_error_states(good, missing, unexpected, resized, wrong_shape, extra):
    """The state dicts of the refusal cases, and of the strict=False load that must work."""
    without = {k: v for k, v in good.items() if k != missing}
    return {"missing": without, "unexpected": dict(good, **{unexpected: np.zeros((2, 2))}),
            "resized": dict(good, **{resized: np.zeros(wrong_shape)}),
            "column": dict(good, **{missing: np.asarray(good[missing]).reshape(np.shape(good[missing])[::-1])}),
            "both": dict(without, **{resized: np.zeros(wrong_shape)}),
            "partial": dict(without, **{extra: np.zeros(1)})}


def partial_load_problem(holders, before, good, missing):
    """After load_state_dict(strict=False) without `missing`: present names loaded, the missing one kept."""
    for name, values in holders:
        want = before[name] if name == missing else good[name]
        if not np.array_equal(values, want):
            return failed(f"load_state_dict(strict=False): {name} is wrong afterwards: the names that are "
                          "present are loaded, the missing ones keep their values.")
    return None


STRICT_FALSE_HINT = "\n  With strict=False, missing and unexpected names are allowed."
ERRORS_PASSED = "✔ load_state_dict refuses missing names, unexpected names and wrong shapes, and changes nothing then"


def check_load_errors(ns):
    with course_methods(ns, ("Module", "named_state"), ("Module", "state_dict")):
        model = small_net(ns, seed=0)
        source = small_net(ns, seed=3)
        warm_up(ns, source)                     # its running statistics differ from the model's too
        good = source.state_dict()
        before = {name: np.array(values_of(h)) for name, h in net_state(model)}
        shapes = {name: value.shape for name, value in before.items()}
        scenario = ("modules.3.bias", "modules.9.weight", "modules.3.weight", (6, 5), "extra")
        states = load_error_states(good, *scenario)
        for label, strict, which, kind, words in load_error_cases(shapes, *scenario[:4]):
            label = f"load_state_dict with {label}"
            error = raised_by(lambda: model.load_state_dict(states[which], strict=strict))
            problem = refusal_problem(label, kind, words, error and type(error).__name__,
                                      isinstance(error, {"KeyError": KeyError, "ValueError": ValueError}[kind]),
                                      str(error), refusal_hint(which, shapes, scenario[0])) \
                or changed_problem(label, [(n, values_of(h)) for n, h in net_state(model)],
                                   before)
            if problem:
                return problem
        _, error = attempt("Module.load_state_dict", model.load_state_dict, states["partial"], strict=False)
        if error:
            error.message += STRICT_FALSE_HINT
            return error
        problem = partial_load_problem([(n, values_of(h)) for n, h in net_state(model)],
                                       before, good, scenario[0])
    return problem or passed(ERRORS_PASSED)


# ── 8.3 the optimizer ─────────────────────────────────────────────────────────────────────────

# key: (class, the settings the cell builds it with, the label)
OPTIMIZER_SPECS = {
    "adam": ("Adam", {"lr": 0.01}, "Adam(lr=0.01)"),
    "sgd": ("SGD", {"lr": 0.1, "momentum": 0.9}, "SGD(lr=0.1, momentum=0.9)"),
    "adam_decay": ("Adam", {"lr": 0.02, "weight_decay": 0.01}, "Adam(lr=0.02, weight_decay=0.01)"),
    "sgd_off": ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.05},
                "SGD(lr=0.1, momentum=0.9, weight_decay=0.05), momentum and weight decay turned off since"),
}
# settings a schedule turned off (to 0) during the run, by key: the fresh optimizer starts with them on, so a
# state dict or a load that takes a 0 for "no value" (a truth test of the number) leaves them on
OPTIMIZER_ZEROED = {"sgd_off": ("momentum", "weight_decay")}
# OPTIMIZER_DEFAULTS (ch08_persistence_facts): every number each keeps
OPTIMIZERS = {key: (label, lambda ns, ps, cls=cls, settings=settings: ns[cls](ps, **settings))
              for key, (cls, settings, label) in OPTIMIZER_SPECS.items()}
FROZEN = 2          # parameters without a gradient at the first step: the optimizer's dicts then list them last
CHANGED_SETTINGS = {"lr": 0.25, "beta1": 0.9, "beta2": 0.995, "eps": 1e4, "momentum": 0.9}   # factors; 0 → 0.001


def change_settings(optimizer, kind, zeroed=()):
    """Every setting changed from what the optimizer was made with, as a schedule changes lr (or momentum) during
    a run: a fresh optimizer made by the same code starts with the old ones, so each must come from the state.
    The settings `zeroed` are turned off, to 0."""
    for name in OPTIMIZER_DEFAULTS[kind]:
        value = getattr(optimizer, name)
        changed = float(value * CHANGED_SETTINGS.get(name, 2.0)) if value else 0.001
        setattr(optimizer, name, 0.0 if name in zeroed else changed)


def number_kind(name):
    """The Python type a restored number must have: t counts steps (an int); the settings are floats."""
    return "int" if name == "t" else "float"


def dict_orders(optimizer, kind):
    """{table: the positions in optimizer.params of the parameters its per-parameter dict holds, in the dict's
    order} (the order each parameter first got its state in)."""
    position = {id(p): i for i, p in enumerate(optimizer.params)}
    return {table: [position.get(key, -1) for key in getattr(optimizer, table)] for table in OPTIMIZER_ARRAYS[kind]}


def optimizer_positions_problem(label, got, want, orders):
    """got: {key: array} of the returned state dict; want: the course's state dict; orders: `dict_orders`. Fails
    only on the exact evidence that per-parameter arrays were numbered by the dict's order, not by position."""
    for table, order in orders.items():
        if order == sorted(order):
            continue
        keys = [f"{table}.{i}" for i in range(len(order))]
        if not all(k in got and f"{table}.{p}" in want for k, p in zip(keys, order)):
            continue
        same = [np.array_equal(got[k], want[f"{table}.{p}"]) for k, p in zip(keys, order)]
        wrong = next((i for i, p in enumerate(order) if i != p), None)
        if all(same) and wrong is not None:
            return failed(f"{label}.state_dict()[{keys[wrong]!r}] holds the {table} of the parameter at position "
                          f"{order[wrong]} of self.params, not of position {wrong}: the {table} dict holds the "
                          f"parameters in the order {order}.\n"
                          "  Hint: per-parameter entries are numbered by the parameter's position in self.params. A "
                          "dict keyed by id(p) lists them in the order each first got its state, which is another order "
                          "when some parameters get their first gradient later (a layer frozen at first).")
    return None


def optimizer_number_types_problem(label, numbers):
    """numbers: {name: number_report of the restored optimizer's attribute} for every number it keeps."""
    for name, got in numbers.items():
        want = number_kind(name)
        if not got[want]:
            return failed(f"{label}: after load_state_dict(state), the new optimizer's {name} is a {got['type_name']} "
                          f"({got['text']}), not a Python {want}.\n"
                          "  Hint: a number goes back into its attribute as the Python number it was (an int for t, a "
                          "float for lr and the other settings), not as a NumPy array or a number of another type: "
                          "the next state_dict() must find it again as the number it saves.")
    return None


CONTINUE_HINT = ("  Hint: save every per-parameter dict (velocity, m, v) by the parameter's position and every number "
                 "(t, lr and the other settings); loading files each array under the id of the parameter at that position in the new "
                 "optimizer's params, since ids differ from object to object.")


def optimizer_state_problem(label, entries, ids):
    """The returned state dict's form: a dict of NumPy arrays, keyed '<attribute>.<position>', never by id(p).
    entries: `state_entries` of it; ids: str(id(p)) of the optimizer's parameters."""
    if isinstance(entries, str) or any(value is None for _, _, value in entries):
        types = {key: type_name for key, type_name, _ in entries} if not isinstance(entries, str) else entries
        return failed(f"{label}.state_dict() must be a dict of NumPy arrays (a number too, as a 0-d array); got {types}.")
    keys = [key for key, _, _ in entries]
    bad = [k for k in keys if not k.replace(".", "").replace("_", "").isalnum()]
    if bad or any(i in k for k in keys for i in ids):
        return failed(f"{label}.state_dict() keys {sorted(keys)[:6]}: per-parameter entries are named "
                      "'<attribute>.<position in self.params>', never by id(p), which changes in every process.")
    return None


def changed_entries(before, after):
    """The keys of `before` whose arrays `after` no longer holds, sorted."""
    return sorted(k for k, v in before.items() if not np.array_equal(after.get(k), v))


def optimizer_snapshot_problem(label, before, after):
    """before/after: the returned arrays before and after the original optimizer took more steps."""
    if changed_entries(before, after):
        return failed(f"{label}.state_dict() is not a snapshot: more training steps changed it. Copy the arrays.")
    return None


def optimizer_continues_problem(label, name, difference):
    return failed(f"{label}: after state_dict() / load_state_dict() into a new optimizer, two more steps "
                  f"differ from the original's: {name} differs by {difference:.3g}.\n" + CONTINUE_HINT)


def optimizer_restored_problem(label, loaded, want):
    """The judge's form of the continuation: the new optimizer's state (the course's walk of it) must be the
    state saved, every number and every per-parameter array, or its next steps differ from the original's."""
    for key, value in want.items():
        got = loaded.get(key)
        if got is None or got.dtype.kind not in "biuf" or got.shape != value.shape \
                or not np.allclose(got, value, rtol=1e-6, atol=1e-7 if value.ndim else 0):
            found = "missing" if got is None else shown(got)
            zero = ("  A setting of 0 is a value like any other: saved and loaded back whatever it is (a truth test "
                    "of the number takes 0 for no value).\n") if value.ndim == 0 and float(value) == 0 else ""
            return failed(f"{label}: after state_dict() / load_state_dict() into a new optimizer, its {key} is {found}, "
                          f"not the {shown(value)} saved, so its next steps differ from the original's.\n" + zero
                          + CONTINUE_HINT)
    return None


def shown(array):
    """The first values of an array, six significant digits each (eps is 1e-8)."""
    if array.dtype.kind not in "biuf":
        return repr(array)[:60]
    return "[" + ", ".join(f"{float(x):.6g}" for x in array.ravel()[:3]) + "]"


def optimizer_load_kept_problem(label, loaded, after_steps):
    """loaded: the state dict as load_state_dict was given it; after_steps: that dict once the optimizer it was
    loaded into took steps. An optimizer that kept the dict's arrays updates them in place (Adam's moments do)."""
    changed = changed_entries(loaded, after_steps)
    if changed:
        return failed(f"{label}: after load_state_dict(state), the restored optimizer's steps changed the state dict "
                      f"itself ({', '.join(changed[:3])}): the optimizer kept the dict's arrays as its own, so a "
                      "checkpoint held in memory drifts with training and cannot be loaded again.\n"
                      "  Hint: loading copies each array, as state_dict() does: the dict stays the caller's.")
    return None


def optimizer_passed(optimizers):
    return passed(f"✔ {', '.join(OPTIMIZERS[k][0] for k in optimizers)} continue exactly after state_dict() / load_state_dict()")


def check_optimizer_state(ns, optimizers=("adam",)):
    """A saved and restored optimizer continues exactly like the original."""
    for key in optimizers:
        label, build = OPTIMIZERS[key]
        make = lambda ps, build=build: build(ns, ps)  # noqa: E731
        with course_methods(ns, ("Module", "named_state"), ("Module", "state_dict"), ("Module", "load_state_dict")):
            model = small_net(ns, seed=0)
            optimizer = make(model.parameters())
            train(ns, model, optimizer, batches(ns, 1, seed=3), frozen=FROZEN)   # the dicts' order is not params'
            train(ns, model, optimizer, batches(ns, 3, seed=1))
            kind = type(optimizer).__name__
            change_settings(optimizer, kind, OPTIMIZER_ZEROED.get(key, ()))    # as a schedule would
            saved_model = model.state_dict()
            want = course_optimizer_state(optimizer)
            orders = dict_orders(optimizer, kind)
        state, error = attempt(f"{label}.state_dict", optimizer.state_dict)
        if error:
            return error
        problem = optimizer_state_problem(label, state_entries(state), [str(id(p)) for p in optimizer.params]) \
            or optimizer_positions_problem(label, state, want, orders)
        if problem:
            return problem
        snapshot = {k: v.copy() for k, v in state.items()}
        with course_methods(ns, ("Module", "named_state"), ("Module", "state_dict"), ("Module", "load_state_dict")):
            train(ns, model, optimizer, batches(ns, 2, seed=2))            # the original goes on
            clone = small_net(ns, seed=9)
            clone.load_state_dict(saved_model)
            fresh = make(clone.parameters())
            problem = optimizer_snapshot_problem(label, snapshot, state)
            if problem:
                return problem
            _, error = attempt(f"{label}.load_state_dict", fresh.load_state_dict, state)
            if error:
                return error
            problem = optimizer_restored_problem(label, course_optimizer_state(fresh), want) \
                or optimizer_number_types_problem(label, {name: number_report(getattr(fresh, name, None))
                                                          for name in OPTIMIZER_NUMBERS[kind]})
            if problem:
                return problem
            train(ns, clone, fresh, batches(ns, 2, seed=2))
            for (name, a), (_, b) in zip(net_state(model),
                                         net_state(clone)):
                if not np.allclose(values_of(a), values_of(b), rtol=1e-6, atol=1e-7):
                    return optimizer_continues_problem(label, name, float(np.abs(values_of(a) - values_of(b)).max()))
        problem = optimizer_load_kept_problem(label, snapshot, state)     # the dict as loaded: still the snapshot
        if problem:
            return problem
    return optimizer_passed(optimizers)


# ── 8.4 files ─────────────────────────────────────────────────────────────────────────────────

def archive_names(path):
    """The entry names of the archive at `path`; None when there is no file, the error when NumPy cannot read it."""
    try:
        if os.path.exists(path):
            with np.load(path, allow_pickle=False) as archive:
                return list(archive.files)
    except Exception as error:  # noqa: BLE001
        return error
    return None


def check_checkpoint_round_trip(ns):
    save, load = ns["save_checkpoint"], ns["load_checkpoint"]
    with tempfile.TemporaryDirectory() as folder, course_methods(
            ns, ("Module", "named_state"), ("Module", "state_dict"), ("Module", "load_state_dict"),
            ("Optimizer", "state_dict"), ("Optimizer", "load_state_dict")):
        model = small_net(ns, seed=0)
        optimizer = ns["Adam"](model.parameters(), lr=0.01)
        train(ns, model, optimizer, batches(ns, 2))
        path = os.path.join(folder, "run.ckpt")
        _, error = attempt("save_checkpoint.call", save, path, model, optimizer)
        if error:
            return error
        names = archive_names(path)
        want = checkpoint_entries(model.state_dict(), optimizer.state_dict())
        problem = checkpoint_file_problem("run.ckpt", os.path.exists(path), os.listdir(folder), names, want)
        if problem:
            return problem
        clone = small_net(ns, seed=4)
        fresh = ns["Adam"](clone.parameters(), lr=0.5)
        _, error = attempt("load_checkpoint.call", load, path, clone, fresh)
        if error:
            return error
        problem = checkpoint_loaded_problem(clone.state_dict(), model.state_dict(), fresh.state_dict(),
                                            optimizer.state_dict())
        if problem:
            return problem
        _, error = attempt("load_checkpoint.call without an optimizer", load, path, small_net(ns, seed=6))
        if error:
            return error
        alone = os.path.join(folder, MODEL_ONLY)            # a checkpoint of the model alone (optimizer=None)
        _, error = attempt("save_checkpoint.call without an optimizer", save, alone, model)
        if error:
            error.message += MODEL_ONLY_HINT
            return error
        names = archive_names(alone)
        problem = checkpoint_file_problem(MODEL_ONLY, os.path.exists(alone), os.listdir(folder), names,
                                          checkpoint_entries(model.state_dict(), {}), MODEL_ONLY_WHAT)
        if problem:
            return problem
        clone = small_net(ns, seed=8)
        _, error = attempt("load_checkpoint.call on a checkpoint without an optimizer", load, alone, clone)
        if error:
            return error
        problem = checkpoint_loaded_problem(clone.state_dict(), model.state_dict(), {}, {})
        if problem:
            return problem
    return passed(ROUND_TRIP_PASSED)


MODEL_ONLY = "model.ckpt"
MODEL_ONLY_WHAT = "the entries of a checkpoint saved without an optimizer"
MODEL_ONLY_HINT = ("\n  Hint: the optimizer is optional (optimizer=None): a checkpoint of a model alone holds the mark and "
                   "the model's entries, and no optimizer entries.")


ROUND_TRIP_PASSED = "✔ save_checkpoint writes one .npz file at the given path; load_checkpoint restores model and optimizer"


def checkpoint_entries(model_state, optimizer_state):
    """The entry names of a checkpoint file of these state dicts."""
    return {CHECKPOINT_MARK} | {f"model.{k}" for k in model_state} | {f"optimizer.{k}" for k in optimizer_state}


def checkpoint_file_problem(name, exists, written, names, want, what="the checkpoint's entries"):
    """The file save_checkpoint wrote: at `name` exactly (written: the folder's files), an .npz archive readable
    without pickles (names: its entries, or the exception or text np.load raised), with the entries `want`."""
    if not exists:
        added = f"{name}.npz" in written
        return failed(f"save_checkpoint({name!r}, ...) wrote {written}, not {name}.\n"
                      + ("  Hint: NumPy's savez adds .npz to a file name that does not end in it; given a file "
                         "already open, it writes there and the name stays the one asked for." if added else
                         "  Hint: save_checkpoint writes one file, at exactly the path it is given."))
    if not isinstance(names, list):
        return failed(f"the file save_checkpoint wrote is not a NumPy .npz archive readable with allow_pickle=False: {names}")
    names = set(names)
    if names != want:
        return failed(f"{what} are {sorted(names)[:8]}...; expected {sorted(want)[:8]}... "
                      f"(missing {sorted(want - names)[:4]}, extra {sorted(names - want)[:4]}).")
    return None


def checkpoint_loaded_problem(model_state, saved_model, optimizer_state, saved_optimizer):
    """After load_checkpoint, the new model's and optimizer's state (the course's walks) against what was saved."""
    for name, value in saved_model.items():
        if name not in model_state or not np.array_equal(model_state[name], value):
            return failed(f"after load_checkpoint, the model's {name} differs from the one saved.")
    for name, value in saved_optimizer.items():
        if name not in optimizer_state or not np.array_equal(optimizer_state[name], value):
            return failed(f"after load_checkpoint, the optimizer's {name} differs from the one saved.")
    return None


def pickled_checkpoint(file, state, entry):
    """Write to `file` a checkpoint of the model state `state`, mark and all, whose `entry` is an object array:
    NumPy reads that entry only by unpickling it. Harmless: it holds plain Python floats, so a loader that
    allows pickle reads the whole file and loads it, which is what shows."""
    arrays = {CHECKPOINT_MARK: np.array(1)}
    arrays.update({f"model.{name}": np.asarray(value) for name, value in state.items()})
    arrays[f"model.{entry}"] = arrays[f"model.{entry}"].astype(object)
    np.savez(file, **arrays)                             # np.savez pickles object arrays; loading one needs pickle


# the checkpoint of another model: small_net's entries, but its last Linear at position 4 (say, after a Dropout)
OTHER_MODEL_RENAMES = {"modules.3.weight": "modules.4.weight", "modules.3.bias": "modules.4.bias"}


def other_model_checkpoint(file, state):
    """Write to `file` a real checkpoint, mark and all, of a model like small_net whose last layer sits at another
    position: its first layers fit, the last one's names do not. A strict load refuses it; a lenient one half-loads."""
    arrays = {CHECKPOINT_MARK: np.array(1)}
    arrays.update({f"model.{OTHER_MODEL_RENAMES.get(name, name)}": np.asarray(value) for name, value in state.items()})
    np.savez(file, **arrays)


def unmarked_checkpoint(file, state):
    """Write to `file` everything a checkpoint of the model state `state` holds but the mark: its entries fit the
    model, so only the missing mark tells it from a checkpoint."""
    np.savez(file, **{f"model.{name}": np.asarray(value) for name, value in state.items()})


def not_checkpoints(folder, kinds, state):
    """(kind, path) of files that are not checkpoints (of this model), of the `kinds` asked for; `state`: the model
    state a "pickled" or "other_model" file holds."""
    files = []

    def write(name, data):
        path = os.path.join(folder, name)
        Path(path).write_bytes(data)
        return path

    contents = {"text": b"epoch 3: loss 0.12\n", "empty": b"", "random": np.random.default_rng(0).bytes(300),
                "zip": b"PK\x03\x04" + b"\x00" * 40}
    for kind in NOT_CHECKPOINTS:
        if kind not in kinds:
            continue
        path = os.path.join(folder, NOT_CHECKPOINTS[kind][1])
        if kind == "npy":
            np.save(path, np.arange(4.0))
        elif kind == "npz":
            np.savez(path, weight=np.ones(3))             # the name ends in .npz: np.savez keeps it
        elif kind == "pickled":
            with open(path, "wb") as file:          # not the solution's own line: the published package has none
                pickled_checkpoint(file, state, "modules.1.weight")
        elif kind == "other_model":
            with open(path, "wb") as file:
                other_model_checkpoint(file, state)
        elif kind == "unmarked":
            with open(path, "wb") as file:
                unmarked_checkpoint(file, state)
        else:
            path = write(NOT_CHECKPOINTS[kind][1], contents[kind])
        files.append((kind, path))
    return files


def check_checkpoint_refuses(ns, kinds=("text", "npz")):
    load = ns["load_checkpoint"]
    with tempfile.TemporaryDirectory() as folder, course_methods(
            ns, ("Module", "named_state"), ("Module", "state_dict"), ("Module", "load_state_dict"),
            ("Optimizer", "state_dict"), ("Optimizer", "load_state_dict")):
        model = small_net(ns, seed=0)
        before = model.state_dict()
        files = not_checkpoints(folder, kinds, small_net(ns, seed=3).state_dict())
        for kind, path in files:
            error = raised_by(lambda: load(path, model))
            after = model.state_dict()
            changed = any(not np.array_equal(after[k], v) for k, v in before.items())
            problem = refused_file_problem(kind, os.path.basename(path), error and type(error).__name__,
                                           isinstance(error, ValueError), str(error),
                                           isinstance(error, KeyError), changed) \
                or (changed and failed(f"load_checkpoint refused {NOT_CHECKPOINTS[kind][0]} but changed the model first."))
            if problem:
                return problem
    return refuses_passed([kind for kind, _ in files])


def refused_file_problem(kind, name, error_type, is_value_error, text, is_key_error=False, changed=False):
    """load_checkpoint on a file of `kind` (NOT_CHECKPOINTS), named `name`, must raise a ValueError naming it; a
    checkpoint of another model, load_state_dict's KeyError or ValueError. error_type None: it returned (`changed`:
    and the model changed). Pickle is named only on evidence that the file was unpickled."""
    description = NOT_CHECKPOINTS[kind][0]
    if error_type is None:
        return failed(accepted_file_message(kind, name, changed))
    if kind == "other_model":
        return None if is_key_error or is_value_error else failed(
            f"load_checkpoint on {description} ({name}) raised {error_type}: {text}\n"
            "  Expected the model's load_state_dict to refuse it, with its KeyError for names that do not fit.")
    if not is_value_error:
        return failed(f"load_checkpoint on {description} ({name}) raised {error_type}: {text}\n"
                      "  Expected a ValueError that says the file is not a babygrad checkpoint. "
                      + (UNPICKLED_HINT if error_type == "UnpicklingError" else CATCH_HINT))
    if name not in text:
        read_late = ("\n  Hint: this file opens as an archive with the mark; NumPy refuses when an entry is read, "
                     "so reading the entries can fail too.") if kind == "pickled" else ""
        return failed(f"load_checkpoint on {description} raised ValueError({text!r}): "
                      "say which file it was (include the path in the message)." + read_late)
    return None


CATCH_HINT = ("Hint: np.load raises several kinds of error on a file it cannot read (OSError, EOFError and zipfile's "
              "BadZipFile among them, besides ValueError): each is a file that is not a checkpoint, refused with a "
              "ValueError that names it; so is a file that loads as anything but an .npz archive with the mark.")
# an UnpicklingError comes only from reading the file as a pickle, which np.load does only when pickle is allowed
UNPICKLED_HINT = (f"NumPy tried to read the file as a pickle, so it was loaded with pickle allowed.\n  Hint: {PICKLE_RULE}; "
                  "loaded without it, NumPy refuses such a file with a ValueError.")


def accepted_file_message(kind, name, changed=False):
    """What load_checkpoint did wrong when it returned on a file of `kind` that is not a checkpoint (of this model);
    `changed`: the model changed. Half-loading is named only when the model changed."""
    description = NOT_CHECKPOINTS[kind][0]
    if kind == "other_model":
        renamed = ", ".join(f"{old} is {new}" for old, new in OTHER_MODEL_RENAMES.items())
        return (f"load_checkpoint accepted {description} ({name}) without an error: the file has the {CHECKPOINT_MARK} "
                f"entry, but its model's last layer sits elsewhere ({renamed}), so two of the model's entries are "
                "missing from it and two of its entries are not the model's. It must be refused."
                + ("\n  It loaded the entries that fit and kept the others: the model is now half one network, half "
                   "another, and nothing says so.\n  Hint: section 8.4: load the model's entries strictly, as "
                   "load_state_dict does by default, so that its KeyError reaches the caller." if changed else ""))
    if kind == "pickled":
        return (f"load_checkpoint accepted {description} ({name}): the file has the {CHECKPOINT_MARK} entry, but "
                "one of its entries is an object array, which NumPy reads only by unpickling it.\n"
                f"  Hint: {PICKLE_RULE}: a file NumPy cannot read without pickle is not a checkpoint.")
    if kind == "unmarked":
        return (f"load_checkpoint accepted {description} ({name}): its entries fit the model, but a file without the "
                f"{CHECKPOINT_MARK} entry is not a babygrad checkpoint, and must be refused."
                f"\n  Hint: the mark is what says a file is a checkpoint (section 8.4); entries that happen to fit say "
                "nothing about where a file comes from.")
    return f"load_checkpoint accepted {description} ({name}): a file without the {CHECKPOINT_MARK} entry must be refused."


def refuses_passed(kinds):
    """The pass message for the refused `kinds`: files that are not checkpoints, then another model's checkpoint."""
    files, parts = [NOT_CHECKPOINTS[kind][0] for kind in kinds if kind != "other_model"], []
    if files:
        *others, last = files
        listed = f"{', '.join(others)} and {last}" if others else last
        parts.append(f"{listed}, each with a ValueError that names the file")
    if "other_model" in kinds:
        parts.append("a checkpoint of another model, by load_state_dict's error")
    return passed(f"✔ load_checkpoint refuses {'; and '.join(parts)}")


# ── 8.5 resuming ──────────────────────────────────────────────────────────────────────────────

@register("resume_training")
def check_resume_training(ns, optimizer="adam"):
    """Train, checkpoint, train on; a new model and optimizer loaded from the checkpoint must match bit for bit."""
    label, build = OPTIMIZERS[optimizer]
    save, load = ns["save_checkpoint"], ns["load_checkpoint"]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "resume.ckpt")
        model = small_net(ns, seed=0)
        optimizer = build(ns, model.parameters())
        first, second = batches(ns, 3, seed=10), batches(ns, 4, seed=11)
        try:
            run_quietly(train, ns, model, optimizer, first)
            run_quietly(save, path, model, optimizer)
            run_quietly(train, ns, model, optimizer, second)
            model.eval()
            x = second[0][0]
            original_out = np.array(model(x).data)
            clone = small_net(ns, seed=42)
            resumed = build(ns, clone.parameters())
            run_quietly(load, path, clone, resumed)
            run_quietly(train, ns, clone, resumed, second)
            clone.eval()
            resumed_out = np.array(clone(x).data)
            ours = both_states(run_quietly(model.state_dict), run_quietly(optimizer.state_dict))
            theirs = both_states(run_quietly(clone.state_dict), run_quietly(resumed.state_dict))
        except Exception as error:  # noqa: BLE001
            return failed("resuming from a checkpoint: " + describe_exception("training", "step", error))
    return resume_verdict(label, ours, theirs, original_out, resumed_out)


def both_states(model_state, optimizer_state):
    """One run's state, by name: the model's state_dict(), then the optimizer's, its keys as `optimizer.<key>`."""
    return {**model_state, **{f"optimizer.{key}": value for key, value in optimizer_state.items()}}


RESUME_HINT = ("  Hint: every piece of state must round-trip: parameters, BatchNorm's running statistics, the "
               "optimizer's running averages, its step count and its settings, each put back as what it was.")


def resume_verdict(label, ours, theirs, original_out, resumed_out):
    """ours, theirs: {name: array} of the uninterrupted and the resumed run's state (both_states), after the same
    steps; by name, since a loaded optimizer may list its per-parameter entries in another order. The eval-mode
    predictions. What is missing or misshapen is told before values that differ: it is usually their cause."""
    names = dict.fromkeys([*ours, *theirs])
    for name in names:
        if name not in ours or name not in theirs:
            return failed(f"resumed training differs from uninterrupted training: after 4 more {label} steps, "
                          f"{name} is in the {'uninterrupted' if name in ours else 'resumed'} run's state dict only "
                          f"(state_dict() after the run).\n" + RESUME_HINT)
        if np.shape(ours[name]) != np.shape(theirs[name]):
            return failed(f"resumed training differs from uninterrupted training: {name} has shape "
                          f"{np.shape(theirs[name])} after resuming, {np.shape(ours[name])} without.\n" + RESUME_HINT)
    for name in names:
        a, b = np.asarray(ours[name]), np.asarray(theirs[name])
        if not np.array_equal(a, b):
            return failed(f"resumed training differs from uninterrupted training: {name} is off by "
                          f"{float(np.abs(a - b).max()):.3g} after 4 more {label} steps.\n" + RESUME_HINT)
    if not np.array_equal(original_out, resumed_out):
        return failed("resumed training gives different predictions in eval() mode: are the running statistics restored?")
    return passed(f"✔ training with {label} resumed from a checkpoint matches uninterrupted training bit for bit")


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──


@register("load_state_dict")
def load_state_dict_check(namespace, kind):
    """Module.load_state_dict: `values` (copied in place) or `errors` (missing, unexpected, shape; all or nothing)."""
    check = {"values": check_load_values, "errors": check_load_errors}[kind]
    return check(namespace)


@register("optimizer_state")
def optimizer_state_check(namespace, *optimizers):
    """Optimizer.state_dict / load_state_dict: `adam`, `sgd` (momentum), `adam_decay` continue exactly."""
    return check_optimizer_state(namespace, optimizers or ("adam",))


@register("checkpoint")
def checkpoint_check(namespace, kind, *files):
    """save_checkpoint / load_checkpoint: `round_trip`, or `refuses` files that are not checkpoints
    (text, empty, random, zip, npy, npz, pickled)."""
    if kind == "round_trip":
        return check_checkpoint_round_trip(namespace)
    return check_checkpoint_refuses(namespace, files or ("text", "npz"))
