# %% [markdown] locked
# # Chapter 4 · Layers, models and losses
#
# Chapter 3 gave babygrad gradients: any expression built from its operations can be differentiated
# with one call to `backward()`. But a neural network written as one long expression would be
# unreadable: `relu(x @ W1 + b1) @ W2 + b2`, with every weight created, remembered and handed to the
# optimizer by hand. Real libraries organise that code into **modules**: small objects that own their
# weights and know how to compute their output. A layer is a module, a whole model is a module made
# of modules, and a loss is a module too.
#
# You will write:
#
# 1. `Module`, the base class that finds every weight inside a model, switches a model between
#    training and evaluation, and clears gradients;
# 2. the layers: `Linear`, the activations `ReLU`, `Sigmoid`, `Tanh`, `Identity`, and `Sequential`,
#    `Flatten`, `Dropout`, `BatchNorm1d`, `LayerNorm1d`, and `Embedding`, a table of learned vectors
#    looked up by integer ids;
# 3. the losses: `MSELoss`, `SoftmaxLoss` (cross-entropy) on top of a new operation, `LogSumExp`,
#    whose forward must not overflow, the `Softmax` operation itself, and `BCEWithLogitsLoss` for
#    yes/no answers, which must not overflow either;
# 4. two **fused** operations, `Affine` and `SoftmaxCrossEntropy`, each doing the work of a layer or a
#    loss in one node of the graph, with a backward you derive by hand: training gets faster.
#
# ### How to work in this notebook
#
# * Run the cells from the top. The first code cell loads chapters 2 and 3 (`Tensor`, the operations
#   and the engine) as finished, provided code, so your marks here never depend on earlier chapters.
# * Fill in each cell that says `# YOUR CODE HERE` and delete the `raise NotImplementedError()`.
# * Run the check cell under it: `✔ ...` means it passed; a failure names the layer, the input, the
#   element that is wrong, what was expected, and the usual cause.
# * Every layer is checked against a NumPy computation of its formula, written independently of your
#   code, with the layer's own weights: the output, and the gradient of the input and of every weight
#   (by finite differences of that formula, as in chapter 3). Check cells are locked and run again at
#   grading with **hidden tests** (more shapes, seeds and settings).
# * The checks test one exercise at a time: the `Sequential` check uses stand-in layers, the loss
#   check a stand-in `LogSumExp`, so a mistake costs only the exercise it is in.

# %% provided
import numpy as np

from earlier_chapters import *          # chapters 2 and 3: Tensor, Function, the operations, backward
from autograder.student.checks import Checker

check = Checker(globals())

# %% [markdown] locked
# ## 4.1 Parameters and modules
#
# A model's weights are tensors like any other, with one difference: they are *the model's own*.
# They live as long as the model, and training changes them. An input batch or an intermediate result
# is not a weight. To tell them apart, weights get their own class, `Parameter`: a `Tensor` and
# nothing more, but a `Tensor` that says "train me".

# %% provided export
class Parameter(Tensor):
    """A Tensor that belongs to a model: `Module.parameters()` collects exactly these, and optimizers train them."""

# %% [markdown] locked
# A **module** is any object with parameters and a `forward` method. Modules nest: a model holds
# layers, a block holds layers, and layers sometimes sit in lists or dicts. Here is a small model,
# with its parameters in the boxes:
#
# ```
#   Model                                  model.parameters()  →  [W1, b1, W2, b2, gamma]
#   ├── encoder: Linear ─── [W1] [b1]      model.children()    →  [encoder, layers[0], layers[1]]
#   ├── layers: [ ReLU,
#   │             Linear ─── [W2] [b2] ]   model.eval()        →  model, encoder, layers[0], layers[1]
#   ├── scale: {"gamma": [gamma]}                                  all get training = False
#   └── tied: the same W1 again (listed once)
# ```
#
# The base class `Module` does the bookkeeping that every model needs, by looking at the module's
# attributes (`vars(self)`, a dict from attribute names to values):
#
# * `parameters()` returns every `Parameter` inside the module: in its attributes, inside lists,
#   tuples and dicts (also nested ones, such as a list inside a dict), and, recursively, inside every
#   sub-module. **Each parameter once**: a tied weight, referenced twice, is still one weight, and an
#   optimizer that saw it twice would update it twice. A plain `Tensor` or NumPy array is not a
#   parameter.
# * `children()` returns the modules directly inside this one (found the same way, each once), but
#   not their own children.
# * `train()` and `eval()` set the flag `training` to `True` or `False` on the module **and on all
#   the modules inside it**. Two layers of this chapter, `Dropout` and `BatchNorm1d`, behave
#   differently while training and while evaluating. Modules start in training mode (the class
#   attribute `training = True`).
# * `zero_grad()` sets `.grad = None` on every parameter. Chapter 3's `backward()` *adds* to `.grad`,
#   so gradients must be cleared before each training step (chapter 5 shows what happens if not).
# * `__call__(*args)` runs `forward(*args)`, so that `model(x)` reads like a function call.
#
# Start with `members(value)`, a generator that yields the `Parameter`s and `Module`s found in one
# value: the value itself if it is one of them, or those inside it if it is a list, a tuple or a dict
# (look at a dict's values), however deeply nested. It does not look inside modules. Then
# `members(vars(self))` gives everything directly in a module, and the methods are short.

