"""`python -m autograder check NOTEBOOK`: the student's table outside the browser, the same as the
notebook's own progress cell, with exit code 0 only when every visible check passes."""
import shutil
import subprocess
import sys

import nbformat
import pytest

from autograder.build.frame import PROGRESS_ID
from autograder.build import student_config
from autograder.course import Course
from autograder.questions import written_points
from autograder.student import selfcheck
from autograder.student.progress import NOT_RUN, PASSED, format_table

from helpers.course_paths import ROOT
from helpers.demo_students import demo_notebook

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]


def student_folder(tmp_path, chapter, student=None):
    """A student's folder: the release files, with the demo student's notebook when one is named."""
    release = COURSE.notebook(COURSE.config.RELEASE_DIR, chapter).parent
    folder = tmp_path / chapter.id
    shutil.copytree(release, folder)
    if student:
        nbformat.write(demo_notebook(chapter.id, student), folder / f"{chapter.notebook}.ipynb")
    return folder / f"{chapter.notebook}.ipynb"


def check_command(path):
    return subprocess.run([sys.executable, "-m", "autograder", "check", str(path)],
                          capture_output=True, text=True, timeout=600)


# Two chapters through the command: every chapter's untouched notebook fails every check, in the table
# selfcheck reads, in tests/system/test_binder.py, which executes each release notebook anyway.
@pytest.mark.parametrize("chapter_id", ["ch01", "ch03"])
def test_untouched_notebook_fails_every_check_and_exits_1(tmp_path, chapter_id):
    chapter = COURSE.chapter(chapter_id)
    done = check_command(student_folder(tmp_path, chapter))
    assert done.returncode == 1, done.stdout + done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    release = nbformat.read(COURSE.notebook(COURSE.config.RELEASE_DIR, chapter), 4)
    graded = [c.metadata["nbgrader"] for c in release.cells
              if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]
    for meta in graded:
        row = next(r for r in rows if r and r[0] == meta["grade_id"])
        assert row[1:3] == ["FAILED", f"0/{meta['points']}"] and len(row) > 3, row   # and a message
    assert f"Progress: 0/{COURSE.autograded_points(chapter)} points (0%)" in done.stdout
    # written questions are not checks: no row, one line with their points, left to the instructor
    assert not any(r and r[0].startswith("q_") for r in rows)
    assert f"Written questions: {written_points(release)} more points, graded by your instructor" in done.stdout


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_an_executed_solution_tabulates_as_every_check_passed(chapter_id):
    """The table read from the chapter's committed solution, which the build executed (its hidden tests
    stripped, as in a student's copy): every check passed, every point counted."""
    chapter = COURSE.chapter(chapter_id)
    solution = nbformat.read(COURSE.notebook(COURSE.config.SOLUTIONS_DIR, chapter), as_version=4)
    results = selfcheck.results_of(solution)
    assert results and [r.status for r in results] == [PASSED] * len(results), [r for r in results if r.status != PASSED]
    table = format_table("solution", results, written=written_points(solution))
    full = COURSE.autograded_points(chapter)
    assert f"Progress: {full}/{full} points (100%)" in table


def test_solved_notebook_passes_and_exits_0(tmp_path):
    """Once end to end, on the reference chapter: the command executes a solved notebook and exits 0."""
    chapter = COURSE.chapter("ch03")
    done = check_command(student_folder(tmp_path, chapter, "perfect"))
    assert done.returncode == 0, done.stdout + done.stderr
    full = COURSE.autograded_points(chapter)
    assert f"Progress: {full}/{full} points (100%)" in done.stdout


