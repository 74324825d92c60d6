"""Chapter 4's catalog of typical mistakes, and of correct answers written another way.

Each entry is an answer a student might really write, given as edits to the solved exercise cell,
with the test cells it must lose (`loses`; empty for a correct alternative). The tests grade them
with the real `nbgrader autograde` and require exactly those cells to lose their points. The demo's
"partial" student makes the mistakes named in DEMO_PARTIAL.
"""
from autograder.build.submissions import Edit, Mistake, right, wrong



MEMBERS_DICT = """    elif isinstance(value, dict):
        for item in value.values():
            yield from members(item)
"""
PARAMS_RECURSE = "for p in ([item] if isinstance(item, Parameter) else item.parameters()):"
PARAMS_BODY = """        found, seen = [], set()
        for item in members(vars(self)):
            for p in ([item] if isinstance(item, Parameter) else item.parameters()):
                if id(p) not in seen:
                    seen.add(id(p))
                    found.append(p)
        return found"""
EVAL_BODY = """        self.training = False
        for child in self.children():
            child.eval()
"""
WEIGHT = "self.weight = Parameter(rng.uniform(-bound, bound, (in_features, out_features)))"
BIAS_ADD = "out = out + self.bias.broadcast_to(out.shape)"
FLATTEN = "return x.reshape((x.shape[0], int(np.prod(x.shape[1:]))))"
MASK = "scale = keep / (1 - self.p) if self.p < 1 else np.zeros(x.shape)     # p = 1 keeps nothing: zeros, not 0/0"
BN_VAR = "var = (centred * centred).sum((0,)) / n"
BN_STD = "std = ((var + self.eps) ** 0.5).reshape((1, d)).broadcast_to((n, d))"
LN_OUT = "return normalized * self.weight.broadcast_to((n, d)) + self.bias.broadcast_to((n, d))"
LSE_FORWARD = "return np.squeeze(np.log(total) + shift, axis=self.axes)"
LSE_SOFTMAX = "softmax = np.exp(a.data - node.data.reshape(kept))"
LSE_RETURN = ("return out_grad.reshape(kept).broadcast_to(a.shape) * Tensor(softmax, dtype=a.dtype, "
              "requires_grad=False)")
SOFTMAX_LOSS = "return (logsumexp(logits, (1,)) - picked).sum() / n"
SOFTMAX_SHIFT = "e = np.exp(a - a.max(axis=self.axis, keepdims=True))"
SOFTMAX_GRAD = "grad = s * (g - (g * s).sum(axis=self.axis, keepdims=True))"
BCE = "losses = relu(logits) - logits * targets + log(exp(-absolute(logits)) + 1)"
EMBEDDING_ADD = "np.add.at(grad, self.indices, out_grad.data)"
AFFINE_BIAS_GRAD = "g.sum(axis=0, keepdims=True)"
AFFINE_X_GRAD = """        if x.requires_grad:
            grad_x = g @ weight.data.T
        else:                       # a batch of data: no one uses its gradient, so skip its product
            grad_x = np.zeros_like(x.data)
"""
AFFINE_GRADS = """        grads = (grad_x, x.data.T @ g, g.sum(axis=0, keepdims=True))
        return tuple(Tensor(grad, dtype=t.dtype, requires_grad=False) for grad, t in zip(grads, node._inputs))"""
CE_SHIFTED = "shifted = logits - logits.max(axis=1, keepdims=True)"
CE_FORWARD = """        shifted = logits - logits.max(axis=1, keepdims=True)
        lse = np.log(np.exp(shifted).sum(axis=1))
        picked = shifted[np.arange(len(logits)), self.labels]
        return np.asarray((lse - picked).mean(), dtype=logits.dtype)"""
CE_SOFTMAX = "e = np.exp(z - z.max(axis=1, keepdims=True))"
CE_MINUS_ONE = "        grad[np.arange(len(z)), self.labels] -= 1\n"
CE_SCALE = "grad *= out_grad.data / len(z)"

