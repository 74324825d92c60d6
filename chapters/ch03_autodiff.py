# %% [markdown] locked
# # Chapter 3 · Automatic differentiation
#
# A neural network learns by nudging each of its numbers in the direction that lowers its error.
# To know that direction we need the **gradient**: for every number, how much the error moves when
# that number moves a little. A model has millions of numbers and is rebuilt from code every time we
# change it, so nobody writes its gradient by hand. The library does it: every operation remembers
# where its result came from, and at the end one call, `loss.backward()`, walks that record backwards
# and hands every tensor its gradient. This is **automatic differentiation**, and in this chapter you
# build it for babygrad.
#
# You will write:
#
# 1. the `forward` and `backward` of twenty-two operations, from `Mul` to `GELU`, indexing and a
#    batched `MatMul`;
# 2. the Python operators that make `a * b` or `x @ W` build those operations;
# 3. `Tensor.backward`, the engine that runs the chain rule over the whole graph, with the rules around
#    it: `zero_grad`, `no_grad`, and the two mistakes it refuses.
#
# ### How to work in this notebook
#
# * Run the cells from the top. The cell below loads the `Tensor` of chapter 2 (the course gives
#   you a finished copy, so your marks here never depend on chapter 2) and the course's checks.
# * Fill in each cell that says `# YOUR CODE HERE` and delete the `raise NotImplementedError()`.
# * Run the check cell under it. A check prints `✔ ...` when it passes. When it fails, it says which
#   operation, on what input, which element is wrong, what it expected, and the usual cause.
# * The check cells are locked. When you submit, they are run again with **hidden tests** added:
#   more shapes, more seeds, and each gradient compared with finite differences (you will meet them
#   below). Code that passes the visible checks for the right reason passes the hidden ones too.
# * Each check cell says on its first line what it is worth; the chapter's total is at the top.
# * The last cell of the notebook shows where you stand: every check, passed or not, and your points.
#   JupyterLab stops a "Run All" at the first failing check, so run that cell whenever you like. On
#   your own machine, `python -m autograder check autodiff.ipynb` runs every check, even after a
#   failure, and prints the same table.

# %% provided
import numpy as np

from earlier_chapters import *          # chapter 2: Tensor, tensor_method, zeros, ones, randn, rand
from autograder.student.checks import Checker
from autograder.student.graph import draw_graph  # draws the computation graph behind a tensor

check = Checker(globals())

# %% [markdown] locked
# ## 3.1 The `Function` base class
#
# Every operation in babygrad is a small class with two methods:
#
# * `forward(*arrays)` computes the result from plain NumPy arrays;
# * `backward(out_grad, node)` computes how the result's gradient flows back to each input.
#
# What happens around `forward` is the same for every operation: unwrap the input Tensors, compute,
# wrap the answer in a new Tensor, and write down where it came from. That shared part lives once, in
# `Function.__call__`, which Python runs when you *call* an operation object: `Mul()(a, b)` builds a
# `Mul` and immediately calls it on `a` and `b`.
#
# The record has two fields on the output tensor:
#
# * `_op`: the operation object that produced it;
# * `_inputs`: the tensors it was computed from, its *parents*.
#
# Together they turn a sequence of computations into a graph that we can walk backwards later.
# The output needs a gradient as soon as any input needs one; if none does, we skip the record.
#
# The wrapping skips one thing `Tensor(...)` does: the copy (question 2.A). `forward` has just made
# its result, and nothing in babygrad writes into an operation's result afterwards (only an
# optimizer writes, into parameters, which `Tensor(...)` made), so the output keeps the array itself.
# In a training step that saves copying every activation and every gradient once more. The result
# may be a view of an input (a reshape, a transpose), as in NumPy and PyTorch.
#
# One switch sits above all of that: `Function.grad_enabled`. While it is `False`, no operation
# records anything, whatever its inputs. Code that only evaluates a model (and will never call
# `backward()`) saves the memory of the graph that way. Section 3.8 gives it a friendly form,
# `with no_grad():`.

# %% provided export
class Function:
    """An operation: `forward` computes on arrays, `backward` sends gradients back to the inputs."""

    grad_enabled = True          # False inside `with no_grad():` (section 3.8): nothing is recorded

    def __call__(self, *inputs):
        requires_grad = Function.grad_enabled and any(t.requires_grad for t in inputs)
        result = self.forward(*[t.data for t in inputs])       # arrays in, array out
        output = Tensor((), requires_grad=requires_grad)       # wrap it: an empty Tensor...
        output.data = np.asarray(result, dtype=DEFAULT_DTYPE)  # ...takes the result itself, no copy
        if requires_grad:                                      # remember where it came from
            output._op = self
            output._inputs = inputs
        return output

    def forward(self, *arrays):
        """Compute the output array from the input arrays."""
        raise NotImplementedError()

    def backward(self, out_grad, node):
        """Given the gradient of the output (`out_grad`), return one gradient Tensor per input.

        `node` is the output Tensor of the forward pass: its `_inputs` are the inputs.
        """
        raise NotImplementedError()

# %% [markdown] locked
# ## 3.2 Forward: a first operation
#
# Here is `Add`, complete. Its `forward` is one line of NumPy. Ignore `backward` for now: section 3.4
# explains it. Below the class is the small function `add(a, b)`, which reads better than `Add()(a, b)`
# when you use it inside other code.

# %% provided export
class Add(Function):
    def forward(self, a, b):
        return a + b

    def backward(self, out_grad, node):
        return out_grad, out_grad


def add(a, b):
    return Add()(a, b)

# %% provided
a = Tensor([1.0, 2.0, 3.0])
b = Tensor([10.0, 20.0, 30.0])
c = add(a, b)
print(c)
print("made by:", type(c._op).__name__, "| parents are a and b:", c._inputs[0] is a and c._inputs[1] is b)

# %% [markdown] locked
# ## 3.3 Wiring operations into `Tensor`
#
# Nobody wants to write `Add()(a, b)`. Python lets a class decide what `a + b` means: it calls
# `a.__add__(b)`. When the left operand does not know how (as in `2 + a`, where `2` is an `int`),
# Python tries the *reflected* method on the right operand: `a.__radd__(2)`.
#
# babygrad has two families of operations:
#
# * Tensor with Tensor: `Add`, `Sub`, `Mul`, `Div`, `Pow`, `MatMul`;
# * Tensor with a Python number: `AddScalar(c)`, `MulScalar(c)`, `DivScalar(c)`, `PowerScalar(c)`. The
#   number is a setting of the operation, not an input: it never needs a gradient.
#
# The chapter 2 `Tensor` came with `tensor_method`, a decorator that attaches a function to the class
# as a method, so this notebook can grow `Tensor` one cell at a time. Here is `+`, complete:

# %% provided export
@tensor_method
def __add__(self, other):
    if isinstance(other, Tensor):
        return Add()(self, other)
    return AddScalar(other)(self)


@tensor_method
def __radd__(self, other):          # other + self, when other is a Python number
    return self + other

# %% [markdown] locked
# ### Exercise: the other operators (4 points)
#
# Write the methods below in the same style. The operations they call (`Mul`, `Negate`, ...) are
# defined further down: Python looks a name up when the method *runs*, not when it is defined, so
# this works. Some reflected forms need a small identity:
#
# | you write | Python calls | build it as |
# |---|---|---|
# | `a - 2` | `a.__sub__(2)` | `AddScalar(-2)(a)` |
# | `2 - a` | `a.__rsub__(2)` | $-a + 2$: `AddScalar(2)(Negate()(a))` |
# | `2 / a` | `a.__rtruediv__(2)` | $2 \cdot a^{-1}$: `MulScalar(2)(PowerScalar(-1)(a))` |
#
# `reshape`, `transpose`, `sum` and `broadcast_to` take the same arguments as `Reshape(shape)`,
# `Transpose(axes=None)`, `Summation(axes=None)` and `BroadcastTo(shape)`. The check replaces
# every operation with a stand-in that is known to be right, so it tests only your wiring. It works
# the other way round too: the checks of the operations below run with the course's own operators,
# so a slip here never costs them points.

# %% solution id=operators export
@tensor_method
def __mul__(self, other):
    ### BEGIN SOLUTION
    if isinstance(other, Tensor):
        return Mul()(self, other)
    return MulScalar(other)(self)
    ### END SOLUTION


@tensor_method
def __rmul__(self, other):
    ### BEGIN SOLUTION
    return self * other
    ### END SOLUTION


@tensor_method
def __neg__(self):
    ### BEGIN SOLUTION
    return Negate()(self)
    ### END SOLUTION


@tensor_method
def __sub__(self, other):
    ### BEGIN SOLUTION
    if isinstance(other, Tensor):
        return Sub()(self, other)
    return AddScalar(-other)(self)
    ### END SOLUTION


@tensor_method
def __rsub__(self, other):
    ### BEGIN SOLUTION
    return AddScalar(other)(Negate()(self))
    ### END SOLUTION


@tensor_method
def __truediv__(self, other):
    ### BEGIN SOLUTION
    if isinstance(other, Tensor):
        return Div()(self, other)
    return DivScalar(other)(self)
    ### END SOLUTION


@tensor_method
def __rtruediv__(self, other):
    ### BEGIN SOLUTION
    return MulScalar(other)(PowerScalar(-1)(self))
    ### END SOLUTION


@tensor_method
def __pow__(self, other):
    ### BEGIN SOLUTION
    if isinstance(other, Tensor):
        return Pow()(self, other)
    return PowerScalar(other)(self)
    ### END SOLUTION


@tensor_method
def __matmul__(self, other):
    ### BEGIN SOLUTION
    return MatMul()(self, other)
    ### END SOLUTION


@tensor_method
def matmul(self, other):
    ### BEGIN SOLUTION
    return MatMul()(self, other)
    ### END SOLUTION


@tensor_method
def reshape(self, shape):
    ### BEGIN SOLUTION
    return Reshape(tuple(shape))(self)
    ### END SOLUTION


@tensor_method
def transpose(self, axes=None):
    ### BEGIN SOLUTION
    return Transpose(axes)(self)
    ### END SOLUTION


@tensor_method
def sum(self, axes=None):
    ### BEGIN SOLUTION
    return Summation(axes)(self)
    ### END SOLUTION


@tensor_method
def broadcast_to(self, shape):
    ### BEGIN SOLUTION
    return BroadcastTo(tuple(shape))(self)
    ### END SOLUTION

