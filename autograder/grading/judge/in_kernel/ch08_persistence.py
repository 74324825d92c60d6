"""Kernel side of chapter 8's probes: the student's state methods and checkpoint files on the judge's values.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers (`packed`,
`quietly`, `error_report`, `report`, `shipped`) and imports nothing from the course. It builds the chapter's
stand-in models, gives every holder the judge's secret values, swaps the course's own versions of the other methods
in (`checks/ch08_persistence_facts.course_methods`, shipped as text, as the course's checks do), calls the one
method under test and reports names, arrays, exception types and messages. Files live in a temporary folder of its
own, in the kernel's sandbox, removed after the request.
"""
import os
import tempfile

import numpy as np


def course_state_methods(namespace, sizes, *names):
    """Module/Optimizer methods `names` ((class, method) pairs, all when none) replaced by the course's versions
    for the length of a request, on small_nets of `sizes`."""
    facts = shipped("ch08_persistence_facts")
    return facts["course_methods"](namespace, *(names or facts["ALL_COURSE_METHODS"]), sizes=sizes)


def persist_state(model, sizes):
    """[(name, holder)] of a small_net of `sizes`, as the course names its state."""
    return shipped("ch08_persistence_facts")["net_state"](model, sizes)


def persist_values(holder):
    return shipped("ch08_persistence_facts")["values_of"](holder)


# ── stand-in models holding the judge's values ──

def persist_tree(namespace, variant, values):
    """probe_model's tree of stand-in modules, its holders made from the judge's arrays in expected order."""
    Tensor, Module, Parameter = namespace["Tensor"], namespace["Module"], namespace["Parameter"]
    pool = iter(values)

    def param():
        return Parameter(next(pool))

    def buffer_array():
        return np.array(next(pool))

    def buffer_tensor():
        return Tensor(next(pool), requires_grad=False)

    class Leaf(Module):
        def __init__(self):
            self.weight = param()
            self.scale = 1.5
            self.name = "leaf"

    class Block(Module):
        def __init__(self):
            self.layers = [Leaf(), Leaf()]
            self.norm = {"gain": param(), "shift": param()}
            self.running_mean = buffer_array()
            self.step_count = buffer_tensor()
            self.rng = np.random.default_rng(0)
            self.head = None

    if variant == "nested":
        class Deep(Module):
            def __init__(self):
                stages = {"a": (Leaf(), Leaf())}
                stages["stats"] = [buffer_array(), buffer_tensor()]
                self.stages = [stages]
                self.shared = stages["stats"][0]
                self.tail = Block()

        model = Deep()
        stage, tail = model.stages[0], model.tail
        holders = [stage["a"][0].weight, stage["a"][1].weight, stage["stats"][0], stage["stats"][1],
                   tail.layers[0].weight, tail.layers[1].weight, tail.norm["gain"], tail.norm["shift"],
                   tail.running_mean, tail.step_count]
        return model, holders

    class Model(Module):
        def __init__(self):
            self.embed = param()
            self.block = Block()
            self.tied = self.embed
            self.again = self.block.layers[0]
            self.pair = (Leaf(),)

    model = Model()
    b = model.block
    holders = [model.embed, b.layers[0].weight, b.layers[1].weight, b.norm["gain"], b.norm["shift"],
               b.running_mean, b.step_count, model.pair[0].weight]
    return model, holders


def persist_net(namespace, sizes, seed):
    """Linear → BatchNorm1d → ReLU → Linear of the judge's sizes, and a buffer kept as a Tensor, as
    `checks/ch08_persistence.small_net` (the judge's values go into it with the rest)."""
    a, b, c = sizes
    model = namespace["Sequential"](namespace["Linear"](a, b, seed=seed), namespace["BatchNorm1d"](b),
                                    namespace["ReLU"](), namespace["Linear"](b, c, seed=seed + 1))
    model.calibration = namespace["Tensor"](np.ones(c), requires_grad=False)
    return model


def persist_set(model, sizes, values):
    """The judge's arrays into the model's holders, in the course's order, in place."""
    for (_, holder), value in zip(persist_state(model, sizes), values):
        persist_values(holder)[...] = value


def persist_filled(namespace, request, seed, values="values"):
    """A small_net of the request's sizes holding the request's arrays `values`."""
    model = persist_net(namespace, request["sizes"], seed)
    persist_set(model, request["sizes"], request[values])
    return model


