"""Chapter 8's and 9's checks: the solution passes, typical slips fail with a message that names them."""
import zipfile

import numpy as np
import pytest

from autograder.student.checks import Checker, ch09_trainer as fitting, ch08_persistence as persistence
from autograder.student.checks import ch08_persistence_facts as persistence_facts

from helpers.solved_code import solved_namespace


@pytest.fixture(scope="module")
def ns():
    return solved_namespace("ch09")


@pytest.fixture
def check(ns):
    return Checker(ns, verbose=False)


def test_the_solution_passes_every_check(check):
    verdicts = [check.named_state(), check.named_state("nested"), check.state_dict(), check.load_state_dict("values"),
                check.load_state_dict("errors"), check.optimizer_state("adam", "sgd", "adam_decay", "sgd_off"),
                check.checkpoint("round_trip"), check.checkpoint("refuses", "text", "empty", "random", "zip", "npy", "npz", "pickled",
                                                                  "other_model", "unmarked"),
                check.resume_training("adam"), check.resume_training("sgd"), check.evaluate(),
                check.keep_best("checkpoint"), check.keep_best("patience"), check.fit(), check.fit(validate=False)]
    assert [v.message for v in verdicts if not v.passed] == []


@pytest.fixture
def patched(ns):
    """Replace a method of a notebook class for one test, and put it back."""
    saved = []

    def patch(cls_name, method, fn):
        cls = ns[cls_name]
        saved.append((cls, method, cls.__dict__[method]))
        setattr(cls, method, fn)

    yield patch
    for cls, method, fn in reversed(saved):         # a method patched twice gets its first back
        setattr(cls, method, fn)


def test_a_state_dict_of_references_is_not_a_snapshot(ns, check, patched):
    Tensor = ns["Tensor"]
    patched("Module", "state_dict", lambda self: {n: (h.data if isinstance(h, Tensor) else h) for n, h in self.named_state()})
    verdict = check.state_dict()
    assert not verdict.passed and "not a snapshot" in verdict.message


def test_a_buffer_kept_as_a_tensor_is_state_like_any_other(ns, check, patched):
    """The check's model keeps one buffer as a Tensor: a state dict or a load written for Parameters and ndarray
    buffers alone fails on it."""
    Parameter, Tensor = ns["Parameter"], ns["Tensor"]
    assert isinstance(getattr(persistence.small_net(ns, 0), persistence.TENSOR_BUFFER), Tensor)
    patched("Module", "state_dict", lambda self: {n: np.array(h.data if isinstance(h, Parameter) else h)
                                                  for n, h in self.named_state()})
    verdict = check.state_dict()
    assert not verdict.passed and "'calibration'] is an array of Python objects" in verdict.message, verdict.message


def test_settings_turned_off_must_be_saved_and_loaded_as_zeros(ns, check, patched):
    """A schedule turned SGD's momentum and weight decay off: a state dict that takes 0 for no value leaves the
    restored optimizer with them on."""
    original = ns["Optimizer"].state_dict
    patched("Optimizer", "state_dict", lambda self: {k: v for k, v in original(self).items() if v.ndim or v.item()})
    verdict = check.optimizer_state("sgd_off")
    assert not verdict.passed and "not the [0] saved" in verdict.message and "A setting of 0" in verdict.message
    assert check.optimizer_state("adam_decay").passed, "no setting turned off there: the truth test hides"


def test_a_checkpoint_without_the_mark_is_refused_even_when_its_entries_fit(ns, check):
    saved = ns["load_checkpoint"]

    def unmarked_welcome(path, model, optimizer=None):
        with np.load(path, allow_pickle=False) as archive:
            state = {name[len("model."):]: archive[name] for name in archive.files if name.startswith("model.")}
        try:
            model.load_state_dict(state)
        except KeyError as error:
            raise ValueError(f"{path} is not a checkpoint of this model ({error})") from None
    ns["load_checkpoint"] = unmarked_welcome
    try:
        verdict, others = check.checkpoint("refuses", "unmarked"), check.checkpoint("refuses", "npz", "other_model")
    finally:
        ns["load_checkpoint"] = saved
    assert others.passed, "only the unmarked checkpoint tells this loader from the course's"
    assert not verdict.passed and "the mark is what says a file is a checkpoint" in verdict.message, verdict.message