# %% solution id=module export
def members(value):
    """Yield the Parameters and Modules in `value`: itself, or inside its lists, tuples and dicts (nested)."""
    ### BEGIN SOLUTION
    if isinstance(value, (Parameter, Module)):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from members(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from members(item)
    ### END SOLUTION


class Module:
    """The base of every layer, model and loss: owns parameters and sub-modules, computes `forward`."""

    training = True

    def forward(self, *args):
        raise NotImplementedError("a module subclass defines forward")

    def children(self):
        """The modules directly inside this one, each once."""
        ### BEGIN SOLUTION
        found, seen = [], set()
        for item in members(vars(self)):
            if isinstance(item, Module) and id(item) not in seen:
                seen.add(id(item))
                found.append(item)
        return found
        ### END SOLUTION

    def parameters(self):
        """Every Parameter of this module and of the modules inside it, each once."""
        ### BEGIN SOLUTION
        found, seen = [], set()
        for item in members(vars(self)):
            for p in ([item] if isinstance(item, Parameter) else item.parameters()):
                if id(p) not in seen:
                    seen.add(id(p))
                    found.append(p)
        return found
        ### END SOLUTION

    def train(self):
        """Training mode for this module and every module inside it."""
        ### BEGIN SOLUTION
        self.training = True
        for child in self.children():
            child.train()
        return self
        ### END SOLUTION

    def eval(self):
        """Evaluation mode for this module and every module inside it."""
        ### BEGIN SOLUTION
        self.training = False
        for child in self.children():
            child.eval()
        return self
        ### END SOLUTION

    def zero_grad(self):
        """Forget the gradients of every parameter: .grad = None."""
        ### BEGIN SOLUTION
        for p in self.parameters():
            p.grad = None
        ### END SOLUTION

    def __call__(self, *args):
        ### BEGIN SOLUTION
        return self.forward(*args)
        ### END SOLUTION

# %% [markdown] locked
# The checks build a tree of stand-in modules that hides parameters everywhere a real model does
# (attributes, lists, tuples, dicts, a list inside a dict, a tied parameter, the same module twice,
# a plain Tensor and an ndarray that are *not* parameters). For `train`/`eval` and `zero_grad` the
# stand-ins bring their own `parameters()` and `children()`, so only the method under test is yours.

# %% test id=test_module_parameters points=3
verdict = check.module("parameters")
assert verdict.passed, verdict.message

# %% test id=test_module_children points=1
verdict = check.module("children")
assert verdict.passed, verdict.message

# %% test id=test_module_train_eval points=2
verdict = check.module("train_eval")
assert verdict.passed, verdict.message

# %% test id=test_module_zero_grad points=1
verdict = check.module("zero_grad")
assert verdict.passed, verdict.message

# %% test id=test_module_call points=1
verdict = check.module("call")
assert verdict.passed, verdict.message

# %% [markdown] locked
# ## 4.2 `Linear`: the layer everything is built on
#
# A linear layer maps each input row $x$ (with `in_features` numbers) to an output row with
# `out_features` numbers, each a weighted sum of the inputs plus a constant. For a batch of $N$ rows
# at once, $X$ of shape $(N, \text{in})$:
#
# $$Y = X W + b, \qquad W : (\text{in}, \text{out}), \quad b : (1, \text{out}), \quad Y : (N, \text{out}) .$$
#
# ```
#     X (N, in)   @   W (in, out)   =   XW (N, out)   +   b (1, out) ──broadcast_to──► (N, out)
# ```
#
# *Example.* $X = (1\;\;2)$, $W = \begin{pmatrix}0.5 & -1 & 0\\ 0.25 & 0.5 & 2\end{pmatrix}$,
# $b = (0.1\;\;0.2\;\;0.3)$: $XW = (0.5 + 0.5,\; -1 + 1,\; 0 + 4) = (1,\; 0,\; 4)$ and
# $Y = (1.1,\; 0.2,\; 4.3)$.
#
# **The bias needs an explicit broadcast.** NumPy would add a $(1, \text{out})$ row to an
# $(N, \text{out})$ matrix by itself, but babygrad's elementwise operations do not broadcast in
# `backward`: `Add` hands each input an `out_grad` of the *output's* shape. So write
# `self.bias.broadcast_to(...)`; chapter 3's `BroadcastTo.backward` then sums the $N$ rows of
# `out_grad` into the bias's gradient, as it must, since the one bias row was used $N$ times. You
# write no backward here: the layer is built from operations that already have one.
#
# **The starting weights.** All-equal weights would make every output unit compute the same thing,
# and they would stay equal forever. So weights start random, small enough that outputs do not
# explode as layers are stacked: uniform in $[-1/\sqrt{\text{in}},\, 1/\sqrt{\text{in}}]$ (chapter 7
# compares better choices). Draw `weight`, then `bias` (same range), from one NumPy generator made
# with `np.random.default_rng` and the layer's `seed`, so that `seed` makes a layer reproducible,
# and wrap each array in a `Parameter` (float32, the Tensor default). With `bias=False`, `self.bias`
# is `None`.

# %% solution id=linear export
class Linear(Module):
    """y = x @ weight + bias, for a batch of rows x of shape (N, in_features)."""

    def __init__(self, in_features, out_features, bias=True, *, seed=None):
        self.in_features, self.out_features = in_features, out_features
        ### BEGIN SOLUTION
        rng = np.random.default_rng(seed)
        bound = 1 / np.sqrt(in_features)
        self.weight = Parameter(rng.uniform(-bound, bound, (in_features, out_features)))
        self.bias = Parameter(rng.uniform(-bound, bound, (1, out_features))) if bias else None
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        out = x @ self.weight
        if self.bias is not None:
            out = out + self.bias.broadcast_to(out.shape)
        return out
        ### END SOLUTION

# %% test id=test_linear_init points=2
verdict = check.linear_init(3, 4)
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.linear_init(10, 2), check.linear_init(1, 7))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_linear points=3
verdict = check.linear(in_features=3, out_features=4, batch=5)
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.linear(3, 4, batch=5, bias=False, seed=1),
                    check.linear(6, 2, batch=1, seed=2),
                    check.linear(1, 3, batch=7, seed=3))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 4.3 Activations as modules
#
# Between two linear layers there must be a bend, or the two collapse into one: $(XW_1)W_2 = X(W_1W_2)$.
# Chapter 3 wrote the bends as operations, `ReLU`, `Sigmoid` and `Tanh`. Inside a `Sequential` model
# (next section) every step must be a module, so each gets a module with a one-line `forward`, and
# `Identity` returns its input unchanged (handy as a placeholder).
#
# **A clash of names.** The modules take the names `ReLU`, `Sigmoid` and `Tanh`, which chapter 3
# gave to the operations. The cell below keeps the operations under new names, `ReLUFunction`,
# `SigmoidFunction` and `TanhFunction`, and points the helpers `relu(x)`, `sigmoid(x)` and `tanh(x)`
# at them. Inside your modules call the helpers. Writing `ReLU()(x)` inside `ReLU.forward` would
# make the module call itself, forever.

# %% provided export
ReLUFunction, SigmoidFunction, TanhFunction = ReLU, Sigmoid, Tanh


def relu(a):
    return ReLUFunction()(a)


def sigmoid(a):
    return SigmoidFunction()(a)


def tanh(a):
    return TanhFunction()(a)

# %% solution id=activations export
class ReLU(Module):
    def forward(self, x):
        ### BEGIN SOLUTION
        return relu(x)
        ### END SOLUTION


class Sigmoid(Module):
    def forward(self, x):
        ### BEGIN SOLUTION
        return sigmoid(x)
        ### END SOLUTION


class Tanh(Module):
    def forward(self, x):
        ### BEGIN SOLUTION
        return tanh(x)
        ### END SOLUTION


class Identity(Module):
    def forward(self, x):
        ### BEGIN SOLUTION
        return x
        ### END SOLUTION

# %% test id=test_activations points=2
verdict = check.all(check.activation("ReLU"), check.activation("Sigmoid"),
                    check.activation("Tanh"), check.activation("Identity"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.activation("ReLU", (2, 3, 2), seed=1), check.activation("Sigmoid", (7,), seed=2),
                    check.activation("Tanh", (3, 5), seed=3), check.activation("Identity", (2, 2), seed=4))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 4.4 `Sequential` and `Flatten`
#
# Most models are a pipeline: the output of one module is the input of the next.
# `Sequential(Linear(784, 128), ReLU(), Linear(128, 10))` is such a model, and itself a module.
# Keep the modules in a **list attribute**, so that `parameters()` finds their weights, and apply
# them in order in `forward`. With no modules, `forward` returns its input.
#
# `Flatten` turns a batch of images of shape $(N, 28, 28)$, or any $(N, d_1, d_2, \dots)$, into rows
# of shape $(N, d_1 d_2 \cdots)$, the shape `Linear` expects. The first axis, the batch, stays. It is
# a `reshape`, so chapter 3's `Reshape.backward` already sends the gradient back in the input's shape.
# *Example.* A batch of shape $(2, 3, 4)$ becomes $(2, 12)$.

# %% solution id=sequential export
class Sequential(Module):
    """Modules applied one after the other."""

    def __init__(self, *modules):
        ### BEGIN SOLUTION
        self.modules = list(modules)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        for module in self.modules:
            x = module(x)
        return x
        ### END SOLUTION


class Flatten(Module):
    """(N, d1, d2, ...) → (N, d1 * d2 * ...)."""

    def forward(self, x):
        ### BEGIN SOLUTION
        return x.reshape((x.shape[0], int(np.prod(x.shape[1:]))))
        ### END SOLUTION

# %% test id=test_sequential points=2
verdict = check.sequential()
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.sequential(seed=5)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_flatten points=2
verdict = check.flatten((2, 3, 4))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.flatten((3, 5), seed=1), check.flatten((2, 1, 2, 2), seed=2),
                    check.flatten((1, 4, 3), seed=3))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 4.5 `Dropout`
