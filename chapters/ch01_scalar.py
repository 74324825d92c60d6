# %% [markdown] locked
# # Chapter 1 · Introduction: automatic differentiation on scalars
#
# A neural network is a long formula with many adjustable numbers in it, its **weights**. It learns
# by repeating one step: compute the formula's error on some examples, find out how the error
# changes when each weight changes a little (the **gradient**), and move every weight a little in
# the direction that lowers the error. Everything hard about that step is the gradient, and every
# deep-learning library computes it the same way: while the formula is evaluated, each operation
# writes down where its result came from; afterwards one walk backwards over those notes applies
# the chain rule and hands every number its derivative. That walk is **backpropagation**, and the
# machinery around it is **automatic differentiation**.
#
# In this course you build **babygrad**, a small deep-learning library on top of NumPy, one chapter
# at a time. This first chapter builds the whole idea on single numbers, where nothing hides it: a
# `Value` class that holds one Python float and records how it was computed. Chapter 2 switches to
# arrays, with the `Tensor`, and chapter 3 brings this chapter's engine to tensors.
#
# You will write:
#
# 1. `+` and `*` for `Value`, which record the computation graph and how gradients flow through it;
# 2. `backward()`, which walks the graph and fills in every gradient;
# 3. `numerical_gradient`, which estimates the same gradients by nudging the inputs: the way your
#    work is checked in every chapter.
#
# ## How this course works
#
# * **Run the notebook from the top.** Each code cell may use what the cells above defined. When in
#   doubt, *Kernel → Restart Kernel and Run All Cells*.
# * **Exercises** are the cells that say `# YOUR CODE HERE`. Replace the `raise NotImplementedError()`
#   with your code. Everything else is provided, and read-only.
# * **Check cells** follow each exercise. Run them: a passing check prints a line starting with `✔`;
#   a failing one raises an `AssertionError` whose message says what was tried, what was expected,
#   what your code gave, and the usual cause. Check cells are locked: you cannot edit them.
# * **Grading** runs your notebook from the top in a fresh Python, with the check cells restored
#   (a deleted or altered check cell comes back as it was). Each check cell is worth the points shown
#   in its header and earns all of them or none. At grading, the check cells also contain **hidden
#   tests**: other inputs, other random seeds, and gradients compared with finite differences (you
#   write finite differences yourself in section 1.5). Code that passes the visible checks for the
#   right reason passes the hidden ones too; code tuned to the visible inputs does not.
# * **Earlier chapters are provided.** From chapter 3 on, a notebook starts by loading a finished copy
#   of what earlier chapters built, so a mistake in one chapter never costs points in the next.
# * **What a chapter is worth** in all is written at its top, under the badges: the points of its
#   check cells, and those of its written questions, which your instructor grades. The last cell of
#   the notebook adds up the points your checks have earned so far.

# %% provided
import math

from autograder.student.checks import Checker
from autograder.student.graph import draw_graph  # draws the computation graph behind a Value

check = Checker(globals())

# %% [markdown] locked
# ## 1.1 A number that remembers
#
# A `Value` wraps one number, `data`, and carries four more fields for what comes later:
#
# | field | holds | a new `Value` has |
# |---|---|---|
# | `data` | the number, a Python `float` | the argument |
# | `grad` | the derivative of the final result with respect to this value | `0.0` |
# | `_prev` | the Values it was computed from, its *parents* (a set) | the `_children` argument |
# | `_op` | a label for the operation that made it: `'+'`, `'*'`, `'tanh'` | the `_op` argument |
# | `_backward` | a function that passes this value's `grad` on to its parents | does nothing |
#
# A Value made by an operation gets its parents and label from the constructor:
# `Value(5.0, (a, b), '+')`. The fields starting with `_` are bookkeeping that users of the class
# never touch. `value_method` attaches a function to the class as a method, so that the notebook
# can add operations one cell at a time.

