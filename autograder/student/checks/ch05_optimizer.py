"""Checks of chapter 5's optimizers against update rules written out in NumPy (float64).

The checker makes its own float64 Parameters and sets their `.grad` by hand, step after step, so an
optimizer is judged alone: no model, no loss, no engine. After every step each parameter must match
the NumPy rule to 1e-6. When the values match a known wrong rule instead (an EMA momentum, Adam
without bias correction, ...), the message names that mistake.
"""
import numbers

import numpy as np

from autograder.student import gradcheck
from autograder.student.checks import ch05_optimizer_facts as facts
from autograder.student.checks.describe import index_label, number, type_name
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed

TOLERANCE = 1e-6


# ── The update rules, right and wrong ───────────────────────────────────────────────────────────

def sgd_rule(lr, momentum=0.0, weight_decay=0.0, ema=False, decay_sign=1.0, decay_after_momentum=False):
    """The SGD update; `decay_after_momentum` is the slip of a velocity that gathers the raw gradient alone,
    the decay added to the step after it."""
    def update(value, grad, state, t):
        decay = decay_sign * weight_decay * value
        d = grad if decay_after_momentum else grad + decay
        if momentum:
            old = state.get("u")
            if old is None:
                state["u"] = (1 - momentum) * d if ema else d
            else:
                state["u"] = momentum * old + ((1 - momentum) * d if ema else d)
            d = state["u"]
        return value - lr * (d + decay if decay_after_momentum else d)
    return update


def adam_rule(lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, correct=True, eps_inside=False,
              t_offset=0, stored=True):
    """The Adam update; `t_offset=-1` is the slip of a t counted after the update (0 at the first step, a
    correction 1 - beta^0 = 0: nan), `stored=False` the slip of averages that start from zero at every step."""
    def update(value, grad, state, t):
        t = t + t_offset
        state = state if stored else {}
        g = grad + weight_decay * value
        state["m"] = beta1 * state.get("m", 0.0) + (1 - beta1) * g
        state["v"] = beta2 * state.get("v", 0.0) + (1 - beta2) * g * g
        with np.errstate(all="ignore"):
            m_hat = state["m"] / (1 - beta1 ** t) if correct else state["m"]
            v_hat = state["v"] / (1 - beta2 ** t) if correct else state["v"]
            denominator = np.sqrt(v_hat + eps) if eps_inside else np.sqrt(v_hat) + eps
            return value - lr * m_hat / denominator
    return update


def history(rule, values, grads_per_step):
    """Each parameter's values after every step; a None gradient leaves a parameter alone."""
    values = [v.copy() for v in values]
    states = [{} for _ in values]
    steps = []
    for t, grads in enumerate(grads_per_step, 1):
        for i, g in enumerate(grads):
            if g is not None:
                values[i] = rule(values[i], g, states[i], t)
        steps.append([v.copy() for v in values])
    return steps


def skipping_zero_gradients(rule):
    """The slip of an optimizer that leaves a parameter alone when its gradient is all zeros, as if it were None."""
    def update(value, grad, state, t):
        return value if not np.any(grad) else rule(value, grad, state, t)
    return update


def counting_steps_with_gradients(rule):
    """The slip of an Adam whose t counts only the calls of step() that found some gradient."""
    seen = {"t": 0, "count": 0}

    def update(value, grad, state, t):
        if t < seen["t"]:                        # a new history: count again
            seen["t"], seen["count"] = 0, 0
        if t != seen["t"]:
            seen["t"], seen["count"] = t, seen["count"] + 1
        return rule(value, grad, state, seen["count"])
    return update


def counting_steps_per_parameter(rule):
    """The slip of an Adam whose t is each parameter's own count of the steps that gave it a gradient."""
    def update(value, grad, state, t):
        state["own t"] = state.get("own t", 0) + 1
        return rule(value, grad, state, state["own t"])
    return update


def counting_parameters(rule):
    """The slip of an Adam whose one t grows once for every parameter it updates, not once per call of step()."""
    seen = {"t": 0, "count": 0}

    def update(value, grad, state, t):
        if t < seen["t"]:                        # a new history: count again
            seen["count"] = 0
        seen["t"], seen["count"] = t, seen["count"] + 1
        return rule(value, grad, state, seen["count"])
    return update