# The progress cell and the table are the frame's, the same in every chapter: the first, the reference and the last.
@pytest.mark.parametrize("chapter_id", ["ch01", "ch03", "ch10"])
def test_command_and_progress_cell_show_the_same_table(tmp_path, chapter_id, monkeypatch):
    """Headless, the notebook's own last cell prints exactly what the command prints."""
    chapter = COURSE.chapter(chapter_id)
    path = student_folder(tmp_path, chapter, "partial")
    executed = {}
    original = nbformat.read

    def keep(*args, **kwargs):          # run_checks executes the notebook it reads: keep a handle on it
        executed["nb"] = original(*args, **kwargs)
        return executed["nb"]
    monkeypatch.setattr(selfcheck.nbformat, "read", keep)
    results = selfcheck.run_checks(path)
    failed = [r for r in results if r.status == "FAILED"]
    assert failed and all(r.message for r in failed)
    assert any(r.status == "passed" for r in results)
    progress_cell = next(c for c in executed["nb"].cells if c.id == PROGRESS_ID)
    printed = "".join(o.text for o in progress_cell.outputs if o.output_type == "stream")
    title = printed.splitlines()[0]
    written = written_points(executed["nb"])
    assert written > 0 and printed.strip() == format_table(title, results, written=written)
    assert printed.strip().endswith(f"Written questions: {written} more points, graded by your instructor (not counted above).")


def test_missing_notebook_is_reported(tmp_path):
    done = check_command(tmp_path / "nope.ipynb")
    assert done.returncode == 2 and "no such notebook" in done.stdout


def notebook_whose_kernel_dies(path):
    """A first cell that ends the kernel, then a check cell that can never run."""
    cells = [nbformat.v4.new_code_cell("import os\nos._exit(1)"), nbformat.v4.new_code_cell("assert True")]
    cells[1].metadata["nbgrader"] = {"grade": True, "grade_id": "test_x", "points": 1, "solution": False,
                                     "locked": True, "schema_version": 3}
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


def test_a_run_that_stops_says_why_in_the_rows_it_never_reached(tmp_path):
    (result,) = selfcheck.run_checks(notebook_whose_kernel_dies(tmp_path / "dies.ipynb"), timeout=60)
    assert result.status == "not run" and result.message.startswith("not reached (the run stopped early: ")
    assert "DeadKernelError" in result.message and "earlier cell stopped" not in result.message


def test_a_kernel_that_never_starts_is_named_in_every_row(tmp_path):
    path = notebook_whose_kernel_dies(tmp_path / "nokernel.ipynb")
    notebook = nbformat.read(path, 4)
    notebook.metadata["kernelspec"]["name"] = "no-such-kernel"
    nbformat.write(notebook, path)
    (result,) = selfcheck.run_checks(path, timeout=60)
    assert result.message.startswith("not reached (the kernel could not run the notebook at all: NoSuchKernel")


def test_short_prints_one_line_per_check(tmp_path):
    chapter = COURSE.chapter("ch03")
    path = student_folder(tmp_path, chapter)
    lines = []
    assert selfcheck.main(path, out=lines.append, short=True) == 1
    table = lines[-1].splitlines()
    assert all(not line.startswith(" ") for line in table), "no indented detail lines"
    operators = next(line for line in table if line.startswith("test_operators"))
    assert not operators.endswith(":")


def test_a_kernel_on_a_laptop_starts_without_its_encryption_warning(tmp_path, capfd):
    """Unsandboxed (a laptop, Colab), ipykernel warns at every start that it runs over TCP without encryption:
    true of every local kernel, and noise in front of a student's table."""
    results = selfcheck.run_checks(student_folder(tmp_path, COURSE.chapter("ch01")), kernel_manager_class=None)
    assert results and all(r.status != NOT_RUN for r in results)
    assert "without encryption" not in capfd.readouterr().err


def notebook_that_runs(path, first, check="assert True"):
    """A first cell that runs `first`, then a check cell."""
    cells = [nbformat.v4.new_code_cell(f"import os, time\n{first}"), nbformat.v4.new_code_cell(check)]
    cells[1].metadata["nbgrader"] = {"grade": True, "grade_id": "test_x", "points": 1, "solution": False,
                                     "locked": True, "schema_version": 3}
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


