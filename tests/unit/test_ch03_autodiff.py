"""The checks that notebooks call: right answers always pass, wrong ones fail with a message that teaches."""
import functools
import linecache
import subprocess
import sys

import numpy as np
import pytest

from autograder.student import gradcheck
from autograder.student.checks import Checker, ch03_autodiff_course_ops as course_ops, references, slips
from autograder.student.checks.ch03_autodiff_op_specs import OPS as RECORDS
from autograder.student.checks.running import describe_exception
from autograder.student.hints import rules

from helpers.solved_code import solved_namespace

# (op factory, input shapes, domains): every chapter 3 op, on shapes with the edge cases.
OPS = [
    (lambda ns: ns["Mul"](), [(2, 3), (2, 3)], "real"),
    (lambda ns: ns["Sub"](), [(3,), (3,)], "real"),
    (lambda ns: ns["Div"](), [(2, 3), (2, 3)], ("real", "nonzero")),
    (lambda ns: ns["Pow"](), [(2, 3), (2, 3)], ("positive", "real")),
    (lambda ns: ns["Negate"](), [(4,)], "real"),
    (lambda ns: ns["Log"](), [(2, 3)], "positive"),
    (lambda ns: ns["Exp"](), [(2, 3)], "real"),
    (lambda ns: ns["Sqrt"](), [(2, 3)], "positive"),
    (lambda ns: ns["Abs"](), [(2, 3)], "nonzero"),
    (lambda ns: ns["ReLU"](), [(2, 3)], "nonzero"),
    (lambda ns: ns["Sigmoid"](), [(2, 3)], "real"),
    (lambda ns: ns["Tanh"](), [(2, 3)], "real"),
    (lambda ns: ns["Reshape"]((4, 6)), [(2, 3, 4)], "real"),
    (lambda ns: ns["Transpose"]((1, 2, 0)), [(3, 2, 5)], "real"),
    (lambda ns: ns["Transpose"](), [(4, 2, 3)], "real"),
    (lambda ns: ns["Summation"]((0, -1)), [(2, 3, 4)], "real"),
    (lambda ns: ns["Summation"](), [(2, 3)], "real"),
    (lambda ns: ns["BroadcastTo"]((2, 3, 4)), [(3, 1)], "real"),
    (lambda ns: ns["MatMul"](), [(2, 1, 2, 3), (3, 3, 2)], "real"),
    (lambda ns: ns["MatMul"](), [(2, 3), (4, 3, 2)], "real"),
    (lambda ns: ns["AddScalar"](1.5), [(3,)], "real"),
    (lambda ns: ns["MulScalar"](-2.0), [(3,)], "real"),
    (lambda ns: ns["DivScalar"](0.3), [(3,)], "real"),
    (lambda ns: ns["PowerScalar"](0.5), [(3,)], "positive"),
    (lambda ns: ns["PowerScalar"](3), [(3,)], "real"),
]


@pytest.fixture(scope="module")
def ns():
    return solved_namespace("ch03")


@pytest.fixture
def check(ns):
    return Checker(ns, verbose=False)


@pytest.mark.parametrize("name", list(RECORDS))
def test_each_op_record_is_the_solved_ops_and_its_checked_call_passes(ns, check, name):
    """An op's record (ch03_autodiff_op_specs.py) gives the course's forward and settings of the chapter's op: the
    solution's forward equals it on the record's call, and its backward passes there, so the record's domain keeps
    finite differences away from kinks and poles."""
    record = RECORDS[name]
    op = ns[name](*record.args)
    assert set(record.settings) <= set(vars(op)), f"{name}'s __init__ keeps {sorted(vars(op))}"
    assert name in course_ops.FORWARDS or record.forward, f"{name} has no forward: give its record one"
    reference = references.of_call(name, record.args, ())
    verdict = check.forward(op, reference, shapes=list(record.shapes), domains=record.domain)
    assert verdict.passed, verdict.message
    verdict = check.backward(op, shapes=list(record.shapes), domains=record.domain, seed=5)
    assert verdict.passed, verdict.message


def test_the_rules_load_when_the_hints_are_imported_first():
    """hints.py reads chapter 3's rules from the op records, inside the checks package, which imports hints.py."""
    code = ("from autograder.student import hints\n"
            "from autograder.student.checks.ch03_autodiff_op_specs import OPS\n"
            "assert hints.rule('Tanh') == OPS['Tanh'].hint and hints.rule('Conv') == hints.BACKWARD['Conv']")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


def test_central_differences_are_accurate():
    x = np.linspace(-1.5, 2.0, 7)
    (grad,) = gradcheck.numerical_gradients(lambda a: a ** 3, [x], np.ones_like(x))
    assert np.max(np.abs(grad - 3 * x ** 2)) < 1e-8


def test_tensor_defaults_to_float32_as_in_the_book(ns):
    assert ns["Tensor"]([1, 2]).dtype == np.float32
    assert ns["Mul"]()(ns["Tensor"]([1.0]), ns["Tensor"]([2.0])).dtype == np.float32


