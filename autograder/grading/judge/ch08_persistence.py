"""Judge-side checks of chapter 8: state names, snapshots, loading and refusing, optimizer state, checkpoint files,
resumed training. The kernel (`in_kernel/ch08_persistence.py`) builds the chapter's stand-in models, gives every
holder the judge's secret values (and the optimizers secret state), calls the one student method under test with
the course's versions of the others swapped in, and reports names, arrays, exception types and messages.

Every array the student's code returns or leaves behind is compared with the judge's secret values; the
verdicts and messages are `autograder/student/checks/ch08_persistence.py`'s. Taken on the kernel's word (they can only
fail a cell): that a holder is the model's own object, that the Parameters are the same objects after loading,
whether an exception is a KeyError / ValueError, the Python types of a restored optimizer's numbers, and that the
resumed run really went through the checkpoint.
"""
import io

import numpy as np

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, decode_array, returned
from autograder.student.checks import ch08_persistence as rules
from autograder.student.checks.ch08_persistence_facts import net_shapes
from autograder.student.verdict import failed, passed
from autograder.grading.judge.registry import judges

OWN_RTOL, OWN_ATOL = 1e-5, 1e-5     # float32 training (the kernel) against float64 (the judge) over 7 steps: ~3e-7 apart
FLOAT32_ROUNDING = np.finfo(np.float32).eps / 2
NOISY_RUNS = 8
# Some elements of the trained net are not pinned down by float32 arithmetic. BatchNorm removes the first Linear's
# bias from the loss, so its gradient is rounding noise, which Adam divides by its own size: the bias (and
# running_mean, a mean of x @ W + b) takes steps of up to lr in a direction no float64 run predicts. Now and then a
# weight's gradient cancels to within rounding at some step too, or a ReLU input sits within rounding of 0. The
# judge finds them by training NOISY_RUNS more times with every intermediate array perturbed by float32's rounding,
# and compares only the elements that all stay within a tenth of the tolerance (over 40,000 recorded kernel runs,
# a correct kernel's worst compared element was 0.14 of the tolerance: docs/grading-correctness.md).


def secret(rng, shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(np.float32)


def net_sizes(rng):
    return [int(rng.integers(2, 6)), int(rng.integers(3, 7)), int(rng.integers(2, 5))]


def net_values(rng, sizes):
    """Secret values for every holder of small_net (running_var positive), by name in the course's order."""
    return {name: secret(rng, shape, *((0.5, 2.0) if name.endswith("running_var") else ()))
            for name, shape in net_shapes(sizes).items()}


def arrays(reply, key, count):
    items = reply.get(key)
    if not isinstance(items, list) or len(items) != count:
        raise ProbeFailure(f"the reply's {key!r} does not hold {count} arrays")
    return [decode_array(a) for a in items]


def entries(report):
    """A worker's state_report as `rules.state_entries` gives it: a type name, or [(key, type name, array or None)]."""
    if not isinstance(report, dict):
        raise ProbeFailure("a state dict report is malformed")
    items = report.get("entries")
    if items is None:
        return str(report.get("type_name"))[:100]
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ProbeFailure("a state dict report's entries are malformed")
    return [(str(i.get("key"))[:200], str(i.get("type_name"))[:100],
             decode_array(i["value"]) if i.get("ndarray") is True and i.get("value") is not None else None)
            for i in items]


def raised(data):
    """(error type, is KeyError, is ValueError, message, the Returned) of a worker's `raised`; None: it returned."""
    if data is None:
        return None
    outcome = returned(data)
    if not outcome.failed:
        raise ProbeFailure("a raised exception in the reply is malformed")
    return outcome, data.get("key_error") is True, data.get("value_error") is True


def student_error(label, method, data):
    return failed(describe_error(label, method, returned(data)))


# ── 8.1 ──

@judges("named_state")
def named_state(rng, variant="flat", seed=0):
    """named_state() of the tree of stand-in modules, its holders of secret shapes and values."""
    want = rules.TREE_NAMES[variant]
    values = [secret(rng, tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 3))))) for _ in want]
    reply = yield {"kind": "persist_named_state", "variant": variant, "values": values}
    if "error" in reply:
        return student_error("Module", "named_state", reply["error"])
    pairs = reply.get("pairs")
    if pairs is None:
        return rules.named_state_verdict({"type_name": str(reply.get("type_name"))[:100],
                                          "text": str(reply.get("text"))[:120]}, want)
    if not isinstance(pairs, list) or not all(isinstance(p, dict) for p in pairs):
        raise ProbeFailure("the reply's pairs are malformed")
    got = []
    for i, pair in enumerate(pairs):
        value = returned(pair.get("value"))
        own = (type(pair.get("own")) is int and pair["own"] == i and i < len(values) and value.kind in ("array", "tensor")
               and value.value.shape == values[i].shape and np.array_equal(value.value, values[i]))
        got.append((str(pair.get("name"))[:200], str(pair.get("type_name"))[:100], own))
    return rules.named_state_verdict(got, want)


