"""The course on a real PostgreSQL gradebook (course_config.GRADEBOOK_URL): build, serial nbgrader
autograde, parallel grading and nbgrader's CSV export all work there, with the same grades.

Needs a server: `.ci/run` starts one (Debian's postgresql) and sets BABYGRAD_TEST_POSTGRES_URL; the test grades
in a database of its own there."""
import csv
import os
import uuid

import pytest
from sqlalchemy import create_engine, make_url, text

from autograder.course import Course
from autograder.grading import autograde, scores
from autograder.grading.class_report import write_report
from autograder.grading.parallel import grade_chapter

from helpers.class_support import class_notebooks, course_copy, hand_in, records
from helpers.course_paths import ROOT

CHAPTERS = [c.id for c in Course(ROOT).chapters]
URL = os.environ.get("BABYGRAD_TEST_POSTGRES_URL")
pytestmark = pytest.mark.skipif(not URL, reason="no PostgreSQL server: set BABYGRAD_TEST_POSTGRES_URL "
                                                "(.ci/run starts one with .ci/postgres)")


@pytest.fixture
def database_url():
    """The URL of a new, empty database of this test's own on the server at BABYGRAD_TEST_POSTGRES_URL (its user
    creates databases), dropped afterwards: another test run on the machine may use the same server."""
    name = f"babygrad_test_{uuid.uuid4().hex[:16]}"
    server = create_engine(URL, isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with server.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        server.dispose()


@pytest.mark.parametrize("chapter_id", CHAPTERS[:1])
def test_autograde_parallel_grading_and_export_on_postgresql(built_course, tmp_path, chapter_id, database_url):
    """The database is what this tests, not the chapter: the first chapter stands for all."""
    course = course_copy(built_course, tmp_path / "course", chapter_id, gradebook_url=database_url)
    assert course.gradebook_url == database_url and not (course.root / "gradebook.db").exists()
    chapter = course.chapter(chapter_id)
    full = course.autograded_points(chapter)
    notebooks = class_notebooks(course, chapter)
    hand_in(course, chapter, {s: notebooks[s] for s in ("perfect", "partial", "untouched", "crash")})

    autograde(course, chapter, check=False)               # plain nbgrader, into PostgreSQL
    serial = records(course, chapter)
    totals = {s: sum((v[0] or 0) for v in cells.values()) for s, cells in scores(course, chapter).items()}
    assert totals["perfect"] == full and totals["untouched"] == 0
    # os._exit in the first exercise: that cell is skipped and the rest graded in a fresh kernel
    assert 0 < totals["crash"] < full
    assert 0 < totals["partial"] < full

    run = grade_chapter(course, chapter, jobs=2, force=True, progress=False)   # merged into PostgreSQL
    assert sorted(run.graded) == sorted(serial) and set(run.problems) == {"crash"}
    assert records(course, chapter) == serial

    report = write_report(course, chapter)                 # nbgrader export reads PostgreSQL
    with open(report.grades_csv, newline="", encoding="utf-8") as handle:
        exported = {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)
                    if row["assignment"] == chapter.id}
    assert exported == {s: float(t) for s, t in totals.items()}
