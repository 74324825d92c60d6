# %% [markdown] locked
# # Chapter 8 · Model persistence
#
# Training a model takes minutes on MNIST and weeks on the models people talk about, and what it
# produces, the trained numbers, lives in the memory of one Python process. Restart the kernel and
# it is gone. This chapter saves a model to a file and loads it back: to use it later, to send it to
# someone, or to **resume training** after an interruption exactly where it stopped.
#
# What needs saving is only the numbers. The *architecture* is code (`Sequential(Linear(784, 128), ...)`),
# and code is already saved, in your notebook. So the plan, the same as PyTorch's, is:
#
# 1. a model's **state dict**: a flat dictionary from names (`"modules.0.weight"`) to NumPy arrays;
# 2. `load_state_dict` copies such a dictionary into a model built by the same code, and refuses
#    clearly when it does not fit: a missing name, an unexpected name, a wrong shape;
# 3. the same for an optimizer, whose running averages are part of "where training stopped";
# 4. a **checkpoint file** that holds both, written with NumPy's own format, and a loader that
#    refuses, with a message, any file that is not one.
#
# **Why not `pickle` the whole model object?** Pickle stores a reference to the *class* along with the
# object, so a file written before you renamed a class or edited its `__init__` no longer loads, and
# loading a pickle runs whatever code the file asks for: never open one from someone you do not
# trust. An array file holds numbers and nothing else.

# %% provided export
import zipfile

# %% provided
import os
import tempfile

import numpy as np

from earlier_chapters import *          # chapters 2 to 7: Tensor, ops, Module and layers, optimizers, data
from autograder.student.checks import Checker

check = Checker(globals())

# %% [markdown] locked
# Like `tensor_method` for `Tensor`, the small decorator below attaches a function to a class defined
# in an earlier chapter, so `Module` and `Optimizer` can grow new methods here, one cell at a time.

# %% provided export
def method_of(cls):
    """Attach the decorated function to `cls` as a method (classes grow chapter by chapter)."""
    def attach(fn):
        setattr(cls, fn.__name__, fn)
        return fn
    return attach

# %% [markdown] locked
# ## 8.1 What a model's state is
#
# Two kinds of arrays make up a model's state:
#
# * its **parameters**, the `Parameter`s that training changes by gradient descent;
# * its **buffers**: arrays the model changes in other ways and needs to predict, but that no
#   optimizer touches. `BatchNorm1d`'s `running_mean` and `running_var` are buffers: a model saved
#   without them would normalize with zeros and ones after loading and predict nonsense in `eval()`
#   mode, while the same model in memory works.
#
# In babygrad, a buffer is **any attribute holding a NumPy array or a `Tensor` that is not a
# `Parameter`**. Everything else (`in_features = 784`, Dropout's random generator, a flag) is set by the
# code that builds the model, or is not worth keeping.
#
# **Names** come from the path of attributes that leads to an array, joined with dots, with list
# positions and dict keys as parts of the path:
#
# ```
#   model = Sequential(Linear(2, 4), BatchNorm1d(4), ReLU(), Linear(4, 3))
#
#   Sequential ── modules: [ Linear ── weight        → "modules.0.weight"
#                                   └─ bias          → "modules.0.bias"
#                            BatchNorm1d ── weight   → "modules.1.weight"
#                                        ├─ bias     → "modules.1.bias"
#                                        ├─ running_mean → "modules.1.running_mean"
#                                        └─ running_var  → "modules.1.running_var"
#                            ReLU                     (no state)
#                            Linear ── weight, bias   → "modules.3.weight", "modules.3.bias" ]
# ```
#
# As in chapter 4's `parameters()`, an array reached twice (a tied weight, or one module used in two
# places) is one piece of state: it gets the **first** name it is found under, and only that one.

