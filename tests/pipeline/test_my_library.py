"""The student's own library: a chapter exported from the student's notebook into mybabygrad/, a later
chapter run on it with USE_MY_LIBRARY = True, and grading that ignores the switch.

Chapter 3 (autodiff) is exported from a solved student notebook, chapter 4 (nn) runs on it: chapter 2
is not exported, so the switch takes it from the course, as it would for a student who skipped it.
"""
import shutil
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import grading
from autograder.build.frame import SETUP_ID, SWITCH_ID
from autograder.build import submissions
from autograder.grading.preprocessors import GRADED_SWITCH
from autograder.grading.repair_log import read_repairs
from autograder.student.export import (
    PACKAGE,
    chapter_module,
    export_my_chapter,
    export_notebook,
)

from helpers.course_paths import ROOT
from helpers.my_library import WRONG_SUMMATION, student_notebook


def student_folder(repo_course, tmp_path, ch03_edits=()):
    """tmp/release/ with chapters 3 and 4 (ch03 solved, with `ch03_edits`) and ch03 exported to mybabygrad/."""
    release = tmp_path / "release"
    for chapter_id in ("ch03", "ch04"):
        shutil.copytree(ROOT / "release" / chapter_id, release / chapter_id)
    path = release / "ch03" / "autodiff.ipynb"
    nbformat.write(student_notebook(repo_course, "ch03", ch03_edits), path)
    done = subprocess.run([sys.executable, "-m", "autograder", "export", str(path)], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Wrote {release / PACKAGE / 'ch03_autodiff.py'}" in done.stdout
    return release


def run_chapter_4(repo_course, release, use_mine):
    """Execute chapter 4, solved, in release/ch04: (setup cell's text, {check id: error name or None})."""
    notebook = student_notebook(repo_course, "ch04", use_mine=use_mine)
    NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(release / "ch04")}}).execute()
    setup = next(cell for cell in notebook.cells if cell.get("id") == SETUP_ID)
    text = "".join(o.get("text", "") for o in setup.outputs)
    checks = {}
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade"):
            errors = [o.ename for o in cell.outputs if o.output_type == "error"]
            checks[meta["grade_id"]] = errors[0] if errors else None
    return text, checks


