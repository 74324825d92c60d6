"""The rule behind each op's backward, said the way a teaching assistant would say it: which derivative,
evaluated where, never the line to type (a hint that can be pasted teaches nothing).

A hint that names a specific mistake comes from `checks/slips.py`, and only when the evidence matches.
"""

BACKWARD = {
    "Add": "a + b grows one-for-one with each input (both partial derivatives are 1), so each input's gradient "
           "is the upstream gradient, out_grad, as it is.",
    "Mul": "chain rule: each input's gradient is out_grad times the partial derivative of a·b with respect to "
           "that input, taken with the other input held constant.",
    "Sub": "the partial derivatives of a − b are +1 with respect to a and −1 with respect to b; each input's "
           "gradient is out_grad times its own partial derivative.",
    "Div": "chain rule with the partial derivatives of a / b: with respect to a it is 1/b; with respect to b, "
           "differentiate a·b⁻¹ by the power rule (mind the sign and the power of b).",
    "Pow": "a^b has two partial derivatives: with b held constant it is the power rule; with a held constant it is "
           "an exponential in b, whose derivative brings down ln(a). Each gradient is out_grad times its own.",
    "Negate": "the derivative of −a is −1 everywhere; the gradient is out_grad times it.",
    "Log": "d log(a)/da = 1/a, evaluated at the input a (node._inputs), not at the output node; "
           "the gradient is out_grad times it.",
    "Exp": "exp is its own derivative, so the local derivative is the output node you already computed; "
           "the gradient is out_grad times it.",
    "Sqrt": "d√a/da = 1/(2√a), and √a is the output node you already computed; the gradient is out_grad times it.",
    "Abs": "d|a|/da is the sign of the input: +1 where a > 0, −1 where a < 0; the gradient is out_grad times it.",
    "ReLU": "relu's derivative is 1 where the INPUT is positive and 0 elsewhere: the mask comes from the input, "
            "not from out_grad or the output; the gradient is out_grad times the mask.",
    "Sigmoid": "dσ/da = s(1 − s), where s = σ(a) is the OUTPUT (node), not the input; the gradient is out_grad times it.",
    "Tanh": "d tanh(a)/da = 1 − t², where t = tanh(a) is the OUTPUT (node), not the input; "
            "the gradient is out_grad times it.",
    "Reshape": "reshape moves no values, so the gradient is out_grad laid out in the INPUT's shape "
               "(self.shape is the output's shape).",
    "Transpose": "transpose moves values, so the gradient moves them back: transpose out_grad by the INVERSE "
                 "permutation, the one that sends every axis back to where it came from (a permutation is its own "
                 "inverse only when it is a swap); with axes=None the last two axes were swapped.",
    "Summation": "each summed element contributed once to its sum, so its gradient is that sum's out_grad: put the "
                 "summed axes back as size 1 (negative axes count from the end; an int is one axis), then "
                 "broadcast to the input's shape.",
    "BroadcastTo": "each input element was copied to many places of the output, so its gradient is the sum of "
                   "out_grad over those places: the prepended axes and the axes where the input had size 1; "
                   "then restore the input's shape.",
    "MatMul": "each gradient has its input's shape: out_grad (…, n, p) must meet b (…, m, p) to give a's "
              "(…, n, m), and a (…, n, m) must meet out_grad to give b's (…, m, p), which decides which factor is "
              "transposed (last two axes) and on which side it goes; when a batch axis was broadcast, sum it away.",
    "AddScalar": "a + c grows one-for-one with a: the gradient is out_grad as it is.",
    "MulScalar": "the derivative of c·a with respect to a is the constant c; the gradient is out_grad times it.",
    "DivScalar": "the derivative of a / c with respect to a is the constant 1/c; the gradient is out_grad times it.",
    "PowerScalar": "power rule: the derivative of aⁿ is n·aⁿ⁻¹, evaluated at the input a; "
                   "the gradient is out_grad times it.",
    "GetItem": "indexing copies the picked input elements to the output without changing them, so each input "
               "element's gradient is the sum of out_grad over the output places it was copied to, and 0 where it "
               "was not picked: start from zeros in the INPUT's shape.",
    "GELU": "product rule on 0.5·x·(1 + t), with t = tanh(z) and z = √(2/π)(x + 0.044715x³): the derivative is "
            "0.5(1 + t) + 0.5·x·(1 − t²)·dz/dx, and dz/dx = √(2/π)(1 + 3·0.044715x²) by the chain rule; all "
            "evaluated at the input x; the gradient is out_grad times it.",
    "LogSumExp": "the derivative of logsumexp over the reduced axes is softmax(a) = exp(a - logsumexp(a)) over those "
                 "axes, which stays finite where exp(a) alone overflows (large a); put the reduced axes back as "
                 "size 1 so out_grad broadcasts against it.",
    "Softmax": "each output s_i depends on every input along the axis through the shared denominator: ∂s_i/∂a_k = "
               "s_i([i = k] − s_k), with s the OUTPUT (node); the gradient of a_k adds out_grad_i times that over "
               "every output i of its row along the axis, which gives a diagonal term and one that involves the "
               "whole row of out_grad and s.",
    "Affine": "the three gradients are those of the MatMul and of the broadcast bias it fuses: each has its input's "
              "shape, which decides which factor meets out_grad and on which side, transposed; the bias row served "
              "every row of the batch, so its gradient adds up out_grad's rows and keeps the leading axis of size 1.",
    "SoftmaxCrossEntropy": "the gradient of each logit is softmax minus the one-hot label, divided by the batch size "
                           "N because the loss is a mean, and multiplied by out_grad; the softmax is computed from the "
                           "logits with each row's maximum shifted out, so it stays finite for logits near 1000.",
    "EmbeddingLookup": "a lookup copies row r of the weight to every position whose index is r, so row r's gradient "
                       "is the SUM of out_grad over all those positions (0 for rows never looked up), in the weight's "
                       "shape.",
    "Flip": "flipping moves values without changing them, so the gradient moves out_grad back: a flip along the "
            "same axes is its own inverse.",
    "Dilate": "each input value went to one position of the output and the inserted zeros depend on no input, so "
              "each input's gradient is out_grad at the position its value went to.",
    "Undilate": "undilating keeps some positions and drops the rest: a kept position's gradient is out_grad there, "
                "a dropped position's is 0 (it did not reach the output), in the input's shape.",
    "Conv": "a gradient adds up, over every place where an input value met a weight, out_grad at that output "
            "position times the value it was multiplied with there; padding and stride decide those places, and "
            "each gradient has its input's shape.",
    "MaxPool": "each window's output is its largest input, so out_grad flows to that input only; the other inputs "
               "of the window get 0, and an input in several windows adds up what each sends.",
}

DEFAULT = "work out the local derivative by hand on a 1-element input and compare it with what your backward returns."


def rule(name):
    """The rule for the op class called `name`."""
    return BACKWARD.get(name, DEFAULT)


def op_name(op):
    """The name of `op`'s class, or of the nearest course op it derives from (a student's subclass)."""
    for cls in type(op).__mro__:
        if cls.__name__ in BACKWARD:
            return cls.__name__
    return type(op).__name__


def backward_hint(op):
    """The rule for `op`, without evidence (when backward raised before returning a gradient)."""
    return rule(op_name(op))
