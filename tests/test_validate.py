"""`nbgrader validate`, what JupyterLab's Validate button runs, works on a student's release folder."""
import shutil
import subprocess
import sys

import pytest

from autograder.course import Course

from conftest import ROOT

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]


def validate(tmp_path, chapter, student=None):
    folder = tmp_path / chapter.id
    shutil.copytree(COURSE.notebook(COURSE.config.RELEASE_DIR, chapter).parent, folder)
    if student:
        shutil.copy(COURSE.notebook(COURSE.config.DEMO_DIR, chapter, student), folder)
    done = subprocess.run([sys.executable, "-m", "nbgrader", "validate", f"{chapter.notebook}.ipynb"],
                          cwd=folder, capture_output=True, text=True, timeout=600)
    return done.stdout + done.stderr


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_validate_lists_the_failing_checks_of_a_release_notebook(tmp_path, chapter_id):
    output = validate(tmp_path, COURSE.chapter(chapter_id))
    assert "VALIDATION FAILED" in output and "The following cell failed:" in output
    assert "# Check test_" in output, "the failing check cells are named"
    # an unwritten exercise shows up either as the stub's own error or as a check's teaching message
    assert "NotImplementedError" in output or "is not implemented yet" in output
    assert "Traceback" not in output.split("VALIDATION FAILED")[0], "validate itself crashed"


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_validate_passes_a_solved_notebook(tmp_path, chapter_id):
    output = validate(tmp_path, COURSE.chapter(chapter_id), "perfect")
    assert "Success! Your notebook passes all the tests." in output