# %% provided
class Value:
    """One number, the record of how it was computed, and (after backward) its gradient."""

    def __init__(self, data, _children=(), _op=""):
        self.data = float(data)
        self.grad = 0.0
        self._prev = set(_children)
        self._op = _op
        self._backward = lambda: None

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"


def value_method(fn):
    """Attach `fn` to the Value class as a method: lets the notebook grow Value cell by cell."""
    setattr(Value, fn.__name__, fn)
    return fn

# %% provided
a, b = Value(2.0), Value(3.0)
c = Value(a.data + b.data, (a, b), "+")      # by hand, what `a + b` will do for you
print(c, "| made by", repr(c._op), "| parents are a and b:", c._prev == {a, b})

# %% [markdown] locked
# ## 1.2 The chain rule, one operation at a time
#
# Take $e = a \cdot b$, then $d = e + c$, then $L = d \cdot f$, with $a = 2$, $b = -3$, $c = 10$,
# $f = -2$. Forward, left to right: $e = -6$, $d = 4$, $L = -8$. How much does $L$ move when $a$
# moves?
#
# **By nudging.** Set $a = 2.001$: $e = -6.003$, $d = 3.997$, $L = -7.994$. The output moved by
# $0.006$ for a nudge of $0.001$: $\partial L / \partial a = 6$.
#
# **By the chain rule.** A nudge of $a$ travels through $e$, then $d$, then $L$, and each step scales
# it by that step's **local derivative**:
#
# $$\frac{\partial L}{\partial a} = \frac{\partial L}{\partial d}\cdot\frac{\partial d}{\partial e}\cdot\frac{\partial e}{\partial a}
#   = f \cdot 1 \cdot b = (-2)(1)(-3) = 6 .$$
#
# Read right to left, that is an algorithm. Start at the output with $\partial L / \partial L = 1$ and
# walk backwards. At each operation, take the gradient that has arrived at its output, call it
# `out.grad`, multiply it by the operation's local derivative for each input, and pass the product on:
#
# ```
#   a = 2 ──┐                                       a.grad = -2 · b = 6
#           ├─[*]── e = -6 ──┐                      e.grad = 1 · d.grad = -2
#   b = -3 ─┘                ├─[+]── d = 4 ──┐      d.grad = f = -2
#                   c = 10 ──┘               ├─[*]── L = -8       L.grad = 1 (the start)
#                                   f = -2 ──┘
#   forward: left to right          backward: right to left, out.grad × local derivative
# ```
#
# Only two local derivatives are needed for now:
#
# | operation | $\partial\,\text{out} / \partial\,\text{self}$ | $\partial\,\text{out} / \partial\,\text{other}$ |
# |---|---|---|
# | `out = self + other` | $1$ | $1$ |
# | `out = self * other` | `other.data` | `self.data` |
#
# **The graph, drawn from the records.** The next cell builds the example out of Values, by hand as
# in 1.1 (your `*` and `+` come in 1.3), and gives each one a `name`: an optional attribute that
# only the picture uses. `draw_graph(L)` knows nothing about the formula. It starts at `L`, follows
# `_prev` to the parents, then to their parents, and stops at Values that have none. Every box is a
# Value with its `data`: the inputs are blue, the result green, the Values in between grey. Every
# oval is an operation, labelled with the `_op` of the Value it made, and the arrows show which way
# the numbers flowed forward. `backward()` will walk the same arrows the other way, from `L` back
# to the inputs.

# %% provided
a, b, c, f = Value(2.0), Value(-3.0), Value(10.0), Value(-2.0)
e = Value(a.data * b.data, (a, b), "*")       # by hand: what `a * b` will record
d = Value(e.data + c.data, (e, c), "+")
L = Value(d.data * f.data, (d, f), "*")
a.name, b.name, c.name, d.name, e.name, f.name, L.name = "a", "b", "c", "d", "e", "f", "L"
draw_graph(L, show_grad=False)

