"""A hidden check's failure says what went wrong, never the hidden inputs that show it. Partly wrong chapter 3
submissions (the catalogue's mistakes) graded by plain `nbgrader autograde`, their feedback made by
`nbgrader generate_feedback`, their Gradescope results.json made from the autograded notebook: no (op, shape)
pair that only a hidden check uses appears in any of the three, and no hidden failure shows a value."""
import ast
import html
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.build import submissions
from autograder.grading.gradescope_runner import results_json
from autograder.grading.nbgrader_cli import run_nbgrader
from autograder.grading.judge.hidden import hidden_failure

from helpers.across_workers import once_per_run
from helpers.class_support import course_copy
from helpers.grading_support import mistake_buckets

CHAPTER = "ch03"
BUCKETS = 3         # submissions of the catalogue's mistakes, grouped so none hides another


def op_shape_pairs(source):
    """{(op class, shape)} of every `check.NAME(Op(...), ..., shapes=[...])` call in `source`."""
    pairs = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                and isinstance(node.args[0], ast.Call) and isinstance(node.args[0].func, ast.Name)):
            continue
        for keyword in node.keywords:
            if keyword.arg == "shapes":
                pairs |= {(node.args[0].func.id, tuple(shape)) for shape in ast.literal_eval(keyword.value)}
    return pairs


def hidden_and_visible(cell_source):
    """The cell's source split at nbgrader's hidden-test markers: (hidden code, visible code)."""
    hidden, visible, inside = [], [], False
    for line in cell_source.splitlines():
        if "### BEGIN HIDDEN TESTS" in line:
            inside = True
        elif "### END HIDDEN TESTS" in line:
            inside = False
        else:
            (hidden if inside else visible).append(line)
    return "\n".join(hidden), "\n".join(visible)


def hidden_only_pairs(source_notebook):
    """(op, shape) pairs that the hidden regions of the source notebook use and no visible check does."""
    hidden, visible = set(), set()
    for cell in source_notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
            secret, shown = hidden_and_visible(cell.source)
            hidden |= op_shape_pairs(secret)
            visible |= op_shape_pairs(shown)
    return hidden - visible


def without_constructor_arguments(line, ops):
    """The line with every `Op(...)` written as `Op`: an op's own arguments (BroadcastTo((3, 4))) are not its input's shape."""
    for op in ops:
        while (match := re.search(rf"\b{op}\(", line)) is not None:
            depth, end = 0, match.end() - 1
            for end in range(match.end() - 1, len(line)):
                depth += {"(": 1, ")": -1}.get(line[end], 0)
                if depth == 0:
                    break
            line = line[:match.end() - 1] + line[end + 1:]
    return line


def told(text, pairs):
    """The pairs that a line of `text` names together: the op's name and the shape, as Python or NumPy print it."""
    found, ops = set(), {op for op, _ in pairs}
    for line in text.splitlines():
        line = without_constructor_arguments(line, ops)
        squeezed = line.replace(" ", "")
        for op, shape in pairs:
            written = "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
            shown = written in squeezed if shape else re.search(r"(?:\b[a-z]|shape|inputs?|on) ?\(\)", line)
            if re.search(rf"\b{op}\b", line) and shown:
                found.add((op, shape))
    return found


def output_texts(page):
    """What the feedback page shows of the cells' outputs (not their source, nor the chapter's text)."""
    blocks = re.findall(r'<div class="output_subarea[^"]*">(.*?)</div>', page.read_text(encoding="utf-8"), re.DOTALL)
    return "\n".join(html.unescape(re.sub(r"<[^>]+>", "", block)) for block in blocks)


