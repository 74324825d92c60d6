"""Checks of the `Module` base class on a small tree of stand-in modules built by the checker.

The tree hides parameters and sub-modules everywhere a real model does: in attributes, lists,
tuples, dicts and lists inside dicts, in a sub-module's own sub-module (three levels, as in a
Sequential inside a model), with one parameter and one module referenced twice. Only the
`Module` method under test is the student's: for `train`, `eval` and `zero_grad` the stand-ins
bring their own `parameters()` and `children()`, so a broken `parameters()` costs one exercise.

Each check gathers what the student's method did, named by the tree's own names (`TREE_MODULES`,
`TREE_PARAMETERS`), and hands it to a `*_verdict` function; the judge (`grading/judge/ch04_nn_module_tree.py`)
builds the same tree in the kernel with secret values and gives its data to the same verdicts.
"""
import numpy as np

from autograder.student.checks.ch04_nn_facts import LEAF_WEIGHTS, PARAMETER_SHAPES, build_tree
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed

# The stand-ins, named as the messages name them; the judge reports the kernel's answers in these names.
TREE_MODULES = ("tree", "first", "layers[0]", "layers[1]", "table['deep'][0]", "pair[1]", "empty", "block",
                "block.leaf")
TREE_CHILDREN = TREE_MODULES[1:-1]                  # block.leaf is a grandchild
GRANDCHILDREN = TREE_MODULES[-1:]
TREE_PARAMETERS = ("first.w", "bias", "layers[0].w", "layers[1].w", "table['scale']", "table['deep'][0].w",
                   "table['deep'][1]['inner']", "pair[0]", "pair[1].w", "block.gain", "block.leaf.w")
DEEP_PARAMETERS = ("block.leaf.w",)                # held by a grandchild: found only by asking the children
BUFFER, ARRAY = "plain Tensor (a buffer)", "ndarray"      # what a leaf holds that is not a parameter
TITLES = {name: f"Module.{method} on a tree of stand-in modules" for name, method in
          (("parameters", "parameters()"), ("children", "children()"), ("train_eval", "train() / eval()"),
           ("zero_grad", "zero_grad()"))}
METHODS = {"parameters": "parameters", "children": "children", "train_eval": "train/eval", "zero_grad": "zero_grad",
           "call": "__call__"}
ONLY_FIRST_LAYER_OFF = [True, True, False, True, True, True, True, True, True]    # after tree.layers[0].eval()
CALLS = [("x",), ("x", "y")]                                            # module(x), then module(x, y)
RESULTS = ["result 1", "result 2"]                                      # what forward returned, call by call


def public_tree(ns, helpers):
    """The tree of stand-in modules (ch04_nn_facts.build_tree) holding the checks' public values; the judge builds
    it with secret ones."""
    rng = np.random.default_rng(5)
    values = [rng.standard_normal(shape) for shape in PARAMETER_SHAPES]
    return build_tree(ns, helpers, values, [(np.zeros(2), np.ones(3))] * len(LEAF_WEIGHTS))


TREE_PICTURE = ("Tree: first=Leaf(w), bias, layers=[Leaf, Leaf], table={'scale': p, 'deep': [Leaf, {'inner': p}]}, "
                "pair=(p, Leaf), tied=first.w, again=first, empty=Empty(), block=Block(gain, leaf=Leaf); each Leaf "
                "has w, a plain Tensor buffer and an ndarray")


# ── verdicts, from what the student's method did, told in the tree's names ──