def test_export_writes_one_module_per_chapter_and_lists_unfinished_exercises(repo_course, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(ROOT / "release" / "ch03", release / "ch03")
    shutil.copytree(ROOT / "release" / "ch02", release / "ch02")
    untouched = export_notebook(release / "ch03" / "autodiff.ipynb")
    assert "summation" in untouched.unfinished and "constructor" not in untouched.unfinished
    assert untouched.missing == ("ch02_tensor",)
    nbformat.write(student_notebook(repo_course, "ch02"), release / "ch02" / "tensor.ipynb")
    solved = export_notebook(release / "ch02" / "tensor.ipynb")
    assert solved.unfinished == () and chapter_module(release / "ch02" / "tensor.ipynb") == "ch02_tensor"
    package = release / PACKAGE
    assert "from .ch02_tensor import *" in (package / "ch03_autodiff.py").read_text()
    assert "CHAPTERS = ['ch02_tensor', 'ch03_autodiff']" in (package / "__init__.py").read_text()
    # the package imports on its own, outside any notebook: chapter 2 solved, chapter 3 not yet
    code = f"import sys; sys.path.insert(0, {str(release)!r}); import mybabygrad as m; print(m.ones(2, 3).shape)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "(2, 3)", done.stderr


def test_a_package_without_the_chapters_a_module_builds_on_says_which_are_missing(repo_course, tmp_path):
    """Chapter 3 exported alone: importing the package names chapter 2 as missing, not Python's bare
    "No module named"; chapter 1, which exports nothing, writes nothing and says so."""
    release = tmp_path / "release"
    shutil.copytree(ROOT / "release" / "ch03", release / "ch03")
    shutil.copytree(ROOT / "release" / "ch01", release / "ch01")
    export_notebook(release / "ch03" / "autodiff.ipynb")
    code = f"import sys; sys.path.insert(0, {str(release)!r}); import mybabygrad"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode and "ch03_autodiff builds on chapters not exported yet: ch02_tensor." in done.stderr
    with pytest.raises(ValueError, match="ch01_scalar has no export cells.*nothing was written"):
        export_notebook(release / "ch01" / "scalar.ipynb")
    assert not (release / PACKAGE / "ch01_scalar.py").exists()


@pytest.fixture(scope="module")
def right_library(repo_course, tmp_path_factory):
    return student_folder(repo_course, tmp_path_factory.mktemp("right"))


def test_chapter_4_passes_its_checks_on_the_students_chapter_3(repo_course, right_library):
    text, checks = run_chapter_4(repo_course, right_library, use_mine=True)
    assert f"Earlier chapters, yours ({right_library / PACKAGE}): ch03; the course's: ch02" in text
    assert checks and all(error is None for error in checks.values()), checks


def test_a_wrong_summation_shows_in_chapter_4_only_with_the_switch_on(repo_course, tmp_path):
    release = student_folder(repo_course, tmp_path, ch03_edits=[WRONG_SUMMATION])
    _, mine = run_chapter_4(repo_course, release, use_mine=True)
    assert any(error for error in mine.values()), "chapter 4 on a wrong Summation.backward passed every check"
    text, course = run_chapter_4(repo_course, release, use_mine=False)
    assert "Earlier chapters" not in text
    assert all(error is None for error in course.values()), course


def test_grading_ignores_the_switch(built_course):
    """A submission with the switch on and a wrong library next to the notebook keeps full marks.

    Grading rebuilds a submission on the source notebook (grading/repair.py), which restores the switch
    cell; a cell the student added keeps its code, so the student also adds one that turns the switch on:
    UseCourseChapters is what sets that one back."""
    course, chapter = built_course, built_course.chapter("ch04")
    notebook = student_notebook(course, "ch04", use_mine=True)
    at = next(i for i, cell in enumerate(notebook.cells) if cell.get("id") == SWITCH_ID)
    notebook.cells.insert(at + 1, nbformat.v4.new_code_cell("USE_MY_LIBRARY = True   # mine, really"))
    path = submissions.write_submission(course, chapter, "own-library", notebook, course.config.SUBMITTED_DIR)
    # Where the notebook would find it (next to itself): chapter 3 with a wrong Summation.backward.
    ch03 = path.parent / "ch03"
    shutil.copytree(course.root / "release" / "ch03", ch03)
    nbformat.write(student_notebook(course, "ch03", [WRONG_SUMMATION]), ch03 / "autodiff.ipynb")
    export_notebook(ch03 / "autodiff.ipynb", path.parent)
    shutil.rmtree(ch03)
    grading.autograde(course, chapter)
    graded = course.notebook(course.config.AUTOGRADED_DIR, chapter, "own-library")
    assert (graded.parent / PACKAGE / "ch03_autodiff.py").is_file()     # it reached the grader's folder
    scores = grading.scores(course, chapter)["own-library"]
    assert all(score == maximum for score, maximum in scores.values()), scores
    cells = nbformat.read(graded, as_version=4).cells
    switch = next(c for c in cells if c.get("id") == SWITCH_ID)
    assert GRADED_SWITCH in switch.source                   # the notebook says the course's chapters were used
    assert not any("USE_MY_LIBRARY = True" in c.source for c in cells if c.cell_type == "code")
    assert not any("Earlier chapters, yours" in o.get("text", "") for c in cells for o in c.get("outputs", []))
    # the switch cell has no nbgrader metadata: finding it by its cell id is not a repair
    assert [r for r in read_repairs(course.root / course.config.LEDGER_DIR, "ch04") if r.student == "own-library"] == []


def test_the_keep_your_library_cell_exports_the_notebook_jupyter_names_or_says_what_to_run(
        repo_course, tmp_path, monkeypatch):
    release = tmp_path / "release"
    shutil.copytree(ROOT / "release" / "ch03", release / "ch03")
    nbformat.write(student_notebook(repo_course, "ch03"), release / "ch03" / "autodiff.ipynb")
    monkeypatch.chdir(release / "ch03")             # a kernel starts in its notebook's folder
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    said = []
    assert export_my_chapter("ch03_autodiff", out=said.append) is None
    assert "python -m autograder export autodiff.ipynb" in said[-1] and not (release / PACKAGE).exists()
    # Jupyter Server 2 names the notebook relative to its root folder
    monkeypatch.setenv("JPY_SESSION_NAME", "course/release/ch03/autodiff.ipynb")
    result = export_my_chapter("ch03_autodiff", out=said.append)
    assert result.module == release / PACKAGE / "ch03_autodiff.py" and result.unfinished == ()
    assert said[-1].startswith(f"Wrote {result.module}")


@pytest.fixture(scope="module")
def published_with_ch03_open(tmp_path_factory):
    """The published tree with chapters 1 to 4 out and chapter 3 open (solutions of 1 and 2 only)."""
    from autograder.build import publish
    from autograder.course import Course

    return publish.publish(Course(ROOT), tmp_path_factory.mktemp("open") / "tree", ["ch01", "ch02", "ch03", "ch04"],
                           ["ch01", "ch02"]) / "release"


def exported_ch03(repo_course, release):
    path = release / "ch03" / "autodiff.ipynb"
    nbformat.write(student_notebook(repo_course, "ch03"), path)
    export_notebook(path)
    return release / PACKAGE


def test_an_open_chapter_comes_from_the_students_package_whatever_the_switch(repo_course, published_with_ch03_open,
                                                                             tmp_path):
    from autograder.student import my_library

    release = tmp_path / "release"
    for chapter_id in ("ch03", "ch04"):
        shutil.copytree(published_with_ch03_open / chapter_id, release / chapter_id)
    said = []
    with pytest.raises(my_library.OpenChapterMissing, match=r"ch03 is not past the deadline yet.*Export your ch03"):
        my_library.choose_earlier_chapters(False, release / "ch04", out=said.append)
    package = exported_ch03(repo_course, release)
    try:
        module = my_library.choose_earlier_chapters(False, release / "ch04", out=said.append)
        assert module.__dict__[my_library.MINE] == (("ch03_autodiff",), ("ch02_tensor",))
        assert said == [f"Earlier chapters, yours ({package}): ch03 (ch03 still open: yours whatever "
                        f"USE_MY_LIBRARY says); the course's: ch02"]
        assert "Tensor" in module.__all__ and "Summation" in module.__all__
    finally:
        sys.modules.pop(my_library.MODULE, None)


def test_chapter_4_published_with_chapter_3_open_runs_on_the_students_chapter_3(repo_course, published_with_ch03_open,
                                                                                 tmp_path):
    """The published chapter 4, solved, switch off: its set-up cell says chapter 3 is the student's, and every
    check passes on the student's exported chapter 3."""
    release = tmp_path / "release"
    for chapter_id in ("ch03", "ch04"):
        shutil.copytree(published_with_ch03_open / chapter_id, release / chapter_id)
    package = exported_ch03(repo_course, release)
    text, checks = run_chapter_4(repo_course, release, use_mine=False)
    assert f"Earlier chapters, yours ({package}): ch03 (ch03 still open" in text
    assert "the course's: ch02" in text
    assert checks and all(error is None for error in checks.values()), checks
