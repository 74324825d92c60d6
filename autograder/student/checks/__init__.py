"""The checks a notebook's test cells call, bound to that notebook's namespace.

    check = Checker(globals())
    verdict = check.backward(Mul(), shapes=[(2, 3), (2, 3)])
    assert verdict.passed, verdict.message

Each check is registered in the module that defines it (registry.py); `check.<name>` looks it up.
Names such as `Tensor` are looked up in the namespace at every call, so a student who re-runs a cell
is checked against what the notebook holds now. `dir(check)` lists the checks, `help(check.linear)`
shows one.
"""
import functools
import inspect

from autograder.student.checks import (  # noqa: F401  (importing a module registers its checks)
    capstone,
    ch01_scalar,
    ch02_tensor,
    ch03_autodiff_engine,
    ch03_autodiff_engine_rules,
    ch03_autodiff_indexing,
    ch03_autodiff_kinks,
    ch03_autodiff_operators,
    ch03_autodiff_ops,
    ch04_nn,
    ch04_nn_module_tree,
    ch05_optimizer,
    ch06_data,
    ch06_data_idx,
    ch06_data_transforms,
    ch07_init,
    ch07_init_training,
    ch08_persistence,
    ch09_trainer,
    ch10_conv,
    ch10_conv_pool_ties,
)
from autograder.student.checks.registry import CHECKS, unknown
from autograder.student.verdict import deferred, deferred_together, judged_outside, passed


class Checker:
    def __init__(self, namespace, verbose=True):
        self.namespace = namespace
        self.verbose = verbose

    def _report(self, verdict):
        if verdict.passed and self.verbose:
            print(verdict.message)
        return verdict

    def __getattr__(self, name):
        if name.startswith("_") or name not in CHECKS:
            raise AttributeError(unknown(name) if not name.startswith("_") else name)
        function = CHECKS[name]

        @functools.wraps(function)
        def bound(*args, **kwargs):
            if judged_outside(name):        # grading: the judge's verdict is the one that counts
                return self._report(deferred(name))
            return self._report(function(self.namespace, *args, **kwargs))
        signature = inspect.signature(function)
        bound.__signature__ = signature.replace(parameters=list(signature.parameters.values())[1:])
        bound.__name__ = bound.__qualname__ = name
        return bound

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(CHECKS))

    def all(self, *verdicts):
        """One verdict for several checks: the first failure, or a pass (the grader's to decide, when it decides any)."""
        failures = [v for v in verdicts if not v.passed]
        if failures:
            return failures[0]
        if any(v.deferred for v in verdicts):
            return deferred_together(len(verdicts))
        return passed(f"✔ all {len(verdicts)} checks passed")
