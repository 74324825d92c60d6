"""Chapter 4's checks: right layers pass on every seed, wrong ones fail with a message that teaches."""
import numpy as np
import pytest

from autograder.student.checks import Checker

from helpers.soak import catalogue_edits
from helpers.solved_code import assert_fails, notebook_namespace, solved_namespace


@pytest.fixture(scope="module")
def ns():
    return solved_namespace("ch04")


@pytest.fixture
def check(ns):
    return Checker(ns, verbose=False)


@pytest.mark.parametrize("seed", range(12))
def test_correct_layers_never_fail(check, seed):
    verdicts = [
        check.linear(3, 4, batch=5, seed=seed), check.linear(2, 3, batch=1, bias=False, seed=seed),
        *(check.activation(name, (3, 4), seed=seed) for name in ("ReLU", "Sigmoid", "Tanh", "Identity")),
        check.sequential(seed=seed), check.flatten((2, 3, 2), seed=seed),
        check.dropout(p=0.25, seed=seed), check.dropout(p=0.8, seed=seed), check.dropout_eval(seed=seed),
        check.batchnorm(6, 3, seed=seed), check.batchnorm(2, 1, seed=seed), check.batchnorm_running(5, 2, seed=seed),
        check.layernorm(4, 5, seed=seed), check.layernorm(1, 2, seed=seed), check.layernorm(3, 4, seed=seed, scale=0.003),
        check.mse_loss((4, 2), seed=seed),
        check.softmax_loss(5, 4, seed=seed), check.softmax_loss(3, 2, offset=1000.0, labels_as="tensor", seed=seed),
        check.softmax_loss(4, 3, offset=-1000.0, seed=seed),
        check.logsumexp_forward((1,), (3, 4), "large", seed=seed), check.logsumexp_forward(None, (2, 3), seed=seed),
    ]
    for verdict in verdicts:
        assert verdict.passed, verdict.message


@pytest.mark.parametrize("seed", range(12))
def test_correct_logsumexp_backward_never_fails(ns, check, seed):
    LogSumExp = ns["LogSumExp"]
    for axes, shape, domain in [((1,), (3, 4), "real"), ((1,), (3, 4), "large"), (None, (2, 3), "real"),
                                (0, (4, 2), "very_negative"), ((0, 2), (2, 3, 4), "large"), (-1, (2, 5), "real")]:
        verdict = check.backward(LogSumExp(axes), [shape], domain, seed=seed)
        assert verdict.passed, verdict.message


def test_module_checks_pass_on_the_solution(check):
    for name in ("parameters", "children", "train_eval", "zero_grad", "call"):
        verdict = check.module(name)
        assert verdict.passed, verdict.message
    assert check.linear_init(3, 4).passed


def test_parameters_without_recursion_is_caught(ns, check, monkeypatch):
    Module, Parameter, members = ns["Module"], ns["Parameter"], ns["members"]
    monkeypatch.setattr(Module, "parameters",
                        lambda self: [p for p in members(vars(self)) if isinstance(p, Parameter)])
    assert_fails(check.module("parameters"), "of the 11 parameters; missing", "sub-modules (recursively)")
    assert check.module("zero_grad").passed, "zero_grad's check must not depend on the student's parameters()"


def test_a_parameters_that_reads_only_one_level_down_misses_the_grandchild(ns, check, monkeypatch):
    Module, Parameter, members = ns["Module"], ns["Parameter"], ns["members"]

    def one_level(self):
        found = []
        for item in members(vars(self)):
            found.extend([item] if isinstance(item, Parameter) else
                         [q for q in members(vars(item)) if isinstance(q, Parameter)])
        return list({id(p): p for p in found}.values())
    monkeypatch.setattr(Module, "parameters", one_level)
    assert_fails(check.module("parameters"), "missing [block.leaf.w", "a module inside a sub-module holds it")


@pytest.mark.parametrize("method, flag", [("eval", False), ("train", True)])
def test_train_and_eval_that_set_the_childrens_flags_miss_the_grandchild(ns, check, monkeypatch, method, flag):
    def one_level(self):
        self.training = flag
        for child in self.children():
            child.training = flag
        return self
    monkeypatch.setattr(ns["Module"], method, one_level)
    assert_fails(check.module("train_eval"), f"after tree.{method}()", "block.leaf sits inside a child",
                 f"call the child's own {method}()")


def test_children_that_lists_grandchildren_is_caught(ns, check, monkeypatch):
    right = ns["Module"].children
    monkeypatch.setattr(ns["Module"], "children",
                        lambda self: right(self) + [g for c in right(self) for g in right(c)])
    assert_fails(check.module("children"), "the list holds block.leaf, a module inside `block`",
                 "children() stops at the first level")