ZERO_GRADIENT_HINT = ("a parameter whose gradient is all zeros was left alone. Only a .grad of None means "
                      "\"skip\"; a gradient of zeros is a gradient, and {what} still move{s} the weight.")


# ── Running the student's optimizer ─────────────────────────────────────────────────────────────

def scenario(seed, steps=4):
    """Three parameters: two of the same shape with different gradients (so a buffer shared between
    parameters shows), and one that never gets a gradient (it must be skipped). The first misses its
    gradient at the second step: it is skipped then, and its state must stay its own (a step count kept
    per parameter, or state kept by position among the parameters that have a gradient, shows).

    Every gradient is 1 to 2 in size, either sign, and every value at most 1, so with weight decay up to 0.5
    no element's gradient comes near zero: Adam's eps (1e-8 by default) then moves no step by more than the
    tolerance, and a mistake about eps fails only the checks given a large eps, under every secret draw.
    (From a standard normal, one secret draw in four or five had an element small enough to show it.)

    At the third step no parameter has a gradient: step() is still called, so Adam's t still counts it (t counts
    the calls to step(), not the steps that found a gradient). At the fourth, the second parameter's gradient is
    all zeros: a gradient, not None, so momentum, weight decay and Adam's averages still move it (an optimizer
    that skips a zero gradient as if it were None shows)."""
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (3, 2)), rng.uniform(-1, 1, (4,))]

    def gradient(shape):
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(1, 2, shape)
    grads = [[gradient((3, 2)), gradient((3, 2)), None] for _ in range(steps)]
    if steps > 2:
        grads[1][0] = None
    if steps > 3:
        grads[2] = [None, None, None]
        grads[3][1] = np.zeros((3, 2))
    return values, grads


def first_difference(got_steps, want_steps):
    """(step, parameter, Mismatch) of the first disagreement, or None."""
    for step, (got, want) in enumerate(zip(got_steps, want_steps), 1):
        for i, (g, w) in enumerate(zip(got, want)):
            if g.shape != w.shape:
                return step, i, None
            mismatch = gradcheck.worst_mismatch(g, w, rtol=TOLERANCE, atol=TOLERANCE)
            if mismatch:
                return step, i, mismatch
    return None


def same_history(got_steps, want_steps):
    """True when every value after every step agrees, nan with nan: how a known wrong rule is recognised,
    including one whose steps are nan (a bias correction divided by 1 - beta^0 = 0)."""
    return all(g.shape == w.shape and np.allclose(g, w, rtol=TOLERANCE, atol=TOLERANCE, equal_nan=True)
               for got, want in zip(got_steps, want_steps) for g, w in zip(got, want))


def check_optimizer(ns, label, make, rule, known_mistakes, seed, steps=4, weight_decay=0.0):
    values, grads = scenario(seed, steps)
    try:
        got, grads_after = facts.optimizer_steps(ns["Parameter"], make, values, grads, run_quietly)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception(label, "step", error) + STEPS_CONTEXT + exception_hint(label, type(error).__name__))
    return (grad_changed(label, values, grads, got, grads_after, weight_decay)
            or steps_verdict(label, rule, known_mistakes, values, grads, got))


def exception_hint(label, error_type):
    """Adam's only division by a Python number is its bias correction: a ZeroDivisionError there is t = 0.
    Shared with the judge, which gets the exception's type name from the kernel."""
    if label.startswith("Adam") and error_type == "ZeroDivisionError":
        return ("\n  Hint: a bias correction 1 - beta^t is 0 only at t = 0: t counts the calls of step(), and is 1 "
                "during the first one, so it is counted before the update.")
    return ""


STEPS_CONTEXT = ("\n  while running 4 steps on three float64 Parameters (the third has .grad = None: skip it; "
                 "at step 3 none has a gradient; at step 4 the second's gradient is all zeros).")