def test_an_operation_keeps_its_forwards_result_without_a_copy_and_in_the_default_dtype(ns):
    """Function.__call__ wraps the array forward made (a copy per op and per gradient is what it saves);
    a result of another dtype is still converted, as Tensor(...) would."""
    Tensor, Function = ns["Tensor"], ns["Function"]
    made = {}

    class Remember(Function):
        def __init__(self, dtype):
            self.dtype = dtype

        def forward(self, a):
            made["array"] = (a * 2).astype(self.dtype)
            return made["array"]

    out = Remember(np.float32)(Tensor([1.0, 2.0]))
    assert out.data is made["array"] and out.requires_grad and out._inputs
    converted = Remember(np.float64)(Tensor([1.0, 2.0], requires_grad=False))
    assert converted.dtype == np.float32 and converted.data.tolist() == [2.0, 4.0]
    assert not converted.requires_grad and converted._op is None and converted.grad is None


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_no_code_of_the_course_writes_into_an_operations_result(kind):
    """Keeping forward's array without a copy is safe only while nothing writes into an op's result
    afterwards: two training steps of each capstone model (Adam, then SGD with momentum), and an
    evaluation under no_grad, with every op's result made read-only. A write raises ValueError."""
    ns = solved_namespace("ch10")
    function, original = ns["Function"], ns["Function"].__call__

    def read_only_result(op, *inputs):
        output = original(op, *inputs)
        output.data.flags.writeable = False
        return output

    rng = np.random.default_rng(0)
    shape = (8, 784) if kind == "mlp" else (8, 1, 28, 28)
    images = ns["Tensor"](rng.standard_normal(shape), requires_grad=False)
    labels = ns["Tensor"](rng.integers(0, 10, 8), dtype=np.int64, requires_grad=False)
    model = ns[f"build_{kind}"]()
    before = [p.data.copy() for p in model.parameters()]
    function.__call__ = read_only_result
    try:
        for optimizer in (ns["Adam"](model.parameters(), lr=0.01), ns["SGD"](model.parameters(), lr=0.01, momentum=0.9)):
            for _ in range(2):
                ns["train_step"](model, ns["SoftmaxLoss"](), optimizer, images, labels)
        with ns["no_grad"]():
            assert model(images).shape == (8, 10)
    finally:
        function.__call__ = original
    assert all(not np.array_equal(b, p.data) for b, p in zip(before, model.parameters()))


@pytest.mark.parametrize("seed", range(25))
def test_correct_backwards_never_fail(ns, check, seed):
    """A sweep of seeds: the tolerances leave room for float32 Tensors, so no right answer fails."""
    for make, shapes, domains in OPS:
        verdict = check.backward(make(ns), shapes, domains, seed=seed)
        assert verdict.passed, verdict.message


def subclass(ns, name, backward):
    return type(f"My{name}", (ns[name],), {"backward": backward})


def test_wrong_backward_fails_with_a_message_that_teaches(ns, check):
    def backward(self, out_grad, node):
        a, b = node._inputs
        return out_grad * a, out_grad * b          # each input times itself
    verdict = check.backward(subclass(ns, "Mul", backward)(), [(2, 3), (2, 3)])
    assert not verdict.passed
    for part in ["MyMul().backward", "a(2, 3), b(2, 3)", "worst element a[", "your backward gives",
                 "finite differences give", "Hint:", "that same input", "the other input"]:
        assert part in verdict.message, part


def test_backward_that_ignores_out_grad_is_caught(ns, check):
    def backward(self, out_grad, node):
        return node                                 # exp(a) without out_grad
    verdict = check.backward(subclass(ns, "Exp", backward)(), [(2, 3)])
    assert not verdict.passed and "random out_grad" in verdict.message
    assert "multiply by out_grad" in verdict.message


def test_ndarray_instead_of_tensor_is_named(ns, check):
    def backward(self, out_grad, node):
        return out_grad.data * node.data
    verdict = check.backward(subclass(ns, "Exp", backward)(), [(2, 3)])
    assert not verdict.passed and "numpy.ndarray" in verdict.message and "must return Tensors" in verdict.message


def test_wrong_shape_names_both_shapes_and_the_broadcast_hint(ns, check):
    def backward(self, out_grad, node):
        return out_grad
    verdict = check.backward(subclass(ns, "BroadcastTo", backward)((2, 3, 4)), [(3, 1)])
    assert not verdict.passed
    assert "(2, 3, 4)" in verdict.message and "expected (3, 1)" in verdict.message
    assert "it is larger than the input" in verdict.message and "adds up the shares of the copies" in verdict.message


def test_transpose_backward_must_invert_the_permutation(ns, check):
    def backward(self, out_grad, node):
        return out_grad.transpose(self.axes)
    wrong = subclass(ns, "Transpose", backward)
    assert check.backward(wrong((1, 0)), [(3, 5)]).passed                 # a swap is its own inverse...
    assert not check.backward(wrong((1, 2, 0)), [(3, 2, 5)]).passed       # ...a 3-cycle is not


