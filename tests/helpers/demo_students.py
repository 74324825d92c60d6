"""The demo's three students of a chapter (perfect, partial, untouched), made in memory from the committed
release and source notebooks and catalogue/, as `python -m autograder demo-submissions` writes them to
demo/submitted/ (which is not committed, so a fresh clone has none until `make demo`)."""
import copy
import functools

import nbformat

from autograder.build import submissions
from autograder.course import Course

from helpers.course_paths import ROOT


@functools.cache
def _notebooks(chapter_id):
    course = Course(ROOT)
    return submissions.demo_notebooks(course, course.chapter(chapter_id))


def demo_notebook(chapter_id, student):
    """The demo student's notebook (a copy of its own, free to change)."""
    return copy.deepcopy(_notebooks(chapter_id)[student])


def demo_bytes(chapter_id, student):
    """The demo student's notebook file as `demo-submissions` writes it."""
    return (nbformat.writes(_notebooks(chapter_id)[student]) + "\n").encode()
