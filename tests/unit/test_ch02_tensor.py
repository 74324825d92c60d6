"""Chapter 2's checks: the solution passes, each wrong answer fails its own check with a message that
teaches, the other checks stand in for the rest of the class, and the stand-ins are always removed."""
import numpy as np
import pytest

from autograder.student.checks import Checker

from helpers.solved_code import notebook_namespace

CONSTRUCTOR_CASES = ["list", "requires_grad", "ints", "scalar", "float64", "ndarray", "float64 ndarray", "copies"]
STORE = "self.data = np.array(data, dtype=dtype)"


def checker(replace=None):
    return Checker(notebook_namespace("ch02", replace), verbose=False)


def all_verdicts(check):
    """Every check of chapter 2, by the test cell it belongs to."""
    return {
        "test_constructor": [check.constructor(case) for case in CONSTRUCTOR_CASES],
        "test_properties": [check.properties(case) for case in ("matrix", "scalar", "float64", "empty")],
        "test_conversions": [check.conversions("basic"), check.conversions("more")],
        "test_repr": [check.tensor_repr("basic"), check.tensor_repr("more")],
        "test_constant_factories": [check.factories("constant", "basic"), check.factories("constant", "more")],
        "test_random_factories": [check.factories("random", "basic"), check.factories("random", "more")],
    }


def failing_cells(check):
    return {cell for cell, verdicts in all_verdicts(check).items() if not all(v.passed for v in verdicts)}


def first_failure(check, cell):
    return next(v for v in all_verdicts(check)[cell] if not v.passed)


def test_the_solution_passes_every_check():
    check = checker()
    for cell, verdicts in all_verdicts(check).items():
        for verdict in verdicts:
            assert verdict.passed, (cell, verdict.message)


@pytest.mark.parametrize("cell, old, new, loses, parts", [
    ("constructor", STORE, "self.data = np.array(data)", "test_constructor",
     ["Tensor([[1.5", "dtype float64, expected float32", "convert the values to the `dtype` argument"]),
    ("constructor", STORE, "self.data = np.asarray(data, dtype=dtype)", "test_constructor",
     ["b = Tensor(a)", "shares memory", "np.array copies"]),
    ("constructor", "self.grad = None", "self.grad = 0.0", "test_constructor", [".grad is 0.0, expected None"]),
    ("constructor", "            data = data.data\n", "            data = data.data\n            dtype = data.dtype\n",
     "test_constructor", ['b = Tensor(a) with a = Tensor([1.0, 2.0, 3.0], dtype="float64")', "(float64)",
                          "expected a float32 array", "kept the dtype of the tensor it was made from"]),
    ("constructor", "        if isinstance(data, Tensor):\n            data = data.data\n", "", "test_constructor",
     ["b = Tensor(a)", "take its .data first"]),
    ("properties", "return self.data.size", "return len(self.data)", "test_properties",
     ["Tensor.size", "received 2", "expected 6"]),
    ("properties", "return self.data.shape", "return list(self.data.shape)", "test_properties",
     ["Tensor.shape", "[2, 3] (list)", "expected (2, 3) (tuple)"]),
    ("properties", "@tensor_method\n@property\ndef ndim", "@tensor_method\ndef ndim", "test_properties",
     ["Tensor.ndim", "it must be a property", "below @tensor_method"]),
    ("conversions", "return self.data.copy()", "return self.data", "test_conversions",
     ["t.numpy()", "returned t.data itself", "must be a copy of the values"]),
    ("conversions", "return self.data.item()", "return self.data.flat[0]", "test_conversions",
     ["t.item()", "numpy.float32", "expected the Python float 2.5", "a NumPy scalar is not a Python float"]),
    ("conversions", "return Tensor(self.data, dtype=self.data.dtype, requires_grad=False)",
     "return Tensor(self.data, requires_grad=False)", "test_conversions",
     ["t.detach()", "its dtype is float32, expected float64", "must be told t's dtype"]),
    ("conversions", "return len(self.data)", "return self.data.size", "test_conversions", ["len(t)", "expected 3"]),
    ("repr", 'separator=", ", prefix="Tensor(")', 'separator=", ")', "test_repr", ["expected:", "received:", "only the indentation of the rows differs"]),
    ("repr", "if self.dtype != np.dtype(DEFAULT_DTYPE) else []", "", "test_repr",
     ["Tensor([1., 2.], dtype=float32", "only when it is not float32"]),
    ("factories", "return Tensor(np.zeros(shape), dtype=dtype", "return Tensor(np.zeros(*shape), dtype=dtype",
     "test_constant_factories", ["zeros(2, 3)", "the second one is read as a dtype"]),
    ("factories", "np.random.default_rng(seed).standard_normal", "np.random.default_rng().standard_normal",
     "test_random_factories", ["randn(2, 3, seed=0) called twice", "a generator made from the seed"]),
    ("factories", "np.random.default_rng(seed).standard_normal", "(np.random.default_rng(seed) if seed else "
     "np.random.default_rng()).standard_normal", "test_random_factories",
     ["randn(2, 3, seed=0) called twice", "seed=0 is a seed too"]),
    ("factories", "np.random.default_rng(seed).random(shape)", "np.random.default_rng(seed).standard_normal(shape)",
     "test_random_factories", ["rand(2, 3, seed=0)", "uniform"]),
])
def test_each_mistake_fails_its_own_check_and_teaches(cell, old, new, loses, parts):
    check = checker({cell: [(old, new)]})
    assert failing_cells(check) == {loses}
    message = first_failure(check, loses).message
    for part in parts:
        assert part in message, (part, message)


