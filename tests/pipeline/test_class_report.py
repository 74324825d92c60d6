"""The class report on the demo students: nbgrader's grades CSV, and the share of students who
passed each exercise as a table, a CSV and a PNG bar chart. The demo's partial student fails
exactly the cells of its catalogued mistakes, so every share is known in advance."""
import csv

import matplotlib.image
import pytest

from autograder.build.submissions import load_catalog
from autograder.grading import graded_cells
from autograder.grading.class_report import write_report

from helpers.class_support import CLASS_CHAPTERS


@pytest.mark.parametrize("chapter_id", CLASS_CHAPTERS)
def test_report_shows_who_passed_each_exercise(graded_class, chapter_id):
    course, _ = graded_class(chapter_id)        # the demo class, graded in parallel
    chapter = course.chapter(chapter_id)
    full = course.autograded_points(chapter)

    report = write_report(course, chapter)

    catalog = load_catalog(course, chapter)
    by_name = {m.name: m for m in catalog.MISTAKES}
    partial_fails = {cell for name in catalog.DEMO_PARTIAL for cell in by_name[name].loses}
    expected = {cell: 1 if cell in partial_fails else 2 for cell in graded_cells(course, chapter)}
    assert {s.exercise: s.passed for s in report.shares} == expected
    assert {s.students for s in report.shares} == {3}
    assert [s.exercise for s in report.shares] == graded_cells(course, chapter)   # notebook order

    with open(report.shares_csv, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["exercise"]: int(r["passed"]) for r in rows} == expected
    assert sum(float(r["points"]) for r in rows) == full
    for cell in partial_fails:
        assert f"{cell} " in report.table and "33%  ← struggling" in report.table.split(f"{cell} ", 1)[1].split("\n")[0]

    with open(report.grades_csv, newline="", encoding="utf-8") as handle:
        grades = {r["student_id"]: float(r["score"]) for r in csv.DictReader(handle)}
    lost = sum(s.points for s in report.shares if s.exercise in partial_fails)
    assert grades == {"perfect": full, "partial": full - lost, "untouched": 0.0}

    image = matplotlib.image.imread(report.chart)
    assert report.chart.read_bytes().startswith(b"\x89PNG") and image.shape[0] > 200 and image.shape[1] > 400