def test_the_course_transpose_takes_negative_axes_as_numpy_does(ns, check):
    """np.transpose accepts (0, -1, -2); the course's backward must invert that permutation too."""
    assert check.forward(ns["Transpose"]((0, -1, -2)), lambda a: a.transpose(0, 2, 1), shapes=[(2, 3, 4)]).passed
    verdict = check.backward(ns["Transpose"]((0, -1, -2)), shapes=[(2, 3, 4)])
    assert verdict.passed, verdict.message
    verdict = check.backward(ns["Transpose"]((-1, 0, 1)), shapes=[(2, 3, 4)])
    assert verdict.passed, verdict.message


def test_a_backward_that_changes_its_op_fails_its_second_call_and_says_what_changed(ns, check):
    """A graph walked twice runs each op's backward twice (section 3.8): a Transpose that keeps the inverse in
    self.axes inverts it back on its second call."""
    def overwrites(self, out_grad, node):
        self.axes = tuple(int(i) for i in np.argsort(self.axes))
        return out_grad.transpose(self.axes)
    verdict = check.backward(subclass(ns, "Transpose", overwrites)((1, 2, 0)), [(3, 2, 5)])
    assert not verdict.passed
    for words in ["a random out_grad", "second call on the same op", "self.axes from (1, 2, 0) to (2, 0, 1)",
                  "leave the op's attributes as it found them"]:
        assert words in verdict.message, (words, verdict.message)
    assert check.backward(subclass(ns, "Transpose", overwrites)((1, 0)), [(3, 5)]).passed      # a swap: no harm


def test_a_backward_that_keeps_something_on_its_op_but_answers_the_same_passes(ns, check):
    def keeps_inverse(self, out_grad, node):
        self.inverse = tuple(int(i) for i in np.argsort(self.axes))
        return out_grad.transpose(self.inverse)
    verdict = check.backward(subclass(ns, "Transpose", keeps_inverse)((1, 2, 0)), [(3, 2, 5)])
    assert verdict.passed, verdict.message


def test_a_first_call_that_fails_says_nothing_of_a_second(ns, check):
    def same_axes(self, out_grad, node):
        self.seen = True
        return out_grad.transpose(self.axes)
    verdict = check.backward(subclass(ns, "Transpose", same_axes)((1, 2, 0)), [(3, 2, 5)])
    assert not verdict.passed and "all-ones out_grad" in verdict.message and "second call" not in verdict.message


def test_a_forward_that_raises_on_a_nudged_input_gets_a_message_not_an_exception(ns, check):
    """The finite differences are taken before backward runs; a forward that raises there is told, as the judge
    tells it, after backward's own checks."""
    def forward(self, a):
        if getattr(self, "ran", False):
            raise ValueError("a second forward")
        self.ran = True
        return np.exp(a)
    once = type("Exp", (ns["Exp"],), {"forward": forward})
    verdict = check.backward(once(), [(2, 3)])
    assert not verdict.passed
    assert "ValueError: a second forward" in verdict.message
    assert "while computing finite differences of your forward" in verdict.message


# Wrong backwards whose gradient a known slip computes: the hint names it. (op, args, backward, shapes,
# domains, words of the hint naming the mistake).
NAMED_SLIPS = [
    ("Transpose", ((1, 2, 0),), lambda self, g, node: g.transpose(self.axes), [(3, 2, 5)], "real", "same permutation"),
    ("Transpose", ((2, 0, 1),), lambda self, g, node: g.transpose(), [(2, 3, 4)], "real", "swaps the last two axes"),
    ("Log", (), lambda self, g, node: g / node, [(2, 3)], "positive", "by the output log(a)"),
    ("Sigmoid", (), lambda self, g, node: g * node._inputs[0] * (1 - node._inputs[0]), [(2, 3)], "real",
     "with s the input"),
    ("Tanh", (), lambda self, g, node: g * (1 - node._inputs[0] * node._inputs[0]), [(2, 3)], "real", "a the input"),
    ("Exp", (), lambda self, g, node: g * node._inputs[0], [(2, 3)], "real", "by the input a"),
    ("Div", (), lambda self, g, node: (g / node._inputs[1], -g * node._inputs[0] / node._inputs[1]), [(2, 3), (2, 3)],
     ("real", "nonzero"), "b squared"),
]


@pytest.mark.parametrize("name, args, backward, shapes, domains, words", NAMED_SLIPS, ids=lambda x: str(x)[:20])
def test_a_known_slip_is_named_when_the_gradient_matches_it(ns, check, name, args, backward, shapes, domains, words):
    verdict = check.backward(subclass(ns, name, backward)(*args), shapes, domains)
    assert not verdict.passed and words in verdict.message, verdict.message