MISTAKES = [
    # Module
    wrong("members_skips_dicts", "looks inside lists and tuples but not dicts", "module", MEMBERS_DICT, "",
          ["test_module_parameters", "test_module_children"]),
    wrong("members_any_tensor", "collects every Tensor, buffers included, as a parameter", "module",
          "if isinstance(value, (Parameter, Module)):", "if isinstance(value, (Tensor, Module)):",
          ["test_module_parameters"]),
    wrong("parameters_not_recursive", "lists the module's own parameters but not those of its sub-modules",
          "module", PARAMS_RECURSE, "for p in ([item] if isinstance(item, Parameter) else []):",
          ["test_module_parameters"]),
    wrong("parameters_one_level", "reads each sub-module's own attributes instead of asking it for its parameters(), "
          "so a sub-module's sub-modules are missed", "module", PARAMS_RECURSE,
          "for p in ([item] if isinstance(item, Parameter) else "
          "[q for q in members(vars(item)) if isinstance(q, Parameter)]):", ["test_module_parameters"]),
    wrong("eval_one_level", "sets each child's flag instead of calling its eval(), so grandchildren stay in training",
          "module", "child.eval()", "child.training = False", ["test_module_train_eval"]),
    wrong("train_one_level", "sets each child's flag instead of calling its train()", "module", "child.train()",
          "child.training = True", ["test_module_train_eval"]),
    wrong("children_descendants", "lists the children's children too", "module",
          "                found.append(item)\n",
          "                found.append(item)\n                found.extend(item.children())\n",
          ["test_module_children"]),
    wrong("parameters_duplicates", "lists a tied parameter twice", "module", "if id(p) not in seen:", "if True:",
          ["test_module_parameters"]),
    wrong("eval_not_recursive", "eval() switches only the module itself", "module", EVAL_BODY,
          "        self.training = False\n", ["test_module_train_eval"]),
    wrong("zero_grad_zeros", "fills gradients with zeros instead of forgetting them", "module",
          "p.grad = None", "p.grad = np.zeros_like(p.data)", ["test_module_zero_grad"]),
    wrong("call_passes_tuple", "hands forward the tuple of arguments as one argument", "module",
          "return self.forward(*args)", "return self.forward(args)", ["test_module_call"]),
    # Linear
    wrong("linear_bias_not_broadcast", "adds the (1, out) bias without broadcast_to: its gradient keeps the batch axis",
          "linear", BIAS_ADD, "out = out + self.bias", ["test_linear"]),
    wrong("linear_weight_plain_tensor", "stores the weight as a plain Tensor, which parameters() skips", "linear",
          WEIGHT, "self.weight = Tensor(rng.uniform(-bound, bound, (in_features, out_features)))",
          ["test_linear_init"]),
    wrong("linear_bias_zeros", "starts the bias at zeros instead of drawing it from the weight's range", "linear",
          "self.bias = Parameter(rng.uniform(-bound, bound, (1, out_features))) if bias else None",
          "self.bias = Parameter(np.zeros((1, out_features))) if bias else None", ["test_linear_init"]),
    wrong("linear_normal_init", "draws weights from a standard normal, far outside ±1/sqrt(in)", "linear",
          WEIGHT, "self.weight = Parameter(rng.standard_normal((in_features, out_features)))",
          ["test_linear_init"]),
    wrong("linear_torch_layout", "stores the weight as (out, in), as PyTorch does, and transposes in forward",
          "linear", WEIGHT, "self.weight = Parameter(rng.uniform(-bound, bound, (out_features, in_features)))",
          ["test_linear_init", "test_linear"]),
    # Activations
    wrong("relu_module_calls_itself", "ReLU.forward calls ReLU()(x), which is now the module itself", "activations",
          "return relu(x)", "return ReLU()(x)", ["test_activations"]),
    wrong("tanh_from_sigmoid_wrong", "tanh(x) as 2 sigmoid(x) - 1 (it is 2 sigmoid(2x) - 1)", "activations",
          "return tanh(x)", "return sigmoid(x) * 2 - 1", ["test_activations"]),
    # Sequential and Flatten
    wrong("sequential_reversed", "applies the modules last to first", "sequential",
          "for module in self.modules:", "for module in reversed(self.modules):", ["test_sequential"]),
    wrong("sequential_drops_output", "calls each module but never keeps its output", "sequential",
          "x = module(x)", "module(x)", ["test_sequential"]),
    wrong("flatten_three_axes_only", "multiplies exactly two trailing axes: right for images, wrong otherwise",
          "sequential", FLATTEN, "return x.reshape((x.shape[0], x.shape[1] * x.shape[2]))", ["test_flatten"]),
    wrong("flatten_everything", "flattens the batch axis too", "sequential", FLATTEN,
          "return x.reshape((int(np.prod(x.shape)),))", ["test_flatten"]),
    # Dropout
    wrong("dropout_no_scaling", "zeroes elements but does not scale the others by 1/(1-p)", "dropout",
          MASK, "scale = keep", ["test_dropout"]),
    wrong("dropout_keeps_with_p", "keeps each element with probability p instead of dropping it", "dropout",
          "keep = self.rng.random(x.shape) >= self.p", "keep = self.rng.random(x.shape) < self.p",
          ["test_dropout"]),
    wrong("dropout_unseeded", "ignores the seed", "dropout", "self.rng = np.random.default_rng(seed)",
          "self.rng = np.random.default_rng()", ["test_dropout"]),
    wrong("dropout_in_eval", "drops elements in evaluation mode too", "dropout",
          "if not self.training or self.p == 0:", "if self.p == 0:", ["test_dropout_eval"]),
    # BatchNorm1d
    wrong("batchnorm_unbiased_var", "divides the variance by N - 1", "batchnorm", BN_VAR,
          "var = (centred * centred).sum((0,)) / (n - 1)", ["test_batchnorm", "test_batchnorm_running"]),
    wrong("batchnorm_mean_over_features", "divides the batch sum by the number of features", "batchnorm",
          "mean = x.sum((0,)) / n", "mean = x.sum((0,)) / d", ["test_batchnorm", "test_batchnorm_running"]),
    wrong("batchnorm_eval_uses_batch", "uses the batch statistics in evaluation mode too", "batchnorm",
          "if self.training:", "if True:", ["test_batchnorm_running"]),
    wrong("batchnorm_eval_without_eps", "evaluation mode divides by the square root of the running variance alone",
          "batchnorm", "            var = Tensor(self.running_var, requires_grad=False)\n",
          "            std = Tensor(np.sqrt(self.running_var), requires_grad=False).reshape((1, d)).broadcast_to((n, d))\n"
          "            return centred / std * self.weight.broadcast_to((n, d)) + self.bias.broadcast_to((n, d))\n",
          ["test_batchnorm_running"]),
    wrong("batchnorm_momentum_swapped", "weights the old running value by momentum and the new one by 1 - momentum",
          "batchnorm", "self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean.data",
          "self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mean.data",
          ["test_batchnorm_running"]),
    # LayerNorm1d
    wrong("layernorm_uncentred_var", "uses the mean of x² as the variance, forgetting to subtract the mean",
          "layernorm", "var = ((centred * centred).sum((1,)) / d)", "var = ((x * x).sum((1,)) / d)",
          ["test_layernorm"]),
    wrong("layernorm_no_affine", "normalizes but forgets weight and bias", "layernorm", LN_OUT,
          "return normalized", ["test_layernorm"]),
    wrong("layernorm_eps_outside_sqrt", "adds eps to the standard deviation instead of to the variance", "layernorm",
          "normalized = centred / (var + self.eps) ** 0.5", "normalized = centred / (var ** 0.5 + self.eps)",
          ["test_layernorm"]),
    # MSELoss
    wrong("mse_sum", "sums the squared errors instead of averaging them", "mse_loss",
          "return (diff * diff).sum() / diff.size", "return (diff * diff).sum()", ["test_mse_loss"]),
    wrong("mse_over_batch_only", "divides by the batch size, not by the number of elements", "mse_loss",
          "return (diff * diff).sum() / diff.size", "return (diff * diff).sum() / diff.shape[0]",
          ["test_mse_loss"]),
    # LogSumExp
    wrong("logsumexp_naive_forward", "log(sum(exp(a))) without the shift: overflows near 1000", "logsumexp",
          LSE_FORWARD, "return np.log(np.exp(a).sum(axis=self.axes))",
          ["test_logsumexp_forward", "test_logsumexp_backward"]),
    wrong("logsumexp_global_max", "shifts by the max of the whole array, not of each reduced row: -inf on rows far below it",
          "logsumexp", "shift = a.max(axis=self.axes, keepdims=True)", "shift = a.max()",
          ["test_logsumexp_forward", "test_logsumexp_backward"]),
    wrong("logsumexp_backward_shifts_input", "shifts the input's own array in place before taking exp", "logsumexp",
          "softmax = np.exp(a.data - node.data.reshape(kept))",
          "shifted = a.data\n        shifted -= node.data.reshape(kept)\n        softmax = np.exp(shifted)",
          ["test_logsumexp_backward"]),
    wrong("logsumexp_keepdims", "keeps the reduced axes in the output", "logsumexp", LSE_FORWARD,
          "return np.log(total) + shift", ["test_logsumexp_forward", "test_logsumexp_backward"]),
    wrong("logsumexp_naive_softmax", "backward computes exp(a) / sum(exp(a)): nan near 1000", "logsumexp",
          LSE_SOFTMAX, "softmax = np.exp(a.data) / np.exp(a.data).sum(axis=tuple(reduced), keepdims=True)",
          ["test_logsumexp_backward"]),
    wrong("logsumexp_shift_not_lse", "subtracts the max instead of the log-sum-exp: the softmax is not normalized",
          "logsumexp", LSE_SOFTMAX, "softmax = np.exp(a.data - a.data.max(axis=tuple(reduced), keepdims=True))",
          ["test_logsumexp_backward"]),
    wrong("logsumexp_ignores_out_grad", "returns the softmax without multiplying by out_grad", "logsumexp",
          LSE_RETURN, "return Tensor(softmax, dtype=a.dtype, requires_grad=False)", ["test_logsumexp_backward"]),
    # SoftmaxLoss
    wrong("softmax_loss_sum", "sums the per-sample losses instead of averaging", "softmax_loss",
          SOFTMAX_LOSS, "return (logsumexp(logits, (1,)) - picked).sum()", ["test_softmax_loss"]),
    wrong("softmax_loss_naive", "log(sum(exp(logits))) with chapter 3's ops: overflows near 1000", "softmax_loss",
          SOFTMAX_LOSS, "return (log(exp(logits).sum((1,))) - picked).sum() / n", ["test_softmax_loss"]),
    wrong("softmax_loss_sign", "picked logit minus log-sum-exp: the log-probability, not its negative",
          "softmax_loss", SOFTMAX_LOSS, "return (picked - logsumexp(logits, (1,))).sum() / n", ["test_softmax_loss"]),
    # Softmax
    wrong("softmax_no_shift", "exp(a) / sum(exp(a)) without the shift: inf / inf = nan near 1000", "softmax",
          SOFTMAX_SHIFT, "e = np.exp(a)", ["test_softmax_forward", "test_softmax_backward"]),
    wrong("softmax_global_max", "shifts by the max of the whole array: rows far below it become 0 / 0", "softmax",
          SOFTMAX_SHIFT, "e = np.exp(a - a.max())", ["test_softmax_forward", "test_softmax_backward"]),
    wrong("softmax_backward_no_sum", "out_grad times s: the diagonal term only, without the sum along the axis",
          "softmax", SOFTMAX_GRAD, "grad = s * g", ["test_softmax_backward"]),
    wrong("softmax_backward_diagonal", "out_grad times s(1 - s), as if each output depended on its own input only",
          "softmax", SOFTMAX_GRAD, "grad = g * s * (1 - s)", ["test_softmax_backward"]),
    wrong("softmax_backward_ignores_out_grad", "the formula with ones in place of out_grad (zero everywhere)",
          "softmax", SOFTMAX_GRAD, "grad = s * (1 - s.sum(axis=self.axis, keepdims=True))", ["test_softmax_backward"]),
    wrong("softmax_backward_sum_all_axes", "sums out_grad * s over every axis, not along the softmax's axis",
          "softmax", SOFTMAX_GRAD, "grad = s * (g - (g * s).sum())", ["test_softmax_backward"]),
    # BCEWithLogitsLoss
    wrong("bce_naive_sigmoid_log", "sigmoid, then the log of p and of 1 - p: nan and inf for logits of ±50 and ±1000",
          "bce_loss", BCE, "p = sigmoid(logits)\n        losses = -(targets * log(p) + (1 - targets) * log(1 - p))",
          ["test_bce_loss"]),
    wrong("bce_one_sided", "z - z·y + log(1 + exp(-z)): stable for large z, exp overflows for z = -1000",
          "bce_loss", BCE, "losses = logits - logits * targets + log(exp(-logits) + 1)", ["test_bce_loss"]),
    wrong("bce_no_max_term", "forgets max(z, 0): right for negative logits only", "bce_loss", BCE,
          "losses = -(logits * targets) + log(exp(-absolute(logits)) + 1)", ["test_bce_loss"]),
    wrong("bce_sum", "sums the per-element losses instead of averaging", "bce_loss",
          "return losses.sum() / losses.size", "return losses.sum()", ["test_bce_loss"]),
    # Embedding
    wrong("embedding_assign_at_repeats", "indexed += in backward: a repeated id keeps one contribution, not their sum",
          "embedding", EMBEDDING_ADD, "grad[self.indices] += out_grad.data",
          ["test_embedding", "test_embedding_backward"]),
    wrong("embedding_counts_uses", "adds 1 per use instead of out_grad", "embedding", EMBEDDING_ADD,
          "np.add.at(grad, self.indices, 1.0)", ["test_embedding", "test_embedding_backward"]),
    wrong("embedding_through_data", "looks rows up in weight.data: right values, but no gradient reaches the weight",
          "embedding", "return EmbeddingLookup(indices)(self.weight)",
          "return Tensor(self.weight.data[np.asarray(indices)])", ["test_embedding"]),
    wrong("embedding_zeros_init", "starts every vector at zero", "embedding",
          "self.weight = Parameter(rng.standard_normal((num_embeddings, dim)))",
          "self.weight = Parameter(np.zeros((num_embeddings, dim)))", ["test_embedding"]),
    # eps only matters for a feature of small variance: the hidden tests shrink one batch's inputs; the running
    # statistics' scenario builds its layer with eps=0.1, so that its evaluation shows eps too
    wrong("batchnorm_no_eps", "forgets eps: divides by the square root of the variance alone", "batchnorm",
          BN_STD, "std = (var ** 0.5).reshape((1, d)).broadcast_to((n, d))", ["test_batchnorm", "test_batchnorm_running"]),
    wrong("batchnorm_eps_outside_sqrt", "adds eps to the standard deviation instead of to the variance", "batchnorm",
          BN_STD, "std = (var ** 0.5 + self.eps).reshape((1, d)).broadcast_to((n, d))", ["test_batchnorm", "test_batchnorm_running"]),
    wrong("logsumexp_squeeze_all", "squeezes every size-1 axis of the result, not only the reduced ones: a batch of "
          "one row loses its batch axis", "logsumexp", LSE_FORWARD, "return np.squeeze(np.log(total) + shift)",
          ["test_logsumexp_forward", "test_logsumexp_backward"]),
    # a few weights cannot tell a bound slightly too small, nor a normal from a uniform; wide layers can
    wrong("linear_bound_no_sqrt", "bounds the weights by 1/in_features, without the square root", "linear",
          "bound = 1 / np.sqrt(in_features)", "bound = 1 / in_features", ["test_linear_init"]),
    wrong("embedding_uniform_init", "draws the vectors uniformly in [-1, 1] instead of from a standard normal",
          "embedding", "self.weight = Parameter(rng.standard_normal((num_embeddings, dim)))",
          "self.weight = Parameter(rng.uniform(-1, 1, (num_embeddings, dim)))", ["test_embedding"]),
    # a second generator of the same seed starts the same draws again, so the bias is the weight's first
    # row; MSE over three axes; rows spread so wide that only a shift by the maximum keeps the softmax finite
    wrong("linear_two_generators", "draws the bias from a second generator made with the same seed", "linear",
          "self.bias = Parameter(rng.uniform(", "self.bias = Parameter(np.random.default_rng(seed).uniform(",
          ["test_linear_init"]),
    wrong("mse_rows_times_columns", "divides by rows × columns: the element count for one or two axes only",
          "mse_loss", "return (diff * diff).sum() / diff.size",
          "return (diff * diff).sum() / (diff.shape[0] * diff.shape[-1] if len(diff.shape) > 1 else diff.shape[0])",
          ["test_mse_loss"]),
    wrong("softmax_shift_mean", "shifts by each row's mean, not its maximum: exp overflows when a row spans more "
          "than about 709", "softmax", SOFTMAX_SHIFT, "e = np.exp(a - a.mean(axis=self.axis, keepdims=True))",
          ["test_softmax_forward", "test_softmax_backward"]),
    wrong("softmax_shift_min", "shifts by each row's minimum", "softmax", SOFTMAX_SHIFT,
          "e = np.exp(a - a.min(axis=self.axis, keepdims=True))", ["test_softmax_forward", "test_softmax_backward"]),
    wrong("batchnorm_running_from_tensors", "updates the running statistics from the batch's mean and variance "
          "Tensors, Tensor first, not from their .data: the running statistics become Tensors in the graph",
          "batchnorm", "self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean.data",
          "self.running_mean = self.momentum * mean + (1 - self.momentum) * self.running_mean",
          ["test_batchnorm_running"]),
    wrong("logsumexp_shift_mean", "shifts by the mean of each reduced row, not its maximum", "logsumexp",
          "shift = a.max(axis=self.axes, keepdims=True)", "shift = a.mean(axis=self.axes, keepdims=True)",
          ["test_logsumexp_forward", "test_logsumexp_backward"]),
    # Affine (fused)
    wrong("affine_bias_grad_not_summed", "hands the bias out_grad itself, one row per sample, instead of their sum",
          "affine", AFFINE_BIAS_GRAD, "g", ["test_affine_backward"]),
    wrong("affine_bias_grad_no_keepdims", "sums out_grad's rows into shape (out,), not the bias's (1, out)", "affine",
          AFFINE_BIAS_GRAD, "g.sum(axis=0)", ["test_affine_backward"]),
    wrong("affine_bias_grad_mean", "averages out_grad's rows for the bias instead of adding them up", "affine",
          AFFINE_BIAS_GRAD, "g.mean(axis=0, keepdims=True)", ["test_affine_backward"]),
    wrong("affine_weight_grad_transposed", "the weight's gradient as Gᵀ X, the transpose of Xᵀ G", "affine",
          "x.data.T @ g", "g.T @ x.data", ["test_affine_backward"]),
    wrong("affine_transpose_by_c_strides", "builds Xᵀ as a strided view with the strides of a C-ordered X: right "
          "for C-ordered inputs, a shuffle of a transposed or reversed view", "affine", "x.data.T @ g",
          "np.lib.stride_tricks.as_strided(x.data, x.shape[::-1], (x.data.itemsize, x.data.itemsize * x.shape[1])) @ g",
          ["test_affine_backward"]),
    wrong("affine_ignores_out_grad", "gradients of an all-ones out_grad, whatever out_grad is", "affine",
          "g = out_grad.data", "g = np.ones_like(out_grad.data)", ["test_affine_backward"]),
    wrong("affine_x_grad_always_zeros", "takes MatMul's shortcut for every x, also one that needs its gradient",
          "affine", AFFINE_X_GRAD, "        grad_x = np.zeros_like(x.data)\n", ["test_affine_backward"]),
    wrong("affine_shortcut_skips_weight_grad", "for a constant x, skips the weight's product (Xᵀ G) instead of x's: the "
          "weight gets zeros whenever the input is data", "affine",
          "        grads = (grad_x, x.data.T @ g, g.sum(axis=0, keepdims=True))",
          "        grads = (grad_x, x.data.T @ g if x.requires_grad else np.zeros_like(weight.data), "
          "g.sum(axis=0, keepdims=True))", ["test_affine_backward"]),
    wrong("affine_forward_no_bias", "forward leaves the bias out", "affine", "return x @ weight + bias",
          "return x @ weight", ["test_affine_forward", "test_affine_backward"]),
    # SoftmaxCrossEntropy (fused)
    wrong("cross_entropy_sum", "sums the per-sample losses, and their gradients, instead of averaging",
          "softmax_cross_entropy", "return np.asarray((lse - picked).mean(), dtype=logits.dtype)",
          "return np.asarray((lse - picked).sum(), dtype=logits.dtype)", ["test_softmax_cross_entropy_forward", "test_softmax_cross_entropy_backward"]),
    wrong("cross_entropy_backward_no_mean", "the gradient of a sum: softmax minus one-hot, not divided by N",
          "softmax_cross_entropy", CE_SCALE, "grad *= out_grad.data", ["test_softmax_cross_entropy_backward"]),
    wrong("cross_entropy_ignores_out_grad", "divides by N but never multiplies by out_grad",
          "softmax_cross_entropy", CE_SCALE, "grad /= len(z)", ["test_softmax_cross_entropy_backward"]),
    wrong("cross_entropy_backward_forgets_label", "the gradient is the softmax alone: the one-hot label is never "
          "subtracted", "softmax_cross_entropy", CE_MINUS_ONE, "", ["test_softmax_cross_entropy_backward"]),
    wrong("cross_entropy_no_shift", "exponentials of the logits themselves, which overflow near 1000",
          "softmax_cross_entropy", CE_SHIFTED, "shifted = logits", ["test_softmax_cross_entropy_forward", "test_softmax_cross_entropy_backward"]),
    wrong("cross_entropy_backward_no_shift", "the backward's softmax from exp(z) itself: nan for logits near 1000",
          "softmax_cross_entropy", CE_SOFTMAX, "e = np.exp(z)", ["test_softmax_cross_entropy_backward"]),
    wrong("cross_entropy_global_max", "shifts by the largest logit of the whole batch, not each row's",
          "softmax_cross_entropy", CE_SHIFTED, "shifted = logits - logits.max()", ["test_softmax_cross_entropy_forward", "test_softmax_cross_entropy_backward"]),
    wrong("cross_entropy_log_of_softmax", "the log of the label's softmax probability, which is 0 (and its log "
          "-inf) when the label's logit lies far below the row's maximum", "softmax_cross_entropy", CE_FORWARD,
          """        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
        return np.asarray(-np.log(probs[np.arange(len(logits)), self.labels]).mean(), dtype=logits.dtype)""",
          ["test_softmax_cross_entropy_forward", "test_softmax_cross_entropy_backward"]),
    # A setting of False where the code tests for None
    wrong("linear_bias_even_when_false", "tests `bias is not None`: bias=False still draws a bias", "linear",
          "self.bias = Parameter(rng.uniform(-bound, bound, (1, out_features))) if bias else None",
          "self.bias = Parameter(rng.uniform(-bound, bound, (1, out_features))) if bias is not None else None",
          ["test_linear_init", "test_linear"]),
    # A switch entered when it is already off
    wrong("module_eval_flips", "eval() flips the training flag instead of setting it to False: a second eval() "
          "switches training back on", "module", "        self.training = False", "        self.training = not self.training",
          ["test_module_train_eval"]),
    # State carried between calls: an op whose forward ran twice before one backward
    Mistake("softmax_output_kept_on_op", "forward keeps its output on the op (self.out), and backward reads it there "
            "whenever a forward has run: after a second forward, another input's softmax",
            (Edit("softmax", "        return e / e.sum(axis=self.axis, keepdims=True)",
                  "        self.out = e / e.sum(axis=self.axis, keepdims=True)\n        return self.out"),
             Edit("softmax", "        s, g = node.data, out_grad.data",
                  '        s, g = getattr(self, "out", node.data), out_grad.data')),
            ("test_softmax_backward",)),
    # What a loss leaves behind besides .grad: data wrapped as tensors that require a gradient
    wrong("mse_target_requires_grad", "wraps a NumPy target as Tensor(target), which requires a gradient by default: "
          "the value and pred's gradient are right, and backward computes a gradient for the data too", "mse_loss",
          "target = Tensor(target, requires_grad=False)", "target = Tensor(target)", ["test_mse_loss"]),
    wrong("bce_targets_require_grad", "wraps NumPy targets as Tensor(targets), which require a gradient by default",
          "bce_loss", "targets = Tensor(targets, requires_grad=False)", "targets = Tensor(targets)", ["test_bce_loss"]),
]

