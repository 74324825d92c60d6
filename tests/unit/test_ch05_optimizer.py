"""Chapter 5's checks: right optimizers pass on every seed and setting, wrong ones fail and say why."""
import numpy as np
import pytest

from autograder.student.checks import Checker, ch05_optimizer as optim

from helpers.solved_code import assert_fails, solved_namespace


@pytest.fixture(scope="module")
def ns():
    return solved_namespace("ch05")


@pytest.fixture
def check(ns):
    return Checker(ns, verbose=False)


def test_adam_rule_takes_a_first_step_of_lr():
    """The bias-corrected first step is lr * g / (|g| + eps): lr in size, against the gradient."""
    update = optim.adam_rule(lr=0.01)
    assert np.isclose(update(np.array(1.0), np.array(0.2), {}, 1), 1.0 - 0.01)
    assert np.isclose(optim.sgd_rule(0.1, momentum=0.9)(np.array(0.0), np.array(1.0), {"u": np.array(1.0)}, 2), -0.19)


@pytest.mark.parametrize("seed", range(15))
def test_correct_optimizers_never_fail(check, seed):
    verdicts = [check.sgd(lr=0.1, seed=seed), check.sgd(lr=0.5, momentum=0.99, seed=seed),
                check.sgd(lr=0.3, momentum=0.5, weight_decay=0.2, seed=seed),
                check.adam(lr=0.01, seed=seed), check.adam(lr=0.1, beta1=0.5, beta2=0.9, seed=seed),
                check.adam(lr=0.001, eps=1e-6, weight_decay=0.5, seed=seed), check.adam(lr=0.01, eps=0.1, seed=seed)]
    for verdict in verdicts:
        assert verdict.passed, verdict.message


def test_two_sgd_mistakes_at_once_get_the_rule_not_a_wrong_name(ns, check, monkeypatch):
    """Dampened momentum and the decay's sign, together: neither known mistake matches alone, so no hint may
    name one; the rule is written out instead."""
    def both(self, p):
        u = self.velocity.get(id(p), 0.0)
        self.velocity[id(p)] = self.momentum * u + (1 - self.momentum) * (p.grad - self.weight_decay * p.data)
        p.data -= self.lr * self.velocity[id(p)]
    monkeypatch.setitem(ns, "SGD", step_with(ns, "SGD", both))
    verdict = check.sgd(lr=0.1, momentum=0.9, weight_decay=0.1)
    assert_fails(verdict, "after step 1 of 4", "Hint: " + optim.SGD_RULE)
    assert verdict.message.count("Hint") == 1


def test_zero_grad_and_train_step_pass_on_the_solution(check):
    for verdict in (check.optimizer_zero_grad(), check.train_step()):
        assert verdict.passed, verdict.message


def step_with(ns, name, update):
    """A subclass of the solved optimizer whose step applies `update(optimizer, p)` to each parameter."""
    def step(self):
        self.t = getattr(self, "t", 0) + 1
        for p in self.params:
            if p.grad is not None:
                update(self, p)
    return type(name, (ns[name],), {"step": step})


def test_ema_momentum_is_named(ns, check, monkeypatch):
    def ema(self, p):
        u = self.velocity.get(id(p), 0.0)
        self.velocity[id(p)] = self.momentum * u + (1 - self.momentum) * p.grad
        p.data -= self.lr * self.velocity[id(p)]
    monkeypatch.setitem(ns, "SGD", step_with(ns, "SGD", ema))
    assert_fails(check.sgd(lr=0.1, momentum=0.9), "after step 1 of 4", "worst p0[", "the update rule gives",
                 "scales the gradient by (1 - momentum)", "u = momentum·u + g")
    assert check.sgd(lr=0.1).passed                     # without momentum the two rules agree


def test_shared_velocity_is_caught(ns, check, monkeypatch):
    def shared(self, p):
        self.velocity["all"] = self.momentum * self.velocity.get("all", 0.0) + p.grad
        p.data -= self.lr * self.velocity["all"]
    monkeypatch.setitem(ns, "SGD", step_with(ns, "SGD", shared))
    assert_fails(check.sgd(lr=0.1, momentum=0.9), "parameter 1")