def test_relu_mask_from_out_grad_is_named(ns, check):
    def from_out_grad(self, g, node):
        return g * ns["Tensor"](g.data > 0, dtype=g.dtype)
    # On positive inputs only the random out_grad can tell this slip from the right mask: that case's hint.
    verdict = check.backward(subclass(ns, "ReLU", from_out_grad)(), [(2, 3)], "positive")
    assert "mask keeps the places where out_grad is positive" in verdict.message, verdict.message
    # Where an input is negative, the all-ones out_grad already shows it: out_grad passed through unchanged.
    verdict = check.backward(subclass(ns, "ReLU", from_out_grad)(), [(2, 3)], "nonzero")
    assert "not from out_grad" in verdict.message, verdict.message

    def passes_through(self, g, node):
        return g
    verdict = check.backward(subclass(ns, "ReLU", passes_through)(), [(2, 3)], "nonzero", seed=1)
    assert "out_grad unchanged, also where the input is negative" in verdict.message, verdict.message


def test_a_mistake_no_slip_explains_gets_the_rule_not_a_named_slip(ns, check):
    def wrong_transpose(self, g, node):
        return g.transpose(self.axes) * 2                     # the same permutation, and doubled
    verdict = check.backward(subclass(ns, "Transpose", wrong_transpose)((1, 2, 0)), [(3, 2, 5)])
    assert "same permutation" not in verdict.message and "INVERSE" in verdict.message
    assert "reshape" not in verdict.message.lower(), "reshape is never right for a transpose"

    def wrong_log(self, g, node):
        return g / node * 2
    verdict = check.backward(subclass(ns, "Log", wrong_log)(), [(2, 3)], "positive")
    assert "by the output" not in verdict.message and "evaluated at the input a" in verdict.message


def test_the_judge_reads_an_ops_settings_from_its_constructor_call():
    assert slips.params_of_call("Transpose", ((1, 2, 0),), ()) == {"axes": (1, 2, 0)}
    assert slips.params_of_call("Transpose", (), (("axes", (1, 0)),)) == {"axes": (1, 0)}
    assert slips.params_of_call("DivScalar", (0.5,), ()) == {"scalar": 0.5}
    upstream = np.arange(24.0).reshape(2, 3, 4)
    case = slips.Case("Transpose", slips.params_of_call("Transpose", ((1, 2, 0),), ()), [np.zeros((4, 2, 3))],
                      np.zeros((2, 3, 4)), upstream)
    assert "same permutation" in slips.shape_hint(case, [upstream.transpose(1, 2, 0)], 0)
    assert "same permutation" not in slips.shape_hint(case, [upstream.transpose(2, 1, 0)], 0)


CODE_IN_A_HINT = ["return ", "out_grad *", "out_grad /", "np.", "._inputs[", "+=", "argsort", "(out_grad", ".transpose(",
                  ".reshape(", ".sum(", "broadcast_to("]


def test_no_backward_hint_holds_a_line_to_type():
    texts = list(rules().values()) + [slip.says for ops in slips.SLIPS.values() for slip in ops]
    for text in texts:
        for code in CODE_IN_A_HINT:
            assert code not in text, (code, text)


def test_exception_in_student_code_is_reported_with_its_line(ns, check):
    def backward(self, out_grad, node):
        return out_grad / undefined_name  # noqa: F821
    verdict = check.backward(subclass(ns, "Log", backward)(), [(2,)], "positive")
    assert "NameError" in verdict.message and "undefined_name" in verdict.message


def test_not_implemented_says_so(check, ns):
    verdict = check.backward(ns["Function"](), [(2,)])
    assert not verdict.passed and "not implemented yet" in verdict.message


def test_forward_returning_a_tensor_is_explained(ns, check):
    forward = lambda self, a: ns["Tensor"](np.exp(a))  # noqa: E731
    op = type("Wrapped", (ns["Exp"],), {"forward": forward})()
    verdict = check.forward(op, np.exp, [(2, 3)])
    assert not verdict.passed and "__call__ wraps the result" in verdict.message


def test_a_forward_that_writes_into_its_input_is_caught_after_its_values_pass(ns, check):
    """Function.__call__ hands forward the input tensors' own arrays: a right result computed in place still
    changes the input tensor, which the values alone cannot show."""
    def forward(self, a):
        a[a < 0] = 0
        return a
    verdict = check.forward(type("InPlace", (ns["ReLU"],), {"forward": forward})(), lambda a: np.maximum(a, 0), [(2, 3)])
    assert not verdict.passed
    for part in ["forward changed input a in place", "it was -", "and is 0", "Function.__call__ hands forward"]:
        assert part in verdict.message, (part, verdict.message)
    assert check.forward(ns["Reshape"]((3, 2)), lambda a: a.reshape(3, 2), [(2, 3)]).passed    # a view is no write


@pytest.mark.parametrize("name, backward, passes", [
    ("ReLU", lambda self, g, node: g * type(g)(node._inputs[0].data > 0, dtype=g.dtype), True),
    ("ReLU", lambda self, g, node: g * type(g)(node._inputs[0].data >= 0, dtype=g.dtype), False),
    ("Abs", lambda self, g, node: g * type(g)(np.sign(node._inputs[0].data), dtype=g.dtype), True),
    ("Abs", lambda self, g, node: g * node / node._inputs[0], False),          # |a| / a: 0 / 0 = nan at the kink
])
def test_the_kink_check_holds_relu_and_abs_to_zero_at_zero(ns, check, name, backward, passes):
    verdict = check.kink(subclass(ns, name, backward)(), [(3, 4)])
    assert verdict.passed == passes, verdict.message
    if not passes:
        for part in ["entries exactly 0", "expected 0", "Every wrong element is an input of exactly 0",
                     "derivative at the kink a = 0 is taken to be 0"]:
            assert part in verdict.message, (part, verdict.message)


