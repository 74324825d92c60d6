"""Notebook repair, through the real `nbgrader autograde` with the course's configuration: each broken
submission of chapter 3 scores exactly what its intact twin scores, cell by cell, in one autograde run."""
import copy
import json
import random
import shutil

import nbformat
import pytest
from nbformat.corpus.words import generate_corpus_id

from autograder import grading
from autograder.course import Course
from autograder.grading.cell_matching import SkeletonCell, StudentCell, plan
from autograder.grading.feedback_guard import secret_lines
from autograder.grading.nbgrader_cli import run_nbgrader
from autograder.grading.repair_log import RepairKind, read_repairs

from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT
from helpers.demo_students import demo_notebook
from helpers.outgrowers import DEEP, TOO_DEEP, deeply_nested
from helpers.readable_text import visible_text

CHAPTER = "ch03"
FULL_MARKS = Course(ROOT).autograded_points(Course(ROOT).chapter(CHAPTER))
WRONG_MUL_BACKWARD = ("return out_grad * b, out_grad * a", "return out_grad * a, out_grad * b")


def grade_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def index_of(nb, name):
    return [grade_id(c) for c in nb.cells].index(name)


def without(nb, names):
    nb = copy.deepcopy(nb)
    nb.cells = [c for c in nb.cells if grade_id(c) not in names]
    return nb