#
# A large network can memorise its training set: it learns the examples instead of the pattern.
# **Dropout** fights this by zeroing each activation at random, with probability `p`, at every
# training step. No unit can rely on any single other unit being there, so the network learns
# redundant, more robust features.
#
# Zeroing a fraction `p` makes outputs smaller on average, by the factor $1 - p$. At evaluation time
# nothing is dropped, so the next layer would see bigger numbers than it was trained on. *Inverted*
# dropout fixes this during training: it divides the kept values by $1 - p$, so that every output's
# expected value equals its input, and evaluation does nothing at all:
#
# $$y_i = \begin{cases} x_i / (1 - p) & \text{with probability } 1 - p \\ 0 & \text{with probability } p
#   \end{cases} \qquad \mathbb{E}[y_i] = (1 - p) \cdot \frac{x_i}{1 - p} = x_i .$$
#
# *Example.* $p = 0.5$, $x = (1, 2, 3, 4)$ and the draw keeps elements 0 and 2: $y = (2, 0, 6, 0)$.
#
# In code: in `__init__`, make the generator `np.random.default_rng(seed)` once. In `forward`, when
# `self.training`, draw a **new** mask at every call, `rng.random(x.shape) >= p` (True means kept),
# turn `mask / (1 - p)` into a constant Tensor (`requires_grad=False`) and multiply: `Mul.backward`
# then passes the gradient through the kept elements only, scaled the same way. When not training,
# return `x`.

# %% solution id=dropout export
class Dropout(Module):
    """Zero each element with probability p while training, scaling the rest by 1 / (1 - p)."""

    def __init__(self, p=0.5, *, seed=None):
        self.p = p
        ### BEGIN SOLUTION
        self.rng = np.random.default_rng(seed)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        if not self.training or self.p == 0:
            return x
        keep = self.rng.random(x.shape) >= self.p
        scale = keep / (1 - self.p) if self.p < 1 else np.zeros(x.shape)     # p = 1 keeps nothing: zeros, not 0/0
        return x * Tensor(scale, dtype=x.dtype, requires_grad=False)
        ### END SOLUTION

# %% test id=test_dropout points=3
verdict = check.dropout(p=0.25)
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.dropout(p=0.5, seed=3), check.dropout(p=0.1, seed=4), check.dropout(p=0.8, seed=5))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_dropout_eval points=1
verdict = check.dropout_eval(p=0.25)
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.dropout_eval(p=0.9, seed=2)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 4.6 Normalization: `BatchNorm1d` and `LayerNorm1d`
#
# Deep networks train faster when the numbers flowing between layers keep a steady scale: mean near
# 0, variance near 1. A normalization layer enforces it. Both layers below compute, for a group of
# numbers,
#
# $$\hat x = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}, \qquad y = \gamma\,\hat x + \beta ,$$
#
# with $\mu$ and $\sigma^2$ the group's mean and **biased** variance (divide by the group's size),
# $\epsilon$ (`eps`) a small number that keeps the division safe, and $\gamma$ (`weight`, starting
# at ones) and $\beta$ (`bias`, starting at zeros) two Parameters of shape `(dim,)` that let the
# network undo the normalization where that helps. What differs is the group:
#
# ```
#            features →                      BatchNorm1d: each COLUMN (one feature over the batch)
#   batch   [ x00  x01  x02 ]                LayerNorm1d: each ROW    (one sample over its features)
#     ↓     [ x10  x11  x12 ]
#           [ x20  x21  x22 ]
# ```
#
# *Example.* A feature column $(1, 2, 3, 6)$: $\mu = 3$, $\sigma^2 = (4 + 1 + 0 + 9)/4 = 3.5$,
# $\sqrt{3.5 + 10^{-5}} \approx 1.8708$, and $\hat x \approx (-1.069,\; -0.535,\; 0,\; 1.604)$.
#
# Build both from Tensor operations, so the gradients come for free: a mean over axis 0 is
# `x.sum((0,)) / N`; put the removed axis back with `reshape` and stretch with `broadcast_to` before
# subtracting (elementwise operations need equal shapes); $\sqrt{\cdot}$ is `** 0.5`. The gradient
# flows through $\mu$ and $\sigma^2$ too, since both depend on $x$; your graph handles that.
#
# **BatchNorm at evaluation.** A model in use sees one example at a time, and a batch of one has no
# variance. So during training `BatchNorm1d` also keeps **running averages** of the batch statistics
# in two attributes, `self.running_mean` (starting at zeros) and `self.running_var` (starting at
# ones), each of shape `(dim,)`, as plain arrays (buffers, not Parameters: no optimizer should train
# them):
#
# $$\text{running} \leftarrow (1 - m)\cdot\text{running} + m \cdot \text{batch statistic}, \qquad m = \texttt{momentum} = 0.1 ,$$
#
# using the values (`.data`) of the batch's mean and biased variance (PyTorch uses $N - 1$ for the
# running variance; we keep one formula). In evaluation mode (`self.training` is False) it
# normalizes with the running statistics, as constants, and does not update them.
# `LayerNorm1d` needs none of this: each sample is normalized with its own statistics.

# %% solution id=batchnorm export
class BatchNorm1d(Module):
    """Normalize every feature over the batch; running statistics stand in at evaluation."""

    def __init__(self, dim, eps=1e-5, momentum=0.1):
        self.dim, self.eps, self.momentum = dim, eps, momentum
        ### BEGIN SOLUTION
        self.weight = Parameter(np.ones(dim))
        self.bias = Parameter(np.zeros(dim))
        self.running_mean = np.zeros(dim, dtype=np.float32)
        self.running_var = np.ones(dim, dtype=np.float32)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        n, d = x.shape
        if self.training:
            mean = x.sum((0,)) / n
            centred = x - mean.reshape((1, d)).broadcast_to((n, d))
            var = (centred * centred).sum((0,)) / n
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean.data
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var.data
        else:
            centred = x - Tensor(self.running_mean, requires_grad=False).broadcast_to((n, d))
            var = Tensor(self.running_var, requires_grad=False)
        std = ((var + self.eps) ** 0.5).reshape((1, d)).broadcast_to((n, d))
        return centred / std * self.weight.broadcast_to((n, d)) + self.bias.broadcast_to((n, d))
        ### END SOLUTION

# %% test id=test_batchnorm points=4
verdict = check.batchnorm(batch=6, dim=3)
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.batchnorm(batch=4, dim=5, seed=1), check.batchnorm(batch=10, dim=2, seed=2),
                    check.batchnorm(batch=3, dim=1, seed=3), check.batchnorm(batch=5, dim=3, seed=4, scale=0.003))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_batchnorm_running points=2
verdict = check.batchnorm_running(batch=6, dim=3)
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.batchnorm_running(batch=8, dim=4, seed=1)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% solution id=layernorm export
class LayerNorm1d(Module):
    """Normalize every sample over its features."""

    def __init__(self, dim, eps=1e-5):
        self.dim, self.eps = dim, eps
        ### BEGIN SOLUTION
        self.weight = Parameter(np.ones(dim))
        self.bias = Parameter(np.zeros(dim))
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        n, d = x.shape
        mean = (x.sum((1,)) / d).reshape((n, 1)).broadcast_to((n, d))
        centred = x - mean
        var = ((centred * centred).sum((1,)) / d).reshape((n, 1)).broadcast_to((n, d))
        normalized = centred / (var + self.eps) ** 0.5
        return normalized * self.weight.broadcast_to((n, d)) + self.bias.broadcast_to((n, d))
        ### END SOLUTION

# %% test id=test_layernorm points=3
verdict = check.all(check.layernorm(batch=4, dim=5), check.layernorm(batch=3, dim=4, seed=5, scale=0.003))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.layernorm(batch=1, dim=6, seed=1), check.layernorm(batch=7, dim=2, seed=2))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Question 4.A · Batch normalization on one sample (1 point, graded by your instructor)
#
# In training mode, give `BatchNorm1d` a batch of a single sample. What does it output, whatever the
# sample is, and why? What does that mean for training a network that contains it with batch size 1,
# and why does `LayerNorm1d` not have this problem?
#
# ### BEGIN MARK SCHEME
# **1 point.** With one sample each feature's batch mean is the sample itself and its variance is 0,
# so $\hat x = 0 / \sqrt{\epsilon} = 0$ and the output is $\beta$ (`bias`) for every input. The
# output no longer depends on the input, so no gradient reaches the layers before it: they cannot
# learn. `LayerNorm1d` normalizes over the features of each sample, so it works with any batch size
# (as long as there is more than one feature).
#
# **0.5 points.** The output (β, or zeros before the affine part) with a correct reason, but no
# consequence for training or no LayerNorm comparison.
#
# **0 points.** Anything else, e.g. "it divides by zero" (ε prevents that).
# ### END MARK SCHEME