def test_a_kink_hint_is_given_only_when_the_zeros_are_what_is_wrong(ns, check):
    verdict = check.kink(subclass(ns, "ReLU", lambda self, g, node: g)(), [(3, 4)])     # no mask at all
    assert not verdict.passed and "Every wrong element" not in verdict.message, verdict.message


def test_a_constant_input_is_built_without_a_gradient_and_its_gradient_is_not_compared(ns, check):
    """MatMul's shortcut for a batch of data (a constant a): zeros, or None, for a is fine; b's gradient is judged."""
    def shortcut(self, out_grad, node):
        a, b = node._inputs
        assert not a.requires_grad and b.requires_grad
        return None, ns["Tensor"]((np.swapaxes(a.data, -1, -2) @ out_grad.data).sum(axis=0), dtype=b.dtype)
    assert check.backward(subclass(ns, "MatMul", shortcut)(), [(5, 2, 3), (3, 4)], constant=[0]).passed

    def unsummed(self, out_grad, node):
        a, _ = node._inputs
        return None, a.transpose() @ out_grad
    verdict = check.backward(subclass(ns, "MatMul", unsummed)(), [(5, 2, 3), (3, 4)], constant=[0])
    assert not verdict.passed and "(a is a constant: requires_grad=False)" in verdict.message, verdict.message
    assert "the gradient for b has shape (5, 3, 4), expected (3, 4)" in verdict.message


def test_checks_write_nothing_to_stderr(ns, check, capfd):
    def forward(self, a):
        return np.exp(a * 1000)                  # overflows: NumPy would warn on stderr
    op = type("Loud", (ns["Exp"],), {"forward": forward})()
    check.forward(op, np.exp, [(3,)])
    check.backward(op, [(3,)])
    assert capfd.readouterr().err == ""


def engine_namespace(ns, **replacements):
    patched = dict(ns)
    patched.update(replacements)
    return patched


def test_engine_checks_pass_on_the_solution(check):
    for name in ["product", "diamond", "reuse", "accumulation", "explicit_grad", "long_chain"]:
        verdict = check.engine(name)
        assert verdict.passed, verdict.message


def test_an_engine_that_takes_grad_only_as_a_tensor_fails_the_explicit_grad_check(ns, monkeypatch):
    """Section 3.8: grad may be a Tensor or a NumPy array of the output's shape."""
    Tensor = ns["Tensor"]
    original = Tensor.backward

    def tensor_only(self, grad=None):
        if grad is not None:
            _ = grad.requires_grad                      # an array has none: AttributeError
        return original(self, grad)
    monkeypatch.setattr(Tensor, "backward", tensor_only)
    verdict = Checker(ns, verbose=False).engine("explicit_grad")
    assert not verdict.passed and "AttributeError" in verdict.message and "NumPy array" in verdict.message


def engine_refusing_by(ns, monkeypatch, refuses):
    """The course's engine, refusing a result without grad when `refuses(tensor)` (a student's test for several
    elements) instead of by its size."""
    Tensor = ns["Tensor"]
    original = Tensor.backward

    def backward(self, grad=None):
        if grad is None and self.requires_grad:
            if refuses(self):
                raise ValueError(f"backward() needs a scalar, not shape {self.shape}")
            grad = np.ones_like(self.data)
        return original(self, grad)
    monkeypatch.setattr(Tensor, "backward", backward)
    return Checker(ns, verbose=False)


@pytest.mark.parametrize("refuses, shape, which", [
    (lambda t: t.data.ndim and t.shape[0] != 1, "(1, ", "first axis"),
    (lambda t: t.data.ndim and t.shape[-1] != 1, ", 1)", "last axis"),
])
def test_a_result_of_several_elements_along_one_axis_must_be_refused_too(ns, monkeypatch, refuses, shape, which):
    verdict = engine_refusing_by(ns, monkeypatch, refuses).engine_rule("non_scalar_error")
    assert not verdict.passed
    for words in [shape, "returned without an error; expected ValueError", f"though its {which} has length 1",
                  "the number of elements"]:
        assert words in verdict.message, (words, verdict.message)


@pytest.mark.parametrize("refuses", [lambda t: t.data.size != 1, lambda t: t.shape not in ((), (1,), (1, 1))])
def test_refusing_by_the_number_of_elements_or_the_texts_shapes_passes(ns, monkeypatch, refuses):
    verdict = engine_refusing_by(ns, monkeypatch, refuses).engine_rule("non_scalar_error")
    assert verdict.passed, verdict.message


