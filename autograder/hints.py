"""The usual mistake for each op, said the way a teaching assistant would say it."""

BACKWARD = {
    "Add": "both inputs get out_grad unchanged.",
    "Mul": "each input's gradient is out_grad times the OTHER input: (out_grad * b, out_grad * a).",
    "Sub": "a - b: a gets out_grad, b gets -out_grad. A missing minus sign is the usual slip.",
    "Div": "a / b: a gets out_grad / b, b gets -out_grad * a / b**2 (mind the minus and the square).",
    "Pow": "a ** b: a gets out_grad * b * a**(b-1); b gets out_grad * a**b * log(a).",
    "Negate": "-a: the gradient is -out_grad.",
    "Log": "log(a): the gradient is out_grad / a, with a the INPUT (node._inputs[0]), not the output node.",
    "Exp": "exp(a) is its own derivative: out_grad * exp(a), and exp(a) is the output, `node`.",
    "Sqrt": "sqrt(a): the gradient is out_grad / (2 * sqrt(a)), and sqrt(a) is the output, `node`.",
    "Abs": "|a|: the gradient is out_grad * sign(a), with a the input.",
    "ReLU": "relu(a): out_grad where the INPUT is positive, 0 elsewhere; the mask comes from the input, not from out_grad.",
    "Sigmoid": "sigmoid: out_grad * s * (1 - s), where s is the OUTPUT (node), not the input.",
    "Tanh": "tanh: out_grad * (1 - t**2), where t is the OUTPUT (node).",
    "Reshape": "reshape out_grad back to the input's shape: node._inputs[0].shape.",
    "Transpose": "undo the permutation: transpose out_grad with np.argsort(axes) (a permutation is not always its own inverse); with axes=None swap the last two axes again.",
    "Summation": "put the summed axes back as size 1 (negative axes count from the end; an int is one axis), then broadcast to the input's shape.",
    "BroadcastTo": "did you sum over the broadcast axes? Sum out_grad over the axes that were prepended and over those where the input had size 1, then reshape to the input's shape.",
    "MatMul": "grad_a = out_grad @ b^T and grad_b = a^T @ out_grad (transpose the last two axes); when a batch axis was broadcast, sum it away so each gradient has its input's shape.",
    "AddScalar": "a + c: the gradient is out_grad unchanged.",
    "MulScalar": "a * c: the gradient is out_grad * c.",
    "DivScalar": "a / c: the gradient is out_grad / c.",
    "PowerScalar": "a ** n: the gradient is out_grad * n * a**(n-1).",
    "LogSumExp": "the gradient is out_grad (with the reduced axes put back as size 1, then broadcast) times "
                 "softmax(a) = exp(a - logsumexp(a)); exp(a) / sum(exp(a)) overflows for large a.",
}


def backward_hint(op):
    """The hint for `op`'s class, or for the nearest course op it derives from."""
    for cls in type(op).__mro__:
        if cls.__name__ in BACKWARD:
            return BACKWARD[cls.__name__]
    return "compare your local derivative with one you work out by hand on a 1-element input."
