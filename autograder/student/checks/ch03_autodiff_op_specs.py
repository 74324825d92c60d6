"""Chapter 3's ops, one record each (`op_specs.Op`): settings, a checked call on safe inputs, the backward's rule
and its known slips. A new op of the chapter is one entry here; its forward is given here too, unless it is one
of the kernel's stand-ins (`ch03_autodiff_course_ops.FORWARDS`, ops the Tensor operators build).

The slips' formulas read a `slips.Case`: `c.arrays` the float64 inputs, `c.out` the output, `u(c)` the out_grad,
`c.params` the settings by name.
"""
import numpy as np

from autograder.student.checks.op_specs import Op, Slip, u


def swap_last(x):
    return np.swapaxes(x, -1, -2)


def stretched_axes(c):
    """BroadcastTo's axes where input values were copied: the prepended ones and those of size 1 stretched."""
    shape, in_shape = tuple(c.params["shape"]), c.arrays[0].shape
    extra = len(shape) - len(in_shape)
    return tuple(i for i, n in enumerate(shape) if i < extra or (in_shape[i - extra] == 1 and n != 1))


def leading_summed(grad, ndim):
    extra = grad.ndim - ndim
    return grad.sum(axis=tuple(range(extra))) if extra > 0 else grad


def summed_to(grad, shape):
    """`grad` summed over the batch axes that broadcasting prepended or stretched, to `shape` (MatMul's inputs)."""
    while grad.ndim > len(shape):                       # the axes broadcasting put in front
        grad = grad.sum(axis=0)
    stretched = tuple(axis for axis, size in enumerate(shape) if size == 1 != grad.shape[axis])
    return grad.sum(axis=stretched, keepdims=True)


def assigned(c):
    """GetItem's backward written with an assignment: at an element picked several times, the last share only."""
    grad = np.zeros(c.arrays[0].shape)
    grad[c.params["index"]] = u(c)
    return [grad]


GELU_SCALE, GELU_CUBIC = np.sqrt(2 / np.pi), 0.044715     # the tanh approximation's constants


def gelu_parts(c):
    """GELU's pieces at the input x: (x, t = tanh(z), dz/dx), for the tanh approximation."""
    x = c.arrays[0]
    return x, np.tanh(GELU_SCALE * x * (1 + GELU_CUBIC * x * x)), GELU_SCALE * (1 + 3 * GELU_CUBIC * x * x)


