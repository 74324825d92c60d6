"""Feedback cannot leak, through the real `nbgrader autograde` and `nbgrader generate_feedback` on a
copy of the committed chapter 3: a student who prints hidden-test and solution lines (typed, or read
from source/ on disk) gets a page that says feedback was withheld and names no secret; a student
whose cell contains the text of a hidden-test marker gets feedback; an honest student's page is the
same bytes with and without the guard. The class report of the same class counts each one's flags."""
import csv
import html
import re
import shutil

import nbformat
import pytest

from autograder.build import submissions
from autograder.course import Course
from autograder.grading.class_report import write_report
from autograder.grading.feedback_guard import chapter_secrets
from autograder.grading.flags import NOTICE
from autograder.grading.nbgrader_cli import run_nbgrader

from helpers.across_workers import once_per_run
from helpers.class_support import registered
from helpers.course_paths import ROOT
from helpers.demo_students import demo_notebook

CHAPTER = "ch03"
GUARD_OFF = ["--NeutraliseStudentMarkers.enabled=False", "--FeedbackGuard.enabled=False"]
SECRETS = chapter_secrets(ROOT / "source" / CHAPTER / "autodiff.ipynb")
# A hidden-test line and a solution line, both long enough to be unmistakable and free of quotes.
HIDDEN_LINE = next(line for line in sorted(SECRETS.hidden) if len(line) > 40 and '"' not in line and "'" not in line)
SOLUTION_LINE = next(line for line in sorted(SECRETS.solution) if len(line) > 30 and '"' not in line and "'" not in line)


def visible_text(path):
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def class_of_four(course, chapter):
    """{student: notebook}: honest, partial (the demo's: failing checks print teaching messages),
    printer, reader, marker."""
    release = nbformat.read(ROOT / "release" / CHAPTER / "autodiff.ipynb", as_version=4)
    source = nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(source)

    def with_cell(notebook, code, at=3):
        notebook = nbformat.from_dict(notebook)
        notebook.cells.insert(at, nbformat.v4.new_code_cell(code))
        return notebook

    honest = submissions.filled(release, answers)
    return {
        "honest": honest,
        "partial": demo_notebook(CHAPTER, "partial"),
        # The release has no solutions: the printed solution line is not the student's own code.
        "printer": with_cell(release, f"print({HIDDEN_LINE!r})\nprint('    ' + {SOLUTION_LINE!r})"),
        # What a kernel outside the sandbox could do: read the source notebook from the course folder.
        "reader": with_cell(honest, "print(open('../../../source/ch03/autodiff.ipynb').read())"),
        "marker": submissions.filled(release, dict(answers, mul="### BEGIN HIDDEN TESTS\n" + answers["mul"])),
    }


def grade_class_of_four(root):
    """A course folder with the committed chapter 3, the class of four autograded by nbgrader."""
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "source" / CHAPTER, root / "source" / CHAPTER)
    course = Course(root)
    chapter = course.chapter(CHAPTER)
    registered(course, CHAPTER)
    for student, notebook in class_of_four(course, chapter).items():
        submissions.write_submission(course, chapter, student, notebook, course.config.SUBMITTED_DIR)
    run_nbgrader(root, "autograde", CHAPTER, "--force")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The graded class, once per test run; each test makes the feedback of students of its own."""
    return Course(once_per_run(tmp_path_factory, "feedback-guard", grade_class_of_four)[0])


def feedback(course, student, *options, check=True):
    done = run_nbgrader(course.root, "generate_feedback", CHAPTER, "--force", f"--student={student}", *options,
                        check=check)
    return course.root / "feedback" / student / CHAPTER / "autodiff.html", done


def test_the_sandbox_hides_the_source_from_a_reader(graded):
    """The kernel cannot open source/ (it is not in the sandbox): the page shows the error and no hidden
    test (its solution lines are the student's own, right, code)."""
    page, _ = feedback(graded, "reader", *GUARD_OFF)
    text = visible_text(page)
    assert "FileNotFoundError" in text and "Feedback withheld" not in text
    assert [line for line in SECRETS.hidden if line in text] == []


@pytest.mark.parametrize("student", ["printer"])
def test_a_page_that_would_show_a_secret_is_withheld(graded, student):
    page, done = feedback(graded, student, *GUARD_OFF)
    leaking = visible_text(page)
    assert HIDDEN_LINE in leaking and SOLUTION_LINE in leaking, "without the guard the page leaks: the attack is real"

    page, done = feedback(graded, student)
    text = visible_text(page)
    assert "Feedback withheld" in text and "Your grade is unaffected" in text
    shown = [line for line in SECRETS.hidden | SECRETS.solution if line in text]
    assert shown == [], f"the withheld page shows {shown[:3]}"
    assert f"feedback withheld for student {student} ({CHAPTER}/autodiff)" in done.stderr
    with open(graded.root / "grading_ledger" / "feedback_withheld.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert rows[student]["cell"] == "cell 4" and rows[student]["line"] in SECRETS.hidden | SECRETS.solution


def test_marker_text_in_a_student_cell_does_not_stop_feedback(graded):
    page, done = feedback(graded, "marker", *GUARD_OFF, check=False)
    assert not page.exists() and re.search("No end hidden tests statement found|Hidden test region detected",
                                           done.stdout + done.stderr)

    page, done = feedback(graded, "marker")
    text = visible_text(page)
    assert "BEGIN HIDDEN_TESTS" in text and "Feedback withheld" not in text
    assert re.search(r"Grade cell: test_mul_backward\s+Score: [\d.]+ / ", text)
    assert [line for line in SECRETS.hidden if line in text] == []


@pytest.mark.parametrize("student", ["honest", "partial"])
def test_an_honest_page_is_the_same_with_and_without_the_guard(graded, student):
    page, _ = feedback(graded, student, *GUARD_OFF)
    without = page.read_bytes()
    page, done = feedback(graded, student)
    assert page.read_bytes() == without
    assert "withheld" not in done.stderr
    # the honest student's written answers wait for a person: all the autograded points, out of those plus the
    # written questions'
    course = Course(ROOT)
    chapter = course.chapter(CHAPTER)
    full, written = course.autograded_points(chapter), course.written_points(chapter)
    assert (f"Score: {full}.0 / {full + written}.0" in visible_text(page)) == (student == "honest")


def test_class_report_counts_each_students_flags(graded):
    report = write_report(graded, graded.chapter(CHAPTER))
    assert report.flag_counts == {"honest": 0, "partial": 0, "printer": 0, "reader": 1, "marker": 0}
    assert NOTICE in report.table
    assert re.search(r"(?m)^reader\s+1$", report.table)
    with open(report.flags_csv, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["student"], r["cell"], r["category"]) for r in rows] == [("reader", "added cell 4", "files")]