@judges("state_dict")
def state_dict(rng, seed=0):
    """state_dict() of small_net holding secret values, and the same dict after every holder changed in place."""
    sizes = net_sizes(rng)
    values = net_values(rng, sizes)
    reply = yield {"kind": "persist_state_dict", "sizes": sizes, "values": list(values.values())}
    if "error" in reply:
        return student_error("Module", "state_dict", reply["error"])
    got, after = entries(reply.get("state")), entries(reply.get("after"))
    before = {} if isinstance(got, str) else {k: v for k, _, v in got if v is not None}
    after = {} if isinstance(after, str) else {k: v for k, _, v in after if v is not None}
    return rules.state_dict_verdict(got, values, before, after)


# ── 8.2 ──

@judges("load_state_dict")
def load_state_dict(rng, kind, seed=0):
    return (yield from (load_values(rng) if kind == "values" else load_errors(rng)))


def load_values(rng):
    """load_state_dict(a secret state) into small_net holding other secret values."""
    sizes = net_sizes(rng)
    before, state = net_values(rng, sizes), net_values(rng, sizes)
    reply = yield {"kind": "persist_load_values", "sizes": sizes, "values": list(before.values()), "state": state}
    if "error" in reply:
        return student_error("Module", "load_state_dict", reply["error"])
    shared = reply.get("shared")
    return rules.load_values_verdict(arrays(reply, "holders", len(state)), state, reply.get("same") is True,
                                     str(shared)[:100] if shared is not None else None)


def load_errors(rng):
    """Secret ill-fitting state dicts (which name is missing, which is extra, which shape is wrong) must be refused
    with the right exception naming them, leaving the model as it was; strict=False loads what is there."""
    sizes = net_sizes(rng)
    shapes = net_shapes(sizes)
    before, good = net_values(rng, sizes), net_values(rng, sizes)
    # the last weight and bias, as in the kernel's check: a load that checks while it copies is half done by then
    resized, missing = "modules.3.weight", "modules.3.bias"
    rows, cols = shapes[resized]
    scenario = (missing, f"modules.{int(rng.integers(4, 10))}.{rng.choice(['weight', 'bias', 'scale'])}",
                resized, (rows, cols + int(rng.integers(1, 4))), f"extra_{int(rng.integers(10, 1000))}")
    states = rules.load_error_states(good, *scenario)
    cases = rules.load_error_cases(shapes, *scenario[:4])
    requests = [{"state": states[which], "strict": strict} for _, strict, which, _, _ in cases]
    reply = yield {"kind": "persist_load_errors", "sizes": sizes, "values": list(before.values()),
                   "cases": requests + [{"state": states["partial"], "strict": False}]}
    if "error" in reply:
        return student_error("Module", "__init__", reply["error"])
    results = reply.get("cases")
    if not isinstance(results, list) or len(results) != len(cases) + 1 or not all(isinstance(r, dict) for r in results):
        raise ProbeFailure(f"the reply does not hold {len(cases) + 1} load results")
    for (label, _, which, kind, words), result in zip(cases, results):
        label = f"load_state_dict with {label}"
        error = raised(result.get("raised"))
        holders = list(zip(shapes, arrays(result, "holders", len(shapes))))
        hint = rules.refusal_hint(which, shapes, scenario[0])
        problem = (rules.refusal_problem(label, kind, words, None, False, "", hint) if error is None else
                   rules.refusal_problem(label, kind, words, error[0].error_type,
                                         error[1] if kind == "KeyError" else error[2], error[0].message, hint)) \
            or rules.changed_problem(label, holders, before)
        if problem:
            return problem
    error = raised(results[-1].get("raised"))
    if error:
        return failed(describe_error("Module", "load_state_dict", error[0]) + rules.STRICT_FALSE_HINT)
    holders = list(zip(shapes, arrays(results[-1], "holders", len(shapes))))
    return rules.partial_load_problem(holders, before, good, scenario[0]) or passed(rules.ERRORS_PASSED)


