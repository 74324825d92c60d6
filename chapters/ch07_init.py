# %% [markdown] locked
# # Chapter 7 · Initialization
#
# Before a network learns anything, every weight needs a first value, and that choice decides
# whether it learns at all. All zeros fails at once: every hidden unit of a layer then computes the
# same thing, gets the same gradient and stays a copy of its neighbours forever. So weights start
# random, and the question is **how large**. Too small, and the signal fades a little in every layer
# until the last layers see nothing; too large, and it grows until it overflows. In a network 20
# layers deep "a little" compounds twenty times.
#
# In this chapter you derive the right scale, write the four standard initializers, watch them keep
# a deep network's signal alive, and then, as the finale of the first part of the course, **train a
# network on MNIST with the library you built**. You will write:
#
# 1. `xavier_uniform`, `xavier_normal`, `kaiming_uniform`, `kaiming_normal`;
# 2. `train_epoch`, one pass over the training data, and `accuracy`, the share of digits recognised.
#
# ### How to work in this notebook
#
# * Run the cells from the top. The first one loads chapters 2 to 6 (finished copies: your marks here
#   never depend on them) and the course's checks.
# * Fill in each cell that says `# YOUR CODE HERE`, delete the `raise NotImplementedError()`, and run
#   the check under it. Check cells are locked and run again with **hidden tests** when you submit.
# * Training takes about ten seconds.

# %% provided
import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import tqdm

from earlier_chapters import *          # chapters 2 to 6: Tensor, operations, nn, optimizers, data
from autograder.student.checks import Checker
from autograder.student.datasets import mnist_files
from autograder.student.progress_bars import show_progress_bars

check = Checker(globals())

# %% [markdown] locked
# ## 7.1 The variance argument
#
# Take one unit of a layer: $y = \sum_{i=1}^{n} w_i x_i$, a sum over its $n$ inputs, $n$ being the
# layer's **fan-in**. Let the weights be independent, with mean 0 and variance $\mathrm{Var}(w)$,
# and independent of the inputs. Each term $w_i x_i$ then has mean 0 and variance
# $\mathrm{Var}(w)\,\mathbb{E}[x^2]$, and variances of independent terms add:
#
# $$\mathrm{Var}(y) = n_\text{in}\, \mathrm{Var}(w)\, \mathbb{E}[x^2] .$$
#
# **Through the layers.** With inputs of mean 0, $\mathbb{E}[x^2] = \mathrm{Var}(x)$, and each layer
# multiplies the variance by $n_\text{in} \mathrm{Var}(w)$. For the signal to keep its size through
# many layers that factor must be 1: $\mathrm{Var}(w) = 1/n_\text{in}$. The gradients flow back
# through the same weights, summed over the **fan-out** $n_\text{out}$, and keep their size when
# $\mathrm{Var}(w) = 1/n_\text{out}$. Both cannot hold unless the layer is square, so **Xavier (Glorot)
# initialization** takes the compromise
#
# $$\mathrm{Var}(w) = \frac{2}{n_\text{in} + n_\text{out}} .$$
#
# This is the right scale for activations that are roughly linear around 0, like tanh.
#
# **ReLU** sets the negative half of its inputs to 0. For a $z$ symmetric around 0, $\mathbb{E}[\mathrm{relu}(z)^2]
# = \tfrac12 \mathrm{Var}(z)$: half the energy is gone after every ReLU. To make up for it, **Kaiming
# (He) initialization** doubles the variance and follows the forward signal:
#
# $$\mathrm{Var}(w) = \frac{2}{n_\text{in}} .$$
#
# **Gain.** Both rules are written with a factor for the activation, its *gain*: the variance is
# $\text{gain}^2 / n_\text{in}$ (Kaiming) or $\text{gain}^2 \cdot 2/(n_\text{in} + n_\text{out})$ (Xavier).
# The gain of ReLU is $\sqrt 2$ (the doubling above); tanh squeezes its inputs a little and gets $5/3$;
# a linear layer gets 1. The table `GAINS` below has them.
#
# **Uniform or normal.** A normal draw is given its standard deviation: $\text{std} = \sqrt{\mathrm{Var}(w)}$.
# A uniform draw on $[-a, a]$ has variance $a^2/3$, so $a = \sqrt{3}\,\text{std}$.
#
# *Example.* The first layer of an MNIST network, $n_\text{in} = 784$, $n_\text{out} = 128$.
# Xavier: $\mathrm{Var}(w) = 2/912 = 0.00219$, std $0.0468$, uniform bound $a = \sqrt{6/912} = 0.0811$.
# Kaiming for ReLU: $\mathrm{Var}(w) = 2/784 = 0.00255$, std $0.0505$, bound $\sqrt{6/784} = 0.0875$.