def grad_changed(label, values, grads, got, grads_after, weight_decay):
    """A failed Verdict when step() changed a parameter's .grad (it reads the gradient, and the caller's code
    may read it again after the step), else None. Shared with the judge, which gets `grads_after` from the kernel."""
    for step, (given, after) in enumerate(zip(grads, grads_after), 1):
        before = values if step == 1 else got[step - 2]
        for i, (g, a) in enumerate(zip(given, after)):
            if g is None or (a is not None and a.shape == g.shape and np.array_equal(a, g)):
                continue
            shown = "None" if a is None else f"an array of shape {a.shape}" if a.shape != g.shape else None
            if shown is None:
                k = np.unravel_index(int(np.argmax(np.abs(a - g))), g.shape)
                shown = f"{number(a[k])} at {index_label(f'p{i}', k)} (given {number(g[k])})"
            where = (f"{label}: step {step} of {len(grads)} changed parameter {i}'s .grad: it holds {shown} "
                     "after the step.")
            if a is not None and weight_decay and a.shape == g.shape and np.allclose(
                    a, g + weight_decay * before[i], rtol=TOLERANCE, atol=TOLERANCE):
                return failed(f"{where}\n  That is the gradient plus weight_decay·p: the decay was written into "
                              ".grad.\n  Hint: step() reads .grad and leaves it as it is: the gradient with weight "
                              "decay, g + weight_decay·p, is a new array of the optimizer's own.")
            return failed(f"{where}\n  Hint: step() reads .grad and leaves it as it is (the code that called "
                          "backward() may read it again): every array the optimizer keeps or updates in place, "
                          "a velocity or a running average, is an array of its own, never .grad itself.")
    return None


def steps_verdict(label, rule, known_mistakes, values, grads, got):
    """The parameters' values after every step (`got`) against the rule; a known wrong rule names the mistake.
    Shared with the judge, which receives `got` from the kernel."""
    steps = len(grads)
    difference = first_difference(got, history(rule, values, grads))
    if difference is None:
        return passed(f"✔ {label}: {steps} steps match the NumPy update rule to {TOLERANCE:g}; "
                      "a parameter without a gradient is left alone")
    step, i, mismatch = difference
    where = f"{label}: after step {step} of {steps}, parameter {i} (shape {values[i].shape})"
    if i == 2:
        return failed(f"{where} changed, but its .grad is None all along.\n  Hint: skip parameters whose .grad is "
                      "None (they took no part in the loss).")
    if mismatch is None:
        return failed(f"{where} has shape {got[step - 1][i].shape}; an update must keep the parameter's shape.")
    hint = next((text for rule_, text in known_mistakes if same_history(got, history(rule_, values, grads))), None)
    return failed(f"{where} is wrong in {mismatch.count} of {mismatch.size} elements.\n"
                  f"  worst {index_label(f'p{i}', mismatch.index)}: yours {number(mismatch.analytic)}, the update "
                  f"rule gives {number(mismatch.numeric)} (start value {number(values[i][mismatch.index])}, "
                  f"gradient at step {step} {number(grads[step - 1][i][mismatch.index])})."
                  + (f"\n  Hint: {hint}" if hint else ""))


def check_keeps_dtype(ns, label, make):
    """A float32 parameter must keep its float32 array, updated in place, through two steps."""
    try:
        data, same_array = facts.float32_steps(ns["Parameter"], make, DTYPE_VALUES, [DTYPE_GRADS] * 2, run_quietly)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception(label, "step", error))
    return dtype_problem(label, type_name(data), isinstance(data, np.ndarray) and data.dtype == np.float32,
                         getattr(data, "dtype", ""), same_array)


DTYPE_VALUES = np.array([0.5, -0.25, 1.0])     # the float32 Parameter's values (the public run's)
DTYPE_GRADS = np.array([0.1, 0.2, -0.3], dtype=np.float32)


def dtype_problem(label, data_type, kept_float32, dtype, same_array=True):
    """None when a float32 parameter's .data is still its own float32 ndarray after two steps (`same_array`: the
    very array it had before them); else why it is not. Shared with the judge."""
    if not kept_float32:
        return failed(f"{label}: a float32 parameter's .data became {data_type} {dtype} after two steps.\n"
                      "  Hint: the parameter keeps its dtype: update its array in place, or keep every buffer and "
                      "every step in the parameter's dtype (a float64 buffer or number mixed into a float32 array "
                      "makes a float64 result).")
    if not same_array:
        return failed(f"{label}: after two steps, a parameter's .data is a new array, not the one it had.\n"
                      "  Hint: step() changes .data in place, as the text asks: other objects may hold that same "
                      "array (a view of it, a model that shares the weight), and a new array leaves them behind.")
    return None