def test_numpys_own_errors_are_not_a_refusal(ns, check):
    saved = ns["load_checkpoint"]
    ns["load_checkpoint"] = lambda path, model, optimizer=None: np.load(path, allow_pickle=False)
    try:
        empty, text = check.checkpoint("refuses", "empty"), check.checkpoint("refuses", "text")
    finally:
        ns["load_checkpoint"] = saved
    assert not empty.passed and "raised EOFError" in empty.message and "Expected a ValueError" in empty.message
    assert "np.load raises several kinds of error" in empty.message and "zipfile.BadZipFile" not in empty.message
    assert not text.passed and "say which file it was" in text.message


ANY_ERROR = (Exception,)
NUMPYS_ERRORS = (ValueError, OSError, EOFError, zipfile.BadZipFile)


def loader(ns, allow_pickle, catch, entries_guarded=True, strict=True, swallow=False):
    """A load_checkpoint as a student writes it: np.load with `allow_pickle`, its errors `catch`-ed into the
    refusal, and (`entries_guarded`) the reading of the entries too; the model's entries loaded `strict`-ly, and
    (`swallow`) load_state_dict's refusal caught and ignored."""
    entry_errors = catch if entries_guarded else ()

    def load_checkpoint(path, model, optimizer=None):
        try:
            archive = np.load(path, allow_pickle=allow_pickle)
        except FileNotFoundError:
            raise
        except catch as error:
            raise ValueError(f"{path} is not a babygrad checkpoint: NumPy cannot read it ({error})") from None
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ValueError(f"{path} is not a babygrad checkpoint: it holds a single array")
        with archive:
            if ns["CHECKPOINT_MARK"] not in archive.files:
                raise ValueError(f"{path} is not a babygrad checkpoint: it has no mark")
            try:
                arrays = {name: archive[name] for name in archive.files}
            except entry_errors as error:
                raise ValueError(f"{path} is not a babygrad checkpoint: it is damaged ({error})") from None
        try:
            model.load_state_dict({name[len("model."):]: value for name, value in arrays.items()
                                   if name.startswith("model.")}, strict=strict)
        except KeyError:
            if not swallow:
                raise
    return load_checkpoint


@pytest.fixture
def load_checkpoint_as(ns):
    """Put a student's load_checkpoint in the notebook for one test, and the solution's back."""
    saved = ns["load_checkpoint"]

    def put(fn):
        ns["load_checkpoint"] = fn

    yield put
    ns["load_checkpoint"] = saved


def test_a_loader_that_unpickles_a_marked_file_is_told_the_rule(ns, check, load_checkpoint_as):
    """Pickle allowed and every error turned into the refusal: the files that are not archives are refused, so
    only the marked checkpoint whose entry needs pickle shows it."""
    load_checkpoint_as(loader(ns, allow_pickle=True, catch=ANY_ERROR))
    assert check.checkpoint("refuses", "text", "npz").passed
    verdict = check.checkpoint("refuses", "text", "npz", "pickled")
    assert not verdict.passed and "accepted a checkpoint file whose entry needs pickle (pickled.ckpt)" in verdict.message
    assert persistence.PICKLE_RULE in verdict.message, verdict.message


def test_an_unpickling_error_says_the_file_was_loaded_with_pickle_allowed(ns, check, load_checkpoint_as):
    load_checkpoint_as(loader(ns, allow_pickle=True, catch=NUMPYS_ERRORS))
    verdict = check.checkpoint("refuses", "text")
    assert not verdict.passed and "raised UnpicklingError" in verdict.message
    assert "loaded with pickle allowed" in verdict.message and persistence.PICKLE_RULE in verdict.message
    assert persistence.CATCH_HINT not in verdict.message, verdict.message


