"""Judge-side checks of chapter 4's `Module` base class and `Sequential`, mirroring `checks/ch04_nn_module_tree.py`
and `checks.nn.check_sequential`.

The kernel builds the course's tree of stand-in modules again (`in_kernel/ch04_nn.py`), but every parameter,
buffer and array in it holds the judge's secret values (of secret shapes) and every stand-in has a secret
tag. It runs the student's method and reports data only: the arrays `parameters()` returned (the judge
names each parameter by its values, so duplicates, missing ones and non-parameters are numbers), the tags
`children()` returned, each stand-in's `training` flag by tag, the gradients after `zero_grad()` of the
secret ones the judge set, the arrays `forward` received and `module(...)` returned. The verdicts and
messages are `module_tree`'s, told in the tree's names.

What only the kernel can say, and the judge takes as reported: that an item is a `Parameter` (its type's
name) and a flag's exact type. Neither can pass a wrong method: every verdict also needs the numbers.
"""
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from autograder.grading.judge.ch04_nn import STEP, NotBuilt, Step, layer_verdict, upstreams_for
from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, Returned
from autograder.grading.judge.replies import (Array, Either, Failed, Int, Json, ListOf, MapOf, Nested, Optional, Raised,
                                              Tag, Text, read, wire)
from autograder.student import gradcheck
from autograder.student.checks import ch04_nn_module_tree as tree_checks
from autograder.student.checks import ch04_nn as nn_checks
from autograder.student.verdict import failed
from autograder.grading.judge.registry import judges

LEAVES = 6                       # first, layers[0], layers[1], table['deep'][0], pair[1], block.leaf


