"""Chapter 1's checks: right answers pass on every seed, wrong ones fail with a message that teaches,
and each check grades its own exercise only."""
import sys
import warnings

import pytest

from autograder.build.submissions import load_catalog
from autograder.course import Course
from autograder.student.checks import Checker, kernel_facts, running, ch01_scalar as scalar

from helpers.course_paths import ROOT
from helpers.solved_code import notebook_namespace

ADD = "        self.grad += out.grad\n        other.grad += out.grad"
MUL = "        self.grad += other.data * out.grad\n        other.grad += self.data * out.grad"
WRAP = "    other = other if isinstance(other, Value) else Value(other)\n"
ENGINE = ["order", "reuse", "twice", "long_chain"]
TOPO_VISIT = "    stack = [(root, False)]"


def checker(replace=None):
    return Checker(notebook_namespace("ch01", replace), verbose=False)


@pytest.fixture(scope="module")
def check():
    return checker()


@pytest.mark.parametrize("seed", range(40))
def test_right_answers_pass_on_every_seed(check, seed):
    for op in ("add", "mul"):
        for verdict in (check.value_graph(op, seed=seed), check.value_backward(op, seed=seed)):
            assert verdict.passed, verdict.message


def test_engine_and_numerical_gradient_pass_on_the_solution(check):
    for name in ENGINE:
        verdict = check.value_engine(name)
        assert verdict.passed, verdict.message
    for case in ("basic", "more"):
        verdict = check.numerical_gradient(case)
        assert verdict.passed, verdict.message


def test_the_solution_solves_the_neuron():
    """The closing example: backward() and numerical_gradient agree on a tanh neuron."""
    ns = notebook_namespace("ch01", whole=True)
    grads = [v.grad for v in ns["values"].values()]
    assert grads == pytest.approx(ns["nudged"], abs=1e-8)
    assert any(abs(g) > 0.05 for g in grads)


def failing(check, verdict, *parts):
    assert not verdict.passed
    for part in parts:
        assert part in verdict.message, (part, verdict.message)


@pytest.mark.parametrize("closure, parts", [
    ("        self.grad = out.grad\n        other.grad = out.grad", ["a = Value(", "out.grad =", "must BOTH count", "gradients accumulate"]),
    ("        self.grad += 1.0\n        other.grad += 1.0", ["received 1.0", "multiply the local derivative by out.grad"]),
    ("        pass", ["did not change the gradient"]),
])
def test_wrong_add_closures_are_named(closure, parts):
    check = checker({"add": [(ADD, closure)]})
    failing(check, check.value_backward("add"), "Value.__add__'s _backward", "finite differences", *parts)
    assert check.value_graph("add").passed, "the graph check must not grade the closure"


@pytest.mark.parametrize("closure, parts", [
    ("        self.grad += self.data * out.grad\n        other.grad += other.data * out.grad", ["OTHER input"]),
    ("        self.grad = other.data * out.grad\n        other.grad = self.data * out.grad", ["must BOTH count"]),
    ("        self.grad += other.data\n        other.grad += self.data", ["multiply the local derivative by out.grad"]),
])
def test_wrong_mul_closures_are_named(closure, parts):
    check = checker({"mul": [(MUL, closure)]})
    failing(check, check.value_backward("mul"), "Value.__mul__'s _backward", *parts)
    assert check.value_graph("mul").passed and check.value_backward("add").passed


def test_a_closure_that_divides_by_an_input_fails_where_it_is_0():
    """out.data / self.data is b's value everywhere but at a = 0, where the rule of section 1.2 still holds."""
    dividing = "        self.grad += out.data / self.data * out.grad\n        other.grad += out.data / other.data * out.grad"
    check = checker({"mul": [(MUL, dividing)]})
    failing(check, check.value_backward("mul"), "ZeroDivisionError", "a = Value(0.0)", "a is 0 here",
            "need no division", "with respect to a is b's value")
    assert check.value_graph("mul").passed


def test_a_closure_that_raises_otherwise_gets_no_division_hint():
    check = checker({"mul": [(MUL, "        raise ValueError('no')")]})
    verdict = check.value_backward("mul")
    failing(check, verdict, "ValueError: no", "for out = a * b with")
    assert "division" not in verdict.message


def test_graph_mistakes_are_named():
    check = checker({"add": [(WRAP, "")], "mul": [('(self, other), "*")', '(self, other), "+")')]})
    failing(check, check.value_graph("add"), "AttributeError", "a + 4", "wrap it in a Value of its own first")
    failing(check, check.value_graph("mul"), "_op '+'", "expected '*'", "the constructor's third argument")
    assert check.value_backward("add").passed and check.value_backward("mul").passed

    check = checker({"add": [("    return self + other", "    return other + self")]})
    failing(check, check.value_graph("add"), "4 + a", "recursion limit", "with the Value on the left")

    check = checker({"add": [("(self, other), \"+\")", "(), \"+\")")]})
    failing(check, check.value_graph("add"), "_prev = {}", "expected {a, b}", "the constructor's second argument")


def test_unimplemented_exercises_say_so():
    check = checker({"add": [(WRAP, "    raise NotImplementedError()\n")]})
    failing(check, check.value_graph("add"), "Value.__add__ is not implemented yet")
    failing(check, check.value_backward("add"), "Value.__add__ is not implemented yet")


def test_backward_checks_grade_backward_alone():
    """Broken + and * cost nothing here: the engine checks wire their own closures."""
    check = checker({"add": [(ADD, "        pass")], "mul": [(MUL, "        pass")]})
    for name in ENGINE:
        verdict = check.value_engine(name)
        assert verdict.passed, verdict.message


