"""The course's own state methods of chapter 8, swapped in for the student's while a check grades another exercise
of the chapter (so one slip costs one exercise), and what they know of the objects they serve: small_net's state
names and shapes, chapter 5's optimizers' numbers and per-parameter dicts.

They answer from these tables, never by walking the objects as the exercises do, so the exercises' code lives only
in the chapter. NumPy and the standard library only, no course imports: the judge ships this file as text to the
kernel (`probes.SHIPPED`), so the course's checks and the judge's worker stand in with the very same methods.
"""
import contextlib

import numpy as np

NET_SIZES = (4, 6, 3)            # small_net's Linear(4, 6) → BatchNorm1d(6) → ReLU → Linear(6, 3)
# small_net's buffer kept as a Tensor that is not a Parameter (the text counts both kinds of buffer): its
# BatchNorm1d keeps ndarrays, and a state dict, a load or a checkpoint that handles only those shows here
TENSOR_BUFFER = "calibration"

OPTIMIZER_DEFAULTS = {"Adam": {"lr": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0},
                      "SGD": {"lr": 0.01, "momentum": 0.0, "weight_decay": 0.0}}
OPTIMIZER_ARRAYS = {"Adam": ("m", "v"), "SGD": ("velocity",)}       # the per-parameter dicts, keyed by id(p)
OPTIMIZER_NUMBERS = {kind: (*numbers, "t") if kind == "Adam" else tuple(numbers)   # and Adam's step count
                     for kind, numbers in OPTIMIZER_DEFAULTS.items()}
# every method `course_methods` stands in for, as (class, method)
ALL_COURSE_METHODS = (("Module", "named_state"), ("Module", "state_dict"), ("Module", "load_state_dict"),
                      ("Optimizer", "state_dict"), ("Optimizer", "load_state_dict"))


def net_shapes(sizes):
    """{name: shape} of small_net's state, Linear(a, b) → BatchNorm1d(b) → ReLU → Linear(b, c), in order, then its
    Tensor buffer."""
    a, b, c = sizes
    return {"modules.0.weight": (a, b), "modules.0.bias": (1, b), "modules.1.weight": (b,), "modules.1.bias": (b,),
            "modules.1.running_mean": (b,), "modules.1.running_var": (b,), "modules.3.weight": (b, c),
            "modules.3.bias": (1, c), TENSOR_BUFFER: (c,)}


def holder_at(model, name):
    """The object a state name points to, found by following it: "modules.3.bias" is model.modules[3].bias."""
    found = model
    for part in name.split("."):
        found = found[int(part)] if part.isdigit() else found[part] if isinstance(found, dict) else getattr(found, part)
    return found


def net_state(model, sizes=NET_SIZES):
    """[(name, holder)] of a small_net of `sizes`: the names it is known to have (net_shapes), each looked up in
    `model`. The course's own answer for the one model the swapped-in methods ever see, so never a walk of the model."""
    return [(name, holder_at(model, name)) for name in net_shapes(sizes)]


def values_of(holder):
    """The array behind a holder: the array itself, or a Tensor's .data (an ndarray's .data is a memoryview)."""
    return holder if isinstance(holder, np.ndarray) else np.asarray(holder.data)


def load_arrays(arrays, state, strict=True):
    """Copy `state` into `arrays` ([(name, writable array)]) as section 8.2 asks: missing or unexpected names
    refused with a KeyError when strict, a shape mismatch with a ValueError, and nothing changed unless all fits."""
    names = [name for name, _ in arrays]
    missing = [name for name in names if name not in state]
    unexpected = [name for name in state if name not in names]
    if strict and (missing or unexpected):
        raise KeyError(f"the state dict misses {missing} and has entries the model does not: {unexpected}")
    for name, array in arrays:
        if name in state and np.shape(state[name]) != array.shape:
            raise ValueError(f"{name}: the state dict has shape {np.shape(state[name])}, the model {array.shape}")
    for name, array in arrays:
        if name in state:
            np.copyto(array, state[name], casting="unsafe")


def course_optimizer_state(optimizer):
    """The course's state dict of one of chapter 5's optimizers: every number it holds, then each per-parameter array
    of its parameters, table by table in the table's own order, under the parameter's position in optimizer.params."""
    kind = type(optimizer).__name__
    position = {id(p): i for i, p in enumerate(optimizer.params)}
    state = {name: np.array(getattr(optimizer, name)) for name in OPTIMIZER_NUMBERS[kind] if hasattr(optimizer, name)}
    for table in OPTIMIZER_ARRAYS[kind]:
        arrays = getattr(optimizer, table, {})
        state.update({f"{table}.{position[key]}": np.array(arrays[key]) for key in arrays if key in position})
    return state


def course_optimizer_load(optimizer, state):
    """Put a course state dict into one of chapter 5's optimizers, entry by entry in the dict's order (so each
    per-parameter dict gets its parameters in that order): numbers as Python numbers, arrays as copies under the id
    of the parameter at their position."""
    kind = type(optimizer).__name__
    for entry, value in state.items():
        table, _, position = entry.partition(".")
        if table in OPTIMIZER_ARRAYS[kind] and position:
            getattr(optimizer, table)[id(optimizer.params[int(position)])] = np.array(value)
        elif entry in OPTIMIZER_NUMBERS[kind]:
            setattr(optimizer, entry, np.asarray(value).item())


@contextlib.contextmanager
def course_methods(ns, *names, sizes=NET_SIZES):
    """Replace Module/Optimizer methods `names` ((class, method) pairs) by the course's versions meanwhile; the
    models they see are small_nets of `sizes`."""
    Module, Optimizer = ns["Module"], ns["Optimizer"]

    def named_state(self):
        return net_state(self, sizes)

    def state_dict(self):
        return {name: np.array(values_of(h)) for name, h in net_state(self, sizes)}

    def load_state_dict(self, state, strict=True):
        load_arrays([(name, values_of(holder)) for name, holder in net_state(self, sizes)], state, strict)

    ours = {("Module", "named_state"): named_state, ("Module", "state_dict"): state_dict,
            ("Module", "load_state_dict"): load_state_dict,
            ("Optimizer", "state_dict"): course_optimizer_state,
            ("Optimizer", "load_state_dict"): course_optimizer_load}
    classes = {"Module": Module, "Optimizer": Optimizer}
    saved = {}
    for key in names:
        cls, method = classes[key[0]], key[1]
        saved[key] = cls.__dict__.get(method)
        setattr(cls, method, ours[key])
    try:
        yield
    finally:
        for (cls_name, method), original in saved.items():
            if original is None:
                delattr(classes[cls_name], method)
            else:
                setattr(classes[cls_name], method, original)
