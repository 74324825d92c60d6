# %% [markdown] locked
# # Chapter 9 · The Trainer
#
# Chapter 7 trained a network with a loop written out in the notebook: epochs, batches, a progress
# bar, an accuracy at the end. Every experiment needs that loop again, plus the parts a real run
# cannot do without:
#
# * **validation** after every epoch, on data the model does not train on, because the training loss
#   keeps falling long after the model has stopped getting better at new digits;
# * the **best checkpoint**: the weights of the epoch that did best on validation, saved to a file
#   (chapter 8), since the last epoch is not always the best one;
# * **early stopping**: when validation has not improved for a few epochs, stop, instead of paying
#   for epochs that only make the model worse;
# * **curves** of the loss and the accuracy over the epochs, the first thing to look at when a run
#   goes wrong.
#
# This chapter packages all of it in a `Trainer`: `fit` trains, `evaluate` measures. At the end, the
# course's first **capstone**: an MLP of your design, trained by your `Trainer`, must classify at least
# 95% of the 10,000 held-out MNIST test digits.

# %% provided export
from tqdm.auto import tqdm

from autograder.student.progress_bars import show_progress_bars

# %% provided
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np

from earlier_chapters import *          # chapters 2 to 8: ... train_epoch, accuracy, save_checkpoint, method_of
from autograder.student.checks import Checker
from autograder.student.datasets import mnist_files

check = Checker(globals())

# %% [markdown] locked
# ## 9.1 The `Trainer`
#
# A `Trainer` holds what stays the same over a run: the model, the loss function and the optimizer,
# and the settings of the two new features, a `checkpoint_path` for the best weights (or `None`) and
# the `patience` of early stopping (or `None`, never stop early). It also keeps the best validation
# loss so far, the epoch it came from and a snapshot of the model's state at that epoch.
#
# The methods are written one by one below, attached with chapter 8's `method_of`:
#
# ```
#   fit(train_loader, val_loader=None, epochs=1)          → history
#    └─ for each epoch:  train_epoch(...)                   chapter 7: one pass, with the progress bar
#                        evaluate(val_loader)               9.2: loss and accuracy, nothing learned
#                        keep_best(epoch, val_loss)         9.3: checkpoint; True means "stop now"
#       at the end: the model gets its best weights back
# ```

# %% provided export
class Trainer:
    """Trains `model` with `optimizer` on `loss_fn`: fit() over epochs with validation, evaluate() to measure."""

    def __init__(self, model, loss_fn, optimizer, *, checkpoint_path=None, patience=None):
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.checkpoint_path = checkpoint_path
        self.patience = patience
        self.best_loss = float("inf")      # the lowest validation loss so far
        self.best_epoch = None             # the epoch it was reached in
        self.best_state = None             # model.state_dict() at that epoch
        self.stale_epochs = 0              # epochs since the last improvement

# %% [markdown] locked
# ## 9.2 `evaluate`
#
# `evaluate(loader)` measures the model on every sample of a loader and returns
# `{"loss": ..., "accuracy": ...}`, two Python floats:
#
# * the **mean loss per sample**. The loss function returns each batch's *mean*; multiply it by the
#   batch's size to get the batch's total, add the totals up, and divide by the number of samples at
#   the end. The mean of the batch means would be wrong whenever the last batch is smaller: 10
#   samples in batches of 4 make batches of 4, 4 and 2, and the 2 samples of the last batch would
#   weigh as much as the 4 of another;
# * the **accuracy**, the share of samples whose largest logit is their label, counted the same way
#   (chapter 7's `accuracy`).
#
# First `self.model.eval()`: dropout must keep every unit and batch normalization must use its
# running statistics, or the numbers measure a noisier model than the one you will use. Evaluation
# changes no weight: no `backward`, no `step`.
#
# *Example.* Batches of 4, 4 and 2 samples with mean losses 0.5, 0.3 and 1.0, and 3, 4 and 0 right
# answers: the loss is $(4 \cdot 0.5 + 4 \cdot 0.3 + 2 \cdot 1.0) / 10 = 0.52$ (the mean of the means
# would say $0.6$) and the accuracy $7 / 10 = 0.7$.

