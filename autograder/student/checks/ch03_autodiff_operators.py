"""Check the Tensor operators (`a * b`, `2 / a`, `a.sum(0)`, ...) and nothing else.

While the check runs, the notebook's op classes are swapped for stand-ins whose forward is
known to be right, so a student's broken Mul costs the Mul exercise, not the wiring one.
"""
import numpy as np

from autograder.student.checks.ch03_autodiff_course_ops import operator_results
from autograder.student.checks.describe import number, type_name
from autograder.student.checks.kernel_facts import reaches, stray_leaves
from autograder.student.checks.registry import register
from autograder.student.checks.running import run_quietly
from autograder.student.verdict import failed, passed

# (expression as the student would write it, evaluated on Tensors a, b and m; what NumPy says it is; a hint)
CASES = [
    ("a * b", lambda a, b, m: a * b, "use Mul for Tensor * Tensor."),
    ("a * 2", lambda a, b, m: a * 2, "a Python number is not a Tensor: use MulScalar."),
    ("2 * a", lambda a, b, m: 2 * a, "2 * a calls a.__rmul__(2)."),
    ("a - b", lambda a, b, m: a - b, "use Sub."),
    ("a - 2", lambda a, b, m: a - 2,
     "subtracting a number adds its negative: AddScalar, given the number with its sign flipped."),
    ("2 - a", lambda a, b, m: 2 - a,
     "2 - a calls a.__rsub__(2), with a on the right: the result is 2 minus a, the negative of a plus 2 "
     "(Negate, then AddScalar), not a minus 2."),
    ("a / b", lambda a, b, m: a / b, "use Div."),
    ("a / 2", lambda a, b, m: a / 2, "use DivScalar."),
    ("2 / a", lambda a, b, m: 2 / a,
     "2 / a calls a.__rtruediv__(2), with a on the right: the result is 2 divided by a, 2 times a to the "
     "power -1 (PowerScalar, then MulScalar), not a divided by 2."),
    ("a ** b", lambda a, b, m: a ** b, "use Pow for Tensor ** Tensor."),
    ("a ** 2", lambda a, b, m: a ** 2, "use PowerScalar for Tensor ** number."),
    ("-a", lambda a, b, m: -a, "use Negate in __neg__."),
    ("a @ m", lambda a, b, m: a @ m, "use MatMul in __matmul__."),
    ("a.matmul(m)", lambda a, b, m: a @ m, "matmul is the method form of @."),
    ("a.reshape((3, 2))", lambda a, b, m: a.reshape(3, 2), "use Reshape(shape)."),
    ("a.transpose()", lambda a, b, m: a.T, "axes=None swaps the last two axes."),
    ("a.transpose((1, 0))", lambda a, b, m: a.T, "pass axes on to Transpose."),
    ("a.sum()", lambda a, b, m: a.sum(), "use Summation(axes)."),
    ("a.sum(axes=1)", lambda a, b, m: a.sum(axis=1), "the keyword is `axes`, as in Summation."),
    # Settings whose truth value is not what they mean: axis 0 is an axis, -1 counts from the end.
    ("a.sum(axes=0)", lambda a, b, m: a.sum(axis=0),
     "pass axes on to Summation as given: 0 names the first axis; only None means every axis."),
    ("a.sum(axes=-1)", lambda a, b, m: a.sum(axis=-1),
     "pass axes on to Summation as given: a negative axis counts from the last one."),
    ("a.broadcast_to((4, 2, 3))", lambda a, b, m: np.broadcast_to(a, (4, 2, 3)), "use BroadcastTo(shape)."),
    # A float is a Python number as much as 2 is (section 3.7: `x * 0.5`): each operator that tells numbers from
    # Tensors meets one.
    ("a * 0.5", lambda a, b, m: a * 0.5, "a Python float is a number too: use MulScalar."),
    ("a - 0.5", lambda a, b, m: a - 0.5, "a Python float is a number too: use AddScalar."),
    ("a / 0.5", lambda a, b, m: a / 0.5, "a Python float is a number too: use DivScalar."),
    ("a ** 0.5", lambda a, b, m: a ** 0.5,
     "a Python float is a number too: use PowerScalar."),
]

