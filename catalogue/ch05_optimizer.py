"""Chapter 5's catalog of typical mistakes, and of correct answers written another way.

Each entry is an answer a student might really write, given as edits to the solved exercise cell,
with the test cells it must lose (`loses`; empty for a correct alternative). The tests grade them
with the real `nbgrader autograde` and require exactly those cells to lose their points. The demo's
"partial" student makes the mistakes named in DEMO_PARTIAL.
"""
from autograder.build.submissions import Edit, Mistake, right, wrong



SGD_TESTS = ["test_sgd", "test_sgd_momentum", "test_sgd_weight_decay"]
ADAM_TESTS = ["test_adam", "test_adam_weight_decay"]
TRAIN_STEP = """    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()"""
SGD_VELOCITY = """            if self.momentum:
                u = self.velocity.get(id(p))
                g = g if u is None else self.momentum * u + g
                self.velocity[id(p)] = g"""
ADAM_COUNT = """        self.t += 1
        for p in self.params:
            if p.grad is None:
                continue
"""
ADAM_MOMENTS = """            if id(p) not in self.m:              # p's first step: both averages start at zero
                self.m[id(p)], self.v[id(p)] = np.zeros_like(p.data), np.zeros_like(p.data)
            m, v = self.m[id(p)], self.v[id(p)]
            m *= self.beta1                      # m and v updated in place: no new arrays per step
            m += (1 - self.beta1) * g
            v *= self.beta2
            v += (1 - self.beta2) * g * g"""
ADAM_CORRECTION = """            step_size = self.lr / (1 - self.beta1 ** self.t)                 # η·m̂ = step_size·m
            denominator = np.sqrt(v / (1 - self.beta2 ** self.t)) + self.eps  # √v̂ + ε"""
ADAM_ROOT = "np.sqrt(v / (1 - self.beta2 ** self.t)) + self.eps"
ADAM_UPDATE = "p.data -= step_size * m / denominator"
ADAM_CORRECTED_UPDATE = ADAM_CORRECTION + "\n            " + ADAM_UPDATE
ADAM_STEP = (ADAM_COUNT + "            g = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad\n" + ADAM_MOMENTS + "\n"
             + ADAM_CORRECTED_UPDATE)