def test_duplicate_parameters_are_caught(ns, check, monkeypatch):
    Module, Parameter, members = ns["Module"], ns["Parameter"], ns["members"]

    def with_duplicates(self):
        found = []
        for item in members(vars(self)):
            found.extend([item] if isinstance(item, Parameter) else item.parameters())
        return found
    monkeypatch.setattr(Module, "parameters", with_duplicates)
    assert_fails(check.module("parameters"), "appear twice", "tied")


def test_eval_that_does_not_recurse_is_caught(ns, check, monkeypatch):
    monkeypatch.setattr(ns["Module"], "eval", lambda self: setattr(self, "training", False))
    assert_fails(check.module("train_eval"), "after tree.eval()", "expected all False",
                 "asks every child to do the same")


def test_zero_grad_with_zeros_is_explained(ns, check, monkeypatch):
    def zeros(self):
        for p in self.parameters():
            p.grad = np.zeros(p.shape)
    monkeypatch.setattr(ns["Module"], "zero_grad", zeros)
    assert_fails(check.module("zero_grad"), "still have a .grad", "rather than filling it with zeros", "leaving None")


def test_parameters_that_collect_plain_tensors_are_told_the_class(ns, check, monkeypatch):
    Module, Tensor = ns["Module"], ns["Tensor"]

    def every_tensor(self):
        found = []

        def walk(value):
            if isinstance(value, Tensor):
                found.append(value)
            elif isinstance(value, Module):
                found.extend(value.parameters())
            elif isinstance(value, (list, tuple, dict)):
                for item in value.values() if isinstance(value, dict) else value:
                    walk(item)
        walk(list(vars(self).values()))
        return found
    monkeypatch.setattr(Module, "parameters", every_tensor)
    assert_fails(check.module("parameters"), "plain Tensor (a buffer)", "asks for the class Parameter itself")


def test_bias_without_broadcast_names_the_shapes(ns, check, monkeypatch):
    monkeypatch.setattr(ns["Linear"], "forward", lambda self, x: x @ self.weight + self.bias)
    assert_fails(check.linear(3, 4, batch=5), "bias.grad has shape (5, 4), expected (1, 4)", "broadcast_to")


def test_transposed_weight_layout_fails_without_crashing(ns, check, monkeypatch):
    Linear, Parameter = ns["Linear"], ns["Parameter"]
    original = Linear.__init__

    def torch_layout(self, in_features, out_features, bias=True, *, seed=None):
        original(self, in_features, out_features, bias, seed=seed)
        self.weight = Parameter(self.weight.data.T.copy())
    monkeypatch.setattr(Linear, "__init__", torch_layout)
    assert_fails(check.linear(3, 4), "weight has shape (4, 3), expected")
    assert_fails(check.linear_init(3, 4), ".weight has shape (4, 3), expected (3, 4)")


def test_weight_used_through_data_gets_no_gradient(ns, check, monkeypatch):
    Tensor = ns["Tensor"]
    monkeypatch.setattr(ns["Linear"], "forward",
                        lambda self, x: x @ Tensor(self.weight.data) + self.bias.broadcast_to((x.shape[0], 4)))
    assert_fails(check.linear(3, 4), "weight.grad is None", "through Tensor operations")


def test_sequential_in_reverse_is_caught(ns, check, monkeypatch):
    def backwards(self, x):
        for module in reversed(self.modules):
            x = module(x)
        return x
    monkeypatch.setattr(ns["Sequential"], "forward", backwards)
    assert_fails(check.sequential(), "(x * 2) + 3", "in the order they were given")


def test_dropout_mistakes_get_their_own_hints(ns, check, monkeypatch):
    Dropout, Tensor = ns["Dropout"], ns["Tensor"]

    def unscaled(self, x):
        return x * Tensor(self.rng.random(x.shape) >= self.p, dtype=x.dtype, requires_grad=False)
    monkeypatch.setattr(Dropout, "forward", unscaled)
    assert_fails(check.dropout(0.25), "must be x / (1 - p)", "inverted dropout")

    def keeps_with_p(self, x):
        keep = self.rng.random(x.shape) < self.p
        return x * Tensor(keep / (1 - self.p), dtype=x.dtype, requires_grad=False)
    monkeypatch.setattr(Dropout, "forward", keeps_with_p)
    assert_fails(check.dropout(0.25), "75.", "probability of DROPPING", "kept with probability 1 - p")


