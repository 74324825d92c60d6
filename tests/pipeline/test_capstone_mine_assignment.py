"""The bonus assignment capstone_mine, graded by the real `nbgrader autograde` in the sandbox, with the judge.

Three submissions in one run: the notebook with a mybabygrad/ exported from the solved chapters (full
bonus), the same with a wrong Affine.backward in chapter 4's module (0, and a message that sends the
student to the library), and the notebook alone (0, and a message that says what to hand in). The first
trains the whole recipe, one epoch over 60,000 digits; the whole run takes about 20 s.
"""
import shutil

import nbformat
import pytest

from autograder import grading
from autograder.build import submissions
from autograder.course import Course
from autograder.grading.judged_execute import JUDGE_ERROR_NAME
from autograder.grading.nbgrader_cli import run_nbgrader
from autograder.student.export import PACKAGE

from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT
from helpers.my_library import WRONG_AFFINE, exported_library

BONUS = "capstone_mine"
CELL = "test_my_capstone"


def bonus_course(target):
    """A course folder with the bonus as committed (source, release), registered in a fresh gradebook."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy2(ROOT / name, target / name)
    for folder in ("source", "release"):
        shutil.copytree(ROOT / folder / BONUS, target / folder / BONUS)
    course = Course(target)
    grading.register(course, course.chapter(BONUS))
    return course


def hand_in(course, student, package=None):
    """submitted/<student>/capstone_mine/: the release notebook, untouched, and a copy of `package`."""
    chapter = course.chapter(BONUS)
    notebook = nbformat.read(course.notebook(course.config.RELEASE_DIR, chapter), as_version=4)
    path = submissions.write_submission(course, chapter, student, notebook, course.config.SUBMITTED_DIR)
    if package is not None:
        shutil.copytree(package, path.parent / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))


def graded_messages(course, student):
    """The test cell's error text in the autograded notebook ('' when it passed)."""
    path = course.notebook(course.config.AUTOGRADED_DIR, course.chapter(BONUS), student)
    cell = next(c for c in nbformat.read(path, as_version=4).cells if c.get("id") == CELL)
    return "\n".join(f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error")


@pytest.fixture(scope="module")
def graded_bonus(tmp_path_factory):
    """(course, scores, {student: the test cell's error text}): three submissions, one autograde run."""
    def make(folder):
        course = bonus_course(folder / "course")
        hand_in(course, "own-library", exported_library(Course(ROOT), folder / "right"))
        hand_in(course, "wrong-affine", exported_library(Course(ROOT), folder / "wrong", {"ch04": [WRONG_AFFINE]}))
        hand_in(course, "no-library")
        done = run_nbgrader(course.root, "autograde", BONUS, "--force", check=False)
        scores = grading.scores(course, course.chapter(BONUS))
        return scores, {student: graded_messages(course, student) for student in scores}, done.returncode
    folder, (scores, messages, returncode) = once_per_run(tmp_path_factory, "graded-capstone-mine", make)
    return scores, messages, returncode


def test_the_solved_library_earns_the_whole_bonus(graded_bonus):
    scores, messages, returncode = graded_bonus
    assert returncode == 0
    assert scores["own-library"] == {CELL: (5, 5)}, messages["own-library"]


def test_a_wrong_affine_fails_the_bonus_and_sends_the_student_to_the_library(graded_bonus):
    scores, messages, _ = graded_bonus
    assert scores["wrong-affine"] == {CELL: (0, 5)}
    message = messages["wrong-affine"]
    assert message.startswith("AssertionError: the MLP capstone: training raised an error"), message
    assert "your own library, mybabygrad/" in message and "USE_MY_LIBRARY = True" in message
    assert "python -m autograder capstone mlp --mine" in message
    assert JUDGE_ERROR_NAME not in message          # the kernel's check failed it: the judge had nothing to add


def test_a_notebook_without_its_library_gets_nothing_and_is_told_what_to_hand_in(graded_bonus):
    scores, messages, _ = graded_bonus
    assert scores["no-library"] == {CELL: (0, 5)}
    message = messages["no-library"]
    assert "the MLP capstone on your library: not trained, because there is no mybabygrad/" in message, message
    assert "hand in the mybabygrad/ folder next to this notebook" in message