# %% test id=test_operators points=4
verdict = check.operators()
assert verdict.passed, verdict.message

# %% [markdown] locked
# ## 3.4 Backward: the chain rule, one operation at a time
#
# Take two steps, $c = a \cdot b$ and then $d = c \cdot w$, with $a = 2$, $b = 4$, $w = 3$:
# so $c = 8$ and $d = 24$. How much does $d$ move when $a$ moves?
#
# **By nudging.** Move $a$ from $2$ to $2.001$: $c$ becomes $8.004$ and $d$ becomes $24.012$. The
# output moved $0.012$ for a nudge of $0.001$, twelve times as much: $\partial d / \partial a = 12$.
#
# **By the chain rule.** The nudge passes through two steps, and each step scales it:
#
# $$\frac{\partial d}{\partial a} = \frac{\partial d}{\partial c}\cdot\frac{\partial c}{\partial a} = w \cdot b = 3 \cdot 4 = 12 .$$
#
# Each factor is a **local derivative**: it involves one operation and its own inputs, nothing else.
# That is the whole trick of backpropagation. Walk the graph from the output back to the inputs,
# carrying one number, the gradient of the final output with respect to the node you are at. At each
# operation, multiply it by that operation's local derivative and pass the product on to the inputs:
#
# ```
#            a ──┐                      a.grad = 12 = 3 · 4   (out_grad of c times b)
#                ├─[Mul]── c ──┐        c.grad = 3            (out_grad of d times w)
#            b ──┘             ├─[Mul]── d        d.grad = 1 (the start)
#                        w ────┘
#   forward: left to right           backward: right to left, out_grad × local derivative
# ```
#
# The gradient arriving at an operation from above is its `out_grad`. So every `backward` has the
# same shape:
#
# > **gradient for an input = `out_grad` × (local derivative of the output with respect to that input)**
#
# and it returns one gradient per input, each with **the same shape as that input**.
#
# With tensors, "the gradient" means one number per element, and the local derivatives of the
# elementwise operations below act element by element, so "×" is the elementwise product.
#
# Look at `Add.backward` again: the local derivative of $a + b$ with respect to either input is $1$,
# so both inputs get `out_grad` unchanged. And here is how to read the arguments of `backward`:
#
# * `out_grad` is a `Tensor` with the shape of the output;
# * `node` is the output tensor itself, so `node._inputs` are the inputs (as Tensors) and `node`
#   holds the output values, which some derivatives reuse (you will see `exp` and `sigmoid` do so).
#
# Those two arguments hold everything `backward` needs: it must not rely on values that `forward`
# kept on the operation (`self.x = a`). One operation object can make several nodes (call it twice,
# and both outputs point to it), and what `forward` kept belongs to its last call only. (Chapter 10
# reuses such a value safely, only after checking that it belongs to `node`.) The checks call
# `backward` on a node they build by hand, with an operation whose `forward` has not run.
#
# Write gradients with Tensor operations (`out_grad * b`, `out_grad / (node * 2)`) or wrap NumPy
# results in a `Tensor(...)`: both are accepted, as long as `backward` returns Tensors.
#
# **Read the arguments, never write them.** `backward` must leave `out_grad`, the inputs and `node`
# exactly as they were. `Add` hands the very same `out_grad` to both of its inputs, and other
# operations' backwards read the same inputs and outputs again, so a change made in place (assigning
# into `.data[...]`, or `*=` on an array) corrupts gradients somewhere else in the graph, silently.
# Setting their `.grad` is a write too: the engine of section 3.8 fills `.grad` from what `backward`
# returns, so a `backward` that sets it as well counts that gradient twice. The checks compare all
# three before and after your `backward`.
#
# **How your backward is checked.** For one input element $x_i$, nudge it both ways by a tiny $h$ and
# call your `forward`:
#
# $$\frac{\partial}{\partial x_i} \sum_j g_j\, f(x)_j \;\approx\; \frac{\sum_j g_j f(x + h e_i)_j - \sum_j g_j f(x - h e_i)_j}{2h}$$
#
# where $g$ is the `out_grad`. This *central difference* is accurate to about $h^2$. The checks use
# $h = 10^{-5}$ in float64, and two kinds of $g$: all ones, and random numbers (so a `backward` that
# forgets to multiply by `out_grad` is caught). Your `backward`'s answer must agree element by element.
# The differences are only as good as the `forward` they nudge, so they must first agree with those of
# the course's own forward: a `forward` with the wrong slopes or the wrong output shape fails the
# `backward` check too, with a message that says to fix `forward` first (its own check says how).
# They are only as fine as its arithmetic, too: compute in the inputs' own dtype, as NumPy does unless
# told otherwise. A float32 result for float64 inputs keeps about 7 digits and rounds a nudge of
# $10^{-5}$ away, so its differences are noise and the `backward` check fails, however right `backward` is.
#
# **Each operation is graded on its own.** A `backward` written with Tensor operations (`out_grad * b`,
# `1 - node`, `log(a)`, `.broadcast_to(...)`) calls other exercises. While an operation's checks run,
# every *other* operation of this chapter, and the Tensor operators of section 3.3, are the course's
# own versions, known to be right. So use any of them, even one you have not written yet: a mistake
# in one exercise costs that exercise only.
#
# ## 3.5 Elementwise operations
#
# Each section below gives the operation's local derivative in a few lines and one example with real
# numbers. Then write the class and run its two checks. Remember the shape: `out_grad` times the local
# derivative, one gradient per input.
#
# ### Mul
#
# $f(a, b) = a \cdot b$. Hold $b$ still and $f$ is a straight line in $a$ with slope $b$; hold $a$ still
# and the slope is $a$:
#
# $$\frac{\partial f}{\partial a} = b, \qquad \frac{\partial f}{\partial b} = a .$$
#
# *Example.* $a = 4$, $b = 3$, `out_grad` $= 2$: the gradients are $2 \cdot 3 = 6$ for $a$ and
# $2 \cdot 4 = 8$ for $b$. (Nudge $a$ to $4.001$: $f$ moves from $12$ to $12.003$, three times the nudge.)

# %% solution id=mul export
class Mul(Function):
    def forward(self, a, b):
        ### BEGIN SOLUTION
        return a * b
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a, b = node._inputs
        return out_grad * b, out_grad * a
        ### END SOLUTION


def mul(a, b):
    return Mul()(a, b)