def rounded(values):
    return np.round(np.asarray(values, dtype=np.float64), 4).ravel().tolist()


# ── The checks the notebook calls ───────────────────────────────────────────────────────────────

def sgd_label(lr, momentum, weight_decay):
    return f"SGD(lr={lr}, momentum={momentum}, weight_decay={weight_decay})"


def sgd_mistakes(lr, momentum, weight_decay):
    """(wrong rule, hint) pairs: a student's values matching one of them get its hint."""
    return [
        (sgd_rule(lr, momentum, weight_decay, ema=True),
         "your velocity scales the gradient by (1 - momentum), as Adam's averages do; SGD's velocity adds the whole "
         "gradient: u = momentum·u + g."),
        (sgd_rule(lr, 0.0, weight_decay),
         "your steps ignore the momentum: each parameter keeps a velocity u of its own, u = momentum·u + g, and "
         "steps along u."),
        (sgd_rule(lr, momentum, weight_decay, decay_sign=-1.0),
         "your steps subtract the weight decay from the gradient; it adds weight_decay·p to it, which pulls the "
         "weights towards 0."),
        (sgd_rule(lr, momentum, 0.0),
         "your steps ignore weight_decay: the gradient a step uses is g + weight_decay·p."),
        (sgd_rule(lr, momentum, weight_decay, decay_after_momentum=True),
         "the velocity gathered the raw gradient and the decay was added to the step after it: weight decay is part "
         "of the gradient, so u = momentum·u + (g + weight_decay·p), and the step follows u alone."),
        (skipping_zero_gradients(sgd_rule(lr, momentum, weight_decay)),
         ZERO_GRADIENT_HINT.format(what="the velocity and the weight decay", s="")),
    ]


@register("sgd")
def check_sgd(ns, lr=0.1, momentum=0.0, weight_decay=0.0, seed=0):
    """Four SGD steps against the NumPy update rule, to 1e-6."""
    label = sgd_label(lr, momentum, weight_decay)
    make = lambda params: ns["SGD"](params, lr=lr, momentum=momentum, weight_decay=weight_decay)  # noqa: E731
    verdict = check_optimizer(ns, label, make, sgd_rule(lr, momentum, weight_decay),
                              sgd_mistakes(lr, momentum, weight_decay), seed, weight_decay=weight_decay)
    if verdict.passed:
        verdict = check_keeps_dtype(ns, label, make) or verdict
    return with_rule_hint(verdict, SGD_RULE)


def adam_label(lr, beta1, beta2, eps, weight_decay):
    return f"Adam(lr={lr}, beta1={beta1}, beta2={beta2}, eps={eps:g}, weight_decay={weight_decay})"


def adam_mistakes(lr, beta1, beta2, eps, weight_decay):
    return [
        (adam_rule(lr, beta1, beta2, eps, weight_decay, correct=False),
         "your steps use m and v without the bias correction: m̂ = m / (1 - beta1^t) and v̂ = v / (1 - beta2^t), "
         "with t = 1 at the first step."),
        (adam_rule(lr, beta1, beta2, eps, weight_decay, eps_inside=True),
         "your steps add eps under the square root; it belongs outside it: the denominator is √v̂ + eps."),
        (adam_rule(lr, beta1, beta2, eps, 0.0),
         "your steps ignore weight_decay: it adds weight_decay·p to the gradient, before the averages."),
        (adam_rule(lr, beta1, beta2, 0.0, weight_decay),
         f"your steps are those of eps = 0 (or of a tiny eps of your own), not of eps={eps:g}: the denominator is "
         "√v̂ + eps, with the eps given to Adam."),
        (skipping_zero_gradients(adam_rule(lr, beta1, beta2, eps, weight_decay)),
         ZERO_GRADIENT_HINT.format(what="its running average m", s="s")),
        (counting_steps_with_gradients(adam_rule(lr, beta1, beta2, eps, weight_decay)),
         "your t did not count step 3, where no parameter had a gradient: t counts the calls to step(), each one, "
         "so the bias correction of the next step uses t = 4."),
        (counting_steps_per_parameter(adam_rule(lr, beta1, beta2, eps, weight_decay)),
         "your steps match a t kept for each parameter, counting only the steps that gave it a gradient, so a "
         "parameter that missed one lags behind: there is one t for the whole optimizer, the number of calls to "
         "step()."),
        (counting_parameters(adam_rule(lr, beta1, beta2, eps, weight_decay)),
         "your steps match a t that grows once for every parameter updated (t = 2 for the second parameter of "
         "step 1): t counts the calls to step(), so it grows once per call, before the loop over the parameters."),
        (adam_rule(lr, beta1, beta2, eps, weight_decay, t_offset=-1),
         "your steps match a t of 0 at the first step, where the bias correction 1 - beta^t is 0 and every value "
         "turns to nan: t is 1 during the first call of step(), so it is counted before the update."),
        (adam_rule(lr, beta1, beta2, eps, weight_decay, stored=False),
         "your steps match averages m and v that start again from zero at every step: each parameter's m and v "
         "are kept by the optimizer from one call of step() to the next."),
    ]


