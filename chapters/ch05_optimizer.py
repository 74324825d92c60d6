# %% [markdown] locked
# # Chapter 5 · Optimizers
#
# Chapter 4 ends with a model, a loss, and after `loss.backward()` a gradient in every parameter's
# `.grad`. The gradient points uphill: it is the direction in which the loss grows fastest. Training
# is walking the other way, a small step at a time:
#
# $$w \leftarrow w - \eta\, \nabla_w L ,$$
#
# where $\eta$, the **learning rate**, sets the length of the step. The object that does this walking,
# for every parameter of a model, is an **optimizer**. Plain gradient descent is the simplest one;
# two refinements make it much faster in practice: **momentum**, which remembers the previous steps,
# and **Adam**, which also gives every parameter its own step size.
#
# You will write:
#
# 1. `Optimizer.zero_grad`, and `train_step`, the four lines at the heart of every training loop;
# 2. `SGD`, with momentum and weight decay;
# 3. `Adam`, with its bias correction;
#
# and then train a small classifier with them.
#
# ### How to work in this notebook
#
# * Run the cells from the top. The first code cell loads chapters 2 to 4 (tensors, operations, the
#   engine, modules and losses) as finished, provided code, so your marks here never depend on them.
# * Fill in each cell that says `# YOUR CODE HERE`, delete the `raise NotImplementedError()`, and run
#   the check below it. A failing check names the optimizer, the step and the parameter element that
#   went wrong, what the update rule gives, and the usual cause.
# * The optimizer checks make their own parameters and write their gradients by hand, step after
#   step, and compare every value with the update rule computed in NumPy (to $10^{-6}$). No model, no
#   loss, no engine is involved: only your optimizer. Hidden tests, run at grading, try other
#   settings and seeds.

# %% provided
import numpy as np

from earlier_chapters import *          # chapters 2 to 4: Tensor, the operations, Module, layers, losses
from autograder.student.checks import Checker

check = Checker(globals())

# %% [markdown] locked
# ## 5.1 The `Optimizer` base class
#
# Every optimizer is built the same way. It is given the parameters to train, usually
# `model.parameters()`, and keeps them in a list (a generator would be used up after one pass).
# `step()` moves every parameter that has a gradient; each optimizer defines its own. `zero_grad()`
# forgets the gradients: it sets `.grad = None` on every parameter, which `step()` reads as "no
# gradient, leave this one alone". Write `zero_grad`.

# %% solution id=optimizer export
class Optimizer:
    """Holds the parameters to train; subclasses define `step`, the update."""

    def __init__(self, params):
        self.params = list(params)

    def zero_grad(self):
        """Forget every parameter's gradient (.grad = None) before the next backward()."""
        ### BEGIN SOLUTION
        for p in self.params:
            p.grad = None
        ### END SOLUTION

    def step(self):
        raise NotImplementedError("an optimizer subclass defines step")

# %% test id=test_optimizer_zero_grad points=1
verdict = check.optimizer_zero_grad()
assert verdict.passed, verdict.message

# %% [markdown] locked
# ## 5.2 Why `zero_grad` exists: the classic bug
#
# Chapter 3's `backward()` **adds** its gradient to whatever `.grad` already holds. That is what makes
# a tensor used twice receive both shares. It also means that a training loop that never clears the
# gradients feeds each step the sum of *all* the gradients so far.
#
# Take the smallest model there is: one weight $w$, one example $x = 1$, $y = 3$, the loss
# $L = (w x - y)^2$, whose gradient is $2(w - 3)$, and steps of $\eta = 0.1$ from $w = 0$.
#
# * **Cleared each step.** The gradient at $w = 0$ is $-6$, so $w$ becomes $0.6$. At $0.6$ it is
#   $-4.8$: $w = 1.08$. Each step closes a fifth of the distance to $3$.
# * **Never cleared.** The first step is the same. At the second, `.grad` holds $-6 - 4.8 = -10.8$,
#   so $w$ jumps to $1.68$; at the third, $-10.8 - 2.64 = -13.44$, and $w = 3.024$, past the answer.
#   The old gradients keep pushing long after they stopped being true: $w$ overshoots and swings.
#
# The cell below runs both loops with chapter 3's engine and a hand-written update.