def stripped(nb, new_ids=False):
    """What another editor may hand in: no nbgrader metadata (and, with new_ids, fresh cell ids)."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        cell.metadata = {}
        if new_ids:
            cell.id = generate_corpus_id()
    return nb


def edited(nb, name, old, new):
    nb = copy.deepcopy(nb)
    cell = nb.cells[index_of(nb, name)]
    assert old in cell.source, (name, old)
    cell.source = cell.source.replace(old, new)
    return nb


def with_copy(nb, name, first_source, second_source, counts=(None, None)):
    """The solution cell `name` twice, both copies carrying its metadata (as a copy-paste in Jupyter)."""
    nb = copy.deepcopy(nb)
    i = index_of(nb, name)
    first, second = nb.cells[i], copy.deepcopy(nb.cells[i])
    second.id = generate_corpus_id()
    first.source, second.source = first_source, second_source
    first.execution_count, second.execution_count = counts
    nb.cells.insert(i + 1, second)
    return nb


def salvage_only(nb):
    """Perfect, as JSON that nbformat refuses: no version header, sources as lists of lines and as
    strings, an output of an unknown type, a cell without metadata."""
    data = json.loads(nbformat.writes(nb))
    del data["nbformat"], data["nbformat_minor"]
    for cell in data["cells"][::2]:
        cell["source"] = "".join(cell["source"])
    code = next(c for c in data["cells"] if c["cell_type"] == "code")
    code["outputs"] = [{"output_type": "hologram", "data": 42}]
    del next(c for c in data["cells"] if c["cell_type"] == "markdown")["metadata"]
    return json.dumps(data)


def class_of_broken_notebooks(perfect, partial, release):
    """{student: (intact twin, notebook or raw text)}."""
    mul = perfect.cells[index_of(perfect, "mul")].source
    wrong_mul = mul.replace(*WRONG_MUL_BACKWARD)
    dup_test = copy.deepcopy(perfect)
    i = index_of(dup_test, "test_mul_forward")
    dup_test.cells.insert(i + 1, copy.deepcopy(dup_test.cells[i]))
    dup_test.cells[i + 1].id = generate_corpus_id()
    shuffled = copy.deepcopy(partial)
    random.Random(3).shuffle(shuffled.cells)
    as_markdown = copy.deepcopy(partial)
    sub = as_markdown.cells[index_of(as_markdown, "sub")]
    as_markdown.cells[index_of(as_markdown, "sub")] = nbformat.v4.new_markdown_cell(sub.source, metadata=sub.metadata,
                                                                                   id=sub.id)
    no_kernelspec = copy.deepcopy(partial)
    del no_kernelspec.metadata["kernelspec"]
    helper = edited(perfect, "mul", "return a * b", "return _times(a, b)")
    helper.cells.insert(index_of(helper, "mul"), nbformat.v4.new_code_cell("def _times(a, b):\n    return a * b"))
    oversized = copy.deepcopy(perfect)
    oversized.cells.append(nbformat.v4.new_code_cell("x = '" + "a" * 2_000_000 + "'"))
    tests = [grade_id(c) for c in partial.cells if c.metadata.get("nbgrader", {}).get("grade")]
    return {
        "perfect": ("perfect", perfect),
        "partial": ("partial", partial),
        "untouched": ("untouched", release),
        "mul-wrong": ("mul-wrong", edited(perfect, "mul", *WRONG_MUL_BACKWARD)),
        "test-duplicated": ("perfect", dup_test),
        "three-tests-deleted": ("perfect", without(perfect, {"test_mul_forward", "test_sub_backward",
                                                              "test_engine_reuse"})),
        "all-tests-deleted": ("partial", without(partial, set(tests))),
        "shuffled": ("partial", shuffled),
        "metadata-stripped": ("partial", stripped(partial)),
        "ids-regenerated": ("partial", stripped(partial, new_ids=True)),
        "solution-as-markdown": ("partial", as_markdown),
        "solution-twice-lower-kept": ("perfect", with_copy(perfect, "mul", wrong_mul, mul)),
        "solution-twice-ran-last-kept": ("perfect", with_copy(perfect, "mul", mul, wrong_mul, counts=(9, 3))),
        "provided-deleted": ("partial", without(partial, {"cell-003"})),
        "no-kernelspec": ("partial", no_kernelspec),
        "helper-cell": ("perfect", helper),
        "no-cells": ("untouched", '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}'),
        "not-nbformat": ("perfect", salvage_only(perfect)),
        "oversized-cell": ("perfect", oversized),
        "metadata-900-deep": ("perfect", deeply_nested(perfect, DEEP)),
    }


def grade_repaired_class(root):
    """A course copy holding chapter 3, the class above plus a file that is not JSON, one autograde run."""
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy2(ROOT / name, root / name)
    shutil.copytree(ROOT / "source" / CHAPTER, root / "source" / CHAPTER)
    course = Course(root)
    chapter = course.chapter(CHAPTER)
    run_nbgrader(root, "generate_assignment", CHAPTER, "--force")
    # the demo students (perfect scores full marks) and the untouched release notebook
    students = class_of_broken_notebooks(demo_notebook(CHAPTER, "perfect"), demo_notebook(CHAPTER, "partial"),
                                         nbformat.read(course.notebook("release", chapter), as_version=4))
    students["not-json"] = ("untouched", '{"cells": [ this is not JSON')
    students["metadata-100000-deep"] = ("untouched", deeply_nested(students["perfect"][1], TOO_DEEP))
    for student, (_, notebook) in students.items():
        path = course.notebook("submitted", chapter, student)
        path.parent.mkdir(parents=True)
        path.write_text(notebook if isinstance(notebook, str) else nbformat.writes(notebook), encoding="utf-8")
    done = run_nbgrader(root, "autograde", CHAPTER, "--force", check=False)
    return students, grading.scores(course, chapter), done


@pytest.fixture(scope="module")
def repaired_class(tmp_path_factory):
    """(course, students, scores, autograde's CompletedProcess): graded once per test run."""
    root, (students, scores, done) = once_per_run(tmp_path_factory, "repaired-class", grade_repaired_class)
    return Course(root), students, scores, done


# Every broken notebook above, each to score exactly as its intact twin.
CASES = [
    "test-duplicated", "three-tests-deleted", "all-tests-deleted", "shuffled", "metadata-stripped", "ids-regenerated",
    "solution-as-markdown", "solution-twice-lower-kept", "solution-twice-ran-last-kept", "provided-deleted",
    "no-kernelspec", "helper-cell", "no-cells", "not-nbformat", "oversized-cell", "metadata-900-deep",
]


def test_twins_score_what_they_should(repaired_class):
    """The intact twins are what the cases are measured against: they must differ, or a case proves nothing."""
    _, _, scores, _ = repaired_class
    total = {s: sum(v[0] or 0 for v in scores[s].values()) for s in ("perfect", "partial", "untouched", "mul-wrong")}
    assert total["perfect"] == FULL_MARKS and total["untouched"] == 0
    assert 0 < total["partial"] < FULL_MARKS
    assert scores["mul-wrong"]["test_mul_backward"] == (0, 2) and total["mul-wrong"] == FULL_MARKS - 2
    assert scores["partial"]["test_sub_forward"] == (1, 1), "the markdown case needs a solution partial gets right"


@pytest.mark.parametrize("student", CASES)
def test_broken_notebook_scores_as_its_intact_twin(repaired_class, student):
    _, students, scores, done = repaired_class
    twin = students[student][0]
    assert student in scores, f"{student} was not graded:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    assert scores[student] == scores[twin]


# The oversized cell is appended after the perfect demo's last cell: its index is the demo's length.
OVERSIZED_INDEX = len(demo_notebook(CHAPTER, "perfect").cells)
EXPECTED_REPAIRS = {
    "test-duplicated": {(RepairKind.DUPLICATE_DROPPED, "test_mul_forward")},
    "three-tests-deleted": {(RepairKind.MISSING_CELL, c) for c in ("test_mul_forward", "test_sub_backward",
                                                                   "test_engine_reuse")},
    "metadata-stripped": {(RepairKind.MATCHED_BY_ID, "mul"), (RepairKind.MATCHED_BY_ID, "test_mul_forward")},
    "ids-regenerated": {(RepairKind.MATCHED_BY_CONTENT, "test_mul_forward"), (RepairKind.MATCHED_BY_POSITION, "mul"),
                        (RepairKind.MATCHED_BY_POSITION, "engine")},
    "solution-as-markdown": {(RepairKind.CELL_TYPE_RESTORED, "sub")},
    "solution-twice-lower-kept": {(RepairKind.DUPLICATE_DROPPED, "mul")},
    "solution-twice-ran-last-kept": {(RepairKind.DUPLICATE_DROPPED, "mul")},
    "provided-deleted": {(RepairKind.MISSING_CELL, "cell-003")},
    "no-kernelspec": {(RepairKind.KERNELSPEC_RESTORED, "")},
    "no-cells": {(RepairKind.MISSING_SOLUTION, "mul"), (RepairKind.MISSING_CELL, "test_mul_forward")},
    "not-nbformat": {(RepairKind.UNREADABLE_NOTEBOOK, "")},
    "oversized-cell": {(RepairKind.CELL_TOO_LARGE, f"added cell {OVERSIZED_INDEX}")},
    "metadata-900-deep": {(RepairKind.DEEP_METADATA_DROPPED, ""), (RepairKind.DEEP_METADATA_DROPPED, "submitted cell 0")},
}


def test_each_repair_is_logged_and_kept_for_the_instructor(repaired_class):
    course, _, _, done = repaired_class
    repairs = read_repairs(course.root / course.config.LEDGER_DIR, CHAPTER)
    found = {}
    for repair in repairs:
        found.setdefault(repair.student, set()).add((repair.kind, repair.cell))
    for student, expected in EXPECTED_REPAIRS.items():
        assert expected <= found.get(student, set()), (student, found.get(student))
    # which cells count as moved depends on the shuffle (the longest run left in order stays): some must
    assert {kind for kind, _ in found.get("shuffled", set())} == {RepairKind.MOVED}, found.get("shuffled")
    assert not {"perfect", "partial", "mul-wrong", "helper-cell"} & set(found), "intact notebooks were 'repaired'"
    merged = (course.root / course.config.LEDGER_DIR / f"{CHAPTER}_repairs.csv").read_text(encoding="utf-8")
    assert merged.count("\n") == len(repairs) + 1
    assert "Repair for three-tests-deleted: missing cell restored (cell test_sub_backward)" in done.stdout + done.stderr


def test_a_file_that_is_not_json_fails_alone_and_says_why(repaired_class):
    """Neither a file that is not JSON nor JSON nested 100,000 levels deep (deeper than Python's reader goes)
    is graded; each says why, and the class goes on."""
    course, students, scores, done = repaired_class
    log = done.stdout + done.stderr
    assert done.returncode != 0
    assert "the submitted notebook is not JSON" in log and "for student 'not-json'" in log
    assert "nests its JSON too deeply to be read" in log and "for student 'metadata-100000-deep'" in log
    chapter = course.chapter(CHAPTER)
    graded = {s for s in students if course.notebook("autograded", chapter, s).exists()}
    assert graded == set(students) - {"not-json", "metadata-100000-deep"}
    assert set(scores) >= graded


def test_deeply_nested_metadata_is_dropped_and_nbgraders_marks_kept(repaired_class):
    """900 levels of notebook and cell metadata: dropped, the notebook graded as intact (full marks, above),
    and its autograded copy holds none of it."""
    course, _, scores, _ = repaired_class
    assert sum(score or 0 for score, _ in scores["metadata-900-deep"].values()) == FULL_MARKS
    path = course.notebook("autograded", course.chapter(CHAPTER), "metadata-900-deep")
    assert '"deep"' not in path.read_text(encoding="utf-8")


def test_duplicated_solution_keeps_the_copy_that_ran_last(repaired_class):
    course, _, _, _ = repaired_class
    notebook = nbformat.read(course.notebook("autograded", course.chapter(CHAPTER), "solution-twice-ran-last-kept"),
                             as_version=4)
    assert [grade_id(c) for c in notebook.cells].count("mul") == 1
    assert WRONG_MUL_BACKWARD[0] in notebook.cells[index_of(notebook, "mul")].source


def test_oversized_cell_is_not_run_and_not_copied(repaired_class):
    course, _, _, _ = repaired_class
    path = course.notebook("autograded", course.chapter(CHAPTER), "oversized-cell")
    assert path.stat().st_size < 1_000_000
    assert "over the course's limit" in path.read_text(encoding="utf-8")


def test_feedback_works_for_a_repaired_notebook(repaired_class):
    course, _, _, _ = repaired_class
    run_nbgrader(course.root, "generate_feedback", CHAPTER, "--student=ids-regenerated", "--force")
    page = visible_text(course.root / "feedback" / "ids-regenerated" / CHAPTER / "autodiff.html")
    assert "class Sub(Function)" in page and "test_sub_forward" in page
    source = nbformat.read(course.notebook("source", course.chapter(CHAPTER)), as_version=4)
    hidden = secret_lines("\n".join(c.source for c in source.cells), "HIDDEN TESTS")
    assert hidden and [line for line in hidden if line in page] == []


def skeleton_of(kinds):
    """Skeleton cells from short descriptions: 's:text' a solution cell, 'f:text' a fixed one."""
    return [SkeletonCell(i, f"c{i}", f"c{i}", "code", k[2:], k[0] == "s") for i, k in enumerate(kinds)]


def test_matching_by_position_takes_the_cell_between_the_same_neighbours():
    skeleton = skeleton_of(["f:# intro", "s:class Mul:\n    raise NotImplementedError()", "f:check('mul')",
                      "s:class Sub:\n    raise NotImplementedError()", "f:check('sub')"])
    student = [StudentCell(i, "code", text, None, None, {}, None) for i, text in enumerate(
        ["# intro", "def helper():\n    return 2", "class Mul:\n    return a * b", "check('mul')",
         "class Sub:\n    return a - b", "check('sub')"])]
    result = plan(skeleton, student)
    assert {k: m.student for k, m in result.matches.items()} == {0: 0, 1: 2, 2: 3, 3: 4, 4: 5}
    assert result.added == {0: [1]}


def test_a_written_answer_without_metadata_is_still_found_by_its_place():
    """Another editor dropped every id: the one markdown cell between a question and the next check is the
    answer, however little it resembles "YOUR ANSWER HERE"; a code cell there is not."""
    skeleton = [SkeletonCell(0, "q_question", "q_question", "markdown", "Why? (2 points)", False),
                SkeletonCell(1, "q", "q", "markdown", "YOUR ANSWER HERE", True),
                SkeletonCell(2, "c2", "c2", "code", "check('next')", False)]
    student = [StudentCell(i, kind, text, None, None, {}, None) for i, (kind, text) in enumerate(
        [("markdown", "Why? (2 points)"), ("code", "print('scratch')"),
         ("markdown", "Because the chain rule sums over paths."), ("code", "check('next')")])]
    result = plan(skeleton, student)
    assert {k: m.student for k, m in result.matches.items()} == {0: 0, 1: 2, 2: 3}
    assert result.added == {0: [1]}


def test_parallel_grading_repairs_too_and_keeps_the_repairs_in_the_course(repaired_class, tmp_path):
    """The parallel command grades in worker folders: the repairs come back to the course's ledger."""
    from autograder.grading.parallel import grade_chapter
    course, students, scores, _ = repaired_class
    root = tmp_path / "course"
    root.mkdir()
    for name in ("course_config.py", "nbgrader_config.py", "source"):
        (shutil.copytree if (course.root / name).is_dir() else shutil.copy2)(course.root / name, root / name)
    for student in ("test-duplicated", "partial", "not-json", "metadata-900-deep", "metadata-100000-deep"):
        shutil.copytree(course.root / "submitted" / student, root / "submitted" / student)
    parallel = Course(root)
    run = grade_chapter(parallel, parallel.chapter(CHAPTER), jobs=2, progress=False)
    assert {s: kind for s, (kind, _) in run.problems.items()} == {"not-json": "corrupt", "metadata-100000-deep": "corrupt"}
    graded = grading.scores(parallel, parallel.chapter(CHAPTER))
    assert graded["test-duplicated"] == graded["metadata-900-deep"] == scores["perfect"]
    repairs = read_repairs(root / parallel.config.LEDGER_DIR, CHAPTER)
    assert {(r.student, r.kind, r.cell) for r in repairs} == {
        ("test-duplicated", RepairKind.DUPLICATE_DROPPED, "test_mul_forward"),
        ("metadata-900-deep", RepairKind.DEEP_METADATA_DROPPED, ""),
        ("metadata-900-deep", RepairKind.DEEP_METADATA_DROPPED, "submitted cell 0")}
    assert (root / parallel.config.LEDGER_DIR / f"{CHAPTER}_repairs.csv").read_text(encoding="utf-8").count("\n") == 4