def parameters_verdict(got, shapes):
    """`got`: the type name of what parameters() returned when it is not a list, else one label per item: a
    parameter's name (a key of `shapes`, {name: shape} of the tree's parameters), BUFFER, ARRAY or another
    type's name for what is not a Parameter, None for a Parameter the tree does not hold."""
    title = TITLES["parameters"]
    if isinstance(got, str):
        return failed(f"{title}: returned a {got}, expected a list of Parameters.")
    strays = [label for label in got if label is not None and label not in shapes]
    if strays:
        hint = ("a plain Tensor is a Tensor but not a Parameter (a buffer, such as a running statistic): the test "
                "that picks parameters asks for the class Parameter itself." if strays[0] == BUFFER else
                "only a value of the class Parameter is a parameter; whatever else a module holds (arrays, numbers, "
                "strings) stays out of the list.")
        return failed(f"{title}: the list holds a {strays[0]}; only Parameters belong in it.\n  {TREE_PICTURE}.\n"
                      f"  Hint: {hint}")
    named = [label for label in got if label is not None]
    distinct = len(set(named)) + (len(got) - len(named))
    if distinct != len(got):
        return failed(f"{title}: some parameters appear twice ({len(got)} items, {distinct} distinct).\n"
                      f"  {TREE_PICTURE}.\n  Hint: a parameter or module reachable twice (tied weights) must be "
                      "listed once: remember what you have already collected, by id().")
    missing = [name for name in shapes if name not in named]
    if missing:
        listed = ", ".join(f"{name}{tuple(shapes[name])}" for name in missing)
        hint = ("a module inside a sub-module holds it: ask each sub-module for its own parameters(), which looks "
                "inside its sub-modules in turn (recursion), rather than reading only its attributes."
                if set(missing) <= set(DEEP_PARAMETERS) else
                "look inside sub-modules (recursively), lists, tuples and dicts, including containers nested in "
                "containers.")
        return failed(f"{title}: found {len(got)} of the {len(shapes)} parameters; missing [{listed}].\n"
                      f"  {TREE_PICTURE}.\n  Hint: {hint}")
    return passed(f"✔ Module.parameters() finds all {len(shapes)} parameters of a nested tree, each once")


def children_verdict(got, leaf):
    """`got`, `leaf`: what tree.children() and tree.first.children() returned: a type name when it is not a
    list, else one label per item: a module's name in TREE_MODULES, "another Module", or "a <type>"."""
    title = TITLES["children"]
    if isinstance(got, str) or any(label not in TREE_MODULES and label != "another Module" for label in got):
        shown = f"a {got}" if isinstance(got, str) else "[" + ", ".join(got) + "]"
        return failed(f"{title}: expected a list of Modules, received {shown:.160}.")
    named = [label for label in got if label in TREE_MODULES]
    if len(set(named)) != len(named):
        return failed(f"{title}: a module appears twice.\n  {TREE_PICTURE}.\n  Hint: `again` is `first` a second "
                      "time: list each module once.")
    missing = [name for name in TREE_CHILDREN if name not in named]
    extra = len([label for label in got if label not in TREE_CHILDREN])
    deeper = [label for label in got if label in GRANDCHILDREN]
    if deeper and not missing:
        return failed(f"{title}: the list holds {', '.join(deeper)}, a module inside `block`, not inside the tree.\n"
                      f"  {TREE_PICTURE}.\n  Hint: children() stops at the first level; parameters(), train() and "
                      "eval() reach deeper by asking each child in turn.")
    if missing or extra:
        return failed(f"{title}: missing {missing or 'none'}, {extra} unexpected.\n  {TREE_PICTURE}.\n"
                      "  Hint: children() lists the modules directly inside this one (in attributes, lists, tuples "
                      "and dicts, however nested), not their own children.")
    if leaf != []:
        shown = f"a {leaf}" if isinstance(leaf, str) else "[" + ", ".join(leaf) + "]"
        return failed(f"{title}: a Leaf, which holds no module, returned {shown:.80} instead of [].")
    return passed(f"✔ Module.children() lists the {len(TREE_CHILDREN)} direct sub-modules, each once")


# After the first three: eval() on a tree already in evaluation mode, and train() on one already training.
TRAIN_EVAL_STEPS = ("eval", "train", "layers[0].eval", "eval", "eval", "train", "train")