# %% solution id=evaluate export
@method_of(Trainer)
def evaluate(self, loader):
    """{"loss": mean loss per sample, "accuracy": share right} over every batch of `loader`, in eval mode."""
    ### BEGIN SOLUTION
    self.model.eval()
    total_loss, right, seen = 0.0, 0, 0
    for images, labels in loader:
        logits = self.model(images)
        n = len(labels)
        total_loss += self.loss_fn(logits, labels).item() * n
        right += int((logits.numpy().argmax(axis=1) == labels.numpy()).sum())
        seen += n
    return {"loss": total_loss / seen, "accuracy": right / seen}
    ### END SOLUTION

# %% [markdown] locked
# The check evaluates a small model with dropout on 10 samples in batches of 4, and compares with the
# loss and accuracy it works out in NumPy.

# %% test id=test_evaluate points=3
verdict = check.evaluate()
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.evaluate(samples=7, batch_size=3, seed=1)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 9.3 The best checkpoint and early stopping
#
# After each epoch's validation, `keep_best(epoch, val_loss)` decides two things.
#
# **Is this the best epoch so far?** If `val_loss` is *lower* than `self.best_loss` (strictly: an
# epoch that only ties is no progress), remember it: `best_loss`, `best_epoch`, and
# `best_state = self.model.state_dict()`, a snapshot (chapter 8 made it a copy, so the training that
# follows does not change it). If `self.checkpoint_path` is set, also write the checkpoint file with
# `save_checkpoint(path, model, optimizer)`: if the kernel dies in epoch 30, the best model of the
# first 29 is on disk. An improvement resets `stale_epochs` to 0.
#
# **Should training stop?** Otherwise the epoch was *stale*: add one to `stale_epochs`. With a
# `patience` of $P$, training stops after $P$ stale epochs in a row: return `True` when
# `stale_epochs` reaches `patience`, and `False` in every other case (always `False` when `patience`
# is `None`).
#
# *Example.* Patience 2 and validation losses $0.9, 0.7, 0.8, 0.75, \dots$ by epoch: epochs 1 and 2
# improve (best: epoch 2, 0.7); epoch 3 is stale (1); epoch 4, at 0.75, is better than epoch 3 but not
# than the best, so stale (2): stop. The model gets epoch 2's weights back at the end of `fit`.
#
# ```
#   val loss  0.9   0.7   0.8   0.75
#   best       ●     ●                       best_epoch = 2
#   stale      0     0     1     2 → stop
# ```

# %% solution id=keep_best export
@method_of(Trainer)
def keep_best(self, epoch, val_loss):
    """Snapshot (and save) the model when val_loss is the best yet; True when patience has run out."""
    ### BEGIN SOLUTION
    if val_loss < self.best_loss:
        self.best_loss, self.best_epoch = val_loss, epoch
        self.best_state = self.model.state_dict()
        self.stale_epochs = 0
        if self.checkpoint_path is not None:
            save_checkpoint(self.checkpoint_path, self.model, self.optimizer)
        return False
    self.stale_epochs += 1
    return self.patience is not None and self.stale_epochs >= self.patience
    ### END SOLUTION

# %% [markdown] locked
# The checks feed `keep_best` a sequence of validation losses, change the model's weights between
# calls, and look at what it kept, what it wrote, and when it said stop.

# %% test id=test_keep_best points=2
verdict = check.keep_best("checkpoint")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.keep_best("checkpoint", losses=(1.2, 1.2, 0.4, 0.5, 0.3), seed=1)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_early_stopping points=2
verdict = check.keep_best("patience")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.keep_best("patience", losses=(1.0, 1.1, 0.9, 1.0, 1.05, 0.2), patience=2),
                    check.keep_best("patience", losses=(0.5, 0.6, 0.7), patience=1),
                    check.keep_best("patience", losses=(0.5, 0.5, 0.5), patience=2),
                    check.keep_best("patience", losses=(0.5, 0.6, 0.7, 0.8), patience=None))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Question 9.A · Choosing a patience (1 point, graded by your instructor)