OPS = {
    "Add": Op(
        shapes=((2, 3), (2, 3)),
        hint="a + b grows one-for-one with each input (both partial derivatives are 1), so each input's gradient "
             "is the upstream gradient, out_grad, as it is."),
    "Sub": Op(
        shapes=((3,), (3,)),
        hint="the partial derivatives of a − b are +1 with respect to a and −1 with respect to b; each input's "
             "gradient is out_grad times its own partial derivative.",
        slips=(
            Slip("b's gradient is out_grad with a plus sign, but a − b falls as b grows: its derivative with respect "
                 "to b is −1.", lambda c: [u(c), u(c)]),
            Slip("the signs are the wrong way round: a − b grows with a (derivative +1) and falls with b (−1).",
                 lambda c: [-u(c), u(c)]),
        )),
    "Mul": Op(
        shapes=((2, 3), (2, 3)),
        hint="chain rule: each input's gradient is out_grad times the partial derivative of a·b with respect to "
             "that input, taken with the other input held constant.",
        slips=(
            Slip("each input's gradient is out_grad times that same input; with the other input held constant, "
                 "the derivative of a·b with respect to a is the other input (and the other way round).",
                 lambda c: [u(c) * c.arrays[0], u(c) * c.arrays[1]]),
        )),
    "Div": Op(
        shapes=((2, 3), (2, 3)), domain=("real", "nonzero"),
        hint="chain rule with the partial derivatives of a / b: with respect to a it is 1/b; with respect to b, "
             "differentiate a·b⁻¹ by the power rule (mind the sign and the power of b).",
        slips=(
            Slip("b's gradient has the wrong sign: the derivative of a / b with respect to b carries a minus sign "
                 "(for a > 0, a / b falls as b grows).", lambda c: [u(c) / c.arrays[1], u(c) * c.arrays[0] / c.arrays[1] ** 2]),
            Slip("b's gradient divides by b once; by the power rule, the derivative of a·b⁻¹ with respect to b has b "
                 "squared in its denominator.", lambda c: [u(c) / c.arrays[1], -u(c) * c.arrays[0] / c.arrays[1]]),
        )),
    "Pow": Op(
        shapes=((2, 3), (2, 3)), domain=("positive", "real"),
        hint="a^b has two partial derivatives: with b held constant it is the power rule; with a held constant it is "
             "an exponential in b, whose derivative brings down ln(a). Each gradient is out_grad times its own.",
        slips=(
            Slip("b's gradient is out_grad times ln(a) alone: the derivative of a^b with respect to b also keeps the "
                 "factor a^b, the output.",
                 lambda c: [u(c) * c.arrays[1] * c.arrays[0] ** (c.arrays[1] - 1), u(c) * np.log(c.arrays[0])]),
            Slip("a's gradient lacks the factor b: the power rule brings the exponent down in front.",
                 lambda c: [u(c) * c.arrays[0] ** (c.arrays[1] - 1), u(c) * c.out * np.log(c.arrays[0])]),
        )),
    "Negate": Op(
        shapes=((4,),),
        hint="the derivative of −a is −1 everywhere; the gradient is out_grad times it.",
        slips=(
            Slip("your gradient is out_grad unchanged, but −a falls as a grows: its derivative is −1.", lambda c: [u(c)]),
        )),
    "Log": Op(
        shapes=((2, 3),), domain="positive",
        hint="d log(a)/da = 1/a, evaluated at the input a (node._inputs), not at the output node; "
             "the gradient is out_grad times it.",
        slips=(
            Slip("your gradient divides out_grad by the output log(a); the derivative 1/a is evaluated at the "
                 "input a.", lambda c: [u(c) / c.out]),
        )),
    "Exp": Op(
        shapes=((2, 3),),
        hint="exp is its own derivative, so the local derivative is the output node you already computed; "
             "the gradient is out_grad times it.",
        slips=(
            Slip("your gradient multiplies out_grad by the input a; the derivative of exp is exp(a), the output.",
                 lambda c: [u(c) * c.arrays[0]]),
        )),
    "Sqrt": Op(
        shapes=((2, 3),), domain="positive",
        hint="d√a/da = 1/(2√a), and √a is the output node you already computed; the gradient is out_grad times it.",
        slips=(
            Slip("your gradient divides out_grad by √a, missing the factor 1/2 of the derivative 1/(2√a).",
                 lambda c: [u(c) / c.out]),
            Slip("your gradient divides out_grad by 2a, twice the input; the derivative 1/(2√a) has the output √a "
                 "in its denominator.", lambda c: [u(c) / (2 * c.arrays[0])]),
        )),
    "Abs": Op(
        shapes=((2, 3),), domain="nonzero",
        hint="d|a|/da is the sign of the input: +1 where a > 0, −1 where a < 0; the gradient is out_grad times it.",
        slips=(
            Slip("your gradient is out_grad unchanged, also where the input is negative; there |a| falls as a grows, "
                 "so its derivative is −1.", lambda c: [u(c)]),
        )),
    "ReLU": Op(
        shapes=((2, 3),), domain="nonzero",
        hint="relu's derivative is 1 where the INPUT is positive and 0 elsewhere: the mask comes from the input, "
             "not from out_grad or the output; the gradient is out_grad times the mask.",
        slips=(
            Slip("your gradient is out_grad unchanged, also where the input is negative; relu's derivative is 0 "
                 "there: the mask comes from the sign of the input, not from out_grad.", lambda c: [u(c)]),
            Slip("your mask keeps the places where out_grad is positive; relu's derivative depends on the input "
                 "only: 1 where the input is positive, 0 elsewhere.", lambda c: [u(c) * (u(c) > 0)]),
            Slip("your gradient is out_grad times the output relu(a); relu's derivative is 1 or 0, not the output's "
                 "value.", lambda c: [u(c) * c.out]),
        )),
    "Sigmoid": Op(
        shapes=((2, 3),),
        from_output="s(1 − s), with s the output (node)",
        hint="dσ/da = s(1 − s), where s = σ(a) is the OUTPUT (node), not the input; the gradient is out_grad times it.",
        slips=(
            Slip("your gradient is out_grad times s(1 − s) with s the input a; s is the output σ(a).",
                 lambda c: [u(c) * c.arrays[0] * (1 - c.arrays[0])]),
            Slip("your gradient is out_grad times s only; the derivative of σ is s(1 − s).", lambda c: [u(c) * c.out]),
        )),
    "Tanh": Op(
        shapes=((2, 3),),
        from_output="1 − t², with t the output (node)",
        hint="d tanh(a)/da = 1 − t², where t = tanh(a) is the OUTPUT (node), not the input; "
             "the gradient is out_grad times it.",
        slips=(
            Slip("your gradient is out_grad times 1 − a² with a the input; t in 1 − t² is the output tanh(a).",
                 lambda c: [u(c) * (1 - c.arrays[0] ** 2)]),
            Slip("your gradient is out_grad times 1 − t; the derivative of tanh is 1 − t², t squared.",
                 lambda c: [u(c) * (1 - c.out)]),
        )),
    "MatMul": Op(
        shapes=((2, 1, 2, 3), (3, 3, 2)),
        hint="each gradient has its input's shape: out_grad (…, n, p) must meet b (…, m, p) to give a's "
             "(…, n, m), and a (…, n, m) must meet out_grad to give b's (…, m, p), which decides which factor is "
             "transposed (last two axes) and on which side it goes; when a batch axis was broadcast, sum it away.",
        slips=(
            Slip("your gradients keep the batch axes that broadcasting added or stretched; sum them away so each "
                 "gradient has its input's shape.",
                 lambda c: [u(c) @ swap_last(c.arrays[1]), swap_last(c.arrays[0]) @ u(c)]),
            Slip("your gradients sum only the prepended batch axes; batch axes of size 1 that broadcasting stretched "
                 "must be summed too (keeping their size 1).",
                 lambda c: [leading_summed(u(c) @ swap_last(c.arrays[1]), c.arrays[0].ndim),
                            leading_summed(swap_last(c.arrays[0]) @ u(c), c.arrays[1].ndim)]),
            Slip("your gradient for a is all zeros, and your gradient for b is right. Zeros are the gradient only of an a "
                 "that requires none (the shortcut for a constant a, decided by a's own requires_grad); here a requires a "
                 "gradient, so it needs out_grad @ bᵀ, even when b is the constant.",
                 lambda c: [np.zeros(c.arrays[0].shape), summed_to(swap_last(c.arrays[0]) @ u(c), c.arrays[1].shape)]),
        )),
    "AddScalar": Op(
        settings=("scalar",),
        args=(1.5,), shapes=((3,),),
        hint="a + c grows one-for-one with a: the gradient is out_grad as it is."),
    "MulScalar": Op(
        settings=("scalar",),
        args=(-2.0,), shapes=((3,),),
        hint="the derivative of c·a with respect to a is the constant c; the gradient is out_grad times it.",
        slips=(
            Slip("your gradient is out_grad unchanged; the derivative of c·a is the constant c.", lambda c: [u(c)]),
        )),
    "DivScalar": Op(
        settings=("scalar",),
        args=(0.3,), shapes=((3,),),
        hint="the derivative of a / c with respect to a is the constant 1/c; the gradient is out_grad times it.",
        slips=(
            Slip("your gradient multiplies out_grad by c; the derivative of a / c with respect to a is 1/c.",
                 lambda c: [u(c) * c.params["scalar"]]),
            Slip("your gradient divides out_grad by c²; with respect to a (c is a constant) the derivative of a / c "
                 "is 1/c.", lambda c: [u(c) / c.params["scalar"] ** 2]),
        )),
    "PowerScalar": Op(
        settings=("scalar",),
        args=(0.5,), shapes=((3,),), domain="positive",
        hint="power rule: the derivative of aⁿ is n·aⁿ⁻¹, evaluated at the input a; "
             "the gradient is out_grad times it.",
        slips=(
            Slip("your gradient uses the power n; the power rule lowers it by one, to n − 1.",
                 lambda c: [u(c) * c.params["scalar"] * c.arrays[0] ** c.params["scalar"]]),
            Slip("your gradient lacks the factor n: the power rule brings the exponent down in front.",
                 lambda c: [u(c) * c.arrays[0] ** (c.params["scalar"] - 1)]),
        )),
    "Reshape": Op(
        settings=("shape",),
        args=((4, 6),), shapes=((2, 3, 4),),
        hint="reshape moves no values, so the gradient is out_grad laid out in the INPUT's shape "
             "(self.shape is the output's shape).",
        slips=(
            Slip("your gradient is out_grad in the output's shape; each input's gradient has that input's shape.",
                 lambda c: [u(c)]),
        )),
    "Transpose": Op(
        settings=("axes",),
        args=((1, 2, 0),), shapes=((3, 2, 5),),
        hint="transpose moves values, so the gradient moves them back: transpose out_grad by the INVERSE "
             "permutation, the one that sends every axis back to where it came from (a permutation is its own "
             "inverse only when it is a swap); with axes=None the last two axes were swapped.",
        slips=(
            Slip("your gradient applies the same permutation again; only its inverse sends every axis back where it "
                 "came from (the two differ for any permutation that is not a swap).",
                 lambda c: [u(c).transpose(c.params["axes"])] if c.params.get("axes") is not None else None),
            Slip("your gradient swaps the last two axes, as for axes=None; this op was given a permutation, and its "
                 "inverse undoes it.", lambda c: [swap_last(u(c))] if c.params.get("axes") is not None else None),
        )),
    "Summation": Op(
        settings=("axes",),
        args=((0, -1),), shapes=((2, 3, 4),),
        hint="each summed element contributed once to its sum, so its gradient is that sum's out_grad: put the "
             "summed axes back as size 1 (negative axes count from the end; an int is one axis), then "
             "broadcast to the input's shape.",
        slips=(
            Slip("your gradient broadcasts out_grad without first putting the summed axes back as size 1, so its "
                 "values line up with the wrong axes.",
                 lambda c: [np.broadcast_to(u(c), c.arrays[0].shape)]),
        )),
    "BroadcastTo": Op(
        settings=("shape",),
        args=((2, 3, 4),), shapes=((3, 1),),
        hint="each input element was copied to many places of the output, so its gradient is the sum of "
             "out_grad over those places: the prepended axes and the axes where the input had size 1; "
             "then restore the input's shape.",
        slips=(
            Slip("your gradient sums over the right axes but does not restore the input's size-1 axes: reshape it to "
                 "the input's shape.", lambda c: [u(c).sum(axis=stretched_axes(c))]),
            Slip("your gradient sums only the prepended axes; the input's size-1 axes were stretched too, and each "
                 "copy adds to the gradient.",
                 lambda c: [u(c).sum(axis=tuple(range(u(c).ndim - c.arrays[0].ndim)))]),
        )),
    "GetItem": Op(
        settings=("index",),
        args=([0, 2, 0],), shapes=((3, 2),),
        hint="indexing copies the picked input elements to the output without changing them, so each input "
             "element's gradient is the sum of out_grad over the output places it was copied to, and 0 where it "
             "was not picked: start from zeros in the INPUT's shape.",
        slips=(
            Slip("where the index picks the same element more than once, your gradient holds one share only (an "
                 "assignment keeps the last value written there); each pick is a use of that element, and the gradient of "
                 "an element used several times is the SUM of the shares, one per use.", assigned),
            Slip("your gradient is out_grad, in the output's shape; the input's gradient has the input's shape, with "
                 "out_grad's values at the places that were picked and 0 elsewhere.", lambda c: [u(c)]),
        )),
    "GELU": Op(
        shapes=((2, 3),),
        hint="product rule on 0.5·x·(1 + t), with t = tanh(z) and z = √(2/π)(x + 0.044715x³): the derivative is "
             "0.5(1 + t) + 0.5·x·(1 − t²)·dz/dx, and dz/dx = √(2/π)(1 + 3·0.044715x²) by the chain rule; all "
             "evaluated at the input x; the gradient is out_grad times it.",
        slips=(
            Slip("your gradient is out_grad times 0.5(1 + t) only: 0.5·x·(1 + t) is a product of two factors that both "
                 "depend on x, so the product rule adds a second term, 0.5·x times the derivative of (1 + t).",
                 lambda c: [u(c) * 0.5 * (1 + gelu_parts(c)[1])]),
            Slip("your gradient misses the derivative of the cubic inside tanh: by the chain rule, d tanh(z)/dx = (1 − t²)·dz/dx, "
                 "and dz/dx = √(2/π)(1 + 3·0.044715x²), not √(2/π) alone.",
                 lambda c: [u(c) * (0.5 * (1 + gelu_parts(c)[1])
                                    + 0.5 * c.arrays[0] * (1 - gelu_parts(c)[1] ** 2) * np.sqrt(2 / np.pi))]),
            Slip("your gradient misses the factor √(2/π) of dz/dx = √(2/π)(1 + 3·0.044715x²): the constant in front of "
                 "the cubic stays in its derivative.",
                 lambda c: [u(c) * (0.5 * (1 + gelu_parts(c)[1])
                                    + 0.5 * c.arrays[0] * (1 - gelu_parts(c)[1] ** 2) * gelu_parts(c)[2] / np.sqrt(2 / np.pi))]),
        )),
}
