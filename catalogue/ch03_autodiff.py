"""Chapter 3's catalog of typical mistakes, and of correct answers written another way.

Each entry is an answer a student might really write, given as edits to the solved exercise cell,
with the test cells it must lose (`loses`; empty for a correct alternative). The tests grade them
with the real `nbgrader autograde` and require exactly those cells to lose their points. The demo's
"partial" student makes the mistakes named in DEMO_PARTIAL.
"""
from autograder.build.submissions import Edit, Mistake, right, wrong



MUL = "return out_grad * b, out_grad * a"
DIV = "return out_grad / b, -out_grad * a / (b * b)"
POW = "return out_grad * b * a ** (b - 1), out_grad * node * log(a)"
RELU = "return out_grad * Tensor(a.data > 0, dtype=a.dtype)"
ABS = "return out_grad * Tensor(np.sign(a.data), dtype=a.dtype)"
TRANSPOSE = "return out_grad.transpose(tuple(int(i) for i in np.argsort(self.axes)))"
SUMMATION = "return out_grad.reshape(kept).broadcast_to(shape)"
BROADCAST = "        grad = out_grad.sum(stretched) if stretched else out_grad\n        return grad.reshape(in_shape)"
MATMUL_AXES = "axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape)\n                                               if n == 1 and grad.shape[extra + i] != 1)"
POWER_SCALAR = "return out_grad * self.scalar * a ** (self.scalar - 1)"
BROADCAST_BODY = "        in_shape = node._inputs[0].shape\n        prepended" \
    " = len(self.shape) - len(in_shape)\n        stretched = tuple(i for i, n in enumerate(self.shape)\n" \
    "                          if i < prepended or (in_shape[i - prepended] == 1 and n != 1))\n" + BROADCAST
OPERATOR_BODIES = [f"    if isinstance(other, Tensor):\n        return {op}()(self, other)\n    return {scalar}(other)(self)"
                   for op, scalar in (("Mul", "MulScalar"), ("Div", "DivScalar"), ("Pow", "PowerScalar"))] + [
    "    if isinstance(other, Tensor):\n        return Sub()(self, other)\n    return AddScalar(-other)(self)",
    "    return self * other", "    return Negate()(self)", "    return AddScalar(other)(Negate()(self))",
    "    return MulScalar(other)(PowerScalar(-1)(self))", "    return MatMul()(self, other)",
    "    return MatMul()(self, other)", "    return Reshape(tuple(shape))(self)", "    return Transpose(axes)(self)",
    "    return Summation(axes)(self)", "    return BroadcastTo(tuple(shape))(self)"]
ENGINE_ACCUMULATE = "grads[key] = parent_grad if key not in grads else grads[key] + parent_grad"
ENGINE_TOPO = '''    order, visited = [], set()
    stack = [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        stack.extend((parent, False) for parent in node._inputs if id(parent) not in visited)
    return order'''

ENGINE_TESTS = ["test_engine_product", "test_engine_diamond", "test_engine_reuse",
                "test_engine_accumulation", "test_engine_explicit_grad", "test_engine_long_chain"]
ENGINE_ONES_TESTS = [t for t in ENGINE_TESTS if t != "test_engine_explicit_grad"]     # the graphs that start from ones
GETITEM = "np.add.at(grad, self.index, out_grad.data)"
GETITEM_BODY = ("        a = node._inputs[0]\n        grad = np.zeros(a.shape, dtype=np.float64)\n        " + GETITEM
                + "\n        return Tensor(grad, dtype=a.dtype)")
GELU_GRAD = "0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dz"
GELU_BODY = '''        x = node._inputs[0].data
        t = np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))
        dz = np.sqrt(2 / np.pi) * (1 + 3 * 0.044715 * x ** 2)
        return out_grad * Tensor(0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dz, dtype=node._inputs[0].dtype)'''
CONSTANT_CHECK = '''    if not self.requires_grad:
        raise RuntimeError("backward() on a tensor that does not require a gradient: it is a constant, or "
                           "was computed from constants only (or under no_grad), so there is no graph to walk")
'''
CONSTANT_CHECK_LATE = '''    if grad is None:
        if not self.requires_grad:
            raise RuntimeError("backward() on a tensor that does not require a gradient")
'''
NON_SCALAR_CHECK = '''        if self.data.size != 1:
            raise ValueError(f"backward() without a gradient needs a result of one element (a loss), but this "
                             f"one has shape {self.shape}: reduce it first (.sum() or a mean), or pass "
                             f"grad= of shape {self.shape}")
'''
NO_GRAD_BODY = '''    before = Function.grad_enabled
    Function.grad_enabled = False
    try:
        yield
    finally:
        Function.grad_enabled = before'''
START_FROM_GRAD = '''        grad = Tensor(np.ones_like(self.data), dtype=self.dtype, requires_grad=False)
    elif not isinstance(grad, Tensor):
        grad = Tensor(grad, dtype=self.dtype, requires_grad=False)'''

RECURSIVE_ENGINE_TOPO = '''    order, visited = [], set()

    def visit(node):
        if id(node) in visited:
            return
        visited.add(id(node))
        for parent in node._inputs:
            visit(parent)
        order.append(node)

    visit(root)
    return order'''

