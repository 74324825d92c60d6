"""Shared fixtures: the committed course in a temporary copy, graded with the real nbgrader; and the
course rebuilt from its chapter scripts, for the one test that proves the committed files current.

Under pytest-xdist (`make test` runs two workers) each worker has its own session fixtures. The
rebuild is shared between them through a lock; `xdist_group` marks would keep other shared fixtures on
one worker, but pytest-xdist 3.8 with pytest 9.2 does not honour them (not even a static mark)."""
import fcntl
import os
import shutil
from pathlib import Path

import pytest

from autograder import build
from autograder.course import Course

ROOT = Path(__file__).resolve().parents[1]
# What an instructor's clone needs to build the course from scratch; everything else is generated.
COURSE_INPUTS = ["course_config.py", "nbgrader_config.py", "chapters", "demo/mistakes", "data"]


def copy_course_inputs(target):
    for name in COURSE_INPUTS:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.exists():
            shutil.copy2(source, target / name)
    return Course(target)


@pytest.fixture(scope="session")
def repo_course():
    return Course(ROOT)


# The generated folders, which tests/test_generated_files.py proves to be what the build makes.
GENERATED = ["source", "release", "solutions", "demo/submitted", "README.md"]


# The rebuild runs as another machine's might: its own hash seed, two OpenMP threads asked for, the
# POSIX locale (.ci/reproduce-elsewhere does the same from `git archive` in a fresh folder).
ELSEWHERE = {"PYTHONHASHSEED": "random", "OMP_NUM_THREADS": "2", "LC_ALL": "POSIX", "LANG": "POSIX"}


@pytest.fixture(scope="session")
def rebuilt_course(tmp_path_factory):
    """The whole course rebuilt from its chapter scripts in a fresh folder, as a new clone would.

    Built once per run: xdist workers share the run's temporary folder, and a lock makes the second
    worker to ask wait for the first one's build instead of building again.
    """
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    target, done = shared / "rebuilt-course", shared / "rebuilt-course.done"
    with open(shared / "rebuilt-course.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            course = copy_course_inputs(target)
            with pytest.MonkeyPatch.context() as patch:
                for name, value in ELSEWHERE.items():
                    patch.setenv(name, value)
                build.build(course, log=lambda message: None)
            done.touch()
    return Course(target)


@pytest.fixture(scope="session")
def built_course(tmp_path_factory):
    """A copy of the committed course, built files included: what grading tests start from."""
    target = tmp_path_factory.mktemp("course")
    copy_course_inputs(target)
    for name in GENERATED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
        else:
            shutil.copy2(source, target / name)
    return Course(target)


@pytest.fixture(scope="session")
def graded(built_course):
    """grade(chapter_id): every catalogued submission autograded once (see grading_support.grade_all)."""
    from grading_support import grade_all
    cache = {}

    def grade(chapter_id):
        if chapter_id not in cache:
            cache[chapter_id] = grade_all(built_course, built_course.chapter(chapter_id))
        return cache[chapter_id]
    return grade


# Class-level machinery (parallel grading of a class, its report, Gradescope results) does not depend
# on a chapter's content: it is exercised on the first chapter and on chapter 3, the reference one,
# while the per-chapter pipeline tests grade every chapter.
CLASS_CHAPTERS = sorted({Course(ROOT).chapters[0].id, "ch03"})


@pytest.fixture(scope="session")
def graded_class(built_course, tmp_path_factory):
    """Per chapter, a course copy whose demo class (perfect, partial, untouched) was graded by
    parallel grading. Returns (course, run)."""
    from autograder.parallel_grading import grade_chapter
    from class_support import course_copy, demo_class, hand_in

    cache = {}

    def grade(chapter_id):
        if chapter_id not in cache:
            course = course_copy(built_course, tmp_path_factory.mktemp(f"class-{chapter_id}"), chapter_id)
            chapter = course.chapter(chapter_id)
            hand_in(course, chapter, demo_class(course, chapter))
            cache[chapter_id] = course, grade_chapter(course, chapter, jobs=2, progress=False)
        return cache[chapter_id]
    return grade


def pytest_collection_modifyitems(items):
    """Stale generated files are the commonest reason a run fails: check the fast layer first."""
    fast = ("test_source_notebooks_are_current", "test_student_and_solution_versions_are_current")
    first = [item for item in items if item.originalname in fast]
    items[:] = first + [item for item in items if item not in first]