# %% provided export
GAINS = {"linear": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3.0, "relu": float(np.sqrt(2.0))}

# %% [markdown] locked
# ### Exercise: the four initializers (8 points)
#
# Each returns a `Tensor` of shape `(fan_in, fan_out)`, the shape of `Linear`'s weight, float32 (the
# default) and with `requires_grad=True` (weights are trained). Draw from
# `np.random.default_rng(seed)`: `rng.uniform(low, high, shape)` or `rng.normal(0, std, shape)`
# (it takes the standard deviation, not the variance). Kaiming's `nonlinearity` names a row of `GAINS`.
#
# The checks draw 240,000 weights and compare their mean, variance and spread with the rule. The
# tolerances come from the sampling error: a right answer passes every time, and a wrong gain, a
# wrong fan or the wrong distribution misses by dozens of standard errors.

# %% solution id=xavier_uniform export
def xavier_uniform(fan_in, fan_out, gain=1.0, *, seed=None):
    """Glorot weights from U(-a, a), variance gain² · 2 / (fan_in + fan_out)."""
    ### BEGIN SOLUTION
    a = gain * np.sqrt(6.0 / (fan_in + fan_out))
    return Tensor(np.random.default_rng(seed).uniform(-a, a, (fan_in, fan_out)))
    ### END SOLUTION

# %% test id=test_xavier_uniform points=2
verdict = check.initializer("xavier_uniform")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.initializer("xavier_uniform", 300, 200, setting=[5 / 3], seed=3),
                    check.initializer("xavier_uniform", 1000, 50, seed=4))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% solution id=xavier_normal export
def xavier_normal(fan_in, fan_out, gain=1.0, *, seed=None):
    """Glorot weights from N(0, std²), variance gain² · 2 / (fan_in + fan_out)."""
    ### BEGIN SOLUTION
    std = gain * np.sqrt(2.0 / (fan_in + fan_out))
    return Tensor(np.random.default_rng(seed).normal(0.0, std, (fan_in, fan_out)))
    ### END SOLUTION

# %% test id=test_xavier_normal points=2
verdict = check.initializer("xavier_normal")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.initializer("xavier_normal", 300, 200, setting=[5 / 3], seed=3),
                    check.initializer("xavier_normal", 1000, 50, seed=4))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% solution id=kaiming_uniform export
def kaiming_uniform(fan_in, fan_out, nonlinearity="relu", *, seed=None):
    """He weights from U(-a, a), variance gain² / fan_in, gain = GAINS[nonlinearity]."""
    ### BEGIN SOLUTION
    a = GAINS[nonlinearity] * np.sqrt(3.0 / fan_in)
    return Tensor(np.random.default_rng(seed).uniform(-a, a, (fan_in, fan_out)))
    ### END SOLUTION

# %% test id=test_kaiming_uniform points=2
verdict = check.initializer("kaiming_uniform")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.initializer("kaiming_uniform", 300, 200, setting=["tanh"], seed=3),
                    check.initializer("kaiming_uniform", 50, 1000, setting=["linear"], seed=4))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% solution id=kaiming_normal export
def kaiming_normal(fan_in, fan_out, nonlinearity="relu", *, seed=None):
    """He weights from N(0, std²), variance gain² / fan_in, gain = GAINS[nonlinearity]."""
    ### BEGIN SOLUTION
    std = GAINS[nonlinearity] / np.sqrt(fan_in)
    return Tensor(np.random.default_rng(seed).normal(0.0, std, (fan_in, fan_out)))
    ### END SOLUTION

