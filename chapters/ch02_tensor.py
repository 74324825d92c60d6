# %% [markdown] locked
# # Chapter 2 · The Tensor
#
# In chapter 1 every number was its own object. That is the clearest way to see the chain rule, and
# the slowest way to compute: a network with a million weights would be a million Python objects,
# and every multiplication a Python method call. Deep-learning libraries instead keep numbers in
# **tensors**: n-dimensional arrays that one operation processes all at once, in compiled code. A
# matrix product of two 1000 × 1000 matrices is a billion multiply-adds, and NumPy does it in a
# fraction of a second because no Python runs per number.
#
# babygrad's `Tensor` is a thin wrapper around a NumPy array. The array does the arithmetic; the
# wrapper adds what autodiff needs: a place for the gradient and a record of which operation made
# the tensor. In this chapter you write that class. Chapter 3 then teaches it to differentiate.
#
# You will write:
#
# 1. the constructor, which turns lists, numbers, arrays and tensors into a `float32` array;
# 2. the properties `shape`, `ndim`, `size` and `dtype`;
# 3. the conversions `numpy()`, `item()`, `detach()` and `len()`;
# 4. `__repr__`, so that a tensor prints readably;
# 5. the factories `zeros`, `ones`, `randn` and `rand`.
#
# The workflow is the one of chapter 1: fill in each `# YOUR CODE HERE`, run the check under it, and
# remember that the hidden tests try more inputs than the visible ones.

# %% provided
import numpy as np

from autograder.student.checks import Checker

check = Checker(globals())

# %% [markdown] locked
# ## 2.1 Arrays: shape, dtype and friends
#
# A NumPy array is a block of numbers of one type, laid out in memory, plus a **shape**: the length
# of each axis. A few words you will meet in every chapter:
#
# | attribute | meaning | for `np.array([[1, 2, 3], [4, 5, 6]])` |
# |---|---|---|
# | `shape` | the length of each axis, a tuple | `(2, 3)`: 2 rows, 3 columns |
# | `ndim` | the number of axes, `len(shape)` | `2` |
# | `size` | the number of elements, the product of `shape` | `6` |
# | `dtype` | the type of every element | `int64`: NumPy picked integers |
#
# A single number is an array too, with shape `()`: zero axes, one element. And `dtype` matters:
# integers cannot hold a gradient like `0.25`, so every babygrad tensor holds floating-point numbers.
# Run the cell to see these attributes, and what `astype` does.

# %% provided
x = np.array([[1, 2, 3], [4, 5, 6]])
print("shape", x.shape, "| ndim", x.ndim, "| size", x.size, "| dtype", x.dtype)
print("as float32:", x.astype(np.float32).dtype, "| one number:", np.array(2.5).shape)

# %% [markdown] locked
# ## 2.2 The constructor
#
# **Why `float32`.** A `float64` number has about 16 significant digits and takes 8 bytes; a
# `float32` has about 7 and takes 4. Training never needs 16 digits (the gradient steps are far
# noisier than that), while halving the memory doubles the model that fits, and graphics cards run
# `float32` many times faster. So `float32` is babygrad's default, as in PyTorch, and `float64` is
# there when you ask for it. Keep one thing in mind for chapter 3: an operation's result is made with
# the default dtype, so `float64` survives only as far as the arrays you pass around yourself. That is
# why the course's gradient checks call an op's `forward` directly, on `float64` arrays, rather than
# going through tensors.
#
# **What a tensor holds.** Five fields, set by the constructor:
#
# | field | holds | a new tensor has |
# |---|---|---|
# | `data` | the values, a NumPy array of the requested `dtype` | the input, converted |
# | `requires_grad` | whether chapter 3 computes a gradient for it | the argument |
# | `grad` | the gradient, once `backward()` has run | `None` |
# | `_op` | the operation that made it (chapter 3) | `None` |
# | `_inputs` | the tensors that operation took | `()`, an empty tuple |
#
# **Inputs.** `data` may be a number, a (nested) list, a NumPy array, or another `Tensor`. For a
# tensor, take its `.data`. Then `np.array(data, dtype=dtype)` handles all of them, and it **copies**:
# the new tensor owns its values, so changing one tensor never changes another. (`np.asarray` would
# not copy an array that already has the right dtype: two tensors would share memory.)
#
# *Example.* `Tensor([1, 2, 3])` holds `array([1., 2., 3.], dtype=float32)`: the integers were cast.
# `Tensor(7)` holds a shape-`()` array. `Tensor([1, 2], dtype="float64")` keeps `float64`.
#
# `NDArray` is another name for `np.ndarray`; chapter 3 uses it to say "this is a plain array".