#
# The validation loss is noisy from one epoch to the next. What happens with a patience of 1, and with
# a patience of 50 on a budget of 15 epochs? How does keeping the best checkpoint change what a
# patience that is too large costs?
#
# ### BEGIN MARK SCHEME
# **1 point.** Patience 1 stops at the first epoch that happens not to improve, which noise makes
# likely long before the real minimum: the model is undertrained. Patience 50 never stops early here:
# all 15 epochs run. Because the best epoch's weights are kept and restored, a patience too large costs
# only time (the extra epochs), never the quality of the model returned; a patience too small costs
# quality.
#
# **0.5 points.** The two cases described without the role of the checkpoint, or the reverse.
#
# **0 points.** Neither.
# ### END MARK SCHEME

# %% answer id=q_patience points=1
# With a patience of 1, training stops at the first epoch whose validation loss is not a new best.
# Noise alone makes that happen early, often while the loss is still falling on average, so the model
# stops undertrained. With a patience of 50 and 15 epochs, early stopping never triggers and all 15
# epochs run. Since `keep_best` remembers the best epoch and `fit` restores it, running too long does
# not give a worse model, only wasted epochs; stopping too early does give a worse one. So when in
# doubt, a patience on the large side is the cheaper mistake.

# %% [markdown] locked
# ## 9.4 `fit`
#
# `fit(train_loader, val_loader=None, epochs=1)` runs the epochs and returns the **history**, a dict
# of lists with one entry per epoch that ran:
#
# ```
#   {"train_loss": [...],       the mean of the epoch's batch losses (chapter 7's train_epoch returns them)
#    "val_loss": [...],         evaluate(val_loader)["loss"]      (empty lists without a val_loader)
#    "val_accuracy": [...]}     evaluate(val_loader)["accuracy"]
# ```
#
# For each epoch $1, 2, \dots$, `epochs`:
#
# 1. one pass of training: chapter 7's `train_epoch(self.model, train_loader, self.loss_fn,
#    self.optimizer, bar)`, with `bar` the progress bar made for you in the skeleton;
# 2. with a `val_loader`: `evaluate` it, and record both numbers;
# 3. print one line, the skeleton's `report(...)`, so a long run shows where it is;
# 4. with a `val_loader`: `keep_best(epoch, val_loss)`, and **stop** (`break`) when it says so.
#
# After the loop, if there is a `best_state`, load it into the model (`load_state_dict`): `fit` ends
# with the best weights it saw, not the last ones.

# %% provided export
def report(epoch, train_loss, val=None):
    """One line per epoch: `epoch 3: train loss 0.123, val loss 0.145, val accuracy 95.1%`."""
    line = f"epoch {epoch}: train loss {train_loss:.3f}"
    if val is not None:
        line += f", val loss {val['loss']:.3f}, val accuracy {val['accuracy']:.1%}"
    print(line)

# %% solution id=fit export
@method_of(Trainer)
def fit(self, train_loader, val_loader=None, epochs=1):
    """Train for `epochs` (fewer if early stopping says so); returns the history of losses and accuracies."""
    history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    for epoch in range(1, epochs + 1):
        with tqdm(total=len(train_loader), desc=f"epoch {epoch}", disable=not show_progress_bars()) as bar:
            ### BEGIN SOLUTION
            losses = train_epoch(self.model, train_loader, self.loss_fn, self.optimizer, bar)
            ### END SOLUTION
        ### BEGIN SOLUTION
        history["train_loss"].append(float(np.mean(losses)))
        if val_loader is None:
            report(epoch, history["train_loss"][-1])
            continue
        val = self.evaluate(val_loader)
        history["val_loss"].append(val["loss"])
        history["val_accuracy"].append(val["accuracy"])
        report(epoch, history["train_loss"][-1], val)
        if self.keep_best(epoch, val["loss"]):
            break
        ### END SOLUTION
    ### BEGIN SOLUTION
    if self.best_state is not None:
        self.model.load_state_dict(self.best_state)
    ### END SOLUTION
    return history

# %% [markdown] locked
# The check runs your `fit` with chapter 7's `train_epoch`, your `evaluate` and your `keep_best`
# replaced by stand-ins that return scripted numbers, so it grades the loop alone: the calls, the
# history, the stop, and the best weights at the end.

