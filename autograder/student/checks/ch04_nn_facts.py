"""What chapter 4's checks build and gather in the kernel: the tree of stand-in modules that `Module`'s methods are
checked on, the Parameters a module reaches, and a LogSumExp known to be right (so SoftmaxLoss is checked alone).

NumPy and the standard library only, no course imports: the judge ships this file as text to the kernel
(probes.SHIPPED), so the course's checks and the judge's worker build the very same tree, the checks with public
values, the judge with secret ones.
"""
import numpy as np

# The tree's eleven parameters in construction order (checks/ch04_nn_module_tree.TREE_PARAMETERS): their shapes, and
# which of them are the weights of the six Leaf modules, in the order the Leaves are built.
PARAMETER_SHAPES = ((2, 2), (3,), (2, 2), (2, 2), (1,), (2, 2), (2,), (4,), (2, 2), (2,), (2, 2))
LEAF_WEIGHTS = (0, 2, 3, 5, 8, 10)  # first, layers[0], layers[1], table['deep'][0], pair[1], block.leaf


def held_by(module, Module, Parameter):
    """The Parameters and Modules in `module`'s attributes, also inside lists, tuples and dicts, each once, in the
    order a depth-first reading of the attributes meets them."""
    kinds, met, out = (Parameter, Module), set(), []
    pending = list(reversed(list(vars(module).values())))
    while pending:
        entry = pending.pop()
        if isinstance(entry, kinds):
            out += [] if id(entry) in met else [entry]
            met.add(id(entry))
        elif isinstance(entry, dict):
            pending.extend(reversed(list(entry.values())))
        elif isinstance(entry, (tuple, list)):
            pending.extend(reversed(list(entry)))
    return out


def direct_children(module, Module, Parameter):
    """The Modules held directly by `module`'s attributes (through lists, tuples, dicts), each once."""
    return [entry for entry in held_by(module, Module, Parameter) if isinstance(entry, Module)]


def reachable_parameters(module, Module, Parameter):
    """Every Parameter reachable from `module` through the attributes of Modules and the items of lists, tuples
    and dicts, each once: what a model holds (a Sequential's), and the stand-ins' own parameters()."""
    order, counted, visited, pending = [], set(), set(), [module]
    while pending:
        node = pending.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        inside = held_by(node, Module, Parameter)
        for entry in inside:
            if isinstance(entry, Parameter) and id(entry) not in counted:
                counted.add(id(entry))
                order.append(entry)
        pending.extend(reversed([entry for entry in inside if isinstance(entry, Module)]))
    return order


def build_tree(ns, helpers, values, leaves):
    """A model-shaped tree of stand-in modules holding `values` (the eleven parameters' arrays, in
    PARAMETER_SHAPES order) and `leaves` (each Leaf's (buffer, stats) arrays, in LEAF_WEIGHTS order). With
    `helpers`, the stand-ins bring their own parameters() and children(), so that train/eval/zero_grad are checked
    alone. Returns the tree, its modules (TREE_MODULES order) and its parameters (TREE_PARAMETERS order)."""
    Tensor, Module, Parameter = ns["Tensor"], ns["Module"], ns["Parameter"]
    built = iter(range(len(LEAF_WEIGHTS)))

    def param(index):
        return Parameter(np.array(values[index]))

    extra = {}
    if helpers:
        extra = {"parameters": lambda self: reachable_parameters(self, Module, Parameter),
                 "children": lambda self: direct_children(self, Module, Parameter)}

    def init_leaf(self):
        index = next(built)
        buffer, stats = leaves[index]
        Module.__init__(self)
        self.w = param(LEAF_WEIGHTS[index])
        self.buffer = Tensor(np.array(buffer))       # a plain Tensor: not a parameter
        self.stats = np.array(stats)                 # an ndarray: not a parameter
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


def logsumexp(a, axes=None):
    """log(sum(exp(a))) over `axes` (removed from the shape), with the maximum shifted out first."""
    shift = np.max(a, axis=axes, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(a - shift), axis=axes, keepdims=True)) + shift, axis=axes)


def logsumexp_standin(Function, Tensor):
    """LogSumExp known to be right, as {"LogSumExp": the op class, "logsumexp": its function}: put in the notebook's
    place, so that SoftmaxLoss is checked alone."""
    class LogSumExp(Function):
        def __init__(self, axes=None):
            self.axes = axes

        def forward(self, a):
            return logsumexp(a, self.axes)

        def backward(self, out_grad, node):
            a = node._inputs[0].data
            axes = tuple(range(a.ndim)) if self.axes is None else self.axes
            kept = np.expand_dims(out_grad.data, axes) if np.ndim(out_grad.data) < a.ndim else out_grad.data
            soft = np.exp(a - np.expand_dims(logsumexp(a, self.axes), axes))
            return Tensor(kept * soft, dtype=a.dtype, requires_grad=False)

    return {"LogSumExp": LogSumExp, "logsumexp": lambda a, axes=None: LogSumExp(axes)(a)}
