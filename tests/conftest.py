"""Shared fixtures: the course built once into a temporary copy, and graded with the real nbgrader."""
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


@pytest.fixture(scope="session")
def built_course(tmp_path_factory):
    """The whole course rebuilt from its chapter scripts in a fresh folder, as a new clone would."""
    course = copy_course_inputs(tmp_path_factory.mktemp("course"))
    build.build(course, log=lambda message: None)
    return course


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