# %% provided export
import numpy as np

NDArray = np.ndarray
DEFAULT_DTYPE = "float32"

# %% [markdown] locked
# ### Exercise: `Tensor.__init__` (3 points)
#
# Store the five fields. The `*` in the signature makes `dtype` and `requires_grad` keyword-only:
# `Tensor(x, dtype="float64")`, never `Tensor(x, "float64")`.

# %% solution id=constructor export
class Tensor:
    """An n-dimensional array that remembers how it was computed."""

    def __init__(self, data, *, dtype=DEFAULT_DTYPE, requires_grad=True):
        ### BEGIN SOLUTION
        if isinstance(data, Tensor):
            data = data.data
        self.data = np.array(data, dtype=dtype)
        self.requires_grad = requires_grad
        self.grad = None
        self._op = None
        self._inputs = ()
        ### END SOLUTION

# %% test id=test_constructor points=3
verdict = check.all(check.constructor("list"), check.constructor("requires_grad"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.constructor("ints"), check.constructor("scalar"), check.constructor("float64"),
                    check.constructor("ndarray"), check.constructor("float64 ndarray"), check.constructor("copies"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Question 2.A · Why the constructor copies (1 point, graded by your instructor)
#
# `Tensor.__init__` copies its input with `np.array`. Write a few lines of code in which two tensors
# (or a tensor and a NumPy array) would share their values if it used `np.asarray` instead, and say
# what would then go wrong later in a training program, when an optimizer changes a weight's `.data`
# in place (chapter 5).
#
# ### BEGIN MARK SCHEME
# **1 point.** An example that really shares under `np.asarray`: the input must already be an array
# of the requested dtype, e.g. `arr = np.zeros(3, dtype=np.float32); w = Tensor(arr)`, or
# `v = Tensor(w)` for a float32 tensor `w` (a list, or a float64 array turned into float32, is copied
# either way). Then an in-place update `w.data -= 0.1` also changes `arr` (or `v`): a snapshot of the
# weights taken before training, or the data a tensor was made from, silently changes with it.
#
# **0.5 points.** Sharing described correctly but without a working example, or an example that would
# not share (a list input), with a correct consequence.
#
# **0 points.** No example and no consequence.
# ### END MARK SCHEME

# %% answer id=q_copy points=1
# ```python
# start = np.zeros(3, dtype=np.float32)
# w = Tensor(start)            # with np.asarray, w.data IS start: same dtype, so no copy
# before = Tensor(w)           # and before.data would be that same array again
# w.data -= 0.1                # an optimizer's in-place step
# ```
#
# With `np.asarray`, `start`, `w.data` and `before.data` would be one array, so after the step all
# three hold `-0.1`. The "before" snapshot that was meant to show the weights before training would
# follow them, and the array the user passed in would be changed behind their back. With `np.array`
# each tensor owns its values, and a change to one never shows up in another.

# %% [markdown] locked
# ## 2.3 Growing a class one cell at a time
#
# A Python class is normally written in one block. In a notebook we want to add to `Tensor` in
# later cells, and in later chapters (chapter 3 adds `__add__`, `backward` and more). A class is an
# object like any other, so we can attach a function to it after the fact:
# `setattr(Tensor, "numpy", numpy)` makes `numpy` a method of every tensor, even existing ones.
#
# `tensor_method` wraps that in a decorator. Put `@tensor_method` above a function and it becomes a
# method of `Tensor`. Put `@property` under it as well and it becomes a property: read without
# parentheses, `t.shape` rather than `t.shape()`.
#
# One detail: a decorator's result is what the function's name is bound to. Chapter 3 gives `Tensor`
# a `sum` method; if the decorator returned the function, the notebook's global `sum` would become
# that method and Python's own `sum([1, 2])` would stop working in every later cell. So for a name
# Python already defines, `tensor_method` hands back Python's own object.

# %% provided export
import builtins


def tensor_method(fn):
    """Attach `fn` to the Tensor class as a method (under @property, as a property): lets a notebook grow Tensor cell by cell.

    It hands back what the name meant before, so `@tensor_method def sum` gives Tensor a `sum` method
    without hiding Python's own `sum` (or `abs`, `max`, ...) from the rest of the notebook."""
    function = fn.fget if isinstance(fn, property) else fn
    setattr(Tensor, function.__name__, fn)
    return getattr(builtins, function.__name__, fn)

# %% [markdown] locked
# ### Exercise: the properties (1 point)
#
# Each property answers from `self.data`, exactly as NumPy does: `shape` a tuple, `ndim` and `size`
# integers, `dtype` a NumPy dtype. *Example:* a tensor built from `[[1, 2, 3], [4, 5, 6]]` has
# shape `(2, 3)`, ndim `2`, size `6` and dtype `float32`.
#
# The check swaps in a known-right constructor while it runs, so it grades these four alone.

# %% solution id=properties export
@tensor_method
@property
def shape(self):
    ### BEGIN SOLUTION
    return self.data.shape
    ### END SOLUTION


@tensor_method
@property
def ndim(self):
    ### BEGIN SOLUTION
    return self.data.ndim
    ### END SOLUTION


@tensor_method
@property
def size(self):
    ### BEGIN SOLUTION
    return self.data.size
    ### END SOLUTION


@tensor_method
@property
def dtype(self):
    ### BEGIN SOLUTION
    return self.data.dtype
    ### END SOLUTION

# %% test id=test_properties points=1
verdict = check.properties("matrix")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.properties("scalar"), check.properties("float64"), check.properties("empty"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 2.4 Getting values out
#
# * `numpy()` returns the values as a NumPy array, **a copy**. Code outside babygrad (a plot, a
#   metric) may change the array it gets; that must never corrupt a tensor that chapter 3's graph
#   still needs for its gradients.
# * `item()` returns the single value of a one-element tensor as a plain Python `float`: the loss,
#   for printing. `ndarray.item()` does exactly that, for any shape with one element (`()`, `(1,)`,
#   `(1, 1)`). Indexing, `data[0]`, would give a NumPy scalar instead, and fail on shape `()`.
# * `detach()` returns a **new** tensor with the same values and dtype, `requires_grad=False` and no
#   history. It is how you say "use these numbers, but do not differentiate through them", for
#   example to log a loss without keeping its whole graph alive. Careful with the dtype: the
#   constructor's default is `float32`, so a `float64` tensor must pass `dtype=self.dtype` on.
# * `len(t)` is the length of the first axis, as for a NumPy array or a list of rows.
#
# *Example.* For `t = Tensor([[1, 2], [3, 4]])`: `t.numpy()` is a fresh `float32` array,
# `len(t)` is `2`, and `Tensor([[2.5]]).item()` is the float `2.5`.

# %% [markdown] locked
# ### Exercise: conversions (2 points)

# %% solution id=conversions export
@tensor_method
def numpy(self):
    """The values as a NumPy array (a copy: changing it leaves the tensor alone)."""
    ### BEGIN SOLUTION
    return self.data.copy()
    ### END SOLUTION


@tensor_method
def item(self):
    """The single value of a one-element tensor, as a Python number."""
    ### BEGIN SOLUTION
    return self.data.item()
    ### END SOLUTION


@tensor_method
def detach(self):
    """The same values, cut from the graph: no gradient flows through the result."""
    ### BEGIN SOLUTION
    return Tensor(self.data, dtype=self.data.dtype, requires_grad=False)
    ### END SOLUTION


@tensor_method
def __len__(self):
    ### BEGIN SOLUTION
    return len(self.data)
    ### END SOLUTION

# %% test id=test_conversions points=2
verdict = check.conversions("basic")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.conversions("more")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Question 2.B · The default of `requires_grad` (2 points, graded by your instructor)
#
# In babygrad a new tensor has `requires_grad=True` unless you say otherwise. PyTorch chose the
# opposite: `torch.tensor(...)` has `requires_grad=False`, and only a layer's parameters
# (`nn.Parameter`) start with `True`.
#
# 1. For each of the two defaults, name the mistake it makes easy and what that mistake costs: a
#    wrong result, wasted memory or time, or a model that silently does not learn.
# 2. Why does `detach()` return a tensor with `requires_grad=False`? Give one kind of tensor in a
#    training step that should never require a gradient.
#
# ### BEGIN MARK SCHEME
# **2 points.** Both defaults analysed and the `detach` part answered.
# * Default `True`: easy to forget `requires_grad=False` on data, labels and constants. Results stay
#   correct, but chapter 3 then records them in the graph and computes gradients nobody uses:
#   memory for the graph, and extra backward work (e.g. the gradient with respect to a batch of images).
# * Default `False`: easy to forget it on a weight. That weight gets no gradient, the optimizer never
#   moves it, and the model trains worse or not at all, with no error message.
# * `detach()` makes a value that is used as a constant (a target, a statistic, a snapshot) stop the
#   gradient, so backward neither flows into it nor keeps its history alive. Examples: the input batch,
#   the labels, a target computed from the model's own output.
#
# **1 point.** One default analysed correctly, or both without the `detach` part.
#
# **0 points.** Neither default's consequence, or the claim that the default changes the gradients
# of the weights.
# ### END MARK SCHEME

# %% answer id=q_requires_grad points=2
# With babygrad's default (`True`), the easy mistake is to leave it on for things that are not
# learned: a batch of images, the labels, a constant. Nothing becomes wrong, but every operation on
# them is recorded in the graph and backward computes their gradients too, for example a full
# gradient with respect to a batch of 64 images that nobody reads. That costs memory and time.
#
# With PyTorch's default (`False`), the easy mistake is to forget it on a weight made by hand. Then no
# gradient reaches it, the optimizer skips it, and it keeps its initial value. There is no error: the
# model just learns worse. That mistake is harder to notice, which is why PyTorch makes layer
# parameters `True` for you.
#
# `detach()` gives the same values as a constant: a tensor with no history and no gradient. We use it
# when a value should be used but not trained through, such as a target computed from the model
# itself or a number we log. The input batch and its labels should never require a gradient.

# %% [markdown] locked
# ## 2.5 A readable `repr`
#
# Jupyter shows an object by calling `repr` on it. Python's default, `<__main__.Tensor object at
# 0x7f3a...>`, says nothing. A good `repr` reads like the call that would build the object, and adds
# only what is not the default:
#
# | the tensor | its `repr` |
# |---|---|
# | `Tensor([1, 2])` | `Tensor([1., 2.], requires_grad=True)` |
# | `Tensor([0.5, -3, 1/3], requires_grad=False)` | `Tensor([ 0.5   , -3.    ,  0.3333])` |
# | `Tensor([1.5], dtype="float64")` | `Tensor([1.5], dtype=float64, requires_grad=True)` |
# | `Tensor(3.5)` | `Tensor(3.5, requires_grad=True)` |
# | made by a `Mul` operation (chapter 3) | `Tensor([2., 4.], requires_grad=True, op=Mul)` |
#
# The values come from `np.array2string(self.data, precision=4, separator=", ", prefix="Tensor(")`:
# four digits after the point, commas between values, and (the `prefix`) the rows of a matrix
# indented to line up under the first one. After the values, in this order and only when they apply:
# `, dtype=...` when the dtype is not `float32` (the f-string `f"{self.dtype}"` gives `float64`),
# `, requires_grad=True` when it is true, and `, op=...` with the class name of `self._op`
# (`type(self._op).__name__`) when the tensor was made by an operation.

# %% [markdown] locked
# ### Exercise: `__repr__` (2 points)

# %% solution id=repr export
@tensor_method
def __repr__(self):
    ### BEGIN SOLUTION
    body = np.array2string(self.data, precision=4, separator=", ", prefix="Tensor(")
    extras = [f"dtype={self.dtype}"] if self.dtype != np.dtype(DEFAULT_DTYPE) else []
    if self.requires_grad:
        extras.append("requires_grad=True")
    if self._op is not None:
        extras.append(f"op={type(self._op).__name__}")
    return f"Tensor({body}{''.join(', ' + e for e in extras)})"
    ### END SOLUTION

# %% test id=test_repr points=2
verdict = check.tensor_repr("basic")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.tensor_repr("more")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 2.6 Factories
#
# Models start from tensors of a given shape: zeros for biases, random numbers for weights. Four
# small functions make them. Each takes the shape as separate numbers, `zeros(2, 3)`, which Python
# collects into the tuple `shape = (2, 3)`; pass that tuple to NumPy whole (`np.zeros(shape)`), since
# `np.zeros(2, 3)` would read the `3` as a dtype. Then wrap the array in a `Tensor`, passing `dtype`
# and `requires_grad` on.
#
# | factory | values |
# |---|---|
# | `zeros(*shape)` | all 0 |
# | `ones(*shape)` | all 1 |
# | `randn(*shape, seed=None)` | standard normal: mean 0, standard deviation 1 |
# | `rand(*shape, seed=None)` | uniform on $[0, 1)$ |
#
# **Seeds.** Random numbers in a computer come from a generator that starts from a *seed*; the same
# seed gives the same sequence. Experiments must be repeatable (a bug you cannot reproduce is a bug
# you cannot fix), so the random factories take a `seed`. Make the generator with
# `rng = np.random.default_rng(seed)`, then draw with `rng.standard_normal(shape)` or
# `rng.random(shape)`. With `seed=None` the generator starts from fresh entropy, different every time.
#
# *Example.* `randn(2, 3, seed=0)` is the same 2 × 3 `float32` tensor on every run and every
# machine; `randn(2, 3, seed=1)` is another one.

# %% [markdown] locked
# ### Exercise: factories (3 points)

# %% solution id=factories export
def zeros(*shape, dtype=DEFAULT_DTYPE, requires_grad=True):
    ### BEGIN SOLUTION
    return Tensor(np.zeros(shape), dtype=dtype, requires_grad=requires_grad)
    ### END SOLUTION


def ones(*shape, dtype=DEFAULT_DTYPE, requires_grad=True):
    ### BEGIN SOLUTION
    return Tensor(np.ones(shape), dtype=dtype, requires_grad=requires_grad)
    ### END SOLUTION


def randn(*shape, seed=None, dtype=DEFAULT_DTYPE, requires_grad=True):
    ### BEGIN SOLUTION
    return Tensor(np.random.default_rng(seed).standard_normal(shape), dtype=dtype, requires_grad=requires_grad)
    ### END SOLUTION


def rand(*shape, seed=None, dtype=DEFAULT_DTYPE, requires_grad=True):
    ### BEGIN SOLUTION
    return Tensor(np.random.default_rng(seed).random(shape), dtype=dtype, requires_grad=requires_grad)
    ### END SOLUTION

# %% test id=test_constant_factories points=1
verdict = check.factories("constant", "basic")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.factories("constant", "more")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_random_factories points=2
verdict = check.factories("random", "basic")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.factories("random", "more")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# Your `Tensor` is complete. Here it is at work:

# %% provided
w = randn(2, 3, seed=0)
print(w)
print("shape", w.shape, "| dtype", w.dtype, "| first row as numpy:", w.numpy()[0])
print(Tensor([1, 2, 3], dtype="float64", requires_grad=False))
print("a loss, as a Python float:", Tensor(0.125).item())

# %% [markdown] locked
# ## 2.7 Broadcasting
#
# NumPy can combine arrays of different shapes, as long as the shapes are *compatible*. Adding a
# bias vector to every row of a batch, `X + b` with `X` of shape `(32, 10)` and `b` of shape `(10,)`,
# needs no loop and no copy. The rule, for two shapes:
#
# 1. **Align the shapes on the right.** Where one shape is shorter, pretend it has axes of length 1
#    on the left: `(4,)` against `(3, 1)` is read as `(1, 4)`.
# 2. **Compare axis by axis.** Two lengths are compatible when they are equal or one of them is 1.
#    Otherwise NumPy raises an error.
# 3. **Stretch every length-1 axis** to the other's length, by repeating the values (NumPy does not
#    actually copy them). The result has the larger length on every axis.
#
# Here is `a + b` with `a` of shape `(3, 1)` and `b` of shape `(4,)`:
#
# ```
#   a (3, 1)                  b (4,)
#   ┌────┐                    ┌────┬────┬────┬────┐
#   │  0 │                    │  1 │  2 │  3 │  4 │
#   │ 10 │                    └────┴────┴────┴────┘
#   │ 20 │
#   └────┘
#
#   1. align on the right        a:  3  1
#                                b:     4    →   b:  1  4     (a missing axis counts as 1)
#   2. compare                   3 vs 1 → 3,   1 vs 4 → 4     result (3, 4)
#   3. stretch the 1s
#
#   a stretched (3, 4)          b stretched (3, 4)          a + b (3, 4)
#   ┌────┬────┬────┬────┐      ┌────┬────┬────┬────┐      ┌────┬────┬────┬────┐
#   │  0 │  0 │  0 │  0 │      │  1 │  2 │  3 │  4 │      │  1 │  2 │  3 │  4 │
#   │ 10 │ 10 │ 10 │ 10 │  +   │  1 │  2 │  3 │  4 │  =   │ 11 │ 12 │ 13 │ 14 │
#   │ 20 │ 20 │ 20 │ 20 │      │  1 │  2 │  3 │  4 │      │ 21 │ 22 │ 23 │ 24 │
#   └────┴────┴────┴────┘      └────┴────┴────┴────┘      └────┴────┴────┴────┘
#    ───▶ the column is          ▼ the row is repeated
#    repeated 4 times              3 times
# ```
#
# The cell below draws the same picture from the arrays themselves: solid cells are an array's own
# values, dashed ones the copies that broadcasting makes. Under it, the shapes aligned on the right
# and how many times each value is used. Try other arrays of up to three axes.

# %% provided
from autograder.student.pictures import broadcast_picture

broadcast_picture(np.array([[0.0], [10.0], [20.0]]), np.array([1.0, 2.0, 3.0, 4.0]))

# %% [markdown] locked
# More pairs: `(2, 3)` with `(3,)` gives `(2, 3)`; `(5, 1, 4)` with `(3, 1)` gives `(5, 3, 4)`;
# `(2, 3)` with `(2,)` is an error, because aligned on the right it compares `3` with `2`.
#
# Broadcasting matters for gradients. Every value of `b` above was used three times, once per row,
# so in chapter 3 its gradient will collect three contributions: the backward of a broadcast is a
# **sum** over the stretched axes. Keep the picture in mind for `BroadcastTo`.

# %% provided
a = np.array([[0.0], [10.0], [20.0]])      # shape (3, 1)
b = np.array([1.0, 2.0, 3.0, 4.0])         # shape (4,)
print((a + b).shape)
print(a + b)
print("np.broadcast_shapes((5, 1, 4), (3, 1)) =", np.broadcast_shapes((5, 1, 4), (3, 1)))
try:
    np.ones((2, 3)) + np.ones(2)
except ValueError as error:
    print("(2, 3) + (2,):", error)

# %% [markdown] locked
# That is the whole `Tensor` of babygrad: an array, a dtype, a place for a gradient and a record of
# its history. Chapter 3 fills that record in: every operation will note what it did, and
# `backward()` will read the notes in reverse.