# %% [markdown] locked
# ## 1.3 `_backward`: the chain rule step of one operation
#
# The operation that makes `out` is the one that knows its local derivatives, so it is the one that
# writes the backward step, as a small function stored in `out._backward`. The function is defined
# *inside* the method, so it can use that method's `self`, `other` and `out` later, long after the
# method has returned: Python keeps them alive for it. Such a function is a **closure**.
#
# **Add to `grad`, never overwrite it.** A Value can be used more than once. In `b = a + a`, `self`
# and `other` are the same object `a`, and each use contributes a share of its gradient: since
# $b = 2a$, `a.grad` must end up as `2 * b.grad`. With `self.grad = out.grad; other.grad = out.grad`
# the second line overwrites the first and `a.grad` is `1 * b.grad`. With `+=`, the shares add up.
# The same holds when `a` feeds two different operations: each one's `_backward` adds its share.
#
# Here is a third operation, complete, to show the pattern. $\tanh$ squashes any number into
# $(-1, 1)$, and its derivative is $1 - \tanh^2$, so the closure can reuse the output $t$:

# %% provided
@value_method
def tanh(self):
    t = math.tanh(self.data)
    out = Value(t, (self,), "tanh")

    def _backward():
        self.grad += (1 - t * t) * out.grad       # local derivative × the gradient that arrived

    out._backward = _backward
    return out

# %% provided
x = Value(0.5)
y = x.tanh()
y.grad = 1.0          # pretend y is the final output
y._backward()         # one chain-rule step, by hand
print(y, "| x.grad =", round(x.grad, 6), "= 1 - tanh(0.5)**2 =", round(1 - math.tanh(0.5) ** 2, 6))

# %% [markdown] locked
# ### Exercise: `+` (3 points)
#
# Write `__add__` in the pattern of `tanh`: compute the new data, make `out` with its parents and the
# label `'+'`, define `_backward`, store it in `out._backward`, return `out`.
#
# Python calls `a.__add__(b)` for `a + b`. For `a + 2`, `other` is the number `2`: when `other` is
# not a Value (ask `isinstance`), replace it by `Value(other)` first, so that the rest of the method
# (and the closure) can use `other.data` and `other.grad`. For `2 + a`, Python first asks the number `2`,
# which does not know about Values, and then calls the *reflected* method `a.__radd__(2)`. Since
# $2 + a = a + 2$, `__radd__` can hand the work to `__add__`.

# %% solution id=add
@value_method
def __add__(self, other):
    ### BEGIN SOLUTION
    other = other if isinstance(other, Value) else Value(other)
    out = Value(self.data + other.data, (self, other), "+")

    def _backward():
        self.grad += out.grad
        other.grad += out.grad

    out._backward = _backward
    return out
    ### END SOLUTION


@value_method
def __radd__(self, other):          # other + self, when other is a number
    ### BEGIN SOLUTION
    return self + other
    ### END SOLUTION

# %% test id=test_add_graph points=1
verdict = check.value_graph("add")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.value_graph("add", seed=1), check.value_graph("add", seed=2))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# The next check calls your closure directly: it builds `out = a + b`, sets `out.grad` (to `1.0`,
# to another number, and with `a` and `b` already holding gradients from elsewhere), calls
# `out._backward()`, and compares `a.grad` and `b.grad` with finite differences. It also tries
# `out = a + a`, and an input of `0`, where a local derivative holds as anywhere else.

# %% test id=test_add_backward points=2
verdict = check.value_backward("add")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.value_backward("add", seed=1), check.value_backward("add", seed=2),
                    check.value_backward("add", seed=3))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Exercise: `*` (3 points)
#
# The same again for `*`, with the label `'*'` and the local derivatives from the table in 1.2: the
# gradient for `self` is `other.data * out.grad`, and the gradient for `other` is `self.data * out.grad`.
#
# *Example.* `out = a * b` with $a = 2$, $b = -3$ and `out.grad` $= 0.5$: `a.grad` grows by
# $-3 \cdot 0.5 = -1.5$ and `b.grad` by $2 \cdot 0.5 = 1$. For `out = a * a` with $a = 3$ and
# `out.grad` $= 1$, both lines add $3$, so `a.grad` is $6$: the derivative of $a^2$ is $2a$.