# %% [markdown] locked
# ### Exercise: `named_state` (3 points)
#
# Write `Module.named_state()`, returning the list of `(name, holder)` pairs of the module, in the order
# of its attributes (`vars(module)` keeps the order they were set in). The holder is the object
# itself, a `Parameter`, a `Tensor` or an `ndarray`, not a copy: `load_state_dict` will write into it.
#
# Walk values recursively, with the name so far:
#
# * a `Tensor` (a `Parameter` is one) or an `ndarray`: a holder, named by the path;
# * a `Module`: visit each of its attributes, `name.attribute`;
# * a list or tuple: visit each item, `name.0`, `name.1`, ...; a dict: each value, `name.key`;
# * anything else: nothing.
#
# Keep a set of the `id`s already visited (holders and modules) to take each once. The top module has
# no name of its own: its attributes are named `weight`, not `.weight`.

# %% solution id=named_state export
@method_of(Module)
def named_state(self):
    """[(name, holder)] for every Parameter and buffer inside this module, each once, in attribute order."""
    ### BEGIN SOLUTION
    found, seen = [], set()

    def visit(value, name):
        if isinstance(value, (Tensor, np.ndarray)):
            if id(value) not in seen:
                seen.add(id(value))
                found.append((name, value))
        elif isinstance(value, Module):
            if id(value) not in seen:
                seen.add(id(value))
                for key, item in vars(value).items():
                    visit(item, f"{name}.{key}" if name else key)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                visit(item, f"{name}.{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                visit(item, f"{name}.{key}")

    visit(self, "")
    return found
    ### END SOLUTION

# %% [markdown] locked
# The check builds a model of stand-in modules that hides state everywhere a real one can: attributes,
# lists, a dict, a nested module, a buffer array and a buffer Tensor, a tied weight, a module used
# twice, and attributes that are not state (numbers, strings, a random generator, `None`).

# %% test id=test_named_state points=3
verdict = check.named_state()
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.named_state("nested")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Exercise: `state_dict` (2 points)
#
# `Module.state_dict()` returns `{name: array}` for every pair of `named_state()`, each array a **copy**
# of the holder's values: `holder.data` for a Tensor (a `Parameter`, or a buffer kept as a Tensor), the
# array itself for a buffer kept as an ndarray. The check's model has buffers of both kinds.
#
# Why a copy? The state dict is a snapshot. Chapter 9 keeps the state of the best epoch so far while
# training goes on; if the dict held the model's own arrays, every later optimizer step (which changes
# `.data` in place) would silently change the snapshot too. `np.array(x)` copies; `x.copy()` too.

# %% solution id=state_dict export
@method_of(Module)
def state_dict(self):
    """{name: a copy of the array} for every Parameter and buffer: a snapshot of the model."""
    ### BEGIN SOLUTION
    return {name: np.array(holder.data if isinstance(holder, Tensor) else holder)
            for name, holder in self.named_state()}
    ### END SOLUTION

# %% test id=test_state_dict points=2
verdict = check.state_dict()
assert verdict.passed, verdict.message

# %% [markdown] locked
# ## 8.2 Loading, and refusing what does not fit
#
# `load_state_dict(state)` copies every array of `state` into the holder of the same name. A state
# dict written by a *different* model must not half-load: a model that silently keeps its random
# initial weights for the layers it could not match trains and predicts badly, and nobody knows why.
# So before changing anything, compare:
#
# * **missing** names, in the model but not in `state` → `KeyError`, listing them;
# * **unexpected** names, in `state` but not in the model → `KeyError`, listing them;
# * a **shape mismatch**, the same name with different shapes (a `Linear(784, 128)` checkpoint loaded
#   into `Linear(784, 64)`) → `ValueError`, naming the entry and both shapes.
#
# Only when everything fits, copy. Checking everything first makes the load **all or nothing**: a
# refused load leaves the model exactly as it was.
#
# With `strict=False` missing and unexpected names are allowed (the common use: load a trained body
# into a model with a new last layer); shapes must still match for the names that are loaded.
#
# **Copy into the holders, in place**: `target[...] = value`, where the target is `holder.data` for a
# Tensor and the holder itself for an array. Writing into the existing arrays keeps every
# `Parameter` object the same, and that matters: an optimizer holds the model's `Parameter` objects
# (`optimizer.params`), and must go on updating the ones the model uses.

# %% solution id=load_state_dict export
@method_of(Module)
def load_state_dict(self, state, strict=True):
    """Copy `state`'s arrays into this module's Parameters and buffers, in place, after checking that it fits."""
    ### BEGIN SOLUTION
    holders = dict(self.named_state())
    missing = [name for name in holders if name not in state]
    unexpected = [name for name in state if name not in holders]
    if strict and missing:
        raise KeyError(f"the state dict has no entry for {missing}")
    if strict and unexpected:
        raise KeyError(f"the state dict has entries the model does not: {unexpected}")
    for name, holder in holders.items():
        if name in state and np.shape(state[name]) != np.shape(holder):
            raise ValueError(f"{name}: the state dict has shape {np.shape(state[name])}, the model {np.shape(holder)}")
    for name, holder in holders.items():
        if name in state:
            target = holder.data if isinstance(holder, Tensor) else holder
            target[...] = state[name]
    ### END SOLUTION

# %% test id=test_load_state_dict points=2
verdict = check.load_state_dict("values")
assert verdict.passed, verdict.message

# %% test id=test_load_state_dict_refuses points=3
verdict = check.load_state_dict("errors")
assert verdict.passed, verdict.message

# %% [markdown] locked
# ### Question 8.A · All or nothing (1 point, graded by your instructor)
#
# Your `load_state_dict` refuses a state whose names or shapes do not fit the model, and then changes
# nothing. Describe a concrete mistake that a lenient loader, one that loads whatever fits and skips
# the rest, would hide: what the user did, and what they would see afterwards. When is the lenient
# behaviour (`strict=False`) what you want?
#
# ### BEGIN MARK SCHEME
# **1 point.** A concrete case, e.g. a checkpoint of a model whose hidden layer had another size, or
# whose layers were renamed or reordered, loaded into the current model: the mismatched layers keep
# their random initial weights, the program runs without an error, and the model predicts badly (near
# chance) with no hint why. And `strict=False` for loading part of a model on purpose: a trained body
# into a model with a new last layer (fine-tuning on other classes).
#
# **0.5 points.** One of the two parts.
#
# **0 points.** Neither.
# ### END MARK SCHEME

# %% answer id=q_strict_loading points=1
# Say I trained `Sequential(Linear(784, 128), ReLU(), Linear(128, 10))`, then changed the hidden layer
# to 256 units and loaded the old checkpoint to evaluate it. A lenient loader would skip both
# `Linear` layers (their shapes no longer fit) and load nothing else, with no error. The model would
# keep its random weights and score about 10%, and I would look for a bug in my evaluation code, not
# in the loading. Refusing, with the name and both shapes in the message, points at the real cause,
# and leaving the model unchanged means nothing is half-loaded.
#
# `strict=False` is right when I mean to load only part of a model: for example the trained layers of
# a digit classifier into a model with a new last layer for letters, which I then fine-tune.

# %% [markdown] locked
# ## 8.3 The optimizer's state
#
# Saving the model is enough to *use* it. To **resume training** it is not: SGD with momentum carries a
# velocity for every parameter, and Adam two running averages and a step count $t$. An Adam restarted
# with $m = v = 0$ and $t = 0$ takes a few wild steps (its bias correction believes it has just begun)
# and the run no longer matches the one that was interrupted.
#
# Chapter 5's optimizers keep their state in two kinds of attributes:
#
# * numbers: the settings (`lr`, `momentum`, ...) and counters (Adam's `t`);
# * dicts keyed by `id(p)`, one array per parameter: SGD's `velocity`, Adam's `m` and `v`.
#
# An `id` is the object's address in this Python process: meaningless in a file and different in the
# next process. What survives is the parameter's **position** in `self.params`, the list that the same
# code (`Adam(model.parameters())`) builds in the same order each time. So `state_dict()` names
# per-parameter arrays `"<attribute>.<position>"` (`"m.0"`, `"velocity.3"`) and numbers by their
# attribute (`"t"`, `"lr"`), each as a NumPy array (`np.array(3)` is a 0-d array). Copy the arrays.
#
# `load_state_dict(state)` undoes it: `"m.0"` goes into `self.m[id(self.params[0])]`, and a number
# back into its attribute as a Python number (`value.item()`: `int` for `t`, `float` for `lr`).
# Copy on the way in too: Adam updates `m` and `v` in place, so an optimizer that kept the dict's own
# arrays would change the caller's dict at every step, and a checkpoint held in memory would drift.
# Booleans are numbers in Python (`isinstance(True, int)`); an optimizer has none, so you need not care.
# A setting of 0 is a setting like any other: a schedule may have turned momentum or weight decay off
# during the run, and the optimizer that loads the state must turn it off too. Save every number and
# load it back whatever its value; the check turns both off in an SGD that was made with them on.

# %% solution id=optimizer_state export
@method_of(Optimizer)
def state_dict(self):
    """{"<attribute>.<position>": array} for per-parameter state, {"<attribute>": 0-d array} for numbers."""
    ### BEGIN SOLUTION
    position = {id(p): i for i, p in enumerate(self.params)}
    state = {}
    for name, value in vars(self).items():
        if isinstance(value, dict):                  # per-parameter arrays, keyed by id(p)
            for key, array in value.items():
                state[f"{name}.{position[key]}"] = np.array(array)
        elif isinstance(value, (int, float)):
            state[name] = np.array(value)
    return state
    ### END SOLUTION


@method_of(Optimizer)
def load_state_dict(self, state):
    """Put a state dict back: per-parameter arrays under the id of the parameter at that position."""
    ### BEGIN SOLUTION
    for key, value in state.items():
        name, _, index = key.partition(".")
        if index:
            getattr(self, name)[id(self.params[int(index)])] = np.array(value)
        else:
            setattr(self, name, np.asarray(value).item())
    ### END SOLUTION

# %% test id=test_optimizer_state points=3
verdict = check.optimizer_state("adam", "sgd_off")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.optimizer_state("sgd", "adam_decay", "sgd_off")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Question 8.B · Resuming Adam without its state (2 points, graded by your instructor)
#
# A training run with Adam is interrupted after 5,000 steps. Only the model's weights were saved, and
# training resumes with a new `Adam(model.parameters(), lr=1e-3)`. Using Adam's update rule from
# chapter 5, describe the first steps after resuming and how they differ from the steps the
# uninterrupted run would have taken. Would saving `t`, but not `m` and `v`, fix it?
#
# ### BEGIN MARK SCHEME
# **2 points.** All of:
# * fresh state: $m = v = 0$, $t = 0$. At the first step the bias correction gives $\hat m = g$ and
#   $\hat v = g^2$, so every weight moves by about `lr` in the direction of the sign of one batch's
#   gradient. In the uninterrupted run $m$ averages about 10 steps and $v$ about 1,000, so weights
#   with noisy gradients take much smaller steps. After resuming they jump: the loss can rise, and the
#   run no longer matches the one that was interrupted;
# * `t` alone makes it worse: with $t = 5000$ the corrections are about 1, so after one step
#   $\hat m = 0.1\,g$ and $\hat v = 0.001\,g^2$, a step of about $0.1/\sqrt{0.001} \approx 3.2$ times
#   `lr`; all three (`m`, `v`, `t`) must be saved.
#
# **1 point.** The averages restarting at zero identified, and the steps said to differ, without the
# size of the first step or without the `t`-only case.
#
# **0 points.** "Adam forgets its learning rate", or the claim that the weights alone are enough.
# ### END MARK SCHEME

# %% answer id=q_resume_adam points=2
# The new Adam starts with $m = v = 0$ and $t = 0$. At the first step $m = 0.1\,g$ and
# $v = 0.001\,g^2$, and the bias correction divides them by $0.1$ and $0.001$: $\hat m = g$,
# $\hat v = g^2$. So every weight moves by about `lr` times the sign of its gradient on that one batch.
# In the run that was interrupted, $m$ averaged the gradients of about the last 10 steps and $v$ the
# squared gradients of about the last 1,000; a weight whose gradient keeps changing sign had a small
# $m$ next to $\sqrt v$, so it took steps much smaller than `lr`. After resuming, all those weights
# take full steps in the direction of one noisy batch: the loss can jump up, and the run is no longer
# the one that would have happened without the interruption.
#
# Saving only `t` is worse. With $t = 5000$, $1 - \beta^t \approx 1$ and there is no correction, while
# $m$ and $v$ restart at zero: after one step $\hat m = 0.1\,g$ and $\hat v = 0.001\,g^2$, a step of
# $0.1 / \sqrt{0.001} \approx 3.2$ times `lr`. Resuming exactly needs `m`, `v` and `t` together,
# which is what the optimizer's `state_dict` saves.

# %% [markdown] locked
# ## 8.4 Checkpoint files
#
# NumPy's **`.npz`** format is a zip archive with one `.npy` file per array, named by the keyword it
# was saved under: `np.savez(f, a=x, b=y)` writes `a.npy` and `b.npy` into `f`, and `np.load(path)`
# returns an archive whose `.files` lists the names and where `archive["a"]` reads an array back. Any
# NumPy (and many other tools) reads it, and with **`allow_pickle=False`** loading it runs no code.
#
# One file holds the whole checkpoint, every name prefixed by what it belongs to:
#
# ```
#   babygrad.checkpoint      np.array(1)          marks the file as ours (and its format version)
#   model.modules.0.weight   ...                  model.state_dict(), prefixed "model."
#   optimizer.m.0            ...                  optimizer.state_dict(), prefixed "optimizer."
#   optimizer.t              np.array(120)
# ```
#
# Four details:
#
# * `np.savez(path, ...)` **adds `.npz`** to a path that does not end with it, so
#   `save_checkpoint("best.ckpt", ...)` would write `best.ckpt.npz`. Open the file yourself (binary,
#   for writing) and hand the open file to `np.savez`: NumPy then writes exactly where you asked.
# * Loading a file that is not a checkpoint fails deep inside NumPy with messages about pickles and
#   zip files (try `np.load` on a text file). `load_checkpoint` turns every such failure into a
#   `ValueError` that says what happened: *"notes.txt is not a babygrad checkpoint: ..."*. Catch what
#   `np.load` raises on a bad file (`ValueError`, `OSError`, `EOFError`, `zipfile.BadZipFile`), and check
#   that what it returned is an archive, `isinstance(archive, np.lib.npyio.NpzFile)` (a plain `.npy`
#   file loads as a bare array), with the `babygrad.checkpoint` entry. A missing file may stay a
#   `FileNotFoundError`: that message is clear already.
# * A file can have the mark and still not be a checkpoint: an entry saved as an object array can only be
#   read by unpickling it. With `allow_pickle=False`, NumPy refuses it with a `ValueError` when you read
#   that entry, after `np.load` has opened the file: turn that into your `ValueError` too. A checkpoint never
#   needs pickle, and loading with pickle allowed runs whatever code the file names.
# * A real checkpoint of *another* model (its layers named or shaped differently) must be refused too, not
#   half-loaded: load the model's entries strictly, as `load_state_dict` does by default (section 8.2), and
#   let its `KeyError` or `ValueError` reach the caller. Loading part of a model on purpose is a job for
#   `load_state_dict(..., strict=False)` itself, called by someone who knows which part they want.

# %% provided export
CHECKPOINT_MARK = "babygrad.checkpoint"
CHECKPOINT_VERSION = 1

# %% solution id=checkpoint export
def save_checkpoint(path, model, optimizer=None):
    """Write model (and optimizer) state to `path`, exactly there, as a NumPy .npz archive."""
    ### BEGIN SOLUTION
    arrays = {CHECKPOINT_MARK: np.array(CHECKPOINT_VERSION)}
    arrays.update({f"model.{name}": value for name, value in model.state_dict().items()})
    if optimizer is not None:
        arrays.update({f"optimizer.{name}": value for name, value in optimizer.state_dict().items()})
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    ### END SOLUTION


def load_checkpoint(path, model, optimizer=None):
    """Load a checkpoint written by save_checkpoint into `model` (and `optimizer`); refuse anything else."""
    ### BEGIN SOLUTION
    try:
        archive = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path} is not a babygrad checkpoint: NumPy cannot read it ({error})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(f"{path} is not a babygrad checkpoint: it holds a single array, not an archive")
    with archive:
        if CHECKPOINT_MARK not in archive.files:
            raise ValueError(f"{path} is not a babygrad checkpoint: it has no {CHECKPOINT_MARK!r} entry")
        try:
            arrays = {name: archive[name] for name in archive.files}
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
            raise ValueError(f"{path} is not a babygrad checkpoint: it is damaged ({error})") from None
    model.load_state_dict({name[len("model."):]: value for name, value in arrays.items()
                           if name.startswith("model.")})
    if optimizer is not None:
        optimizer.load_state_dict({name[len("optimizer."):]: value for name, value in arrays.items()
                                   if name.startswith("optimizer.")})
    ### END SOLUTION