# %% answer id=q_batchnorm_one points=1
# For a batch of one, each feature's mean $\mu$ is the sample's own value and its biased variance is
# 0. So $x - \mu = 0$ and $\hat x = 0/\sqrt{0 + \epsilon} = 0$: the layer outputs $\gamma \cdot 0 +
# \beta = \beta$, the same vector whatever the input. Since the output does not depend on the input,
# the gradient that flows back through it is zero, and every layer before it stops learning; only
# `bias` and the layers after it still get gradients. `LayerNorm1d` computes its mean and variance
# over the features of each sample, not over the batch, so a single sample of many features is
# normalized as usual.

# %% [markdown] locked
# ## 4.7 `Embedding`: a table of learned vectors
#
# Some inputs are not measurements but **ids**: a word's number in a vocabulary, a user, a product, a
# chess piece. Id 7 is not "bigger" than id 3, so feeding ids to `Linear` as numbers would teach the
# network an order that does not exist. Instead each id gets a vector of its own, learned like any
# weight: a table $W$ of shape `(num_embeddings, dim)` whose row $i$ is the vector of id $i$. The layer
# looks rows up:
#
# $$\text{out}[p] = W[\text{indices}[p]] \quad\text{for every position } p, \qquad
#   \text{out.shape} = \text{indices.shape} + (\text{dim},) .$$
#
# A batch of 2 sentences of 3 words, `indices` of shape $(2, 3)$, gives vectors of shape
# $(2, 3, \text{dim})$. The lookup equals a product you know: a one-hot row picks one row of $W$, so
# $\text{out} = \mathrm{one\_hot}(\text{indices}) \, W$.
#
# **The backward adds at repeated ids.** Each output element is a copy of one weight, so $W[r]$'s
# gradient is the sum of `out_grad` over every position $p$ that looked up row $r$, and rows nobody
# looked up get 0:
#
# $$\frac{\partial L}{\partial W[r]} = \sum_{p \,:\, \text{indices}[p] = r} \text{out\_grad}[p] .$$
#
# *Example.* $W$ has 4 rows of 2 numbers, `indices` $= \begin{pmatrix}1 & 3\\ 1 & 0\end{pmatrix}$ and
# `out_grad` holds the vectors $(1, 2), (3, 4)$ in the first row of positions and $(5, 6), (7, 8)$ in the
# second. Row 1 was used twice: its gradient is $(1, 2) + (5, 6) = (6, 8)$. Row 3 gets $(3, 4)$, row 0
# gets $(7, 8)$, row 2 gets $(0, 0)$.
#
# The common slip is NumPy's indexed `+=`, which reads all the rows first, adds, then writes them back:
# when an id repeats, the later write replaces the earlier one instead of adding to it. Run the cell.

# %% provided
ids = np.array([[1, 3], [1, 0]])
upstream = np.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]])
buffered = np.zeros((4, 2))
buffered[ids] += upstream                        # row 1 is written twice: the second write wins
added = np.zeros((4, 2))
np.add.at(added, ids, upstream)                  # unbuffered: every repeat is added
print("indexed +=  row 1:", buffered[1], "(wrong: only the last repeat)")
print("np.add.at   row 1:", added[1], "(right: (1, 2) + (5, 6))")

# %% [markdown] locked
# Write the lookup as an operation of its own, `EmbeddingLookup(indices)`, whose one input is the
# weight (the indices are a setting, like `Reshape`'s shape: they get no gradient). Its `forward`
# returns the rows `weight[self.indices]`; its `backward` returns a Tensor of the weight's shape, zeros
# but for the sums above: `np.add.at`, as in the cell before, adds every row of `out_grad` at its id.
#
# Then the module: `Embedding(num_embeddings, dim, seed=None)` makes `self.weight`, a `Parameter` of
# shape `(num_embeddings, dim)` drawn from a standard normal with `np.random.default_rng(seed)` (ids
# have no fan-in to scale by; chapter 7 says more about scales), and `forward(indices)` applies
# `EmbeddingLookup(indices)` to the weight. `indices` is an integer NumPy array of any shape. The checks
# compare the output with the rows of the layer's own weight, and the weight's gradient with finite
# differences, on indices where ids repeat.

# %% solution id=embedding export
# An operation of its own rather than one_hot(indices) @ weight: both are right (MatMul's backward adds
# the repeats by itself), but the one-hot matrix holds num_embeddings numbers per index, e.g. 200 million
# zeros and ones for a 50,000-word vocabulary and a batch of 4,096 words, to pick 4,096 rows.
class EmbeddingLookup(Function):
    """Rows of the weight picked by integer indices; the gradient adds up at repeated indices."""

    def __init__(self, indices):
        self.indices = np.asarray(indices, dtype=np.int64)

    def forward(self, weight):
        ### BEGIN SOLUTION
        return weight[self.indices]
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        weight = node._inputs[0]
        grad = np.zeros(weight.shape)
        np.add.at(grad, self.indices, out_grad.data)
        return Tensor(grad, dtype=weight.dtype, requires_grad=False)
        ### END SOLUTION


class Embedding(Module):
    """A learned vector per id: forward(indices) has shape indices.shape + (dim,)."""

    def __init__(self, num_embeddings, dim, *, seed=None):
        self.num_embeddings, self.dim = num_embeddings, dim
        ### BEGIN SOLUTION
        rng = np.random.default_rng(seed)
        self.weight = Parameter(rng.standard_normal((num_embeddings, dim)))
        ### END SOLUTION

    def forward(self, indices):
        ### BEGIN SOLUTION
        return EmbeddingLookup(indices)(self.weight)
        ### END SOLUTION

# %% test id=test_embedding points=2
verdict = check.all(check.embedding(5, 3, index_shape=(2, 4)), check.embedding(4, 2, index_shape=(6,), seed=1))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.embedding(7, 4, index_shape=(2, 3, 5), seed=2), check.embedding(3, 1, index_shape=(9,), seed=3),
                    check.embedding(10, 2, index_shape=(), seed=4))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_embedding_backward points=3
