"""Written questions, graded by people (autograder/questions.py).

Static: every chapter has its questions, each rubric is in source/ and nowhere in release/ or
solutions/, each model answer is in solutions/, and the authoring rules refuse a rubric that would be
lost or shown. Through the real nbgrader (chapter 3): autograde leaves answered questions to a person
and gives 0 to unanswered ones without touching the autograded points; grades entered with nbgrader's
API land in the gradebook, the exported CSV, the feedback (without the rubric) and the class report.
"""
import csv
import html
import re

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder import questions
from autograder.build import authoring, submissions
from autograder.build.readme import chapter_table
from autograder.course import Course
from autograder.grading.class_report import write_report, written_scores
from autograder.grading.feedback_guard import leaked_lines, secret_lines
from autograder.grading.nbgrader_cli import run_nbgrader

from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]
STUB = "YOUR ANSWER HERE"


def notebooks(course, chapter_id):
    chapter = course.chapter(chapter_id)
    cfg = course.config
    return {folder: nbformat.read(course.notebook(getattr(cfg, folder), chapter), as_version=4)
            for folder in ("SOURCE_DIR", "RELEASE_DIR", "SOLUTIONS_DIR")}


def by_id(notebook):
    return {cell.id: cell for cell in notebook.cells}


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_rubrics_stay_in_source_and_model_answers_reach_solutions(repo_course, chapter_id):
    books = notebooks(repo_course, chapter_id)
    source, release, solutions = (by_id(books[f]) for f in ("SOURCE_DIR", "RELEASE_DIR", "SOLUTIONS_DIR"))
    answers = questions.answer_cells(books["SOURCE_DIR"])
    assert 2 <= len(answers) <= 4, "two to four written questions per chapter"
    for answer in answers:
        name, points = answer.id, answer.metadata.nbgrader["points"]
        assert 1 <= points <= 2, f"{name}: {points} points"
        question = source[name + questions.QUESTION_SUFFIX]
        rubric = questions.rubric(question.source)
        assert "**0 points.**" in rubric and f"**{points} point" in rubric, f"{name}: full and no credit stated"
        # students see the question and an empty answer; solutions the question and the model answer
        for version in (release, solutions):
            assert version[question.id].source.strip() == questions.without_rubric(question.source).strip()
            assert "MARK SCHEME" not in version[question.id].source
        assert release[name].source == STUB and release[name].cell_type == "markdown"
        assert solutions[name].source == answer.source and len(answer.source.split()) > 40
    rubric_lines = secret_lines("\n".join(c.source for c in books["SOURCE_DIR"].cells), "MARK SCHEME")
    assert len(rubric_lines) >= 2 * len(answers)
    for folder in ("RELEASE_DIR", "SOLUTIONS_DIR"):
        text = "\n".join(c.source for c in books[folder].cells)
        assert leaked_lines(rubric_lines, text) == [], f"{folder} shows rubric lines"


def test_every_chapter_shows_its_written_points_apart_from_the_autograded_ones(repo_course):
    table = chapter_table(repo_course)
    for chapter in repo_course.chapters:
        source = notebooks(repo_course, chapter.id)["SOURCE_DIR"]
        autograded, written = repo_course.autograded_points(chapter), repo_course.written_points(chapter)
        assert written == questions.written_points(source) > 0
        row = next(line for line in table.splitlines() if f"{int(chapter.id[2:])} · {chapter.title}" in line)
        assert f"| {autograded} | {written} |" in row
        assert f"written={written})" in source.cells[-1].source


SCRIPT = """# %% [markdown] locked
# Question: why?
{rubric}
# %% answer id=q_why points=2
# Because.
"""
RUBRIC = "#\n# ### BEGIN MARK SCHEME\n# **2 points.** A reason.\n# ### END MARK SCHEME\n"


def test_a_question_and_its_answer_are_authored_as_a_pair():
    notebook = authoring.notebook_from_script(SCRIPT.format(rubric=RUBRIC))
    question, answer = notebook.cells
    assert answer.cell_type == "markdown" and answer.metadata.nbgrader == {
        "grade": True, "grade_id": "q_why", "locked": False, "schema_version": 3, "solution": True,
        "task": False, "points": 2}
    assert question.id == "q_why_question" and question.metadata.nbgrader["locked"]
    assert questions.rubric(question.source) == "**2 points.** A reason."
    assert questions.without_rubric(question.source).strip() == "Question: why?"


