"""What the course knows of one op, in one record: the shape of each chapter's op-spec module.

An op's check needs its constructor's settings, a forward known to be right, inputs where finite differences
can judge it, the rule its backward follows and the mistakes a hint may name. Each chapter keeps these in one
record per op (`ch03_autodiff_op_specs.py`), so a new op is one new entry; `references`, `slips` and
`hints` read them from there.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Slip:
    """A known wrong backward: `says` what the gradients equal and the rule broken; `gradients(case)` computes
    them (one array per input, for a `slips.Case`), or raises when the mistake cannot happen for this op's
    settings."""

    says: str
    gradients: object


@dataclass(frozen=True)
class Op:
    """One op's facts. `settings`: its constructor's parameters, in order, as its __init__ stores them (the
    kernel reads them from the instance, the judge from the test cell's call); `forward`: settings -> the
    course's NumPy forward, None for an op whose forward is the kernel's stand-in (`ch03_autodiff_course_ops`);
    `args`, `shapes`, `domain`: a constructor call and inputs inside the op's safe domain (`gradcheck.sample`),
    away from kinks and poles, where a right answer passes both checks; `hint`: the rule its backward follows
    (`hints`); `slips`: the known wrong backwards, the first match named; `from_output`: for an op whose formula
    exponentiates its input, its derivative written with the output, named when an exponential overflowed."""

    hint: str
    shapes: tuple
    settings: tuple = ()
    args: tuple = ()
    domain: object = "real"
    forward: object = None
    slips: tuple = ()
    from_output: str = ""


def u(c):
    """The out_grad of a case, as the slips' formulas read it."""
    return c.upstream