def float32(values):
    """Values a float32 Parameter or Tensor holds exactly, so the judge can name them when they come back."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def secret_shape(rng, dims=(1, 2)):
    return tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(dims[0], dims[1] + 1))))


def same(got, want):
    """The very values the judge sent (shape and every element): how the judge names what comes back."""
    got = np.asarray(got)
    return got.shape == want.shape and np.array_equal(got.astype(np.float64), want)


def short(type_name):
    """A type's own name, as the in-kernel check prints it (numpy.ndarray -> ndarray, and
    Parameter (from earlier_chapters) -> Parameter)."""
    return str(type_name).split(" (from ", 1)[0].rsplit(".", 1)[-1] or "?"


class Shown(str):
    """A value the kernel could only describe: printed as its repr was."""

    def __repr__(self):
        return str(self)


class SecretTree:
    """The tree's values, drawn from the secret seed: 11 parameters (float32), each leaf's buffer (float32)
    and array (float64), and 9 distinct tags; every array differs from every other."""

    def __init__(self, rng):
        while True:
            self.params = [float32(rng.standard_normal(secret_shape(rng))) for _ in tree_checks.TREE_PARAMETERS]
            self.leaves = [(float32(rng.standard_normal(secret_shape(rng))), rng.standard_normal(secret_shape(rng)))
                           for _ in range(LEAVES)]
            arrays = [*self.params, *(a for pair in self.leaves for a in pair)]
            if not any(same(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:]):
                break
        self.tags = [int(t) for t in rng.choice(2 ** 31, len(tree_checks.TREE_MODULES), replace=False)]
        self.names = dict(zip(self.tags, tree_checks.TREE_MODULES))

    def request(self, check, **more):
        return {"kind": "module_tree", "check": check, "params": self.params,
                "leaves": [tuple(pair) for pair in self.leaves], "tags": self.tags, **more}

    def parameter_label(self, item):
        """An item of parameters(), as module_tree.parameter_labels names it."""
        if item.kind in ("tensor", "array"):
            index = next((i for i, p in enumerate(self.params) if same(item.value, p)), None)
            is_parameter = item.kind == "tensor" and short(item.type_name) == "Parameter"
            if index is not None and is_parameter:
                return tree_checks.TREE_PARAMETERS[index]
            if any(same(item.value, buffer) for buffer, _ in self.leaves):
                return tree_checks.BUFFER
            if any(same(item.value, stats) for _, stats in self.leaves):
                return tree_checks.ARRAY
            if item.kind == "tensor":
                return None if is_parameter else tree_checks.BUFFER
        return short(item.type_name) if item.kind != "none" else "NoneType"

    def module_label(self, item):
        """An item of children() (a tag, "module" or a type's name), as module_tree.module_labels names it."""
        if type(item) is int:
            return self.names.get(item, "another Module")
        return "another Module" if item == "module" else f"a {short(item)}"

    def flags(self, reply):
        """{tag: flag} -> the flags in TREE_MODULES order."""
        if set(reply) != {str(t) for t in self.tags}:
            raise ProbeFailure("the reply does not give one training flag per stand-in")
        return [reply[str(tag)] for tag in self.tags]


# ── the replies ──

@dataclass(frozen=True)
class FlagShown:
    """A `training` flag that is not a bool: its repr."""

    repr: str = wire(Text(60))


# A `training` flag: a bool as it is, anything else by its repr (the checks want True or False, exactly).
FLAG = Either(lambda v: type(v) is bool, Json(), Nested(FlagShown))


def flag(value):
    return Shown(value.repr) if isinstance(value, FlagShown) else value


@dataclass(frozen=True)
class NotAList:
    """A method that returned something else than a list: its type."""

    TAG: ClassVar[Tag] = Tag("type_name")
    type_name: str = wire(Text(None))


@dataclass(frozen=True)
class Items:
    """A returned list, item by item (the first ones), and its length."""

    items: list[Any] = wire(ListOf(Json()))
    count: int = wire(Int(low=0))

    def invalid(self):
        return f"'count' is {self.count}, fewer than the {len(self.items)} items" if self.count < len(self.items) else None


@dataclass(frozen=True)
class ReturnedItems(Items):
    """A returned list of values (parameters()), each reported as data."""

    items: list[Returned] = wire(ListOf(Raised()))


LISTED = Nested(NotAList | Items)


def listed(data, label):
    """A list the kernel reported item by item, as labels; or the short name of its type."""
    if isinstance(data, NotAList):
        return short(data.type_name)
    return [label(item) for item in data.items] + [None] * (data.count - len(data.items))


@dataclass(frozen=True)
class TreeReply:
    """What one check.module request left: the error the student's method raised (None: none), and what the
    check asked for, each reported only by its own check and only as far as the method ran."""

    error: Returned | None = wire(Optional(Raised()))
    parameters: NotAList | ReturnedItems | None = wire(Optional(Nested(NotAList | ReturnedItems)))
    children: NotAList | Items | None = wire(Optional(LISTED))
    leaf: NotAList | Items | None = wire(Optional(LISTED))
    initial: bool | FlagShown | None = wire(Optional(FLAG))
    flags: list[dict[str, bool | FlagShown]] | None = wire(Optional(ListOf(MapOf(FLAG), length="steps")))
    before: list[np.ndarray] | None = wire(Optional(ListOf(Array(), length="params")))
    grads: list[Returned] | None = wire(Optional(ListOf(Raised(), length="params")))
    values: list[np.ndarray] | None = wire(Optional(ListOf(Array(), length="params")))

    def needs(self, *keys):
        """The fields of a reply without an error: a missing one fails the probe."""
        missing = next((key for key in keys if getattr(self, key) is None), None)
        if missing:
            raise ProbeFailure(f"the reply's {missing!r} is missing")
        return [getattr(self, key) for key in keys]


def tree_reply(reply, tree):
    return read(reply, TreeReply, steps=len(tree_checks.TRAIN_EVAL_STEPS), params=len(tree.params))


@dataclass(frozen=True)
class Called:
    """module(x) then module(x, y): the arguments forward received at each call, and the two results."""

    calls: list[list[Returned]] = wire(ListOf(ListOf(Raised(), most=8), most=8))
    returned: list[Returned] = wire(ListOf(Raised(), length=2))


@dataclass(frozen=True)
class SequentialReply:
    """Sequential(Affine1(), Affine2()): forward and backward for each out_grad, the values of the parameters reachable
    from it, and what Sequential() returned on x."""

    runs: list[NotBuilt | Step] = wire(ListOf(STEP, length="runs"))
    found: list[np.ndarray] = wire(ListOf(Array()))
    empty: Returned = wire(Raised())


def kernel_error(name, error):
    method = tree_checks.METHODS[name]
    return tree_checks.error_verdict(name, describe_error("Module", method, error))


# ── check.module(name) ───────────────────────────────────────────────────────────────────────────

@judges("module")
def module(rng, name):
    """check.module(name): one behaviour of the Module base class on the secret tree."""
    return (yield from {"parameters": parameters, "children": children, "train_eval": train_eval,
                        "zero_grad": zero_grad, "call": call}[name](rng))


def parameters(rng):
    tree = SecretTree(rng)
    reply = tree_reply((yield tree.request("parameters")), tree)
    if reply.error is not None:
        return kernel_error("parameters", reply.error)
    got = listed(*reply.needs("parameters"), tree.parameter_label)
    shapes = {name: p.shape for name, p in zip(tree_checks.TREE_PARAMETERS, tree.params)}
    return tree_checks.parameters_verdict(got, shapes)


def children(rng):
    tree = SecretTree(rng)
    reply = tree_reply((yield tree.request("children")), tree)
    if reply.error is not None:
        return kernel_error("children", reply.error)
    children, leaf = reply.needs("children", "leaf")
    return tree_checks.children_verdict(listed(children, tree.module_label), listed(leaf, tree.module_label))


def train_eval(rng):
    tree = SecretTree(rng)
    reply = tree_reply((yield dict(tree.request("train_eval"), steps=list(tree_checks.TRAIN_EVAL_STEPS))), tree)
    if reply.initial is not None and flag(reply.initial) is not True:
        return tree_checks.train_eval_verdict(flag(reply.initial), [], [], [])
    if reply.error is not None:
        return kernel_error("train_eval", reply.error)
    (steps,) = reply.needs("flags")
    return tree_checks.train_eval_verdict(True, *([flag(f) for f in tree.flags(step)] for step in steps))


def zero_grad(rng):
    tree = SecretTree(rng)
    grads = [float32(rng.standard_normal(p.shape)) for p in tree.params]
    reply = tree_reply((yield tree.request("zero_grad", grads=grads)), tree)
    if reply.error is not None:
        return kernel_error("zero_grad", reply.error)
    count = len(tree.params)
    before, after, values = reply.needs("before", "grads", "values")
    if not all(same(b, g) for b, g in zip(before, grads)):
        raise ProbeFailure("the gradients reported before zero_grad are not the judge's")
    left = [g.kind == "array" and g.type_name == "numpy.ndarray" and not np.any(g.value)
            for g in after if g.kind != "none"]
    changed = not all(same(v, p) for v, p in zip(values, tree.params))
    return tree_checks.zero_grad_verdict(count, left, changed)


def call(rng):
    x, y, *results = (rng.standard_normal(secret_shape(rng)) for _ in range(4))
    reply = read((yield {"kind": "module_tree", "check": "call", "x": x, "y": y, "results": results}), Failed | Called)
    if isinstance(reply, Failed):
        return kernel_error("call", reply.error)
    names = {"x": x, "y": y, **dict(zip(tree_checks.RESULTS, results))}

    def label(item):
        if item.kind == "sequence":
            return tuple(label(i) for i in item.items)
        if item.kind == "array" and item.type_name == "numpy.ndarray":
            return next((name for name, v in names.items() if same(item.value, v)),
                        Shown(f"an array of shape {item.value.shape}"))
        return None if item.kind == "none" else Shown(f"a {short(item.type_name or item.error_type)}")

    seen = [tuple(label(a) for a in arguments) for arguments in reply.calls]
    return tree_checks.call_verdict(seen, [label(g) for g in reply.returned])


# ── check.sequential ──────────────────────────────────────────────────────────────────────────────

def affine_maps(rng):
    """Two secret maps x * k + c (k, c to two decimals) whose composition differs from the other order, from
    either map alone and from x itself by at least 0.1: each wrong Sequential is off by O(1)."""
    while True:
        (k1, c1), (k2, c2) = np.round(rng.uniform(0.5, 2.5, (2, 2)) * rng.choice([-1, 1], (2, 2)), 2)
        right = (k1 * k2, k2 * c1 + c2)
        wrongs = [(k1 * k2, k1 * c2 + c1), (k1, c1), (k2, c2), (1.0, 0.0)]
        if all(abs(right[0] - a) + abs(right[1] - b) >= 0.1 for a, b in wrongs):
            return [(float(k1), float(c1)), (float(k2), float(c2))]


def signed(c):
    return f"+ {c:g}" if c >= 0 else f"- {-c:g}"


@judges("sequential")
def sequential(rng, seed=0):
    """Sequential(Affine1(), Affine2()) on the judge's x: output and gradient against the composed maps,
    the second stand-in's Parameter reachable, and Sequential() the identity."""
    (k1, c1), (k2, c2) = maps = affine_maps(rng)
    label = "Sequential(Affine1(), Affine2())"
    x = gradcheck.sample(secret_shape(rng, (2, 2)), "real", rng)
    offset = float32(rng.standard_normal(secret_shape(rng)))
    upstreams = upstreams_for(x.shape, rng)
    reply = read((yield {"kind": "sequential", "maps": maps, "offset": offset, "x": x,
                         "upstreams": [u for _, u in upstreams]}), NotBuilt | SequentialReply, runs=len(upstreams), grads=1)
    if isinstance(reply, NotBuilt):
        return failed(describe_error("Sequential", "__init__", reply.built))
    formula = f"(x * {k1:g} {signed(c1)}) * {k2:g} {signed(c2)}: Affine1, then Affine2"
    verdict = layer_verdict(label, reply.runs, x, {}, lambda a: (a * k1 + c1) * k2 + c2, formula,
                            nn_checks.SEQUENTIAL_HINT, upstreams)
    if not verdict.passed:
        return verdict
    problem = nn_checks.sequential_reach_problem(label, any(same(a, offset) for a in reply.found))
    if problem:
        return problem
    empty = reply.empty
    if empty.failed:
        return failed(describe_error("Sequential()", "forward", empty))
    is_tensor = empty.kind == "tensor"
    return nn_checks.empty_sequential_problem(is_tensor, is_tensor and same(empty.value, x)) or verdict