# %% solution id=mul
@value_method
def __mul__(self, other):
    ### BEGIN SOLUTION
    other = other if isinstance(other, Value) else Value(other)
    out = Value(self.data * other.data, (self, other), "*")

    def _backward():
        self.grad += other.data * out.grad
        other.grad += self.data * out.grad

    out._backward = _backward
    return out
    ### END SOLUTION


@value_method
def __rmul__(self, other):          # other * self, when other is a number
    ### BEGIN SOLUTION
    return self * other
    ### END SOLUTION

# %% test id=test_mul_graph points=1
verdict = check.value_graph("mul")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.value_graph("mul", seed=1), check.value_graph("mul", seed=2))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_mul_backward points=2
verdict = check.value_backward("mul")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.value_backward("mul", seed=1), check.value_backward("mul", seed=2),
                    check.value_backward("mul", seed=3))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 1.4 `backward()`: every step, in the right order
#
# Each `_backward` does one step. `L.backward()` must run all of them, and the order matters: a
# node may pass its gradient on only once it has received **all** of it. Here `b` feeds `e` twice,
# once directly and once through `c`:
#
# ```
#                 ┌─────────────────────┐
#   a ──[×2]── b ─┤                     ├─[+]── e      b = 2a,  c = 3b,  e = b + c = 4b
#                 └──[×3]── c ──────────┘              so de/db = 1 + 3 = 4
# ```
#
# If `b._backward` ran before `c._backward`, `b` would hold only the $1$ it got from `e` directly,
# and `a` would receive $2 \cdot 1$ instead of $2 \cdot 4$.
#
# **Topological order.** List the nodes so that every node comes *after* all of its parents (its
# inputs): `a, b, c, e`. Walked **backwards**, `e, c, b, a`, every node comes before its parents,
# so it has received everything by the time its `_backward` runs. Depth-first search builds the
# list: visit a node's parents first, then append the node; keep a set of visited nodes, so that a
# node reached along two paths (like `b`) is listed once.
#
# **Without recursion.** The natural way to write depth-first search calls itself for every parent.
# But Python gives every call a frame on its stack and stops at `sys.getrecursionlimit()` frames,
# 1000 by default, so a recursive search fails on any graph deeper than that, and a recurrent network
# unrolled over a long sequence is much deeper. Keep the work in a list instead, used as a stack of
# `(node, parents_done)` pairs:
#
# 1. start with `[(root, False)]`;
# 2. pop a pair. If `parents_done` is true, every parent of the node is listed already: append the
#    node to the order. Otherwise, if the node has not been visited, mark it visited and push
#    `(node, True)` followed by `(parent, False)` for each parent: the parents are popped first;
# 3. repeat until the stack is empty.
#
# **The walk.** `backward()` then:
#
# 1. builds the topological order of everything `self` depends on;
# 2. sets every node's `grad` to `0.0`: the closures *add* to `grad`, so without this a second call
#    of `backward()` would add to the first one's results;
# 3. seeds `self.grad = 1.0`, since $\partial L / \partial L = 1$;
# 4. calls `_backward()` of every node, in reverse topological order.
#
# (Chapter 3 makes the other choice for tensors: gradients from several `backward()` calls add up,
# and the training loop clears them. Either choice works if it is made on purpose.)

# %% [markdown] locked
# ### Exercise: `topological_order` and `backward` (6 points)
#
# The checks of this exercise build their graphs from Values whose `_backward` the check writes
# itself, so they grade your `backward()` alone.

# %% solution id=backward
def topological_order(root):
    """Every node that `root` depends on, each one after all of its parents; `root` is last."""
    ### BEGIN SOLUTION
    order, visited = [], set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
        elif node not in visited:
            visited.add(node)
            stack.append((node, True))
            stack.extend((parent, False) for parent in node._prev if parent not in visited)
    return order
    ### END SOLUTION


