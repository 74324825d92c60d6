"""Overlapping deadlines through nbgrader's exchange: the real `nbgrader release_assignment ch04`, with
chapter 3 not yet due in the gradebook, puts no line of chapter 3's code into the exchange; once chapter 3
is past due, a release with --force hands out the course's earlier_chapters.py whole."""
import shutil
from datetime import datetime, timedelta

from nbgrader.api import Gradebook

from autograder.course import Course
from autograder.grading.nbgrader_cli import nbgrader_env, run_nbgrader
from autograder.student.export import course_sections, open_chapters

from helpers.course_paths import ROOT


def test_release_through_the_exchange_withholds_chapters_not_yet_due(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])          # a new gradebook runs `alembic`
    root = tmp_path / "course"
    root.mkdir()
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "release" / "ch04", root / "release" / "ch04")
    course = Course(root)
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    now = datetime.utcnow()
    with Gradebook(db_url, course_id=course.config.COURSE_ID) as gradebook:
        gradebook.update_or_create_assignment("ch02", duedate=now - timedelta(days=7))
        gradebook.update_or_create_assignment("ch03", duedate=now + timedelta(days=7))
    options = [f"--Exchange.root={tmp_path / 'exchange'}", f"--CourseDirectory.db_url={db_url}"]

    done = run_nbgrader(root, "release_assignment", "ch04", *options)
    assert "ch03 not past their due date" in done.stderr
    released = tmp_path / "exchange" / course.config.COURSE_ID / "outbound" / "ch04" / "earlier_chapters.py"
    ours = (ROOT / "release" / "ch04" / "earlier_chapters.py").read_text(encoding="utf-8")
    text = released.read_text(encoding="utf-8")
    assert open_chapters(text) == ("ch03_autodiff",)
    assert course_sections(text)["ch02_tensor"] == course_sections(ours)["ch02_tensor"]
    solution = [line for line in course_sections(ours)["ch03_autodiff"].splitlines() if len(line.strip()) > 25]
    assert len(solution) > 50 and [line for line in solution if line in text] == []
    assert (root / "release" / "ch04" / "earlier_chapters.py").read_text(encoding="utf-8") == ours

    with Gradebook(db_url, course_id=course.config.COURSE_ID) as gradebook:
        gradebook.update_or_create_assignment("ch03", duedate=now - timedelta(minutes=1))
    run_nbgrader(root, "release_assignment", "ch04", "--force", *options)
    assert released.read_text(encoding="utf-8") == ours