MISTAKES = [
    # state that is not the parameter's own, shown by a parameter that misses its gradient at one step
    wrong("sgd_velocity_by_position", "keys each velocity by its position among the parameters that have a "
          "gradient this step, not by the parameter", "sgd",
          "u = self.velocity.get(id(p))\n                g = g if u is None else self.momentum * u + g\n"
          "                self.velocity[id(p)] = g",
          "i = [q for q in self.params if q.grad is not None].index(p)\n                u = self.velocity.get(i)\n"
          "                g = g if u is None else self.momentum * u + g\n                self.velocity[i] = g",
          ["test_sgd_momentum", "test_sgd_weight_decay"]),
    wrong("adam_step_count_per_parameter", "counts t per parameter (its steps with a gradient), not per call of "
          "step()", "adam", "            m, v = self.m[id(p)], self.v[id(p)]",
          "            m, v = self.m[id(p)], self.v[id(p)]\n"
          "            self.steps = getattr(self, 'steps', {})\n"
          "            self.steps[id(p)] = self.steps.get(id(p), 0) + 1\n            self.t = self.steps[id(p)]",
          ["test_adam", "test_adam_weight_decay"]),
    # Optimizer.zero_grad
    wrong("zero_grad_zeros", "fills gradients with zeros instead of forgetting them", "optimizer",
          "p.grad = None", "p.grad = np.zeros_like(p.data)", ["test_optimizer_zero_grad"]),
    wrong("zero_grad_rebinds_loop_variable", "assigns None to the loop variable, which changes nothing",
          "optimizer", "p.grad = None", "p = None", ["test_optimizer_zero_grad"]),
    # train_step
    wrong("train_step_no_zero_grad", "never clears the gradients: they pile up across calls", "train_step",
          "    optimizer.zero_grad()\n", "", ["test_train_step"]),
    wrong("train_step_zero_grad_at_end", "clears the gradients after step(), at the end of the call", "train_step",
          TRAIN_STEP, """    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.item()""", ["test_train_step"]),
    wrong("train_step_zero_grad_late", "clears the gradients between backward() and step()", "train_step",
          TRAIN_STEP, """    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    return loss.item()""", ["test_train_step"]),
    wrong("train_step_step_first", "steps before backward(), with no gradient yet", "train_step", TRAIN_STEP,
          """    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    optimizer.step()
    loss.backward()
    return loss.item()""", ["test_train_step"]),
    wrong("train_step_returns_tensor", "returns the loss Tensor instead of a number", "train_step",
          "return loss.item()", "return loss", ["test_train_step"]),
    # SGD
    wrong("sgd_plus", "steps up the gradient instead of down", "sgd", "p.data -= self.lr * g",
          "p.data += self.lr * g", SGD_TESTS),
    wrong("sgd_no_skip", "does not skip parameters without a gradient", "sgd",
          "            if p.grad is None:\n                continue\n", "", SGD_TESTS),
    wrong("sgd_momentum_ema", "velocity as an average: u = momentum u + (1 - momentum) g", "sgd",
          "g = g if u is None else self.momentum * u + g",
          "g = (1 - self.momentum) * g if u is None else self.momentum * u + (1 - self.momentum) * g",
          ["test_sgd_momentum", "test_sgd_weight_decay"]),
    wrong("sgd_shared_velocity", "one velocity shared by all parameters", "sgd", SGD_VELOCITY,
          """            if self.momentum:
                u = self.velocity.get("all")
                g = g if u is None else self.momentum * u + g
                self.velocity["all"] = g""", ["test_sgd_momentum", "test_sgd_weight_decay"]),
    wrong("sgd_weight_decay_sign", "subtracts weight_decay * w from the gradient", "sgd",
          "g = p.grad + self.weight_decay * p.data", "g = p.grad - self.weight_decay * p.data",
          ["test_sgd_weight_decay"]),
    Mistake("sgd_decay_outside_velocity", "the velocity gathers the raw gradient; weight decay is added to the step after it",
            (Edit("sgd", "g = p.grad + self.weight_decay * p.data", "g = p.grad"),
             Edit("sgd", "p.data -= self.lr * g", "p.data -= self.lr * (g + self.weight_decay * p.data)")),
            ("test_sgd_weight_decay",)),
    Mistake("sgd_decoupled_decay_without_lr", "shrinks the weights by weight_decay after the step, without lr",
            (Edit("sgd", "g = p.grad + self.weight_decay * p.data", "g = p.grad"),
             Edit("sgd", "            p.data -= self.lr * g",
                  "            p.data -= self.lr * g\n            p.data -= self.weight_decay * p.data")),
            ("test_sgd_weight_decay",)),
    # Adam
    wrong("adam_no_bias_correction", "uses m and v without dividing by 1 - beta**t", "adam", ADAM_CORRECTION,
          """            step_size = self.lr
            denominator = np.sqrt(v) + self.eps""", ADAM_TESTS),
    wrong("adam_counts_parameters", "increments t once per parameter instead of once per step", "adam",
          ADAM_COUNT, """        for p in self.params:
            if p.grad is None:
                continue
            self.t += 1
""", ADAM_TESTS),
    wrong("adam_shared_moments", "one m and one v shared by all parameters", "adam", ADAM_MOMENTS,
          """            m = self.beta1 * self.m.get("all", 0.0) + (1 - self.beta1) * g
            v = self.beta2 * self.v.get("all", 0.0) + (1 - self.beta2) * g * g
            self.m["all"], self.v["all"] = m, v""", ADAM_TESTS),
    wrong("adam_no_square_root", "divides by v_hat instead of its square root", "adam", ADAM_ROOT,
          "v / (1 - self.beta2 ** self.t) + self.eps", ADAM_TESTS),
    wrong("adam_eps_inside_sqrt", "eps inside the square root: sqrt(v_hat + eps)", "adam", ADAM_ROOT,
          "np.sqrt(v / (1 - self.beta2 ** self.t) + self.eps)", ["test_adam"]),
    wrong("adam_no_eps", "forgets eps altogether", "adam", ADAM_ROOT, "np.sqrt(v / (1 - self.beta2 ** self.t))",
          ["test_adam"]),
    wrong("adam_eps_hardcoded", "hard-codes eps = 1e-8, ignoring the eps argument", "adam", ADAM_ROOT,
          "np.sqrt(v / (1 - self.beta2 ** self.t)) + 1e-8", ["test_adam"]),
    wrong("adam_ignores_weight_decay", "forgets weight decay", "adam",
          "g = p.grad + self.weight_decay * p.data", "g = p.grad", ["test_adam_weight_decay"]),
    # a squared error is symmetric, so only the recorded order of the arguments shows the swap
    wrong("train_step_loss_args_swapped", "calls the loss with the target first: loss_fn(y, model(x))", "train_step",
          "loss = loss_fn(model(x), y)", "loss = loss_fn(y, model(x))", ["test_train_step"]),
    # a step whose gradient is all zeros is not a step without a gradient: the scenario has both
    wrong("sgd_skips_zero_grad", "skips a parameter whose gradient is all zeros, as if it were None", "sgd",
          "            if p.grad is None:\n                continue\n",
          "            if p.grad is None or not np.any(p.grad):\n                continue\n",
          ["test_sgd_momentum", "test_sgd_weight_decay"]),
    wrong("adam_skips_zero_grad", "skips a parameter whose gradient is all zeros, as if it were None", "adam",
          "            if p.grad is None:\n                continue\n",
          "            if p.grad is None or not np.any(p.grad):\n                continue\n", ADAM_TESTS),
    wrong("adam_t_counts_steps_with_grads", "counts t only when some parameter has a gradient, not at every call of "
          "step()", "adam", "        self.t += 1\n        for p in self.params:",
          "        if any(p.grad is not None for p in self.params):\n            self.t += 1\n"
          "        for p in self.params:", ADAM_TESTS),
    # the rules the text states, each with a visible case where it shows
    wrong("sgd_rebinds_data", "rebinds p.data to a new array instead of updating it in place", "sgd",
          "p.data -= self.lr * g", "p.data = p.data - self.lr * g", SGD_TESTS),
    wrong("sgd_decay_into_grad", "adds the weight decay into the caller's p.grad, in place", "sgd",
          "g = p.grad + self.weight_decay * p.data",
          "p.grad += self.weight_decay * p.data\n            g = p.grad", ["test_sgd_weight_decay"]),
    wrong("adam_rebinds_data", "rebinds p.data to a new array instead of updating it in place", "adam",
          ADAM_UPDATE, "p.data = p.data - step_size * m / denominator", ADAM_TESTS),
    Mistake("adam_t_starts_at_zero", "counts t after the update, so the first step has t = 0",
            (Edit("adam", "        self.t += 1\n        for p in self.params:", "        for p in self.params:"),
             Edit("adam", "            " + ADAM_UPDATE, "            " + ADAM_UPDATE + "\n        self.t += 1")),
            tuple(ADAM_TESTS)),
    wrong("adam_state_not_stored", "computes m and v from the stored ones but never stores them back", "adam",
          ADAM_MOMENTS, """            m = self.beta1 * self.m.get(id(p), 0.0) + (1 - self.beta1) * g
            v = self.beta2 * self.v.get(id(p), 0.0) + (1 - self.beta2) * g * g""", ADAM_TESTS),
    wrong("adam_m_is_the_gradient", "starts m as the gradient array itself and updates it in place", "adam",
          "self.m[id(p)], self.v[id(p)] = np.zeros_like(p.data), np.zeros_like(p.data)",
          "self.m[id(p)], self.v[id(p)] = p.grad, np.zeros_like(p.data)", ADAM_TESTS),
]

