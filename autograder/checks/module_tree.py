"""Checks of the `Module` base class on a small tree of stand-in modules built by the checker.

The tree hides parameters and sub-modules everywhere a real model does: in attributes, lists,
tuples, dicts and lists inside dicts, with one parameter and one module referenced twice. Only the
`Module` method under test is the student's: for `train`, `eval` and `zero_grad` the stand-ins
bring their own `parameters()` and `children()`, so a broken `parameters()` costs one exercise.
"""
import numpy as np

from ..verdict import failed, passed
from .ops import describe_exception, run_quietly


def walk(value, Module, Parameter, found, seen):
    """Collect the Parameters and Modules directly inside `value` (through lists, tuples, dicts)."""
    if isinstance(value, (Parameter, Module)):
        if id(value) not in seen:
            seen.add(id(value))
            found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            walk(item, Module, Parameter, found, seen)
    elif isinstance(value, dict):
        for item in value.values():
            walk(item, Module, Parameter, found, seen)


def reference_children(module, Module, Parameter):
    found, seen = [], set()
    for value in vars(module).values():
        walk(value, Module, Parameter, found, seen)
    return [m for m in found if isinstance(m, Module)]


def reference_parameters(module, Module, Parameter):
    """Every Parameter reachable from `module`, each once."""
    params, seen_params, seen_modules, stack = [], set(), set(), [module]
    while stack:
        node = stack.pop()
        if id(node) in seen_modules:
            continue
        seen_modules.add(id(node))
        direct, seen = [], set()
        for value in vars(node).values():
            walk(value, Module, Parameter, direct, seen)
        for item in direct:
            if isinstance(item, Parameter) and id(item) not in seen_params:
                seen_params.add(id(item))
                params.append(item)
        stack.extend(reversed([m for m in direct if isinstance(m, Module)]))
    return params


def build_tree(ns, helpers):
    """A model-shaped tree of stand-in modules. With `helpers`, they bring their own
    parameters() and children(), so that train/eval/zero_grad are checked alone."""
    Tensor, Module, Parameter = ns["Tensor"], ns["Module"], ns["Parameter"]
    rng = np.random.default_rng(5)

    def param(*shape):
        return Parameter(rng.standard_normal(shape))

    extra = {}
    if helpers:
        extra = {"parameters": lambda self: reference_parameters(self, Module, Parameter),
                 "children": lambda self: reference_children(self, Module, Parameter)}

    def init_leaf(self):
        Module.__init__(self)
        self.w = param(2, 2)
        self.buffer = Tensor(np.zeros(2))            # a plain Tensor: not a parameter
        self.stats = np.ones(3)                      # an ndarray: not a parameter
        self.name = "leaf"

    def init_tree(self):
        Module.__init__(self)
        self.first = Leaf()
        self.bias = param(3)
        self.layers = [Leaf(), Leaf()]
        self.table = {"scale": param(1), "deep": [Leaf(), {"inner": param(2)}]}
        self.pair = (param(4), Leaf())
        self.tied = self.first.w                     # the same parameter a second time
        self.again = self.first                      # the same module a second time
        self.empty = Empty()

    Leaf = type("Leaf", (Module,), {"__init__": init_leaf, **extra})
    Empty = type("Empty", (Module,), {"__init__": lambda self: Module.__init__(self), **extra})
    Tree = type("Tree", (Module,), {"__init__": init_tree, **extra})
    tree = Tree()
    modules = [tree, tree.first, *tree.layers, tree.table["deep"][0], tree.pair[1], tree.empty]
    return tree, modules


TREE_PICTURE = ("Tree: first=Leaf(w), bias, layers=[Leaf, Leaf], table={'scale': p, 'deep': [Leaf, {'inner': p}]}, "
                "pair=(p, Leaf), tied=first.w, again=first, empty=Empty(); each Leaf has w, a plain Tensor buffer "
                "and an ndarray")


def describe_params(items, ids):
    return "[" + ", ".join(f"#{ids.get(id(p), '?')}{tuple(p.shape)}" for p in items) + "]"


def check_parameters(ns):
    Module, Parameter, Tensor = ns["Module"], ns["Parameter"], ns["Tensor"]
    title = "Module.parameters() on a tree of stand-in modules"
    try:
        tree, _ = run_quietly(build_tree, ns, False)
        got = run_quietly(tree.parameters)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Module", "parameters", error) + f"\n  while checking: {title}")
    want = reference_parameters(tree, Module, Parameter)
    ids = {id(p): i for i, p in enumerate(want)}
    if not isinstance(got, list):
        return failed(f"{title}: returned a {type(got).__name__}, expected a list of Parameters.")
    strays = [p for p in got if not isinstance(p, Parameter)]
    if strays:
        kind = "plain Tensor (a buffer)" if isinstance(strays[0], Tensor) else type(strays[0]).__name__
        return failed(f"{title}: the list holds a {kind}; only Parameters belong in it.\n  {TREE_PICTURE}.\n"
                      "  Hint: test isinstance(value, Parameter), not isinstance(value, Tensor).")
    if len({id(p) for p in got}) != len(got):
        return failed(f"{title}: some parameters appear twice ({len(got)} items, {len({id(p) for p in got})} distinct).\n"
                      f"  {TREE_PICTURE}.\n  Hint: a parameter or module reachable twice (tied weights) must be "
                      "listed once: remember what you have already collected, by id().")
    missing = [p for p in want if id(p) not in {id(q) for q in got}]
    if missing:
        return failed(f"{title}: found {len(got)} of the {len(want)} parameters; missing {describe_params(missing, ids)}.\n"
                      f"  {TREE_PICTURE}.\n  Hint: look inside sub-modules (recursively), lists, tuples and dicts, "
                      "including containers nested in containers.")
    return passed(f"✔ Module.parameters() finds all {len(want)} parameters of a nested tree, each once")


