"""Chapter 7's checks: right initializers pass on every seed, wrong gains, fans and distributions
fail with the rule in the message; the training-loop checks grade the loop alone."""
import numpy as np
import pytest

from autograder.student.checks import Checker

from helpers.solved_code import solved_namespace

INITIALIZERS = ["xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal"]


@pytest.fixture(scope="module")
def ns():
    return solved_namespace("ch07")


def with_names(ns, **replacements):
    return Checker(dict(ns, **replacements), verbose=False)


@pytest.mark.parametrize("name", INITIALIZERS)
def test_right_initializers_pass_on_every_seed_and_shape(ns, name):
    """Six standard errors of tolerance: 200 seeds and several shapes, no failure."""
    check = Checker(ns, verbose=False)
    setting = {"xavier": [[], [5 / 3], [0.5]], "kaiming": [[], ["tanh"], ["linear"]]}[name.split("_")[0]]
    for seed in range(200):
        fan_in, fan_out = [(400, 600), (300, 200), (1000, 50), (50, 1000)][seed % 4]
        verdict = check.initializer(name, fan_in, fan_out, setting=setting[seed % 3], seed=seed)
        assert verdict.passed, verdict.message


def make(Tensor, draw):
    def initializer(fan_in, fan_out, *setting, seed=None):
        return Tensor(draw(np.random.default_rng(seed), fan_in, fan_out, *setting))
    return initializer


@pytest.mark.parametrize("name, draw, message", [
    ("xavier_uniform", lambda r, i, o, g=1.0: r.uniform(-1, 1, (i, o)) * g * np.sqrt(6 / i), "times too large"),
    ("xavier_uniform", lambda r, i, o, g=1.0: r.normal(0, g * np.sqrt(2 / (i + o)), (i, o)), "uniform between -a and a"),
    ("xavier_normal", lambda r, i, o, g=1.0: r.normal(0, g * 2 / (i + o), (i, o)), "the expected variance squared"),
    ("xavier_normal", lambda r, i, o, g=1.0: r.uniform(-1, 1, (i, o)) * g * np.sqrt(6 / (i + o)), "beyond 2 standard deviations"),
    ("kaiming_uniform", lambda r, i, o, n="relu": r.uniform(-1, 1, (i, o)) * np.sqrt(3 / i), "times too small"),
    ("kaiming_uniform", lambda r, i, o, n="relu": r.uniform(-1, 1, (i, o)) * np.sqrt(6 / o), "gain² / fan_in"),
    ("kaiming_normal", lambda r, i, o, n="relu": r.normal(0, np.sqrt(2 / i), (o, i)), "expected (400, 600)"),
    ("kaiming_normal", lambda r, i, o, n="relu": np.abs(r.normal(0, np.sqrt(2 / i), (i, o))), "mean"),
])
def test_wrong_initializers_fail_with_the_rule(ns, name, draw, message):
    verdict = with_names(ns, **{name: make(ns["Tensor"], draw)}).initializer(name)
    assert not verdict.passed and message in verdict.message, verdict.message


def test_the_std_is_named_only_when_the_variance_was_given_as_the_std(ns):
    """A normal draw of the wrong variance hears of NumPy's scale only when its variance is the expected one squared."""
    draw = make(ns["Tensor"], lambda r, i, o, g=1.0: r.normal(0, g * np.sqrt(1 / i), (i, o)))     # fan_in only
    verdict = with_names(ns, xavier_normal=draw).initializer("xavier_normal")
    assert not verdict.passed and "times too" in verdict.message, verdict.message
    assert "squared" not in verdict.message and "standard deviation as its scale" not in verdict.message


def test_an_unseeded_initializer_is_told_to_use_the_seed(ns):
    def kaiming_normal(fan_in, fan_out, nonlinearity="relu", *, seed=None):
        return ns["Tensor"](np.random.normal(0, np.sqrt(2 / fan_in), (fan_in, fan_out)))
    verdict = with_names(ns, kaiming_normal=kaiming_normal).initializer("kaiming_normal")
    assert not verdict.passed and "a generator made from the seed" in verdict.message, verdict.message
    assert "default_rng(seed)" not in verdict.message