# %% test id=test_mul_forward points=1
verdict = check.forward(Mul(), lambda a, b: a * b, shapes=[(2, 3), (2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Mul(), lambda a, b: a * b, shapes=[(5,), (5,)], seed=11),
                    check.forward(Mul(), lambda a, b: a * b, shapes=[(2, 3, 4), (2, 3, 4)], seed=12))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_mul_backward points=2
verdict = check.backward(Mul(), shapes=[(2, 3), (2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Mul(), shapes=[(5,), (5,)], seed=21),
                    check.backward(Mul(), shapes=[(2, 3, 4), (2, 3, 4)], seed=22),
                    check.backward(Mul(), shapes=[(), ()], seed=23),
                    check.backward(Mul(), shapes=[(3, 4), (3, 4)], domains="with_zeros", seed=24))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# #### The example of 3.4, drawn
#
# With `Mul` written, the two steps of section 3.4 can run for real: $c = a \cdot b$, then
# $d = c \cdot w$, with $a = 2$, $b = 4$, $w = 3$. The cell below also runs the chain rule by hand,
# one `backward` at a time from `d` back to the inputs, which is exactly what the engine of section 3.8
# will do for you:
#
# 1. `d` starts with gradient $1$;
# 2. `Mul.backward` at `d` gets `out_grad` $= 1$ and hands `c` the gradient $1 \cdot w = 3$ (and `w`
#    the gradient $1 \cdot c = 8$);
# 3. `Mul.backward` at `c` gets `out_grad` $= 3$ and hands `a` the gradient $3 \cdot b = 12$ (and `b`
#    the gradient $3 \cdot a = 6$).
#
# `draw_graph(d)` then draws the record: each tensor with its shape, value and gradient (blue boxes
# are inputs, the green one the output), and each operation in a yellow oval. If a gradient is not the
# one in the list above, your `Mul.backward` is the place to look.

# %% provided
a, b, w = Tensor([2.0]), Tensor([4.0]), Tensor([3.0])
c = mul(a, b)
d = mul(c, w)
a.name, b.name, w.name, c.name, d.name = "a", "b", "w", "c", "d"   # draw_graph shows names

d.grad = np.ones(1)                                   # 1. the start
grad_c, grad_w = d._op.backward(Tensor(d.grad), d)    # 2. Mul.backward at d
c.grad, w.grad = grad_c.data, grad_w.data
grad_a, grad_b = c._op.backward(grad_c, c)            # 3. Mul.backward at c
a.grad, b.grad = grad_a.data, grad_b.data
draw_graph(d)

# %% [markdown] locked
# ### Sub
#
# $f(a, b) = a - b$: moving $a$ up moves $f$ up by the same amount, moving $b$ up moves $f$ down:
#
# $$\frac{\partial f}{\partial a} = 1, \qquad \frac{\partial f}{\partial b} = -1 .$$
#
# *Example.* $a = 5$, $b = 2$, `out_grad` $= 0.5$: the gradients are $0.5$ and $-0.5$.

# %% solution id=sub export
class Sub(Function):
    def forward(self, a, b):
        ### BEGIN SOLUTION
        return a - b
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return out_grad, -out_grad
        ### END SOLUTION


def sub(a, b):
    return Sub()(a, b)

# %% test id=test_sub_forward points=1
verdict = check.forward(Sub(), lambda a, b: a - b, shapes=[(2, 3), (2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(Sub(), lambda a, b: a - b, shapes=[(2, 3, 4), (2, 3, 4)], seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_sub_backward points=2
verdict = check.backward(Sub(), shapes=[(2, 3), (2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Sub(), shapes=[(5,), (5,)], seed=21),
                    check.backward(Sub(), shapes=[(2, 3, 4), (2, 3, 4)], seed=22))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Div
#
# $f(a, b) = a / b = a \cdot b^{-1}$. In $a$ it is a line with slope $1/b$. In $b$, the power rule on
# $b^{-1}$ gives $-b^{-2}$:
#
# $$\frac{\partial f}{\partial a} = \frac{1}{b}, \qquad \frac{\partial f}{\partial b} = -\frac{a}{b^2} .$$
#
# *Example.* $a = 6$, $b = 2$, `out_grad` $= 1$: $f = 3$, the gradients are $0.5$ and $-6/4 = -1.5$.
# Check the second by nudging: $6 / 2.001 = 2.998501$, a change of $-0.0015$ for a nudge of $0.001$.
#
# The checks keep $b$ away from $0$, where $a/b$ has a pole.

# %% solution id=div export
class Div(Function):
    def forward(self, a, b):
        ### BEGIN SOLUTION
        return a / b
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a, b = node._inputs
        return out_grad / b, -out_grad * a / (b * b)
        ### END SOLUTION


def divide(a, b):
    return Div()(a, b)

# %% test id=test_div_forward points=1
verdict = check.forward(Div(), lambda a, b: a / b, shapes=[(2, 3), (2, 3)], domains=("real", "nonzero"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(Div(), lambda a, b: a / b, shapes=[(4, 5), (4, 5)], domains=("real", "nonzero"), seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_div_backward points=2
verdict = check.backward(Div(), shapes=[(2, 3), (2, 3)], domains=("real", "nonzero"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Div(), shapes=[(6,), (6,)], domains=("real", "nonzero"), seed=21),
                    check.backward(Div(), shapes=[(2, 3, 2), (2, 3, 2)], domains=("nonzero", "nonzero"), seed=22),
                    check.backward(Div(), shapes=[(3, 4), (3, 4)], domains=("with_zeros", "nonzero"), seed=23))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Negate
#
# $f(a) = -a$, so $\partial f / \partial a = -1$ and the gradient is `-out_grad`.
# *Example.* `out_grad` $= [1, -2]$ gives $[-1, 2]$.

# %% solution id=negate export
class Negate(Function):
    def forward(self, a):
        ### BEGIN SOLUTION
        return -a
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return -out_grad
        ### END SOLUTION


def negate(a):
    return Negate()(a)

# %% test id=test_negate_forward points=1
verdict = check.forward(Negate(), lambda a: -a, shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(Negate(), lambda a: -a, shapes=[(3, 1, 2)], seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_negate_backward points=2
verdict = check.backward(Negate(), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.backward(Negate(), shapes=[(3, 1, 2)], seed=21)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Log
#
# $f(a) = \ln a$, defined for $a > 0$, with $\partial f / \partial a = 1/a$. Cross-entropy losses are
# built on it.
#
# *Example.* $a = 2$: $f \approx 0.6931$ and the local derivative is $0.5$ (nudge to $2.001$:
# $\ln 2.001 - \ln 2 \approx 0.0005$). Careful: the $a$ in $1/a$ is the **input**,
# `node._inputs[0]`, not the output `node`.

# %% solution id=log export
class Log(Function):
    def forward(self, a):
        ### BEGIN SOLUTION
        return np.log(a)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return out_grad / node._inputs[0]
        ### END SOLUTION


def log(a):
    return Log()(a)

# %% test id=test_log_forward points=1
verdict = check.forward(Log(), np.log, shapes=[(2, 3)], domains="positive")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(Log(), np.log, shapes=[(4, 2, 2)], domains="positive", seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_log_backward points=2
verdict = check.backward(Log(), shapes=[(2, 3)], domains="positive")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Log(), shapes=[(7,)], domains="positive", seed=21),
                    check.backward(Log(), shapes=[(2, 2, 3)], domains="positive", seed=22))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Exp
#
# $f(a) = e^a$ is its own derivative: $\partial f / \partial a = e^a$, which is the output. So
# `backward` can reuse `node` instead of computing the exponential again.
#
# *Example.* $a = 1$: $f = e \approx 2.718$; with `out_grad` $= 2$ the gradient is $\approx 5.437$.

# %% solution id=exp export
class Exp(Function):
    def forward(self, a):
        ### BEGIN SOLUTION
        return np.exp(a)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return out_grad * node
        ### END SOLUTION


def exp(a):
    return Exp()(a)

# %% test id=test_exp_forward points=1
verdict = check.forward(Exp(), np.exp, shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(Exp(), np.exp, shapes=[(3, 4)], seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_exp_backward points=2
verdict = check.backward(Exp(), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Exp(), shapes=[(6,)], seed=21),
                    check.backward(Exp(), shapes=[(2, 1, 3)], seed=22),
                    check.backward(Exp(), shapes=[(3, 2)], seed=23, other_forward=True))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Pow (tensor to the power of a tensor)
#
# $f(a, b) = a^b$ with both inputs tensors. In $a$ it is the power rule. In $b$, write
# $a^b = e^{b \ln a}$ and differentiate the exponent:
#
# $$\frac{\partial f}{\partial a} = b\, a^{b-1}, \qquad \frac{\partial f}{\partial b} = a^b \ln a .$$
#
# *Example.* $a = 2$, $b = 3$, `out_grad` $= 1$: $f = 8$, the gradients are $3 \cdot 2^2 = 12$ and
# $8 \ln 2 \approx 5.545$. The second one needs $\ln a$: build it with `log(a)`, from the `Log`
# you just wrote (the check of `Pow` uses the course's own `Log`, so a slip in yours costs `Log`
# only). The checks keep $a$ positive, where $\ln a$ exists.

# %% solution id=pow export
class Pow(Function):
    def forward(self, a, b):
        ### BEGIN SOLUTION
        return np.power(a, b)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a, b = node._inputs
        return out_grad * b * a ** (b - 1), out_grad * node * log(a)
        ### END SOLUTION


def power(a, b):
    return Pow()(a, b)

# %% test id=test_pow_forward points=1
verdict = check.forward(Pow(), np.power, shapes=[(2, 3), (2, 3)], domains=("positive", "real"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(Pow(), np.power, shapes=[(7,), (7,)], domains=("positive", "real"), seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_pow_backward points=2
verdict = check.backward(Pow(), shapes=[(2, 3), (2, 3)], domains=("positive", "real"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Pow(), shapes=[(5,), (5,)], domains=("positive", "real"), seed=21),
                    check.backward(Pow(), shapes=[(2, 2, 3), (2, 2, 3)], domains=("positive", "real"), seed=22))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Sqrt
#
# $f(a) = \sqrt{a} = a^{1/2}$, and the power rule gives $\frac{1}{2} a^{-1/2} = \frac{1}{2\sqrt a}$,
# which is $\frac{1}{2f}$: the output again.
#
# *Example.* $a = 4$: $f = 2$, local derivative $1/(2 \cdot 2) = 0.25$. The checks keep $a > 0$.

# %% solution id=sqrt export
class Sqrt(Function):
    def forward(self, a):
        ### BEGIN SOLUTION
        return np.sqrt(a)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return out_grad / (node * 2)
        ### END SOLUTION


def sqrt(a):
    return Sqrt()(a)

# %% test id=test_sqrt_forward points=1
verdict = check.forward(Sqrt(), np.sqrt, shapes=[(2, 3)], domains="positive")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(Sqrt(), np.sqrt, shapes=[(5, 2)], domains="positive", seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_sqrt_backward points=2
verdict = check.backward(Sqrt(), shapes=[(2, 3)], domains="positive")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Sqrt(), shapes=[(5,)], domains="positive", seed=21),
                    check.backward(Sqrt(), shapes=[(3, 2, 2)], domains="positive", seed=22))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Abs
#
# $f(a) = |a|$ is $a$ for positive $a$ and $-a$ for negative $a$, so its slope is $\mathrm{sign}(a)$:
# $+1$ or $-1$. At $a = 0$ there is a kink and no derivative; by convention we use $0$ there, which
# is what `np.sign` gives. The finite-difference checks draw inputs of both signs but keep them away
# from the kink, where the differences would straddle it; one more check puts inputs of exactly 0
# among them and holds the gradient there to the convention.
#
# *Example.* $a = [-3, 2]$, `out_grad` $= [1, 1]$: the gradient is $[-1, 1]$.

# %% solution id=abs export
class Abs(Function):
    def forward(self, a):
        ### BEGIN SOLUTION
        return np.abs(a)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a = node._inputs[0]
        return out_grad * Tensor(np.sign(a.data), dtype=a.dtype)
        ### END SOLUTION


def absolute(a):
    return Abs()(a)

# %% test id=test_abs_forward points=1
verdict = check.forward(Abs(), np.abs, shapes=[(2, 3)], domains="nonzero")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(Abs(), np.abs, shapes=[(4, 3)], domains="nonzero", seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_abs_backward points=2
verdict = check.all(check.backward(Abs(), shapes=[(2, 3)], domains="nonzero"),
                    check.kink(Abs(), shapes=[(2, 3)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Abs(), shapes=[(8,)], domains="nonzero", seed=21),
                    check.backward(Abs(), shapes=[(2, 3, 2)], domains="nonzero", seed=22),
                    check.kink(Abs(), shapes=[(4, 5)], seed=23))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### ReLU
#
# $\mathrm{relu}(a) = \max(a, 0)$: the identity for positive inputs, zero for negative ones. It is
# the most common *activation*: without some bend between layers, a stack of layers would collapse
# into a single matrix multiplication. Its derivative is $1$ where $a > 0$ and $0$ where $a < 0$, so
# the gradient is `out_grad` with the entries of negative inputs zeroed. Use 0 at the kink $a = 0$
# (a check puts inputs of exactly 0 in: finite differences cannot judge them).
#
# *Example.* $a = [-1.5, 2]$, `out_grad` $= [4, 4]$: the output is $[0, 2]$ and the gradient $[0, 4]$.
# The mask comes from the **input**, not from `out_grad`.

# %% solution id=relu export
class ReLU(Function):
    def forward(self, a):
        ### BEGIN SOLUTION
        return np.maximum(a, 0)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a = node._inputs[0]
        return out_grad * Tensor(a.data > 0, dtype=a.dtype)
        ### END SOLUTION


def relu(a):
    return ReLU()(a)

# %% test id=test_relu_forward points=1
verdict = check.forward(ReLU(), lambda a: np.maximum(a, 0), shapes=[(2, 3)], domains="nonzero")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(ReLU(), lambda a: np.maximum(a, 0), shapes=[(3, 5)], domains="nonzero", seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_relu_backward points=2
verdict = check.all(check.backward(ReLU(), shapes=[(2, 3)], domains="nonzero"),
                    check.kink(ReLU(), shapes=[(2, 3)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(ReLU(), shapes=[(10,)], domains="nonzero", seed=21),
                    check.backward(ReLU(), shapes=[(2, 2, 3)], domains="nonzero", seed=22),
                    check.kink(ReLU(), shapes=[(4, 5)], seed=23))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Sigmoid
#
# $s(a) = \dfrac{1}{1 + e^{-a}}$ squeezes any number into $(0, 1)$. Differentiate $(1 + e^{-a})^{-1}$:
#
# $$s'(a) = \frac{e^{-a}}{(1 + e^{-a})^2} = \frac{1}{1 + e^{-a}} \cdot \frac{e^{-a}}{1 + e^{-a}} = s\,(1 - s) .$$
#
# The derivative is written with the **output** $s$, which `node` holds.
#
# *Example.* $a = 0$: $s = 0.5$ and $s' = 0.25$. At $a = 2$: $s \approx 0.8808$ and
# $s' \approx 0.8808 \cdot 0.1192 \approx 0.105$: far from zero, the curve flattens.

# %% solution id=sigmoid export
class Sigmoid(Function):
    def forward(self, a):
        ### BEGIN SOLUTION
        return 1 / (1 + np.exp(-a))
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return out_grad * node * (1 - node)
        ### END SOLUTION


def sigmoid(a):
    return Sigmoid()(a)

# %% test id=test_sigmoid_forward points=1
verdict = check.forward(Sigmoid(), lambda a: 1 / (1 + np.exp(-a)), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Sigmoid(), lambda a: 1 / (1 + np.exp(-a)), shapes=[(4, 4)], seed=11),
                    check.forward(Sigmoid(), lambda a: 1 / (1 + np.exp(-a)), shapes=[(3,)], domains="large", seed=12))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_sigmoid_backward points=2
verdict = check.backward(Sigmoid(), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Sigmoid(), shapes=[(9,)], seed=21),
                    check.backward(Sigmoid(), shapes=[(2, 3, 2)], seed=22),
                    check.backward(Sigmoid(), shapes=[(3,)], domains="very_negative", seed=23),
                    check.backward(Sigmoid(), shapes=[(2, 3)], seed=24, other_forward=True))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Tanh
#
# $t(a) = \tanh a$ squeezes into $(-1, 1)$. With $\tanh = \sinh / \cosh$ and the quotient rule,
# $t' = (\cosh^2 - \sinh^2) / \cosh^2 = 1 - t^2$: the output again.
#
# *Example.* $a = 0.5$: $t \approx 0.4621$, $t^2 \approx 0.2136$ and $t' \approx 1 - 0.2136 = 0.7864$.

# %% solution id=tanh export
class Tanh(Function):
    def forward(self, a):
        ### BEGIN SOLUTION
        return np.tanh(a)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return out_grad * (1 - node * node)
        ### END SOLUTION


def tanh(a):
    return Tanh()(a)

# %% test id=test_tanh_forward points=1
verdict = check.forward(Tanh(), np.tanh, shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Tanh(), np.tanh, shapes=[(3, 3)], seed=11),
                    check.forward(Tanh(), np.tanh, shapes=[(3,)], domains="large", seed=12),
                    check.forward(Tanh(), np.tanh, shapes=[(3,)], domains="very_negative", seed=13))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_tanh_backward points=2
verdict = check.backward(Tanh(), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Tanh(), shapes=[(7,)], seed=21),
                    check.backward(Tanh(), shapes=[(2, 2, 2)], seed=22),
                    check.backward(Tanh(), shapes=[(3, 2)], seed=23, other_forward=True))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### GELU
#
# ReLU switches a unit fully off below zero and fully on above, with a kink in between. **GELU**, the
# *Gaussian error linear unit*, bends the same way without the kink: it multiplies $x$ by the
# probability $\Phi(x)$ that a standard normal number falls below $x$. Large positive inputs pass almost
# unchanged, large negative ones are almost zeroed, and near zero the curve is smooth (it even dips a
# little below zero, to about $-0.17$ at $x \approx -0.75$). The transformers of GPT-2 and BERT use it
# between their layers.
#
# $\Phi$ is written with the error function $\mathrm{erf}$, which NumPy does not have. So babygrad
# computes GELU with the **tanh approximation**, the form GPT-2's and BERT's code used:
#
# $$\mathrm{gelu}(x) \approx \tfrac12\, x\,\bigl(1 + \tanh z\bigr), \qquad z = \sqrt{2/\pi}\,\bigl(x + 0.044715\,x^3\bigr) .$$
#
# It is an approximation: it differs from $x\,\Phi(x)$ by less than $5 \cdot 10^{-4}$ anywhere. Your
# `forward` computes exactly this formula, and your `backward` its derivative, so the two agree.
#
# **The derivative.** Write $t = \tanh z$. GELU is a product of two factors that both depend on $x$,
# $\tfrac12 x$ and $(1 + t)$, so the product rule gives two terms:
#
# $$\frac{d}{dx}\,\tfrac12 x (1 + t) = \tfrac12 (1 + t) + \tfrac12 x \,\frac{dt}{dx} .$$
#
# $t = \tanh z$ with $z$ a function of $x$: the chain rule, with $\tanh$'s derivative $1 - t^2$ from the
# previous exercise, gives
#
# $$\frac{dt}{dx} = (1 - t^2)\,\frac{dz}{dx}, \qquad \frac{dz}{dx} = \sqrt{2/\pi}\,\bigl(1 + 3 \cdot 0.044715\,x^2\bigr) .$$
#
# *Example.* $x = 1$: $z = 0.79788 \cdot 1.044715 \approx 0.83356$, $t \approx 0.68238$, and
# $\mathrm{gelu}(1) \approx 0.5 \cdot 1.68238 \approx 0.84119$. The derivative is
# $0.84119 + 0.5 \cdot (1 - 0.46565) \cdot 0.79788 \cdot 1.13415 \approx 0.84119 + 0.24177 \approx 1.0830$:
# a little steeper than 1, where the curve comes out of its dip. At $x = -1$ it is $\approx -0.0830$.
# Everything is evaluated at the **input** $x$, `node._inputs[0]`.

# %% solution id=gelu export
class GELU(Function):
    def forward(self, a):
        ### BEGIN SOLUTION
        return 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        x = node._inputs[0].data
        t = np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))
        dz = np.sqrt(2 / np.pi) * (1 + 3 * 0.044715 * x ** 2)
        return out_grad * Tensor(0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dz, dtype=node._inputs[0].dtype)
        ### END SOLUTION


def gelu(a):
    return GELU()(a)

# %% test id=test_gelu_forward points=1
verdict = check.forward(GELU(), lambda a: 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3))),
                        shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(GELU(), lambda a: 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3))),
                        shapes=[(4, 3)], seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_gelu_backward points=2
verdict = check.backward(GELU(), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(GELU(), shapes=[(8,)], seed=21),
                    check.backward(GELU(), shapes=[(2, 3, 2)], seed=22),
                    check.backward(GELU(), shapes=[(3, 4)], domains="with_zeros", seed=23))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 3.6 Shape operations
#
# Real data arrives in awkward shapes, and layers expect particular ones. The six operations below
# move numbers around, pick some of them, or add them up, without other arithmetic. Their backward has one job: bring
# `out_grad` back to **the input's shape**, putting each number where it came from.
#
# Their inputs are often views that lie in memory in another order than NumPy's default: a transpose
# (the first axis fastest, "Fortran order"), a reversed slice `a[::-1]` (steps backwards). Each
# operation works on the numbers in their row-major order, `a[0, 0], a[0, 1], ...`, as NumPy's own
# functions do, whatever order memory holds them in; the checks hand them such views too.
#
# ### Reshape
#
# `Reshape(shape)` lays the same numbers out in a new shape: $(2, 3) \to (3, 2)$ or $(6,) \to (2, 3)$.
# Each output element *is* one input element, so the local derivative is $1$ for that pair and the
# gradient is just `out_grad` laid back out in the input's shape:
#
# ```
#   forward  [[1 2 3]      reshape (3, 2)    [[1 2]
#             [4 5 6]]   ─────────────────►   [3 4]
#                                             [5 6]]
#   backward  out_grad (3, 2)  ──reshape to the input's shape (2, 3)──►  gradient (2, 3)
# ```

# %% solution id=reshape export
class Reshape(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        ### BEGIN SOLUTION
        return a.reshape(self.shape)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return out_grad.reshape(node._inputs[0].shape)
        ### END SOLUTION


def reshape(a, shape):
    return Reshape(shape)(a)

# %% test id=test_reshape_forward points=1
verdict = check.all(check.forward(Reshape((3, 2)), lambda a: a.reshape(3, 2), shapes=[(2, 3)]),
                    check.forward(Reshape((3, 2)), lambda a: a.reshape(3, 2), shapes=[(2, 3)], layout="fortran"))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Reshape((4, 6)), lambda a: a.reshape(4, 6), shapes=[(2, 3, 4)], seed=11),
                    check.forward(Reshape((2, 3)), lambda a: a.reshape(2, 3), shapes=[(6,)], seed=12),
                    check.forward(Reshape((6, 4)), lambda a: a.reshape(6, 4), shapes=[(2, 3, 4)], seed=14, layout="fortran"),
                    check.forward(Reshape((4, 6)), lambda a: a.reshape(4, 6), shapes=[(2, 3, 4)], seed=15, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_reshape_backward points=2
verdict = check.backward(Reshape((3, 2)), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Reshape((4, 6)), shapes=[(2, 3, 4)], seed=21),
                    check.backward(Reshape((2, 3)), shapes=[(6,)], seed=22),
                    check.backward(Reshape((24,)), shapes=[(2, 3, 4)], seed=23),
                    check.backward(Reshape((3, 8)), shapes=[(2, 3, 4)], seed=24, layout="fortran"),
                    check.backward(Reshape((12, 2)), shapes=[(2, 3, 4)], seed=25, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Transpose
#
# `Transpose(axes)` reorders axes. With `axes=None` it swaps the last two, the matrix transpose
# (NumPy's `np.swapaxes(a, -1, -2)`). With a tuple it is a permutation: output axis $i$ is input axis
# `axes[i]` (NumPy's `np.transpose(a, axes)`).
#
# The backward must undo the permutation. Swapping two axes undoes itself, but a general permutation
# does not. Take an input of shape $(3, 2, 5)$ and `axes = (1, 2, 0)`: output axis 0 is input axis 1
# (size 2), output axis 1 is input axis 2 (size 5), output axis 2 is input axis 0 (size 3), so the
# output has shape $(2, 5, 3)$. The picture follows each axis by its colour: down through the forward
# permutation, then down again through the one the backward needs.

# %% provided
from autograder.student.pictures import transpose_picture

transpose_picture((3, 2, 5), axes=(1, 2, 0))

# %% [markdown] locked
# To go back, ask for each input axis where it went: axis 0 went to position 2, axis 1 to position 0,
# axis 2 to position 1. So the inverse permutation is $(2, 0, 1)$, and `np.argsort((1, 2, 0))` computes
# exactly that. Applying `(1, 2, 0)` again would give shape $(5, 3, 2)$: wrong.

# %% solution id=transpose export
class Transpose(Function):
    def __init__(self, axes=None):
        # negative axes (NumPy allows them) counted from the front, so that np.argsort sees a permutation
        self.axes = None if axes is None else tuple(int(i) % len(axes) for i in axes)

    def forward(self, a):
        ### BEGIN SOLUTION
        if self.axes is None:
            return np.swapaxes(a, -1, -2)
        return np.transpose(a, self.axes)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        if self.axes is None:
            return out_grad.transpose()
        return out_grad.transpose(tuple(int(i) for i in np.argsort(self.axes)))
        ### END SOLUTION


def transpose(a, axes=None):
    return Transpose(axes)(a)

# %% test id=test_transpose_forward points=1
verdict = check.all(check.forward(Transpose(), lambda a: a.T, shapes=[(2, 3)]),
                    check.forward(Transpose((1, 2, 0)), lambda a: a.transpose(1, 2, 0), shapes=[(3, 2, 5)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Transpose(), lambda a: np.swapaxes(a, -1, -2), shapes=[(4, 2, 3)], seed=11),
                    check.forward(Transpose((2, 0, 1)), lambda a: a.transpose(2, 0, 1), shapes=[(2, 3, 4)], seed=12),
                    check.forward(Transpose((0, 3, 1, 2)), lambda a: a.transpose(0, 3, 1, 2), shapes=[(2, 3, 4, 5)], seed=13),
                    check.forward(Transpose(), lambda a: np.swapaxes(a, -1, -2), shapes=[(2, 3, 4)], seed=14, layout="fortran"),
                    check.forward(Transpose((2, 0, 1)), lambda a: a.transpose(2, 0, 1), shapes=[(2, 3, 4)], seed=15, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_transpose_backward points=3
verdict = check.all(check.backward(Transpose(), shapes=[(2, 3)]),
                    check.backward(Transpose((1, 2, 0)), shapes=[(3, 2, 5)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Transpose(), shapes=[(4, 2, 3)], seed=21),
                    check.backward(Transpose((2, 0, 1)), shapes=[(2, 3, 4)], seed=22),
                    check.backward(Transpose((0, 3, 1, 2)), shapes=[(2, 3, 4, 5)], seed=23),
                    check.backward(Transpose((1, 0)), shapes=[(3, 5)], seed=24),
                    check.backward(Transpose((2, 0, 1)), shapes=[(2, 3, 4)], seed=25, layout="fortran"),
                    check.backward(Transpose(), shapes=[(2, 3, 4)], seed=26, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Summation
#
# `Summation(axes)` adds along some axes, and those axes disappear: summing a $(2, 3)$ matrix over
# axis 0 gives shape $(3,)$, over axis 1 shape $(2,)$, and over everything (`axes=None`) one number.
# `axes` may be an int, a tuple, and negative (counting from the end, as in NumPy).
#
# Every input element contributes to its sum with slope $1$, so its gradient is the `out_grad` of
# the sum it went into. The backward therefore copies each `out_grad` entry back over the elements it
# summed:
#
# ```
#   forward, axes=0:   [[1 2 3]                 backward:  out_grad [g0 g1 g2]
#                       [4 5 6]]  ──►  [5 7 9]                 ──►  [[g0 g1 g2]
#                                                                    [g0 g1 g2]]
# ```
#
# In two steps: **reshape** `out_grad` so that the summed axes come back with size 1
# ($(3,) \to (1, 3)$), then **broadcast** it to the input's shape ($(1, 3) \to (2, 3)$). For an input of
# shape $(2, 3, 4)$ and `axes=(0, -1)`, `out_grad` has shape $(3,)$, goes to $(1, 3, 1)$, then to
# $(2, 3, 4)$. Normalize negative axes with `axis % ndim`.
#
# The broadcast step is the next exercise, `BroadcastTo`, which you have not written yet. Use
# `.broadcast_to(shape)` here anyway: while this check runs, the course's own `BroadcastTo` (and
# `Reshape`) stand in for yours, so `Summation` is graded on its own whether yours is written or not.
# Once you have written `BroadcastTo`, the two work together in your library.

# %% solution id=summation export
class Summation(Function):
    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, a):
        ### BEGIN SOLUTION
        return a.sum(axis=self.axes)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        shape = node._inputs[0].shape
        if self.axes is None:
            summed = set(range(len(shape)))
        else:
            axes = (self.axes,) if isinstance(self.axes, int) else self.axes
            summed = {axis % len(shape) for axis in axes}
        kept = tuple(1 if i in summed else n for i, n in enumerate(shape))
        return out_grad.reshape(kept).broadcast_to(shape)
        ### END SOLUTION


def summation(a, axes=None):
    return Summation(axes)(a)

# %% test id=test_summation_forward points=1
verdict = check.all(check.forward(Summation(), np.sum, shapes=[(2, 3)]),
                    check.forward(Summation(0), lambda a: a.sum(axis=0), shapes=[(2, 3)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Summation((0, -1)), lambda a: a.sum(axis=(0, 2)), shapes=[(2, 3, 4)], seed=11),
                    check.forward(Summation(-1), lambda a: a.sum(axis=-1), shapes=[(2, 3, 4)], seed=12),
                    check.forward(Summation((1,)), lambda a: a.sum(axis=1), shapes=[(2, 3, 4)], seed=13),
                    check.forward(Summation(0), lambda a: a.sum(axis=0), shapes=[(2, 3, 4)], seed=14, layout="fortran"),
                    check.forward(Summation(-1), lambda a: a.sum(axis=-1), shapes=[(2, 3, 4)], seed=15, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_summation_backward points=3
verdict = check.all(check.backward(Summation(), shapes=[(2, 3)]),
                    check.backward(Summation(0), shapes=[(2, 3)]),
                    check.backward(Summation(1), shapes=[(2, 3)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Summation((0, -1)), shapes=[(2, 3, 4)], seed=21),
                    check.backward(Summation(-1), shapes=[(2, 3, 4)], seed=22),
                    check.backward(Summation((1,)), shapes=[(2, 3, 4)], seed=23),
                    check.backward(Summation(), shapes=[(3, 1, 2)], seed=24),
                    check.backward(Summation((0, 1, 2)), shapes=[(2, 2, 3)], seed=25),
                    check.backward(Summation(1), shapes=[(2, 3, 4)], seed=26, layout="fortran"),
                    check.backward(Summation((0, -1)), shapes=[(2, 3, 4)], seed=27, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### BroadcastTo
#
# `BroadcastTo(shape)` stretches a tensor to a bigger shape by repeating it, the way NumPy lines
# shapes up when you add a bias vector to every row of a batch. NumPy right-aligns the two shapes and
# does two things: it **prepends** axes of size 1 until the input has as many axes as the target, then
# it **stretches** every axis of size 1 to the target's size, as if the values were copied (NumPy
# copies nothing: it returns a view that reads the same values again). Here is an input `x` of shape
# $(3, 1)$ broadcast to $(2, 3, 4)$, drawn as in chapter 2: its elements are named `a`, `b`, `c`; the
# solid cells are `x`'s own, the dashed ones the copies. The output's axis 0 is drawn as two pages.

# %% provided
from autograder.student.pictures import broadcast_picture

broadcast_picture(np.array([["a"], ["b"], ["c"]]), to=(2, 3, 4), names=["x"])

# %% [markdown] locked
# Each input element is used many times (here $2 \cdot 4 = 8$ times), and the gradient of a value used
# in several places is the **sum** of the gradients of all its copies. So the backward sums
# `out_grad` over the prepended axes and over the stretched axes, then reshapes to the input's shape.
#
# *Example.* Broadcasting $(3, 1)$ to $(2, 3, 4)$ with an all-ones `out_grad`: every input element gets
# $8$. Summing over the prepended axis 0 and the stretched axis 2 of the output gives shape $(3,)$;
# reshape it to $(3, 1)$.

# %% solution id=broadcast_to export
class BroadcastTo(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        ### BEGIN SOLUTION
        return np.broadcast_to(a, self.shape)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        in_shape = node._inputs[0].shape
        prepended = len(self.shape) - len(in_shape)
        stretched = tuple(i for i, n in enumerate(self.shape)
                          if i < prepended or (in_shape[i - prepended] == 1 and n != 1))
        grad = out_grad.sum(stretched) if stretched else out_grad
        return grad.reshape(in_shape)
        ### END SOLUTION


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)

# %% test id=test_broadcast_to_forward points=1
verdict = check.forward(BroadcastTo((3, 4)), lambda a: np.broadcast_to(a, (3, 4)), shapes=[(3, 1)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(BroadcastTo((2, 3, 4)), lambda a: np.broadcast_to(a, (2, 3, 4)), shapes=[(3, 1)], seed=11),
                    check.forward(BroadcastTo((5, 3)), lambda a: np.broadcast_to(a, (5, 3)), shapes=[(3,)], seed=12),
                    check.forward(BroadcastTo((2, 3, 4)), lambda a: np.broadcast_to(a, (2, 3, 4)), shapes=[(3, 4)], seed=13, layout="fortran"),
                    check.forward(BroadcastTo((4, 2, 3)), lambda a: np.broadcast_to(a, (4, 2, 3)), shapes=[(2, 3)], seed=14, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_broadcast_to_backward points=3
verdict = check.all(check.backward(BroadcastTo((3, 4)), shapes=[(3, 1)]),
                    check.backward(BroadcastTo((2, 3)), shapes=[(3,)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(BroadcastTo((2, 3, 4)), shapes=[(3, 1)], seed=21),
                    check.backward(BroadcastTo((4, 2, 3)), shapes=[(1, 3)], seed=22),
                    check.backward(BroadcastTo((2, 3)), shapes=[(2, 3)], seed=23),
                    check.backward(BroadcastTo((3, 2, 5)), shapes=[(1, 2, 1)], seed=24),
                    check.backward(BroadcastTo((2, 3)), shapes=[()], seed=25),
                    check.backward(BroadcastTo((2, 3, 4)), shapes=[(3, 4)], seed=26, layout="fortran"),
                    check.backward(BroadcastTo((4, 2, 3)), shapes=[(2, 1)], seed=27, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### GetItem: indexing
#
# `x[0]`, `x[:, 1:]`, `x[::-1]`, `x[-1, ::2]`, `x[[0, 2, 0]]`: models index all the time, to take the
# last step of a sequence, one column of a batch, or the rows of a lookup table that a batch of
# integer ids points to (an *embedding*). `GetItem(index)` is that operation, and `x[index]` builds it
# once the cell below gives `Tensor` its `__getitem__`. `index` is whatever you would put between the
# brackets in NumPy: an int, a slice (`start:stop:step`, with negative numbers counting from the end),
# a list or array of integers, or a tuple of those, one per axis. NumPy does the forward for you:
# `a[self.index]`.
#
# **The backward.** Every output element is a copy of one input element, so its local derivative is
# $1$ with respect to that element and $0$ with respect to all others. An input element's gradient is
# therefore the sum of `out_grad` over the output places it was copied to, and $0$ if it was not picked
# at all: start from zeros in the **input's** shape and put `out_grad` back where its values came from.
#
# ```
#   forward   x = [5  7  9]      x[[0, 2, 0]] = [5  9  5]
#   backward  out_grad          [1  10  100]
#             x's gradient   [1 + 100   0   10] = [101  0  10]
# ```
#
# A slice picks every element at most once, so writing `out_grad` into the zeros at `index` would do.
# An integer array may pick the same element several times, like `0` above, and then each pick is a
# use of that element and the gradient is the sum of the shares, the rule you met in `BroadcastTo`.
# An assignment `grad[index] = out_grad.data` does not add: it writes position 0 twice and keeps the
# last value, $[100, 0, 10]$. NumPy's `np.add.at(grad, index, values)` adds every value at its index,
# repeats included.

# %% solution id=getitem export
class GetItem(Function):
    def __init__(self, index):
        self.index = index

    def forward(self, a):
        ### BEGIN SOLUTION
        return a[self.index]
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a = node._inputs[0]
        grad = np.zeros(a.shape, dtype=np.float64)
        np.add.at(grad, self.index, out_grad.data)
        return Tensor(grad, dtype=a.dtype)
        ### END SOLUTION


@tensor_method
def __getitem__(self, index):          # x[index]
    return GetItem(index)(self)

# %% test id=test_getitem_forward points=1
verdict = check.all(check.forward(GetItem(np.s_[1:, ::-2]), lambda a: a[1:, ::-2], shapes=[(3, 4)]),
                    check.forward(GetItem(np.s_[[0, 2, 0]]), lambda a: a[[0, 2, 0]], shapes=[(3, 2)]),
                    check.indexing(np.s_[[0, 2, 0]], (3, 2)),
                    check.indexing(np.s_[1, -2], (3, 4)))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.indexing(np.s_[-1], (3, 4), seed=16),
                    check.indexing(np.s_[1:, ::-2], (3, 4), seed=17),
                    check.indexing(np.s_[:, [2, 2, 0], -1], (2, 3, 4), seed=18),
                    check.indexing(np.array([1, 0, 1]), (2, 3), seed=19),
                    check.indexing(np.s_[[1, 0, 1, 1], 2:], (2, 5), seed=20))
assert verdict.passed, verdict.message
verdict = check.all(check.forward(GetItem(np.s_[-1]), lambda a: a[-1], shapes=[(3, 4)], seed=11),
                    check.forward(GetItem(np.s_[[1, 0, 1, 1], 2:]), lambda a: a[[1, 0, 1, 1], 2:], shapes=[(2, 5)], seed=12),
                    check.forward(GetItem(np.s_[1, -2]), lambda a: a[1, -2], shapes=[(3, 4)], seed=13),
                    check.forward(GetItem(np.s_[:, [2, 0, 2]]), lambda a: a[:, [2, 0, 2]], shapes=[(3, 4)], seed=14, layout="fortran"),
                    check.forward(GetItem(np.s_[1:, ::-2]), lambda a: a[1:, ::-2], shapes=[(3, 4)], seed=15, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_getitem_backward points=3
verdict = check.all(check.backward(GetItem(np.s_[1:, ::-2]), shapes=[(3, 4)]),
                    check.backward(GetItem(np.s_[[0, 2, 0]]), shapes=[(3, 2)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(GetItem(np.s_[[1, 0, 1, 1], 2:]), shapes=[(2, 5)], seed=21),
                    check.backward(GetItem(np.s_[:, [2, 2, 0], -1]), shapes=[(2, 3, 4)], seed=22),
                    check.backward(GetItem(np.s_[1, -2]), shapes=[(3, 4)], seed=23),
                    check.backward(GetItem(np.s_[::-1]), shapes=[(5,)], seed=24),
                    check.backward(GetItem(np.s_[[0, 0, 0]]), shapes=[(2,)], seed=25),
                    check.backward(GetItem(np.s_[:, [2, 0, 2]]), shapes=[(3, 4)], seed=26, layout="fortran"),
                    check.backward(GetItem(np.s_[1:, ::-2]), shapes=[(3, 4)], seed=27, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### MatMul
#
# $C = A B$ with $A$ of shape $(m, n)$ and $B$ of shape $(n, p)$: $C_{ij} = \sum_k A_{ik} B_{kj}$.
# Every layer of a network is one of these.
#
# **The gradient for $A$.** $A_{ik}$ appears in row $i$ of $C$, in $C_{ij}$ for every $j$, each time
# multiplied by $B_{kj}$. So
# $\partial L/\partial A_{ik} = \sum_j G_{ij} B_{kj}$, where $G$ is `out_grad`: that is the product
# $G B^\top$. **The gradient for $B$**, by the same argument, is $A^\top G$:
#
# $$\frac{\partial L}{\partial A} = G\,B^\top \quad (m \times p)(p \times n) = (m \times n), \qquad
#   \frac{\partial L}{\partial B} = A^\top G \quad (n \times m)(m \times p) = (n \times p) .$$
#
# The shapes are a good memory aid: there is only one way to combine $G$ with $B$ (or $A$) that lands
# on $A$'s shape (or $B$'s).
#
# *Example.* $A = \begin{pmatrix}1 & 2\end{pmatrix}$, $B = \begin{pmatrix}3\\4\end{pmatrix}$, so $C = (11)$.
# With $G = (1)$: $G B^\top = (3\;\;4)$ (nudging $A_{11}$ moves $C$ by $B_{11} = 3$) and
# $A^\top G = \begin{pmatrix}1\\2\end{pmatrix}$.
#
# **Batches.** NumPy's `@` also multiplies stacks of matrices: shapes $(5, m, n)$ @ $(n, p)$ give
# $(5, m, p)$, five products that share the same $B$. The leading *batch* axes broadcast like
# `BroadcastTo`. The formulas above still hold batch by batch (transpose only the **last two** axes,
# which `Transpose()` with no axes does), but a $B$ shared by all five products gets five gradients,
# and they must be summed: $A^\top G$ has shape $(5, n, p)$ and $B$ has shape $(n, p)$. So finish
# each gradient the way `BroadcastTo.backward` does: sum over the batch axes its input was broadcast
# along, then reshape to the input's shape.
#
# The course's solution takes one shortcut, which you may leave out: when `a.requires_grad` is False,
# as for the batch of images that chapter 4's `Linear` multiplies, no one uses the gradient for `a`,
# so it returns zeros for it instead of computing $G B^\top$, a product as large as the forward's.
# One check runs that case (`constant=[0]`): `b`'s gradient must still be right there.

# %% solution id=matmul export
class MatMul(Function):
    def forward(self, a, b):
        ### BEGIN SOLUTION
        return a @ b
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a, b = node._inputs

        def sum_to_shape(grad, shape):
            # sum over the batch axes that broadcasting added or stretched, then restore `shape`
            extra = grad.ndim - len(shape)
            axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape)
                                               if n == 1 and grad.shape[extra + i] != 1)
            return (grad.sum(axes) if axes else grad).reshape(shape)

        if not a.requires_grad:     # a batch of data: no one uses its gradient, so skip its product
            return Tensor(np.zeros_like(a.data), dtype=a.dtype), sum_to_shape(a.transpose() @ out_grad, b.shape)
        return (sum_to_shape(out_grad @ b.transpose(), a.shape),
                sum_to_shape(a.transpose() @ out_grad, b.shape))
        ### END SOLUTION


def matmul(a, b):
    return MatMul()(a, b)

# %% test id=test_matmul_forward points=1
verdict = check.forward(MatMul(), np.matmul, shapes=[(2, 3), (3, 4)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(MatMul(), np.matmul, shapes=[(5, 2, 3), (3, 4)], seed=11),
                    check.forward(MatMul(), np.matmul, shapes=[(2, 1, 2, 3), (3, 3, 2)], seed=12),
                    check.forward(MatMul(), np.matmul, shapes=[(4, 3), (3, 5)], seed=13, layout="fortran"),
                    check.forward(MatMul(), np.matmul, shapes=[(2, 4, 3), (3, 5)], seed=14, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_matmul_backward points=3
verdict = check.all(check.backward(MatMul(), shapes=[(2, 3), (3, 4)]),
                    check.backward(MatMul(), shapes=[(5, 2, 3), (3, 4)]),
                    check.backward(MatMul(), shapes=[(5, 2, 3), (3, 4)], constant=[0]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(MatMul(), shapes=[(4, 4), (4, 4)], seed=21),
                    check.backward(MatMul(), shapes=[(1, 5), (5, 2)], seed=22),
                    check.backward(MatMul(), shapes=[(3, 2, 4), (4, 3)], seed=23),
                    check.backward(MatMul(), shapes=[(2, 3), (4, 3, 2)], seed=24),
                    check.backward(MatMul(), shapes=[(2, 2, 3), (2, 3, 4)], seed=25),
                    check.backward(MatMul(), shapes=[(2, 1, 2, 3), (3, 3, 2)], seed=26),
                    check.backward(MatMul(), shapes=[(2, 3, 2, 4), (4, 3)], seed=27),
                    check.backward(MatMul(), shapes=[(2, 3), (2, 2, 3, 2)], seed=28),
                    check.backward(MatMul(), shapes=[(2, 4, 3), (3, 2)], constant=[0], seed=29),
                    check.backward(MatMul(), shapes=[(2, 3), (4, 3, 2)], constant=[1], seed=30),
                    check.backward(MatMul(), shapes=[(4, 3), (3, 5)], seed=31, layout="fortran"),
                    check.backward(MatMul(), shapes=[(2, 4, 3), (3, 5)], seed=32, layout="reversed"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 3.7 Scalar operations
#
# `x + 1`, `x * 0.5`, `x ** 2`: one operand is a plain Python number $c$. It is a setting of the
# operation, stored in `self.scalar`, and only the tensor gets a gradient. `AddScalar` is given:
# its local derivative is $1$.
#
# | operation | $f(a)$ | $\partial f / \partial a$ | example: $a = 2$, $c = 3$ |
# |---|---|---|---|
# | `AddScalar(c)` | $a + c$ | $1$ | $5$, slope $1$ |
# | `MulScalar(c)` | $c\,a$ | $c$ | $6$, slope $3$ |
# | `DivScalar(c)` | $a / c$ | $1/c$ | $0.667$, slope $0.333$ |
# | `PowerScalar(c)` | $a^c$ | $c\,a^{c-1}$ | $8$, slope $3 \cdot 2^2 = 12$ |
#
# `PowerScalar` with a fractional power, like $a^{0.5}$, needs $a > 0$: the checks keep it there.
# With a power of 1 or more, $a = 0$ is an ordinary input: $a^2$ has slope $0$ there, and the checks
# include exact zeros. The slope is $c\,a^{c-1}$ at every input, $0$ included, where any division by $a$ is $0/0$.

# %% provided export
class AddScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        return a + self.scalar

    def backward(self, out_grad, node):
        return out_grad


def add_scalar(a, scalar):
    return AddScalar(scalar)(a)

# %% solution id=mul_scalar export
class MulScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        ### BEGIN SOLUTION
        return a * self.scalar
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return out_grad * self.scalar
        ### END SOLUTION


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)

# %% test id=test_mul_scalar_forward points=1
verdict = check.forward(MulScalar(3.0), lambda a: a * 3.0, shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(MulScalar(-0.5), lambda a: a * -0.5, shapes=[(4,)], seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_mul_scalar_backward points=2
verdict = check.backward(MulScalar(3.0), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(MulScalar(-0.5), shapes=[(4,)], seed=21),
                    check.backward(MulScalar(2), shapes=[(2, 2, 2)], seed=22))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% solution id=div_scalar export
class DivScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        ### BEGIN SOLUTION
        return a / self.scalar
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return out_grad / self.scalar
        ### END SOLUTION


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)

# %% test id=test_div_scalar_forward points=1
verdict = check.forward(DivScalar(4.0), lambda a: a / 4.0, shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.forward(DivScalar(-0.25), lambda a: a / -0.25, shapes=[(5,)], seed=11)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_div_scalar_backward points=2
verdict = check.backward(DivScalar(4.0), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(DivScalar(-0.25), shapes=[(5,)], seed=21),
                    check.backward(DivScalar(3), shapes=[(2, 3, 2)], seed=22))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% solution id=power_scalar export
class PowerScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        ### BEGIN SOLUTION
        return np.power(a, self.scalar)
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a = node._inputs[0]
        return out_grad * self.scalar * a ** (self.scalar - 1)
        ### END SOLUTION


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)

# %% test id=test_power_scalar_forward points=1
verdict = check.forward(PowerScalar(3), lambda a: a ** 3, shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(PowerScalar(0.5), np.sqrt, shapes=[(4,)], domains="positive", seed=11),
                    check.forward(PowerScalar(-2), lambda a: a ** -2.0, shapes=[(3, 2)], domains="positive", seed=12))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_power_scalar_backward points=2
verdict = check.backward(PowerScalar(3), shapes=[(2, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(PowerScalar(0.5), shapes=[(4,)], domains="positive", seed=21),
                    check.backward(PowerScalar(-2), shapes=[(3, 2)], domains="positive", seed=22),
                    check.backward(PowerScalar(2), shapes=[(2, 2, 2)], seed=23),
                    check.backward(PowerScalar(2), shapes=[(3, 4)], domains="with_zeros", seed=24))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 3.8 `Tensor.backward`: the engine
#
# Every operation now knows its local rule. The last piece walks the whole graph: `y.backward()`
# must give every tensor that led to `y` its gradient, in `.grad`, as a NumPy array.
#
# **The order.** A node may pass its gradient on only once it has *all* of it. In a diamond,
#
# ```
#              ┌──[×3]── c ──┐
#   a ──[×2]── b             ├──[+]── e      b = 2a,  e = b + c = b + 3b,  de/db = 1 + 3 = 4
#              └─────────────┘
# ```
#
# `b` gets one share of its gradient from `e` directly and another through `c`; if `b` passed its
# gradient on to `a` before `c` had delivered, `a` would get $2 \cdot 1$ instead of $2 \cdot 4$.
# The fix is a **topological order**: a list of the nodes in which every node comes after all of its
# inputs. Walk it **backwards**, from `y` to the leaves, and every node is finished before its inputs
# are visited.
#
# **Depth-first search** builds that order: visit a node's inputs first, then append the node. The
# natural way to write it is recursive, but Python gives each call a stack frame and stops at
# `sys.getrecursionlimit()` frames, 1000 by default. A recurrent network unrolled over a long
# sequence, or a chain of 10,000 small operations (one of the checks), is deeper than that. So write
# the search with an explicit stack, a Python list of nodes still to do, and a loop.
#
# **Gradients of a node used twice add up.** In `a * a`, or in `b = a + a; c = b + b`, the same tensor
# is an input more than once, and each use sends it a gradient. Keep a dictionary from `id(node)` to
# the gradient collected so far, and **add** each new share to it; overwriting would drop shares.
#
# **The start.** The gradient of `y` with respect to itself is 1. With `grad=None`, `y` must be a
# loss, a result of **one element** (shape `()`, `(1,)` or `(1, 1)`): start from a tensor of ones shaped
# like `y`. A caller may pass `grad` explicitly, with `y`'s shape, as a Tensor or as a NumPy array
# (wrap an array in a Tensor with `requires_grad=False`); then start from it. That is how you
# differentiate a result of several elements. The ones, and a wrapped array, take `y`'s dtype, whatever
# the array's own: the first `backward` to run receives a gradient of its output's dtype, as each op's
# backward hands its inputs gradients of theirs.
#
# **Two calls that make no sense, refused.** `backward()` checks two things before it touches any
# `.grad`, and raises with a message that says what is wrong and what to do:
#
# * `y.requires_grad` is `False` (a constant, or a result computed from constants only): there is no
#   graph to walk and no gradient anyone asked for. Raise `RuntimeError`, whatever `grad` is.
# * `grad` is `None` and `y` has more than one element: raise `ValueError`. Say how to fix it: reduce
#   `y` to one number first (`y.sum()`, a mean), or pass `grad=` with `y`'s shape.
#
# The second is a choice. Some libraries (and the book this course follows) quietly start
# from a tensor of ones, which differentiates the **sum** of all of `y`'s elements. PyTorch and TinyTorch
# refuse, and so does babygrad: a loss that was never reduced to one number (a per-example loss
# you forgot to average, a `(batch, 1)` output you meant to compare with a target) still "works" under
# the silent sum, trains on a gradient scaled by the batch size, and hides the bug. An error points at
# the line.
#
# **`.grad` accumulates.** `backward()` *adds* to a `.grad` that is already there (or sets it, when
# it is `None`). Calling `backward()` twice doubles the gradients. This is on purpose, and it is why
# training loops clear gradients before every step (chapter 5).
#
# **Each `.grad` is an array of its own.** When `backward()` sets a `.grad` for the first time, it
# stores a **copy** of the gradient's array, never the array itself. The gradient that arrives is often
# shared: `Add` hands the very same `out_grad` to both of its inputs, so after `(p + q).sum().backward()`
# an engine without the copy leaves `p.grad` and `q.grad` one array, and an optimizer or a gradient
# clipping that changes `p.grad` in place would change `q.grad` with it. (A gradient may also be a
# read-only view, such as NumPy's broadcasts, which nobody can change in place.) PyTorch's `.grad` is
# its tensor's own in the same way. The checks look at the arrays, not only at their values.
#
# Put together, after the two checks and the start, for each node in reverse topological order:
#
# 1. take its collected gradient from the dictionary (skip it if nothing arrived);
# 2. add it to `node.grad` (a NumPy array);
# 3. if the node was made by an operation, call `node._op.backward(out_grad, node)`, make the result a
#    tuple if it is a single Tensor, and add the i-th gradient to the dictionary entry of
#    `node._inputs[i]`, for the inputs that have `requires_grad`.
#
# **Two helpers go with the engine.**
#
# * `t.zero_grad()` forgets `t`'s gradient: it sets `t.grad` back to `None`, the value of a tensor that
#   no `backward()` has reached yet (the next `backward()` then sets it instead of adding to it). It
#   leaves `t.data` alone. `None` rather than an array of zeros: it says "no gradient computed" and
#   costs no memory, which is also PyTorch's default.
# * `with no_grad():` runs its block with `Function.grad_enabled` off (section 3.1), so operations
#   compute their values but record no graph: their outputs have `requires_grad=False`, no `_op` and
#   no `_inputs`. Evaluation code uses it to save the graph's memory. When the block ends, the switch
#   must go back to the value it had **before** the block, not simply on: inside an outer
#   `with no_grad():`, an inner block's end must leave recording off. And it must go back even when
#   the block raises an exception. Write `no_grad` as a generator with `@contextlib.contextmanager`:
#   everything before its `yield` runs when the block starts, and a `try: yield` / `finally:` around
#   the yield runs its `finally` part when the block ends, exception or not.

# %% solution id=engine export
import contextlib


def topological_order(root):
    """Every node that `root` depends on, each one after all of its inputs, `root` last."""
    ### BEGIN SOLUTION
    order, visited = [], set()
    stack = [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        stack.extend((parent, False) for parent in node._inputs if id(parent) not in visited)
    return order
    ### END SOLUTION


@tensor_method
def backward(self, grad=None):
    """Add d(self)/d(node) * grad to `.grad` of every node that `self` was computed from."""
    ### BEGIN SOLUTION
    if not self.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require a gradient: it is a constant, or "
                           "was computed from constants only (or under no_grad), so there is no graph to walk")
    if grad is None:
        if self.data.size != 1:
            raise ValueError(f"backward() without a gradient needs a result of one element (a loss), but this "
                             f"one has shape {self.shape}: reduce it first (.sum() or a mean), or pass "
                             f"grad= of shape {self.shape}")
        grad = Tensor(np.ones_like(self.data), dtype=self.dtype, requires_grad=False)
    elif not isinstance(grad, Tensor):
        grad = Tensor(grad, dtype=self.dtype, requires_grad=False)
    grads = {id(self): grad}
    for node in reversed(topological_order(self)):
        out_grad = grads.pop(id(node), None)
        if out_grad is None:
            continue
        # np.copy keeps the gradient's memory order, where .copy() makes C order (chapter 10's batch-last Conv)
        node.grad = np.copy(out_grad.data) if node.grad is None else node.grad + out_grad.data
        if node._op is None:
            continue
        input_grads = node._op.backward(out_grad, node)
        if not isinstance(input_grads, (tuple, list)):
            input_grads = (input_grads,)
        for parent, parent_grad in zip(node._inputs, input_grads):
            if parent.requires_grad:
                key = id(parent)
                grads[key] = parent_grad if key not in grads else grads[key] + parent_grad
    ### END SOLUTION


@tensor_method
def zero_grad(self):
    """Forget this tensor's gradient: .grad becomes None."""
    ### BEGIN SOLUTION
    self.grad = None
    ### END SOLUTION


@contextlib.contextmanager
def no_grad():
    """Inside `with no_grad():`, operations record no graph; afterwards, recording is as it was before."""
    ### BEGIN SOLUTION
    before = Function.grad_enabled
    Function.grad_enabled = False
    try:
        yield
    finally:
        Function.grad_enabled = before
    ### END SOLUTION

# %% [markdown] locked
# The engine checks below build their graphs from small private operations that come with the
# course, not from yours, so they test the engine alone. Each graph ends in a sum (`L = c.sum()`), so
# that `backward()` starts from one number; `explicit_grad` passes `grad=` instead.

# %% test id=test_engine_product points=1
verdict = check.engine("product")
assert verdict.passed, verdict.message

# %% test id=test_engine_diamond points=2
verdict = check.engine("diamond")
assert verdict.passed, verdict.message

# %% test id=test_engine_reuse points=2
verdict = check.engine("reuse")
assert verdict.passed, verdict.message

# %% test id=test_engine_accumulation points=1
verdict = check.engine("accumulation")
assert verdict.passed, verdict.message

# %% test id=test_engine_explicit_grad points=1
verdict = check.engine("explicit_grad")
assert verdict.passed, verdict.message

# %% test id=test_engine_long_chain points=1
verdict = check.engine("long_chain")
assert verdict.passed, verdict.message

# %% [markdown] locked
# The last four checks are the rules around the engine: the two errors of `backward()`, `zero_grad`
# and `no_grad`. They too use the course's private operations (and your `Function`, which is provided).

# %% test id=test_engine_constant_error points=1
verdict = check.engine_rule("constant_error")
assert verdict.passed, verdict.message

# %% test id=test_engine_non_scalar_error points=1
verdict = check.engine_rule("non_scalar_error")
assert verdict.passed, verdict.message

# %% test id=test_engine_zero_grad points=1
verdict = check.engine_rule("zero_grad")
assert verdict.passed, verdict.message

# %% test id=test_engine_no_grad points=1
verdict = check.engine_rule("no_grad")
assert verdict.passed, verdict.message

# %% [markdown] locked
# ### Gradients add up, and accumulate
#
# Here is the reuse example again, run by your engine, on one number $a = 1.5$: `b = a + a` uses `a`
# twice, and `c = b + b` uses `b` twice. Backward from `c`, whose gradient starts at $1$: each use of
# `b` sends it $1$, so `b` collects $1 + 1 = 2$; each use of `a` sends it `b`'s $2$, so `a` collects
# $2 + 2 = 4$, which is $dc/da$ for $c = 4a$. The drawing shows every tensor's `.grad` after
# `c.backward()`.
#
# Then the cell calls `c.backward()` a second time. Nothing was reset, so every share is added
# again and `a.grad` becomes $8$: the gradients of two backward passes, summed. That is what lets
# a training loop accumulate gradients over several batches, and why it clears them before each
# step.
#
# Last, the two helpers of section 3.8: `a.zero_grad()` clears what the two passes left, and a
# product computed under `no_grad()` has its value but no record.

# %% provided
a = Tensor(1.5)
b = a + a
c = b + b
a.name, b.name, c.name = "a", "b", "c"
c.backward()
display(draw_graph(c))

c.backward()
print("after a second c.backward(), a.grad =", a.grad)
a.zero_grad()
print("after a.zero_grad(), a.grad =", a.grad)
with no_grad():
    d = a * 3
print("d = a * 3 under no_grad: requires_grad =", d.requires_grad, "| made by:", d._op)

# %% [markdown] locked
# ### Question 3.A · Add, don't overwrite (2 points, graded by your instructor)
#
# Your engine *adds* every share of a gradient that reaches a node, and `backward()` adds to a `.grad`
# that is already there. Explain why adding is right and overwriting is wrong, with a small example
# of your own with numbers (not the `a + a` of the cell above): the gradient that adding gives, the
# one overwriting would give, and which one is the derivative. Then say what a training loop must do
# because `.grad` also accumulates from one `backward()` call to the next.
#
# ### BEGIN MARK SCHEME
# **2 points.** All of:
# * an example with numbers in which a tensor is used more than once (`y = x * x` at `x = 3`, a
#   diamond, `x * w + x`...), with the right gradient as a sum of one share per use (`3 + 3 = 6`) and
#   the wrong one that overwriting leaves (`3`, the last share to arrive);
# * the reason: the derivative of a quantity that reaches the output along several paths is the sum
#   over the paths (multivariable chain rule); adding the shares is that sum;
# * the loop: gradients of successive `backward()` calls add up, so it clears them (`zero_grad`)
#   before each backward, or it uses that on purpose to sum the gradients of several batches.
#
# **1 point.** A correct reason without a worked example, or a correct example without the
# consequence for the training loop.
#
# **0 points.** "Overwriting loses information" with no mechanism, or a wrong claim (for instance
# that the shares should be averaged).
# ### END MARK SCHEME

# %% answer id=q_accumulate points=2
# Take `y = x * x` at `x = 3`. `x` is both inputs of `Mul`, and `Mul.backward` sends one share to each
# input: `out_grad * other`, that is $1 \cdot 3$ to the first use and $1 \cdot 3$ to the second.
# Adding gives $3 + 3 = 6$, which is $dy/dx = 2x$. If the second share overwrote the first, `x.grad`
# would be $3$, half the derivative. In general, when a value reaches the output along several paths,
# its derivative is the sum of the derivatives along each path (the multivariable chain rule), and
# adding the shares computes exactly that sum; overwriting keeps one path, whichever came last.
#
# The same adding carries over between calls: a second `backward()` adds its gradients to those of
# the first. A training loop must therefore reset every parameter's `.grad` (`zero_grad`) before each
# backward; otherwise each step would follow the sum of all gradients so far. The upside is that a
# loop can call `backward()` on several small batches before one step, to get the gradient of a
# larger batch.

# %% [markdown] locked
# ## 3.9 Everything together
#
# Your operations and your engine now differentiate any expression built from them. Here is a small
# model, a sigmoid of a matrix product, reduced to one number, and the same gradient worked out by
# hand. If every check above passes, the two agree.

# %% provided
x = Tensor([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])
W = Tensor([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6]])
loss = sigmoid(x @ W).sum()
loss.backward()

s = 1 / (1 + np.exp(-(x.data @ W.data)))       # by hand: d loss / dW = x^T (s (1 - s))
by_hand = x.data.T @ (s * (1 - s))
print("loss:", loss)
print("W.grad from your engine:\n", W.grad)
print("largest difference from the hand-derived gradient:", float(np.abs(W.grad - by_hand).max()))

# %% [markdown] locked
# ### Question 3.B · What a backward pass costs (2 points, graded by your instructor)
#
# A common rule of thumb says that a backward pass costs about twice the computation of the forward
# pass before it. Explain where the factor of two comes from with your `MatMul`, for `x @ W` with `x`
# of shape $(n, k)$ and `W` of shape $(k, m)$: count the multiply-adds of the forward and of the
# backward. Then explain, with the shortcut described before the `MatMul` exercise, why the first
# layer of a network, whose input is a batch of data, costs less than that.
#
# ### BEGIN MARK SCHEME
# **2 points.** All of:
# * forward: one product, $n \cdot k \cdot m$ multiply-adds;
# * backward: two products of the same size, $G W^\top$ for `x` ($n \cdot m \cdot k$) and
#   $x^\top G$ for `W` ($k \cdot n \cdot m$): $2nkm$, twice the forward. A layer needs both: the
#   gradient of its input to pass on, and of its weights to learn;
# * the first layer: its input does not require a gradient, so the gradient for `x` is skipped and the
#   backward costs about one forward.
# Elementwise operations and the sums of broadcasting are cheap next to the products; saying so is fine.
#
# **1 point.** The two backward products named without the counts, or the counts without the
# `requires_grad` case.
#
# **0 points.** "Because it goes backwards through the graph", or the claim that backward runs the
# forward again.
# ### END MARK SCHEME

# %% answer id=q_backward_cost points=2
# The forward of `x @ W` is one matrix product: each of the $n \cdot m$ outputs is a sum of $k$
# products, so $nkm$ multiply-adds. The backward gets `out_grad`, $G$, of shape $(n, m)$, and computes
# two products of the same size: the gradient for `x` is $G W^\top$, $(n, m)$ by $(m, k)$, so $nmk$
# multiply-adds, and the gradient for `W` is $x^\top G$, $(k, n)$ by $(n, m)$, so $knm$. That is $2nkm$,
# twice the forward. Every layer needs both: the gradient of its weights to learn, and the gradient of
# its input to pass back to the layers before it. The elementwise operations in between cost far less
# than the products.
#
# The first layer multiplies a batch of data, which has `requires_grad=False`. Nobody uses a gradient
# for the data, so the course's `MatMul` skips $G W^\top$ and computes only $x^\top G$: its backward
# costs about as much as its forward.

# %% [markdown] locked
# That is the core of every deep-learning library: operations that know their local derivative, and
# an engine that chains them. Chapter 4 builds layers and losses on top of it.