# %% provided
def descend(clear_gradients, steps=8, lr=0.1):
    """Gradient descent on L = (w - 3)^2 from w = 0; the rows of the table below."""
    w = Tensor([0.0])
    rows = []
    for _ in range(steps):
        if clear_gradients:
            w.grad = None
        loss = ((w - 3.0) ** 2).sum()
        loss.backward()
        rows.append((w.item(), loss.item(), w.grad.item()))
        w.data -= lr * w.grad
    return rows


print("       cleared every step (zero_grad)   |   never cleared")
print("step      w      loss     .grad         |      w      loss     .grad")
for step, (good, bad) in enumerate(zip(descend(True), descend(False)), 1):
    print(f"{step:4d}  {good[0]:6.3f}  {good[1]:7.3f}  {good[2]:8.3f}         |  {bad[0]:6.3f}  {bad[1]:7.3f}  {bad[2]:8.3f}")

# %% [markdown] locked
# The cleared loss falls steadily, $9 \to 5.76 \to 3.69 \to \dots$; the other one drops, then
# climbs back as $w$ overshoots. Nothing crashes and no error is printed, which is what makes this bug
# so common. The rule: **clear the gradients before every `backward()`**.
#
# ### Exercise: one training step
#
# Write `train_step(model, loss_fn, optimizer, x, y)`, which makes one step of training on one batch,
# in this order:
#
# 1. clear the previous batch's gradients, through the optimizer;
# 2. the forward pass: the model's output for `x`, and the loss of that output against `y`;
# 3. the backward pass from the loss, which fills every parameter's `.grad`;
# 4. the optimizer's update;
#
# and return the loss as a Python number (a Tensor's `item()`), for printing. The check gives it a
# stand-in model, loss and optimizer that record the calls and the gradient that `step()` sees.

# %% solution id=train_step export
def train_step(model, loss_fn, optimizer, x, y):
    """One step of training on the batch (x, y); returns the batch's loss as a float."""
    ### BEGIN SOLUTION
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()
    ### END SOLUTION

# %% test id=test_train_step points=2
verdict = check.train_step()
assert verdict.passed, verdict.message

# %% [markdown] locked
# ## 5.3 `SGD`: gradient descent, with momentum and weight decay
#
# **Stochastic gradient descent** is the update above, applied to each parameter with its gradient
# from one batch ("stochastic": a batch is a random sample of the data, so the gradient is noisy).
#
# **Momentum.** In a long narrow valley the gradient mostly points across the valley, so plain steps
# zigzag from wall to wall and advance slowly along the floor. Momentum keeps a running **velocity**
# $u$ per parameter, and steps along it instead of along the raw gradient $g$:
#
# $$u \leftarrow \mu\, u + g, \qquad w \leftarrow w - \eta\, u \qquad (u = g \text{ at the first step}).$$
#
# Gradient components that flip sign from step to step cancel out in $u$; those that persist add up.
# *Example.* With a constant gradient $g = 1$ and $\mu = 0.9$, $u$ grows $1, 1.9, 2.71, 3.44, \dots$
# towards $1/(1 - \mu) = 10$: along a steady slope, momentum walks ten times faster.
#
# **Weight decay.** Large weights often mean a model that memorised its training data. Weight decay
# adds $\frac{\lambda}{2}\lVert w\rVert^2$ to the loss, whose gradient is $\lambda w$, so the gradient
# used in the update becomes
#
# $$g = \nabla_w L + \lambda\, w ,$$
#
# a pull of every weight towards zero, in proportion to its size. It enters before the momentum.
#
# Write `step()`. For each parameter `p` whose `p.grad` is not `None`: compute $g$ from `p.grad`
# and `p.data` (plain NumPy arrays), update its velocity if `momentum` is not zero, and change
# `p.data` **in place** (`p.data -= ...`), which keeps it float32 and keeps it the same array: the
# check makes sure it is. `step()` only reads `p.grad`: $g$ is a new array, never `p.grad` changed
# in place, and the check makes sure of that too. Keep one velocity per parameter, for example in a
# dict keyed by `id(p)`, created in `__init__`. The checks run weight decay with and without momentum:
# the decay goes into $g$ before the velocity, so the two together differ from either alone.