# %% test id=test_kaiming_normal points=2
verdict = check.initializer("kaiming_normal")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.initializer("kaiming_normal", 300, 200, setting=["tanh"], seed=3),
                    check.initializer("kaiming_normal", 50, 1000, setting=["linear"], seed=4))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 7.2 Twenty layers deep
#
# Here is the argument at work. A batch of 512 random inputs goes through 20 layers of 256 units;
# after each layer we measure the size of the activations, their root mean square
# $\sqrt{\mathbb{E}[h^2]}$, the quantity the argument keeps constant. The same network is started
# four ways, with ReLU after every layer:
#
# * $\mathcal N(0, 1)$: far too large. Each layer multiplies the size by $\sqrt{256/2} \approx 11$;
# * $\mathcal N(0, 0.01^2)$: far too small, each layer multiplies it by $0.11$;
# * $U(\pm 1/\sqrt{n_\text{in}})$, PyTorch's default for a linear layer: variance $1/(3 n_\text{in})$, a
#   sixth of what ReLU needs, so the size shrinks by $\sqrt{1/6} \approx 0.41$ per layer;
# * your `kaiming_normal`: a factor 1, by construction;
#
# and, in the right panel, four ways with tanh: too large, too small, your `xavier_normal` with the
# tanh gain $5/3$, and `xavier_normal` without it, which loses a little in every layer. Only the
# tensors' values are needed here, so they are made with `requires_grad=False` and no graph is built.

# %% provided numeric
def activation_size(make_weight, activation, layers=20, width=256, batch=512):
    """Root mean square of the activations after each layer of a deep network."""
    h = randn(batch, width, seed=0, requires_grad=False)
    size = []
    for layer in range(layers):
        w = make_weight(width, width, layer)
        h = activation(h @ Tensor(w.data, requires_grad=False))
        size.append(float(np.sqrt(np.mean(h.data.astype(np.float64) ** 2))))     # float64: 1e20² overflows float32
    return size


def normal(std):
    return lambda n_in, n_out, layer: Tensor(np.random.default_rng(layer).normal(0, std, (n_in, n_out)))


def pytorch_default(n_in, n_out, layer):
    bound = 1 / np.sqrt(n_in)
    return Tensor(np.random.default_rng(layer).uniform(-bound, bound, (n_in, n_out)))


relu_runs = {"N(0, 1)": normal(1.0), "N(0, 0.01²)": normal(0.01), "U(±1/√n_in)": pytorch_default,
             "kaiming_normal": lambda i, o, layer: kaiming_normal(i, o, "relu", seed=layer)}
tanh_runs = {"N(0, 1)": normal(1.0), "N(0, 0.01²)": normal(0.01),
             "xavier_normal, gain 1": lambda i, o, layer: xavier_normal(i, o, seed=layer),
             "xavier_normal, gain 5/3": lambda i, o, layer: xavier_normal(i, o, GAINS["tanh"], seed=layer)}

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
for ax, runs, activation, name in [(left, relu_runs, relu, "ReLU"), (right, tanh_runs, tanh, "tanh")]:
    for label, make_weight in runs.items():
        size = activation_size(make_weight, activation)
        ax.plot(range(1, 21), size, marker="o", markersize=3, label=label)
        print(f"{name:4s} {label:24s} RMS after layer 1: {size[0]:9.3g}   after layer 20: {size[-1]:9.3g}")
    ax.set_yscale("log")
    ax.set_xlabel("layer")
    ax.set_ylabel("RMS of activations")
    ax.set_title(f"20 layers of 256 units, {name}")
    ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown] locked