def test_recursive_engine_fails_only_the_long_chain(ns):
    Tensor = ns["Tensor"]
    original = Tensor.backward

    def recursive_backward(self, grad=None):
        order, seen = [], set()

        def visit(node):
            if id(node) not in seen:
                seen.add(id(node))
                for parent in node._inputs:
                    visit(parent)
                order.append(node)
        visit(self)
        return original(self, grad)
    Tensor.backward = recursive_backward
    try:
        check = Checker(ns, verbose=False)
        assert check.engine("diamond").passed
        verdict = check.engine("long_chain")
        assert not verdict.passed and "recursion limit" in verdict.message
    finally:
        Tensor.backward = original


def test_a_recursive_engine_under_a_raised_limit_still_fails_the_long_chain(ns, monkeypatch):
    """Section 3.8 asks for an explicit stack: raising the limit lets the chain run, one nested call per node."""
    Tensor = ns["Tensor"]
    original = Tensor.backward

    def recursive_backward(self, grad=None):
        sys.setrecursionlimit(50_000)
        seen = set()

        def visit(node):
            if id(node) not in seen:
                seen.add(id(node))
                for parent in node._inputs:
                    visit(parent)
        visit(self)
        return original(self, grad)
    monkeypatch.setattr(Tensor, "backward", recursive_backward)
    limit = sys.getrecursionlimit()
    try:
        check = Checker(ns, verbose=False)
        assert check.engine("diamond").passed and check.engine("reuse").passed
        verdict = check.engine("long_chain")
    finally:
        sys.setrecursionlimit(limit)
    assert not verdict.passed
    for words in ["10,000 ops", "the gradient is right", "nested 10,0", "Section 3.8", "explicit stack"]:
        assert words in verdict.message, (words, verdict.message)


def test_operators_check_catches_wrong_wiring_and_restores_the_ops(ns):
    Tensor = ns["Tensor"]
    original_rsub, original_mul = Tensor.__rsub__, ns["Mul"]
    Tensor.__rsub__ = lambda self, other: self - other
    try:
        verdict = Checker(ns, verbose=False).operators()
        assert not verdict.passed and "`2 - a`" in verdict.message
    finally:
        Tensor.__rsub__ = original_rsub
    assert ns["Mul"] is original_mul
    assert Checker(ns, verbose=False).operators().passed


def test_a_sum_that_tests_axes_for_truth_fails_the_operators_check(ns, monkeypatch):
    """axes=0 names the first axis: a Tensor.sum that treats it as no axes sums every element."""
    monkeypatch.setattr(ns["Tensor"], "sum",
                        lambda self, axes=None: ns["Summation"](axes)(self) if axes else ns["Summation"]()(self))
    verdict = Checker(ns, verbose=False).operators()
    assert not verdict.passed and "`a.sum(axes=0)` has shape ()" in verdict.message, verdict.message
    assert "`a.sum(axes=-1)`" not in verdict.message


@pytest.mark.parametrize("index", [np.s_[[0, 2, 0]], np.s_[1, -2], np.s_[1:, ::-2], np.array([2, 0])])
def test_indexing_goes_through_the_notebooks_getitem_operator(ns, monkeypatch, index):
    """x[index] is checked through the notebook's Tensor.__getitem__ (the op checks call GetItem directly): one that
    turns a list into a tuple fails where the index is a list, one that records no graph fails everywhere."""
    check = Checker(ns, verbose=False)
    assert check.indexing(index, (3, 4)).passed
    GetItem = ns["GetItem"]

    def list_as_tuple(self, index):
        return GetItem(tuple(index) if isinstance(index, list) else index)(self)
    monkeypatch.setattr(ns["Tensor"], "__getitem__", list_as_tuple)
    assert check.indexing(index, (3, 4)).passed is not isinstance(index, list)
    monkeypatch.setattr(ns["Tensor"], "__getitem__", lambda self, index: ns["Tensor"](self.data[index]))
    verdict = check.indexing(index, (3, 4))
    assert not verdict.passed and "does not record your GetItem" in verdict.message, verdict.message


@pytest.mark.parametrize("layout", ["fortran", "reversed"])
def test_shape_ops_are_checked_on_inputs_in_other_memory_orders(ns, check, layout):
    """A transpose's view (Fortran order) and a reversed slice (negative strides) reach the shape ops: a Reshape
    that reads memory order (order="A") is right on C-ordered inputs only; the solution is right on both."""
    class MemoryOrderReshape(ns["Reshape"]):
        def forward(self, a):
            return np.reshape(a, self.shape, order="A")
    assert check.forward(MemoryOrderReshape((3, 2)), lambda a: a.reshape(3, 2), shapes=[(2, 3)]).passed
    verdict = check.forward(MemoryOrderReshape((3, 2)), lambda a: a.reshape(3, 2), shapes=[(2, 3)], layout="fortran")
    assert not verdict.passed and "Fortran order" in verdict.message, verdict.message
    assert "never on how memory holds them" in verdict.message
    for op, expected, shape in [(ns["Reshape"]((4, 6)), lambda a: a.reshape(4, 6), (2, 3, 4)),
                                (ns["MatMul"](), np.matmul, [(2, 4, 3), (3, 5)]),
                                (ns["Summation"](-1), lambda a: a.sum(axis=-1), (2, 3, 4))]:
        shapes = shape if isinstance(shape, list) else [shape]
        assert check.forward(op, expected, shapes=shapes, layout=layout).passed
        assert check.backward(op, shapes=shapes, layout=layout).passed