# ── 8.3 ──

# secret settings, each far from what the optimizer is made with (rules.OPTIMIZER_SPECS and the defaults)
SECRET_SETTINGS = {"lr": lambda rng, lr: lr * rng.uniform(0.1, 0.5), "beta1": lambda rng, _: rng.uniform(0.6, 0.85),
                   "beta2": lambda rng, _: rng.uniform(0.99, 0.998), "eps": lambda rng, _: 10 ** rng.uniform(-6, -4),
                   "momentum": lambda rng, _: rng.uniform(0.5, 0.85),
                   "weight_decay": lambda rng, _: rng.uniform(0.02, 0.05)}


def optimizer_secrets(rng, key, sizes):
    """The optimizer's class and settings, a secret state as the course names it (numbers as 0-d arrays), and the
    order in which the kernel puts the per-parameter arrays in: the positions, in a secret order."""
    cls, settings, label = rules.OPTIMIZER_SPECS[key]
    numbers = dict(rules.OPTIMIZER_DEFAULTS[cls], **settings)
    # every setting as the run has changed it since the optimizer was made (a schedule): the fresh optimizer, made
    # with the constructor's settings, holds others, so a load that skips a setting shows
    numbers = {name: float(f"{SECRET_SETTINGS[name](rng, value):.6g}") for name, value in numbers.items()}
    numbers.update({name: 0.0 for name in rules.OPTIMIZER_ZEROED.get(key, ())})     # turned off by the schedule
    state = {name: np.array(float(value)) for name, value in numbers.items()}
    if cls == "Adam":
        state["t"] = np.array(int(rng.integers(1, 40)))
    params = [shape for name, shape in net_shapes(sizes).items() if rules.is_parameter(name)]
    # the order each parameter first got its state in (some got their first gradient later): never params' order
    order = [int(i) for i in rng.permutation(len(params))]
    while order == sorted(order):
        order = [int(i) for i in rng.permutation(len(params))]
    for attribute in rules.OPTIMIZER_ARRAYS[cls]:
        low, high = (0.001, 0.1) if attribute == "v" else (-1.0, 1.0)
        arrays = {i: secret(rng, shape, low, high) for i, shape in enumerate(params)}
        state.update({f"{attribute}.{i}": arrays[i] for i in order})
    return {"class": cls, "settings": settings}, state, label, params, order