MISTAKES = [
    # Mul
    wrong("mul_ignores_out_grad", "returns the local derivatives without multiplying by out_grad",
          "mul", MUL, "return b, a", ["test_mul_backward"]),
    wrong("mul_same_input", "multiplies each input by itself instead of by the other input",
          "mul", MUL, "return out_grad * a, out_grad * b", ["test_mul_backward"]),
    wrong("mul_returns_arrays", "returns NumPy arrays instead of Tensors",
          "mul", MUL, "return out_grad.data * b.data, out_grad.data * a.data", ["test_mul_backward"]),
    # Sub
    wrong("sub_no_minus", "forgets the minus sign for b", "sub", "return out_grad, -out_grad",
          "return out_grad, out_grad", ["test_sub_backward"]),
    wrong("sub_minus_on_a", "puts the minus sign on the wrong input", "sub", "return out_grad, -out_grad",
          "return -out_grad, out_grad", ["test_sub_backward"]),
    # Div
    wrong("div_no_minus", "d(a/b)/db without its minus sign", "div", DIV,
          "return out_grad / b, out_grad * a / (b * b)", ["test_div_backward"]),
    wrong("div_no_square", "d(a/b)/db as -a/b instead of -a/b²", "div", DIV,
          "return out_grad / b, -out_grad * a / b", ["test_div_backward"]),
    # Negate
    wrong("negate_identity", "passes out_grad through unchanged", "negate", "return -out_grad",
          "return out_grad", ["test_negate_backward"]),
    wrong("negate_ignores_out_grad", "returns the local derivative -1 only",
          "negate", "return -out_grad", "return Tensor(-np.ones(out_grad.shape))", ["test_negate_backward"]),
    # Log
    wrong("log_uses_output", "divides by the output log(a) instead of the input a", "log",
          "return out_grad / node._inputs[0]", "return out_grad / node", ["test_log_backward"]),
    wrong("log_ignores_out_grad", "returns 1/a without out_grad", "log",
          "return out_grad / node._inputs[0]", "return Tensor(1 / node._inputs[0].data)", ["test_log_backward"]),
    # Exp
    wrong("exp_forward_out", "computes exp into its input array (out=a)", "exp", "return np.exp(a)",
          "return np.exp(a, out=a)", ["test_exp_forward"]),
    wrong("exp_ignores_out_grad", "returns exp(a) without out_grad", "exp", "return out_grad * node",
          "return node", ["test_exp_backward"]),
    wrong("exp_uses_input", "multiplies by the input instead of exp(input)", "exp", "return out_grad * node",
          "return out_grad * node._inputs[0]", ["test_exp_backward"]),
    # Pow
    wrong("pow_b_missing_factor", "d(a^b)/db as ln(a), forgetting the factor a^b", "pow", POW,
          "return out_grad * b * a ** (b - 1), out_grad * log(a)", ["test_pow_backward"]),
    wrong("pow_a_missing_b", "d(a^b)/da as a^(b-1), forgetting the factor b", "pow", POW,
          "return out_grad * a ** (b - 1), out_grad * node * log(a)", ["test_pow_backward"]),
    # Sqrt
    wrong("sqrt_no_two", "forgets the 2 in 1/(2 sqrt a)", "sqrt", "return out_grad / (node * 2)",
          "return out_grad / node", ["test_sqrt_backward"]),
    wrong("sqrt_uses_input", "divides by 2a instead of 2 sqrt(a)", "sqrt", "return out_grad / (node * 2)",
          "return out_grad / (node._inputs[0] * 2)", ["test_sqrt_backward"]),
    # Abs
    wrong("abs_identity", "treats |a| like a: passes out_grad through", "abs", ABS, "return out_grad",
          ["test_abs_backward"]),
    wrong("abs_ignores_out_grad", "returns sign(a) without out_grad", "abs", ABS,
          "return Tensor(np.sign(a.data))", ["test_abs_backward"]),
    wrong("abs_ratio", "|a| / a: sign(a) away from 0, but 0 / 0 = nan at the kink", "abs", ABS,
          "return out_grad * node / a", ["test_abs_backward"]),
    wrong("relu_mask_at_kink", "masks with a >= 0: the kink passes the gradient on", "relu", RELU,
          "return out_grad * Tensor(a.data >= 0, dtype=a.dtype)", ["test_relu_backward"]),
    # ReLU
    wrong("relu_forward_in_place", "zeroes the negative entries of its input array and returns it", "relu",
          "return np.maximum(a, 0)", "a[a < 0] = 0\n        return a", ["test_relu_forward"]),
    wrong("relu_mask_from_out_grad", "masks where out_grad > 0 instead of where the input > 0", "relu",
          RELU, "return out_grad * Tensor(out_grad.data > 0, dtype=a.dtype)", ["test_relu_backward"]),
    wrong("relu_times_output", "multiplies by relu(a) instead of by the 0/1 mask", "relu", RELU,
          "return out_grad * node", ["test_relu_backward"]),
    # Sigmoid
    wrong("sigmoid_forward_overflows", "forward as e^a / (1 + e^a): inf / inf for large inputs", "sigmoid",
          "return 1 / (1 + np.exp(-a))", "return np.exp(a) / (1 + np.exp(a))", ["test_sigmoid_forward"]),
    wrong("sigmoid_forgets_one_minus", "s instead of s(1 - s)", "sigmoid", "return out_grad * node * (1 - node)",
          "return out_grad * node", ["test_sigmoid_backward"]),
    wrong("sigmoid_uses_input", "a(1 - a) with the input instead of the output", "sigmoid",
          "return out_grad * node * (1 - node)",
          "a = node._inputs[0]\n        return out_grad * a * (1 - a)", ["test_sigmoid_backward"]),
    wrong("sigmoid_forward_sign", "forward computes 1/(1 + e^a): the sign of the exponent", "sigmoid",
          "return 1 / (1 + np.exp(-a))", "return 1 / (1 + np.exp(a))",
          ["test_sigmoid_forward", "test_sigmoid_backward"]),
    # Tanh
    wrong("tanh_forward_overflows", "forward as (e^a - e^-a) / (e^a + e^-a): inf / inf for large inputs", "tanh",
          "return np.tanh(a)", "return (np.exp(a) - np.exp(-a)) / (np.exp(a) + np.exp(-a))", ["test_tanh_forward"]),
    wrong("tanh_not_squared", "1 - t instead of 1 - t²", "tanh", "return out_grad * (1 - node * node)",
          "return out_grad * (1 - node)", ["test_tanh_backward"]),
    wrong("tanh_uses_input", "1 - a² with the input instead of the output", "tanh",
          "return out_grad * (1 - node * node)",
          "a = node._inputs[0]\n        return out_grad * (1 - a * a)", ["test_tanh_backward"]),
    # Reshape
    wrong("reshape_no_reshape", "returns out_grad in the output's shape", "reshape",
          "return out_grad.reshape(node._inputs[0].shape)", "return out_grad", ["test_reshape_backward"]),
    wrong("reshape_to_output_shape", "reshapes to self.shape, the output's shape", "reshape",
          "return out_grad.reshape(node._inputs[0].shape)", "return out_grad.reshape(self.shape)",
          ["test_reshape_backward"]),
    wrong("reshape_memory_order", "reshapes in memory order (order=\"A\"): right for C-ordered inputs, the numbers "
          "of a transpose's view are read column by column", "reshape", "return a.reshape(self.shape)",
          "return np.reshape(a, self.shape, order=\"A\")", ["test_reshape_forward"]),
    # Reached only through the Tensor's operators
    wrong("getitem_list_as_tuple", "Tensor.__getitem__ turns a list index into a tuple, so x[[0, 2, 0]] indexes three "
          "axes instead of picking three rows (GetItem itself is right)", "getitem", "    return GetItem(index)(self)",
          "    if isinstance(index, list):\n        index = tuple(index)\n    return GetItem(index)(self)",
          ["test_getitem_forward"]),
    wrong("operators_sum_axes_truthy", "Tensor.sum tests axes for truth, so a.sum(axes=0) sums every element",
          "operators", "    return Summation(axes)(self)",
          "    return Summation(axes)(self) if axes else Summation()(self)", ["test_operators"]),
    # Transpose
    wrong("transpose_same_axes", "applies the same permutation again instead of its inverse", "transpose",
          TRANSPOSE, "return out_grad.transpose(self.axes)", ["test_transpose_backward"]),
    wrong("transpose_ignores_axes", "always swaps the last two axes", "transpose", TRANSPOSE,
          "return out_grad.transpose()", ["test_transpose_backward"]),
    wrong("transpose_overwrites_axes", "keeps the inverse in self.axes: the op's next backward inverts it back",
          "transpose", TRANSPOSE, "self.axes = tuple(int(i) for i in np.argsort(self.axes))\n"
          "        return out_grad.transpose(self.axes)", ["test_transpose_backward"]),
    # Summation
    wrong("summation_negative_axes", "does not normalize negative axes", "summation",
          "summed = {axis % len(shape) for axis in axes}", "summed = set(axes)", ["test_summation_backward"]),
    wrong("summation_no_reshape", "broadcasts out_grad without putting the summed axes back",
          "summation", SUMMATION, "return out_grad.broadcast_to(shape)", ["test_summation_backward"]),
    wrong("summation_forward_keepdims", "forward keeps the summed axes (keepdims=True)", "summation",
          "return a.sum(axis=self.axes)", "return a.sum(axis=self.axes, keepdims=True)",
          ["test_summation_forward", "test_summation_backward"]),
    # BroadcastTo
    wrong("broadcast_only_prepended", "sums only over prepended axes, not over stretched ones", "broadcast_to",
          "if i < prepended or (in_shape[i - prepended] == 1 and n != 1))", "if i < prepended)",
          ["test_broadcast_to_backward"]),
    wrong("broadcast_no_reshape", "sums the right axes but does not restore the size-1 axes", "broadcast_to",
          BROADCAST, "        return out_grad.sum(stretched) if stretched else out_grad",
          ["test_broadcast_to_backward"]),
    # MatMul
    wrong("matmul_shortcut_no_sum", "in the shortcut for a constant a, forgets to sum b's gradient over the batch axes",
          "matmul", "sum_to_shape(a.transpose() @ out_grad, b.shape)\n        return (",
          "a.transpose() @ out_grad\n        return (", ["test_matmul_backward"]),
    wrong("matmul_sums_one_batch_axis", "sums a single prepended batch axis out of a gradient, not all of them",
          "matmul", "axes = tuple(range(extra)) + tuple(", "axes = tuple(range(min(extra, 1))) + tuple(",
          ["test_matmul_backward"]),
    wrong("matmul_no_batch_sum", "ignores batch broadcasting: gradients keep the batch axes", "matmul",
          "return (sum_to_shape(out_grad @ b.transpose(), a.shape),\n                sum_to_shape(a.transpose() @ out_grad, b.shape))",
          "return out_grad @ b.transpose(), a.transpose() @ out_grad", ["test_matmul_backward"]),
    wrong("matmul_only_leading_axes", "sums the prepended batch axes but not stretched size-1 batch axes",
          "matmul", MATMUL_AXES, "axes = tuple(range(extra))", ["test_matmul_backward"]),
    wrong("matmul_no_transpose", "multiplies out_grad by b instead of by b transposed", "matmul",
          "sum_to_shape(out_grad @ b.transpose(), a.shape)", "sum_to_shape(out_grad @ b, a.shape)",
          ["test_matmul_backward"]),
    # Scalar ops
    wrong("mul_scalar_forgets_scalar", "passes out_grad through, forgetting c", "mul_scalar",
          "return out_grad * self.scalar", "return out_grad", ["test_mul_scalar_backward"]),
    wrong("mul_scalar_ignores_out_grad", "returns c everywhere", "mul_scalar", "return out_grad * self.scalar",
          "return Tensor(np.full(node._inputs[0].shape, self.scalar))", ["test_mul_scalar_backward"]),
    wrong("div_scalar_multiplies", "multiplies by c instead of dividing", "div_scalar",
          "return out_grad / self.scalar", "return out_grad * self.scalar", ["test_div_scalar_backward"]),
    wrong("div_scalar_squared", "divides by c² (the quotient rule for the wrong variable)", "div_scalar",
          "return out_grad / self.scalar", "return out_grad / (self.scalar * self.scalar)", ["test_div_scalar_backward"]),
    wrong("power_scalar_no_minus_one", "n a^n instead of n a^(n-1)", "power_scalar", POWER_SCALAR,
          "return out_grad * self.scalar * a ** self.scalar", ["test_power_scalar_backward"]),
    wrong("power_scalar_no_n", "a^(n-1), forgetting the factor n", "power_scalar", POWER_SCALAR,
          "return out_grad * a ** (self.scalar - 1)", ["test_power_scalar_backward"]),
    wrong("power_scalar_divides_output", "n·a^n / a, reusing the output: 0 / 0 = nan at an input of exactly 0",
          "power_scalar", POWER_SCALAR, "return out_grad * self.scalar * node / a", ["test_power_scalar_backward"]),
    # Backwards with side effects: the right numbers, but an argument changed in place
    wrong("relu_zeroes_input", "clips the input in place to build the mask", "relu", RELU,
          "a.data[a.data < 0] = 0\n        return out_grad * Tensor(a.data > 0, dtype=a.dtype)", ["test_relu_backward"]),
    wrong("exp_scales_out_grad_in_place", "multiplies out_grad by exp(a) in place and returns it", "exp",
          "return out_grad * node", "out_grad.data *= node.data\n        return out_grad", ["test_exp_backward"]),
    wrong("sigmoid_overwrites_output", "turns the output s into s(1 - s) in place", "sigmoid",
          "return out_grad * node * (1 - node)", "node.data *= 1 - node.data\n        return out_grad * node",
          ["test_sigmoid_backward"]),
    # Engine
    wrong("engine_recursive_topo", "a recursive depth-first search: fine until 1,000 nodes deep", "engine",
          ENGINE_TOPO, RECURSIVE_ENGINE_TOPO, ["test_engine_long_chain"]),
    wrong("engine_recursive_raised_limit", "a recursive depth-first search under a recursion limit raised to 100,000, "
          "so that the long chain runs", "engine", ENGINE_TOPO,
          "    import sys\n\n    sys.setrecursionlimit(100_000)\n" + RECURSIVE_ENGINE_TOPO, ["test_engine_long_chain"]),
    wrong("engine_overwrites", "overwrites a parent's gradient instead of adding to it", "engine",
          ENGINE_ACCUMULATE, "grads[key] = parent_grad", ["test_engine_diamond", "test_engine_reuse"]),
    wrong("engine_grad_not_accumulated", "replaces .grad on every backward() call", "engine",
          "node.grad = np.copy(out_grad.data) if node.grad is None else node.grad + out_grad.data",
          "node.grad = np.copy(out_grad.data)", ["test_engine_accumulation"]),
    wrong("engine_ignores_grad_argument", "always starts from ones, ignoring grad", "engine", START_FROM_GRAD,
          "        pass\n    grad = Tensor(np.ones_like(self.data), dtype=self.dtype, requires_grad=False)",
          ["test_engine_explicit_grad"]),
    # The rules around the engine
    wrong("engine_backward_on_constants", "walks the graph of a tensor that requires no gradient, silently",
          "engine", CONSTANT_CHECK, "", ["test_engine_constant_error"]),
    wrong("engine_constant_check_late", "checks requires_grad only when no grad was passed", "engine",
          CONSTANT_CHECK + "    if grad is None:\n", CONSTANT_CHECK_LATE, ["test_engine_constant_error"]),
    wrong("engine_seeds_ones", "seeds ones for a result of several elements (the silent sum)", "engine",
          NON_SCALAR_CHECK, "", ["test_engine_non_scalar_error"]),
    wrong("engine_one_element_means_shape_empty", "takes only shape () for one element, refusing (1,) and (1, 1)",
          "engine", "        if self.data.size != 1:", "        if self.data.shape != ():",
          ["test_engine_non_scalar_error", "test_engine_long_chain"]),
    wrong("engine_non_scalar_first_axis", "counts the first axis, not the elements: a (1, 3) result goes through",
          "engine", "        if self.data.size != 1:", "        if self.data.ndim and self.shape[0] != 1:",
          ["test_engine_non_scalar_error"]),
    wrong("zero_grad_zeros", "fills .grad with zeros instead of forgetting it", "engine",
          "    self.grad = None", "    self.grad = np.zeros_like(self.data)", ["test_engine_zero_grad"]),
    wrong("no_grad_always_back_on", "switches recording on at the end instead of restoring what it was",
          "engine", "        Function.grad_enabled = before", "        Function.grad_enabled = True",
          ["test_engine_no_grad"]),
    wrong("no_grad_flips_switch", "flips the switch (not) on entry and back on exit: a block nested in another records",
          "engine", NO_GRAD_BODY, "    Function.grad_enabled = not Function.grad_enabled\n    try:\n        yield\n"
          "    finally:\n        Function.grad_enabled = not Function.grad_enabled", ["test_engine_no_grad"]),
    wrong("no_grad_no_finally", "restores the switch after the yield, which an exception skips", "engine",
          NO_GRAD_BODY, "    before = Function.grad_enabled\n    Function.grad_enabled = False\n    yield\n"
          "    Function.grad_enabled = before", ["test_engine_no_grad"]),
    # GetItem
    wrong("getitem_assigns", "writes out_grad into the zeros with an assignment: repeated picks keep one share",
          "getitem", GETITEM, "grad[self.index] = out_grad.data", ["test_getitem_backward"]),
    wrong("getitem_output_shape", "returns out_grad as it is, in the output's shape", "getitem",
          GETITEM_BODY, "        return out_grad", ["test_getitem_backward"]),
    wrong("getitem_ones", "puts ones at the picked places, forgetting out_grad", "getitem", GETITEM,
          "np.add.at(grad, self.index, 1.0)", ["test_getitem_backward"]),
    # GELU
    wrong("gelu_no_product_rule", "0.5 (1 + t) only: the product rule's second term is missing", "gelu",
          GELU_GRAD, "0.5 * (1 + t)", ["test_gelu_backward"]),
    wrong("gelu_no_inner_derivative", "d tanh(z)/dx as (1 - t²) √(2/π), without the derivative of the cubic",
          "gelu", GELU_GRAD, "0.5 * (1 + t) + 0.5 * x * (1 - t * t) * np.sqrt(2 / np.pi)", ["test_gelu_backward"]),
    wrong("gelu_forward_no_cube", "forward forgets the cubic term inside tanh", "gelu",
          "return 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))",
          "return 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * a))", ["test_gelu_forward", "test_gelu_backward"]),
    wrong("engine_preorder_topo", "appends each node when it is popped (pre-order), then reverses the list", "engine",
          ENGINE_TOPO, '''    order, visited = [], set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        order.append(node)
        stack.extend(node._inputs)
    return order[::-1]''', ["test_engine_diamond"]),
    wrong("engine_grads_to_constants", "sends gradients to inputs that do not require them", "engine",
          "            if parent.requires_grad:\n                key", "            if True:\n                key",
          ["test_engine_product"]),
    wrong("engine_grad_aliases", "stores out_grad.data itself in .grad, then adds to it in place", "engine",
          "node.grad = np.copy(out_grad.data) if node.grad is None else node.grad + out_grad.data",
          "if node.grad is None:\n            node.grad = out_grad.data\n        else:\n            node.grad += out_grad.data",
          ["test_engine_accumulation"]),
    wrong("engine_grad_no_copy", "stores the arriving gradient's array itself as .grad, no copy (adding out of place "
          "later): after (r + s).sum().backward(), r.grad is s.grad", "engine",
          "node.grad = np.copy(out_grad.data) if node.grad is None else node.grad + out_grad.data",
          "node.grad = out_grad.data if node.grad is None else node.grad + out_grad.data",
          ["test_engine_accumulation"]),
    wrong("engine_not_reversed", "walks the topological order forwards, leaves first", "engine",
          "for node in reversed(topological_order(self)):", "for node in topological_order(self):",
          ENGINE_TESTS + ["test_engine_non_scalar_error"]),
    # What an engine rule leaves behind besides .grad
    wrong("engine_explicit_grad_requires_grad", "wraps a NumPy grad in a Tensor that requires a gradient (the "
          "default): the values are right, and every backward records a graph of the gradients", "engine",
          "grad = Tensor(grad, dtype=self.dtype, requires_grad=False)", "grad = Tensor(grad, dtype=self.dtype)",
          ["test_engine_explicit_grad"]),
    wrong("engine_ones_require_grad", "starts from ones in a Tensor that requires a gradient", "engine",
          "grad = Tensor(np.ones_like(self.data), dtype=self.dtype, requires_grad=False)",
          "grad = Tensor(np.ones_like(self.data), dtype=self.dtype)", ENGINE_ONES_TESTS),
    wrong("engine_explicit_grad_keeps_array_dtype", "wraps a NumPy grad in a Tensor of the array's own dtype "
          "(float64) instead of the output's: the values are right, the first backward gets another dtype", "engine",
          "grad = Tensor(grad, dtype=self.dtype, requires_grad=False)",
          "grad = Tensor(grad, dtype=np.asarray(grad).dtype, requires_grad=False)", ["test_engine_explicit_grad"]),
    wrong("zero_grad_detaches", "forgets the graph as well as the gradient", "engine", "    self.grad = None\n",
          "    self.grad = None\n    self._op, self._inputs = None, ()\n", ["test_engine_zero_grad"]),
    # Operators
    wrong("rsub_backwards", "2 - a computed as a - 2", "operators",
          "return AddScalar(other)(Negate()(self))", "return AddScalar(-other)(self)",
          ["test_operators"]),          # Sigmoid's and Tanh's `1 - node` are checked with the course's operators
    wrong("rsub_number_as_tensor", "2 - a as Sub of a new Tensor(2), which requires a gradient: a constant's 2 - c "
          "records a graph", "operators", "return AddScalar(other)(Negate()(self))", "return Sub()(Tensor(other), self)",
          ["test_operators"]),
    wrong("truediv_scalar_as_tensor", "a / 2 sent to Div with a Python number", "operators",
          "    if isinstance(other, Tensor):\n        return Div()(self, other)\n    return DivScalar(other)(self)",
          "    return Div()(self, other)", ["test_operators"]),   # DivScalar's `out_grad / c` too
    Mistake("operators_not_started", "skips the operators exercise: every method still raises NotImplementedError",
            tuple(Edit("operators", body, "    raise NotImplementedError()") for body in OPERATOR_BODIES),
            ("test_operators",)),
    # Each op stands alone: a helper that is wrong or not written yet costs its own cells, not its callers'
    Mistake("broadcast_to_not_started", "has not reached BroadcastTo yet, which Summation.backward calls", (
        Edit("broadcast_to", "return np.broadcast_to(a, self.shape)", "raise NotImplementedError()"),
        Edit("broadcast_to", BROADCAST_BODY, "        raise NotImplementedError()")),
        ("test_broadcast_to_forward", "test_broadcast_to_backward")),
    wrong("broadcast_to_forward_tiles", "forward tiles the input instead of broadcasting it", "broadcast_to",
          "return np.broadcast_to(a, self.shape)", "return np.tile(a, (2,) * len(self.shape))",
          ["test_broadcast_to_forward", "test_broadcast_to_backward"]),
    wrong("log_forward_base_10", "forward takes log base 10, which Pow.backward calls through log(a)", "log",
          "return np.log(a)", "return np.log10(a)", ["test_log_forward", "test_log_backward"]),
    Mistake("engine_non_scalar_check_first", "checks grad=None's one element before requires_grad: a constant of "
            "several elements gets the ValueError, not the RuntimeError", (
        Edit("engine", CONSTANT_CHECK + "    if grad is None:\n", "    if grad is None:\n"),
        Edit("engine", "        grad = Tensor(grad, dtype=self.dtype, requires_grad=False)\n    grads = {id(self): grad}",
             "        grad = Tensor(grad, dtype=self.dtype, requires_grad=False)\n" + CONSTANT_CHECK
             + "    grads = {id(self): grad}")), ("test_engine_constant_error",)),
    wrong("engine_refuses_leaves", "refuses every tensor not made by an op (`_op is None`), so w.backward() on a leaf "
          "that requires a gradient raises", "engine", "    if not self.requires_grad:\n", "    if self._op is None:\n",
          ["test_engine_constant_error"]),
    wrong("matmul_shortcut_tests_b", "the shortcut tests b.requires_grad: a gets zeros whenever b is a constant",
          "matmul", "        if not a.requires_grad:", "        if not b.requires_grad:", ["test_matmul_backward"]),
    wrong("matmul_mirror_shortcut_shapes_swapped", "adds the mirror shortcut for a constant b, but sums a's gradient to "
          "b's shape and gives b zeros of a's: right only when a and b have one shape", "matmul",
          "        if not a.requires_grad:", "        if not b.requires_grad:\n            return sum_to_shape(out_grad @ "
          "b.transpose(), b.shape), Tensor(np.zeros_like(a.data), dtype=a.dtype)\n        if not a.requires_grad:",
          ["test_matmul_backward"]),
    wrong("mul_scalar_only_ints", "tests isinstance(other, int) for a number: a * 0.5 goes to Mul with a float",
          "operators", "    if isinstance(other, Tensor):\n        return Mul()(self, other)\n    return MulScalar(other)(self)",
          "    if isinstance(other, int):\n        return MulScalar(other)(self)\n    return Mul()(self, other)",
          ["test_operators"]),
    # elementwise ops at an input of exactly 0 or beyond ±700, and .grad and forward's values left to the engine
    wrong("mul_divides_output", "each slope from the output, node / a for b and node / b for a: 0 / 0 = nan where an "
          "input is exactly 0", "mul", MUL, "return out_grad * node / a, out_grad * node / b", ["test_mul_backward"]),
    wrong("div_a_from_output", "a's slope 1/b as node / a, reusing the output: 0 / 0 = nan at a = 0", "div", DIV,
          "return out_grad * node / a, -out_grad * a / (b * b)", ["test_div_backward"]),
    wrong("gelu_backward_half_from_output", "0.5 (1 + t) as node / x, reusing the output: 0 / 0 = nan at x = 0", "gelu",
          GELU_GRAD, "node.data / x + 0.5 * x * (1 - t * t) * dz", ["test_gelu_backward"]),
    wrong("sigmoid_backward_from_input", "the derivation's first form, e^-a / (1 + e^-a)², from the input: inf / inf = nan "
          "for a very negative input", "sigmoid", "return out_grad * node * (1 - node)",
          "e = exp(-node._inputs[0])\n        return out_grad * e / ((1 + e) * (1 + e))", ["test_sigmoid_backward"]),
    wrong("tanh_forward_negative_exponent", "forward as (1 - e^-2a) / (1 + e^-2a): inf / inf = nan for a very negative "
          "input", "tanh", "return np.tanh(a)", "return (1 - np.exp(-2 * a)) / (1 + np.exp(-2 * a))",
          ["test_tanh_forward"]),
    wrong("mul_accumulates_into_grads", "also adds each gradient into the input's .grad, as chapter 1's Value did: the "
          "engine adds it again", "mul", MUL, "for t, g in ((a, out_grad * b), (b, out_grad * a)):\n"
          "            t.grad = g.data if t.grad is None else t.grad + g.data\n        return out_grad * b, out_grad * a",
          ["test_mul_backward"]),
    Mistake("exp_output_kept_on_op", "forward keeps its output on the op (self.out) and backward reads it there, not "
            "from node", (Edit("exp", "return np.exp(a)", "self.out = np.exp(a)\n        return self.out"),
                          Edit("exp", "return out_grad * node", "return out_grad * Tensor(self.out)")),
            ("test_exp_backward",)),
    # A setting of 0 where the code tests truthiness
    wrong("summation_axes_zero_as_none", "tests `not self.axes` for a sum over every axis: axes=0 is falsy, so "
          "Summation(0) is taken for a sum of everything", "summation", "        if self.axes is None:",
          "        if not self.axes:", ["test_summation_backward"]),
    Mistake("exp_output_kept_on_op_or_node", "forward keeps its output on the op (self.out), and backward reads it "
            "there whenever a forward has run, node's otherwise: after a second forward, the wrong output",
            (Edit("exp", "return np.exp(a)", "self.out = np.exp(a)\n        return self.out"),
             Edit("exp", "return out_grad * node",
                  'return out_grad * Tensor(getattr(self, "out", node.data), requires_grad=False)')),
            ("test_exp_backward",)),
]