# The update rules written out: the hint of a failed step that matches no one known mistake (two at once, say).
SGD_RULE = ("per parameter, g = grad + weight_decay p; the velocity u = momentum u + g (u = g at the first step), "
            "and p moves by -lr u; each parameter has its own u.")
ADAM_RULE = ("per parameter, m = beta1 m + (1 - beta1) g and v = beta2 v + (1 - beta2) g²; "
             "t counts the calls to step(), starting at 1; each parameter has its own m and v.")


def with_rule_hint(verdict, rule):
    """A failed verdict without a more precise hint gets the update `rule` written out."""
    if not verdict.passed and "Hint" not in verdict.message:
        verdict.message += f"\n  Hint: {rule}"
    return verdict


@register("adam")
def check_adam(ns, lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, seed=0):
    """Four Adam steps against the NumPy update rule, to 1e-6."""
    label = adam_label(lr, beta1, beta2, eps, weight_decay)
    make = lambda params: ns["Adam"](params, lr=lr, beta1=beta1, beta2=beta2, eps=eps,  # noqa: E731
                                     weight_decay=weight_decay)
    verdict = check_optimizer(ns, label, make, adam_rule(lr, beta1, beta2, eps, weight_decay),
                              adam_mistakes(lr, beta1, beta2, eps, weight_decay), seed, weight_decay=weight_decay)
    if verdict.passed:
        verdict = check_keeps_dtype(ns, label, make) or verdict
    return with_rule_hint(verdict, ADAM_RULE)


ZERO_GRAD_SHAPES = ((2, 3), (3,), (1, 1))   # the last one has no gradient to forget


@register("optimizer_zero_grad")
def check_zero_grad(ns):
    rng = np.random.default_rng(3)
    try:
        params, values = facts.zero_grad_run(ns["Optimizer"], ns["Parameter"],
                                             [rng.standard_normal(s) for s in ZERO_GRAD_SHAPES], run_quietly)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Optimizer", "zero_grad", error))
    return zero_grad_verdict([type_name(p.grad) for p in params], any(isinstance(p.grad, np.ndarray) for p in params),
                             all(np.array_equal(v, p.data) for v, p in zip(values, params)))


def zero_grad_verdict(grad_types, zeros, values_kept):
    """After zero_grad(): every .grad None (`grad_types`), the values unchanged. Shared with the judge."""
    label = "Optimizer.zero_grad"
    if any(t != "NoneType" for t in grad_types):
        return failed(f"{label}: after zero_grad(), .grad is {grad_types}; expected None "
                      "for every parameter." + ("\n  Hint: zero_grad forgets a gradient: .grad goes back to None, "
                                                 "not to an array of any values (zeros included), because step() "
                                                 "skips parameters whose .grad is None." if zeros else ""))
    if not values_kept:
        return failed(f"{label}: zero_grad changed the parameters' values; it must only forget the gradients.")
    return passed(f"✔ {label} forgets the gradients of all {len(grad_types)} parameters")


TRAIN_STEP_LABEL = "train_step(model, loss_fn, optimizer, x, y)"
TRAIN_STEP_LR = 0.05      # the recording optimizer's step: w -= TRAIN_STEP_LR * w.grad