# %% solution id=sgd export
class SGD(Optimizer):
    """w -= lr * u, with u = momentum * u + (grad + weight_decay * w)."""

    def __init__(self, params, lr=0.01, momentum=0.0, weight_decay=0.0):
        super().__init__(params)
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay
        ### BEGIN SOLUTION
        self.velocity = {}
        ### END SOLUTION

    def step(self):
        ### BEGIN SOLUTION
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p.data
            if self.momentum:
                u = self.velocity.get(id(p))
                g = g if u is None else self.momentum * u + g
                self.velocity[id(p)] = g
            p.data -= self.lr * g
        ### END SOLUTION

# %% test id=test_sgd points=2
verdict = check.sgd(lr=0.1)
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.sgd(lr=0.5, seed=1), check.sgd(lr=0.01, seed=2))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_sgd_momentum points=2
verdict = check.sgd(lr=0.1, momentum=0.9)
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.sgd(lr=0.05, momentum=0.5, seed=1), check.sgd(lr=0.2, momentum=0.99, seed=2))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_sgd_weight_decay points=1
verdict = check.all(check.sgd(lr=0.1, weight_decay=0.1), check.sgd(lr=0.1, momentum=0.9, weight_decay=0.1))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.sgd(lr=0.3, weight_decay=0.01, seed=1),
                    check.sgd(lr=0.1, momentum=0.9, weight_decay=0.1, seed=3),
                    check.sgd(lr=0.05, momentum=0.5, weight_decay=0.3, seed=4))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 5.4 `Adam`: a step size for every parameter
#
# One learning rate for all parameters is a compromise: some gradients are large and noisy, others
# small and steady. **Adam** keeps, for each parameter, two running averages: of the gradient, $m$
# (a momentum), and of its square, $v$ (how large the gradient usually is), and divides one by the
# square root of the other. Every element then moves by about $\eta$ per step, whatever its gradient's
# scale. At step $t = 1, 2, \dots$ (the number of calls to `step()`), with $g$ including weight decay
# as in SGD:
#
# $$m \leftarrow \beta_1 m + (1 - \beta_1)\, g, \qquad v \leftarrow \beta_2 v + (1 - \beta_2)\, g^2,$$
# $$\hat m = \frac{m}{1 - \beta_1^t}, \qquad \hat v = \frac{v}{1 - \beta_2^t}, \qquad
#   w \leftarrow w - \eta\, \frac{\hat m}{\sqrt{\hat v} + \epsilon} .$$
#
# **Why the correction.** $m$ and $v$ start at $0$, so the first averages are biased towards $0$:
# after one step $m = (1 - \beta_1) g = 0.1\, g$. Unrolled, $m_t = (1 - \beta_1)\sum_{i \le t}
# \beta_1^{t-i} g_i$; if the gradient were the same $g$ at every step this would be
# $(1 - \beta_1^t)\, g$, so dividing by $1 - \beta_1^t$ gives back $g$. The same holds for $v$.
#
# *Example.* First step, $g = 0.2$, $\eta = 0.01$: $m = 0.02$, $v = 0.001 \cdot 0.04 = 4 \cdot 10^{-5}$;
# corrected, $\hat m = 0.2$ and $\hat v = 0.04$, so the step is $0.01 \cdot 0.2 / 0.2 = 0.01$: exactly
# $\eta$. Without the correction it would be $0.01 \cdot 0.02 / 0.00632 \approx 0.032$, three times
# too long, just when the estimates are least reliable.
#
# Write `step()`: count the step, then for every parameter with a gradient update its own $m$ and $v$
# and its `.data`, in place. $\epsilon$ (`eps`) goes outside the square root: the check also runs with
# `eps=0.1`, where its place shows. $m$ and $v$ are arrays of the optimizer's own: one that is
# `p.grad` itself, updated in place, would change the gradient.
#
# $\hat m$ and $\hat v$ can be arrays of their own, exactly as the formula writes them. The course's
# solution saves work on $\hat m$: its correction is a division by a number, so it moves onto the
# learning rate, $\eta\,\hat m = \frac{\eta}{1 - \beta_1^t}\, m$: the same arithmetic, with one pass
# over every parameter's array fewer at every step. Either way is right.