@pytest.mark.parametrize("script, complaint", [
    (SCRIPT.format(rubric=""), "needs one rubric"),
    (SCRIPT.format(rubric=RUBRIC).replace("# Because.", "# Because.\n" + RUBRIC), "belongs in the question above"),
    (SCRIPT.format(rubric=RUBRIC).replace("# %% [markdown] locked", "# %% [markdown]"), "locked markdown"),
    ("# %% [markdown] locked\n# Prose\n" + RUBRIC + "\n# %% provided\nx = 1\n", "outside a question cell"),
])
def test_a_rubric_that_would_be_lost_or_shown_is_refused(script, complaint):
    with pytest.raises(ValueError, match=complaint):
        authoring.notebook_from_script(script)


# ── chapter 3 through the real nbgrader ───────────────────────────────────────────────────────────

CHAPTER = "ch03"
MANUAL = {("answered", "q_accumulate"): 2.0, ("answered", "q_backward_cost"): 1.5,
          ("reshaped", "q_backward_cost"): 1.0}
SNEAKY = "### BEGIN MARK SCHEME (a student's own words, left open)"


def class_with_questions(course):
    """answered: every exercise and question; blank: every exercise, no question; reshaped: every
    exercise, one answer deleted and the other turned into a code cell that quotes a rubric marker."""
    cfg, chapter = course.config, course.chapter(CHAPTER)
    release = nbformat.read(course.notebook(cfg.RELEASE_DIR, chapter), as_version=4)
    source = nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(source)
    written = {c.id for c in questions.answer_cells(source)}
    reshaped = submissions.filled(release, dict(answers, q_backward_cost=SNEAKY + "\n\n" + answers["q_backward_cost"]))
    reshaped.cells = [c for c in reshaped.cells if c.id != "q_accumulate"]
    turned = next(c for c in reshaped.cells if c.id == "q_backward_cost")
    turned.cell_type, turned.outputs, turned.execution_count = "code", [], None
    return {"answered": submissions.filled(release, answers),
            "blank": submissions.filled(release, {k: v for k, v in answers.items() if k not in written}),
            "reshaped": nbformat.from_dict(reshaped)}


@pytest.fixture(scope="module")
def hand_graded(built_course, tmp_path_factory):
    """Chapter 3 autograded for three students, then graded by hand through nbgrader's API (as
    formgrader does it), then exported, fed back and reported; once per run."""
    from helpers.class_support import course_copy, hand_in

    from autograder.grading.parallel import grade_chapter

    def make(folder):
        course = course_copy(built_course, folder, CHAPTER)
        chapter = course.chapter(CHAPTER)
        hand_in(course, chapter, class_with_questions(course))
        run = grade_chapter(course, chapter, jobs=2, progress=False)
        assert not run.problems, run.problems
        before = grades(course), written_scores(course, chapter)
        with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
            for (student, cell), score in MANUAL.items():
                grade = gradebook.find_grade(cell, chapter.notebook, CHAPTER, student)
                grade.manual_score, grade.needs_manual_grade = score, False     # what formgrader's API does
            gradebook.db.commit()
        run_nbgrader(course.root, "export", f"--to={course.root / 'grades.csv'}")
        run_nbgrader(course.root, "generate_feedback", CHAPTER, "--force")     # the three students, in one process
        report = write_report(course, chapter)
        return before, report.written, report.table
    folder, (before, written, table) = once_per_run(tmp_path_factory, "hand-graded-ch03", make)
    return Course(folder), before, written, table


def grades(course):
    """{student: {cell: (auto_score, manual_score, needs_manual_grade, max_score)}} of chapter 3."""
    chapter = course.chapter(CHAPTER)
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        return {s.student.id: {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade, g.max_score)
                               for n in s.notebooks for g in n.grades}
                for s in gradebook.find_assignment(chapter.id).submissions}