@value_method
def backward(self):
    """Set .grad of every node that `self` depends on to d(self)/d(node)."""
    ### BEGIN SOLUTION
    order = topological_order(self)
    for node in order:
        node.grad = 0.0
    self.grad = 1.0
    for node in reversed(order):
        node._backward()
    ### END SOLUTION

# %% test id=test_backward_order points=2
verdict = check.value_engine("order")
assert verdict.passed, verdict.message

# %% test id=test_backward_reuse points=2
verdict = check.value_engine("reuse")
assert verdict.passed, verdict.message

# %% test id=test_backward_twice points=1
verdict = check.value_engine("twice")
assert verdict.passed, verdict.message

# %% test id=test_backward_long_chain points=1
verdict = check.value_engine("long_chain")
assert verdict.passed, verdict.message

# %% [markdown] locked
# ### The example of 1.2, by your engine
#
# The cell below builds $L = (a \cdot b + c) \cdot f$ again, this time with your `*` and `+`, calls
# `L.backward()` and draws the graph once more. Each box now holds a second number, its `grad`:
# how much $L$ moves per unit nudge of that Value. Read the gradients from right to left, the order in
# which `backward()` filled them in: the seed $1$ at `L`; then $-2$ at `d` (the value of $f$) and $4$
# at `f` (the value of $d$); `+` hands $-2$ on to both `e` and `c` unchanged; and `*` turns it into
# $(-3)(-2) = 6$ at `a`, the number that nudging gave in 1.2, and $2 \cdot (-2) = -4$ at `b`.

# %% provided
a, b, c, f = Value(2.0), Value(-3.0), Value(10.0), Value(-2.0)
a.name, b.name, c.name, f.name = "a", "b", "c", "f"
try:
    e = a * b
    d = e + c
    L = d * f
    L.backward()
except NotImplementedError:
    print("The picture appears here once `*`, `+` and `backward()` above are written.")
else:
    e.name, d.name, L.name = "e", "d", "L"
    display(draw_graph(L))

# %% [markdown] locked
# ### Question 1.A · Without a topological order (2 points, graded by your instructor)
#
# A shorter `backward()` is tempting: seed `self.grad = 1.0`, then call
# `visit(self)` with
#
# ```python
# def visit(node):
#     node._backward()
#     for parent in node._prev:
#         visit(parent)
# ```
#
# and no topological order at all. Take the graph of section 1.4 at $a = 1$: $b = 2a$, $c = 3b$,
# $e = b + c$, where the right answer is $de/da = 8$.
#
# 1. Follow `visit(e)` step by step for one order of `e._prev` of your choice (say which), listing
#    the `.grad` of `b` and `a` after each `_backward` call, and give the `a.grad` it ends with.
# 2. Explain why this recursion does give the right gradients when every node is used by exactly one
#    other node (a tree), and what goes wrong, in general, as soon as a node is used twice.
#
# ### BEGIN MARK SCHEME
# **2 points.** A correct trace and a correct general explanation.
# * Trace, `b` first: `e._backward` gives `b.grad = 1`, `c.grad = 1`; `b._backward` gives `a.grad = 2`;
#   `c._backward` raises `b.grad` to 4; `b` is visited again and adds 8: `a.grad = 10`. With `c` first:
#   `b.grad` becomes 4 before `b` runs, then `b` runs twice and `a.grad = 16`. A student who adds a
#   visited set and gets 2 (`b` first) or 8 by luck (`c` first) has traced correctly too.
# * Explanation: in a tree a node's only consumer has run before the node is visited, so its gradient
#   is complete when it passes it on. With reuse, a node can pass on a gradient before all its shares
#   have arrived (too little reaches its parents), or be visited once per use and pass it on again
#   (too much). A reverse topological order runs each node once, after every node that uses it.
#
# **1 point.** The explanation without a correct trace (a wrong number, or steps missing), or a
# correct trace with no explanation of why trees are safe and reuse is not.
#
# **0 points.** Only "the order matters" restated, or a claim that the recursion is correct.
# ### END MARK SCHEME