def test_dropout_with_one_fixed_mask_is_caught(ns, check, monkeypatch):
    Dropout, Tensor = ns["Dropout"], ns["Tensor"]

    def fixed(self, x):
        keep = np.random.default_rng(0).random(x.shape) >= self.p
        return x * Tensor(keep / (1 - self.p), dtype=x.dtype, requires_grad=False)
    monkeypatch.setattr(Dropout, "forward", fixed)
    assert_fails(check.dropout(0.25), "dropped exactly the same elements", "new mask at every forward call")


def test_batchnorm_with_unbiased_variance_is_caught(ns, check, monkeypatch):
    BatchNorm1d = ns["BatchNorm1d"]

    def unbiased(self, x):
        n, d = x.shape
        mean = (x.sum((0,)) / n).reshape((1, d)).broadcast_to((n, d))
        centred = x - mean
        var = ((centred * centred).sum((0,)) / (n - 1)).reshape((1, d)).broadcast_to((n, d))
        return centred / (var + self.eps) ** 0.5 * self.weight.broadcast_to((n, d)) + self.bias.broadcast_to((n, d))
    monkeypatch.setattr(BatchNorm1d, "forward", unbiased)
    assert_fails(check.batchnorm(6, 3), "BatchNorm1d(3) in training mode", "worst out[", "biased variance")


def test_layernorm_over_the_wrong_axis_fails_with_a_message(ns, check, monkeypatch):
    def batch_axis(self, x):
        n, d = x.shape
        mean = (x.sum((0,)) / n).reshape((1, d)).broadcast_to((n, d))
        centred = x - mean
        var = ((centred * centred).sum((0,)) / n).reshape((1, d)).broadcast_to((n, d))
        return centred / (var + self.eps) ** 0.5 * self.weight.broadcast_to((n, d)) + self.bias.broadcast_to((n, d))
    monkeypatch.setattr(ns["LayerNorm1d"], "forward", batch_axis)
    assert_fails(check.layernorm(4, 5), "LayerNorm1d(5)", "each sample (row)")


def test_mse_divided_by_the_batch_only_fails_on_wider_targets(ns, check, monkeypatch):
    def per_batch(self, pred, target):
        diff = pred - target
        return (diff * diff).sum() / diff.shape[0]
    monkeypatch.setattr(ns["MSELoss"], "forward", per_batch)
    assert check.mse_loss((5, 1)).passed                # the same number when there is one column...
    assert_fails(check.mse_loss((3, 4)), "ALL elements")  # ...and not otherwise


def test_layernorm_with_eps_outside_the_root_fails_on_rows_of_small_variance(ns, check, monkeypatch):
    def eps_outside(self, x):
        n, d = x.shape
        mean = (x.sum((1,)) / d).reshape((n, 1)).broadcast_to((n, d))
        centred = x - mean
        var = ((centred * centred).sum((1,)) / d).reshape((n, 1)).broadcast_to((n, d))
        return centred / (var ** 0.5 + self.eps) * self.weight.broadcast_to((n, d)) + self.bias.broadcast_to((n, d))
    monkeypatch.setattr(ns["LayerNorm1d"], "forward", eps_outside)
    assert check.layernorm(4, 5).passed                 # eps is too small to matter on a spread of about 1...
    assert_fails(check.layernorm(3, 4, seed=5, scale=0.003), "variance is near eps", "inside the square root")


def test_the_visible_mse_check_has_a_wide_target(ns, check, monkeypatch):
    def per_batch(self, pred, target):
        diff = pred - target
        return (diff * diff).sum() / diff.shape[0]
    monkeypatch.setattr(ns["MSELoss"], "forward", per_batch)
    assert_fails(check.mse_loss((5, 3), seed=3), "ALL elements")


def test_a_missing_running_statistic_is_called_missing(ns, check, monkeypatch):
    original = ns["BatchNorm1d"].__init__

    def misnamed(self, dim, eps=1e-5, momentum=0.1):
        original(self, dim, eps, momentum)
        self.mean_running = self.__dict__.pop("running_mean")
    monkeypatch.setattr(ns["BatchNorm1d"], "__init__", misnamed)
    verdict = check.batchnorm_running(6, 3)
    assert_fails(verdict, "has no attribute .running_mean", "__init__ must create it")
    assert "NoneType" not in verdict.message


def test_an_exercise_not_started_is_named_for_people(ns, check, monkeypatch):
    def not_yet(self, *args, **kwargs):
        raise NotImplementedError()
    monkeypatch.setattr(ns["Dropout"], "__init__", not_yet)
    assert_fails(check.dropout(p=0.25), "Dropout.__init__ is not implemented yet (checked on Dropout(p=0.25, seed=0) "
                                        "in training mode)")


