"""Shared fixtures: the committed course in a temporary copy, graded with the real nbgrader; and the
course rebuilt from its chapter scripts, for the one test that proves the committed files current.

Under pytest-xdist (`make test` runs two workers) each worker has its own session and module
fixtures, so a class graded in a fixture was graded once per worker that ran one of its tests. The
expensive ones are made `once_per_run` instead, through a lock in the folder the workers share
(`xdist_group` marks would keep such tests on one worker, but pytest-xdist 3.8 with pytest 9.2 does
not honour them, not even a static mark)."""
import fcntl
import os
import pickle
import shutil
from pathlib import Path

import pytest

from autograder.build import pipeline as build
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


def once_per_run(tmp_path_factory, name, make):
    """(folder, make(folder)): made once per test run, whichever xdist worker asks first.

    The folder is in the run's temporary folder, which the workers share; a worker that asks while
    another is making it waits on the lock, then reads the result back (pickled: keep it plain data)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, result = shared / name, shared / f"{name}.pickle"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            result.write_bytes(pickle.dumps(make(folder)))
    return folder, pickle.loads(result.read_bytes())


@pytest.fixture(scope="session")
def rebuilt_course(tmp_path_factory):
    """The whole course rebuilt from its chapter scripts in a fresh folder, as a new clone would."""
    def rebuild(target):
        course = copy_course_inputs(target)
        with pytest.MonkeyPatch.context() as patch:
            for name, value in ELSEWHERE.items():
                patch.setenv(name, value)
            build.build(course, log=lambda message: None)

    target, _ = once_per_run(tmp_path_factory, "rebuilt-course", rebuild)
    return Course(target)


def copy_committed_course(target):
    """The course inputs and the committed generated files: what grading tests start from."""
    copy_course_inputs(target)
    for name in GENERATED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
        else:
            shutil.copy2(source, target / name)
    return Course(target)


@pytest.fixture(scope="session")
def built_course(tmp_path_factory):
    """A copy of the committed course, built files included: what grading tests start from."""
    return copy_committed_course(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """grade(chapter_id) -> (course, scores, expected): a copy of the committed course in which every
    catalogued submission of the chapter was autograded (see grading_support.grade_all), once per run."""
    from grading_support import grade_all

    def grade(chapter_id):
        def make(target):
            course = copy_committed_course(target)
            return grade_all(course, course.chapter(chapter_id))
        target, (scores, expected) = once_per_run(tmp_path_factory, f"graded-{chapter_id}", make)
        return Course(target), scores, expected
    return grade


# Class-level machinery (parallel grading of a class, its report, Gradescope results) does not depend
# on a chapter's content: it is exercised on the first chapter and on chapter 3, the reference one,
# while the per-chapter pipeline tests grade every chapter.
CLASS_CHAPTERS = sorted({Course(ROOT).chapters[0].id, "ch03"})


@pytest.fixture(scope="session")
def graded_class(built_course, tmp_path_factory):
    """grade(chapter_id) -> (course, run): a course copy whose demo class (perfect, partial, untouched)
    was graded by parallel grading, once per test run."""
    from class_support import course_copy, demo_class, hand_in

    from autograder.grading.parallel import grade_chapter

    def grade(chapter_id):
        def make(folder):
            course = course_copy(built_course, folder, chapter_id)
            chapter = course.chapter(chapter_id)
            hand_in(course, chapter, demo_class(course, chapter))
            return grade_chapter(course, chapter, jobs=2, progress=False)
        folder, run = once_per_run(tmp_path_factory, f"class-{chapter_id}", make)
        return Course(folder), run
    return grade


# Modules whose tests run in process only (checks, judges' rules, pictures, the build's pieces): the
# `unit` layer, `make test-fast`. Every other module starts kernels, nbgrader, servers or clusters.
UNIT_MODULES = {
    "test_architecture", "test_checks", "test_checks_conv", "test_checks_nn", "test_checks_optim", "test_checks_persistence",
    "test_data_checks", "test_frame", "test_graph", "test_init_checks", "test_numpy_floor", "test_pictures",
    "test_points", "test_preprocessors", "test_progress", "test_scalar_checks", "test_tensor_checks",
}


def pytest_collection_modifyitems(items):
    """Each test gets its layer (`unit` or `pipeline`). Stale generated files are the commonest reason a
    run fails: the fast check of them goes first."""
    for item in items:
        layer = "unit" if item.module.__name__.rsplit(".", 1)[-1] in UNIT_MODULES else "pipeline"
        item.add_marker(getattr(pytest.mark, layer))
    fast = ("test_source_notebooks_are_current", "test_student_and_solution_versions_are_current",
            "test_student_nbgrader_configs_are_current")
    first = [item for item in items if item.originalname in fast]
    items[:] = first + [item for item in items if item not in first]