# %% answer id=q_wrong_order points=2
# I take `e._prev` in the order `b`, then `c`. The seed is `e.grad = 1`.
#
# 1. `e._backward()`: `b.grad = 1`, `c.grad = 1`.
# 2. `visit(b)`: `b._backward()` adds $2 \cdot 1$, so `a.grad = 2`; `visit(a)` does nothing.
# 3. `visit(c)`: `c._backward()` adds $3 \cdot 1$ to `b`, so `b.grad = 4`.
# 4. `visit(b)` again: `b._backward()` adds $2 \cdot 4$, so `a.grad = 10`.
#
# The result is 10 instead of 8. `b` ran twice: once too early, holding only the share it got from
# `e` directly, and once more with its full gradient, so `a` received $2 + 8$.
#
# In a tree every node has a single consumer. The recursion reaches a node only through that
# consumer, right after the consumer ran, so the node's gradient is already complete and it passes it
# on exactly once. When a node is used twice it is reached along two paths: it may run before the
# second path has delivered its share, and it runs once per path, so its parents get partial
# gradients and then get them again. A reverse topological order fixes both problems: every node
# runs once, and only after every node that uses it.

# %% [markdown] locked
# ## 1.5 Checking a gradient by nudging
#
# The nudge of section 1.2 is a method in its own right. For a small step $h$, Taylor's formula says
#
# $$f(x + h) = f(x) + h f'(x) + \tfrac{h^2}{2} f''(x) + \tfrac{h^3}{6} f'''(x) + \dots$$
#
# and the same with $-h$ flips the signs of the odd terms. Subtracting the two, the $f(x)$ and
# $h^2$ terms cancel:
#
# $$\frac{f(x + h) - f(x - h)}{2h} = f'(x) + \tfrac{h^2}{6} f'''(x) + \dots$$
#
# This **central difference** is off by about $h^2$, while the one-sided **forward difference**
# $(f(x + h) - f(x)) / h = f'(x) + \tfrac{h}{2} f''(x) + \dots$ is off by about $h$, far more for a
# small $h$. *Example:* $f(x) = x^3$ at $x = 2$, where $f'(2) = 12$, with $h = 0.01$: $f(2.01) = 8.120601$
# and $f(1.99) = 7.880599$, so the central difference is $0.240002 / 0.02 = 12.0001$; the forward
# difference is $0.120601 / 0.01 = 12.0601$, six hundred times further off.
#
# $h$ cannot be tiny either: a float carries about 16 digits, and subtracting two nearly equal
# values of $f$ loses most of them: that error grows like $10^{-16} / h$ while the other shrinks like
# $h^2$. In double precision they balance near $h = 10^{-5}$, at about $10^{-10}$, and that is the
# $h$ the course's gradient checks use, and the default step of the function you write below.
#
# For a function of several inputs, nudge **one input at a time**, leaving the others as they are:
# that gives the partial derivative for that input. This is how the hidden tests check every
# gradient in this course: your backward against central differences of the forward computation.
# It costs two evaluations of $f$ per input, far too slow for training, and perfect for testing.

# %% [markdown] locked
# ### Exercise: `numerical_gradient` (2 points)
#
# `f` takes plain numbers and returns a number; `xs` is a list with one number per argument of `f`.
# Return a list with $\partial f / \partial x_i$ for every $i$, by central differences with step `h`,
# whose default is the $h = 10^{-5}$ above. Do not change `xs`: work on copies (`list(xs)` makes one).
#
# The check also passes larger steps, `h=0.01` and `h=0.1`, on purpose: for $f(x) = x^3$ the central
# difference is exactly $3x^2 + h^2$, so only a function that takes the step it is given finds the
# value the check expects for that step.
#
# *Example:* `numerical_gradient(lambda x, y: x * y, [2.0, 5.0])` is about `[5.0, 2.0]`.

