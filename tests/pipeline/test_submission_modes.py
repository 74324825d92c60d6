"""Submissions nobody else can change: the course's collect (nbgrader's, through the real exchange) leaves
submitted/<student>/<chapter>/ the instructor's alone, and a submission others could have changed, or that
differs from the exchange's inbound copy, is flagged in the flags report and the problems ledger."""
import csv
import getpass
import shutil
import subprocess
import sys

import pytest

from autograder.course import Course
from autograder.grading import submission_modes
from autograder.grading.ledger import Ledger
from autograder.grading.nbgrader_cli import run_nbgrader
from autograder.grading.protocol import Problem

from helpers.course_paths import ROOT

CHAPTER = "ch03"


@pytest.fixture
def collected(tmp_path):
    """A course copy that released ch03 into a real exchange, a student's submit of the release, and the
    course's `nbgrader collect`: (course, exchange, submitted folder)."""
    root = tmp_path / "course"
    root.mkdir()
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy(ROOT / name, root / name)
    for folder in ("source", "release"):
        shutil.copytree(ROOT / folder / CHAPTER, root / folder / CHAPTER)
    exchange = tmp_path / "exchange"
    options = [f"--Exchange.root={exchange}", f"--Exchange.cache={tmp_path / 'cache'}",
               f"--CourseDirectory.db_url=sqlite:///{tmp_path / 'gradebook.db'}"]
    run_nbgrader(root, "release_assignment", CHAPTER, *options)
    home = tmp_path / "student"
    shutil.copytree(ROOT / "release" / CHAPTER, home / CHAPTER)
    run_nbgrader(home, "submit", CHAPTER, "--course=babygrad", *options[:2])
    inbound = list((exchange / "babygrad" / "inbound").iterdir())
    assert [oct(p.stat().st_mode & 0o777) for p in inbound] == [oct(0o777)]      # nbgrader's submit
    run_nbgrader(root, "collect", CHAPTER, *options)
    course = Course(root)
    return course, exchange, root / "submitted" / getpass.getuser() / CHAPTER


def test_the_courses_collect_leaves_every_submission_the_instructors_alone(collected):
    course, exchange, submitted = collected
    paths = [submitted.parent, submitted, *submitted.rglob("*")]
    assert len(paths) > 4 and {oct(p.stat().st_mode & 0o777) for p in paths if p.is_dir()} == {oct(0o700)}
    assert {oct(p.stat().st_mode & 0o777) for p in paths if p.is_file()} == {oct(0o600)}
    assert submission_modes.check_chapter(course, course.chapter(CHAPTER), exchange) == {}


def test_a_submission_others_could_change_is_flagged(collected):
    course, exchange, submitted = collected
    submitted.chmod(0o777)                            # what nbgrader's own collect leaves
    (submitted / "planted.py").write_text("x = 1\n")
    [(student, findings)] = submission_modes.check_chapter(course, course.chapter(CHAPTER), exchange).items()
    said = [str(f) for f in findings]
    assert student == getpass.getuser()
    assert ".: group and others can change it (mode 0777)" in said
    assert any(s.startswith("planted.py: not in the exchange's copy") for s in said), said


def test_a_notebook_replaced_in_submitted_differs_from_the_exchanges_copy(collected):
    course, exchange, submitted = collected
    notebook = submitted / "autodiff.ipynb"
    notebook.write_text(notebook.read_text().replace("# YOUR CODE HERE", "# someone else's code", 1))
    [findings] = submission_modes.check_chapter(course, course.chapter(CHAPTER), exchange).values()
    assert [str(f).split(" (")[0] for f in findings] == ["autodiff.ipynb: differs from the exchange's copy"]


def test_the_flags_report_lists_the_submissions_files(collected):
    course, exchange, submitted = collected
    submitted.chmod(0o777)
    with open(course.root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"\nget_config().Exchange.root = {str(exchange)!r}\n")
    done = subprocess.run([sys.executable, "-m", "autograder", "--root", str(course.root), "flags", CHAPTER],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{getpass.getuser()}  submitted files:0  [submission files]  .: group and others can change it" \
        in done.stdout
    with open(course.root / "exports" / f"{CHAPTER}_flags.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["category"] for row in rows] == ["submission files"]


def test_the_problems_ledger_keeps_the_doubt_beside_the_grading_problem(tmp_path):
    shutil.copy(ROOT / "course_config.py", tmp_path / "course_config.py")
    course = Course(tmp_path)
    ledger = Ledger(course, course.chapter(CHAPTER))
    ledger.record("ann", "print-a")
    ledger.record("bob", "print-b", Problem("timeout", "the notebook ran out of time"))
    ledger.note_submission("ann", "its files may not be what the student submitted: .: others can change it")
    ledger.note_submission("bob", "its files may not be what the student submitted: x")
    again = Ledger(course, course.chapter(CHAPTER))
    assert again.problems() == {
        "ann": Problem("submission files", "its files may not be what the student submitted: .: others can change it"),
        "bob": Problem("timeout", "the notebook ran out of time; its files may not be what the student submitted: x")}
    assert again.is_current("ann", "print-a")
    again.note_submission("ann", None)
    assert "ann" not in Ledger(course, course.chapter(CHAPTER)).problems()
    with open(again.write_problems(), encoding="utf-8") as handle:
        assert [row["student"] for row in csv.DictReader(handle)] == ["bob"]


def test_parallel_grading_writes_the_doubt_into_the_problems_ledger(collected):
    """`python -m autograder grade` checks the files it grades: the grade stands, the problems CSV says why
    to look again."""
    from autograder.grading.parallel import grade_chapter

    course, exchange, submitted = collected
    submitted.chmod(0o777)
    with open(course.root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"\nget_config().Exchange.root = {str(exchange)!r}\n")
    run = grade_chapter(course, course.chapter(CHAPTER), jobs=1, progress=False)
    student = getpass.getuser()
    assert run.graded == [student]
    assert run.problems[student].kind == "submission files"
    assert ".: group and others can change it (mode 0777)" in run.problems[student].reason
    with open(run.problems_csv, encoding="utf-8") as handle:
        assert [(row["student"], row["kind"]) for row in csv.DictReader(handle)] == [(student, "submission files")]


def test_plain_nbgrader_autograde_writes_the_doubt_into_the_problems_ledger(collected):
    """Plain `nbgrader autograde` (formgrader's button too) checks through Autograde's pre-convert hook."""
    course, exchange, submitted = collected
    submitted.chmod(0o777)
    with open(course.root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"\nget_config().Exchange.root = {str(exchange)!r}\n")
    db = f"--CourseDirectory.db_url=sqlite:///{course.root.parent / 'gradebook.db'}"
    run_nbgrader(course.root, "generate_assignment", CHAPTER, "--force", db)
    done = run_nbgrader(course.root, "autograde", CHAPTER, db)
    student = getpass.getuser()
    assert f"[submission files] {student} {CHAPTER}: its files may not be what the student submitted" in done.stderr
    assert (course.root / "autograded" / student / CHAPTER / "autodiff.ipynb").is_file()
    with open(course.root / "grading_ledger" / f"{CHAPTER}_problems.csv", encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    assert (row["student"], row["kind"]) == (student, "submission files")
    assert ".: group and others can change it (mode 0777)" in row["reason"]