# %% solution id=adam export
class Adam(Optimizer):
    """Adam: running averages of the gradient and of its square, with bias correction."""

    def __init__(self, params, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0):
        super().__init__(params)
        self.lr, self.beta1, self.beta2, self.eps, self.weight_decay = lr, beta1, beta2, eps, weight_decay
        ### BEGIN SOLUTION
        self.t = 0
        self.m, self.v = {}, {}
        ### END SOLUTION

    def step(self):
        ### BEGIN SOLUTION
        self.t += 1
        for p in self.params:
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad
            if id(p) not in self.m:              # p's first step: both averages start at zero
                self.m[id(p)], self.v[id(p)] = np.zeros_like(p.data), np.zeros_like(p.data)
            m, v = self.m[id(p)], self.v[id(p)]
            m *= self.beta1                      # m and v updated in place: no new arrays per step
            m += (1 - self.beta1) * g
            v *= self.beta2
            v += (1 - self.beta2) * g * g
            step_size = self.lr / (1 - self.beta1 ** self.t)                 # η·m̂ = step_size·m
            denominator = np.sqrt(v / (1 - self.beta2 ** self.t)) + self.eps  # √v̂ + ε
            p.data -= step_size * m / denominator
        ### END SOLUTION

# %% test id=test_adam points=3
verdict = check.all(check.adam(lr=0.01), check.adam(lr=0.01, eps=0.1, seed=3))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.adam(lr=0.1, beta1=0.5, beta2=0.9, seed=1),
                    check.adam(lr=0.001, eps=1e-6, seed=2),
                    check.adam(lr=0.01, eps=0.1, seed=4))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_adam_weight_decay points=1
verdict = check.adam(lr=0.01, weight_decay=0.1)
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.adam(lr=0.05, weight_decay=0.5, seed=1)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Question 5.A · Adam's memory (2 points, graded by your instructor)
#
# Count, in bytes, what training keeps for each float32 weight: the weight itself, its gradient, and the
# optimizer's state for it, with plain `SGD`, `SGD` with momentum, and `Adam`. What does each come to
# for a model of 100 million weights? Adam also keeps one number that is not per weight: which one,
# and why can you ignore it here?
#
# ### BEGIN MARK SCHEME
# **2 points.** Plain SGD: weight + gradient = 8 bytes; with momentum, + velocity = 12 bytes; Adam,
# + $m$ + $v$ = 16 bytes. For $10^8$ weights: 0.8 GB, 1.2 GB and 1.6 GB (Adam doubles the memory of
# weight and gradient). The extra number is the step count $t$: one integer for the whole optimizer,
# not one per weight.
#
# **1 point.** Adam's state correctly identified as two arrays the size of the weights ($m$, $v$) but
# the totals wrong or without the gradient, or the totals right without $t$.
#
# **0 points.** Adam's state not identified.
# ### END MARK SCHEME

# %% answer id=q_adam_memory points=2
# Every weight takes 4 bytes, and so does its gradient. Plain SGD keeps nothing else: 8 bytes per
# weight. Momentum adds a velocity of the same shape: 12 bytes. Adam adds two arrays of the same shape,
# $m$ and $v$: 16 bytes, twice what plain SGD needs. For 100 million weights that is 0.8 GB, 1.2 GB and
# 1.6 GB. The number Adam keeps besides is its step count $t$, used for the bias correction; there is
# one for the whole optimizer, so it costs a few bytes, not a few per weight.

# %% [markdown] locked
# ## 5.5 Training a classifier
#
# Everything together: 200 points in the square $[-1, 1]^2$, labelled by the sign of $x_1 x_2$
# (class 1 in the top-right and bottom-left quarters). No straight line separates the classes, so the
# model needs its hidden layer. The same model, started from the same weights, is trained three times
# with `train_step`, 300 steps on the whole set, by plain SGD, SGD with momentum, and Adam.