ALTERNATIVES = [
    right("mul_numpy", "NumPy inside, Tensors out", "mul", MUL,
          "return Tensor(out_grad.data * b.data), Tensor(out_grad.data * a.data)"),
    right("sub_times_minus_one", "-1 as a product", "sub", "return out_grad, -out_grad",
          "return out_grad * 1, out_grad * -1"),
    right("div_via_output", "d(a/b)/db = -(a/b)/b, reusing the output", "div", DIV,
          "return out_grad / b, -out_grad * node / b"),
    right("negate_times_minus_one", "out_grad * -1", "negate", "return -out_grad", "return out_grad * -1"),
    right("log_power", "1/a as a ** -1", "log", "return out_grad / node._inputs[0]",
          "return out_grad * node._inputs[0] ** -1"),
    right("exp_recomputed", "exp recomputed from the input", "exp", "return out_grad * node",
          "return out_grad * exp(node._inputs[0])"),
    right("pow_b_recomputed", "a ** b recomputed instead of node", "pow", POW,
          "return out_grad * b * a ** (b - 1), out_grad * a ** b * log(a)"),
    right("sqrt_half", "0.5 / sqrt(a)", "sqrt", "return out_grad / (node * 2)", "return out_grad * 0.5 / node"),
    right("abs_sign_by_comparisons", "the sign as (a > 0) - (a < 0), 0 at the kink", "abs", ABS,
          "return out_grad * Tensor((a.data > 0).astype(float) - (a.data < 0), dtype=a.dtype)"),
    right("relu_where", "np.where on the arrays", "relu", RELU,
          "return Tensor(np.where(a.data > 0, out_grad.data, 0.0))"),
    right("sigmoid_numpy", "s(1 - s) recomputed in NumPy", "sigmoid", "return out_grad * node * (1 - node)",
          "s = 1 / (1 + np.exp(-node._inputs[0].data))\n        return Tensor(out_grad.data * s * (1 - s))"),
    right("tanh_power", "1 - t ** 2", "tanh", "return out_grad * (1 - node * node)",
          "return out_grad * (1 - node ** 2)"),
    right("reshape_numpy", "reshape the array", "reshape", "return out_grad.reshape(node._inputs[0].shape)",
          "return Tensor(out_grad.data.reshape(node._inputs[0].data.shape))"),
    right("transpose_index_inverse", "the inverse permutation by list.index", "transpose", TRANSPOSE,
          "inverse = tuple(list(self.axes).index(i) for i in range(len(self.axes)))\n        return out_grad.transpose(inverse)"),
    right("transpose_keeps_inverse", "keeps the inverse on the op, in an attribute of its own: a second backward "
          "gives the same answer", "transpose", TRANSPOSE,
          "self.inverse = tuple(int(i) for i in np.argsort(self.axes))\n        return out_grad.transpose(self.inverse)"),
    right("engine_one_element_shapes", "refuses all but the text's shapes of one element, (), (1,) and (1, 1)",
          "engine", "        if self.data.size != 1:", "        if self.shape not in ((), (1,), (1, 1)):"),
    right("summation_expand_dims", "np.expand_dims, then np.broadcast_to", "summation", SUMMATION,
          "restored = np.expand_dims(out_grad.data, tuple(sorted(summed)))\n        return Tensor(np.broadcast_to(restored, shape).copy())"),
    right("broadcast_loops", "sum leading axes one by one, then size-1 axes with keepdims", "broadcast_to",
          BROADCAST, '''        g = out_grad.data
        while g.ndim > len(in_shape):
            g = g.sum(axis=0)
        for i, n in enumerate(in_shape):
            if n == 1:
                g = g.sum(axis=i, keepdims=True)
        return Tensor(g)'''),
    right("matmul_numpy", "np.swapaxes and an explicit reduction", "matmul",
          "return (sum_to_shape(out_grad @ b.transpose(), a.shape),\n                sum_to_shape(a.transpose() @ out_grad, b.shape))",
          '''ga = out_grad.data @ np.swapaxes(b.data, -1, -2)
        gb = np.swapaxes(a.data, -1, -2) @ out_grad.data
        return Tensor(sum_to_shape(Tensor(ga), a.shape).data), Tensor(sum_to_shape(Tensor(gb), b.shape).data)'''),
    right("mul_scalar_reflected", "c * out_grad", "mul_scalar", "return out_grad * self.scalar",
          "return self.scalar * out_grad"),
    right("div_scalar_reciprocal", "out_grad * (1 / c)", "div_scalar", "return out_grad / self.scalar",
          "return out_grad * (1 / self.scalar)"),
    right("power_scalar_numpy", "NumPy inside", "power_scalar", POWER_SCALAR,
          "return Tensor(self.scalar * np.power(a.data, self.scalar - 1) * out_grad.data)"),
    right("engine_kahn", "Kahn's algorithm: count children, release a node when all have reported", "engine",
          ENGINE_TOPO, '''    nodes, children, stack = {id(root): root}, {}, [root]
    while stack:
        node = stack.pop()
        for parent in node._inputs:
            children[id(parent)] = children.get(id(parent), 0) + 1
            if id(parent) not in nodes:
                nodes[id(parent)] = parent
                stack.append(parent)
    ready, backwards = [root], []
    while ready:
        node = ready.pop()
        backwards.append(node)
        for parent in node._inputs:
            children[id(parent)] -= 1
            if children[id(parent)] == 0:
                ready.append(parent)
    return backwards[::-1]'''),
    Mistake("engine_builtin_sum", "collects each node's shares in a list and adds them with Python's sum", (
        Edit("engine", """    grads = {id(self): grad}
    for node in reversed(topological_order(self)):
        out_grad = grads.pop(id(node), None)
        if out_grad is None:
            continue""", """    shares = {id(self): [grad]}
    for node in reversed(topological_order(self)):
        if id(node) not in shares:
            continue
        out_grad = sum(shares.pop(id(node)))"""),
        Edit("engine", "                key = id(parent)\n                grads[key] = parent_grad if key not in grads else grads[key] + parent_grad",
             "                shares.setdefault(id(parent), []).append(parent_grad)")), ()),
    right("getitem_loop", "a loop over the output's elements, each adding its share at its input position",
          "getitem", GETITEM, '''positions = np.arange(grad.size).reshape(grad.shape)[self.index]
        flat = grad.reshape(-1)
        for position, share in zip(np.ravel(positions), np.ravel(out_grad.data)):
            flat[position] += share'''),
    right("gelu_tensor_ops", "the derivative built from Tensor operations", "gelu", GELU_BODY,
          '''        x = node._inputs[0]
        t = tanh((x + x ** 3 * 0.044715) * float(np.sqrt(2 / np.pi)))
        dz = (x * x * (3 * 0.044715) + 1) * float(np.sqrt(2 / np.pi))
        return out_grad * ((t + 1) * 0.5 + x * 0.5 * (1 - t * t) * dz)'''),
    Mistake("no_grad_class", "no_grad as a class with __enter__ and __exit__", (
        Edit("engine", "@contextlib.contextmanager\ndef no_grad():", "def no_grad():"),
        Edit("engine", NO_GRAD_BODY, '''    return NoGrad()


class NoGrad:
    def __enter__(self):
        self.before = Function.grad_enabled
        Function.grad_enabled = False

    def __exit__(self, *exception):
        Function.grad_enabled = self.before
        return False''')), ()),
    right("operators_number_as_constant", "2 - a as Sub of a constant Tensor(2, requires_grad=False)", "operators",
          "return AddScalar(other)(Negate()(self))", "return Sub()(Tensor(other, requires_grad=False), self)"),
    right("operators_other_forms", "__rsub__ as -a + c and __rtruediv__ through Tensor division", "operators",
          "return AddScalar(other)(Negate()(self))", "return -self + other"),
    right("matmul_shortcut_both", "the shortcut for a constant a, and its mirror for a constant b", "matmul",
          "        if not a.requires_grad:", "        if not b.requires_grad:\n            return sum_to_shape(out_grad @ "
          "b.transpose(), a.shape), Tensor(np.zeros_like(b.data), dtype=b.dtype)\n        if not a.requires_grad:"),
    right("operators_numbers_by_type", "numbers told by their type, int or float; anything else goes to Mul",
          "operators", "    if isinstance(other, Tensor):\n        return Mul()(self, other)\n    return MulScalar(other)(self)",
          "    if isinstance(other, (int, float)):\n        return MulScalar(other)(self)\n    return Mul()(self, other)"),
    # right answers near the elementwise ops' edges
    right("mul_returns_list", "the two gradients in a list", "mul", MUL, "return [out_grad * b, out_grad * a]"),
    right("sigmoid_backward_expanded", "s - s², from the output", "sigmoid", "return out_grad * node * (1 - node)",
          "return out_grad * node - out_grad * node * node"),
    right("tanh_forward_from_sigmoid", "2σ(2a) - 1, whose only exponential is of -2a", "tanh", "return np.tanh(a)",
          "return 2 / (1 + np.exp(-2 * a)) - 1"),
    right("exp_output_kept_read_from_node", "forward keeps its output on the op, but backward reads node", "exp",
          "return np.exp(a)", "self.out = np.exp(a)\n        return self.out"),
]

DEMO_PARTIAL = [
    "mul_ignores_out_grad", "log_uses_output", "sigmoid_uses_input", "transpose_same_axes",
    "summation_negative_axes", "broadcast_only_prepended", "matmul_no_batch_sum", "engine_recursive_topo",
]
