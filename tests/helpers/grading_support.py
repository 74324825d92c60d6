"""Grade many submissions of one chapter with the real nbgrader autograde, on all cores."""
import nbformat

from autograder import grading
from autograder.build import submissions
from autograder.grading.parallel import grade_chapter

from helpers import forgeries


def mistake_buckets(mistakes):
    """Group mistakes so that none in a group edits the same cell or must lose the same test cell.

    One submission per group keeps the real autograde runs few, and the expected result exact:
    a cell loses its points iff one of its group's mistakes says so. A mistake is never grouped with one
    that edits a cell it `needs`.
    """
    buckets = []
    for mistake in mistakes:
        cells = {e.cell for e in mistake.edits} | set(mistake.needs)
        for bucket in buckets:
            if not (cells & bucket["cells"]) and not (set(mistake.loses) & bucket["loses"]):
                break
        else:
            bucket = {"cells": set(), "loses": set(), "mistakes": []}
            buckets.append(bucket)
        bucket["cells"] |= cells
        bucket["loses"] |= set(mistake.loses)
        bucket["mistakes"].append(mistake)
    return [b["mistakes"] for b in buckets]


def grade_all(course, chapter):
    """Write perfect, untouched, demo, every catalog submission and the chapter's forged one
    (helpers/forgeries.py), autograde them on all cores, return scores.

    The parallel command runs the real nbgrader autograde on each submission (tests/pipeline/test_parallel_grading.py
    proves its gradebook equal to serial `nbgrader autograde`'s), in half the time on two cores.

    Returns (scores by student, expected lost cells by student).
    """
    cfg = course.config
    release = nbformat.read(course.notebook(cfg.RELEASE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4))
    catalog = submissions.load_catalog(course, chapter)
    expected = {"perfect": set(), "untouched": None}
    students = {"perfect": submissions.filled(release, answers), "untouched": release}
    for i, bucket in enumerate(mistake_buckets(catalog.MISTAKES), 1):
        students[f"mistakes-{i}"] = submissions.filled(release, submissions.with_mistakes(answers, bucket))
        expected[f"mistakes-{i}"] = {cell for m in bucket for cell in m.loses}
    for i, bucket in enumerate(mistake_buckets(catalog.ALTERNATIVES), 1):
        students[f"alternatives-{i}"] = submissions.filled(release, submissions.with_mistakes(answers, bucket))
        expected[f"alternatives-{i}"] = set()
    by_name = {m.name: m for m in catalog.MISTAKES}
    expected["demo-partial"] = {cell for name in catalog.DEMO_PARTIAL for cell in by_name[name].loses}
    students["demo-partial"] = nbformat.read(course.notebook(cfg.DEMO_DIR, chapter, "partial"), as_version=4)
    for student, (notebook, losses) in forgeries.students(course, chapter).items():
        students[student], expected[student] = notebook, losses
    for student, notebook in students.items():
        submissions.write_submission(course, chapter, student, notebook, cfg.SUBMITTED_DIR)
    run = grade_chapter(course, chapter, jobs=2, force=True, progress=False)
    assert not run.problems, run.problems
    return grading.scores(course, chapter), expected
