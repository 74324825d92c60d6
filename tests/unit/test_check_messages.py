"""Messages that teach, checked everywhere: no failing check is silent, no hint holds code (as
helpers/code_in_text.py defines it), and no two known slips of one op (or of one optimizer) say the same.

The failing messages come from the course's own catalogue of wrong answers (demo/mistakes/): each mistake
is run in process, and every visible check of every cell it must lose is read as a student reads it."""
import contextlib
import io
import itertools
import re

import pytest

from autograder import cell_marks
from autograder.build import authoring, submissions
from autograder.course import Course
from autograder.student.checks import Checker, ch05_optimizer as optim, slips
from autograder.student.checks.registry import CHECKS
from autograder.student.hints import rules

from helpers.code_in_text import code_in, hint_of
from helpers.course_paths import ROOT
from helpers.soak import NEEDS_TRAINING, replacements
from helpers.solved_code import notebook_namespace, recursion_limit_kept

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS\n?", re.S)
CALLED = re.compile(r"\bcheck\.(\w+)\(")


def test_code_in_text_tells_code_from_prose():
    for code in ["p.data -= self.lr * g", "use `if seed:`", "`p.grad + wd * p.data`", "np.zeros_like(p.data)",
                 "self.velocity[i] = g", "u += g", "return loss.item()", "np.pad(image, p)", "`loss_fn(y, pred)`"]:
        assert code_in(code), code
    for prose in ["u = momentum·u + g", "t = 1 at the first step", "1 - beta^t", "√v̂ + eps", "call `step()`",
                  "`.grad` is None", "check.value_engine('order') shows it", "the derivative of a·b", "`int64`",
                  "`a * 2` raised an error", "`a.matmul(m)` is not written yet"]:
        assert code_in(prose) is None, prose


def visible_test_cells(chapter_id):
    """{grade id: the test cell's visible code} of a chapter."""
    script = next((ROOT / "chapters").glob(f"{chapter_id}_*.py"))
    cells = authoring.notebook_from_script(script.read_text()).cells
    return {cell_marks.grade_id(c): HIDDEN.sub("", c.source) for c in cells if cell_marks.is_test_cell(c)}


SOLUTION = re.compile(r"^( *)### BEGIN SOLUTION\n(.*?)^ *### END SOLUTION$", re.S | re.M)


def untouched(chapter_id):
    """{cell: [(old, new)]}: every solution region replaced by `raise NotImplementedError()`, as students get it."""
    script = next((ROOT / "chapters").glob(f"{chapter_id}_*.py"))
    edits = {}
    for cell in authoring.notebook_from_script(script.read_text()).cells:
        if cell.cell_type == "code" and cell_marks.is_solution(cell):
            edits[cell_marks.grade_id(cell)] = [(body.rstrip("\n"), f"{indent}raise NotImplementedError()")
                                                for indent, body in SOLUTION.findall(cell.source)]
    return edits


def failing_messages(chapter_id):
    """(mistake, cell, checks called, message) for the untouched student version and every catalogued mistake,
    on every cell it must lose whose visible checks fail it. Cells that need a training run are read only in the
    untouched version, where the exercise they train fails before any training starts."""
    catalog = submissions.load_catalog(COURSE, COURSE.chapter(chapter_id))
    cells = visible_test_cells(chapter_id)
    answers = [("untouched", untouched(chapter_id), list(cells))]
    answers += [(m.name, replacements(m), m.loses) for m in catalog.MISTAKES]
    found = []
    for name, replace, loses in answers:
        lost = [c for c in loses if name == "untouched" or not set(CALLED.findall(cells[c])) & NEEDS_TRAINING]
        if not lost:
            continue
        with recursion_limit_kept():
            namespace = notebook_namespace(chapter_id, replace, training=False)
            namespace["check"] = Checker(namespace, verbose=False)
            for cell in lost:
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(cells[cell], cell, "exec"), namespace)  # noqa: S102 (the course's own cell)
                except AssertionError as error:
                    found.append((name, cell, set(CALLED.findall(cells[cell])), str(error)))
                except NameError:       # a trained model the skipped training cell would have made: nothing to read
                    continue
    return found


@pytest.fixture(scope="module", params=CHAPTERS)
def chapter_messages(request):
    return request.param, failing_messages(request.param)


def test_every_failing_visible_check_says_why_without_code(chapter_messages):
    """A failed check's message is never empty, its first line says something, and its hint holds no code."""
    chapter_id, messages = chapter_messages
    assert [(name, cell) for name, cell, _, message in messages
            if not message.strip() or not message.splitlines()[0].strip()] == []
    assert [(name, cell, code_in(hint_of(message)), hint_of(message)) for name, cell, _, message in messages
            if code_in(hint_of(message))] == []


def test_the_catalogue_makes_every_graded_check_fail_visibly(chapter_messages):
    """Every check a chapter's graded cells call fails, in its visible form, for the untouched version or a
    catalogued mistake (chapter 7's trained model aside: it needs the notebook's training run): so the test above
    reads a failing message of every one of them."""
    chapter_id, messages = chapter_messages
    called = {name for code in visible_test_cells(chapter_id).values() for name in CALLED.findall(code)}
    failed = set().union(*(checks for _, _, checks, _ in messages)) if messages else set()
    assert called - {"all", "trained_model"} <= failed, sorted(called - {"all", "trained_model"} - failed)
    assert called <= set(CHECKS) | {"all"}


def test_no_hint_of_a_backward_or_a_slip_holds_code():
    texts = list(rules().values()) + [slip.says for ops in slips.SLIPS.values() for slip in ops]
    assert [t for t in texts if code_in(t)] == []


def test_two_slips_of_one_op_never_say_the_same():
    for op, known in slips.SLIPS.items():
        says = [slip.says.strip() for slip in known]
        assert all(says), op
        assert len(set(says)) == len(says), op


SETTINGS = [("sgd", (0.1, 0.9, 0.1)), ("sgd", (0.1, 0.0, 0.1)), ("sgd", (0.1, 0.9, 0.0)),
            ("adam", (0.01, 0.9, 0.999, 1e-8, 0.0)), ("adam", (0.01, 0.9, 0.999, 0.1, 0.0)),
            ("adam", (0.01, 0.9, 0.999, 1e-8, 0.1))]


@pytest.mark.parametrize("kind, settings", SETTINGS)
def test_each_known_optimizer_mistake_has_its_own_words_and_its_own_numbers(kind, settings):
    """The optimizers' known mistakes: hints that differ and hold no code; and on the checks' scenario, two
    mistakes whose numbers differ from the rule's never agree with each other, so each gets its own hint."""
    mistakes = optim.sgd_mistakes(*settings) if kind == "sgd" else optim.adam_mistakes(*settings)
    rule = optim.sgd_rule(*settings) if kind == "sgd" else optim.adam_rule(*settings)
    hints = [hint for _, hint in mistakes] + [optim.SGD_RULE if kind == "sgd" else optim.ADAM_RULE]
    assert len(set(hints)) == len(hints) and all(h.strip() for h in hints)
    assert [h for h in hints if code_in(h)] == []
    for seed in range(3):
        values, grads = optim.scenario(seed)
        right = optim.history(rule, values, grads)
        shown = [(hint, optim.history(wrong, values, grads)) for wrong, hint in mistakes]
        shown = [(hint, steps) for hint, steps in shown if not optim.same_history(steps, right)]
        for (hint_a, a), (hint_b, b) in itertools.combinations(shown, 2):
            assert not optim.same_history(a, b), (settings, hint_a, hint_b)