def test_naive_logsumexp_fails_forward_and_backward_near_1000(ns, check, monkeypatch):
    naive = type("LogSumExp", (ns["LogSumExp"],), {"forward": lambda self, a: np.log(np.exp(a).sum(axis=self.axes))})
    assert naive((1,)).forward(np.zeros((2, 3))).shape == (2,)
    assert_fails(check.forward(naive((1,)), lambda a: a.max(1), [(3, 4)], "large"), "values are wrong")
    assert_fails(check.backward(naive((1,)), [(3, 4)], "large"), "inf or nan", "fix forward first")
    monkeypatch.setitem(ns, "LogSumExp", naive)
    assert_fails(check.logsumexp_forward((1,), (3, 4), "large"), "expected 100")


def test_naive_softmax_in_backward_is_caught(ns, check):
    LogSumExp, Tensor = ns["LogSumExp"], ns["Tensor"]

    def backward(self, out_grad, node):
        a = node._inputs[0].data
        soft = np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)
        return out_grad.reshape((a.shape[0], 1)).broadcast_to(a.shape) * Tensor(soft, dtype=a.dtype)
    naive = type("NaiveLSE", (LogSumExp,), {"backward": backward})
    assert check.backward(naive((1,)), [(3, 4)]).passed               # right for small logits
    assert_fails(check.backward(naive((1,)), [(3, 4)], "large"), "softmax(a) = exp(a - logsumexp(a))")


def test_softmax_loss_is_checked_with_a_standin_logsumexp(ns, check, monkeypatch):
    """A broken LogSumExp must not cost SoftmaxLoss its points, and the real one comes back."""
    broken = type("LogSumExp", (ns["Function"],), {"__init__": lambda self, axes=None: None,
                                                   "forward": lambda self, a: a.sum(axis=1)})
    monkeypatch.setitem(ns, "LogSumExp", broken)
    assert check.softmax_loss(5, 4).passed
    assert ns["LogSumExp"] is broken


def test_naive_softmax_loss_fails_only_near_1000(ns, check, monkeypatch):
    log, exp, one_hot = ns["log"], ns["exp"], ns["one_hot"]

    def naive(self, logits, labels):
        n, k = logits.shape
        picked = (logits * one_hot(labels, k)).sum((1,))
        return (log(exp(logits).sum((1,))) - picked).sum() / n
    monkeypatch.setattr(ns["SoftmaxLoss"], "forward", naive)
    assert check.softmax_loss(5, 4).passed
    assert_fails(check.softmax_loss(5, 4, offset=1000.0), "around 1000", "only inside the stable LogSumExp")


def test_failures_never_raise_and_never_write_to_stderr(ns, check, monkeypatch, capfd):
    def explode(self, *args):
        return np.exp(np.float64(1e5)) * undefined_name  # noqa: F821
    for name in ("Linear", "Dropout", "BatchNorm1d", "LayerNorm1d", "MSELoss", "SoftmaxLoss", "Sequential", "Flatten",
                 "BCEWithLogitsLoss", "Embedding"):
        monkeypatch.setattr(ns[name], "forward", explode)
    verdicts = [check.linear(), check.dropout(), check.dropout_eval(), check.batchnorm(), check.batchnorm_running(),
                check.layernorm(), check.mse_loss(), check.softmax_loss(), check.sequential(), check.flatten(),
                check.bce_loss(), check.embedding()]
    assert all(not v.passed and "NameError" in v.message for v in verdicts), [v.message for v in verdicts]
    monkeypatch.setattr(ns["Linear"], "forward", lambda self, x: None)
    assert_fails(check.linear(), "returned a NoneType, expected a Tensor")
    assert capfd.readouterr().err == ""


# ── Softmax, BCEWithLogitsLoss, Embedding ──

@pytest.mark.parametrize("seed", range(12))
def test_correct_softmax_bce_and_embedding_never_fail(ns, check, seed):
    Softmax, EmbeddingLookup = ns["Softmax"], ns["EmbeddingLookup"]
    verdicts = [
        check.softmax_forward(-1, (3, 4), "large", seed=seed), check.softmax_forward(0, (4, 3), "rows_apart", seed=seed),
        check.backward(Softmax(), [(3, 4)], seed=seed), check.backward(Softmax(0), [(4, 3)], "very_negative", seed=seed),
        check.backward(Softmax(1), [(2, 3, 4)], "large", seed=seed),
        check.bce_loss((6,), seed=seed), check.bce_loss((16,), extreme=True, seed=seed),
        check.bce_loss((4, 3), extreme=True, targets_as="tensor", seed=seed),
        check.embedding(5, 3, (2, 4), seed=seed), check.embedding(3, 1, (), seed=seed),
        check.backward(EmbeddingLookup([[0, 2, 0], [4, 2, 2]]), [(5, 3)], seed=seed),
    ]
    for verdict in verdicts:
        assert verdict.passed, verdict.message


