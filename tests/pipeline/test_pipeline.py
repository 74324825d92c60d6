"""Every chapter, through the real nbgrader: generated files are current, the solution earns full
marks, the untouched student version earns zero, each catalogued mistake loses exactly its cells,
and each correct alternative keeps full marks."""
from collections import Counter

import pytest

from autograder.build.submissions import load_catalog
from autograder.course import Course
from autograder.grading import graded_cells

from helpers.course_paths import ROOT

CHAPTERS = [c.id for c in Course(ROOT).chapters]


def lost_cells(cells):
    return {cell for cell, (score, maximum) in cells.items() if (score or 0) < maximum}


def partially_scored(cells):
    return {cell for cell, (score, maximum) in cells.items() if 0 < (score or 0) < maximum}


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_solution_earns_full_marks(graded, built_course, chapter_id):
    _, scores, _ = graded(chapter_id)
    chapter = built_course.chapter(chapter_id)
    assert lost_cells(scores["perfect"]) == set()
    assert sum(m for _, m in scores["perfect"].values()) == built_course.autograded_points(chapter)


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_untouched_student_version_earns_zero(graded, chapter_id):
    _, scores, _ = graded(chapter_id)
    assert scores["untouched"], "the untouched notebook was not graded"
    assert {cell: s for cell, (s, _) in scores["untouched"].items() if s} == {}


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_each_mistake_loses_exactly_its_cells(graded, chapter_id):
    _, scores, expected = graded(chapter_id)
    checked = [s for s in expected if s.startswith(("mistakes-", "demo-"))]
    assert checked, "the chapter has no catalogued mistakes"
    for student in checked:
        assert partially_scored(scores[student]) == set(), student
        assert lost_cells(scores[student]) == expected[student], student


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_correct_alternatives_keep_full_marks(graded, chapter_id):
    _, scores, expected = graded(chapter_id)
    alternatives = [s for s in expected if s.startswith("alternatives-")]
    assert alternatives, "the chapter has no catalogued correct alternatives"
    for student in alternatives:
        assert lost_cells(scores[student]) == set(), student


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_every_backward_has_two_mistakes_and_an_alternative(repo_course, chapter_id):
    """Convention: test cell `test_<op>_backward` grades solution cell `<op>`."""
    chapter = repo_course.chapter(chapter_id)
    catalog = load_catalog(repo_course, chapter)
    backward_ops = [c[len("test_"):-len("_backward")] for c in graded_cells(repo_course, chapter)
                    if c.endswith("_backward")]
    losing = Counter(cell for mistake in catalog.MISTAKES for cell in mistake.loses)
    alternative_cells = {edit.cell for mistake in catalog.ALTERNATIVES for edit in mistake.edits}
    assert [op for op in backward_ops if losing[f"test_{op}_backward"] < 2] == []
    assert [op for op in backward_ops if op not in alternative_cells] == []
