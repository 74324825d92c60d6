"""Parallel autograding writes what serial `nbgrader autograde` writes, field by field, even for
submissions that crash, loop forever, are corrupt or write to stderr; it records their problems,
never stops on them, does no work twice, and resumes an interrupted run."""
import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
from nbgrader.api import Gradebook

from autograder.course import Course
from autograder.gradebook_merge import submission_record
from autograder.grading import autograde, scores
from autograder.submissions import load_catalog
from autograder.nbgrader_cli import nbgrader_env
from autograder.parallel_grading import grade_chapter

from class_support import TEST_CELL_TIMEOUT, class_notebooks, course_copy, hand_in
from conftest import CLASS_CHAPTERS, ROOT

CHAPTERS = [c.id for c in Course(ROOT).chapters]


def records(course, chapter):
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        students = sorted(s.student.id for s in gradebook.find_assignment(chapter.id).submissions)
        return {s: submission_record(gradebook, chapter.id, s) for s in students}


@pytest.mark.parametrize("chapter_id", CLASS_CHAPTERS)
def test_parallel_grading_scores_every_chapters_demo_class(graded_class, chapter_id):
    """Every chapter: full marks, zero, and exactly the partial student's catalogued losses."""
    course, run = graded_class(chapter_id)
    chapter = course.chapter(chapter_id)
    assert sorted(run.graded) == ["partial", "perfect", "untouched"] and run.problems == {}
    table = scores(course, chapter)
    catalog = load_catalog(course, chapter)
    by_name = {m.name: m for m in catalog.MISTAKES}
    expected_lost = {cell for name in catalog.DEMO_PARTIAL for cell in by_name[name].loses}
    assert {c for c, (s, m) in table["partial"].items() if (s or 0) < m} == expected_lost
    assert {c for c, (s, m) in table["perfect"].items() if (s or 0) < m} == set()
    assert sum(m for _, m in table["perfect"].values()) == chapter.points
    assert {c: s for c, (s, _) in table["untouched"].items() if s} == {}


@pytest.fixture(scope="module")
def broken_class(built_course, tmp_path_factory):
    """The first chapter's right, partial, untouched and broken submissions, graded serially and in
    parallel, in two course copies.

    Merging and breaking (a dead kernel, an endless loop, a file that is not JSON) do not depend on
    the chapter, so one chapter is enough and keeps the suite fast."""
    chapter_id = CHAPTERS[0]
    folder = tmp_path_factory.mktemp(f"broken-{chapter_id}")
    serial = course_copy(built_course, folder / "serial", chapter_id, TEST_CELL_TIMEOUT)
    parallel = course_copy(built_course, folder / "parallel", chapter_id, TEST_CELL_TIMEOUT)
    chapter = serial.chapter(chapter_id)
    for course in (serial, parallel):
        hand_in(course, chapter, class_notebooks(course, chapter))
    autograde(serial, chapter, check=False)    # nbgrader exits 1: two submissions failed
    return serial, parallel, grade_chapter(parallel, chapter, jobs=2, progress=False)


def test_parallel_gradebook_equals_serial_nbgrader_field_by_field(broken_class):
    serial, parallel, run = broken_class
    chapter = serial.chapter(CHAPTERS[0])
    expected = records(serial, chapter)
    assert sorted(expected) == sorted(class_notebooks(serial, chapter))
    assert records(parallel, chapter) == expected
    totals = {s: sum(g[5] for g in r[chapter.notebook]["grades"].values()) for s, r in expected.items()}
    assert totals["perfect"] == totals["stderr"] == chapter.points
    assert totals["untouched"] == totals["corrupt"] == 0
    # os._exit in the first exercise: that cell is skipped and the rest graded in a fresh kernel
    assert 0 < totals["crash"] < chapter.points
    assert 0 < totals["partial"] < chapter.points and 0 <= totals["loop"] < chapter.points