# With ReLU, $\mathcal N(0, 1)$ blows the signal up by twenty orders of magnitude and
# $\mathcal N(0, 0.01^2)$ shrinks it by as much: the last layers of those networks see numbers that
# are all huge or all nearly zero, and their gradients follow. Kaiming keeps it level. With tanh,
# too large a scale saturates every unit at $\pm 1$ (the size stays near 1, but tanh's slope there
# is 0, so no gradient passes), too small a scale fades away, and Xavier with the tanh gain holds
# steady. Without the gain, the signal still fades, slowly.
#
# A network of two layers, like the one we are about to train, forgives a lot; a deep one does not.

# %% [markdown] locked
# ## 7.3 Training on MNIST
#
# Everything is in place: tensors and automatic differentiation (chapters 2 and 3), layers and a
# loss (4), an optimizer and `train_step` (5), and the data pipeline (6). Training is a loop over
# **epochs**, each a pass over the shuffled training set, one `train_step` per batch.
#
# ### Exercise: `train_epoch` (2 points)
#
# `train_epoch(model, loader, loss_fn, optimizer, progress=None)` makes one pass:
#
# 1. `model.train()` first: the evaluation below switches the model to `eval()`, and layers such as
#    dropout behave differently in the two modes;
# 2. for each batch `(images, labels)` of the loader, `train_step(model, loss_fn, optimizer, images, labels)`
#    (chapter 5's, provided), and keep the loss it returns;
# 3. when a `progress` bar is given, advance it by one per batch, `progress.update(1)`, and show
#    the **running loss**, the mean of the last 50 batch losses, with `progress.set_postfix(loss=...)`.
#    One batch's loss jumps around; the running mean shows the trend. A tip the check does not
#    require: set the postfix with `refresh=False` before the update. `set_postfix` otherwise redraws
#    the bar on every batch, while `update` redraws it (postfix included) only when enough time has
#    passed (tqdm's `mininterval`, 0.1 s).
#
# Return the list of the batch losses, in order: it is the loss curve.

# %% solution id=train_epoch export
def train_epoch(model, loader, loss_fn, optimizer, progress=None):
    """One pass over `loader`, one train_step per batch; returns the batch losses."""
    ### BEGIN SOLUTION
    model.train()
    losses = []
    for images, labels in loader:
        losses.append(train_step(model, loss_fn, optimizer, images, labels))
        if progress is not None:
            recent = losses[-50:]
            progress.set_postfix(loss=sum(recent) / len(recent), refresh=False)
            progress.update(1)                  # redraws the bar, postfix included, when it is time
    return losses
    ### END SOLUTION

# %% [markdown] locked
# The check runs your loop with a recording stand-in for `train_step`, so it grades the loop alone.

# %% test id=test_train_epoch points=2
verdict = check.train_epoch()
assert verdict.passed, verdict.message

# %% [markdown] locked
# ### Exercise: `accuracy` (2 points)
#
# The loss is what training lowers; the number we care about is how many digits the model gets
# right **on digits it never trained on**, the held-out test set. The model's prediction for a
# sample is the class with the largest output (logit): `logits.numpy().argmax(axis=1)`.
#
# Put the model in `eval()` mode, count the right predictions and the samples over **all** batches,
# and divide once at the end. (Averaging each batch's accuracy would be wrong: the last batch may be
# smaller, and its samples would weigh more than the others.) Return a float between 0 and 1.

# %% solution id=accuracy export
def accuracy(model, loader):
    """The share of samples in `loader` whose largest logit is their label."""
    ### BEGIN SOLUTION
    model.eval()
    right = total = 0
    for images, labels in loader:
        predicted = model(images).numpy().argmax(axis=1)
        right += int((predicted == labels.numpy()).sum())
        total += len(predicted)
    return right / total
    ### END SOLUTION

# %% test id=test_accuracy points=2
verdict = check.accuracy()
assert verdict.passed, verdict.message

# %% [markdown] locked
# ### Training
#
# The model: 784 pixels in, a hidden layer of 128 ReLU units, 10 logits out, one per digit; about
# 100,000 weights. `Linear` brings its own initialization, which is fine for two layers (section
# 7.2). The data: the 60,000 training digits, normalized and flattened, in shuffled batches of 64;
# the 10,000 test digits in batches of 1,000 for measuring. The optimizer: Adam with its default
# learning rate. One epoch is 938 steps and takes about ten seconds; the bar below shows them, with
# the running loss.