def test_an_entry_numpy_refuses_to_unpickle_must_be_refused_naming_the_file(ns, check, load_checkpoint_as):
    load_checkpoint_as(loader(ns, allow_pickle=False, catch=NUMPYS_ERRORS, entries_guarded=False))
    assert check.checkpoint("refuses", "text", "npz").passed
    verdict = check.checkpoint("refuses", "pickled")
    assert not verdict.passed and "say which file it was" in verdict.message
    assert "reading the entries can fail too" in verdict.message, verdict.message


def test_a_loader_without_pickle_refuses_the_pickled_checkpoint(ns, check, load_checkpoint_as):
    """NumPy's default refuses pickles; catching every error of np.load is right too."""
    load_checkpoint_as(loader(ns, allow_pickle=False, catch=ANY_ERROR))
    verdict = check.checkpoint("refuses", "text", "npz", "pickled")
    assert verdict.passed and "and a checkpoint file whose entry needs pickle" in verdict.message, verdict.message


def test_pickle_is_named_only_on_evidence_that_the_file_was_unpickled():
    """A refusal of the wrong type, or an unnamed one, says nothing of pickle unless NumPy unpickled the file."""
    for kind in persistence.NOT_CHECKPOINTS:
        for error_type, is_value_error in (("KeyError", False), ("OSError", False), ("ValueError", True)):
            if kind == "other_model" and error_type != "OSError":
                continue                            # load_state_dict's refusals: right for another model's checkpoint
            problem = persistence.refused_file_problem(kind, "x.ckpt", error_type, is_value_error, "bad")
            assert problem and persistence.PICKLE_RULE not in problem.message, (kind, error_type)
        accepted = persistence.refused_file_problem(kind, "x.ckpt", None, False, "")
        assert (persistence.PICKLE_RULE in accepted.message) == (kind == "pickled"), accepted.message


def test_a_checkpoint_of_another_model_is_refused_by_a_strict_load_and_half_loaded_by_a_lenient_one(
        ns, load_checkpoint_as):
    """Section 8.4: the file is a real checkpoint whose last layer sits elsewhere. strict=False loads the layers
    that fit and keeps the rest; the hint names that only when the model changed."""
    def refuses(**how):
        load_checkpoint_as(loader(ns, allow_pickle=False, catch=NUMPYS_ERRORS, **how))
        return Checker(ns, verbose=False).checkpoint("refuses", "other_model")

    strict = refuses()
    assert strict.passed and "a checkpoint of another model, by load_state_dict's error" in strict.message
    assert "ValueError that names the file" not in strict.message, strict.message
    lenient, swallowed = refuses(strict=False), refuses(swallow=True)
    for verdict in (lenient, swallowed):
        assert not verdict.passed and "accepted a checkpoint of another model (other_model.ckpt)" in verdict.message
        assert "modules.3.weight is modules.4.weight" in verdict.message, verdict.message
    assert "half one network, half another" in lenient.message and "strictly" in lenient.message
    assert "half one network" not in swallowed.message and "Hint" not in swallowed.message, swallowed.message


def test_the_course_load_state_dict_a_check_stands_in_with_is_strict_and_all_or_nothing():
    """ch08_persistence_facts.load_arrays, which both the checks and the judge's worker use for the course's
    load_state_dict."""
    load_arrays = persistence_facts.load_arrays
    arrays = [("w", np.zeros((2, 3))), ("b", np.zeros(3))]
    with pytest.raises(KeyError, match="misses \\['b'\\]"):
        load_arrays(arrays, {"w": np.ones((2, 3)), "x": np.ones(3)})
    with pytest.raises(ValueError, match="b: the state dict has shape \\(1, 3\\)"):
        load_arrays(arrays, {"w": np.ones((2, 3)), "b": np.ones((1, 3))})
    assert all(not a.any() for _, a in arrays)                      # nothing changed by either refusal
    load_arrays(arrays, {"w": np.ones((2, 3)), "x": np.ones(3)}, strict=False)
    assert arrays[0][1].all() and not arrays[1][1].any()