def test_broken_submissions_are_recorded_and_never_stop_the_run(broken_class):
    serial, parallel, run = broken_class
    chapter = serial.chapter(CHAPTERS[0])
    assert sorted(run.graded) == sorted(class_notebooks(serial, chapter))
    assert {s: kind for s, (kind, _) in run.problems.items()} == {
        "crash": "crash", "corrupt": "corrupt", "loop": "timeout"}
    assert "not valid notebook JSON" in run.problems["corrupt"][1]
    assert f"{TEST_CELL_TIMEOUT} s" in run.problems["loop"][1]
    assert run.problems_csv.read_text(encoding="utf-8").splitlines()[0] == "student,kind,reason"
    graded = parallel.root / parallel.config.AUTOGRADED_DIR
    assert sorted(p.name for p in graded.iterdir() if (p / chapter.id).is_dir()) == \
        sorted(p.name for p in (serial.root / serial.config.AUTOGRADED_DIR).iterdir() if (p / chapter.id).is_dir())


def test_rerun_does_no_work_twice_and_regrades_a_changed_submission(broken_class):
    serial, parallel, _ = broken_class
    chapter = serial.chapter(CHAPTERS[0])
    before = records(parallel, chapter)
    again = grade_chapter(parallel, chapter, jobs=2, progress=False)
    assert again.graded == [] and sorted(again.skipped) == sorted(before)
    assert records(parallel, chapter) == before
    # the "corrupt" student uploads a real notebook: only they are graded again
    notebooks = class_notebooks(parallel, chapter)
    hand_in(parallel, chapter, {"corrupt": notebooks["perfect"]})
    fixed = grade_chapter(parallel, chapter, jobs=2, progress=False)
    assert fixed.graded == ["corrupt"] and "corrupt" not in fixed.problems
    after = records(parallel, chapter)
    assert after["corrupt"][chapter.notebook]["grades"] == before["perfect"][chapter.notebook]["grades"]
    assert {s: r for s, r in after.items() if s != "corrupt"} == {s: r for s, r in before.items() if s != "corrupt"}


def test_interrupted_run_resumes_where_it_stopped(built_course, tmp_path):
    """Ctrl-C in the middle: workers and kernels stop, merged students stay; the next run grades
    only the rest, and the end result equals an uninterrupted run."""
    chapter_id = CHAPTERS[0]
    course = course_copy(built_course, tmp_path / "course", chapter_id)
    chapter = course.chapter(chapter_id)
    perfect = class_notebooks(course, chapter)["perfect"]
    students = [f"student{i}" for i in range(4)]
    hand_in(course, chapter, {s: perfect for s in students})
    ledger = course.root / course.config.LEDGER_DIR / f"{chapter.id}.json"
    env = dict(os.environ, **nbgrader_env())
    run = subprocess.Popen([sys.executable, "-m", "autograder", "grade", chapter.id, "--jobs", "2", "--quiet"],
                           cwd=course.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not (ledger.exists() and json.loads(ledger.read_text())) and time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        time.sleep(0.2)
    helpers = psutil.Process(run.pid).children(recursive=True)
    run.send_signal(signal.SIGINT)
    run.communicate(timeout=120)
    done_first = set(json.loads(ledger.read_text()))
    assert 1 <= len(done_first) < len(students), "the interrupt came too late to test resuming"
    gone, alive = psutil.wait_procs(helpers, timeout=30)
    assert alive == [], f"left behind: {[p.cmdline() for p in alive]}"

    resumed = grade_chapter(course, chapter, jobs=2, progress=False)
    assert sorted(resumed.graded) == sorted(set(students) - done_first)
    assert sorted(resumed.skipped) == sorted(done_first)
    final = records(course, chapter)
    assert sorted(final) == students
    assert all(r[chapter.notebook]["grades"] == final[students[0]][chapter.notebook]["grades"] for r in final.values())
    assert sum(g[5] for g in final[students[0]][chapter.notebook]["grades"].values()) == chapter.points