ALTERNATIVES = [
    right("parameters_through_children", "own parameters, then each child's, deduplicated with a dict", "module",
          PARAMS_BODY, """        found = {id(p): p for p in members(vars(self)) if isinstance(p, Parameter)}
        for child in self.children():
            for p in child.parameters():
                found.setdefault(id(p), p)
        return list(found.values())"""),
    right("linear_bias_by_matmul", "broadcast the bias with a column of ones: ones(N, 1) @ bias", "linear",
          BIAS_ADD, "out = out + Tensor(np.ones((x.shape[0], 1)), requires_grad=False) @ self.bias"),
    right("tanh_from_sigmoid", "tanh(x) = 2 sigmoid(2x) - 1", "activations", "return tanh(x)",
          "return sigmoid(x * 2) * 2 - 1"),
    right("flatten_minus_one", "reshape with -1", "sequential", FLATTEN, "return x.reshape((x.shape[0], -1))"),
    right("sequential_tuple", "keep the modules as the tuple they came in", "sequential",
          "self.modules = list(modules)", "self.modules = modules"),
    right("dropout_binomial", "the mask from rng.binomial", "dropout", "keep = self.rng.random(x.shape) >= self.p",
          "keep = self.rng.binomial(1, 1 - self.p, size=x.shape)"),
    right("dropout_plain_division", "divides by 1 - p with no case for p = 1, as the text writes it (no check drops "
          "everything)", "dropout", MASK, "scale = keep / (1 - self.p)"),
    right("batchnorm_moments", "variance as E[x²] - mean²", "batchnorm", BN_VAR,
          "var = (x * x).sum((0,)) / n - mean * mean"),
    right("layernorm_divide_by_std", "std first, then divide", "layernorm",
          "normalized = centred / (var + self.eps) ** 0.5", "std = (var + self.eps) ** 0.5\n        normalized = centred / std"),
    right("mse_power", "** 2 and the product of the shape", "mse_loss", "return (diff * diff).sum() / diff.size",
          "return (diff ** 2).sum() / float(np.prod(diff.shape))"),
    right("logsumexp_graph_backward", "the softmax built from Tensor operations (exp of a minus node)", "logsumexp",
          LSE_RETURN, "return out_grad.reshape(kept).broadcast_to(a.shape) * exp(a - node.reshape(kept).broadcast_to(a.shape))"),
    right("logsumexp_plain_max", "np.max and the squeezed shift added after the log", "logsumexp",
          "        shift = a.max(axis=self.axes, keepdims=True)\n        total = np.exp(a - shift).sum(axis=self.axes, keepdims=True)\n        " + LSE_FORWARD,
          "        shift = np.max(a, axis=self.axes, keepdims=True)\n        return np.log(np.sum(np.exp(a - shift), axis=self.axes)) + np.max(a, axis=self.axes)"),
    right("softmax_loss_class", "LogSumExp directly, mean as a product", "softmax_loss", SOFTMAX_LOSS,
          "return (LogSumExp((1,))(logits) - picked).sum() * (1 / n)"),
    right("softmax_forward_through_lse", "exp(a - logsumexp(a)) along the axis", "softmax",
          SOFTMAX_SHIFT + "\n        return e / e.sum(axis=self.axis, keepdims=True)",
          "shift = a.max(axis=self.axis, keepdims=True)\n"
          "        return np.exp(a - shift - np.log(np.exp(a - shift).sum(axis=self.axis, keepdims=True)))"),
    right("softmax_backward_tensor_ops", "the backward built from Tensor operations on node and out_grad", "softmax",
          "        s, g = node.data, out_grad.data\n        " + SOFTMAX_GRAD
          + "\n        return Tensor(grad, dtype=node.dtype, requires_grad=False)",
          "        kept = list(node.shape)\n        kept[self.axis] = 1\n"
          "        total = (out_grad * node).sum((self.axis,)).reshape(tuple(kept)).broadcast_to(node.shape)\n"
          "        return node * (out_grad - total)"),
    right("bce_relu_of_minus", "max(-z, 0) + z in place of max(z, 0)", "bce_loss", BCE,
          "losses = relu(-logits) + logits - logits * targets + log(exp(-absolute(logits)) + 1)"),
    right("embedding_one_hot", "one-hot rows @ weight, reshaped: MatMul's backward adds the repeats", "embedding",
          "return EmbeddingLookup(indices)(self.weight)",
          "picks = Tensor(np.eye(self.num_embeddings)[np.reshape(indices, -1)], requires_grad=False)\n"
          "        return (picks @ self.weight).reshape(np.shape(indices) + (self.dim,))"),
    right("logsumexp_backward_shifted_ratio", "backward's softmax as exp(a - max) / its sum, along the reduced axes",
          "logsumexp", LSE_SOFTMAX,
          "e = np.exp(a.data - a.data.max(axis=tuple(reduced), keepdims=True))\n"
          "        softmax = e / e.sum(axis=tuple(reduced), keepdims=True)"),
    right("softmax_backward_recomputes", "backward recomputes the softmax from the input instead of reading node",
          "softmax", "s, g = node.data, out_grad.data",
          "a = node._inputs[0].data\n        e = np.exp(a - a.max(axis=self.axis, keepdims=True))\n"
          "        s, g = e / e.sum(axis=self.axis, keepdims=True), out_grad.data"),
    right("embedding_backward_unique", "a loop over the distinct ids, each row the sum of its positions' out_grad",
          "embedding", EMBEDDING_ADD, "for r in np.unique(self.indices):\n"
          "            grad[r] = out_grad.data[self.indices == r].sum(0)"),
    right("embedding_backward_loop", "a loop over the positions, adding each out_grad row", "embedding", EMBEDDING_ADD,
          "for position in np.ndindex(self.indices.shape):\n"
          "            grad[self.indices[position]] += out_grad.data[position]"),
    right("affine_tensor_ops", "backward written with Tensor operations, the bias's gradient summed and reshaped",
          "affine", AFFINE_X_GRAD + AFFINE_GRADS, """        return (out_grad @ weight.transpose(), x.transpose() @ out_grad,
                out_grad.sum((0,)).reshape(bias.shape))"""),
    right("affine_no_shortcut", "always computes x's gradient", "affine", AFFINE_X_GRAD,
          "        grad_x = g @ weight.data.T\n"),
    right("cross_entropy_one_hot", "the label's logit and the gradient through a one-hot matrix",
          "softmax_cross_entropy", CE_FORWARD, """        shifted = logits - logits.max(axis=1, keepdims=True)
        one_hot = np.eye(logits.shape[1])[self.labels]
        per_row = np.log(np.exp(shifted).sum(axis=1)) - (shifted * one_hot).sum(axis=1)
        return np.asarray(per_row.mean(), dtype=logits.dtype)"""),
    right("cross_entropy_numpy_scalar", "returns the mean as NumPy gives it, a float64 scalar, not a 0-d array",
          "softmax_cross_entropy", "return np.asarray((lse - picked).mean(), dtype=logits.dtype)",
          "return (lse - picked).mean()"),
    right("cross_entropy_backward_one_hot", "subtracts a one-hot matrix from the softmax", "softmax_cross_entropy",
          CE_MINUS_ONE, "        grad = grad - np.eye(z.shape[1])[self.labels]\n"),
]

DEMO_PARTIAL = [
    "parameters_not_recursive", "linear_bias_not_broadcast", "dropout_no_scaling", "batchnorm_unbiased_var",
    "logsumexp_naive_softmax", "softmax_loss_sum",
]