def test_a_checkpoint_written_under_another_name_names_savez_only_when_it_added_npz():
    added = persistence.checkpoint_file_problem("run.ckpt", False, ["run.ckpt.npz"], None, set())
    assert not added.passed and "adds .npz to a file name" in added.message, added.message
    assert "np.savez(" not in added.message
    elsewhere = persistence.checkpoint_file_problem("run.ckpt", False, ["best.ckpt"], None, set())
    assert not elsewhere.passed and "at exactly the path it is given" in elsewhere.message
    assert ".npz" not in elsewhere.message, elsewhere.message


def test_the_pickled_checkpoint_holds_plain_numbers_and_needs_pickle_only_for_its_entry(ns, tmp_path):
    """Harmless to unpickle (plain floats: what a careless loader would run), and refused without pickle only
    when the entry is read, after np.load opened the file and the mark was seen."""
    state = persistence.small_net(ns, seed=3).state_dict()
    path = tmp_path / "pickled.ckpt"
    with open(path, "wb") as f:
        persistence.pickled_checkpoint(f, state, "modules.1.bias")
    with np.load(path, allow_pickle=False) as archive:
        assert persistence.CHECKPOINT_MARK in archive.files and archive["model.modules.0.weight"].dtype.kind == "f"
        with pytest.raises(ValueError, match="allow_pickle=False"):
            archive["model.modules.1.bias"]
    with np.load(path, allow_pickle=True) as archive:
        entry = archive["model.modules.1.bias"]
    assert entry.dtype == object and all(type(v) is float for v in entry.ravel())
    assert np.array_equal(entry.astype(np.float32), state["modules.1.bias"])


def test_a_half_done_load_is_caught(ns, check, patched):
    Tensor = ns["Tensor"]

    def careless(self, state, strict=True):
        for name, holder in self.named_state():
            if np.shape(state[name]) != np.shape(holder):
                raise ValueError(f"{name}: shape {np.shape(state[name])} vs {np.shape(holder)}")
            (holder.data if isinstance(holder, Tensor) else holder)[...] = state[name]

    patched("Module", "load_state_dict", careless)
    verdict = check.load_state_dict("errors")
    assert not verdict.passed


def test_the_mean_of_batch_means_is_named(ns, check, patched):
    def evaluate(self, loader):
        self.model.eval()
        means, right, seen = [], 0, 0
        for images, labels in loader:
            logits = self.model(images)
            means.append(self.loss_fn(logits, labels).item())
            right += int((logits.numpy().argmax(axis=1) == labels.numpy()).sum())
            seen += len(labels)
        return {"loss": float(np.mean(means)), "accuracy": right / seen}

    patched("Trainer", "evaluate", evaluate)
    verdict = check.evaluate()
    assert not verdict.passed and "mean of the batch means" in verdict.message


def evaluate_summing_means(switch_back):
    """An evaluate that adds up the batch means without weighing them by size (a wrong loss that is not the mean of
    the means); in eval mode while measuring, and back in training mode afterwards when `switch_back`."""
    def evaluate(self, loader):
        self.model.eval()
        total, right, seen = 0.0, 0, 0
        for images, labels in loader:
            logits = self.model(images)
            total += self.loss_fn(logits, labels).item()
            right += int((logits.numpy().argmax(axis=1) == labels.numpy()).sum())
            seen += len(labels)
        if switch_back:
            self.model.train()
        return {"loss": total / seen, "accuracy": right / seen}
    return evaluate


@pytest.mark.parametrize("switch_back", [False, True])
def test_the_training_mode_hint_needs_batches_that_went_through_dropout_in_training_mode(ns, check, patched,
                                                                                       switch_back):
    """A model put back in training mode after measuring in eval mode did not drop units: the hint names training
    mode only when a batch went through the Dropout in it."""
    patched("Trainer", "evaluate", evaluate_summing_means(switch_back))
    verdict = check.evaluate()
    assert not verdict.passed and "(the mean loss per sample)" in verdict.message
    assert "training mode" not in verdict.message, verdict.message