# %% solution id=numerical_gradient
def numerical_gradient(f, xs, h=1e-5):
    """The partial derivatives of f at xs, [df/dx_0, df/dx_1, ...], by central differences."""
    ### BEGIN SOLUTION
    grads = []
    for i in range(len(xs)):
        plus, minus = list(xs), list(xs)
        plus[i] += h
        minus[i] -= h
        grads.append((f(*plus) - f(*minus)) / (2 * h))
    return grads
    ### END SOLUTION

# %% test id=test_numerical_gradient points=2
verdict = check.numerical_gradient()
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.numerical_gradient("more")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Question 1.B · What nudging costs (1 point, graded by your instructor)
#
# A network has a million weights, and one forward pass through it takes 10 ms. Roughly how long does
# one full gradient take with your `numerical_gradient` (central differences), and how long with
# `backward()`? Given the answer, what is nudging good for?
#
# ### BEGIN MARK SCHEME
# **1 point.** Central differences need two forward passes per weight: $2 \cdot 10^6 \cdot 10$ ms
# $= 2 \cdot 10^4$ s, about five and a half hours. One `backward()` costs a small multiple of one
# forward pass (tens of milliseconds) however many weights there are. So nudging is for checking a
# backward on small cases (gradient checking, as the course's checks do), never for training.
#
# **0.5 points.** Only one of the two: the cost comparison with numbers, or the use for checking.
#
# **0 points.** No estimate and no use, or the claim that both cost about the same.
# ### END MARK SCHEME

# %% answer id=q_nudging_cost points=1
# Central differences evaluate the function twice per weight, at $w + h$ and $w - h$: two million
# forward passes of 10 ms, so $2 \cdot 10^4$ seconds, about five and a half hours for a single
# gradient. `backward()` walks the graph once and costs about as much as one or two forward passes,
# so a few tens of milliseconds, whatever the number of weights. Training takes thousands of
# gradients, so nudging is out of the question there. It is useful as an independent check: on a
# small input it needs no derivative at all, so it tells whether a hand-written `_backward` is right.

# %% [markdown] locked
# ## 1.6 Everything together: a neuron
#
# A neuron of a neural network takes inputs $x_1, x_2$, weighs them, adds a bias and squashes the
# sum: $\text{out} = \tanh(w_1 x_1 + w_2 x_2 + b)$. Training adjusts $w_1$, $w_2$ and $b$, so it
# needs their gradients. Below, your `+`, `*` and `backward()` compute them, and your
# `numerical_gradient` computes them again by nudging, on plain floats. If every check above
# passes, the two columns agree to about six digits.

# %% provided
def neuron(x1, x2, w1, w2, b):
    return (w1 * x1 + w2 * x2 + b).tanh()


inputs = {"x1": 1.5, "x2": -0.5, "w1": 0.8, "w2": -1.2, "b": 0.1}
values = {name: Value(number) for name, number in inputs.items()}
out = neuron(**values)
out.backward()


def neuron_on_floats(*numbers):
    return neuron(*[Value(n) for n in numbers]).data


nudged = numerical_gradient(neuron_on_floats, list(inputs.values()))
print(f"out = {out.data:.6f}")
print("      backward()   nudging")
for (name, v), estimate in zip(values.items(), nudged):
    print(f"{name:>4}  {v.grad:>10.6f}  {estimate:>9.6f}")

# %% [markdown] locked
# Every deep-learning library rests on what you just built: operations that record their inputs and
# their local derivatives, and one backward walk in topological order. What remains is speed. A
# network holds millions of numbers, and one Python object per number is far too slow. Chapter 2
# therefore moves from single numbers to **tensors**, whole arrays of numbers handled by NumPy, and
# chapter 3 brings this chapter's engine to them.
