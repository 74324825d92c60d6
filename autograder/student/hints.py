"""The rule behind each op's backward, said the way a teaching assistant would say it: which derivative,
evaluated where, never the line to type (a hint that can be pasted teaches nothing).

A hint that names a specific mistake comes from `checks/slips.py`, and only when the evidence matches.
Chapter 3's ops keep their rules in their records (`checks/ch03_autodiff_op_specs.py`); the later chapters' are here.
"""

BACKWARD = {
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


def rules():
    """{op class name: the rule of its backward}, for every op the course checks."""
    # Imported here, not above: the checks import this module while their package is being imported.
    from autograder.student.checks.ch03_autodiff_op_specs import OPS
    return {**{name: op.hint for name, op in OPS.items()}, **BACKWARD}


def rule(name):
    """The rule for the op class called `name`."""
    return rules().get(name, DEFAULT)


def op_name(op):
    """The name of `op`'s class, or of the nearest course op it derives from (a student's subclass)."""
    known = rules()
    for cls in type(op).__mro__:
        if cls.__name__ in known:
            return cls.__name__
    return type(op).__name__


def backward_hint(op):
    """The rule for `op`, without evidence (when backward raised before returning a gradient)."""
    return rule(op_name(op))