@judges("optimizer_state")
def optimizer_state(rng, *optimizers, seed=0):
    """For each optimizer: its state_dict() of a secret state, which more steps must not change, loaded by its
    load_state_dict into a fresh optimizer, which must then hold the secret state."""
    optimizers = optimizers or ("adam",)
    for key in optimizers:
        sizes = net_sizes(rng)
        spec, state, label, params, order = optimizer_secrets(rng, key, sizes)
        grads = [[secret(rng, shape) for shape in params] for _ in range(2)]
        reply = yield {"kind": "persist_optimizer", "sizes": sizes, "optimizer": spec, "state": state, "grads": grads}
        if "error" in reply:
            return student_error(label, "__init__", reply["error"])
        if "state_error" in reply:
            return student_error(label, "state_dict", reply["state_error"])
        got, ids = entries(reply.get("state")), reply.get("ids")
        if not isinstance(ids, list):
            raise ProbeFailure("the reply's parameter ids are missing")
        problem = rules.optimizer_state_problem(label, got, [str(i)[:40] for i in ids]) \
            or rules.optimizer_positions_problem(label, {k: v for k, _, v in got}, state,
                                                 {table: order for table in rules.OPTIMIZER_ARRAYS[spec["class"]]})
        if problem:
            return problem
        if "steps_error" in reply:
            return student_error(label, "step", reply["steps_error"])
        after = entries(reply.get("after"))
        problem = rules.optimizer_snapshot_problem(label, {k: v for k, _, v in got},
                                                   {} if isinstance(after, str) else {k: v for k, _, v in after})
        if problem:
            return problem
        if "load_error" in reply:
            return student_error(label, "load_state_dict", reply["load_error"])
        loaded = reply.get("loaded")
        if not isinstance(loaded, dict):
            raise ProbeFailure("the reply's loaded state is missing")
        problem = rules.optimizer_restored_problem(label, {str(k): decode_array(v) for k, v in loaded.items()}, state) \
            or rules.optimizer_number_types_problem(label, number_reports(reply.get("numbers"), spec["class"]))
        if problem:
            return problem
        if "fresh_steps_error" in reply:
            return student_error(label, "step", reply["fresh_steps_error"])
        after_fresh = entries(reply.get("after_fresh"))
        if isinstance(after, str) or isinstance(after_fresh, str):
            raise ProbeFailure("the reply's state dict after the restored optimizer's steps is missing")
        problem = rules.optimizer_load_kept_problem(label, {k: v for k, _, v in after}, {k: v for k, _, v in after_fresh})
        if problem:
            return problem
    return rules.optimizer_passed(optimizers)


def number_reports(numbers, cls):
    """The kernel's report of the restored optimizer's numbers, as `rules.optimizer_number_types_problem` reads it."""
    if not isinstance(numbers, dict):
        raise ProbeFailure("the reply's restored numbers are missing")
    reports = {}
    for name in rules.OPTIMIZER_NUMBERS[cls]:
        got = numbers.get(name)
        if not isinstance(got, dict):
            raise ProbeFailure(f"the reply does not describe the restored {name}")
        reports[name] = {"type_name": str(got.get("type_name"))[:60], "int": got.get("int") is True,
                         "float": got.get("float") is True, "text": str(got.get("text"))[:60]}
    return reports


# ── 8.4 ──

@judges("checkpoint")
def checkpoint(rng, kind, *files, seed=0):
    return (yield from (round_trip(rng) if kind == "round_trip" else refuses(rng, files or ("text", "npz"))))