# %% provided
rng = np.random.default_rng(0)
points = rng.uniform(-1, 1, (200, 2))
classes = (points[:, 0] * points[:, 1] > 0).astype(int)
x, y = Tensor(points), classes


def fresh_model():
    return Sequential(Linear(2, 16, seed=1), ReLU(), Linear(16, 2, seed=2))


def accuracy(model):
    return float((model(x).numpy().argmax(axis=1) == classes).mean())


runs = {"SGD lr=0.1": lambda ps: SGD(ps, lr=0.1),
        "SGD lr=0.1 momentum=0.9": lambda ps: SGD(ps, lr=0.1, momentum=0.9),
        "Adam lr=0.01": lambda ps: Adam(ps, lr=0.01)}
losses, accuracies = {}, {}
for name, make_optimizer in runs.items():
    model, loss_fn = fresh_model(), SoftmaxLoss()
    optimizer = make_optimizer(model.parameters())
    losses[name] = [train_step(model, loss_fn, optimizer, x, y) for _ in range(300)]
    accuracies[name] = accuracy(model)

print("step  " + "".join(f"{name:>26}" for name in runs))
for step in (1, 25, 50, 100, 150, 200, 250, 300):
    print(f"{step:4d}  " + "".join(f"{losses[name][step - 1]:26.4f}" for name in runs))
print("accuracy" + "".join(f"{accuracies[name]:24.1%}  " for name in runs))

# %% [markdown] locked
# All three start from the same loss, about $\log 2 \approx 0.69$ (a model that guesses), but they
# do not arrive at the same place in 300 steps: momentum and Adam pull ahead of plain SGD, for the
# reasons of sections 5.3 and 5.4. Chapter 6 feeds the model real data, in batches.

# %% [markdown] locked
# ### Question 5.B · One step size for every weight (2 points, graded by your instructor)
#
# Two weights have steady gradients, the same at every step: $0.001$ for one, $10$ for the other.
# How far does each move per step with `SGD(lr=0.1)`, and with `Adam(lr=0.01)` after its first few
# steps? Then describe one situation in which Adam's behaviour helps, and one in which it can hurt.
#
# ### BEGIN MARK SCHEME
# **2 points.** SGD moves them by $0.1 \cdot 0.001 = 10^{-4}$ and $0.1 \cdot 10 = 1$ per step.
# With a steady gradient Adam's $\hat m = g$ and $\hat v = g^2$, so both move by about
# $0.01 \cdot g/|g| = 0.01$ per step, whatever the gradient's size. Helps (one of): weights with small
# gradients still learn (rare features, layers far from the loss, badly scaled inputs); one learning
# rate suits every layer. Hurts (one of): the step does not shrink as a steady gradient gets small
# near a minimum, so it needs a decaying learning rate; a tiny gradient that is only noise still moves
# the weight by up to `lr`; the size of a gradient, useful information, is thrown away.
#
# **1 point.** The four numbers right without plausible cases, or the cases argued well with the
# numbers wrong.
#
# **0 points.** Neither.
# ### END MARK SCHEME

# %% answer id=q_adam_scale points=2
# `SGD(lr=0.1)` moves a weight by `lr` times its gradient: $10^{-4}$ per step for the first and $1$ for
# the second, a ratio of ten thousand. With a gradient that never changes, Adam's averages settle at
# $\hat m = g$ and $\hat v = g^2$, so its step is $0.01 \cdot g / |g|$: both weights move by $0.01$ per
# step.
#
# That helps when some weights get much smaller gradients than others, for example the first layer of
# a deep network or the weights of an input feature that is rarely non-zero: with SGD they would
# barely move at a learning rate that is safe for the rest, while Adam moves them all at the same
# pace. It can hurt near a minimum: the gradient gets small but keeps its sign, and Adam keeps taking
# steps of about `lr`, overshooting back and forth, so training usually lowers the learning rate over
# time.