def test_autograde_leaves_answers_to_people_and_scores_blank_ones_zero(hand_graded):
    course, (before, _), _, _ = hand_graded
    full = course.autograded_points(course.chapter(CHAPTER))
    code = {s: sum(v[0] for c, v in cells.items() if not c.startswith("q_")) for s, cells in before.items()}
    assert code == {"answered": full, "blank": full, "reshaped": full}
    assert before["answered"]["q_accumulate"] == (None, None, True, 2.0)       # waits for a person
    assert before["answered"]["q_backward_cost"] == (None, None, True, 2.0)
    assert before["blank"]["q_accumulate"] == (0.0, None, False, 2.0)          # nothing written: 0, nobody needed
    assert before["blank"]["q_backward_cost"] == (0.0, None, False, 2.0)
    assert before["reshaped"]["q_accumulate"] == (0.0, None, False, 2.0)       # deleted: put back empty
    assert before["reshaped"]["q_backward_cost"] == (None, None, True, 2.0)    # a code cell: back to markdown


def test_the_grader_sees_each_rubric_and_the_students_answer(hand_graded):
    """Formgrader shows the autograded notebook: the question with its rubric, then the student's text."""
    course, _, _, _ = hand_graded
    chapter = course.chapter(CHAPTER)
    source = by_id(nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4))
    graded = by_id(nbformat.read(course.notebook(course.config.AUTOGRADED_DIR, chapter, "reshaped"), as_version=4))
    for name in ("q_accumulate", "q_backward_cost"):
        assert graded[name + questions.QUESTION_SUFFIX].source == source[name + questions.QUESTION_SUFFIX].source
        assert questions.rubric(graded[name + questions.QUESTION_SUFFIX].source)
        assert graded[name].cell_type == "markdown" and graded[name].metadata.nbgrader["grade"]
    assert graded["q_accumulate"].source == STUB
    assert graded["q_backward_cost"].source.startswith(SNEAKY)


def test_hand_grades_land_in_the_gradebook_and_the_exported_csv(hand_graded):
    course, _, _, _ = hand_graded
    chapter = course.chapter(CHAPTER)
    after = grades(course)
    for (student, cell), score in MANUAL.items():
        assert after[student][cell][1:3] == (score, False)
    with open(course.root / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {r["student_id"]: r for r in csv.DictReader(handle) if r["assignment"] == CHAPTER}
    full = course.autograded_points(chapter)
    total = full + course.written_points(chapter)
    assert {s: (float(r["score"]), float(r["max_score"])) for s, r in rows.items()} == {
        "answered": (full + 3.5, total), "blank": (full, total), "reshaped": (full + 1, total)}


def feedback_text(course, student):
    chapter = course.chapter(CHAPTER)
    page = course.root / course.config.FEEDBACK_DIR / student / CHAPTER / f"{chapter.notebook}.html"
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def test_feedback_shows_the_hand_grades_and_never_the_rubric(hand_graded):
    course, _, _, _ = hand_graded
    chapter = course.chapter(CHAPTER)
    source = nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4)
    rubric_lines = secret_lines("\n".join(c.source for c in source.cells), "MARK SCHEME")
    expected = {"answered": (2, 1.5), "blank": (0, 0), "reshaped": (0, 1)}
    for student, (accumulate, cost) in expected.items():
        text = feedback_text(course, student)
        assert "Feedback withheld" not in text and "MARK SCHEME" not in text.replace("MARK_SCHEME", "")
        assert leaked_lines(rubric_lines, text) == [], f"{student}'s feedback shows the rubric"
        scores = re.findall(r"Written response \(Score: ([\d.]+) / ([\d.]+)\)", text)
        assert scores == [(f"{float(accumulate)}", "2.0"), (f"{float(cost)}", "2.0")], student
        assert "Add, don't overwrite" in text          # the question itself is there
    assert "BEGIN MARK_SCHEME (a student's own words" in feedback_text(course, "reshaped")   # kept, defused


def test_class_report_counts_the_hand_grades(hand_graded):
    _, _, written, table = hand_graded
    assert [(w.question, w.points, sorted(w.scores), w.waiting) for w in written] == [
        ("q_accumulate", 2, [0.0, 0.0, 2.0], 0), ("q_backward_cost", 2, [0.0, 1.0, 1.5], 0)]
    assert "written questions, graded in formgrader" in table
    assert re.search(r"q_backward_cost\s+2\s+3\s+0\s+0\.83", table), table


def test_class_report_counts_the_answers_still_to_grade(hand_graded):
    """Before anyone graded, the report said which answers wait: the answered and reshaped students'."""
    _, (_, written), _, _ = hand_graded
    assert [(w.question, sorted(w.scores), w.waiting) for w in written] == [
        ("q_accumulate", [0.0, 0.0], 1), ("q_backward_cost", [0.0], 2)]