def round_trip(rng):
    """save_checkpoint of small_net + Adam holding secret values, then load_checkpoint into new objects."""
    sizes = net_sizes(rng)
    values = net_values(rng, sizes)
    spec, state, _, _, _ = optimizer_secrets(rng, "adam", sizes)
    name = "run.ckpt"
    reply = yield {"kind": "persist_checkpoint", "sizes": sizes, "values": list(values.values()), "optimizer": spec,
                   "fresh": {"class": "Adam", "settings": {"lr": 0.5}}, "state": state, "name": name}
    if "error" in reply:
        return student_error("small_net", "__init__", reply["error"])
    if reply.get("save") is not None:
        return failed(describe_error("save_checkpoint", "call", raised(reply["save"])[0]))
    written = reply.get("written")
    files = reply.get("files")
    names = [str(f)[:200] for f in files] if isinstance(files, list) else str(reply.get("unreadable"))[:300]
    problem = rules.checkpoint_file_problem(name, reply.get("exists") is True,
                                            [str(w)[:200] for w in written] if isinstance(written, list) else [],
                                            names, rules.checkpoint_entries(values, state))
    if problem:
        return problem
    if reply.get("load") is not None:
        return failed(describe_error("load_checkpoint", "call", raised(reply["load"])[0]))
    model = dict(zip(values, arrays(reply, "model", len(values))))
    loaded = reply.get("loaded")
    if not isinstance(loaded, dict):
        raise ProbeFailure("the reply's loaded optimizer state is missing")
    problem = rules.checkpoint_loaded_problem(model, values, {str(k): decode_array(v) for k, v in loaded.items()}, state)
    if problem:
        return problem
    if reply.get("no_optimizer") is not None:
        return failed(describe_error("load_checkpoint", "call without an optimizer", raised(reply["no_optimizer"])[0]))
    return model_only(reply.get("alone"), values) or passed(rules.ROUND_TRIP_PASSED)


def model_only(reply, values):
    """The kernel's save_checkpoint(path, model) without an optimizer, and load_checkpoint of that file into a new
    model: the file's entries, and the model's state after loading, against the secret values saved."""
    if not isinstance(reply, dict):
        raise ProbeFailure("the reply does not describe the checkpoint saved without an optimizer")
    if reply.get("save") is not None:
        return failed(describe_error("save_checkpoint", "call without an optimizer", raised(reply["save"])[0])
                      + rules.MODEL_ONLY_HINT)
    written, files = reply.get("written"), reply.get("files")
    names = [str(f)[:200] for f in files] if isinstance(files, list) else str(reply.get("unreadable"))[:300]
    problem = rules.checkpoint_file_problem(rules.MODEL_ONLY, reply.get("exists") is True,
                                            [str(w)[:200] for w in written] if isinstance(written, list) else [],
                                            names, rules.checkpoint_entries(values, {}), rules.MODEL_ONLY_WHAT)
    if problem:
        return problem
    if reply.get("load") is not None:
        return failed(describe_error("load_checkpoint", "call on a checkpoint without an optimizer",
                                     raised(reply["load"])[0]))
    return rules.checkpoint_loaded_problem(dict(zip(values, arrays(reply, "model", len(values)))), values, {}, {})


def not_checkpoint(rng, kind, sizes):
    """(kind, secret file name, secret bytes) of a file of `kind` that is not a checkpoint of the model (for
    `pickled`, a checkpoint of a small_net of `sizes`, secret values, a secret entry stored as an object array; for
    `other_model`, one whose last layer sits at another position). The judge only writes these bytes; the kernel's
    reply never holds anything but JSON."""
    name = rules.NOT_CHECKPOINTS[kind][1]
    stem, dot, extension = name.partition(".")
    name = f"{stem}_{int(rng.integers(100, 100000))}{dot}{extension}"
    if kind == "text":
        data = f"epoch {int(rng.integers(1, 99))}: loss {rng.uniform(0, 3):.4f}\n".encode()
    elif kind == "empty":
        data = b""
    elif kind == "random":
        data = b"\x00" + rng.bytes(int(rng.integers(100, 500)))     # never a zip's or a .npy's magic bytes
    elif kind == "zip":
        data = b"PK\x03\x04" + rng.bytes(int(rng.integers(20, 80)))
    else:
        buffer = io.BytesIO()
        array = secret(rng, int(rng.integers(2, 9)))
        if kind == "npy":
            np.save(buffer, array)
        elif kind == "npz":
            np.savez(buffer, **{str(rng.choice(["weight", "bias", "scale", "values"])): array})
        else:
            state = net_values(rng, sizes)
            if kind == "other_model":
                rules.other_model_checkpoint(buffer, state)
            elif kind == "unmarked":
                rules.unmarked_checkpoint(buffer, state)
            else:
                rules.pickled_checkpoint(buffer, state, str(rng.choice(list(state))))
        data = buffer.getvalue()
    return kind, name, np.frombuffer(data, dtype=np.uint8).copy()


