"""Kernel side of chapter 4's Module and Sequential probes: the course's tree of stand-in modules, built again
here with the judge's secret values, and the student's `Module` methods run on it.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`packed`, `quietly`, `report`, `error_report`, `type_name`, `run_forward`) and, like it, imports nothing from the
course and decides nothing: it reports arrays, the judge's tags of the stand-ins and `training` flags.

Positions are the judge's (`checks/ch04_nn_module_tree.py`): the request's `params` are the tree's eleven parameters in
TREE_PARAMETERS order, its `tags` the nine stand-ins in TREE_MODULES order, and replies keep these orders.
"""
import numpy as np

LEAF_WEIGHTS = (0, 2, 3, 5, 8, 10)  # the leaves first, layers[0], layers[1], table['deep'][0], pair[1], block.leaf
MAX_ITEMS = 200                     # a list longer than this is reported by its first items and its length


def walk_members(value, Module, Parameter, found, seen):
    """The Parameters and Modules directly inside `value` (through lists, tuples, dicts), each once."""
    if isinstance(value, (Parameter, Module)):
        if id(value) not in seen:
            seen.add(id(value))
            found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            walk_members(item, Module, Parameter, found, seen)
    elif isinstance(value, dict):
        for item in value.values():
            walk_members(item, Module, Parameter, found, seen)


def own_children(module, Module, Parameter):
    found = []
    walk_members(list(vars(module).values()), Module, Parameter, found, set())
    return [m for m in found if isinstance(m, Module)]


def own_parameters(module, Module, Parameter):
    """Every Parameter reachable from `module`, each once: the stand-ins' own parameters()."""
    params, seen_params, seen_modules, stack = [], set(), set(), [module]
    while stack:
        node = stack.pop()
        if id(node) in seen_modules:
            continue
        seen_modules.add(id(node))
        direct = []
        walk_members(list(vars(node).values()), Module, Parameter, direct, set())
        for item in direct:
            if isinstance(item, Parameter) and id(item) not in seen_params:
                seen_params.add(id(item))
                params.append(item)
        stack.extend(reversed([m for m in direct if isinstance(m, Module)]))
    return params


def standin_tree(namespace, request, helpers):
    """The course's tree (checks/ch04_nn_module_tree.build_tree) holding the judge's values: (tree, modules, params)."""
    Tensor, Module, Parameter = namespace["Tensor"], namespace["Module"], namespace["Parameter"]
    values, leaves = request["params"], iter(range(len(LEAF_WEIGHTS)))

    def param(index):
        return Parameter(values[index].copy())

    extra = {}
    if helpers:
        extra = {"parameters": lambda self: own_parameters(self, Module, Parameter),
                 "children": lambda self: own_children(self, Module, Parameter)}

    def init_leaf(self):
        index = next(leaves)
        buffer, stats = request["leaves"][index]
        Module.__init__(self)
        self.w = param(LEAF_WEIGHTS[index])
        self.buffer = Tensor(buffer.copy())          # a plain Tensor: not a parameter
        self.stats = stats.copy()                    # an ndarray: not a parameter
        self.name = "leaf"

    def init_block(self):
        Module.__init__(self)
        self.gain = param(9)
        self.leaf = Leaf()

    def init_tree(self):
        Module.__init__(self)
        self.first = Leaf()
        self.bias = param(1)
        self.layers = [Leaf(), Leaf()]
        self.table = {"scale": param(4), "deep": [Leaf(), {"inner": param(6)}]}
        self.pair = (param(7), Leaf())
        self.tied = self.first.w                     # the same parameter a second time
        self.again = self.first                      # the same module a second time
        self.empty = Empty()
        self.block = Block()                         # a module inside a module: its leaf is a grandchild

    Leaf = type("Leaf", (Module,), {"__init__": init_leaf, **extra})
    Empty = type("Empty", (Module,), {"__init__": lambda self: Module.__init__(self), **extra})
    Block = type("Block", (Module,), {"__init__": init_block, **extra})
    Tree = type("Tree", (Module,), {"__init__": init_tree, **extra})
    tree = Tree()
    modules = [tree, tree.first, *tree.layers, tree.table["deep"][0], tree.pair[1], tree.empty, tree.block,
               tree.block.leaf]
    params = [tree.first.w, tree.bias, tree.layers[0].w, tree.layers[1].w, tree.table["scale"],
              tree.table["deep"][0].w, tree.table["deep"][1]["inner"], tree.pair[0], tree.pair[1].w,
              tree.block.gain, tree.block.leaf.w]
    return tree, modules, params


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
        tree, modules, params = quietly(standin_tree, namespace, request, check in ("train_eval", "zero_grad"))
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
        found = [packed(np.asarray(p.data)) for p in own_parameters(seq, Module, Parameter)[:MAX_ITEMS]]
    except Exception:  # noqa: BLE001 (a Sequential whose attributes cannot be read holds no reachable parameter)
        found = []
    try:
        out = quietly(empty.forward, Tensor(request["x"].copy(), dtype=np.float64, requires_grad=True))
        empty_out = report(out, Tensor)
    except Exception as error:  # noqa: BLE001
        empty_out = error_report(error)
    return {"runs": runs, "found": found, "empty": empty_out}