# %% provided numeric
pipeline = Compose([Normalize(0.1307, 0.3081), FlattenImage()])
train_loader = DataLoader(MNISTDataset(*mnist_files("train"), transforms=pipeline), batch_size=64, shuffle=True, seed=0)
test_loader = DataLoader(MNISTDataset(*mnist_files("test"), transforms=pipeline), batch_size=1000)

EPOCHS = 1
model = Sequential(Linear(784, 128, seed=1), ReLU(), Linear(128, 10, seed=2))
loss_fn = SoftmaxLoss()
optimizer = Adam(model.parameters(), lr=1e-3)

history = []
with tqdm(total=EPOCHS * len(train_loader), desc="training", disable=not show_progress_bars()) as bar:
    for epoch in range(1, EPOCHS + 1):
        losses = train_epoch(model, train_loader, loss_fn, optimizer, bar)
        history += losses
        print(f"epoch {epoch}: {len(losses)} steps, mean loss {np.mean(losses):.3f}, last 50 steps {np.mean(losses[-50:]):.3f}")

# %% [markdown] locked
# The loss curve: each batch's loss (light) and its running mean over 50 batches (dark). It falls
# steeply over the first hundred steps, while the model learns the coarse shapes, then slowly.

# %% provided numeric
steps = np.arange(1, len(history) + 1)
running = np.convolve(history, np.ones(50) / 50, mode="valid")
plt.figure(figsize=(8, 3.2))
plt.plot(steps, history, color="tab:blue", alpha=0.3, linewidth=0.8, label="batch loss")
plt.plot(steps[49:], running, color="tab:blue", linewidth=2, label="running mean of 50")
plt.xlabel("step")
plt.ylabel("cross-entropy loss")
plt.ylim(0, 2.5)
plt.title("Training an MLP on MNIST with babygrad")
plt.legend()
plt.show()

print(f"held-out accuracy: {accuracy(model, test_loader):.2%} of {len(test_loader.dataset)} test digits")

# %% [markdown] locked
# ### Question 7.A · Reading the loss curve (2 points, graded by your instructor)
#
# Look at the loss curve your run drew above.
#
# 1. Read off the loss at the very first steps, and explain that value from the fact that the model
#    chooses among 10 classes.
# 2. Why is the light curve so much noisier than the dark one? What would training with batches of 512
#    instead of 64 change in it?
# 3. At the end of the epoch, is the dark curve still going down? Say what you would try next, based
#    on what you see.
#
# ### BEGIN MARK SCHEME
# **2 points.** All three, read from the plot:
# 1. about 2.3, which is $\ln 10$: at initialization the logits are small and alike, the softmax is
#    close to uniform, so the true class gets probability about 1/10 and the loss $-\ln(1/10)$;
# 2. each light point is the loss of one batch of 64 images, which varies from batch to batch; the dark
#    curve averages 50 batches. Batches of 512 would make the light curve smoother (noise about
#    $\sqrt 8 \approx 2.8$ times smaller) and give 8 times fewer steps per epoch;
# 3. an answer consistent with their plot (the running mean is usually still falling slowly, around
#    0.1 to 0.3), with a matching next step: more epochs, perhaps a lower learning rate later.
#
# **1 point.** Two of the three.
#
# **0 points.** Remarks not tied to the plot (e.g. "the loss goes down, so it learns") only.
# ### END MARK SCHEME

# %% answer id=q_loss_curve points=2
# 1. The first losses are about 2.3. At the start the logits are small and nearly equal, so the
#    softmax gives each of the 10 digits a probability close to 1/10, and the cross-entropy of the true
#    class is $-\ln(1/10) = \ln 10 \approx 2.30$: the loss of a model that guesses.
# 2. Each light point is the loss of one batch of 64 images. Some batches hold easier digits than
#    others, so the loss jumps from batch to batch; the dark curve is the mean of 50 batches, which
#    averages that out. With batches of 512 each point would average 8 times more images, so the light
#    curve would be about $\sqrt 8 \approx 2.8$ times less noisy, and an epoch would take 8 times
#    fewer steps.
# 3. The dark curve is still going down at the end, slowly, at about 0.14. The model has not
#    finished learning, so I would train for more epochs (`EPOCHS = 3`), and if the curve flattens
#    while still noisy, lower the learning rate for the last epoch.