def persist_arrays(model, sizes):
    return [packed(persist_values(h)) for _, h in persist_state(model, sizes)]


def persist_optimizer_of(namespace, spec, params):
    return namespace[spec["class"]](params, **spec["settings"])


def persist_state_report(state):
    """A state dict as data: its type, and each entry's key, type name and array (ndarrays only)."""
    if not isinstance(state, dict):
        return {"type_name": type(state).__name__, "entries": None}
    entries = []
    for key, value in list(state.items())[:200]:
        entries.append({"key": str(key), "type_name": type(value).__name__, "ndarray": isinstance(value, np.ndarray),
                        "value": packed(value) if isinstance(value, np.ndarray) and value.dtype.kind in "biuf" else None})
    return {"type_name": "dict", "entries": entries}


def persist_raised(fn, *args, **kwargs):
    """None when the call returned, else the exception as data (its type name and the kinds it is)."""
    try:
        quietly(lambda: fn(*args, **kwargs))
    except Exception as error:  # noqa: BLE001
        return dict(error_report(error), key_error=isinstance(error, KeyError),
                    value_error=isinstance(error, ValueError))
    return None


# ── the requests ──

@handles("persist_named_state")
def persist_named_state(request, namespace):
    """named_state() of a tree of stand-in modules holding the judge's arrays: names, values, and which holder."""
    Tensor = namespace["Tensor"]
    try:
        model, holders = persist_tree(namespace, request["variant"], request["values"])
        got = quietly(model.named_state)
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    if not isinstance(got, list) or not all(isinstance(p, tuple) and len(p) == 2 for p in got):
        return {"type_name": type(got).__name__, "text": str(got)[:120]}
    pairs = []
    for name, holder in got[:64]:
        own = next((i for i, h in enumerate(holders) if h is holder), -1)
        pairs.append({"name": str(name), "type_name": type(holder).__name__, "own": own,
                      "value": report(holder, Tensor)})
    return {"pairs": pairs}


@handles("persist_state_dict")
def persist_state_dict(request, namespace):
    """state_dict() of small_net holding the judge's values; then every holder += 1 in place, and the dict again."""
    with course_state_methods(namespace, request["sizes"], ("Module", "named_state")):
        try:
            model = persist_filled(namespace, request, 0)
            got = quietly(model.state_dict)
        except Exception as error:  # noqa: BLE001
            return {"error": error_report(error)}
        first = persist_state_report(got)
        for _, holder in persist_state(model, request["sizes"]):
            persist_values(holder)[...] += 1.0
    return {"state": first, "after": persist_state_report(got)}


@handles("persist_load_values")
def persist_load_values(request, namespace):
    """load_state_dict(the judge's state) into small_net: the holders' values after, and whether they are the same objects."""
    with course_state_methods(namespace, request["sizes"], ("Module", "named_state"), ("Module", "state_dict")):
        try:
            target = persist_filled(namespace, request, 5)
            objects = [h for _, h in persist_state(target, request["sizes"])]
            params = target.parameters()
        except Exception as error:  # noqa: BLE001
            return {"error": error_report(error)}
        state = {k: v.copy() for k, v in request["state"].items()}
        error = persist_raised(target.load_state_dict, state)
        if error:
            return {"error": error}
        named = persist_state(target, request["sizes"])
        after = [h for _, h in named]
        same = len(after) == len(objects) and all(a is b for a, b in zip(after, objects)) \
            and all(a is b for a, b in zip(target.parameters(), params))
        shared = next((name for name, h in named
                       if name in state and np.shares_memory(np.asarray(persist_values(h)), state[name])), None)
        return {"holders": persist_arrays(target, request["sizes"]), "same": same, "shared": shared}


@handles("persist_load_errors")
def persist_load_errors(request, namespace):
    """load_state_dict on each of the judge's ill-fitting state dicts: what it raised, and the holders after."""
    with course_state_methods(namespace, request["sizes"], ("Module", "named_state"), ("Module", "state_dict")):
        try:
            model = persist_filled(namespace, request, 0)
        except Exception as error:  # noqa: BLE001
            return {"error": error_report(error)}
        cases = []
        for case in request["cases"]:
            state = {k: v.copy() for k, v in case["state"].items()}
            cases.append({"raised": persist_raised(model.load_state_dict, state, strict=case["strict"]),
                          "holders": persist_arrays(model, request["sizes"])})
        return {"cases": cases}