def grade_mistakes(folder, built_course):
    course = course_copy(built_course, folder, CHAPTER)
    chapter = course.chapter(CHAPTER)
    cfg = course.config
    release = nbformat.read(course.notebook(cfg.RELEASE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4))
    buckets = mistake_buckets(submissions.load_catalog(course, chapter).MISTAKES)[:BUCKETS]
    students = [f"mistakes-{i}" for i in range(1, len(buckets) + 1)]
    for student, bucket in zip(students, buckets):
        notebook = submissions.filled(release, submissions.with_mistakes(answers, bucket))
        submissions.write_submission(course, chapter, student, notebook, cfg.SUBMITTED_DIR)
    run_nbgrader(course.root, "autograde", CHAPTER)
    run_nbgrader(course.root, "generate_feedback", CHAPTER)
    source = nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4)
    pages = {}
    for student in students:
        graded = nbformat.read(course.notebook(cfg.AUTOGRADED_DIR, chapter, student), as_version=4)
        with Gradebook(course.gradebook_url, course_id=cfg.COURSE_ID) as gradebook:
            grades = gradebook.find_submission_notebook(chapter.notebook, chapter.id, student).grades
            scores = {g.name: (g.score, g.max_score) for g in grades}
        results = results_json(chapter, source, graded, scores, problem=None, found=Path(folder))
        pages[student] = {
            "feedback": output_texts(course.root / cfg.FEEDBACK_DIR / student / CHAPTER / f"{chapter.notebook}.html"),
            "outputs": [json.dumps(o) for c in graded.cells for o in c.get("outputs", [])],
            "results": "\n".join([results.get("output", "")] + [test["output"] for test in results["tests"]]),
        }
    return {"pages": pages, "hidden_only": sorted(hidden_only_pairs(source))}


@pytest.fixture(scope="module")
def graded_mistakes(built_course, tmp_path_factory):
    _, graded = once_per_run(tmp_path_factory, "hidden-messages", lambda folder: grade_mistakes(folder, built_course))
    return graded


def test_the_hidden_only_pairs_are_read_from_the_source():
    """The pairs the issue names are among those read from chapter 3's hidden regions."""
    from helpers.course_paths import ROOT
    pairs = hidden_only_pairs(nbformat.read(ROOT / "source" / CHAPTER / "autodiff.ipynb", as_version=4))
    assert {("Abs", (2, 3, 2)), ("Abs", (4, 3)), ("Abs", (8,)), ("Div", (2, 3, 2)), ("Div", (3, 4)),
            ("Div", (4, 5))} <= pairs
    assert not told("Div.backward on inputs (2, 3), (2, 3): wrong", pairs)
    assert told("Div.backward with inputs a(2, 3, 2), b(2, 3, 2): wrong", pairs) == {("Div", (2, 3, 2))}
    assert not told("Mul().backward with inputs a(2, 3), b(2, 3): wrong", pairs)
    assert not told("BroadcastTo((3, 4)).forward raised NotImplementedError()", pairs)
    assert told("Mul().backward with inputs a(), b(): wrong", pairs) == {("Mul", ())}


def test_no_hidden_input_reaches_feedback_notebook_or_gradescope(graded_mistakes):
    hidden_only = {(op, tuple(shape)) for op, shape in graded_mistakes["hidden_only"]}
    hidden_failures = 0
    for student, page in graded_mistakes["pages"].items():
        for where in ("feedback", "results"):
            assert told(page[where], hidden_only) == set(), f"{student}'s {where} names hidden inputs"
        assert told("\n".join(page["outputs"]), hidden_only) == set(), f"{student}'s autograded outputs name hidden inputs"
        for output in page["outputs"]:
            message = json.loads(output).get("evalue", "")
            if "a hidden check, failed" in message:
                hidden_failures += 1
                assert "worst" not in message and "input value" not in message, message
    assert hidden_failures, "no mistake failed a hidden check: the test proves nothing"


def test_a_hidden_failure_keeps_what_went_wrong_and_the_rule():
    message = ("Div.backward on inputs (2, 3, 2), (2, 3, 2): the gradient for b is wrong in 12 of 12 elements.\n"
               "  worst element b[1, 0, 1]: your backward gives 0.5321, finite differences give -0.2211 "
               "(input value 1.234)\n  Hint: d(a/b)/db = -a / b**2: the power rule on b**-1.")
    told_ = hidden_failure("backward", 7, message)
    assert "Div.backward" in told_ and "the gradient for b is wrong" in told_ and "b**2" in told_
    assert "line 7" in told_ and "hidden check" in told_
    for shown in ("(2, 3, 2)", "12 of 12", "0.5321", "-0.2211", "1.234", "[1, 0, 1]"):
        assert shown not in told_
