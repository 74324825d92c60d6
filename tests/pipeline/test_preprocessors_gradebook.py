"""The course's nbgrader preprocessors that read and write a gradebook, against nbgrader's own: chapter 3
registered through nbgrader in a temporary course, then the same notebooks through both."""
import nbformat
import pytest
from nbformat.v4 import new_output


def tamperings():
    """Chapter 3's release notebook as submitted, and copies changed in each way OverwriteCells repairs."""
    import copy

    from autograder import cell_marks
    from helpers.course_paths import ROOT
    release = nbformat.read(ROOT / "release" / "ch03" / "autodiff.ipynb", as_version=4)
    tests = [i for i, c in enumerate(release.cells) if cell_marks.is_test_cell(c)]
    answers = [i for i, c in enumerate(release.cells) if c.metadata.get("nbgrader", {}).get("solution")]
    locked_text = next(i for i, c in enumerate(release.cells) if c.cell_type == "markdown"
                       and c.metadata.get("nbgrader", {}).get("locked"))

    def changed(change):
        notebook = copy.deepcopy(release)
        change(notebook.cells)
        return notebook
    yield "as released", release
    yield "hidden tests deleted", changed(lambda cells: setattr(cells[tests[0]], "source", "assert True"))
    yield "points raised", changed(lambda cells: cells[tests[1]].metadata.nbgrader.update(points=99))
    yield "unlocked", changed(lambda cells: cells[tests[2]].metadata.nbgrader.update(locked=False))
    yield "text rewritten", changed(lambda cells: setattr(cells[locked_text], "source", "nothing to see"))
    yield "made markdown", changed(lambda cells: cells.__setitem__(tests[3], nbformat.v4.new_markdown_cell(
        "x", metadata=cells[tests[3]].metadata)))
    yield "unknown id", changed(lambda cells: cells[answers[0]].metadata.nbgrader.update(grade_id="made-up"))
    yield "checksum forged", changed(lambda cells: cells[answers[1]].metadata.nbgrader.update(checksum="0" * 32))


def registered_ch03(folder):
    """A course in `folder` with chapter 3 registered in its gradebook, as autograde finds it; its db url."""
    import shutil

    from autograder import grading
    from autograder.course import Course
    from helpers.course_paths import ROOT
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy2(ROOT / name, folder / name)
    shutil.copytree(ROOT / "source" / "ch03", folder / "source" / "ch03")
    course = Course(folder)
    grading.register(course, course.chapter("ch03"))
    return f"sqlite:///{folder / 'gradebook.db'}"


def test_overwrite_cells_read_once_repairs_what_nbgraders_own_does(tmp_path):
    """The same notebook out, cell for cell, as nbgrader's OverwriteCells, on every way a submission can
    tamper with the cells it restores (or the same error); only where the source cells are read from differs."""
    import hashlib

    from nbgrader.preprocessors import OverwriteCells

    from autograder.grading.preprocessors import OverwriteCellsReadOnce
    resources = {"nbgrader": {"notebook": "autodiff", "assignment": "ch03", "db_url": registered_ch03(tmp_path)}}

    def repaired(step, notebook):
        try:
            out, _ = step(add_missing_cells=True).preprocess(nbformat.from_dict(notebook), resources)
        except Exception as error:          # nbgrader's own fails on a made-up id (RepairNotebook runs first)
            return [f"{type(error).__name__}: {error}"]
        return [hashlib.sha256(nbformat.writes(nbformat.from_dict({"cells": [c], "metadata": {}, "nbformat": 4,
                                                                     "nbformat_minor": 5})).encode()).hexdigest()
                for c in out.cells]
    for name, notebook in tamperings():
        ours, theirs = repaired(OverwriteCellsReadOnce, notebook), repaired(OverwriteCells, notebook)
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
        assert len(ours) == len(theirs) and first is None, f"{name}: cell {first} differs ({len(ours)}, {len(theirs)} cells)"


# nbgrader's own Gradebook.add_submission warns while SQLAlchemy autoflushes its new rows (nbgrader/api.py);
# the set-up below calls it as nbgrader's autograde does.
@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")
def test_save_autogrades_at_once_writes_the_rows_nbgraders_own_does(tmp_path):
    """Two students hand in the same notebooks, one saved by nbgrader's SaveAutoGrades, one by ours: every
    grade (auto score, needs-manual-grade flag, a grader's earlier manual score) and every comment is the
    same. The notebooks: the untouched release ("No response." comments, no errors) and the executed
    solution with errors in three test cells."""
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import SaveAutoGrades

    from autograder.grading.preprocessors import SaveAutoGradesAtOnce
    from helpers.course_paths import ROOT
    db_url = registered_ch03(tmp_path)
    failed = nbformat.read(ROOT / "solutions" / "ch03" / "autodiff.ipynb", as_version=4)
    tests = [c for c in failed.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"]
    for cell in tests[:3]:
        cell.outputs.append(new_output("error", ename="AssertionError", evalue="wrong", traceback=[]))
    notebooks = {"release": nbformat.read(ROOT / "release" / "ch03" / "autodiff.ipynb", as_version=4),
                 "failed": failed}

    def saved(step, student, notebook):
        with Gradebook(db_url) as gradebook:
            gradebook.add_student(student)
            gradebook.add_submission("ch03", student)
            gradebook.find_grade(tests[4].metadata.nbgrader.grade_id, "autodiff", "ch03", student).manual_score = 0.5
            gradebook.db.commit()
        resources = {"nbgrader": {"notebook": "autodiff", "assignment": "ch03", "student": student, "db_url": db_url}}
        step().preprocess(nbformat.from_dict(notebook), resources)
        with Gradebook(db_url) as gradebook:
            submission = gradebook.find_submission_notebook("autodiff", "ch03", student)
            grades = {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade) for g in submission.grades}
            comments = {c.name: c.auto_comment for c in submission.comments}
        return grades, comments
    theirs = {}
    for name, notebook in notebooks.items():
        theirs[name] = saved(SaveAutoGrades, f"theirs-{name}", notebook)
        assert saved(SaveAutoGradesAtOnce, f"ours-{name}", notebook) == theirs[name], name
    grades, _ = theirs["failed"]                                # rows the comparison can tell apart
    assert {g[0] for g in grades.values()} >= {0.0, None} and any(g[0] for g in grades.values())
    assert grades[tests[4].metadata.nbgrader.grade_id][2] is True
    assert set(theirs["release"][1].values()) >= {"No response."}