def catalogued(name):
    """A constant of chapter 1's catalogue of mistakes (catalogue/ch01_scalar.py): the code a student wrote."""
    course = Course(ROOT)
    return getattr(load_catalog(course, course.chapter("ch01")), name)


def test_recursive_topological_order_fails_only_the_long_chain():
    ns = notebook_namespace("ch01")
    original = ns["topological_order"]
    exec(compile("def topological_order(root):\n" + catalogued("RECURSIVE_TOPO"), "student", "exec"), ns)
    check = Checker(ns, verbose=False)
    assert all(check.value_engine(name).passed for name in ["order", "reuse", "twice"])
    failing(check, check.value_engine("long_chain"), "2,000 nodes", "recursion limit", "explicit stack")
    assert original is not ns["topological_order"]


def test_a_recursive_search_under_a_raised_limit_fails_only_the_long_chain():
    """Section 1.4 asks for no recursion: raising the limit lets the 2,000-node chain run, and the check still sees
    one nested call per node."""
    ns = notebook_namespace("ch01")
    code = catalogued("RAISED_LIMIT") + catalogued("RECURSIVE_TOPO")
    exec(compile("def topological_order(root):\n" + code, "student", "exec"), ns)
    check = Checker(ns, verbose=False)
    assert all(check.value_engine(name).passed for name in ["order", "reuse", "twice"])
    failing(check, check.value_engine("long_chain"), "2,000 nodes", "the gradient is right", "nested 2,0",
            "recursion limit was above its default", "Section 1.4", "explicit stack")


def test_the_depth_of_calls_is_one_per_level_of_recursion_and_a_few_for_a_loop():
    def down(n):
        return n and down(n - 1)

    def loop(n):
        while n:
            n -= 1

    sys.setrecursionlimit(5_000)
    assert 1_500 <= kernel_facts.deepest_call(down, 1_500) <= 1_510
    assert kernel_facts.deepest_call(loop, 1_500) <= 2
    assert sys.getprofile() is None, "the hook is taken off again"
    assert running.recursion_problem("t", 1_001, 2_000, "h") and running.recursion_problem("t", 1_000, 2_000, "h") is None


@pytest.mark.parametrize("old, new, fails, parts", [
    ("    self.grad = 1.0\n", "", ENGINE, ["out.grad should be 1.0", "seed the output"]),
    ("    for node in order:\n        node.grad = 0.0\n", "", ["twice"], ["set every node's grad to 0.0"]),
    ("for node in reversed(order):", "for node in order:", ENGINE, ["REVERSE topological order"]),
    ([("        elif node not in visited:", "        else:"),
      ("for parent in node._prev if parent not in visited)", "for parent in node._prev)")],
     None, ["reuse"], ["a.grad should be 64", "visited ONCE"]),
])
def test_engine_mistakes_fail_exactly_their_checks(old, new, fails, parts):
    check = checker({"backward": old if new is None else [(old, new)]})
    for name in ENGINE:
        verdict = check.value_engine(name)
        assert verdict.passed == (name not in fails), (name, verdict.message)
    failing(check, check.value_engine(fails[0]), *parts)


def test_a_second_call_wrong_for_another_reason_than_the_reset_is_not_blamed_on_the_reset():
    """A walk in the wrong order that never resets fails the repeated call too: its gradients are not those of a
    missing reset, so the hint states the rule instead of naming the reset."""
    check = checker({"backward": [("    for node in order:\n        node.grad = 0.0\n    self.grad = 1.0\n"
                                   "    for node in reversed(order):", "    self.grad = 1.0\n    for node in order:")]})
    verdict = check.value_engine("twice")
    failing(check, verdict, "each call of backward() gives the gradients of one pass")
    assert "otherwise a second call adds" not in verdict.message


@pytest.mark.parametrize("old, new, parts", [
    ("grads.append((f(*plus) - f(*minus)) / (2 * h))", "grads.append((f(*plus) - f(*xs)) / h)",
     ["x * x", "should be 6,", "received 6.01", "forward difference"]),
    ("grads.append((f(*plus) - f(*minus)) / (2 * h))", "grads.append((f(*plus) - f(*minus)) / h)",
     ["received 12", "divide by 2h"]),
    ("plus, minus = list(xs), list(xs)", "plus, minus = xs, list(xs)", ["changed its input list"]),
    ("plus, minus = list(xs), list(xs)", "plus = minus = list(xs)", ["received 0", "ONE input at a time"]),
    ("    grads = []", "    h = 1e-5\n    grads = []", ["h=0.1", "x * x * x", "should be 12.01", "received 12.",
                                                     "much smaller step than the h = 0.1"]),
])
def test_numerical_gradient_mistakes_are_named(old, new, parts):
    check = checker({"numerical_gradient": [(old, new)]})
    failing(check, check.numerical_gradient(), "numerical_gradient(f, [", *parts)


def test_central_differences_reach_the_tolerance():
    """The yardstick of the closure checks is far tighter than the tolerance it is judged with."""
    for x, y in [(2.0, -3.5), (-2.4, 0.51), (1e-3, 2.5)]:
        dx, dy = scalar.central_difference(lambda a, b: a * b, x, y)
        assert abs(dx - y) < scalar.TOL / 100 and abs(dy - x) < scalar.TOL / 100


def test_checks_write_nothing_to_stderr(capfd):
    noisy = "        warnings.warn('careful')\n        self.grad += out.grad\n        other.grad += out.grad"
    ns = notebook_namespace("ch01", {"add": [(ADD, noisy)]})
    ns["warnings"] = warnings
    check = Checker(ns, verbose=False)
    assert check.value_backward("add").passed
    assert capfd.readouterr().err == ""