def test_standins_isolate_the_exercises_and_are_removed():
    """With no constructor at all, only the constructor's check fails, and the class is left as it was."""
    ns = notebook_namespace("ch02", {"constructor": [(STORE, "raise NotImplementedError()")]})
    Tensor = ns["Tensor"]
    members = dict(Tensor.__dict__)
    check = Checker(ns, verbose=False)
    assert failing_cells(check) == {"test_constructor"}
    assert "not implemented yet" in first_failure(check, "test_constructor").message
    assert dict(Tensor.__dict__) == members


def test_standins_are_removed_even_when_student_code_raises():
    ns = notebook_namespace("ch02", {"repr": [("    body = ", "    1 / 0\n    body = ")]})
    Tensor, original_init = ns["Tensor"], ns["Tensor"].__init__
    verdict = Checker(ns, verbose=False).tensor_repr()
    assert not verdict.passed and "ZeroDivisionError" in verdict.message
    assert Tensor.__init__ is original_init and "__repr__" in Tensor.__dict__


def test_a_missing_member_is_reported_and_not_left_behind():
    ns = notebook_namespace("ch02")
    Tensor = ns["Tensor"]
    del Tensor.item
    verdict = Checker(ns, verbose=False).conversions()
    assert not verdict.passed and "item" in verdict.message
    assert "item" not in Tensor.__dict__


def test_distribution_bounds_leave_room_for_any_seed():
    """The randn/rand distribution check allows 0.05; over many seeds a right answer stays far inside."""
    worst = 0.0
    for seed in range(300):
        rng = np.random.default_rng(seed)
        normal, uniform = rng.standard_normal((100, 100)), rng.random((100, 100))
        worst = max(worst, abs(normal.mean()), abs(normal.std() - 1), abs(uniform.mean() - 0.5),
                    abs(uniform.std() - 12 ** -0.5))
    assert worst < 0.05 * 0.7


def test_a_different_generator_is_also_right():
    """The spec asks for seeded, shaped, normal numbers, not for NumPy's default generator in particular."""
    legacy = "np.random.RandomState(seed).standard_normal(shape)"
    check = checker({"factories": [("np.random.default_rng(seed).standard_normal(shape)", legacy)]})
    assert failing_cells(check) == set()