def refuses(rng, kinds):
    """load_checkpoint on secret files that are not checkpoints: a ValueError naming the file, the model untouched."""
    sizes = net_sizes(rng)
    values = net_values(rng, sizes)
    files = [not_checkpoint(rng, kind, sizes) for kind in kinds]
    reply = yield {"kind": "persist_refuses", "sizes": sizes, "values": list(values.values()),
                   "names": [name for _, name, _ in files], "contents": [data for _, _, data in files]}
    if "error" in reply:
        return student_error("small_net", "__init__", reply["error"])
    results = reply.get("results")
    if not isinstance(results, list) or len(results) != len(files) or not all(isinstance(r, dict) for r in results):
        raise ProbeFailure(f"the reply does not hold {len(files)} results")
    for (kind, name, _), result in zip(files, results):
        error = raised(result.get("raised"))
        holders = arrays(result, "holders", len(values))
        changed = any(not np.array_equal(h, v) for h, v in zip(holders, values.values()))
        problem = (rules.refused_file_problem(kind, name, None, False, "", changed=changed) if error is None else
                   rules.refused_file_problem(kind, name, error[0].error_type, error[2], error[0].message,
                                              error[1], changed))
        if problem:
            return problem
        if changed:
            return failed(f"load_checkpoint refused {rules.NOT_CHECKPOINTS[kind][0]} but changed the model first.")
    return rules.refuses_passed([kind for kind, _, _ in files])


# ── 8.5 ──

@judges("resume_training")
def resume_training(rng, optimizer="adam", seed=0):
    """Train from secret values on secret batches, checkpoint, train on; new objects resumed from the checkpoint must
    agree bit for bit (as in the kernel's check), and the uninterrupted run must be the judge's own training."""
    cls, settings, label = rules.OPTIMIZER_SPECS[optimizer]
    sizes = net_sizes(rng)
    values, clone_values = net_values(rng, sizes), net_values(rng, sizes)
    data = [(secret(rng, (8, sizes[0])), rng.integers(0, sizes[2], 8)) for _ in range(7)]
    reply = yield {"kind": "persist_resume", "sizes": sizes, "values": list(values.values()),
                   "clone_values": list(clone_values.values()), "optimizer": {"class": cls, "settings": settings},
                   "first": data[:3], "second": data[3:]}
    if "error" in reply:
        return failed("resuming from a checkpoint: " + describe_error("training", "step", returned(reply["error"])))
    states = [entries(reply.get(key)) for key in ("original", "original_optimizer", "resumed", "resumed_optimizer")]
    for state in states:
        if isinstance(state, str):
            return failed(f"resuming from a checkpoint: state_dict() returned a {state}.")
    model_state, optimizer_state, clone_state, resumed_state = (
        {key: value if value is not None else np.array(np.nan) for key, _, value in state} for state in states)
    ours, theirs = rules.both_states(model_state, optimizer_state), rules.both_states(clone_state, resumed_state)
    verdict = rules.resume_verdict(label, ours, theirs, decode_array(reply.get("original_out")),
                                   decode_array(reply.get("resumed_out")))
    if not verdict.passed:
        return verdict
    shapes = net_shapes(sizes)
    final = dict(zip(shapes, arrays(reply, "holders", len(shapes))))
    settings = dict(rules.OPTIMIZER_DEFAULTS[cls], **settings)
    want = train_small_net(values, data, cls, settings)
    determined = float32_determined(values, data, cls, settings, want)
    for name, value in want.items():
        if final[name].shape != value.shape:
            return failed(own_training_differs(name, "shape"))
        off = np.abs(final[name] - value)[determined[name]]
        if not np.all(off <= OWN_ATOL + OWN_RTOL * np.abs(value[determined[name]])):     # nan fails too
            return failed(own_training_differs(name, float(off.max())))
    return verdict