def train_eval_verdict(initial, after_eval, after_train, only_one, *again):
    """The `training` flags of TREE_MODULES: of the new tree, then after each of TRAIN_EVAL_STEPS (`again`: the
    flags after the fourth to the seventh; the judge and the check take all seven)."""
    title = TITLES["train_eval"]
    if initial is not True:
        return failed(f"{title}: a new module has training = {initial!r}; modules start in training mode.")
    names = "[" + ", ".join(TREE_MODULES) + "]"
    for method, flags, want in (("eval", after_eval, False), ("train", after_train, True)):
        wrong = [name for name, flag in zip(TREE_MODULES, flags) if flag is not want]
        if not wrong:
            continue
        hint = (f"{', '.join(wrong)} sits inside a child, so setting each child's flag is not enough: call the "
                f"child's own {method}(), which reaches its children in turn."
                if set(wrong) <= set(GRANDCHILDREN) else
                f"{method}() sets this module's own training flag, then asks every child to do the same through the "
                f"child's own {method}(); the children sit in attributes, lists and dicts, and children() lists them.")
        return failed(f"{title}: after tree.{method}(), training is {flags} for {names}; expected all {want}.\n"
                      f"  Hint: {hint}")
    if list(only_one) != ONLY_FIRST_LAYER_OFF:
        return failed(f"{title}: tree.layers[0].eval() should switch only that module (and its own children) to "
                      f"evaluation; training flags became {only_one}.")
    if len(again) == 4:
        for method, flags, want in (("eval", again[1], False), ("train", again[3], True)):
            if any(flag is not want for flag in flags):
                return failed(f"{title}: after tree.{method}() twice in a row, training is {flags} for {names}; "
                              f"expected all {want}.\n  Hint: {method}() sets the flag to {want} whatever it was, "
                              f"on a module already {'in evaluation' if not want else 'training'} too: it is not a "
                              "switch that flips.")
    return passed(f"✔ train() and eval() reach all {len(TREE_MODULES)} modules of a nested tree")


def zero_grad_verdict(count, left_zeros, changed):
    """`left_zeros`: for each of the `count` parameters still holding a .grad after zero_grad(), whether that
    grad is an ndarray of zeros; `changed`: whether a parameter's values changed."""
    title = TITLES["zero_grad"]
    if left_zeros:
        hint = ("zero_grad forgets a gradient, leaving None, rather than filling it with zeros: None says 'no "
                "gradient yet', and the optimizers of chapter 5 skip such parameters." if all(left_zeros) else
                "zero_grad reaches every parameter of the tree, the ones parameters() lists, at any depth.")
        return failed(f"{title}: {len(left_zeros)} of {count} parameters still have a .grad.\n  Hint: {hint}")
    if changed:
        return failed(f"{title}: zero_grad changed the parameters' values; it must only forget their gradients.")
    return passed(f"✔ zero_grad() clears the gradients of all {count} parameters")


def call_verdict(seen, gave):
    """`seen`: the arguments forward received at each call, named as in CALLS; `gave`: what module(x) and
    module(x, y) returned, named as in RESULTS."""
    if list(seen) != CALLS or list(gave) != RESULTS:
        return failed(f"Module.__call__: module(x) and module(x, y) should call forward(x) and forward(x, y) and "
                      f"return what forward returns; forward saw {seen}, the calls returned {gave[0]!r} and "
                      f"{gave[1]!r}.\n  Hint: __call__ hands every argument it receives on to forward, in the same order, "
                      "and gives back what forward returned.")
    return passed("✔ module(*args) returns module.forward(*args)")


def error_verdict(name, message):
    """A method of the check `name` raised: `message` is the exception, told by describe_exception."""
    where = TITLES.get(name, "Module.__call__")
    return failed(f"{message}\n  while checking: {where}")


# ── the in-kernel checks: gather, then the verdicts above ──

