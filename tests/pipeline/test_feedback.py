"""`nbgrader generate_feedback` teaches without leaking: each exercise's points and the teaching
message of what failed are in the HTML, the hidden tests' source is not (jupyter/nbgrader#917)."""
import re

import nbformat
import pytest

from autograder.course import Course
from autograder.grading.feedback_guard import secret_lines
from autograder.grading.nbgrader_cli import run_nbgrader

from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT
from helpers.readable_text import visible_text

CHAPTERS = [c.id for c in Course(ROOT).chapters]
STUDENTS = ["demo-partial", "perfect"]      # failures (hidden-only ones too), and none


@pytest.fixture(scope="session")
def feedback(graded, tmp_path_factory):
    """make(chapter_id): the graded chapter's course, its feedback pages generated once per run."""
    def make(chapter_id):
        course, _, _ = graded(chapter_id)

        def generate(_):       # one nbgrader process for the students looked at, the rest of the class left out
            graded_students = {p.parent.name for p in (course.root / course.config.AUTOGRADED_DIR).glob(f"*/{chapter_id}")}
            others = ",".join(sorted(graded_students - set(STUDENTS)))
            run_nbgrader(course.root, "generate_feedback", chapter_id, "--force", f"--CourseDirectory.student_id_exclude={others}")
        once_per_run(tmp_path_factory, f"feedback-{chapter_id}", generate)
        return course
    return make


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_feedback_never_shows_hidden_tests(feedback, chapter_id):
    course = feedback(chapter_id)
    chapter = course.chapter(chapter_id)
    source = nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4)
    hidden = secret_lines("\n".join(c.source for c in source.cells), "HIDDEN TESTS")
    assert hidden, "the chapter has no hidden tests to protect"
    pages = sorted((course.root / course.config.FEEDBACK_DIR).glob(f"*/{chapter_id}/*.html"))
    assert {p.parts[-3] for p in pages} == set(STUDENTS)
    for page in pages:
        text = visible_text(page)
        assert "HIDDEN TESTS" not in text, page
        assert [line for line in hidden if line in text] == [], f"{page} shows hidden test lines"


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_feedback_shows_points_and_teaching_message_of_each_failure(feedback, chapter_id):
    course = feedback(chapter_id)
    chapter = course.chapter(chapter_id)
    for student in STUDENTS:
        autograded = nbformat.read(course.notebook(course.config.AUTOGRADED_DIR, chapter, student), as_version=4)
        text = visible_text(course.root / course.config.FEEDBACK_DIR / student / chapter_id / f"{chapter.notebook}.html")
        failures = 0
        written = [c for c in autograded.cells if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade")]
        assert written and len(re.findall(r"Written response \(Score: [\d.]+ / [\d.]+\)", text)) == len(written)
        for cell in autograded.cells:
            meta = cell.metadata.get("nbgrader", {})
            if not meta.get("grade") or cell.cell_type != "code":
                continue        # a written answer: the student's text and a score a person gives
            assert f"Grade cell: {meta['grade_id']}" in text
            assert re.search(rf"Grade cell: {meta['grade_id']}\s+Score: [\d.]+ / {meta['points']:.1f}", text), meta["grade_id"]
            for output in cell.outputs:
                if output.output_type == "error":
                    failures += 1
                    message = output.evalue.strip().splitlines()[0] if output.evalue.strip() else output.ename
                    assert message in text, f"{student}: the message of {meta['grade_id']} is missing"
        assert (failures > 0) == (student != "perfect"), student
        assert "Cell In[" not in text and "Traceback (most recent call last)" not in text, f"{student}: a full traceback quotes test code"
