"""Each chapter's points have one source, its cells' `points=N`, and each capstone threshold one, the
checks' module (autograder/student/checks/capstone.py). What people read about them, the headings of
exercises and questions, the notebook's top line, the README's totals and the capstone prose, must say
what that source says."""
import re
import shutil

import nbformat
import pytest
from helpers.course_paths import ROOT

from autograder import cell_marks, questions
from autograder.build import frame
from autograder.course import Course
from autograder.student.checks import capstone

COURSE = Course(ROOT)
HEADING = re.compile(r"^#{1,4} ")
STATES_POINTS = re.compile(r"\((?P<points>\d+) points?(?P<written>, graded by your instructor)?\)\s*$")
README_TOTALS = re.compile(r"^\| \| \*\*total\*\* \| \*\*(?P<autograded>\d+)\*\* \| \*\*(?P<written>\d+)\*\* \|", re.M)


def stated_points(notebook):
    """[heading, points it states, points of its cells] for each heading that states points. An exercise's
    cells are its test cells up to the next heading; a written question's, its answer cell."""
    found, current = [], None
    for cell in notebook.cells:
        if cell_marks.is_graded(cell):
            if current and questions.is_answer(cell) == current["written"]:
                current["cells"] += cell_marks.marks(cell)["points"]
        elif cell.cell_type == "markdown":
            for line in filter(HEADING.match, questions.without_rubric(cell.source).splitlines()):
                match = STATES_POINTS.search(line)
                current = match and {"heading": line, "stated": int(match["points"]),
                                     "written": bool(match["written"]), "cells": 0}
                if current:
                    found.append(current)
    return [(h["heading"], h["stated"], h["cells"]) for h in found]


def source_notebook(chapter):
    return nbformat.read(COURSE.notebook(COURSE.config.SOURCE_DIR, chapter), as_version=4)


@pytest.mark.parametrize("chapter_id", [c.id for c in COURSE.chapters])
def test_headings_state_the_points_of_their_cells(chapter_id):
    stated = stated_points(source_notebook(COURSE.chapter(chapter_id)))
    assert stated, "every chapter has written questions, whose headings state their points"
    assert [s for s in stated if s[1] != s[2]] == []


def test_a_heading_that_misstates_its_cells_is_found():
    cells = [nbformat.v4.new_markdown_cell("## 1.2 Adding\n\n### Exercise: `+` (3 points)"),
             nbformat.v4.new_code_cell("assert True"), nbformat.v4.new_code_cell("assert True"),
             nbformat.v4.new_markdown_cell("### Question 1.A · Why (1 point, graded by your instructor)"),
             nbformat.v4.new_markdown_cell("An answer.")]
    for cell, points in ((cells[1], 2), (cells[2], 2), (cells[4], 1)):
        cell.metadata["nbgrader"] = {"grade": True, "solution": cell.cell_type == "markdown", "points": points}
    assert stated_points(nbformat.v4.new_notebook(cells=cells)) == [
        ("### Exercise: `+` (3 points)", 3, 4), ("### Question 1.A · Why (1 point, graded by your instructor)", 1, 1)]


def test_the_readme_totals_are_the_sums_of_the_chapters_cells():
    totals = README_TOTALS.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert totals, "README.md has no chapter table with totals"
    assert int(totals["autograded"]) == sum(cell_marks.autograded_points(source_notebook(c)) for c in COURSE.chapters)
    assert int(totals["written"]) == sum(questions.written_points(source_notebook(c)) for c in COURSE.chapters)


def test_the_bonus_notebook_says_its_points_are_bonus_points():
    for bonus in COURSE.bonus:
        badges = source_notebook(bonus).cells[0]
        assert badges.id == frame.BADGES_ID
        assert f"**{COURSE.autograded_points(bonus)} bonus points**" in badges.source


def test_points_need_the_built_source_notebook(tmp_path):
    shutil.copy(ROOT / "course_config.py", tmp_path)
    course = Course(tmp_path)
    chapter = course.chapters[0]
    with pytest.raises(FileNotFoundError, match=f"python -m autograder build {chapter.id}"):
        course.autograded_points(chapter)
    assert course.written_points(chapter) == 0


@pytest.mark.parametrize("script, threshold", [
    ("ch09_trainer", "MLP_ACCURACY"), ("ch10_conv", "CNN_ACCURACY"), ("capstone_mine_capstone", "MLP_ACCURACY")])
def test_the_capstone_prose_states_the_checks_threshold(script, threshold):
    text = re.sub(r"\n# ?", " ", (ROOT / "chapters" / f"{script}.py").read_text(encoding="utf-8"))
    stated = [int(a or b) for a, b in re.findall(r"at least \**(\d+)%|\*\*(\d+)%\*\*", text)]
    assert f"`{threshold}`" in text and "checks/capstone.py" in text, "the prose names where the threshold lives"
    assert stated and set(stated) == {round(100 * getattr(capstone, threshold))}