# %% test id=test_fit points=3
verdict = check.all(check.fit(), check.fit(epochs=2, validate=False, seed=3))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.fit(epochs=4, stop_after=None, seed=1), check.fit(epochs=3, validate=False, seed=2))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 9.5 A real run, and its curves
#
# MNIST's 60,000 training digits are split once, at random with a fixed seed: 50,000 to train on,
# 10,000 to validate on. The 10,000 test digits stay out of it until the very end: a number measured
# on the data used to choose the epoch (validation) is a little optimistic, and only data that played
# no part in any decision tells how the model does on new digits.
#
# To see overfitting and early stopping within a minute, the run below trains a deliberately big
# MLP on only 3,000 of the training digits, for up to 15 epochs, with patience 3: it memorizes its small
# training set quickly, and from some epoch on the validation loss rises while the training loss
# keeps falling.

# %% provided numeric
def normalized(pixels):
    """uint8 MNIST images → float32, normalized (mean 0.1307, std 0.3081), flattened to (N, 784)."""
    images = pixels.astype(np.float32)
    images /= 255.0                     # in place: one new array, not three
    images -= 0.1307
    images /= 0.3081
    return images.reshape(len(images), -1)


images_path, labels_path = mnist_files("train")
pixels, labels = parse_idx(images_path), parse_idx(labels_path).astype(np.int64)
order = np.random.default_rng(0).permutation(len(pixels))
train_idx, val_idx = order[:50_000], order[50_000:]

# Only the 13,000 digits this run uses are converted to float32, not all 60,000.
small_train = DataLoader(ArrayDataset(normalized(pixels[train_idx[:3000]]), labels[train_idx[:3000]]),
                         batch_size=64, shuffle=True, seed=0)
val_loader = DataLoader(ArrayDataset(normalized(pixels[val_idx]), labels[val_idx]), batch_size=1000)

model = Sequential(Linear(784, 256, seed=0), ReLU(), Linear(256, 256, seed=1), ReLU(), Linear(256, 10, seed=2))
checkpoint_path = os.path.join(tempfile.mkdtemp(), "best.ckpt")
trainer = Trainer(model, SoftmaxLoss(), Adam(model.parameters(), lr=1e-3), checkpoint_path=checkpoint_path, patience=3)
history = trainer.fit(small_train, val_loader, epochs=15)
print(f"best epoch: {trainer.best_epoch}, val loss {trainer.best_loss:.3f}; checkpoint written: {os.path.exists(checkpoint_path)}")

# %% provided numeric
def plot_history(history, best_epoch=None):
    """Loss and accuracy by epoch, side by side; a dotted line at the best epoch."""
    epochs = np.arange(1, len(history["train_loss"]) + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.2))
    left.plot(epochs, history["train_loss"], "o-", label="training")
    if history["val_loss"]:
        left.plot(epochs, history["val_loss"], "o-", label="validation")
        right.plot(epochs, np.array(history["val_accuracy"]) * 100, "o-", color="tab:orange", label="validation")
    for ax, title in ((left, "loss per sample"), (right, "accuracy (%)")):
        if best_epoch is not None:
            ax.axvline(best_epoch, color="gray", linestyle=":", label=f"best epoch ({best_epoch})")
        ax.set_xlabel("epoch")
        ax.set_title(title)
        ax.legend()
    plt.tight_layout()
    plt.show()


if history["train_loss"]:
    plot_history(history, trainer.best_epoch)

# %% [markdown] locked
# ### Question 9.B · Reading the curves (2 points, graded by your instructor)
#
# Read the two panels your run drew above.
#
# 1. At which epoch is the validation loss lowest, and which epoch's weights does `fit` leave in the
#    model when it returns?
# 2. After that epoch the training loss keeps falling. What is the model doing with its 3,000 digits?
# 3. The validation accuracy often stays flat, or even rises a little, while the validation loss
#    climbs. How can the loss get worse while the accuracy does not?
#
# ### BEGIN MARK SCHEME
# **2 points.** All three:
# 1. the epoch read from the student's plot, matching the dotted line (`best_epoch`); `fit` restores
#    that epoch's weights (`best_state`), not the last epoch's;
# 2. it memorizes its small training set (overfitting): it fits details and noise of those 3,000
#    images that do not hold for other digits;
# 3. accuracy only asks whether the largest logit is the right class; the cross-entropy also measures
#    confidence. The model grows more confident: the validation digits it gets wrong get a tiny
#    probability for their true class and a large loss each, while which class wins changes little.
#
# **1 point.** Two of the three.
#
# **0 points.** At most one.
# ### END MARK SCHEME

