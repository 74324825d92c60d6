"""A backward is checked against finite differences of the student's own forward, so a forward that lies
must not buy a backward's points: with every op's forward computing nothing (a constant, whose gradient
is zero) and every backward returning zeros, or with forwards right only where not nudged, the judge
fails every backward cell of chapters 3, 4 and 10, in process (no kernel, as tests/helpers/soak.py).
Before references.py, the constant forwards took all 22 backward cells of chapter 3 (49 of 87 points).
The solved chapters keep every backward cell: tests/pipeline/test_judge.py soaks them under many secrets."""
import numpy as np
import pytest

from autograder.course import Course
from autograder.grading.judge import Judge
from autograder.student.checks import references

from helpers.course_paths import ROOT
from helpers.solved_code import in_process, notebook_namespace


def one_zero(ns, name):
    """forward: always one zero (the forgery that took chapter 3's backward cells); backward: zeros."""
    ns[name].forward = lambda self, *arrays: np.zeros(1)
    ns[name].backward = zero_backward(ns["Tensor"])


def zeros_shaped_right(ns, name):
    """forward: zeros of the right shape; backward: zeros."""
    right = ns[name].forward
    ns[name].forward = lambda self, *arrays: np.zeros_like(right(self, *arrays))
    ns[name].backward = zero_backward(ns["Tensor"])


def zero_backward(Tensor):
    return lambda self, out_grad, node: tuple(Tensor(np.zeros(x.shape), dtype=np.float64) for x in node._inputs)


def right_once(ns, name):
    """forward: the course's answer at each new point, zeros at a point nudged in one element (the inputs of
    finite differences); backward: zeros."""
    cls, point = ns[name], []
    right = cls.forward

    def nudged(arrays):
        return point and len(arrays) == len(point) and all(np.shape(a) == b.shape for a, b in zip(arrays, point)) \
            and sum(int(np.count_nonzero(a != b)) for a, b in zip(arrays, point)) == 1 \
            and max(float(np.max(np.abs(a - b), initial=0.0)) for a, b in zip(arrays, point)) < 1e-4

    def forward(self, *arrays):
        if nudged(arrays):
            return np.zeros_like(right(self, *arrays))
        point[:] = [np.array(a, copy=True) for a in arrays]
        return right(self, *arrays)

    cls.forward = forward
    cls.backward = zero_backward(ns["Tensor"])


def backward_cells(judge):
    return [grade_id for grade_id in judge.judged_cells
            if any(call.name == "backward" for call in judge.plans[grade_id].calls)]


@pytest.mark.parametrize("forge", [one_zero, zeros_shaped_right, right_once])
@pytest.mark.parametrize("chapter_id", ["ch03", "ch04", "ch10"])
def test_a_forward_that_lies_buys_no_backward_points(chapter_id, forge):
    course = Course(ROOT)
    judge = Judge.from_source(course.notebook(course.config.SOURCE_DIR, course.chapter(chapter_id)), secret=5)
    cells = backward_cells(judge)
    assert cells, f"{chapter_id} has no backward cells to forge"
    namespace = notebook_namespace(chapter_id, training=False)
    forged = [name for name in references.FORWARDS if isinstance(namespace.get(name), type)
              and issubclass(namespace[name], namespace["Function"])]
    for name in forged:
        forge(namespace, name)
    run_probe = in_process(namespace)
    passed = [grade_id for grade_id in cells if judge.judge_cell(grade_id, run_probe).passed]
    assert not passed, f"{chapter_id}: backward cells passed with forged forwards ({forge.__name__}): {passed}"
    message = judge.judge_cell(cells[0], run_probe).message
    assert "fix forward" in message, message


@pytest.mark.parametrize("name, settings, shapes", [
    ("Conv", (1, 0), [(2, 3, 5, 5), (4, 3, 3, 3)]), ("Conv", (2, 1), [(2, 2, 6, 5), (3, 2, 3, 3)]),
    ("Conv", (3, 1), [(1, 2, 7, 6), (2, 2, 3, 2)]), ("Conv", (1, 2), [(2, 1, 3, 4), (2, 1, 3, 3)]),
    ("Flip", ((0, 2),), [(3, 2, 4)]), ("Flip", ((-1,),), [(2, 5)]),
    ("Dilate", ((2, 3), 1), [(2, 3, 3, 4)]), ("Dilate", ((1,), 2), [(2, 4, 3)]), ("Dilate", ((-1,), 0), [(2, 3)]),
    ("Undilate", ((0,), 1), [(6,)]), ("Undilate", ((1, 2), 2), [(2, 7, 5)]),
    ("MaxPool", (2,), [(2, 3, 5, 6)]), ("MaxPool", (3,), [(1, 2, 6, 7)]),
])
def test_the_fast_references_are_the_slow_loops(name, settings, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in shapes]
    fast, slow = references.FORWARDS[name](*settings), references.SLOW[name](*settings)
    np.testing.assert_allclose(fast(*arrays), slow(*arrays), rtol=1e-12, atol=1e-12)


def test_the_notebooks_own_check_says_the_same():
    namespace = notebook_namespace("ch03", training=False)
    zeros_shaped_right(namespace, "Mul")
    verdict = namespace["check"].backward(namespace["Mul"](), shapes=[(2, 3), (2, 3)])
    assert not verdict.passed and "fix forward" in verdict.message, verdict.message
    namespace = notebook_namespace("ch03", training=False)
    namespace["Mul"].forward = lambda self, a, b: a * b + 1.0       # off by a constant: the same differences
    verdict = namespace["check"].backward(namespace["Mul"](), shapes=[(2, 3), (2, 3)])
    assert verdict.passed, verdict.message