def test_softmax_backward_slips_are_named(ns, check):
    Softmax, Tensor = ns["Softmax"], ns["Tensor"]

    def with_grad(rule):
        def backward(self, out_grad, node):
            return Tensor(rule(node.data, out_grad.data), dtype=np.float64)
        return type("Softmax", (Softmax,), {"backward": backward})()
    assert_fails(check.backward(with_grad(lambda s, g: s * g), [(3, 4)]), "the diagonal term only")
    assert_fails(check.backward(with_grad(lambda s, g: g * s * (1 - s)), [(3, 4)]), "with respect to its own input only")
    assert_fails(check.backward(with_grad(lambda s, g: s * (g - (g * s).sum())), [(3, 4)]), "runs over every axis")
    assert_fails(check.backward(with_grad(lambda s, g: s * (1 - s.sum(axis=-1, keepdims=True))), [(3, 4)]),
                 "a random out_grad", "does your backward multiply by out_grad?")


def test_naive_bce_fails_on_large_logits_and_names_the_rule(ns, check, monkeypatch, capfd):
    sigmoid, log = ns["sigmoid"], ns["log"]

    def naive(self, logits, targets):
        targets = ns["Tensor"](targets, requires_grad=False)
        p = sigmoid(logits)
        return (-(targets * log(p) + (1 - targets) * log(1 - p))).sum() / logits.size
    monkeypatch.setattr(ns["BCEWithLogitsLoss"], "forward", naive)
    assert check.bce_loss((6,)).passed                                 # right for small logits
    assert_fails(check.bce_loss((8,), extreme=True, seed=1), "including ±50 and ±1000", "yours nan",
                 "never take sigmoid(z) and then its log")
    assert capfd.readouterr().err == ""


def test_bce_extreme_inputs_hold_every_side_of_the_answer():
    from autograder.student.checks.ch04_nn import BCE_EXTREMES, bce_inputs
    logits, targets = bce_inputs((8,), True, np.random.default_rng(0))
    pairs = {(float(np.round(z, -1) if abs(z) > 40 else 0), float(t)) for z, t in zip(logits, targets)}
    assert pairs == {(float(np.round(o, -1)), t) for o in BCE_EXTREMES for t in (0.0, 1.0)}


def test_embedding_assignment_at_repeats_is_named(ns, check, monkeypatch):
    Tensor = ns["Tensor"]

    def assigned(self, out_grad, node):
        grad = np.zeros(node._inputs[0].shape)
        grad[self.indices] += out_grad.data
        return Tensor(grad, dtype=np.float64)
    monkeypatch.setattr(ns["EmbeddingLookup"], "backward", assigned)
    assert check.backward(ns["EmbeddingLookup"]([0, 1, 2]), [(4, 2)]).passed     # no repeat, no difference
    assert_fails(check.backward(ns["EmbeddingLookup"]([[0, 2, 0], [4, 2, 2]]), [(5, 3)]), "writes a repeated row again")
    assert_fails(check.embedding(5, 3, (2, 4)), "the gradient of weight is wrong", "sum of out_grad")


def test_embedding_through_data_gets_no_gradient(ns, check, monkeypatch):
    Tensor = ns["Tensor"]
    monkeypatch.setattr(ns["Embedding"], "forward", lambda self, indices: Tensor(self.weight.data[indices]))
    assert_fails(check.embedding(5, 3, (2, 4)), "weight.grad is None")


def test_running_statistics_that_are_not_numbers_are_explained(ns, check, monkeypatch):
    right = ns["BatchNorm1d"].forward

    def tensors_in_the_buffer(self, x):
        out = right(self, x)
        if self.training:       # the batch mean kept as Tensors: NumPy makes an array of objects
            self.running_mean = np.array([ns["Tensor"](v) for v in self.running_mean], dtype=object)
        return out
    monkeypatch.setattr(ns["BatchNorm1d"], "forward", tensors_in_the_buffer)
    verdict = check.batchnorm_running(batch=6, dim=3)
    assert not verdict.passed and "running_mean is a numpy.ndarray" in verdict.message, verdict.message
    assert "plain NumPy arrays of numbers" in verdict.message, verdict.message