def unwritten(ns, name):
    """Op class `name` as a student has it before starting its exercise."""
    def skeleton(self, *args):
        raise NotImplementedError()
    return type(name, (ns["Function"],), {"__init__": lambda self, *args: None, "forward": skeleton, "backward": skeleton})


def wrong_forward(ns, name, forward):
    return type(name, (ns[name],), {"forward": lambda self, *arrays: forward(*arrays)})


def test_each_backward_is_graded_with_the_courses_other_ops(ns):
    """Summation.backward calls broadcast_to, Pow.backward log, Sigmoid.backward `1 - node`: a helper that is
    missing or wrong never costs the op under test, and the notebook's own helpers are back afterwards."""
    Tensor = ns["Tensor"]
    helpers = {"BroadcastTo": unwritten(ns, "BroadcastTo"), "Log": wrong_forward(ns, "Log", np.log10),
               "Reshape": wrong_forward(ns, "Reshape", lambda a: a)}
    patched = {**ns, **helpers}
    methods = {name: Tensor.__dict__[name] for name in ("broadcast_to", "__rsub__", "reshape")}
    Tensor.broadcast_to = unwritten(ns, "X").forward
    Tensor.__rsub__ = lambda self, other: self - other
    try:
        check = Checker(patched, verbose=False)
        for op, shapes, domains in [(ns["Summation"](0), [(2, 3)], "real"), (ns["Summation"]((0, -1)), [(2, 3, 4)], "real"),
                                    (ns["Pow"](), [(2, 3), (2, 3)], ("positive", "real")),
                                    (ns["Sigmoid"](), [(2, 3)], "real"), (ns["Tanh"](), [(2, 3)], "real")]:
            verdict = check.backward(op, shapes, domains)
            assert verdict.passed, verdict.message
        assert not check.backward(patched["BroadcastTo"](), [(3,)]).passed      # its own exercise still fails
        assert not check.backward(patched["Log"](), [(3,)], "positive").passed
    finally:
        for name, method in methods.items():
            setattr(Tensor, name, method)
    assert all(patched[name] is helper for name, helper in helpers.items())
    assert all(Tensor.__dict__[name] is method for name, method in methods.items())


def test_an_unwritten_helper_is_named_not_blamed_on_the_op(ns, check):
    def helper(x):
        raise NotImplementedError()

    def backward(self, out_grad, node):
        return helper(out_grad)
    verdict = check.backward(subclass(ns, "Exp", backward)(), [(2, 3)])
    assert not verdict.passed and "calls `" in verdict.message and "helper" in verdict.message
    assert "MyExp().backward is not implemented yet" not in verdict.message
    own = check.backward(unwritten(ns, "Exp")(), [(2, 3)])
    assert "Exp().forward is not implemented yet: replace" in own.message


def test_nan_never_counts_as_agreement():
    assert gradcheck.worst_mismatch(np.array([1.0, np.nan]), np.array([1.0, 2.0])) is not None
    assert gradcheck.worst_mismatch(np.array([1.0, 2.0]), np.array([1.0, np.nan])) is not None
    assert gradcheck.worst_mismatch(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-7])) is None


@pytest.mark.parametrize("chapter_id", [f"ch{n:02d}" for n in range(1, 11)])
def test_no_provided_cell_hides_a_python_builtin(chapter_id):
    """A student's `sum(shares)` must mean Python's sum in every chapter: `@tensor_method def sum`
    once rebound it to Tensor.sum, and a right engine lost 8 points."""
    import builtins

    from helpers.solved_code import notebook_namespace

    namespace = notebook_namespace(chapter_id, training=False)
    hidden = sorted(name for name in dir(builtins)
                    if not name.startswith("_") and name in namespace and namespace[name] is not getattr(builtins, name))
    assert not hidden, f"{chapter_id}'s cells rebind Python's builtins {hidden}"


def raised_in_a_cell(filename):
    """An exception raised inside NumPy, called from a function compiled as if it were a notebook cell."""
    code = compile("def student_backward(x):\n    return np.broadcast_to(x, (2, 4))\n", filename, "exec")
    namespace = {"np": np}
    exec(code, namespace)
    linecache.cache[filename] = (0, None, ["def student_backward(x):\n", "    return np.broadcast_to(x, (2, 4))\n"],
                                 filename)
    try:
        namespace["student_backward"](np.zeros(3))
    except ValueError as error:
        return error


@functools.cache
def kernel_side():
    """The judge's kernel side as a probe runs it: the worker's files and the course files they ship, in one scope."""
    from autograder.grading.judge.probes import WORKER_SOURCE
    scope = {"__name__": "__babygrad_probe__"}
    exec(compile(WORKER_SOURCE, "<babygrad probe>", "exec"), scope)  # noqa: S102 (the course's own worker)
    return scope