@register("train_step")
def check_train_step(ns):
    """train_step with a recording optimizer: order of the calls, fresh gradients, the loss returned."""
    rng = np.random.default_rng(4)
    batches = [(rng.uniform(-1, 1, (4, 2)), rng.uniform(-1, 1, (4, 1))) for _ in range(2)]
    w, calls = facts.train_step_calls(ns, np.array([[0.5], [-1.0]]), batches, TRAIN_STEP_LR, run_quietly)
    for call, (x, y) in enumerate(batches, 1):
        start = w.data.copy()
        want_grad = 2 * x.T @ (x @ start - y)
        want_loss = float(np.sum((x @ start - y) ** 2))
        try:
            ran = next(calls)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("train_step", "", error).replace("train_step. ", "train_step ")
                          + f"\n  while running call {call}.")
        problem = train_call_problem(call, ran["events"], ran["seen"], want_grad, ran["result"], want_loss)
        if problem:
            return problem
    return passed(f"✔ {TRAIN_STEP_LABEL}: zero_grad → forward → loss → backward → step, with fresh gradients at every call")


def train_call_problem(call, events, seen_so_far, want_grad, result, want_loss):
    """What went wrong in one call of train_step, or None: the calls made (`events`), the gradients step()
    saw at each call so far (the last is this call's), and the value returned. Shared with the judge."""
    label = TRAIN_STEP_LABEL
    done = f"{label}, call {call}: the calls were {events}"
    if events.count("step") != 1 or events.count("backward") != 1:
        return failed(f"{done}.\n  Hint: each call makes exactly one backward() and one optimizer.step().")
    if events.index("step") < events.index("backward"):
        return failed(f"{done}.\n  Hint: step() uses the gradients, so it comes after loss.backward().")
    if "loss_swapped" in events:
        return failed(f"{done}: loss_fn was called with the model's prediction second (loss_fn(y, prediction)).\n"
                      "  Hint: every loss takes the prediction first and the target second. A squared error hides the "
                      "swap; SoftmaxLoss would read the labels as logits.")
    seen = seen_so_far[-1]
    if seen is None:
        return failed(f"{done}; at step() the gradient was None.\n  Hint: zero_grad() must come before "
                      "loss.backward(), not between backward() and step().")
    # float32 gradients (the default dtype) agree with float64 ones to ~1e-7 relative: small entries need atol
    if np.shape(seen) != np.shape(want_grad) or not np.allclose(seen, want_grad, rtol=1e-5, atol=1e-6):
        stale = call == 2 and seen_so_far[0] is not None and np.shape(seen) == np.shape(want_grad) \
            and np.allclose(seen, want_grad + seen_so_far[0], rtol=1e-5, atol=1e-6)
        return failed(f"{done}; step() saw w.grad = {rounded(seen)}, the gradient of this "
                      f"batch is {rounded(want_grad)}."
                      + ("\n  That is this batch's gradient PLUS the previous one's: backward() adds to .grad."
                         if stale else "")
                      + ("\n  Hint: backward() adds to whatever .grad holds, so each call clears the previous "
                         "batch's gradients through the optimizer before its own backward pass." if stale else
                         "\n  Hint: step() must see the gradient of this batch's loss: the model's prediction for "
                         "this x, its loss against this y, and one backward pass from that loss, on gradients "
                         "cleared at the start of the call."))
    # Clearing at the end of a call, after step(), leaves every step here right (the stand-in starts with no
    # gradient) but hands the first call of a real loop whatever .grad was left before it: the order is checked.
    # (Clearing through the model, model.zero_grad(), is not recorded and is accepted.)
    if "zero_grad" in events and events.index("zero_grad") > events.index("backward"):
        return failed(f"{done}: the gradients were cleared only after loss.backward().\n  Hint: a call starts by "
                      "clearing the previous batch's gradients, before the forward and backward passes, so that "
                      "whatever .grad holds when it starts is never added to.")
    if not isinstance(result, numbers.Real) or isinstance(result, bool) or not np.isclose(result, want_loss):
        return failed(f"{label}, call {call}: returned {result!r:.60}, expected the loss as a Python number, "
                      f"{want_loss:.6g}.\n  Hint: train_step returns the loss's value as a plain Python number, for "
                      "logging: the one-element loss Tensor's item(), not the Tensor itself.")
    return None