# The float cases and the int case of the same operator: when only the float one fails, the operator took only
# ints for numbers (the kernel's and the judge's message).
FLOAT_TWINS = {"a * 0.5": "a * 2", "a - 0.5": "a - 2", "a / 0.5": "a / 2", "a ** 0.5": "a ** 2"}


def only_ints_note(text, failed_texts):
    """What to add to the problem of case `text` when it is a float case whose int twin passed, or ""."""
    twin = FLOAT_TWINS.get(text)
    if twin is None or twin in failed_texts:
        return ""
    return (f" (`{twin}` worked, so only ints were taken for numbers: anything that is not a Tensor is a number, a "
            "setting of the scalar op, so test isinstance(other, Tensor), not isinstance(other, int).)")


# What a result with the right values but no recorded graph lacks (the kernel's and the judge's message).
NO_GRAPH = ("has the right values but no graph: it must be computed by calling an op (a Function instance) on the "
            "tensors, whose __call__ records _op and _inputs.")


# A result whose graph holds a tensor the case never gave, one that requires a gradient: a number made into a Tensor.
STRAY_LEAF = ("has the right values, but its graph holds a new tensor that requires a gradient, besides the "
              "tensors you gave: the number was made into a Tensor (which requires a gradient by default) and "
              "passed to a Tensor-with-Tensor op. A Python number is a setting of a scalar op, never an input: "
              "it needs no gradient, and a result computed from a constant and a number must stay a constant.")


@register("operators")
def check_operators(namespace):
    """The Tensor operators and methods call the right Function."""
    rng = np.random.default_rng(7)
    arrays = rng.uniform(0.5, 2, (2, 3)), rng.uniform(0.5, 2, (2, 3)), rng.uniform(-1, 1, (3, 4))
    cases = {text: (expected(*arrays), hint) for text, expected, hint in CASES}

    def told(facts):
        return facts["text"], case_problem(namespace["Tensor"], facts["text"], *cases[facts["text"]], facts)

    return operators_verdict(operator_results(namespace, [text for text, _, _ in CASES], arrays, run_quietly, told))


def case_problem(Tensor, text, want, hint, facts):
    """What is wrong with the result of the case `text` (its `operator_results` facts), or None."""
    result, error = facts["result"], facts["error"]
    if isinstance(error, NotImplementedError):
        return f"`{text}` is not written yet (its method still raises NotImplementedError). Hint: {hint}"
    if error is not None:
        return f"`{text}` raised {type(error).__name__}: {error}. Hint: {hint}"
    if not isinstance(result, Tensor):
        return f"`{text}` returned a {type_name(result)}, expected a Tensor. Hint: {hint}"
    if tuple(result.shape) != np.shape(want):
        return f"`{text}` has shape {tuple(result.shape)}, expected {np.shape(want)}. Hint: {hint}"
    if not np.allclose(result.data, want, rtol=1e-5, atol=1e-6):
        worst = np.unravel_index(np.argmax(np.abs(result.data - want)), np.shape(want)) if np.ndim(want) else ()
        return (f"`{text}` gives {number(float(result.data[worst]))} at {[int(i) for i in worst]}, "
                f"expected {number(float(np.asarray(want)[worst]))}. Hint: {hint}")
    a = facts["tensors"][0]
    if not facts["standin"] or not reaches(result, a):
        return f"`{text}` {NO_GRAPH} Hint: {hint}"
    if stray_leaves(result, facts["tensors"]):
        return f"`{text}` {STRAY_LEAF} Hint: {hint}"
    return None


def operators_verdict(problems):
    """The verdict from [(case text, its problem or None)] in CASES' order (shared with the judge); a float case whose
    int twin passed says that only ints were taken for numbers."""
    failed_texts = {text for text, problem in problems if problem}
    lines = [problem + only_ints_note(text, failed_texts) for text, problem in problems if problem]
    if lines:
        return failed(f"{len(lines)} of {len(CASES)} Tensor operators are not wired right:\n  - " + "\n  - ".join(lines))
    return passed(f"✔ all {len(CASES)} Tensor operators call the right Function")