def parameter_labels(items, names, Parameter, Tensor):
    """Each item of parameters() by its tree name (`names`: id -> name), or what else it is."""
    return [names[id(item)] if id(item) in names else None if isinstance(item, Parameter)
            else BUFFER if isinstance(item, Tensor) else type(item).__name__ for item in items]


def module_labels(items, names, Module):
    """Each item of children() by its tree name (`names`: id -> name), or what else it is."""
    return [names[id(item)] if id(item) in names else "another Module" if isinstance(item, Module)
            else f"a {type(item).__name__}" for item in items]


def check_parameters(ns):
    try:
        tree, _, params = run_quietly(public_tree, ns, False)
        got = run_quietly(tree.parameters)
    except Exception as error:  # noqa: BLE001
        return error_verdict("parameters", describe_exception("Module", "parameters", error))
    names = {id(p): name for name, p in zip(TREE_PARAMETERS, params)}
    labels = type(got).__name__ if not isinstance(got, list) else \
        parameter_labels(got, names, ns["Parameter"], ns["Tensor"])
    return parameters_verdict(labels, {name: tuple(p.shape) for name, p in zip(TREE_PARAMETERS, params)})


def check_children(ns):
    Module = ns["Module"]
    try:
        tree, modules, _ = run_quietly(public_tree, ns, False)
        got = run_quietly(tree.children)
        leaf_children = run_quietly(tree.first.children)
    except Exception as error:  # noqa: BLE001
        return error_verdict("children", describe_exception("Module", "children", error))
    names = {id(m): name for name, m in zip(TREE_MODULES, modules)}
    return children_verdict(*(type(v).__name__ if not isinstance(v, list) else module_labels(v, names, Module)
                              for v in (got, leaf_children)))


def check_train_eval(ns):
    try:
        tree, modules, _ = run_quietly(public_tree, ns, True)
        initial = tree.training
        if initial is not True:
            return train_eval_verdict(initial, [], [], [])
        flags = []
        for step in TRAIN_EVAL_STEPS:
            run_quietly(tree.layers[0].eval if step == "layers[0].eval" else getattr(tree, step))
            flags.append([m.training for m in modules])
    except Exception as error:  # noqa: BLE001
        return error_verdict("train_eval", describe_exception("Module", "train/eval", error))
    return train_eval_verdict(initial, *flags)


def check_zero_grad(ns):
    try:
        tree, _, params = run_quietly(public_tree, ns, True)
        for p in params:
            p.grad = np.ones(p.shape, dtype=p.data.dtype)
        values = [p.data.copy() for p in params]
        run_quietly(tree.zero_grad)
    except Exception as error:  # noqa: BLE001
        return error_verdict("zero_grad", describe_exception("Module", "zero_grad", error))
    left = [isinstance(p.grad, np.ndarray) and not p.grad.any() for p in params if p.grad is not None]
    changed = any(not np.array_equal(v, p.data) for v, p in zip(values, params))
    return zero_grad_verdict(len(params), left, changed)


def check_call(ns):
    def forward(self, *args):
        self.calls.append(args)
        return RESULTS[min(len(self.calls), len(RESULTS)) - 1]

    Probe = type("Probe", (ns["Module"],), {"forward": forward})
    try:
        probe = Probe()
        probe.calls = []
        one = run_quietly(probe, "x")
        two = run_quietly(probe, "x", "y")
    except Exception as error:  # noqa: BLE001
        return error_verdict("call", describe_exception("Module", "__call__", error))
    return call_verdict(probe.calls, [one, two])


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

MODULE_CHECKS = {
    "parameters": check_parameters,
    "children": check_children,
    "train_eval": check_train_eval,
    "zero_grad": check_zero_grad,
    "call": check_call,
}


@register("module")
def module_check(namespace, name):
    """One behaviour of the Module base class, on stand-in modules: parameters, children,
    train_eval, zero_grad, call."""
    return MODULE_CHECKS[name](namespace)