def test_weight_decay_sign_is_named(ns, check, monkeypatch):
    def minus(self, p):
        p.data -= self.lr * (p.grad - self.weight_decay * p.data)
    monkeypatch.setitem(ns, "SGD", step_with(ns, "SGD", minus))
    assert_fails(check.sgd(lr=0.1, weight_decay=0.1), "subtract the weight decay", "adds weight_decay·p")


def test_weight_decay_added_after_the_velocity_is_named(ns, check, monkeypatch):
    def decay_outside(self, p):
        u = self.momentum * self.velocity.get(id(p), 0.0) + p.grad
        self.velocity[id(p)] = u
        p.data -= self.lr * (u + self.weight_decay * p.data)
    monkeypatch.setitem(ns, "SGD", step_with(ns, "SGD", decay_outside))
    assert_fails(check.sgd(lr=0.1, momentum=0.9, weight_decay=0.1, seed=3), "after step 2 of 4",
                 "u = momentum·u + (g + weight_decay·p)")
    assert check.sgd(lr=0.1, weight_decay=0.1).passed and check.sgd(lr=0.1, momentum=0.9).passed   # alone, both agree


@pytest.mark.parametrize("denominator, words", [
    (lambda v_hat, eps: np.sqrt(v_hat + eps), "it belongs outside it"),
    (lambda v_hat, eps: np.sqrt(v_hat), "not of eps=0.1"),
    (lambda v_hat, eps: np.sqrt(v_hat) + 1e-8, "not of eps=0.1"),
])
def test_adam_eps_slips_fail_when_eps_matters(ns, check, monkeypatch, denominator, words):
    """With eps = 0.1 against gradients of size 1, eps inside the root, left out or fixed at 1e-8 all show."""
    def step(self, p):
        m = self.beta1 * self.m.get(id(p), 0.0) + (1 - self.beta1) * p.grad
        v = self.beta2 * self.v.get(id(p), 0.0) + (1 - self.beta2) * p.grad ** 2
        self.m[id(p)], self.v[id(p)] = m, v
        v_hat = v / (1 - self.beta2 ** self.t)
        p.data -= self.lr * (m / (1 - self.beta1 ** self.t)) / denominator(v_hat, self.eps)
    monkeypatch.setitem(ns, "Adam", step_with(ns, "Adam", step))
    assert_fails(check.adam(lr=0.01, eps=0.1, seed=3), "after step 1 of 4", words)
    assert check.adam(lr=0.01).passed                   # eps = 1e-8 against gradients of size 1: invisible


def test_parameter_without_gradient_must_be_skipped(ns, check, monkeypatch):
    def no_skip(self):
        for p in self.params:
            p.data -= self.lr * (p.grad if p.grad is not None else np.ones_like(p.data))
    monkeypatch.setitem(ns, "SGD", type("SGD", (ns["SGD"],), {"step": no_skip}))
    assert_fails(check.sgd(lr=0.1), "parameter 2", "its .grad is None all along", "skip parameters")


def test_float64_buffers_that_change_the_dtype_are_explained(ns, check, monkeypatch):
    def reassign(self, p):
        p.data = p.data - self.lr * (p.grad + np.zeros(p.shape))
    monkeypatch.setitem(ns, "SGD", step_with(ns, "SGD", reassign))
    assert_fails(check.sgd(lr=0.1), "float64", "in place", "the parameter keeps its dtype")


def test_adam_without_bias_correction_is_named(ns, check, monkeypatch):
    def uncorrected(self, p):
        m = self.beta1 * self.m.get(id(p), 0.0) + (1 - self.beta1) * p.grad
        v = self.beta2 * self.v.get(id(p), 0.0) + (1 - self.beta2) * p.grad ** 2
        self.m[id(p)], self.v[id(p)] = m, v
        p.data -= self.lr * m / (np.sqrt(v) + self.eps)
    monkeypatch.setitem(ns, "Adam", step_with(ns, "Adam", uncorrected))
    assert_fails(check.adam(lr=0.01), "after step 1 of 4", "without the bias correction", "with t = 1 at the first step")