def own_training_differs(name, by):
    return (f"resuming from a checkpoint: the uninterrupted run in your kernel is not the judge's own training of the "
            f"same network on the same batches: {name} differs by {by}.\n"
            "  Hint: chapters 4 and 5's Linear, BatchNorm1d, SoftmaxLoss and optimizers must stay as provided.")


def float32_determined(values, data, cls, settings, want):
    """{name: mask} of the elements that float32 rounding cannot move by a tenth of the tolerance (see NOISY_RUNS)."""
    noise = np.random.default_rng(0)
    runs = [train_small_net(values, data, cls, settings, noise) for _ in range(NOISY_RUNS)]
    return {name: np.max([np.abs(run[name] - value) for run in runs], axis=0)
            <= (OWN_ATOL + OWN_RTOL * np.abs(value)) / 10 for name, value in want.items()}


def train_small_net(values, data, cls, settings, noise=None, eps=1e-5, momentum=0.1):
    """Linear → BatchNorm1d → ReLU → Linear trained with SoftmaxLoss and the course's SGD or Adam, in float64;
    with a `noise` generator, every intermediate array is perturbed by float32's relative rounding."""
    def rounded(array):
        return array if noise is None else array * (1 + FLOAT32_ROUNDING * noise.standard_normal(np.shape(array)))
    state = {name: np.array(value, dtype=np.float64) for name, value in values.items()}
    names = [n for n in state if rules.is_parameter(n)]
    slots = {name: {} for name in names}
    t = 0
    for x, y in data:
        w1, b1, g, beta, w2, b2 = (state[n] for n in names)
        x = x.astype(np.float64)
        h = rounded(x @ w1 + b1)
        mean = rounded(h.mean(axis=0))
        centred = rounded(h - mean)
        var = rounded((centred * centred).mean(axis=0))
        state["modules.1.running_mean"] = (1 - momentum) * state["modules.1.running_mean"] + momentum * mean
        state["modules.1.running_var"] = (1 - momentum) * state["modules.1.running_var"] + momentum * var
        std = rounded(np.sqrt(var + eps))
        normal = rounded(centred / std)
        z = rounded(normal * g + beta)
        relu = np.maximum(z, 0)
        logits = rounded(relu @ w2 + b2)
        soft = np.exp(logits - logits.max(axis=1, keepdims=True))
        soft = rounded(soft / soft.sum(axis=1, keepdims=True))
        dlogits = rounded((soft - np.eye(logits.shape[1])[y]) / len(y))
        dz = rounded(dlogits @ w2.T) * (z > 0)
        dnormal = rounded(dz * g)
        dh = rounded((dnormal - dnormal.mean(axis=0) - normal * (dnormal * normal).mean(axis=0)) / std)
        grads = [rounded(grad) for grad in (x.T @ dh, dh.sum(axis=0, keepdims=True), (dz * normal).sum(axis=0),
                                            dz.sum(axis=0), relu.T @ dlogits, dlogits.sum(axis=0, keepdims=True))]
        t += 1
        for name, grad in zip(names, grads):
            p, slot = state[name], slots[name]
            grad = grad + settings["weight_decay"] * p
            if cls == "Adam":
                slot["m"] = settings["beta1"] * slot.get("m", 0.0) + (1 - settings["beta1"]) * grad
                slot["v"] = settings["beta2"] * slot.get("v", 0.0) + (1 - settings["beta2"]) * grad * grad
                m_hat = slot["m"] / (1 - settings["beta1"] ** t)
                v_hat = slot["v"] / (1 - settings["beta2"] ** t)
                state[name] = p - settings["lr"] * m_hat / (np.sqrt(v_hat) + settings["eps"])
            else:
                if settings["momentum"]:
                    grad = grad if "u" not in slot else settings["momentum"] * slot["u"] + grad
                    slot["u"] = grad
                state[name] = p - settings["lr"] * grad
    return state