def test_check_uses_the_settings_validate_uses(tmp_path):
    """The nbgrader_config.py beside the notebook sets the cell timeout and the kernel's environment, as it
    does for Validate; without one (Colab downloads only a chapter's support files) the course's
    CELL_TIMEOUT_SECONDS still holds."""
    for chapter in COURSE.chapters:
        folder = COURSE.notebook(COURSE.config.RELEASE_DIR, chapter).parent
        expected_arguments = student_config.kernel_arguments(COURSE.config.KERNEL_ENVIRONMENT)
        assert selfcheck.validate_settings(folder) == (COURSE.config.CELL_TIMEOUT_SECONDS, expected_arguments), folder
    assert selfcheck.validate_settings(tmp_path) == (selfcheck.TIMEOUT_SECONDS, [])
    assert selfcheck.TIMEOUT_SECONDS == COURSE.config.CELL_TIMEOUT_SECONDS
    (tmp_path / selfcheck.CONFIG_FILE).write_text("c = get_config()\nc.Execute.timeout = 2\n")
    (result,) = selfcheck.run_checks(notebook_that_runs(tmp_path / "sleeps.ipynb", "time.sleep(30)"),
                                     kernel_manager_class=None)
    assert result.status == NOT_RUN and "CellTimeoutError" in result.message, result.message


def test_check_kernels_get_the_course_kernel_environment(tmp_path, monkeypatch):
    for name in COURSE.config.KERNEL_ENVIRONMENT:     # the kernel must get them from nbgrader_config.py alone
        monkeypatch.delenv(name, raising=False)
    shutil.copy(ROOT / COURSE.config.RELEASE_DIR / selfcheck.CONFIG_FILE, tmp_path)
    wanted = COURSE.config.KERNEL_ENVIRONMENT
    check = f"assert {{k: os.environ.get(k) for k in {sorted(wanted)!r}}} == {wanted!r}"
    (result,) = selfcheck.run_checks(notebook_that_runs(tmp_path / "env.ipynb", "pass", check),
                                     kernel_manager_class=None)
    assert result.status == PASSED, result.message


def test_a_failing_cell_before_the_checks_is_named_above_the_table(tmp_path):
    """A notebook copied out of its chapter folder has no earlier_chapters.py beside it, and its set-up cell
    fails (here, fetching the file from the published course, offline): every check then fails with a
    NameError, and only the line above the table says why."""
    chapter = COURSE.chapter("ch03")
    alone = tmp_path / "alone.ipynb"
    shutil.copy(student_folder(tmp_path / "folder", chapter), alone)
    lines = []
    assert selfcheck.main(alone, out=lines.append, short=True) == 1
    before = next(line for line in lines if line.startswith("Before the checks"))
    assert " raised " in before and "NameError" not in before, before


def executed_cell(source, meta, error=None):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = meta
    cell.execution_count = 1
    if error:
        cell.outputs = [nbformat.v4.new_output("error", ename=error[0], evalue=error[1], traceback=[])]
    return cell


def test_the_cell_that_raised_is_named_as_a_student_sees_it_and_an_empty_message_says_so():
    """Cells carry no numbers in JupyterLab: the line names the heading above the cell and what kind of cell it
    is; an exception without a message says "(no message)" instead of ending on a colon."""
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## 5.5 Training a classifier"),
        executed_cell("losses = train()", {"locked": True}, ("NotImplementedError", "")),
        executed_cell("check.sgd()", {"grade": True, "grade_id": "test_sgd", "points": 2},
                      ("AssertionError", "SGD(...)")),
    ])
    results = selfcheck.results_of(notebook)
    assert selfcheck.first_cell_error(notebook, results) == (
        "the provided cell under “5.5 Training a classifier” raised NotImplementedError: (no message)")


def test_a_cell_that_raised_after_the_first_failing_check_is_not_told_as_before_the_checks():
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("### Exercise: SGD"),
        executed_cell("check.sgd()", {"grade": True, "grade_id": "test_sgd", "points": 2},
                      ("AssertionError", "SGD(...)")),
        nbformat.v4.new_markdown_cell("## 5.5 Training a classifier"),
        executed_cell("losses = train()", {"locked": True}, ("NotImplementedError", "")),
    ])
    assert selfcheck.first_cell_error(notebook, selfcheck.results_of(notebook)) is None


def test_a_students_copy_without_the_grading_package_says_nothing_about_a_sandbox(monkeypatch):
    monkeypatch.setitem(sys.modules, "autograder.grading.sandbox", None)      # import fails, as on a student's copy
    assert selfcheck.sandbox_kernel_manager() == (None, "")