@pytest.mark.parametrize("filename", ["/tmp/ipykernel_4242/1234567.py", "<ipython-input-3-abcdef>"])
def test_the_at_line_is_the_students_own_line_not_numpys(filename):
    error = raised_in_a_cell(filename)
    try:
        assert describe_exception("Op", "backward", error).endswith("at: return np.broadcast_to(x, (2, 4))")
        assert kernel_side()["error_report"](error)["line"] == "return np.broadcast_to(x, (2, 4))"
    finally:
        linecache.cache.pop(filename, None)


def test_the_at_line_falls_back_to_the_deepest_frame_outside_a_notebook():
    error = raised_in_a_cell("/somewhere/else.py")
    line = describe_exception("Op", "backward", error).split("at: ")[-1]
    linecache.cache.pop("/somewhere/else.py", None)
    assert "broadcast_to(x, (2, 4))" not in line, "NumPy's own line, as before, when no frame is in a cell"


# ── the registry: `check.<name>` ──

def test_every_check_a_chapter_calls_is_registered():
    """Static: each `check.<name>(` in chapters/*.py names a registered check (the judge's names are held to the
    same registry in test_judge_registry.py)."""
    import re

    from helpers.course_paths import ROOT

    from autograder.student.checks import CHECKS
    called = {name for script in (ROOT / "chapters").glob("*.py")
              for name in re.findall(r"\bcheck\.(\w+)\(", script.read_text(encoding="utf-8"))}
    assert len(called) > 40 and sorted(called - set(CHECKS) - {"all"}) == []


def test_a_check_is_found_listed_and_documented_by_name():
    import inspect
    check = Checker({}, verbose=False)
    assert {"backward", "linear", "capstone", "all"} <= set(dir(check))
    assert str(inspect.signature(check.linear)) == "(in_features=3, out_features=4, batch=5, bias=True, seed=0)"
    assert check.linear.__name__ == "linear" and "x @ W + b" in check.linear.__doc__
    with pytest.raises(AttributeError, match=r"no check named 'lineer'; did you mean check\.linear\?"):
        check.lineer  # noqa: B018


def test_a_check_registers_once():
    from autograder.student.checks import registry
    with pytest.raises(ValueError, match="two checks are named 'linear'"):
        registry.register("linear")(lambda namespace: None)


def test_a_type_from_another_module_is_named_so_that_its_article_reads_right():
    """`returned a earlier_chapters.Tensor` read wrong: a class of a module other than NumPy is named first."""
    from autograder.student.checks.describe import type_name

    Tensor = type("Tensor", (), {"__module__": "earlier_chapters"})
    for name in (type_name, kernel_side()["type_name"]):
        assert name(Tensor()) == "Tensor (from earlier_chapters)"
        assert name(np.zeros(1)) == "numpy.ndarray" and name(np.float32(1)) == "numpy.float32" and name(1) == "int"


def test_a_gradient_that_requires_a_gradient_fails_the_engine_checks(ns, monkeypatch):
    """The gradient backward() starts from is a constant: ones or a NumPy grad wrapped with the default
    requires_grad make every op's backward record a graph of the gradients, which the values never show."""
    Tensor = ns["Tensor"]
    original = Tensor.backward

    def variable_seed(self, grad=None):
        if grad is None:
            grad = Tensor(np.ones_like(self.data), dtype=self.dtype)          # requires_grad: the default, True
        elif not isinstance(grad, Tensor):
            grad = Tensor(grad, dtype=self.dtype)
        return original(self, grad)
    monkeypatch.setattr(Tensor, "backward", variable_seed)
    for name in ("product", "explicit_grad"):
        verdict = Checker(ns, verbose=False).engine(name)
        assert not verdict.passed and "handed an out_grad that requires a gradient" in verdict.message, verdict.message


def test_a_gradient_of_another_dtype_than_the_output_fails_the_engine_checks(ns, monkeypatch):
    """The gradient backward() starts from has the output's dtype (float32, what Function makes): ones or a NumPy
    grad kept float64 give the same values on the checks' float32-exact graphs, so the dtype handed is compared."""
    Tensor = ns["Tensor"]
    original = Tensor.backward

    def float64_seed(self, grad=None):
        if grad is None:
            grad = Tensor(np.ones_like(self.data), dtype=np.float64, requires_grad=False)
        elif not isinstance(grad, Tensor):
            grad = Tensor(grad, dtype=np.float64, requires_grad=False)
        return original(self, grad)
    monkeypatch.setattr(Tensor, "backward", float64_seed)
    for name in ("product", "explicit_grad"):
        verdict = Checker(ns, verbose=False).engine(name)
        assert not verdict.passed and "out_grad of dtype float64 for an output of dtype float32" in verdict.message, \
            verdict.message


def test_a_zero_grad_that_drops_the_graph_fails(ns, monkeypatch):
    def detaching(self):
        self.grad, self._op, self._inputs = None, None, ()
    monkeypatch.setattr(ns["Tensor"], "zero_grad", detaching)
    verdict = Checker(ns, verbose=False).engine_rule("zero_grad")
    assert not verdict.passed and "zero_grad forgets the gradient and nothing else" in verdict.message, verdict.message
