"""The checks a notebook's test cells call, bound to that notebook's namespace.

    check = Checker(globals())
    verdict = check.backward(Mul(), shapes=[(2, 3), (2, 3)])
    assert verdict.passed, verdict.message

Names such as `Tensor` are looked up in the namespace at every call, so a student who
re-runs a cell is checked against what the notebook holds now.
"""
from ..verdict import passed
from . import engine, operators, ops, scalar, tensor

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

    # ── chapter 1: the scalar Value ──

    def value_graph(self, op, seed=0):
        """`a + b` or `a * b` ("add", "mul"), numbers on either side: a new Value with data, _prev and _op."""
        return self._report(scalar.check_graph(self.namespace["Value"], op, seed))

    def value_backward(self, op, seed=0):
        """The `_backward` closure of "add" or "mul", called directly: out.grad × local derivative, accumulated."""
        return self._report(scalar.check_backward(self.namespace["Value"], op, seed))

    def value_engine(self, name):
        """Value.backward on graphs whose closures the check wires: order, reuse, twice, long_chain."""
        return self._report(scalar.ENGINE_CHECKS[name](self.namespace["Value"]))

    def numerical_gradient(self, case="basic"):
        """The student's numerical_gradient against exact derivatives of small functions ("basic", "more")."""
        return self._report(scalar.check_numerical_gradient(self.namespace["numerical_gradient"], case))

    # ── chapter 2: the Tensor ──

    def constructor(self, case):
        """Tensor(...) for one kind of input: list, requires_grad, ints, scalar, float64, ndarray,
        float64 ndarray, or "copies" (a tensor made from a tensor or an array owns its values)."""
        return self._report(tensor.check_constructor(self.namespace["Tensor"], case))

    def properties(self, case="matrix"):
        """shape, ndim, size, dtype on a matrix, scalar, float64 or empty tensor (the rest of Tensor stood in)."""
        return self._report(tensor.check_properties(self.namespace["Tensor"], case))

    def conversions(self, case="basic"):
        """numpy(), item(), detach(), len(): "basic", or "more" (float64, other shapes)."""
        return self._report(tensor.check_conversions(self.namespace["Tensor"], case))

    def tensor_repr(self, case="basic"):
        """repr(t) against the specified text: "basic", or "more" (dtype, op, scalar, matrix)."""
        return self._report(tensor.check_repr(self.namespace["Tensor"], case))

    def factories(self, kind, case="basic"):
        """zeros/ones ("constant") or randn/rand ("random"), for the "basic" or "more" cases."""
        return self._report(tensor.check_factories(self.namespace, kind, case))