verdict = check.all(check.backward(EmbeddingLookup([[0, 2, 0], [4, 2, 2]]), shapes=[(5, 3)]),
                    check.backward(EmbeddingLookup([1, 1, 1, 0]), shapes=[(3, 2)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(EmbeddingLookup([[[3, 0], [3, 3]], [[1, 0], [5, 3]]]), shapes=[(6, 4)], seed=31),
                    check.backward(EmbeddingLookup([2, 2]), shapes=[(4, 5)], seed=32),
                    check.backward(EmbeddingLookup(1), shapes=[(3, 3)], seed=33))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 4.8 Losses
#
# A loss turns the model's output and the right answers into one number that training pushes down.
# Losses are modules too, called as `loss_fn(prediction, target)`, and they return a Tensor with a
# single value, on which training calls `backward()`.
#
# ### `MSELoss`: for numbers
#
# When the model predicts numbers (a price, a temperature), the **mean squared error** averages the
# squared differences over *all* elements:
#
# $$L = \frac{1}{n}\sum_i (p_i - t_i)^2, \qquad \frac{\partial L}{\partial p_i} = \frac{2}{n}(p_i - t_i) .$$
#
# *Example.* $p = (1, 2, 4)$, $t = (1, 3, 2)$: $L = (0 + 1 + 4)/3 = 5/3$, and the gradient is
# $\frac{2}{3}(0, -1, 2)$. Write it with Tensor operations; `n` is the number of elements, `size`.
# Accept a target that is a NumPy array as well as a Tensor (wrap it, `requires_grad=False`).

# %% solution id=mse_loss export
class MSELoss(Module):
    """Mean of the squared differences over every element."""

    def forward(self, pred, target):
        ### BEGIN SOLUTION
        if not isinstance(target, Tensor):
            target = Tensor(target, requires_grad=False)
        diff = pred - target
        return (diff * diff).sum() / diff.size
        ### END SOLUTION

# %% test id=test_mse_loss points=2
verdict = check.all(check.mse_loss((5, 1)), check.mse_loss((5, 3), seed=3), check.mse_loss((4, 2), seed=5, target_as="array"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.mse_loss((3, 4), seed=1), check.mse_loss((6,), seed=2), check.mse_loss((2, 3, 4), seed=4))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### `LogSumExp`: the softmax's denominator, without overflow
#
# A classifier outputs one score, a **logit**, per class: $z = (z_1, \dots, z_K)$. The **softmax**
# turns logits into probabilities, $\mathrm{softmax}(z)_k = e^{z_k} / \sum_j e^{z_j}$, and the log of
# its denominator is the **log-sum-exp**:
#
# $$\mathrm{LSE}(z) = \log \sum_j e^{z_j}, \qquad \log \mathrm{softmax}(z)_k = z_k - \mathrm{LSE}(z) .$$
#
# **The naive forward overflows.** `float64` cannot hold numbers above about $1.8 \cdot 10^{308}$,
# and $e^{710}$ is already more: logits of 1000 are not unusual for a badly scaled network. Run the
# cell below.

# %% provided
logits = np.array([1000.0, 1001.0, 1002.0])
with np.errstate(over="ignore"):                 # NumPy would warn about the overflow
    print("naive:   log(sum(exp(z))) =", np.log(np.sum(np.exp(logits))))
shift = logits.max()
print("shifted: log(sum(exp(z - 1002))) + 1002 =", np.log(np.sum(np.exp(logits - shift))) + shift)

# %% [markdown] locked
# The fix is an identity. For any constant $c$, $\sum_j e^{z_j} = e^{c} \sum_j e^{z_j - c}$, so
#
# $$\mathrm{LSE}(z) = c + \log \sum_j e^{z_j - c} .$$
#
# With $c = \max_j z_j$ the largest exponent is $e^0 = 1$: nothing overflows, and the sum is at least
# 1, so its log is safe too. Above: $e^{-2} + e^{-1} + e^{0} \approx 1.5032$ and
# $\mathrm{LSE} = 1002 + \log 1.5032 \approx 1002.4076$.
#
# **The backward.** Differentiate $\log \sum_j e^{z_j}$ with respect to $z_i$: the chain rule gives
# $\frac{1}{\sum_j e^{z_j}} \cdot e^{z_i}$, which is the softmax:
#
# $$\frac{\partial\, \mathrm{LSE}}{\partial z_i} = \frac{e^{z_i}}{\sum_j e^{z_j}} = e^{z_i - \mathrm{LSE}(z)} .$$
#
# The right-hand form is the stable one: `node` holds $\mathrm{LSE}$, and $z_i - \mathrm{LSE} \le 0$.
#
# `LogSumExp(axes)` reduces over `axes` like `Summation` does (an int, a tuple, or `None` for all;
# the reduced axes disappear), and its backward has the same shape work: put the reduced axes back
# with size 1, broadcast `out_grad` to the input's shape, and multiply by the softmax, computed
# with the output reshaped the same way. It is checked like chapter 3's operations: forward against
# NumPy, backward by finite differences of your forward, including logits near $\pm 1000$ and rows
# that lie hundreds apart (one row near $-1000$, the next near $0$, ...): the shift must be each
# row's own maximum, since one maximum for the whole array leaves a low row with $e^{-1000} = 0$ and
# a log of zero.

# %% solution id=logsumexp export
class LogSumExp(Function):
    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, a):
        ### BEGIN SOLUTION
        shift = a.max(axis=self.axes, keepdims=True)
        total = np.exp(a - shift).sum(axis=self.axes, keepdims=True)
        return np.squeeze(np.log(total) + shift, axis=self.axes)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a = node._inputs[0]
        if self.axes is None:
            axes = range(a.ndim)
        else:
            axes = (self.axes,) if isinstance(self.axes, int) else self.axes
        reduced = {axis % a.ndim for axis in axes}
        kept = tuple(1 if i in reduced else n for i, n in enumerate(a.shape))
        softmax = np.exp(a.data - node.data.reshape(kept))
        return out_grad.reshape(kept).broadcast_to(a.shape) * Tensor(softmax, dtype=a.dtype, requires_grad=False)
        ### END SOLUTION


def logsumexp(a, axes=None):
    return LogSumExp(axes)(a)

# %% test id=test_logsumexp_forward points=2
verdict = check.all(check.logsumexp_forward((1,), shape=(3, 4)),
                    check.logsumexp_forward((1,), shape=(3, 4), domain="large"),
                    check.logsumexp_forward((1,), shape=(3, 4), domain="rows_apart"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.logsumexp_forward(None, shape=(2, 3), seed=11),
                    check.logsumexp_forward(0, shape=(4, 2), domain="very_negative", seed=12),
                    check.logsumexp_forward((0, 2), shape=(2, 3, 4), domain="large", seed=13),
                    check.logsumexp_forward(-1, shape=(2, 5), seed=14),
                    check.logsumexp_forward((1,), shape=(1, 6), seed=15),
                    check.logsumexp_forward(-1, shape=(2, 4), domain="wide_rows", seed=16))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_logsumexp_backward points=3
verdict = check.all(check.backward(LogSumExp((1,)), shapes=[(3, 4)]),
                    check.backward(LogSumExp((1,)), shapes=[(3, 4)], domains="large"),
                    check.backward(LogSumExp((1,)), shapes=[(3, 4)], domains="rows_apart"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(LogSumExp(), shapes=[(2, 3)], seed=21),
                    check.backward(LogSumExp(0), shapes=[(4, 2)], domains="very_negative", seed=22),
                    check.backward(LogSumExp((0, 2)), shapes=[(2, 3, 4)], domains="large", seed=23),
                    check.backward(LogSumExp(-1), shapes=[(2, 5)], seed=24),
                    check.backward(LogSumExp((1,)), shapes=[(1, 6)], seed=25),
                    check.backward(LogSumExp(-1), shapes=[(2, 4)], domains="wide_rows", seed=26))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### `Softmax`: the probabilities themselves
#
# `SoftmaxLoss` below never needs the probabilities: it goes from logits to the loss through
# $\mathrm{LSE}$. But a model that *reports* probabilities, or an attention layer that mixes vectors with
# weights that sum to 1, needs $\mathrm{softmax}(z)_i = e^{z_i} / \sum_j e^{z_j}$ as an operation:
# `Softmax(axis=-1)` normalizes along one axis, the last by default, and keeps the shape.
#
# **Forward.** The same overflow, the same cure: the softmax does not change when a constant is
# subtracted from every $z_j$ (it cancels between numerator and denominator), so subtract each row's
# maximum along the axis first. The logits $(1000, 1001, 1002)$ and $(1, 2, 3)$ both give
# $(0.0900,\; 0.2447,\; 0.6652)$.
#
# **Backward.** Every output depends on every input along the axis, through the shared denominator.
# With $s = \mathrm{softmax}(z)$, the quotient rule gives
#
# $$\frac{\partial s_i}{\partial z_k} = s_i\,([i = k] - s_k) .$$
#
# The gradient of $z_k$ sums this over the outputs $i$, weighted by `out_grad` $g$:
#
# $$\frac{\partial L}{\partial z_k} = \sum_i g_i\, s_i\,([i = k] - s_k)
#   = s_k \Big(g_k - \sum_i g_i s_i\Big) .$$
#
# *Example.* $s = (0.0900, 0.2447, 0.6652)$ and $g = (0.5, -1, 2)$: $\sum_i g_i s_i \approx 1.1308$, so the
# gradient is $s \cdot (g - 1.1308) \approx (-0.0568,\; -0.5215,\; 0.5782)$. With $g = (1, 1, 1)$ it is 0:
# the probabilities always sum to 1, so raising them all at once is impossible. That is why the check
# also uses a random `out_grad`: an all-ones one cannot tell a right backward from many wrong ones.
#
# In code, `node` holds $s$; take the sum along `self.axis` with `keepdims=True` so that it broadcasts
# back against $s$, and return one Tensor of the input's shape.

# %% solution id=softmax export
class Softmax(Function):
    """exp(a) / sum(exp(a)) along one axis (the last by default), with the maximum shifted out first."""

    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, a):
        ### BEGIN SOLUTION
        e = np.exp(a - a.max(axis=self.axis, keepdims=True))
        return e / e.sum(axis=self.axis, keepdims=True)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        s, g = node.data, out_grad.data
        grad = s * (g - (g * s).sum(axis=self.axis, keepdims=True))
        return Tensor(grad, dtype=node.dtype, requires_grad=False)
        ### END SOLUTION


def softmax(a, axis=-1):
    return Softmax(axis)(a)

# %% test id=test_softmax_forward points=2
verdict = check.all(check.softmax_forward(-1, shape=(3, 4)),
                    check.softmax_forward(-1, shape=(3, 4), domain="large"),
                    check.softmax_forward(-1, shape=(3, 4), domain="rows_apart"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.softmax_forward(0, shape=(4, 3), domain="very_negative", seed=41),
                    check.softmax_forward(1, shape=(2, 3, 4), domain="large", seed=42),
                    check.softmax_forward(-1, shape=(6,), seed=43),
                    check.softmax_forward(-1, shape=(5, 2), domain="rows_apart", seed=44),
                    check.softmax_forward(-1, shape=(3, 5), domain="wide_rows", seed=45))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_softmax_backward points=3
verdict = check.all(check.backward(Softmax(), shapes=[(3, 4)]),
                    check.backward(Softmax(), shapes=[(3, 4)], domains="large"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Softmax(0), shapes=[(4, 3)], seed=51),
                    check.backward(Softmax(1), shapes=[(2, 3, 4)], seed=52),
                    check.backward(Softmax(), shapes=[(5,)], domains="very_negative", seed=53),
                    check.backward(Softmax(axis=-1), shapes=[(4, 2)], domains="rows_apart", seed=54),
                    check.backward(Softmax(), shapes=[(3, 5)], domains="wide_rows", seed=55),
                    check.backward(Softmax(), shapes=[(3, 4)], seed=56, other_forward=True))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### `SoftmaxLoss`: cross-entropy for classes
#
# For a sample with logits $z$ and correct class $y$, the **cross-entropy** is the negative log of
# the probability the model gives to $y$:
#
# $$\ell = -\log \mathrm{softmax}(z)_y = \mathrm{LSE}(z) - z_y, \qquad
#   \frac{\partial \ell}{\partial z_k} = \mathrm{softmax}(z)_k - [k = y] .$$
#
# The loss is the mean of $\ell$ over the batch. The gradient says: lower every class in proportion
# to its probability, and raise the correct one.
#
# *Example.* $z = (2, 1, 0.1)$ and $y = 0$: $\mathrm{LSE}(z) = \log(7.389 + 2.718 + 1.105) \approx 2.4170$,
# so $\ell \approx 0.4170$; the softmax is $(0.659, 0.242, 0.099)$ and the gradient
# $(-0.341, 0.242, 0.099)$.
#
# Chapter 3's `GetItem` could pick $z_{y_i}$ from each row with integer-array indexing. Here a
# **one-hot** mask picks it instead, because the mask's gradient is the $-[k = y]$ of the formula
# above, plain to see: a matrix of zeros with a 1 at each row's label, so that
# `(logits * one_hot(labels, K)).sum((1,))` is the vector of $z_{y_i}$. `one_hot` is provided below; it accepts labels as an int array or a
# Tensor. Then the loss is the mean over the batch of `logsumexp(logits, (1,))` minus the picked
# logits. Because it goes through `LogSumExp`, it stays finite for logits near 1000.

# %% provided export
def one_hot(labels, num_classes):
    """A constant (N, num_classes) Tensor with a 1 in row i at column labels[i]: it picks one logit per row."""
    labels = np.asarray(getattr(labels, "data", labels)).astype(int).reshape(-1)
    return Tensor(np.eye(num_classes)[labels], requires_grad=False)

# %% solution id=softmax_loss export
class SoftmaxLoss(Module):
    """Mean cross-entropy of integer labels under the softmax of the logits."""

    def forward(self, logits, labels):
        ### BEGIN SOLUTION
        n, k = logits.shape
        picked = (logits * one_hot(labels, k)).sum((1,))
        return (logsumexp(logits, (1,)) - picked).sum() / n
        ### END SOLUTION

# %% test id=test_softmax_loss points=3
verdict = check.all(check.softmax_loss(batch=5, classes=4),
                    check.softmax_loss(batch=5, classes=4, offset=1000.0))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.softmax_loss(batch=3, classes=6, labels_as="tensor", seed=1),
                    check.softmax_loss(batch=1, classes=2, seed=2),
                    check.softmax_loss(batch=8, classes=3, offset=-1000.0, seed=3))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### `BCEWithLogitsLoss`: cross-entropy for yes/no answers
#
# A model that answers one yes/no question per sample (spam or not, a cat in the picture or not) outputs
# one logit $z$, and the probability of "yes" is $p = \sigma(z) = 1 / (1 + e^{-z})$. With the right answer
# $y \in \{0, 1\}$ the **binary cross-entropy** is, as before, the negative log of the probability given
# to the right answer:
#
# $$\ell = -\big(y \log \sigma(z) + (1 - y) \log(1 - \sigma(z))\big) .$$
#
# **Computed that way, it breaks.** For $z = 50$, $e^{-50} \approx 1.9 \cdot 10^{-22}$ is far below
# float64's resolution near 1 ($2.2 \cdot 10^{-16}$), so $\sigma(50)$ rounds to exactly $1$ and
# $\log(1 - \sigma(z)) = \log 0 = -\infty$. With $y = 0$ the loss is $\infty$ instead of 50; with $y = 1$
# it is $0 \cdot (-\infty)$, which is `nan`, instead of $1.9 \cdot 10^{-22}$. One such sample makes the
# batch's mean `nan`, and every weight's gradient with it. For $z = -1000$, $e^{1000}$ overflows, so
# $\sigma(z) = 0$ and $\log \sigma(z) = -\infty$.
#
# **Work from the logit instead.** Since $\log \sigma(z) = -\log(1 + e^{-z})$ and
# $1 - \sigma(z) = \sigma(-z)$,
#
# $$\ell = y \log(1 + e^{-z}) + (1 - y) \log(1 + e^{z}) = \log(1 + e^{z}) - y z ,$$
#
# using $\log(1 + e^{-z}) = \log(1 + e^{z}) - z$. One term is left to tame: for $z \ge 0$ write
# $\log(1 + e^{z}) = z + \log(1 + e^{-z})$, for $z < 0$ leave it. Both cases in one line:
#
# $$\ell = \max(z, 0) - z\,y + \log\big(1 + e^{-|z|}\big) .$$
#
# The exponent $-|z|$ is never positive, so $e^{-|z|} \in (0, 1]$ and the log sees a number in
# $(1, 2]$: nothing overflows and nothing is $\log 0$. Its derivative is the familiar
# $\partial \ell / \partial z = \sigma(z) - y$. *Example.* $z = (50, -1000, 0.5)$ and $y = (1, 1, 0)$:
# $\ell \approx (1.9 \cdot 10^{-22},\; 1000,\; 0.9741)$, from $50 - 50 + \log(1 + e^{-50})$,
# $0 + 1000 + \log(1 + e^{-1000})$ and $0.5 - 0 + \log(1 + e^{-0.5})$; the loss is their mean, 333.658.
# Run the cell below to see both ways. (In floats $1 + e^{-50}$ rounds to 1, so the first loss comes out
# as 0 instead of $1.9 \cdot 10^{-22}$: an error of $10^{-22}$, where the naive form gave `nan`.)

# %% provided
z = np.array([50.0, -1000.0, 0.5])
y = np.array([1.0, 1.0, 0.0])
with np.errstate(all="ignore"):                 # NumPy would warn about exp(1000) and log(0)
    p = 1 / (1 + np.exp(-z))
    print("naive:  ", -(y * np.log(p) + (1 - y) * np.log(1 - p)))
print("stable: ", np.maximum(z, 0) - z * y + np.log(1 + np.exp(-np.abs(z))))

# %% [markdown] locked
# Write `BCEWithLogitsLoss` like the other losses: `forward(logits, targets)` with `logits` a Tensor of
# any shape and `targets` of the same shape, a NumPy array or a Tensor of 0s and 1s (wrap an array,
# `requires_grad=False`). Return the mean of $\ell$ over all elements (for logits of shape $(N,)$, the
# batch), built from Tensor operations so that the gradient comes for free: `relu` is $\max(z, 0)$,
# `absolute` is $|z|$, and `exp` and `log` are chapter 3's. The check includes logits of $\pm 50$ and
# $\pm 1000$ on both sides of the answer, and wants a finite loss equal to the float64 formula there.

# %% solution id=bce_loss export
class BCEWithLogitsLoss(Module):
    """Mean binary cross-entropy of 0/1 targets under sigmoid(logits), computed from the logits."""

    def forward(self, logits, targets):
        ### BEGIN SOLUTION
        if not isinstance(targets, Tensor):
            targets = Tensor(targets, requires_grad=False)
        losses = relu(logits) - logits * targets + log(exp(-absolute(logits)) + 1)
        return losses.sum() / losses.size
        ### END SOLUTION

# %% test id=test_bce_loss points=3
verdict = check.all(check.bce_loss((6,)), check.bce_loss((8,), extreme=True, seed=1))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.bce_loss((4, 3), targets_as="tensor", seed=2), check.bce_loss((16,), extreme=True, seed=3),
                    check.bce_loss((5, 8), extreme=True, targets_as="tensor", seed=4), check.bce_loss((1,), seed=5))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 4.9 Everything together
#
# A small classifier: two inputs, a hidden layer of 8 units with batch normalization and dropout,
# three classes. One forward pass, one loss, one `backward()`, and every weight of the model has a
# gradient. Chapter 5 writes the optimizers that use them.

# %% provided
model = Sequential(Linear(2, 8, seed=0), BatchNorm1d(8), ReLU(), Dropout(0.1, seed=0), Linear(8, 3, seed=1))
loss_fn = SoftmaxLoss()
x = Tensor(np.random.default_rng(0).uniform(-1, 1, (6, 2)))
labels = np.array([0, 1, 2, 0, 1, 2])

loss = loss_fn(model(x), labels)
loss.backward()
print("loss:", round(loss.item(), 4), "(log 3 =", round(float(np.log(3)), 4), "for a model that guesses)")
for i, p in enumerate(model.parameters()):
    print(f"parameter {i}: shape {str(p.shape):8}  gradient norm {np.linalg.norm(p.grad):.4f}")

model.eval()
print("after eval(): training flags of the layers:", [layer.training for layer in model.children()])
model.zero_grad()
print("after zero_grad(): gradients", [p.grad for p in model.parameters()])

# %% [markdown] locked
# Look at parameter 1, the bias of the first `Linear`: its gradient is zero. That is right, not a bug.
# `BatchNorm1d` subtracts each feature's batch mean, so a constant added to a feature just before it
# cancels out and cannot change the loss. In practice a layer followed by batch normalization is
# built with `bias=False`.

# %% [markdown] locked
# ### Question 4.B · Memory for the backward pass (2 points, graded by your instructor)
#
# Backward needs values from the forward pass: `MatMul.backward` uses both factors, `ReLU` its input or
# output, `Mul` both inputs. So every tensor of the graph stays in memory until `backward()` is done.
# Take a network of 20 blocks `Linear(1024, 1024)` followed by `ReLU`, in float32, with a batch of 1024
# samples. Estimate:
#
# 1. the memory of its parameters;
# 2. the memory of the activations kept for one backward pass, counting one $(1024, 1024)$ tensor for
#    each `Linear` output and one for each `ReLU` output (ignore the bias and the input batch);
# 3. how each of the two changes when the batch size doubles, and when the depth doubles.
#
# What does that tell you about what limits the batch size when training on a device with little memory?
#
# ### BEGIN MARK SCHEME
# **2 points.** All of (small slips of MB against MiB, or counting the input too, cost nothing):
# * parameters: $20 \cdot (1024^2 + 1024)$ floats of 4 bytes, about 84 MB (80 MiB);
# * activations: 40 tensors of $1024 \cdot 1024 \cdot 4$ bytes = 4 MiB each, about 160 MiB, twice
#   the parameters;
# * batch ×2: activations ×2, parameters unchanged; depth ×2: both ×2;
# * conclusion: in training the stored activations, which grow with batch × depth × width, are what
#   runs out first; a smaller batch (or recomputing activations, or evaluating without a graph) helps,
#   while the weights alone would fit.
#
# **1 point.** The right method with an error of an order of magnitude, or correct numbers without
# part 3 or the conclusion.
#
# **0 points.** Only the parameters counted, or the claim that backward needs nothing from the forward.
# ### END MARK SCHEME

# %% answer id=q_activation_memory points=2
# 1. Each block has $1024 \cdot 1024 + 1024 \approx 1.05$ million parameters, so 20 blocks hold about
#    21 million floats, $21 \cdot 10^6 \cdot 4$ bytes ≈ 84 MB.
# 2. Each kept tensor is $1024 \cdot 1024$ floats, 4 MiB. Two per block (the `Linear` output and the
#    `ReLU` output), 40 in all: about 160 MiB, twice the parameters.
# 3. Doubling the batch doubles the activations (160 → 320 MiB) and leaves the parameters at 84 MB.
#    Doubling the depth doubles both.
#
# So while training, the memory is dominated by activations, which grow with batch size × depth ×
# width; the weights alone would fit. On a small device it is the batch size that has to shrink (or
# the activations have to be recomputed during backward instead of kept). At prediction time no graph
# is kept, so each activation can be dropped as soon as the next layer has used it.

# %% [markdown] locked
# ## 4.10 Fused operations: fewer nodes, less Python
#
# Count what one training step costs in operations. `Linear` puts three nodes in the graph (`MatMul`,
# `BroadcastTo`, `Add`) and `SoftmaxLoss` six (the one-hot `Mul`, two `Summation`s, `LogSumExp`,
# `Sub`, `DivScalar`). During `backward()` most nodes call further operations: `MatMul.backward` two
# products, two transposes and their reshapes, `BroadcastTo.backward` a sum and a reshape. A step of
# chapter 9's digit classifier (two `Linear` layers, a `ReLU`, the loss) calls 39 operations. Each call
# is a few microseconds of Python (a `Function` object, a `Tensor`, the graph's bookkeeping) around a
# NumPy computation that, on a batch of 64 small rows, often takes less. For a small network that
# Python is about a third of the step.
#
# Libraries answer with **fused operations**: a computation that always comes as a group becomes one
# `Function`, whose backward is a formula derived once by hand instead of a chain of small rules that the
# engine walks at every step. PyTorch's `nn.functional.linear` and `nn.functional.cross_entropy` are
# such operations. You write two, and from the end of this section `Linear` and `SoftmaxLoss` use them:
# the same numbers, 5 operation calls a step instead of 39, and a training step about a sixth shorter.
#
# **`Affine`: `x @ weight + bias` as one node.** Its inputs are $X$ (N, in), $W$ (in, out) and
# $b$ (1, out), and its output $Y = XW + b$, NumPy broadcasting the bias row over the batch. With
# $G$ = `out_grad`, of shape (N, out), chapter 3's `MatMul` and `BroadcastTo` rules give all three
# gradients at once:
#
# $$\frac{\partial L}{\partial X} = G W^\top, \qquad \frac{\partial L}{\partial W} = X^\top G, \qquad
#   \frac{\partial L}{\partial b} = \sum_{i=1}^{N} G_{i,:} .$$
#
# The one bias row served every row of the batch, so its gradient adds up the rows of $G$, and keeps
# the leading axis of size 1: a gradient has its input's shape. Work in NumPy, on `out_grad.data` and
# the inputs' `.data` (`node._inputs`), and return Tensors that do not require a gradient, each in its
# input's dtype, as `Softmax.backward` does. You may take `MatMul`'s shortcut: when $X$ does not
# require a gradient (a batch of images), return zeros for it instead of computing $G W^\top$. As in
# chapter 3's shape operations, the inputs may be views in any memory order (a transposed weight, a
# reversed slice of a batch): work on their values, never on how memory holds them.

# %% solution id=affine export
class Affine(Function):
    """x @ weight + bias as one operation, its three gradients written out."""

    def forward(self, x, weight, bias):
        ### BEGIN SOLUTION
        return x @ weight + bias
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        x, weight, bias = node._inputs
        g = out_grad.data
        if x.requires_grad:
            grad_x = g @ weight.data.T
        else:                       # a batch of data: no one uses its gradient, so skip its product
            grad_x = np.zeros_like(x.data)
        grads = (grad_x, x.data.T @ g, g.sum(axis=0, keepdims=True))
        return tuple(Tensor(grad, dtype=t.dtype, requires_grad=False) for grad, t in zip(grads, node._inputs))
        ### END SOLUTION


def affine(x, weight, bias):
    return Affine()(x, weight, bias)

# %% test id=test_affine_forward points=1
verdict = check.forward(Affine(), lambda x, w, b: x @ w + b, shapes=[(4, 3), (3, 2), (1, 2)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Affine(), lambda x, w, b: x @ w + b, shapes=[(1, 5), (5, 1), (1, 1)], seed=11),
                    check.forward(Affine(), lambda x, w, b: x @ w + b, shapes=[(6, 2), (2, 7), (1, 7)], seed=12),
                    check.forward(Affine(), lambda x, w, b: x @ w + b, shapes=[(5, 3), (3, 4), (1, 4)], seed=13, layout="fortran"),
                    check.forward(Affine(), lambda x, w, b: x @ w + b, shapes=[(5, 3), (3, 4), (1, 4)], seed=14, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_affine_backward points=2
verdict = check.backward(Affine(), shapes=[(4, 3), (3, 2), (1, 2)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Affine(), shapes=[(1, 5), (5, 1), (1, 1)], seed=21),
                    check.backward(Affine(), shapes=[(6, 2), (2, 7), (1, 7)], seed=22),
                    check.backward(Affine(), shapes=[(5, 3), (3, 4), (1, 4)], constant=[0], seed=23),
                    check.backward(Affine(), shapes=[(5, 3), (3, 4), (1, 4)], seed=24, layout="fortran"),
                    check.backward(Affine(), shapes=[(5, 3), (3, 4), (1, 4)], seed=25, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# **`SoftmaxCrossEntropy`: the whole loss as one node.** Its input is the logits $Z$ (N, K); the integer
# labels $y$ are a setting of the operation, given to its constructor, like the axes of `Summation`. Its
# output is section 4.8's loss as one formula, a single number:
#
# $$\ell = \frac{1}{N} \sum_{i=1}^{N} \big(\mathrm{LSE}(z_i) - z_{i, y_i}\big), \qquad
#   \frac{\partial \ell}{\partial z_{ik}} = \frac{\mathrm{softmax}(z_i)_k - [k = y_i]}{N} .$$
#
# The gradient is section 4.8's, divided by $N$ for the mean, and multiplied by `out_grad`, a single
# number too. Pick each row's label logit with integer-array indexing, `z[np.arange(N), labels]`, and
# keep the forward finite for logits near 1000 the way `LogSumExp` does: shift each row by its own
# maximum. In backward, compute the softmax again from the logits in `node._inputs`: an operation may be
# called several times before its backward runs, so what one forward left behind is not a safe source.

# %% solution id=softmax_cross_entropy export
class SoftmaxCrossEntropy(Function):
    """Mean cross-entropy of the logits for integer labels, one operation: SoftmaxLoss in a single node."""

    def __init__(self, labels):
        self.labels = np.asarray(getattr(labels, "data", labels)).astype(int).reshape(-1)

    def forward(self, logits):
        ### BEGIN SOLUTION
        shifted = logits - logits.max(axis=1, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=1))
        picked = shifted[np.arange(len(logits)), self.labels]
        return np.asarray((lse - picked).mean(), dtype=logits.dtype)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        z = node._inputs[0].data
        e = np.exp(z - z.max(axis=1, keepdims=True))
        grad = e / e.sum(axis=1, keepdims=True)
        grad[np.arange(len(z)), self.labels] -= 1
        grad *= out_grad.data / len(z)
        return Tensor(grad, dtype=node._inputs[0].dtype, requires_grad=False)
        ### END SOLUTION

# %% test id=test_softmax_cross_entropy_forward points=1
verdict = check.all(check.cross_entropy_forward(batch=5, classes=4),
                    check.cross_entropy_forward(batch=5, classes=4, domain="large"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.cross_entropy_forward(batch=1, classes=3, seed=11),
                    check.cross_entropy_forward(batch=6, classes=5, domain="rows_apart", seed=12),
                    check.cross_entropy_forward(batch=3, classes=6, domain="very_negative", seed=13),
                    check.cross_entropy_forward(batch=16, classes=5, domain="wide_rows", seed=14))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_softmax_cross_entropy_backward points=2
verdict = check.all(check.cross_entropy_backward(batch=5, classes=4),
                    check.cross_entropy_backward(batch=5, classes=4, domain="large"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.cross_entropy_backward(batch=1, classes=3, seed=21),
                    check.cross_entropy_backward(batch=6, classes=5, domain="rows_apart", seed=22),
                    check.cross_entropy_backward(batch=8, classes=2, seed=23),
                    check.cross_entropy_backward(batch=16, classes=5, domain="wide_rows", seed=24))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# **The switch.** The cell below keeps the composed layer and loss under other names, then makes
# `Linear` and `SoftmaxLoss` the fused versions: subclasses whose `forward` is one `Affine` node (or one
# `MatMul`, without a bias) and one `SoftmaxCrossEntropy` node. Everything else, the parameters, their
# initialization, `seed`, is section 4.2's. The cell after it builds the same small network both ways,
# from the same seeds, and compares the loss, every gradient, and the size of the graph.

# %% provided export
ComposedLinear, ComposedSoftmaxLoss = Linear, SoftmaxLoss


class Linear(ComposedLinear):
    """Section 4.2's layer, its forward one Affine node (one MatMul without a bias)."""

    def forward(self, x):
        if self.bias is None:
            return x @ self.weight
        return affine(x, self.weight, self.bias)


class SoftmaxLoss(ComposedSoftmaxLoss):
    """Section 4.8's loss as one SoftmaxCrossEntropy node."""

    def forward(self, logits, labels):
        return SoftmaxCrossEntropy(labels)(logits)

# %% provided
def one_step(linear, loss_class):
    """The loss, the gradients and the graph's size of one step of a small classifier built from `linear`."""
    model = Sequential(linear(6, 16, seed=0), ReLU(), linear(16, 4, seed=1))
    x = Tensor(np.random.default_rng(0).uniform(-1, 1, (32, 6)), requires_grad=False)
    labels = np.random.default_rng(1).integers(0, 4, 32)
    loss = loss_class()(model(x), labels)
    loss.backward()
    return loss.item(), [p.grad for p in model.parameters()], len(topological_order(loss))


composed, fused = one_step(ComposedLinear, ComposedSoftmaxLoss), one_step(Linear, SoftmaxLoss)
print(f"loss: composed {composed[0]:.4f}, fused {fused[0]:.4f}")
print("every gradient the same to float32 rounding:",
      all(np.allclose(a, b, rtol=1e-5, atol=1e-7) for a, b in zip(composed[1], fused[1])))
print(f"nodes in the graph: composed {composed[2]}, fused {fused[2]}")