def test_exponentials_that_overflow_or_vanish_get_the_shift_hint(ns, check):
    from autograder.student.checks import formulas

    class Unshifted(ns["LogSumExp"]):
        def forward(self, a):
            return np.log(np.sum(np.exp(a), axis=self.axes))

    class OneMaxForAll(ns["Softmax"]):
        def forward(self, a):
            e = np.exp(a - a.max())
            return e / e.sum(axis=self.axis, keepdims=True)

    for op, expected, domain in [(Unshifted((1,)), lambda a: formulas.logsumexp(a, (1,)), "large"),
                                 (OneMaxForAll(1), lambda a: formulas.softmax(a, 1), "rows_apart")]:
        verdict = check.forward(op, expected, shapes=[(4, 3)], domains=domain)
        assert not verdict.passed and "Subtract the maximum" in verdict.message, verdict.message
    verdict = check.forward(OneMaxForAll(1), lambda a: formulas.softmax(a, 1), shapes=[(4, 3)], domains="real")
    assert verdict.passed, "one maximum for all rows is right where nothing underflows"


def test_a_module_that_calls_itself_gets_the_recursion_hint(ns, check, monkeypatch):
    monkeypatch.setattr(ns["ReLU"], "forward", lambda self, x: ns["ReLU"]()(x))
    verdict = check.activation("ReLU")
    assert not verdict.passed and "RecursionError" in verdict.message and "forward called itself" in verdict.message, \
        verdict.message
    assert "forward called itself" not in check.activation("Sigmoid").message


def test_an_evaluation_that_forgets_eps_is_caught(ns, check, monkeypatch):
    """The running scenario's layer has eps=0.1, so a missing eps in evaluation mode shows (by 5%, not 5·10⁻⁶)."""
    right, Tensor = ns["BatchNorm1d"].forward, ns["Tensor"]

    def eval_without_eps(self, x):
        if self.training:
            return right(self, x)
        n, d = x.shape
        normalized = (x.data - self.running_mean) / np.sqrt(self.running_var)
        return Tensor(normalized, requires_grad=False) * self.weight.broadcast_to((n, d)) + self.bias.broadcast_to((n, d))
    monkeypatch.setattr(ns["BatchNorm1d"], "forward", eval_without_eps)
    assert_fails(check.batchnorm_running(6, 3), "eps=0.1", "in evaluation mode", "eps added to the running variance")


@pytest.mark.parametrize("in_features", [2, 3, 10])
def test_a_linear_bound_without_the_square_root_is_caught_by_a_wide_layer(ns, check, monkeypatch, in_features):
    """A few weights drawn within ±1/in_features can pass for ±1/sqrt(in_features); 500 · in_features cannot."""
    Linear, Parameter = ns["Linear"], ns["Parameter"]

    def narrow(self, in_features, out_features, bias=True, *, seed=None):
        self.in_features, self.out_features = in_features, out_features
        rng = np.random.default_rng(seed)
        bound = 1 / in_features
        self.weight = Parameter(rng.uniform(-bound, bound, (in_features, out_features)))
        self.bias = Parameter(rng.uniform(-bound, bound, (1, out_features))) if bias else None
    monkeypatch.setattr(Linear, "__init__", narrow)
    assert_fails(check.linear_init(in_features, 4), f"Linear({in_features}, 500, seed=0)", "of the bound",
                 f"±1/in_features = ±{1 / in_features:.4g}", "square root of in_features")


def test_a_wide_layer_of_right_weights_never_fails_and_names_no_cause():
    from autograder.student.checks import ch04_nn as nn
    for seed in range(20):
        for in_features in (1, 3, 10):
            w = np.random.default_rng(seed).uniform(-1, 1, (in_features, nn.SPREAD_WIDTH)) / np.sqrt(in_features)
            assert nn.linear_spread_problem(in_features, seed, w.astype(np.float32)) is None
    narrow = nn.linear_spread_problem(4, 0, np.random.default_rng(0).uniform(-0.35, 0.35, (4, 500)))
    assert not narrow.passed and "of the bound" in narrow.message
    assert "1/in_features" not in narrow.message          # ±0.35 is too narrow, but not ±1/4: no cause named


def test_an_embedding_drawn_from_another_law_is_caught(ns, check, monkeypatch):
    """A table of 15 weights cannot tell uniform(-1, 1) from a standard normal; the wide one of 20,000 can."""
    Embedding, Parameter = ns["Embedding"], ns["Parameter"]

    def uniform(self, num_embeddings, dim, *, seed=None):
        self.num_embeddings, self.dim = num_embeddings, dim
        self.weight = Parameter(np.random.default_rng(seed).uniform(-1, 1, (num_embeddings, dim)))
    monkeypatch.setattr(Embedding, "__init__", uniform)
    assert_fails(check.embedding(5, 3, (2, 4)), "Embedding(400, 50, seed=0)", "variance 0.33", "0.00% of them beyond",
                 "standard normal, mean 0 and standard deviation 1")