# %% test id=test_checkpoint_round_trip points=2
verdict = check.checkpoint("round_trip")
assert verdict.passed, verdict.message

# %% test id=test_checkpoint_refuses points=2
verdict = check.checkpoint("refuses", "text", "npz", "unmarked", "pickled", "other_model")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.checkpoint("refuses", "empty", "random", "zip", "npy")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 8.5 Resuming training, exactly
#
# The real test of a checkpoint: train a model with batch normalization under Adam for a few steps, save,
# train on. Then build **new** objects from the same code with a different seed, load the checkpoint
# into them, and train on with the same batches. If everything that matters was saved and restored,
# the two runs are the same computation, and their weights agree **to the last bit**, not just
# approximately; so do the two optimizers' state dicts, moments, step count and settings alike. (A
# model with `Dropout` would also need its random generator's state to repeat its masks; the model
# here has none.)

# %% test id=test_resume_training points=3
verdict = check.resume_training("adam")
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.resume_training("sgd")
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# Here is the whole cycle on a small model. The checkpoint is an ordinary `.npz` file: plain NumPy
# can list and read it.

# %% provided
model = Sequential(Linear(4, 8, seed=0), BatchNorm1d(8), ReLU(), Linear(8, 3, seed=1))
optimizer = Adam(model.parameters(), lr=0.01)
x = Tensor(np.random.default_rng(0).uniform(-1, 1, (16, 4)), requires_grad=False)
labels = np.arange(16) % 3
for _ in range(5):
    optimizer.zero_grad()
    loss = SoftmaxLoss()(model(x), labels)
    loss.backward()
    optimizer.step()

path = os.path.join(tempfile.mkdtemp(), "small.ckpt")
save_checkpoint(path, model, optimizer)
with np.load(path, allow_pickle=False) as archive:
    for name in archive.files:
        print(f"{name:28} {str(archive[name].shape):8} {archive[name].dtype}")

restored = Sequential(Linear(4, 8, seed=7), BatchNorm1d(8), ReLU(), Linear(8, 3, seed=8))
load_checkpoint(path, restored)
restored.eval()
model.eval()
print("same predictions after loading:", np.array_equal(restored(x).data, model(x).data))

# %% provided
with open(path + ".txt", "w") as f:
    f.write("not a checkpoint\n")
try:
    load_checkpoint(path + ".txt", restored)
except ValueError as error:
    print("refused:", str(error).replace(os.path.dirname(path), "..."))
