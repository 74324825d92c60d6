"""Kernel side of chapter 4's Module and Sequential probes: the course's tree of stand-in modules
(checks/ch04_nn_facts.build_tree, shipped as text) holding the judge's secret values, and the student's `Module`
methods run on it.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`packed`, `quietly`, `report`, `error_report`, `type_name`, `run_forward`, `shipped`) and, like it, imports nothing from the
course and decides nothing: it reports arrays, the judge's tags of the stand-ins and `training` flags.

Positions are the judge's (`checks/ch04_nn_module_tree.py`): the request's `params` are the tree's eleven parameters in
TREE_PARAMETERS order, its `tags` the nine stand-ins in TREE_MODULES order, and replies keep these orders.
"""
import numpy as np

MAX_ITEMS = 200                     # a list longer than this is reported by its first items and its length


def listed(value, describe):
    """A returned list, item by item, or the name of its type when it is not a list."""
    if not isinstance(value, list):
        return {"type_name": type_name(value)}
    return {"items": [describe(item) for item in value[:MAX_ITEMS]], "count": len(value)}


def flag(value):
    """A `training` flag: a bool as it is, anything else by its repr (the judge wants True or False, exactly)."""
    return value if type(value) is bool else {"repr": repr(value)[:60]}


@handles("module_tree")
def module_tree(request, namespace):
    """One check of check.module on the stand-in tree: the student's method, and what it did as data."""
    if request["check"] == "call":
        return module_call(request, namespace)
    Tensor, Module = namespace["Tensor"], namespace["Module"]
    check, reply = request["check"], {}
    try:
        tree, modules, params = quietly(shipped("ch04_nn_facts")["build_tree"], namespace,
                                        check in ("train_eval", "zero_grad"), request["params"], request["leaves"])
        tags = {id(m): tag for m, tag in zip(modules, request["tags"])}
        if check == "parameters":
            reply["parameters"] = listed(quietly(tree.parameters), lambda p: report(p, Tensor, 1))
        elif check == "children":
            def describe(m):
                return tags[id(m)] if id(m) in tags else "module" if isinstance(m, Module) else type_name(m)
            reply["children"] = listed(quietly(tree.children), describe)
            reply["leaf"] = listed(quietly(tree.first.children), describe)
        elif check == "train_eval":
            reply["initial"] = flag(tree.training)
            reply["flags"] = []
            for step in request.get("steps") or ("eval", "train", "layers[0].eval"):
                quietly(tree.layers[0].eval if step == "layers[0].eval" else getattr(tree, step))
                reply["flags"].append({str(tags[id(m)]): flag(m.training) for m in modules})
        elif check == "zero_grad":
            for p, grad in zip(params, request["grads"]):
                p.grad = grad.astype(p.data.dtype)
            reply["before"] = [packed(np.asarray(p.grad)) for p in params]
            quietly(tree.zero_grad)
            reply["grads"] = [report(p.grad, Tensor, 1) for p in params]
            reply["values"] = [packed(np.asarray(p.data)) for p in params]
    except Exception as error:  # noqa: BLE001
        reply["error"] = error_report(error)
    return reply


def module_call(request, namespace):
    """module(x) then module(x, y) on a stand-in whose forward writes down its arguments and returns the
    judge's arrays, one per call."""
    Tensor, calls, results = namespace["Tensor"], [], request["results"]

    def forward(self, *args):
        calls.append([report(a, Tensor) for a in args[:8]])
        return results[min(len(calls), len(results)) - 1].copy()

    Probe = type("Probe", (namespace["Module"],), {"forward": forward})
    try:
        probe = Probe()
        one = quietly(probe, request["x"].copy())
        two = quietly(probe, request["x"].copy(), request["y"].copy())
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    return {"calls": calls[:8], "returned": [report(one, Tensor), report(two, Tensor)]}


@handles("sequential")
def sequential(request, namespace):
    """Sequential of two stand-ins applying the judge's affine maps (the second holding a Parameter of the
    judge's values): forward and backward on the judge's x, the parameters reachable from the Sequential,
    and an empty Sequential on x."""
    Tensor, Module, Parameter = namespace["Tensor"], namespace["Module"], namespace["Parameter"]

    def standin(name, scale, shift):
        def forward(self, x):
            return x * scale + shift
        return type(name, (Module,), {"forward": forward, "__call__": forward})

    try:
        parts = [standin(f"Affine{i + 1}", float(scale), float(shift))() for i, (scale, shift) in enumerate(request["maps"])]
        parts[-1].offset = Parameter(request["offset"].copy())
        seq = quietly(namespace["Sequential"], *parts)
        empty = quietly(namespace["Sequential"])
    except Exception as error:  # noqa: BLE001
        return {"built": error_report(error)}
    runs = [run_forward(seq, {"x": request["x"], "upstream": upstream}, namespace) for upstream in request["upstreams"]]
    try:
        found = [packed(np.asarray(p.data)) for p in shipped("ch04_nn_facts")["reachable_parameters"](seq, Module, Parameter)[:MAX_ITEMS]]
    except Exception:  # noqa: BLE001 (a Sequential whose attributes cannot be read holds no reachable parameter)
        found = []
    try:
        out = quietly(empty.forward, Tensor(request["x"].copy(), dtype=np.float64, requires_grad=True))
        empty_out = report(out, Tensor)
    except Exception as error:  # noqa: BLE001
        empty_out = error_report(error)
    return {"runs": runs, "found": found, "empty": empty_out}