def test_an_evaluate_without_eval_mode_is_told_it_dropped_units(ns, check, patched):
    def evaluate(self, loader):
        total, right, seen = 0.0, 0, 0
        for images, labels in loader:
            logits = self.model(images)
            total += self.loss_fn(logits, labels).item() * len(labels)
            right += int((logits.numpy().argmax(axis=1) == labels.numpy()).sum())
            seen += len(labels)
        return {"loss": total / seen, "accuracy": right / seen}

    patched("Trainer", "evaluate", evaluate)
    verdict = check.evaluate()
    assert not verdict.passed and "went through the model in training mode, so dropout dropped units" in verdict.message


def test_an_early_stop_one_epoch_late_is_caught(ns, check, patched):
    original = ns["Trainer"].__dict__["keep_best"]

    def late(self, epoch, val_loss):
        original(self, epoch, val_loss)
        return self.patience is not None and self.stale_epochs > self.patience

    patched("Trainer", "keep_best", late)
    verdict = check.keep_best("patience")
    assert not verdict.passed and "returned False at epoch 6, expected True" in verdict.message
    assert "a loss that is not strictly lower than the best is a stale epoch" in verdict.message, verdict.message


def test_a_stale_count_that_an_improvement_does_not_reset_is_named(ns, check, patched):
    """The visible losses have a new best between stale epochs, and the hint names the slip from the returns."""
    original = ns["Trainer"].__dict__["keep_best"]

    def unreset(self, epoch, val_loss):
        stale = self.stale_epochs
        flag = original(self, epoch, val_loss)
        if self.stale_epochs == 0 and epoch > 1:          # an improvement: the count goes on as it was
            self.stale_epochs = stale
            return self.patience is not None and self.stale_epochs >= self.patience
        return flag

    patched("Trainer", "keep_best", unreset)
    verdict = check.keep_best("patience")
    assert not verdict.passed and "a count of stale epochs that a new best does not reset" in verdict.message, \
        verdict.message


def test_a_history_short_of_the_stopping_epoch_is_told_so(ns, check, patched):
    original = ns["Trainer"].__dict__["fit"]

    def stops_first(self, train_loader, val_loader=None, epochs=1):
        history = original(self, train_loader, val_loader, epochs)
        if val_loader is not None and len(history["val_loss"]) < epochs:      # as if it broke before recording
            history["val_loss"], history["val_accuracy"] = history["val_loss"][:-1], history["val_accuracy"][:-1]
        return history

    patched("Trainer", "fit", stops_first)
    verdict = check.fit()
    assert not verdict.passed and "the last epoch is missing" in verdict.message, verdict.message
    assert "batch losses" not in verdict.message, verdict.message


def test_a_best_taken_against_the_epoch_before_is_caught(ns, check, patched):
    """0.75 beats the epoch before it (0.8), not the best (0.7): the default losses hold that case."""
    def against_previous(self, epoch, val_loss):
        improved = val_loss < getattr(self, "previous_loss", float("inf"))
        self.previous_loss = val_loss
        if improved:
            self.best_loss, self.best_epoch, self.best_state = val_loss, epoch, self.model.state_dict()
            ns["save_checkpoint"](self.checkpoint_path, self.model, self.optimizer)
        return False

    patched("Trainer", "keep_best", against_previous)
    verdict = check.keep_best("checkpoint")
    assert not verdict.passed and "best_epoch = 4" in verdict.message and "expected epoch 2 with 0.7" in verdict.message
    assert "compare with the best loss so far, not with the epoch before" in verdict.message, verdict.message


