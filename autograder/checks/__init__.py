"""The checks a notebook's test cells call, bound to that notebook's namespace.

    check = Checker(globals())
    verdict = check.backward(Mul(), shapes=[(2, 3), (2, 3)])
    assert verdict.passed, verdict.message

Names such as `Tensor` are looked up in the namespace at every call, so a student who
re-runs a cell is checked against what the notebook holds now.
"""
from ..verdict import passed
from . import engine, operators, ops

ENGINE_CHECKS = {
    "product": engine.check_product,
    "diamond": engine.check_diamond,
    "reuse": engine.check_reuse,
    "accumulation": engine.check_accumulation,
    "explicit_grad": engine.check_explicit_grad,
    "long_chain": engine.check_long_chain,
}


class Checker:
    def __init__(self, namespace, verbose=True):
        self.namespace = namespace
        self.verbose = verbose

    def _report(self, verdict):
        if verdict.passed and self.verbose:
            print(verdict.message)
        return verdict

    def forward(self, op, expected, shapes, domains="real", seed=0):
        """op.forward against NumPy's `expected` on random inputs of these shapes."""
        return self._report(ops.check_forward(op, expected, shapes, domains, seed))

    def backward(self, op, shapes, domains="real", seed=0):
        """op.backward against finite differences of op.forward, with all-ones and random out_grad."""
        return self._report(ops.check_backward(self.namespace["Tensor"], op, shapes, domains, seed))

    def all(self, *verdicts):
        """One verdict for several checks: the first failure, or a pass."""
        failures = [v for v in verdicts if not v.passed]
        return failures[0] if failures else passed(f"✔ all {len(verdicts)} checks passed")

    def operators(self):
        """The Tensor operators and methods call the right Function."""
        return self._report(operators.check_operators(self.namespace))

    def engine(self, name):
        """One property of Tensor.backward: product, diamond, reuse, accumulation, explicit_grad, long_chain."""
        return self._report(ENGINE_CHECKS[name](self.namespace["Tensor"], self.namespace["Function"]))