def test_adam_counting_parameters_instead_of_steps_is_caught(ns, check, monkeypatch):
    def per_parameter(self):
        for p in self.params:
            if p.grad is None:
                continue
            self.t += 1
            m = self.beta1 * self.m.get(id(p), 0.0) + (1 - self.beta1) * p.grad
            v = self.beta2 * self.v.get(id(p), 0.0) + (1 - self.beta2) * p.grad ** 2
            self.m[id(p)], self.v[id(p)] = m, v
            p.data -= self.lr * (m / (1 - self.beta1 ** self.t)) / (np.sqrt(v / (1 - self.beta2 ** self.t)) + self.eps)
    monkeypatch.setitem(ns, "Adam", type("Adam", (ns["Adam"],), {"step": per_parameter}))
    assert_fails(check.adam(lr=0.01), "parameter 1", "t counts the calls to step()")


def test_zero_grad_mistakes_are_explained_not_raised(ns, check, monkeypatch):
    def zeros(self):
        for p in self.params:
            p.grad = np.zeros_like(p.data)
    monkeypatch.setattr(ns["Optimizer"], "zero_grad", zeros)
    assert_fails(check.optimizer_zero_grad(), "expected None", "zeros included", "skips parameters whose .grad is None")


def train_step_variant(ns, monkeypatch, body):
    monkeypatch.setitem(ns, "train_step", body)
    return Checker(ns, verbose=False).train_step()