@handles("persist_optimizer")
def persist_optimizer(request, namespace):
    """The judge's optimizer state put in; the student's state_dict() reported, then two steps on, then the dict
    again; then the student's load_state_dict of that dict into a fresh optimizer, whose state is reported."""
    facts = shipped("ch08_persistence_facts")
    with course_state_methods(namespace, request["sizes"], ("Module", "named_state"), ("Module", "state_dict"),
                              ("Module", "load_state_dict")):
        try:
            model = persist_net(namespace, request["sizes"], 0)
            optimizer = persist_optimizer_of(namespace, request["optimizer"], model.parameters())
            facts["course_optimizer_load"](optimizer, request["state"])
        except Exception as error:  # noqa: BLE001
            return {"error": error_report(error)}
        try:
            state = quietly(optimizer.state_dict)
        except Exception as error:  # noqa: BLE001
            return {"state_error": error_report(error)}
        reply = {"state": persist_state_report(state), "ids": [str(id(p)) for p in optimizer.params]}
        if not isinstance(state, dict):
            return reply
        error = persist_steps(optimizer, request["grads"])
        if error:
            return dict(reply, steps_error=error)
        reply["after"] = persist_state_report(state)
        clone = persist_net(namespace, request["sizes"], 9)
        fresh = persist_optimizer_of(namespace, request["optimizer"], clone.parameters())
        error = persist_raised(fresh.load_state_dict, state)
        if error:
            return dict(reply, load_error=error)
        try:
            loaded = facts["course_optimizer_state"](fresh)
        except Exception as error:  # noqa: BLE001
            return dict(reply, load_error=error_report(error))
        reply["loaded"] = {k: packed(v) for k, v in loaded.items() if v.dtype.kind in "biuf"}
        reply["numbers"] = {name: shipped("kernel_facts")["number_report"](value) for name, value in vars(fresh).items()
                            if not isinstance(value, (dict, list, tuple))}
        error = persist_steps(fresh, request["grads"])      # the restored optimizer steps on: the dict must stay as loaded
        if error:
            return dict(reply, fresh_steps_error=error)
        return dict(reply, after_fresh=persist_state_report(state))


def persist_steps(optimizer, grads_per_step):
    """A step of `optimizer` per list of gradients; the error report of the first that raised, or None."""
    try:
        for grads in grads_per_step:
            for p, g in zip(optimizer.params, grads):
                p.grad = np.array(g, dtype=np.asarray(p.data).dtype)
            quietly(optimizer.step)
    except Exception as error:  # noqa: BLE001
        return error_report(error)
    return None


@handles("persist_checkpoint")
def persist_checkpoint(request, namespace):
    """save_checkpoint of small_net + Adam holding the judge's values, in a folder of the worker's own; the file's
    entry names; load_checkpoint into new objects, whose state is reported; load_checkpoint without an optimizer."""
    save, load = namespace["save_checkpoint"], namespace["load_checkpoint"]
    reply = {}
    facts = shipped("ch08_persistence_facts")
    with tempfile.TemporaryDirectory() as folder, course_state_methods(namespace, request["sizes"]):
        try:
            model = persist_filled(namespace, request, 0)
            optimizer = persist_optimizer_of(namespace, request["optimizer"], model.parameters())
            facts["course_optimizer_load"](optimizer, request["state"])
        except Exception as error:  # noqa: BLE001
            return {"error": error_report(error)}
        path = os.path.join(folder, request["name"])
        written, readable = persist_written(save, path, folder, model, optimizer)
        reply.update(written)
        if not readable:
            return reply
        clone = persist_net(namespace, request["sizes"], 4)
        fresh = persist_optimizer_of(namespace, request["fresh"], clone.parameters())
        reply["load"] = persist_raised(load, path, clone, fresh)
        if reply["load"]:
            return reply
        reply["model"] = persist_arrays(clone, request["sizes"])
        reply["loaded"] = {k: packed(v) for k, v in facts["course_optimizer_state"](fresh).items() if v.dtype.kind in "biuf"}
        reply["no_optimizer"] = persist_raised(load, path, persist_net(namespace, request["sizes"], 6))
        if reply["no_optimizer"]:
            return reply
        reply["alone"] = persist_model_only(namespace, request, model, folder)
    return reply