def test_a_best_checkpoint_without_the_optimizer_is_caught(ns, check, patched):
    def model_only(self, epoch, val_loss):
        if val_loss < self.best_loss:
            self.best_loss, self.best_epoch, self.best_state = val_loss, epoch, self.model.state_dict()
            ns["save_checkpoint"](self.checkpoint_path, self.model)
        return False

    patched("Trainer", "keep_best", model_only)
    verdict = check.keep_best("checkpoint")
    assert not verdict.passed and "holds the model but not the optimizer's state" in verdict.message, verdict.message


def test_an_optimizer_state_without_its_settings_is_caught(ns, check, patched):
    """The check lowers lr before saving, as a schedule would: a fresh optimizer made with the old settings must
    take the saved one."""
    original = ns["Optimizer"].__dict__["state_dict"]

    def counters_only(self):
        return {k: v for k, v in original(self).items() if "." in k or np.asarray(v).dtype.kind == "i"}

    patched("Optimizer", "state_dict", counters_only)
    verdict = check.optimizer_state()
    assert not verdict.passed, verdict.message


def fit_averaging(ns, last=None):
    """Trainer.fit as the text describes it, but its epoch loss the mean of the `last` batch losses (None: all)."""
    def fit(self, train_loader, val_loader=None, epochs=1):
        history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
        for epoch in range(1, epochs + 1):
            with ns["tqdm"](total=len(train_loader), disable=True) as bar:
                losses = ns["train_epoch"](self.model, train_loader, self.loss_fn, self.optimizer, bar)
            history["train_loss"].append(float(np.mean(losses[-last:] if last else losses)))
            if val_loader is None:
                ns["report"](epoch, history["train_loss"][-1])
                continue
            val = self.evaluate(val_loader)
            history["val_loss"].append(val["loss"])
            history["val_accuracy"].append(val["accuracy"])
            ns["report"](epoch, history["train_loss"][-1], val)
            if self.keep_best(epoch, val["loss"]):
                break
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        return history
    return fit


def test_an_epoch_loss_of_the_last_50_batches_is_named_as_the_running_loss(ns, check, patched):
    patched("Trainer", "fit", fit_averaging(ns))
    assert check.fit().passed and check.fit(epochs=3, validate=False, seed=2).passed
    patched("Trainer", "fit", fit_averaging(ns, last=50))
    for verdict in (check.fit(), check.fit(epochs=3, validate=False, seed=2)):
        assert not verdict.passed and "last 50 batch losses (chapter 7's running loss)" in verdict.message, verdict.message
    patched("Trainer", "fit", fit_averaging(ns, last=1))
    verdict = check.fit()
    assert not verdict.passed and "running loss" not in verdict.message, verdict.message


def test_expected_keep_best_sequence():
    flags, best = fitting.expected_keep_best((0.9, 0.7, 0.8, 0.75, 0.6), patience=2)
    assert flags == [False, False, False, True, False] and best == [1, 2, 2, 2, 5]
    assert fitting.expected_keep_best((0.5, 0.5, 0.5), patience=2)[0] == [False, False, True]
    losses = (0.9, 0.7, 0.8, 0.6, 0.75, 0.7)
    assert fitting.expected_keep_best(losses, 2)[0] == [False] * 5 + [True]
    assert fitting.expected_keep_best(losses, 2, "no_reset")[0] == [False] * 4 + [True, True]
    assert fitting.expected_keep_best((0.5, 0.5, 0.5), 2, "ties")[0] == [False, False, False]


def test_capstone_refuses_a_model_of_the_wrong_shape(ns, check):
    verdict = check.capstone("mlp", lambda: ns["Sequential"](ns["Linear"](784, 5, seed=0)))
    assert not verdict.passed and "expected (2, 10)" in verdict.message