def test_a_standard_normal_table_never_fails_the_spread():
    from autograder.student.checks import ch04_nn as nn
    for seed in range(50):
        w = np.random.default_rng(seed).standard_normal(nn.EMBEDDING_SPREAD).astype(np.float32)
        assert nn.embedding_spread_problem(seed, w) is None


@pytest.mark.parametrize("in_features", [1, 3, 10])
def test_a_bias_from_a_second_generator_of_the_seed_is_caught(ns, check, monkeypatch, in_features):
    """A second default_rng(seed) starts the same draws again: the bias repeats the weight's first row."""
    Linear, Parameter = ns["Linear"], ns["Parameter"]

    def two_generators(self, in_features, out_features, bias=True, *, seed=None):
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / np.sqrt(in_features)
        self.weight = Parameter(np.random.default_rng(seed).uniform(-bound, bound, (in_features, out_features)))
        self.bias = Parameter(np.random.default_rng(seed).uniform(-bound, bound, (1, out_features))) if bias else None
    monkeypatch.setattr(Linear, "__init__", two_generators)
    assert_fails(check.linear_init(in_features, 4), "repeats the weight's first row value for value",
                 "two generators made with the same seed", "then the bias")


def test_wide_rows_overflow_a_shift_by_the_mean_or_the_minimum(ns, check):
    """Along the last axis two values near 800 and the rest near -800: only each row's maximum keeps exp finite."""
    from autograder.student import gradcheck
    from autograder.student.checks import formulas
    for seed in range(20):
        for shape in ((4,), (3, 5), (2, 3, 6)):
            x = gradcheck.sample(shape, "wide_rows", np.random.default_rng(seed))
            assert np.all((x > 797).sum(axis=-1) == 2) and np.all((x < -797).sum(axis=-1) == shape[-1] - 2)
            for shift in (x.min(axis=-1, keepdims=True), x.mean(axis=-1, keepdims=True)):
                assert np.max(x - shift) > 710

    class MeanShift(ns["Softmax"]):
        def forward(self, a):
            e = np.exp(a - a.mean(axis=self.axis, keepdims=True))
            return e / e.sum(axis=self.axis, keepdims=True)

    class MinShift(ns["LogSumExp"]):
        def forward(self, a):
            shift = a.min(axis=self.axes, keepdims=True)
            return np.squeeze(np.log(np.exp(a - shift).sum(axis=self.axes, keepdims=True)) + shift, axis=self.axes)

    with np.errstate(all="ignore"):
        for op, expected in [(MeanShift(-1), lambda a: formulas.softmax(a, -1)),
                             (MinShift(-1), lambda a: formulas.logsumexp(a, -1))]:
            assert_fails(check.forward(op, expected, shapes=[(3, 5)], domains="wide_rows"), "Subtract the maximum")
            assert check.forward(op, expected, shapes=[(3, 5)], domains="large").passed   # a narrow row hides it
    assert check.softmax_forward(-1, shape=(3, 5), domain="wide_rows").passed
    assert check.backward(ns["Softmax"](), shapes=[(3, 5)], domains="wide_rows").passed
    assert check.logsumexp_forward(-1, shape=(2, 4), domain="wide_rows").passed
    assert check.backward(ns["LogSumExp"](-1), shapes=[(2, 4)], domains="wide_rows").passed


def test_running_statistics_in_the_graph_are_caught(ns, check, monkeypatch):
    """momentum * mean + (1 - momentum) * running, with the batch's mean Tensor: the running mean becomes a Tensor
    that requires a gradient, chained to every earlier batch's graph."""
    Tensor, right = ns["Tensor"], ns["BatchNorm1d"].forward

    def from_tensors(self, x):
        n, d = x.shape
        out = right(self, x)
        if self.training:
            mean = x.sum((0,)) / n
            self.running_mean = mean * 0.0 + Tensor(self.running_mean, requires_grad=False)   # right values
        return out
    monkeypatch.setattr(ns["BatchNorm1d"], "forward", from_tensors)
    assert_fails(check.batchnorm_running(batch=6, dim=3), "running_mean is a Tensor that requires a gradient",
                 "not from Tensors")


FUSED_DOMAINS = ("real", "large", "very_negative", "rows_apart", "wide_rows")


