"""The judge's two registries line up with what uses them: every check a grade cell calls has a judge, every
request a judge sends has a kernel handler, and the student's and the judge's checks go by the same names."""
import ast
from pathlib import Path

import nbformat
import pytest
from helpers.course_paths import ROOT

from autograder import cell_marks
from autograder.course import Course
from autograder.grading import judge
from autograder.grading.judge import JUDGED_CHECKS, KERNEL_DECIDES, NOT_JUDGED
from autograder.grading.judge.plan import check_calls
from autograder.grading.judge.probes import WORKER_SOURCE
from autograder.student.checks import CHECKS

JUDGE_SIDE = Path(judge.__file__).parent

# The request that wraps the others (`Kernel.ask_all`): the worker's entry point `serve` reads it itself.
ENVELOPE = "batch"


def decorated_names(source, decorator):
    """{name: function name} for each `@decorator("name")` on a function of `source`."""
    return {d.args[0].value: node.name for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef) for d in node.decorator_list
            if isinstance(d, ast.Call) and getattr(d.func, "id", None) == decorator}


def grade_cell_check_names():
    """{check name: a grade cell that calls it} over every source notebook of the course."""
    course, names = Course(ROOT), {}
    for chapter in course.chapters:
        notebook = nbformat.read(course.notebook("source", chapter), as_version=4)
        for cell in notebook.cells:
            meta = cell_marks.marks(cell)
            if cell.cell_type == "code" and meta.get("grade") and meta.get("grade_id"):
                for call in check_calls(cell.source):
                    names.setdefault(call.func.attr, f"{chapter.id}/{meta['grade_id']}")
    return names


def sent_kinds():
    """{request kind: judge module} for each `{"kind": "...", ...}` literal in the judge's modules."""
    kinds = {}
    for path in sorted(JUDGE_SIDE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and key.value == "kind" and isinstance(value, ast.Constant):
                        kinds.setdefault(value.value, path.name)
    return kinds


def test_every_judge_registered_in_the_packages_modules_is_in_judged_checks():
    """A module of grading/judge/ that registers a judge but is not imported by the package would leave its
    checks unjudged: the registry holds exactly the `@judges` of the package's files, each once."""
    written = {}
    for path in sorted(JUDGE_SIDE.glob("*.py")):
        for name, function in decorated_names(path.read_text(encoding="utf-8"), "judges").items():
            assert name not in written, f"{name} is registered in {written[name]} and {path.name}"
            written[name] = f"{path.stem}.{function}"
    assert len(written) > 50
    assert {name: f"{f.__module__.rsplit('.', 1)[1]}.{f.__name__}" for name, f in JUDGED_CHECKS.items()} == written


def test_every_check_a_grade_cell_calls_is_judged_or_left_to_the_kernel():
    names = grade_cell_check_names()
    assert len(names) > 50
    missing = {name: cell for name, cell in names.items() if name not in JUDGED_CHECKS and name not in KERNEL_DECIDES}
    assert missing == {}, f"check names a grade cell calls with no @judges function: {missing}"


def test_every_request_kind_a_judge_sends_has_a_kernel_handler_and_every_handler_is_asked():
    """The kernel's handlers are read from the text the judge ships (`@handles` in the worker files, one scope),
    so a handler in a file missing from probes.WORKER_FILES counts as missing."""
    sent = sent_kinds()
    handled = decorated_names(WORKER_SOURCE, "handles")
    assert len(sent) > 40 and sent.pop(ENVELOPE) == "__init__.py"
    assert {kind: module for kind, module in sent.items() if kind not in handled} == {}, "kinds no handler answers"
    assert sorted(set(handled) - set(sent)) == [], "handlers no judge asks for"


def test_the_shipped_worker_dispatches_each_kind_to_the_function_registered_for_it():
    scope = {"__name__": "__babygrad_probe__"}
    exec(compile(WORKER_SOURCE, "<babygrad probe>", "exec"), scope)  # noqa: S102 (the course's own worker)
    assert {kind: f.__name__ for kind, f in scope["HANDLERS"].items()} == decorated_names(WORKER_SOURCE, "handles")


def test_the_student_and_the_judge_name_each_check_alike():
    """A judged name no student check has would never be called; a student check the judge does not judge is
    listed in the judge's NOT_JUDGED with its reason."""
    assert sorted(set(JUDGED_CHECKS) - set(CHECKS)) == []
    assert sorted(set(CHECKS) - set(JUDGED_CHECKS)) == sorted(NOT_JUDGED)
    assert not set(NOT_JUDGED) & set(grade_cell_check_names()), "a grade cell calls a check the judge does not judge"


def test_a_judge_and_a_kernel_handler_register_once():
    from autograder.grading.judge.in_kernel import worker
    from autograder.grading.judge.registry import judges
    with pytest.raises(ValueError, match="two judged checks are named 'sgd'"):
        judges("sgd")(lambda rng: None)
    scope = {"__name__": "__babygrad_probe__"}
    exec(compile(WORKER_SOURCE, "<babygrad probe>", "exec"), scope)  # noqa: S102 (the course's own worker)
    with pytest.raises(ValueError, match="two handlers answer requests of kind 'optimizer'"):
        scope["handles"]("optimizer")(worker.forward)
    assert JUDGED_CHECKS["sgd"].__name__ == "sgd"