# %% answer id=q_fit_curves points=2
# 1. In the solutions' run the validation loss is lowest at epoch 5 (0.260, the dotted line). Epochs
#    6, 7 and 8 do not beat it, so with patience 3 `fit` stops after epoch 8 and puts the weights of
#    epoch 5 back: the model it returns is the one of the dotted line, not of the last epoch.
# 2. It is learning its 3,000 training digits by heart: the training loss can go on falling towards
#    zero by fitting particular strokes and even mislabelled or odd images, which does not carry over
#    to new digits, so the validation loss turns up. That is overfitting.
# 3. Accuracy only checks which class has the largest score. Cross-entropy also charges for how sure
#    the model is: $-\ln p$ of the true class. As the model overfits it becomes more and more
#    confident. The few validation digits it gets wrong are now wrong with a probability near 0 for
#    their true class, each costing a large loss, while the number it gets right barely changes. In
#    this run, from epoch 5 to epoch 8 the validation loss went from 0.260 up to 0.271 (0.295 at epoch
#    7) while the accuracy went from 92.3% up to 92.7%.

# %% [markdown] locked
# The training loss falls all along; the validation loss falls for a few epochs and then climbs as
# the model starts to learn its 3,000 digits by heart rather than digits in general. Early stopping
# ended the run a few epochs after the turn, and `fit` put the best epoch's weights back, which the
# validation accuracy of the restored model confirms:

# %% provided numeric
if trainer.best_state is not None:
    print(f"restored model: {trainer.evaluate(val_loader)['accuracy']:.1%} on validation")

# %% [markdown] locked
# ## 9.6 Capstone: an MLP with at least 95% on the test set
#
# Now a real run. Write `build_mlp()`: it returns a fresh, untrained model that takes a batch of
# flattened images, shape `(N, 784)`, and returns 10 logits per image, `(N, 10)`. Use the layers of
# chapter 4 and give every layer that has weights a fixed `seed`, so that the result is the same at every
# run: the check calls `build_mlp()` twice and compares the two models, which must be separate objects,
# equal in every weight.
#
# The graded cell below then does, with **your** `Trainer`:
#
# * `Trainer(model, SoftmaxLoss(), Adam(model.parameters(), lr=0.002)).fit(train, epochs=1)` on all
#   60,000 training digits in shuffled batches of 64 (seeded);
# * the held-out accuracy on the 10,000 test digits, counted by the course;
# * while grading, the trained model's gradients on a few test digits the grader picks, computed by
#   the library and compared with the grader's own: the accuracy must come from a library that
#   computes them.
#
# It must reach **95%** (`MLP_ACCURACY` in `autograder/student/checks/capstone.py`). The cell has two
# minutes on one processor core, and a model of a hundred thousand weights trains in a few
# seconds; the cell prints how long yours took when you run it. The check in your notebook counts the
# accuracy only: the gradient comparison above runs while grading, so a backward that is a little wrong
# can pass here and lose the capstone there. One hidden layer of 128 ReLU units gets about 96.5%; a wider layer does a little better
# and costs time. (More epochs would do better still, but the recipe is fixed: the model is yours.)

# %% solution id=build_mlp export
def build_mlp():
    """A fresh MLP: (N, 784) flattened, normalized images → (N, 10) logits."""
    ### BEGIN SOLUTION
    return Sequential(Linear(784, 128, seed=1), ReLU(), Linear(128, 10, seed=2))
    ### END SOLUTION

# %% test id=test_capstone_mlp points=7 numeric
verdict = check.capstone("mlp", build_mlp)
assert verdict.passed, verdict.message