def test_the_gain_matters_only_in_the_hidden_settings(ns):
    """A Kaiming that always uses the ReLU gain passes the visible check and fails the tanh one."""
    def kaiming_uniform(fan_in, fan_out, nonlinearity="relu", *, seed=None):
        a = np.sqrt(6 / fan_in)
        return ns["Tensor"](np.random.default_rng(seed).uniform(-a, a, (fan_in, fan_out)))
    check = with_names(ns, kaiming_uniform=kaiming_uniform)
    assert check.initializer("kaiming_uniform").passed
    assert not check.initializer("kaiming_uniform", 300, 200, setting=["tanh"], seed=3).passed


needs_nn = pytest.mark.skipif("not solved_namespace('ch07').get('Module')",
                              reason="chapter 4 (Module) is not in this branch yet")


@needs_nn
def test_training_checks_pass_on_the_solution(ns):
    check = Checker(ns, verbose=False)
    assert check.train_epoch().passed and check.accuracy().passed


@needs_nn
def test_train_epoch_in_eval_mode_is_caught(ns):
    namespace = dict(ns)
    exec("def train_epoch(model, loader, loss_fn, optimizer, progress=None):\n"      # as a notebook defines it
         "    return [train_step(model, loss_fn, optimizer, x, y) for x, y in loader]\n", namespace)
    verdict = Checker(namespace, verbose=False).train_epoch()
    assert not verdict.passed and "puts the model in training mode at its start" in verdict.message, verdict.message
    assert "model.train()" not in verdict.message


@needs_nn
def test_train_epoch_check_restores_train_step(ns):
    namespace = dict(ns)
    Checker(namespace, verbose=False).train_epoch()
    assert namespace["train_step"] is ns["train_step"]


@needs_nn
def test_batch_averaged_accuracy_is_explained(ns):
    def accuracy(model, loader):
        model.eval()
        return float(np.mean([(model(x).numpy().argmax(1) == y.numpy()).mean() for x, y in loader]))
    verdict = with_names(ns, accuracy=accuracy).accuracy()
    assert not verdict.passed and "average of the per-batch accuracies" in verdict.message


@needs_nn
def test_an_untrained_model_fails_the_mnist_check(ns):
    model = ns["Sequential"](ns["Linear"](784, 10, seed=0))
    rng = np.random.default_rng(0)
    Tensor = ns["Tensor"]
    loader = [(Tensor(rng.standard_normal((100, 784)), requires_grad=False),
               Tensor(rng.integers(0, 10, 100), dtype=np.int64, requires_grad=False))]
    verdict = Checker(ns, verbose=False).trained_model(model, loader, minimum=0.9)
    assert not verdict.passed and "learned nothing scores about 10%" in verdict.message
    assert not Checker(ns, verbose=False).trained_model(None, loader, minimum=0.9).passed


def test_long_epochs_tell_the_running_window_from_every_other():
    """The kernel's long epoch and 200 of the judge's secret ones (55 to 79 batches, after a short epoch that
    passed): the mean of the last 50 losses differs from the mean of the last w for every other w, all of them
    among those, so a bar averaging another window shows."""
    from autograder.grading.judge import ch07_init as judged
    from autograder.grading.judge.probes import pack
    from autograder.student.checks import ch07_init_training as training
    assert training.windows_telling(training.LONG_EPOCH_LOSSES) and len(training.LONG_EPOCH_LOSSES) > training.RUNNING
    for secret in range(200):
        run = judged.train_epoch(np.random.default_rng(secret))
        short = next(run)
        losses = short["losses"]
        long = run.send({"calls": [3, 3], "right_arguments": True, "training": True, "updates": 3,
                         "result": pack(np.array(losses)), "shown": float(np.mean(losses))})
        assert training.RUNNING < len(long["losses"]) == len(long["images"]) < 80
        assert training.windows_telling(long["losses"]), secret


def test_train_epoch_running_loss_over_all_batches_is_caught(ns):
    """The bar showing the mean of every loss so far passes a 3-batch epoch; the 63-batch one tells, with a hint."""
    namespace = dict(ns)
    exec("def train_epoch(model, loader, loss_fn, optimizer, progress=None):\n"
         "    model.train()\n    losses = []\n"
         "    for images, labels in loader:\n"
         "        losses.append(train_step(model, loss_fn, optimizer, images, labels))\n"
         "        if progress is not None:\n"
         "            progress.set_postfix(loss=sum(losses) / len(losses))\n"
         "            progress.update(1)\n"
         "    return losses\n", namespace)
    verdict = Checker(namespace, verbose=False).train_epoch()
    assert not verdict.passed
    assert "loader of 63 batches" in verdict.message and "(batches 14 to 63)" in verdict.message
    assert "that is the mean of all 63 batch losses so far" in verdict.message