def test_train_step_without_zero_grad_shows_the_piled_up_gradient(ns, monkeypatch):
    def forgets(model, loss_fn, optimizer, x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()
    assert_fails(train_step_variant(ns, monkeypatch, forgets), "call 2", "PLUS the previous one's",
                 "clears the previous batch's gradients", "before its own backward pass")


def test_train_step_that_returns_the_loss_tensor_is_told_the_rule(ns, monkeypatch):
    def whole(model, loss_fn, optimizer, x, y):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss
    assert_fails(train_step_variant(ns, monkeypatch, whole), "call 1", "expected the loss as a Python number",
                 "not the Tensor itself")


def test_train_step_order_mistakes_are_told_apart(ns, monkeypatch):
    def late(model, loss_fn, optimizer, x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        return loss.item()
    assert_fails(train_step_variant(ns, monkeypatch, late), "gradient was None", "not between backward() and step()")

    def early(model, loss_fn, optimizer, x, y):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        optimizer.step()
        loss.backward()
        return loss.item()
    assert_fails(train_step_variant(ns, monkeypatch, early), "comes after loss.backward()")


def test_train_step_that_clears_after_the_step_is_caught(ns, monkeypatch):
    """Right on every call here (the stand-in starts without a gradient), wrong for whatever .grad a real loop
    holds before its first call: the order itself is checked."""
    def at_the_end(model, loss_fn, optimizer, x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.item()
    assert_fails(train_step_variant(ns, monkeypatch, at_the_end), "call 1", "cleared only after loss.backward()")


def test_optimizer_state_kept_by_position_among_the_parameters_with_a_gradient_is_caught(ns, check, monkeypatch):
    """The scenario's first parameter misses its gradient at step 2: state that is not the parameter's own shows."""
    def by_position(self):
        live = [p for p in self.params if p.grad is not None]
        for i, p in enumerate(live):
            u = self.velocity.get(i)
            g = p.grad if u is None else self.momentum * u + p.grad
            self.velocity[i] = g
            p.data -= self.lr * g
    monkeypatch.setitem(ns, "SGD", type("SGD", (ns["SGD"],), {"step": by_position}))
    assert_fails(check.sgd(lr=0.1, momentum=0.9), "after step 2 of 4, parameter 1")


def test_train_step_may_clear_through_the_model(ns, monkeypatch):
    def through_model(model, loss_fn, optimizer, x, y):
        model.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return float(loss.data)
    verdict = train_step_variant(ns, monkeypatch, through_model)
    assert verdict.passed, verdict.message


def test_optimizer_checks_write_nothing_to_stderr(ns, check, monkeypatch, capfd):
    def overflow(self, p):
        p.data -= np.exp(np.float64(1e4)) * p.grad
    monkeypatch.setitem(ns, "SGD", step_with(ns, "SGD", overflow))
    assert not check.sgd(lr=0.1).passed
    assert capfd.readouterr().err == ""


def test_train_step_with_the_loss_arguments_swapped_is_named(ns, monkeypatch):
    """A squared error gives the same loss and gradient either way: only the order the stand-in loss records
    shows loss_fn(y, prediction). A right train_step that names its prediction first still passes."""
    def swapped(model, loss_fn, optimizer, x, y):
        optimizer.zero_grad()
        loss = loss_fn(y, model(x))
        loss.backward()
        optimizer.step()
        return loss.item()
    assert_fails(train_step_variant(ns, monkeypatch, swapped), "call 1", "'loss_swapped'",
                 "loss_fn(y, prediction)", "prediction first and the target second")

    def named(model, loss_fn, optimizer, x, y):
        optimizer.zero_grad()
        prediction = model(x)
        loss = loss_fn(prediction, y)
        loss.backward()
        optimizer.step()
        return float(loss.data)
    verdict = train_step_variant(ns, monkeypatch, named)
    assert verdict.passed, verdict.message


def test_a_zero_gradient_is_not_skipped(ns, check, monkeypatch):
    """At step 4 the second parameter's gradient is all zeros: momentum, weight decay and Adam's m still move it.
    Skipping it as if it were None is named; plain SGD without decay cannot tell (a zero step either way)."""
    def skipping(base):
        def step(self):
            grads = [(p, p.grad) for p in self.params]
            for p, g in grads:
                if g is not None and not np.any(g):
                    p.grad = None
            base(self)
            for p, g in grads:
                p.grad = g
        return step
    for name, call in (("SGD", lambda: check.sgd(lr=0.1, momentum=0.9)),
                       ("SGD", lambda: check.sgd(lr=0.1, weight_decay=0.1)),
                       ("Adam", lambda: check.adam(lr=0.01))):
        with monkeypatch.context() as patch:
            patch.setitem(ns, name, type(name, (ns[name],), {"step": skipping(ns[name].step)}))
            assert_fails(call(), "after step 4 of 4, parameter 1", "gradient at step 4 0)",
                         "Only a .grad of None means")
            if name == "SGD":
                assert check.sgd(lr=0.1).passed


def test_adam_t_that_skips_calls_without_gradients_is_named(ns, check, monkeypatch):
    """Step 3 finds no gradient at all: t counts it anyway (the calls of step()), so step 4's correction uses t = 4."""
    base = ns["Adam"].step

    def step(self):
        if all(p.grad is None for p in self.params):
            return
        base(self)
    monkeypatch.setitem(ns, "Adam", type("Adam", (ns["Adam"],), {"step": step}))
    assert_fails(check.adam(lr=0.01), "after step 4 of 4, parameter 0", "your t did not count step 3")


def test_the_scenario_has_a_call_without_gradients_and_a_zero_gradient():
    values, grads = optim.scenario(5)
    assert len(grads) == 4 and grads[1][0] is None and grads[2] == [None, None, None]
    assert not np.any(grads[3][1]) and grads[3][1].shape == values[1].shape and np.all(np.abs(grads[3][0]) >= 1)


def adam_step(t_of=lambda self, p: self.t, store=True, count_first=True):
    """An Adam step with one variation: where t comes from, whether m and v are kept, when t is counted."""
    def step(self):
        if count_first:
            self.t += 1
        for p in self.params:
            if p.grad is None:
                continue
            t = t_of(self, p)
            m = self.beta1 * self.m.get(id(p), 0.0) + (1 - self.beta1) * p.grad
            v = self.beta2 * self.v.get(id(p), 0.0) + (1 - self.beta2) * p.grad ** 2
            if store:
                self.m[id(p)], self.v[id(p)] = m, v
            p.data -= self.lr * (m / (1 - self.beta1 ** t)) / (np.sqrt(v / (1 - self.beta2 ** t)) + self.eps)
        if not count_first:
            self.t += 1
    return step


def own_count(self, p):
    self.own = getattr(self, "own", {})
    self.own[id(p)] = self.own.get(id(p), 0) + 1
    return self.own[id(p)]


def count_per_parameter(self, p):
    self.updates = getattr(self, "updates", 0) + 1
    return self.updates


ADAM_SLIPS = {
    "per_parameter_t": (adam_step(t_of=own_count), "a t kept for each parameter"),
    "t_per_update": (adam_step(t_of=count_per_parameter), "grows once for every parameter updated"),
    "t_from_zero": (adam_step(count_first=False), "a t of 0 at the first step"),
    "state_not_stored": (adam_step(store=False), "start again from zero at every step"),
}


@pytest.mark.parametrize("slip", ADAM_SLIPS)
def test_each_adam_slip_is_named_by_its_own_hint(ns, check, monkeypatch, slip):
    """Four Adam bugs, four hints: each names its own cause, and none names another's."""
    step, words = ADAM_SLIPS[slip]
    monkeypatch.setitem(ns, "Adam", type("Adam", (ns["Adam"],), {"step": step}))
    verdict = check.adam(lr=0.01)
    assert_fails(verdict, words)
    others = [w for name, (_, w) in ADAM_SLIPS.items() if name != slip]
    assert not any(w in verdict.message for w in others), verdict.message


def test_a_step_that_changes_the_callers_gradient_fails(ns, check, monkeypatch):
    """SGD writing its weight decay into p.grad moves the weights right, but changes the caller's gradient."""
    def into_grad(self, p):
        p.grad += self.weight_decay * p.data
        p.data -= self.lr * p.grad
    monkeypatch.setitem(ns, "SGD", step_with(ns, "SGD", into_grad))
    assert_fails(check.sgd(lr=0.1, weight_decay=0.1), "changed parameter 0's .grad", "the decay was written into .grad")
    assert check.sgd(lr=0.1).passed                      # a decay of 0 adds nothing


def test_adam_state_that_is_the_gradient_is_caught_by_the_gradient_it_changes(ns, check, monkeypatch):
    def alias(self, p):
        m = self.m.setdefault(id(p), p.grad)
        v = self.v.setdefault(id(p), np.zeros_like(p.data))
        m *= self.beta1
        m += (1 - self.beta1) * p.grad
        v *= self.beta2
        v += (1 - self.beta2) * p.grad ** 2
        p.data -= self.lr * (m / (1 - self.beta1 ** self.t)) / (np.sqrt(v / (1 - self.beta2 ** self.t)) + self.eps)
    monkeypatch.setitem(ns, "Adam", step_with(ns, "Adam", alias))
    assert_fails(check.adam(lr=0.01), "changed parameter 0's .grad", "never .grad itself")


def test_a_rebound_data_array_fails_even_when_it_stays_float32(ns, check, monkeypatch):
    def rebind(self, p):
        p.data = p.data - self.lr * p.grad
    monkeypatch.setitem(ns, "SGD", step_with(ns, "SGD", rebind))
    assert_fails(check.sgd(lr=0.1), "is a new array, not the one it had", "in place")


def test_adam_t_of_zero_that_divides_by_a_python_zero_is_named(ns, check, monkeypatch):
    """The course's solution folds the correction into a Python float: t = 0 raises ZeroDivisionError there."""
    def step(self):
        for p in self.params:
            if p.grad is not None:
                p.data -= (self.lr / (1 - self.beta1 ** self.t)) * p.grad
        self.t += 1
    monkeypatch.setitem(ns, "Adam", type("Adam", (ns["Adam"],), {"step": step}))
    assert_fails(check.adam(lr=0.01), "ZeroDivisionError", "1 - beta^t is 0 only at t = 0")