ALTERNATIVES = [
    right("zero_grad_setattr", "setattr in a loop", "optimizer", "p.grad = None", "setattr(p, 'grad', None)"),
    right("train_step_float", "float(loss.data) and a named prediction", "train_step", TRAIN_STEP,
          """    optimizer.zero_grad()
    prediction = model(x)
    loss = loss_fn(prediction, y)
    loss.backward()
    optimizer.step()
    return float(loss.data)"""),
    right("sgd_zeros_buffer", "velocities start at zeros of the parameter's shape, then u = momentum u + g", "sgd",
          SGD_VELOCITY, """            if self.momentum:
                u = self.velocity.setdefault(id(p), np.zeros_like(p.data))
                u *= self.momentum
                u += g
                g = u"""),
    right("adam_corrected_arrays", "m_hat and v_hat as arrays of their own, as the formula writes them", "adam",
          ADAM_CORRECTED_UPDATE, """            m_hat = m / (1 - self.beta1 ** self.t)
            v_hat = v / (1 - self.beta2 ** self.t)
            p.data -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)"""),
    Mistake("sgd_velocity_by_index", "velocities keyed by the parameter's index in self.params",
            (Edit("sgd", "for p in self.params:", "for i, p in enumerate(self.params):"),
             Edit("sgd", "self.velocity.get(id(p))", "self.velocity.get(i)"),
             Edit("sgd", "self.velocity[id(p)] = g", "self.velocity[i] = g")), ()),
    right("sgd_filters_none_first", "loops over the parameters whose .grad is not None, filtered first", "sgd",
          "        for p in self.params:\n            if p.grad is None:\n                continue\n",
          "        for p in [q for q in self.params if q.grad is not None]:\n"),
    Mistake("adam_lists", "state in lists indexed like self.params, the bias correction folded into the step size",
            (Edit("adam", "        self.m, self.v = {}, {}",
                  "        self.m = [0.0] * len(self.params)\n        self.v = [0.0] * len(self.params)"),
             Edit("adam", ADAM_STEP, """        self.t += 1
        rate = self.lr * np.sqrt(1 - self.beta2 ** self.t) / (1 - self.beta1 ** self.t)
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p.data
            self.m[i] = self.beta1 * self.m[i] + (1 - self.beta1) * g
            self.v[i] = self.beta2 * self.v[i] + (1 - self.beta2) * g * g
            p.data -= rate * self.m[i] / (np.sqrt(self.v[i]) + self.eps * np.sqrt(1 - self.beta2 ** self.t))""")),
            ()),
]

DEMO_PARTIAL = ["train_step_no_zero_grad", "sgd_momentum_ema", "adam_no_bias_correction"]