def check_children(ns):
    Module, Parameter = ns["Module"], ns["Parameter"]
    title = "Module.children() on a tree of stand-in modules"
    try:
        tree, _ = run_quietly(build_tree, ns, False)
        got = run_quietly(tree.children)
        leaf_children = run_quietly(tree.first.children)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Module", "children", error) + f"\n  while checking: {title}")
    want = reference_children(tree, Module, Parameter)
    names = {id(tree.first): "first", id(tree.layers[0]): "layers[0]", id(tree.layers[1]): "layers[1]",
             id(tree.table["deep"][0]): "table['deep'][0]", id(tree.pair[1]): "pair[1]", id(tree.empty): "empty"}
    if not isinstance(got, list) or not all(isinstance(m, Module) for m in got):
        return failed(f"{title}: expected a list of Modules, received {got!r:.120}.")
    if len({id(m) for m in got}) != len(got):
        return failed(f"{title}: a module appears twice.\n  {TREE_PICTURE}.\n  Hint: `again` is `first` a second "
                      "time: list each module once.")
    got_ids, want_ids = {id(m) for m in got}, {id(m) for m in want}
    if got_ids != want_ids:
        missing = [names.get(i, "?") for i in want_ids - got_ids]
        extra = len(got_ids - want_ids)
        return failed(f"{title}: missing {missing or 'none'}, {extra} unexpected.\n  {TREE_PICTURE}.\n"
                      "  Hint: children() lists the modules directly inside this one (in attributes, lists, tuples "
                      "and dicts, however nested), not their own children.")
    if leaf_children != []:
        return failed(f"{title}: a Leaf, which holds no module, returned {leaf_children!r:.80} instead of [].")
    return passed(f"✔ Module.children() lists the {len(want)} direct sub-modules, each once")


def check_train_eval(ns):
    title = "Module.train() / eval() on a tree of stand-in modules"
    try:
        tree, modules = run_quietly(build_tree, ns, True)
        if tree.training is not True:
            return failed(f"{title}: a new module has training = {tree.training!r}; modules start in training mode.")
        run_quietly(tree.eval)
        after_eval = [m.training for m in modules]
        run_quietly(tree.train)
        after_train = [m.training for m in modules]
        run_quietly(tree.layers[0].eval)
        only_one = [m.training for m in modules]
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Module", "train/eval", error) + f"\n  while checking: {title}")
    hint = ("set self.training on this module, then call the same method on every child; the children "
            "sit in attributes, lists and dicts (self.children() lists them).")
    if any(flag is not False for flag in after_eval):
        return failed(f"{title}: after tree.eval(), training is {after_eval} for [tree, first, layers[0], "
                      f"layers[1], table['deep'][0], pair[1], empty]; expected all False.\n  Hint: {hint}")
    if any(flag is not True for flag in after_train):
        return failed(f"{title}: after tree.train(), training is {after_train}; expected all True.\n  Hint: {hint}")
    if only_one != [True, True, False, True, True, True, True]:
        return failed(f"{title}: tree.layers[0].eval() should switch only that module (and its own children) to "
                      f"evaluation; training flags became {only_one}.")
    return passed(f"✔ train() and eval() reach all {len(modules)} modules of a nested tree")


def check_zero_grad(ns):
    Module, Parameter = ns["Module"], ns["Parameter"]
    title = "Module.zero_grad() on a tree of stand-in modules"
    try:
        tree, _ = run_quietly(build_tree, ns, True)
        params = reference_parameters(tree, Module, Parameter)
        for p in params:
            p.grad = np.ones(p.shape, dtype=p.data.dtype)
        values = [p.data.copy() for p in params]
        run_quietly(tree.zero_grad)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Module", "zero_grad", error) + f"\n  while checking: {title}")
    left = [i for i, p in enumerate(params) if p.grad is not None]
    if left:
        zeros = all(isinstance(params[i].grad, np.ndarray) and not params[i].grad.any() for i in left)
        hint = ("set .grad = None rather than filling it with zeros: None says 'no gradient yet', and the "
                "optimizers of chapter 5 skip such parameters." if zeros else
                "visit every parameter: self.parameters() lists them all.")
        return failed(f"{title}: {len(left)} of {len(params)} parameters still have a .grad.\n  Hint: {hint}")
    if any(not np.array_equal(v, p.data) for v, p in zip(values, params)):
        return failed(f"{title}: zero_grad changed the parameters' values; it must only forget their gradients.")
    return passed(f"✔ zero_grad() clears the gradients of all {len(params)} parameters")


def check_call(ns):
    Module = ns["Module"]
    title = "Module.__call__"

    def forward(self, *args):
        self.calls.append(args)
        return ("result", len(args))

    Probe = type("Probe", (Module,), {"forward": forward})
    try:
        probe = Probe()
        probe.calls = []
        one = run_quietly(probe, "x")
        two = run_quietly(probe, "x", "y")
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Module", "__call__", error) + f"\n  while checking: {title}")
    if probe.calls != [("x",), ("x", "y")] or one != ("result", 1) or two != ("result", 2):
        return failed(f"{title}: module(x) and module(x, y) should call forward(x) and forward(x, y) and return "
                      f"what forward returns; forward saw {probe.calls}, the calls returned {one!r} and {two!r}.\n"
                      "  Hint: def __call__(self, *args): return self.forward(*args)")
    return passed("✔ module(*args) returns module.forward(*args)")