def test_a_short_capstone_names_the_cause_its_accuracy_points_at():
    """Chance level names a gradient that does not flow; above it a cause is named only from the model's layers
    (two linear layers in a row); otherwise the hint states the rule, whatever the accuracy."""
    from autograder.student.checks.capstone import capstone_verdict

    chance, near, between = (capstone_verdict("mlp", a).message for a in (0.098, 0.93, 0.6))
    assert "what guessing scores" in chance and "too small" not in chance, chance
    for message in (near, between):
        assert "cannot say why" in message and "too small" not in message and "nonlinearity" not in message, message
    stacked = capstone_verdict("mlp", 0.904, names=["Linear", "Linear"]).message
    assert "layer 0 (Linear) feeds layer 1 (Linear) with no nonlinearity" in stacked, stacked
    relu = capstone_verdict("mlp", 0.904, names=["Linear", "ReLU", "Linear"]).message
    assert "nonlinearity" not in relu, relu
    assert "Training took 12 s" in capstone_verdict("mlp", 0.9, seconds=12.3).message
    assert capstone_verdict("mlp", 0.96).passed


def test_a_capstone_build_must_return_a_fresh_seeded_model_each_call(ns, check):
    """build() is called twice: one shared model, or layers without seeds, fail before any training."""
    Sequential, Linear, ReLU = ns["Sequential"], ns["Linear"], ns["ReLU"]
    shared = Sequential(Linear(784, 10, seed=0))
    verdict = check.capstone("mlp", lambda: shared)
    assert not verdict.passed and "the same model object" in verdict.message, verdict.message
    verdict = check.capstone("mlp", lambda: Sequential(Linear(784, 16), ReLU(), Linear(16, 10)))
    assert not verdict.passed and "different weights" in verdict.message and "seed" in verdict.message, verdict.message
    layer = Linear(784, 10, seed=0)
    verdict = check.capstone("mlp", lambda: Sequential(layer))
    assert not verdict.passed and "share 2 parameter(s)" in verdict.message, verdict.message


def test_probe_model_names_are_unique(ns):
    for variant in ("flat", "nested"):
        _, expected = persistence.probe_model(ns, variant=variant)
        names = [name for name, _ in expected]
        assert len(names) == len(set(names))


def test_the_judges_names_and_shapes_are_those_of_the_checks_models(ns):
    """The judge builds the same stand-ins in the kernel from TREE_NAMES and net_shapes: they must not drift."""
    for variant in ("flat", "nested"):
        _, expected = persistence.probe_model(ns, variant=variant)
        assert [name for name, _ in expected] == persistence.TREE_NAMES[variant]
    model = persistence.small_net(ns, seed=0)
    state = persistence.net_state(model)
    assert {name: persistence.values_of(h).shape for name, h in state} == persistence_facts.net_shapes((4, 6, 3))
    assert [(name, id(h)) for name, h in state] == [(name, id(h)) for name, h in model.named_state()]


@pytest.mark.parametrize("key", list(persistence.OPTIMIZERS))
def test_the_swapped_in_methods_answer_as_chapter_8s_solution_does(ns, key):
    """The course's state_dict and load_state_dict answer from tables (net_shapes, OPTIMIZER_NUMBERS and
    OPTIMIZER_ARRAYS), not by walking the objects as the exercises do: they must give the solution's dicts."""
    model = persistence.small_net(ns, seed=0)
    optimizer = persistence.OPTIMIZERS[key][1](ns, model.parameters())
    persistence.train(ns, model, optimizer, persistence.batches(ns, 2, seed=1))
    solution = (model.state_dict(), optimizer.state_dict())
    with persistence.course_methods(ns, ("Module", "state_dict"), ("Optimizer", "state_dict")):
        ours = (model.state_dict(), optimizer.state_dict())
    for want, got in zip(solution, ours):
        assert sorted(got) == sorted(want) and all(np.array_equal(got[k], want[k]) for k in want)
    fresh = persistence.OPTIMIZERS[key][1](ns, persistence.small_net(ns, seed=3).parameters())
    with persistence.course_methods(ns, ("Optimizer", "load_state_dict")):
        fresh.load_state_dict(solution[1])
    loaded = fresh.state_dict()
    assert sorted(loaded) == sorted(solution[1]) and all(np.array_equal(loaded[k], solution[1][k]) for k in loaded)