# %% [markdown] locked
# Some of the test digits with the model's answers; the ones it gets wrong are in red. Its mistakes
# are often digits a person would hesitate over too.

# %% provided numeric
images, labels = next(iter(test_loader))
predicted = model(images).numpy().argmax(axis=1)
wrong = np.flatnonzero(predicted != labels.numpy())
shown = np.concatenate([np.arange(16 - min(len(wrong), 8)), wrong[:8]])
fig, axes = plt.subplots(2, 8, figsize=(8, 2.6))
for ax, i in zip(axes.flat, shown):
    ax.imshow(images.numpy()[i].reshape(28, 28), cmap="gray_r")
    ok = predicted[i] == labels.numpy()[i]
    ax.set_title(f"{predicted[i]}" + ("" if ok else f" (is {labels.numpy()[i]})"), color="black" if ok else "red", fontsize=9)
    ax.axis("off")
plt.tight_layout()
plt.show()

# %% [markdown] locked
# ### Question 7.B · The digits it gets wrong (1 point, graded by your instructor)
#
# Look at the digits above that your model got wrong (in red). Pick two, and say what in each image
# could mislead a model that sees 784 separate pixels and knows nothing of which pixels are
# neighbours. Which kind of layer of chapter 10 is meant to help, and why?
#
# ### BEGIN MARK SCHEME
# **1 point.** Two digits from the student's own plot (named by their label and the model's answer),
# each with a plausible visual reason: a stroke thinner, thicker or shifted from where most examples
# of that digit have ink; an open or closed loop (4 and 9, 3 and 5); a slanted or unusual style. And
# the convolution: small filters that look at neighbouring pixels, the same filter at every position,
# so a shape shifted by a pixel or two gives the same features, shifted.
#
# **0.5 points.** Generic reasons not tied to the images shown, or the images discussed well without
# the link to convolution.
#
# **0 points.** Neither.
# ### END MARK SCHEME

# %% answer id=q_misclassified points=1
# (The digits of the solutions' run; every run shows its own.) The 6 read as a 0, last in the row: it
# is drawn as a round loop whose top stroke curls back almost to close the circle, so nearly all its
# ink lies where zeros have theirs; the few pixels that make it a 6, the gap at the top left, weigh
# little against them. The 9 read as an 8, fourth: its loop is thick and its tail bends back to the
# left, so the pixels below the loop, where an 8 has its lower loop, are dark. The model compares the
# image with each class pixel by pixel; it has no idea of a stroke, a loop or a gap, and a stroke
# moved by two pixels lands on weights that learned something else.
#
# The convolutional layers of chapter 10 help: each filter looks at a small patch of neighbouring
# pixels, and the same filter slides over the whole image, so a stroke or a loop is recognised
# wherever it is, and a digit shifted by a pixel gives the same features, shifted by a pixel.

# %% [markdown] locked
# The check measures the trained model's held-out accuracy with the course's own count, not with
# your `accuracy`: more than 90% means your loop trained it. (A model that learned nothing gets
# about 10%.)

# %% test id=test_mnist_training points=3 numeric
verdict = check.trained_model(model, test_loader, minimum=0.90)
assert verdict.passed, verdict.message

# %% [markdown] locked
# About 96% after one epoch, from a library you wrote in NumPy, in seconds. Raise `EPOCHS` and the
# held-out accuracy climbs past 97%; add `RandomCrop(28, padding=2)` to the training pipeline (and a
# wider hidden layer) and it goes further. The next chapters make the library practical: saving
# and loading models, a trainer that packages this loop, and convolutional networks.
