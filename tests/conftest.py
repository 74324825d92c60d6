"""Shared fixtures: the committed course in a temporary copy, graded with the real nbgrader; and the
course rebuilt from its chapter scripts, for the one test that proves the committed files current.

The expensive ones are made once per test run, however many pytest-xdist workers ask
(helpers/across_workers.py). Only fixtures and pytest's hooks live here: what tests import is in helpers/."""
import os
import shutil

import pytest

from autograder.build import pipeline as build
from autograder.build import readme, submissions
from autograder.course import Course

from helpers.across_workers import once_per_run, one_worker_at_a_time
from helpers.course_paths import ROOT, copy_course_inputs
from helpers.solved_code import recursion_limit_kept

@pytest.fixture(autouse=True)
def recursion_limit_restored():
    """No test leaves the recursion limit raised for the next one (helpers/solved_code.recursion_limit_kept)."""
    with recursion_limit_kept():
        yield


@pytest.fixture(scope="session")
def repo_course():
    return Course(ROOT)


# The committed generated files, which tests/pipeline/test_generated_files.py proves to be what the build makes.
GENERATED = ["source", "release", "solutions", "README.md"]


# The rebuild runs as another machine's might: its own hash seed, two OpenMP threads asked for, the
# POSIX locale (.ci/reproduce-elsewhere does the same from `git archive` in a fresh folder).
ELSEWHERE = {"PYTHONHASHSEED": "random", "OMP_NUM_THREADS": "2", "LC_ALL": "POSIX", "LANG": "POSIX"}



def pytest_configure(config):
    """One BLAS thread in every process the tests start (nbgrader runs, notebooks the tests execute),
    as course_config.KERNEL_ENVIRONMENT gives grading kernels: two workers share two cores, and a
    threaded BLAS beside another busy process only spins. The configuration does not write os.environ,
    so the test session says it for itself."""
    for name, value in Course(ROOT).config.KERNEL_ENVIRONMENT.items():
        if name.endswith("_NUM_THREADS"):
            os.environ.setdefault(name, value)

@pytest.fixture(scope="session")
def rebuilt(tmp_path_factory):
    """rebuilt(*chapter_ids) -> Course: the course rebuilt from its chapter scripts in one fresh folder, as a
    new clone's `make build` would (the build, then the demo submissions), each chapter the first time a
    test asks for it, so `-k ch03` builds one. rebuilt() builds every chapter, then the README's table."""
    def make(*chapter_ids):
        with one_worker_at_a_time(tmp_path_factory, "rebuilt-course") as folder:
            if not (folder / "course_config.py").exists():
                copy_course_inputs(folder)
            course = Course(folder)
            done = folder.parent / "rebuilt-course.done"
            done.mkdir(exist_ok=True)
            todo = [c.id for c in course.assignments if (not chapter_ids or c.id in chapter_ids)
                    and not (done / c.id).exists()]
            with pytest.MonkeyPatch.context() as patch:
                for name, value in ELSEWHERE.items():
                    patch.setenv(name, value)
                if todo:
                    build.build(course, todo, log=lambda message: None)
                    submissions.write_all_demo_submissions(course, todo, log=lambda message: None)
                    for chapter_id in todo:
                        (done / chapter_id).touch()
                if not chapter_ids:
                    readme.update_readme(course)
            return course
    return make


def copy_committed_course(target):
    """The course inputs and the committed generated files, and the demo students written from them (as
    `make demo` writes them; they are not committed): what grading tests start from."""
    copy_course_inputs(target)
    for name in GENERATED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
        else:
            shutil.copy2(source, target / name)
    course = Course(target)
    submissions.write_all_demo_submissions(course, log=lambda message: None)
    return course


@pytest.fixture(scope="session")
def built_course(tmp_path_factory):
    """A copy of the committed course, built files included: what grading tests start from."""
    return copy_committed_course(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    """grade(chapter_id) -> (course, scores, expected): a copy of the committed course in which every
    catalogued submission of the chapter was autograded (see helpers/grading_support.py), once per run."""
    from helpers.grading_support import grade_all

    def grade(chapter_id):
        def make(target):
            course = copy_committed_course(target)
            return grade_all(course, course.chapter(chapter_id))
        target, (scores, expected) = once_per_run(tmp_path_factory, f"graded-{chapter_id}", make)
        return Course(target), scores, expected
    return grade


@pytest.fixture(scope="session")
def graded_class(built_course, tmp_path_factory):
    """grade(chapter_id) -> (course, run): a course copy whose demo class (perfect, partial, untouched)
    was graded by parallel grading, once per test run."""
    from helpers.class_support import course_copy, demo_class, hand_in

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


# A test's layer is its folder: unit/ runs in process only (checks, judges' rules, pictures, the build's
# pieces; `make test-fast`), pipeline/ runs notebooks through nbgrader and the sandbox, system/ starts
# real servers, browsers, databases, clusters or fresh environments.
LAYERS = ("unit", "pipeline", "system")


# `make test` runs two xdist workers with `--dist worksteal`: each starts on its own half of the list
# below, in order, and a worker that runs out takes tests from the end of the other's. These two modules
# each open a half: the hostile class (test_sandbox's fixture, about 3 minutes of serial nbgrader) is
# then made by one worker while the other goes on, instead of waiting on its lock, and the cluster test
# (one test, about 3 minutes) cannot become the run's tail.
OPENING_EACH_HALF = ("test_sandbox", "test_dask_cluster")


def pytest_collection_modifyitems(items):
    """Each test gets its layer's marker (`unit`, `pipeline` or `system`, from its folder). Stale generated files are the commonest reason a
    run fails: the fast check of them goes first; then test_sandbox; test_dask_cluster opens the second half."""
    def module(item):
        return item.module.__name__.rsplit(".", 1)[-1]
    for item in items:
        layer = item.path.parent.name
        assert layer in LAYERS, f"{item.path}: a test module lives in one of tests/{'/, tests/'.join(LAYERS)}/"
        item.add_marker(getattr(pytest.mark, layer))
    fast = ("test_source_notebooks_are_current", "test_student_and_solution_versions_are_current",
            "test_student_nbgrader_configs_are_current")
    first = [item for item in items if item.originalname in fast]
    opening = [[item for item in items if module(item) == name and item not in first] for name in OPENING_EACH_HALF]
    rest = [item for item in items if item not in first and all(item not in group for group in opening)]
    head = first + opening[0] + rest
    middle = len(items) // 2        # worksteal gives the first worker len // 2 tests, the second the rest
    items[:] = head[:middle] + opening[1] + head[middle:]