@pytest.mark.parametrize("seed", range(12))
def test_correct_fused_ops_never_fail(ns, check, seed):
    """Section 4.10's Affine and SoftmaxCrossEntropy, solved, pass every check on every seed."""
    Affine = ns["Affine"]
    verdicts = [check.forward(Affine(), lambda x, w, b: x @ w + b, [(4, 3), (3, 2), (1, 2)], seed=seed),
                check.backward(Affine(), [(4, 3), (3, 2), (1, 2)], seed=seed),
                check.backward(Affine(), [(1, 5), (5, 1), (1, 1)], seed=seed),
                check.backward(Affine(), [(5, 3), (3, 4), (1, 4)], constant=[0], seed=seed),
                *(check.cross_entropy_forward(batch=6, classes=5, domain=domain, seed=seed) for domain in FUSED_DOMAINS),
                *(check.cross_entropy_backward(batch=6, classes=5, domain=domain, seed=seed) for domain in FUSED_DOMAINS)]
    for verdict in verdicts:
        assert verdict.passed, verdict.message


# Catalogued mistakes of section 4.10 whose gradients a known slip computes: the hint names the slip.
FUSED_SLIPS = [("affine_bias_grad_mean", "is the mean of out_grad's rows"),
               ("affine_bias_grad_not_summed", "is out_grad itself, one row per sample"),
               ("affine_bias_grad_no_keepdims", "with the leading axis dropped"),
               ("affine_weight_grad_transposed", "your weight gradient is Gᵀ X"),
               ("cross_entropy_backward_no_mean", "N times the finite differences"),
               ("cross_entropy_backward_forgets_label", "the softmax alone")]


@pytest.mark.parametrize("mistake, words", FUSED_SLIPS)
def test_a_fused_ops_known_slip_is_named(mistake, words):
    namespace = notebook_namespace("ch04", catalogue_edits("ch04", mistake), training=False)
    check = Checker(namespace, verbose=False)
    verdict = check.backward(namespace["Affine"](), [(4, 3), (3, 2), (1, 2)]) if mistake.startswith("affine") \
        else check.cross_entropy_backward(batch=5, classes=4)
    assert_fails(verdict, words)


def test_a_numpy_target_wrapped_so_it_requires_a_gradient_fails_the_loss_checks(ns, check, monkeypatch):
    """A target given as an array is data: wrapped with the default requires_grad, it is a leaf of the loss's graph
    that gets a gradient. The value and pred's gradient are right, so only the count of such leaves shows it."""
    Tensor = ns["Tensor"]

    def wrapped(self, pred, target):
        target = target if isinstance(target, Tensor) else Tensor(target)
        diff = pred - target
        return (diff * diff).sum() / diff.size
    monkeypatch.setattr(ns["MSELoss"], "forward", wrapped)
    assert check.mse_loss((5, 3), seed=3).passed                  # a Tensor target: nothing to wrap
    assert_fails(check.mse_loss((4, 2), seed=5, target_as="array"), "became a Tensor that requires one",
                 "requires_grad=False")
    monkeypatch.undo()
    assert check.mse_loss((4, 2), seed=5, target_as="array").passed
    assert check.bce_loss((6,)).passed


def test_an_eval_that_flips_the_flag_fails_when_called_twice(ns, check, monkeypatch):
    """A switch entered when it is already off: eval() on a module already in evaluation leaves it there."""
    def flips(self):
        self.training = not self.training
        for child in self.children():
            child.eval()
        return self
    monkeypatch.setattr(ns["Module"], "eval", flips)
    assert_fails(check.module("train_eval"), "after tree.eval() twice in a row", "not a switch that flips")
    monkeypatch.undo()
    assert check.module("train_eval").passed


@pytest.mark.parametrize("layout", ["fortran", "reversed"])
def test_an_affine_that_assumes_c_order_fails_on_views_in_other_orders(ns, check, monkeypatch, layout):
    """Affine's inputs may be views in any memory order: a backward that builds Xᵀ from C-order strides is right on
    C-ordered inputs only, and the solution is right on all."""
    Affine, Tensor = ns["Affine"], ns["Tensor"]
    shapes = [(5, 3), (3, 4), (1, 4)]
    assert check.backward(Affine(), shapes=shapes, layout=layout).passed

    def c_strided(self, out_grad, node):
        x, weight, _ = node._inputs
        g = out_grad.data
        xt = np.lib.stride_tricks.as_strided(x.data, x.shape[::-1], (x.data.itemsize, x.data.itemsize * x.shape[1]))
        grads = (g @ weight.data.T, xt @ g, g.sum(axis=0, keepdims=True))
        return tuple(Tensor(grad, dtype=t.dtype, requires_grad=False) for grad, t in zip(grads, node._inputs))
    monkeypatch.setattr(Affine, "backward", c_strided)
    assert check.backward(Affine(), shapes=shapes).passed
    verdict = check.backward(Affine(), shapes=shapes, layout=layout)
    assert not verdict.passed and "the gradient for b is wrong" in verdict.message, verdict.message
    assert "never on how memory holds them" in verdict.message
