"""A small class for the instructor tests: a fresh course folder holding one built chapter, and
submissions that are right, wrong, or broken in the ways real ones break; and what the gradebook
recorded of them."""
import atexit
import re
import shutil
import tempfile
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from autograder.build import submissions
from autograder.course import Course
from autograder.grading import register, registration
from autograder.grading.gradebook_merge import submission_record

from helpers.course_paths import ROOT

# Class-level machinery (parallel grading of a class, its report, Gradescope results) does not depend
# on a chapter's content: it is exercised on the first chapter and on chapter 3, the reference one,
# while the per-chapter pipeline tests grade every chapter.
CLASS_CHAPTERS = sorted({Course(ROOT).chapters[0].id, "ch03"})

COURSE_FILES = ["course_config.py", "nbgrader_config.py", "chapters", "catalogue", "source", "release"]
# A small per-cell timeout, so the endless loop costs seconds; still far above any solution cell.
TEST_CELL_TIMEOUT = 5


def course_copy(built_course, target, chapter_id, cell_timeout=None, gradebook_url=None, gradebook=True):
    """A new course folder with `chapter_id` built (copied), its demo students written (they are not committed)
    and, unless told not to, in a fresh gradebook."""
    target.mkdir(parents=True, exist_ok=True)
    for name in COURSE_FILES:
        source = built_course.root / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    config = (target / "course_config.py").read_text(encoding="utf-8")
    if cell_timeout:
        config = re.sub(r"(?m)^CELL_TIMEOUT_SECONDS = \d+", f"CELL_TIMEOUT_SECONDS = {cell_timeout}", config)
    if gradebook_url:
        config = re.sub(r"(?m)^GRADEBOOK_URL = None", f"GRADEBOOK_URL = {gradebook_url!r}", config)
    (target / "course_config.py").write_text(config, encoding="utf-8")
    course = Course(target)
    if course.chapter(chapter_id) in course.chapters:       # a bonus assignment has no demo students
        submissions.write_demo_submissions(course, course.chapter(chapter_id))
    if gradebook:
        registered(course, chapter_id)
    return course


_REGISTERED = {}        # registration inputs digest -> a folder with a SQLite gradebook holding the chapter, and its marker


def registered(course, chapter_id):
    """The chapter registered in the course's gradebook, as `autograder.grading.register` does it (nbgrader's
    generate_assignment, release/ left as copied). In SQLite, once per test process and registration inputs:
    later copies get that gradebook file and its registration marker, where registering took 3 to 5 s of
    nbgrader each time (and grading then finds it registered)."""
    chapter = course.chapter(chapter_id)
    if course.config.GRADEBOOK_URL:
        register(course, chapter)
        return
    key = registration.inputs_digest(course, chapter)
    marker = registration.marker_path(course, chapter)
    if key not in _REGISTERED:
        register(course, chapter)
        _REGISTERED[key] = Path(tempfile.mkdtemp(prefix="registered-"))
        atexit.register(shutil.rmtree, _REGISTERED[key], True)
        shutil.copy2(course.root / "gradebook.db", _REGISTERED[key] / "gradebook.db")
        shutil.copy2(marker, _REGISTERED[key] / marker.name)
    else:
        shutil.copy2(_REGISTERED[key] / "gradebook.db", course.root / "gradebook.db")
        marker.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(_REGISTERED[key] / marker.name, marker)


def class_notebooks(course, chapter):
    """{student: notebook or raw text}: right, partly wrong, untouched, and four broken ways."""
    cfg = course.config
    solved_with = solved_notebook_maker(course, chapter)
    return {
        "perfect": solved_with(""),
        "partial": nbformat.read(course.notebook(cfg.DEMO_DIR, chapter, "partial"), as_version=4),
        "untouched": nbformat.read(course.notebook(cfg.RELEASE_DIR, chapter), as_version=4),
        "crash": solved_with("import os\nos._exit(1)"),
        "loop": solved_with("while True:\n    pass"),
        "stderr": solved_with("import sys\nprint('debugging output', file=sys.stderr)"),
        "corrupt": '{"cells": [ this is not JSON',
    }


def solved_notebook_maker(course, chapter):
    """solved_with(code): the solved release notebook with `code` run first in its first answer cell
    (none: the solution as it is). Both notebooks are read once, however many variants are made."""
    cfg = course.config
    release = nbformat.read(course.notebook(cfg.RELEASE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4))
    first = next(iter(answers))

    def solved_with(code):
        return submissions.filled(release, dict(answers, **{first: code + "\n" + answers[first]}) if code else answers)
    return solved_with


def demo_class(course, chapter):
    """The chapter's demo students, as course_copy wrote them: perfect, partial, untouched."""
    return {s: nbformat.read(course.notebook(course.config.DEMO_DIR, chapter, s), as_version=4)
            for s in ("perfect", "partial", "untouched")}


def hand_in(course, chapter, notebooks):
    for student, notebook in notebooks.items():
        if isinstance(notebook, str):
            path = course.notebook(course.config.SUBMITTED_DIR, chapter, student)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(notebook, encoding="utf-8")
        else:
            submissions.write_submission(course, chapter, student, notebook, course.config.SUBMITTED_DIR)


def records(course, chapter):
    """{student: their submission's record in the gradebook}: what two ways of grading must agree on."""
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        students = sorted(s.student.id for s in gradebook.find_assignment(chapter.id).submissions)
        return {s: submission_record(gradebook, chapter.id, s) for s in students}