def persist_written(save, path, folder, *objects):
    """save(path, *objects), then what it left: whether the file exists, the folder's files and the archive's entry
    names (or why NumPy could not read it); and whether the file could be read, so loading it can go on."""
    reply = {"save": persist_raised(save, path, *objects)}
    if reply["save"]:
        return reply, False
    reply["exists"] = os.path.exists(path)
    reply["written"] = sorted(os.listdir(folder))[:10]
    if not reply["exists"]:
        return reply, False
    try:
        with np.load(path, allow_pickle=False) as archive:
            reply["files"] = [str(name) for name in archive.files][:200]
    except Exception as error:  # noqa: BLE001
        reply["unreadable"] = str(error)[:300]
        return reply, False
    return reply, True


def persist_model_only(namespace, request, model, folder):
    """save_checkpoint(path, model) without an optimizer; the file's entry names; load_checkpoint into a new model."""
    path = os.path.join(folder, "model.ckpt")
    reply, readable = persist_written(namespace["save_checkpoint"], path, folder, model)
    if not readable:
        return reply
    clone = persist_net(namespace, request["sizes"], 8)
    reply["load"] = persist_raised(namespace["load_checkpoint"], path, clone)
    if not reply["load"]:
        reply["model"] = persist_arrays(clone, request["sizes"])
    return reply


@handles("persist_refuses")
def persist_refuses(request, namespace):
    """load_checkpoint on each of the judge's files that are not checkpoints: what it raised, the holders after."""
    load = namespace["load_checkpoint"]
    results = []
    with tempfile.TemporaryDirectory() as folder, course_state_methods(namespace, request["sizes"]):
        try:
            model = persist_filled(namespace, request, 0)
        except Exception as error:  # noqa: BLE001
            return {"error": error_report(error)}
        for name, data in zip(request["names"], request["contents"]):
            path = os.path.join(folder, name)
            with open(path, "wb") as f:
                f.write(np.asarray(data, dtype=np.uint8).tobytes())
            results.append({"raised": persist_raised(load, path, model), "holders": persist_arrays(model, request["sizes"])})
    return {"results": results}


def persist_train(namespace, model, optimizer, batches):
    Tensor, loss_fn = namespace["Tensor"], namespace["SoftmaxLoss"]()
    for x, y in batches:
        optimizer.zero_grad()
        loss = loss_fn(model(Tensor(x, requires_grad=False)), y)
        loss.backward()
        optimizer.step()


@handles("persist_resume")
def persist_resume(request, namespace):
    """Train from the judge's values on its first batches, save, train on; new objects from other values load the
    checkpoint and train on the same batches. Both runs' state (the student's model and optimizer state_dict, and
    the course's walk) and eval-mode predictions."""
    save, load, Tensor = namespace["save_checkpoint"], namespace["load_checkpoint"], namespace["Tensor"]
    first, second = request["first"], request["second"]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "resume.ckpt")
        try:
            model = persist_filled(namespace, request, 0)
            optimizer = persist_optimizer_of(namespace, request["optimizer"], model.parameters())
            quietly(persist_train, namespace, model, optimizer, first)
            quietly(save, path, model, optimizer)
            quietly(persist_train, namespace, model, optimizer, second)
            model.eval()
            x = Tensor(second[0][0], requires_grad=False)
            original_out = np.array(quietly(model, x).data)
            clone = persist_filled(namespace, request, 42, "clone_values")
            resumed = persist_optimizer_of(namespace, request["optimizer"], clone.parameters())
            quietly(load, path, clone, resumed)
            quietly(persist_train, namespace, clone, resumed, second)
            clone.eval()
            resumed_out = np.array(quietly(clone, x).data)
            ours, theirs = quietly(model.state_dict), quietly(clone.state_dict)
            ours_optimizer, theirs_optimizer = quietly(optimizer.state_dict), quietly(resumed.state_dict)
        except Exception as error:  # noqa: BLE001
            return {"error": error_report(error)}
    return {"original": persist_state_report(ours), "resumed": persist_state_report(theirs),
            "original_optimizer": persist_state_report(ours_optimizer),
            "resumed_optimizer": persist_state_report(theirs_optimizer),
            "original_out": packed(original_out), "resumed_out": packed(resumed_out),
            "holders": persist_arrays(model, request["sizes"])}
