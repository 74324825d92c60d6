"""Parallel autograding writes what serial `nbgrader autograde` writes, field by field, even for
submissions that crash, loop forever, are corrupt or write to stderr; it records their problems,
never stops on them, does no work twice, and resumes an interrupted run."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime

import psutil
import pytest
from nbgrader.api import Gradebook

from autograder.build.submissions import filled, load_catalog
from autograder.course import Course
from autograder.grading import autograde, scores
from autograder.grading.gradebook_merge import (
    copy_assignment,
    create_like,
    late_penalty_rule,
    merge_submission,
    quiet_nbgrader,
    submission_record,
    submitted_timestamp,
)
from autograder.grading.nbgrader_cli import nbgrader_env, run_nbgrader
from autograder.grading.parallel import grade_chapter

from helpers.across_workers import once_per_run
from helpers.class_support import (
    CLASS_CHAPTERS,
    TEST_CELL_TIMEOUT,
    class_notebooks,
    course_copy,
    hand_in,
    records,
    solved_notebook_maker,
)
from helpers.course_paths import ROOT
from helpers.outgrowers import outgrower

CHAPTERS = [c.id for c in Course(ROOT).chapters]


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
    assert sum(m for _, m in table["perfect"].values()) == course.autograded_points(chapter)
    assert {c: s for c, (s, _) in table["untouched"].items() if s} == {}


@pytest.fixture(scope="module")
def broken_class(repo_course, tmp_path_factory):
    """The first chapter's right, partial, untouched and broken submissions, graded serially and in
    parallel, in two course copies, once per test run: (serial course, parallel course, parallel run).

    Merging and breaking (a dead kernel, an endless loop, a file that is not JSON) do not depend on
    the chapter, so one chapter is enough and keeps the suite fast."""
    chapter_id = CHAPTERS[0]

    def grade_both(folder):
        serial = course_copy(repo_course, folder / "serial", chapter_id, TEST_CELL_TIMEOUT)
        parallel = course_copy(repo_course, folder / "parallel", chapter_id, TEST_CELL_TIMEOUT)
        chapter = serial.chapter(chapter_id)
        for course in (serial, parallel):
            hand_in(course, chapter, class_notebooks(course, chapter))
        autograde(serial, chapter, check=False)    # nbgrader exits 1: two submissions failed
        return grade_chapter(parallel, chapter, jobs=2, progress=False)

    folder, run = once_per_run(tmp_path_factory, f"broken-{chapter_id}", grade_both)
    return Course(folder / "serial"), Course(folder / "parallel"), run


def test_parallel_gradebook_equals_serial_nbgrader_field_by_field(broken_class):
    serial, parallel, run = broken_class
    chapter = serial.chapter(CHAPTERS[0])
    full = serial.autograded_points(chapter)
    expected = records(serial, chapter)
    assert sorted(expected) == sorted(class_notebooks(serial, chapter))
    assert records(parallel, chapter) == expected
    totals = {s: sum(g[5] for g in r[chapter.notebook]["grades"].values()) for s, r in expected.items()}
    assert totals["perfect"] == totals["stderr"] == full
    assert totals["untouched"] == totals["corrupt"] == 0
    # os._exit in the first exercise: that cell is skipped and the rest graded in a fresh kernel
    assert 0 < totals["crash"] < full
    assert 0 < totals["partial"] < full and 0 <= totals["loop"] < full


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


def test_rerun_does_no_work_twice_and_regrades_a_changed_submission(broken_class, tmp_path):
    serial, shared, _ = broken_class
    shutil.copytree(shared.root, tmp_path / "parallel")     # the graded class is shared: change a copy
    parallel = Course(tmp_path / "parallel")
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
    mine = {p.pid for p in psutil.Process().children(recursive=True)}
    left = [p.pid for p in psutil.process_iter(["cmdline"])
            if p.pid in mine and "autograder.grading.worker" in " ".join(p.info["cmdline"] or [])]
    assert left == [], "the LocalCluster's grading processes outlived it"
    after = records(parallel, chapter)
    assert after["corrupt"][chapter.notebook]["grades"] == before["perfect"][chapter.notebook]["grades"]
    assert {s: r for s, r in after.items() if s != "corrupt"} == {s: r for s, r in before.items() if s != "corrupt"}


# The cell timeout of the submissions an interrupted run leaves in flight: their cells sleep past it. Long, so that
# the interrupt's stop (seconds; a minute or two on a busy machine) is told from waiting for them.
STUCK_SECONDS = 600


def test_interrupted_run_resumes_where_it_stopped(repo_course, tmp_path):
    """Ctrl-C in the middle: workers and kernels stop at once, merged students stay; the next run grades
    only the rest, and the end result equals an uninterrupted run.

    Only the first student's notebook is quick; the others wait in their first cell far longer than
    the test takes, so the interrupt always falls after one merge and before the rest, however
    loaded the machine. They hand in the quick notebook before the resumed run."""
    chapter_id = CHAPTERS[0]
    course = course_copy(repo_course, tmp_path / "course", chapter_id, cell_timeout=STUCK_SECONDS)
    chapter = course.chapter(chapter_id)
    solved_with = solved_notebook_maker(course, chapter)
    perfect = solved_with("")
    waiting = solved_with(f"import time\ntime.sleep({2 * STUCK_SECONDS})")   # cut off at STUCK_SECONDS
    students = [f"student{i}" for i in range(4)]
    hand_in(course, chapter, {s: perfect if s == students[0] else waiting for s in students})
    ledger = course.root / course.config.LEDGER_DIR / f"{chapter.id}.json"
    env = dict(os.environ, **nbgrader_env())
    run = subprocess.Popen([sys.executable, "-m", "autograder", "grade", chapter.id, "--jobs", "2", "--quiet"],
                           cwd=course.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + STUCK_SECONDS / 2       # the quick notebook's result, before any other
    while not (ledger.exists() and json.loads(ledger.read_text())) and time.monotonic() < deadline:
        assert run.poll() is None, run.communicate()
        time.sleep(0.2)
    helpers = psutil.Process(run.pid).children(recursive=True)
    run.send_signal(signal.SIGINT)
    try:            # the submissions in flight are stopped, not waited for (their cells run for STUCK_SECONDS)
        run.communicate(timeout=STUCK_SECONDS / 2)
    except subprocess.TimeoutExpired:
        run.kill()
        pytest.fail(f"Ctrl-C did not stop grading within {STUCK_SECONDS / 2:g} s: it waited for the submissions in flight")
    done_first = set(json.loads(ledger.read_text()))
    assert done_first == {students[0]}, "the interrupt came too late to test resuming"
    gone, alive = psutil.wait_procs(helpers, timeout=30)
    assert alive == [], f"left behind: {[p.cmdline() for p in alive]}"

    hand_in(course, chapter, {s: perfect for s in students[1:]})
    resumed = grade_chapter(course, chapter, jobs=2, progress=False)
    assert sorted(resumed.graded) == sorted(set(students) - done_first)
    assert sorted(resumed.skipped) == sorted(done_first)
    final = records(course, chapter)
    assert sorted(final) == students
    assert all(r[chapter.notebook]["grades"] == final[students[0]][chapter.notebook]["grades"] for r in final.values())
    assert sum(g[5] for g in final[students[0]][chapter.notebook]["grades"].values()) == course.autograded_points(chapter)


# What a kernel running as the instructor (no sandbox) can do to its worker: plant triggers in the
# worker's gradebook that write 9000 points into every grade, and leave a detached process that
# plants them again for a minute into whatever gradebook stands at that path: the next student's.
POISONER = r'''
import sqlite3, sys, time
end = time.time() + float(sys.argv[2])
while True:
    try:
        db = sqlite3.connect(sys.argv[1], timeout=1)
        db.executescript("""
CREATE TRIGGER IF NOT EXISTS forge_insert AFTER INSERT ON grade BEGIN
    UPDATE grade SET auto_score = 9000 WHERE id = NEW.id; END;
CREATE TRIGGER IF NOT EXISTS forge_update AFTER UPDATE OF auto_score ON grade
    WHEN NEW.auto_score IS NOT 9000 BEGIN UPDATE grade SET auto_score = 9000 WHERE id = NEW.id; END;
""")
        db.commit()
        db.close()
    except Exception:
        pass
    if time.time() > end:
        break
    time.sleep(0.1)
'''
POISON_CELL = '''import os as _os, subprocess as _subprocess, sys as _sys
_db = _os.path.abspath(_os.path.join("..", "..", "..", "gradebook.db"))
_subprocess.run([_sys.executable, "-c", {poisoner!r}, _db, "0"])
_child = _subprocess.Popen([_sys.executable, "-c", {poisoner!r}, _db, "60"], start_new_session=True,
                           stdin=_subprocess.DEVNULL, stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL)
open({probe!r}, "w").write(str(_child.pid))
'''


UNSANDBOXED = """
from nbgrader.preprocessors import Execute as _Execute
from autograder.grading.judged_execute import JudgedExecute as _JudgedExecute
_steps = get_config().Autograde.autograde_preprocessors
_steps[_steps.index(_JudgedExecute)] = _Execute
"""


def test_a_poisoned_worker_gradebook_cannot_change_the_next_students_score(repo_course, tmp_path):
    """One worker grades a submission that poisons its gradebook, then an untouched notebook: the next
    student still scores 0, the poisoner's own scores are clamped to each cell's maximum and reported,
    and its detached process is gone. The sandbox alone would stop the poisoner from reaching the
    gradebook, so this course grades unsandboxed, as one without bubblewrap would with --unsafe: the
    merge must hold on its own."""
    chapter_id = CHAPTERS[0]
    course = course_copy(repo_course, tmp_path / "course", chapter_id)
    with open(course.root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(UNSANDBOXED)
    chapter = course.chapter(chapter_id)
    release = class_notebooks(course, chapter)["untouched"]
    first = next(c for c in release.cells if c.metadata.get("nbgrader", {}).get("solution"))
    probe = tmp_path / "poisoner.pid"
    cell = POISON_CELL.format(poisoner=POISONER, probe=str(probe))
    poisoner = filled(release, {first.metadata["nbgrader"]["grade_id"]: cell})
    hand_in(course, chapter, {"a_poisoner": poisoner, "b_next": release})
    run = grade_chapter(course, chapter, jobs=1, progress=False)
    assert sorted(run.graded) == ["a_poisoner", "b_next"]
    assert probe.exists(), "the poisoning cell did not run"
    table = scores(course, chapter)
    assert {c: s for c, (s, _) in table["b_next"].items() if s} == {}, "the poison reached the next student"
    assert "b_next" not in run.problems
    assert all(0 <= (s or 0) <= m for s, m in table["a_poisoner"].values())
    assert run.problems["a_poisoner"][0] == "tampered" and "9000" in run.problems["a_poisoner"][1]
    assert not psutil.pid_exists(int(probe.read_text())), "the detached poisoner outlived grading"


def test_merge_takes_scores_clamped_and_time_and_penalty_from_the_instructor(repo_course, tmp_path):
    """A worker gradebook that says 9000 and -5 points, holds a cell the course does not have and a
    second student, and claims an early timestamp: the course gradebook gets each score clamped to
    the course's max_score, only this student and the course's cells, the time from timestamp.txt,
    and the late penalty nbgrader's rule gives for that time."""
    chapter_id = CHAPTERS[0]
    course = course_copy(repo_course, tmp_path / "course", chapter_id)
    with open(course.root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write('\nget_config().LateSubmissionPlugin.penalty_method = "zero"\n')
    chapter = course.chapter(chapter_id)
    student = "ada"
    folder = course.root / course.config.SUBMITTED_DIR / student / chapter_id
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text("2026-03-02 12:00:00.000000 UTC")
    worker_url = f"sqlite:///{tmp_path / 'worker.db'}"
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        gradebook.update_or_create_assignment(chapter_id, duedate=datetime(2026, 3, 1))
        cells = {c.name: c.max_score for c in gradebook.find_notebook(chapter.notebook, chapter_id).grade_cells}
        names = sorted(cells)
        create_like(gradebook, worker_url)
        with Gradebook(worker_url, course_id=course.config.COURSE_ID) as worker:
            copy_assignment(gradebook, worker, chapter_id)
            worker.update_or_create_grade_cell("bogus", chapter.notebook, chapter_id, max_score=1000, cell_type="code")
            with quiet_nbgrader():
                for name in (student, "mallory"):
                    worker.add_student(name)
                    worker.add_submission(chapter_id, name, timestamp=datetime(2020, 1, 1))
            for grade in worker.find_submission_notebook(chapter.notebook, chapter_id, student).grades:
                grade.auto_score = {names[0]: 9000, names[1]: -5}.get(grade.name, 1e6)
            for grade in worker.find_submission_notebook(chapter.notebook, chapter_id, "mallory").grades:
                grade.auto_score = 9000
            worker.db.commit()
            notes = merge_submission(worker, gradebook, chapter_id, student,
                                     submitted_timestamp(course, chapter_id, student), late_penalty_rule(course.root))
        assert [s.student.id for s in gradebook.find_assignment(chapter_id).submissions] == [student]
        record = submission_record(gradebook, chapter_id, student)
    grades = record[chapter.notebook]["grades"]
    assert set(grades) == set(cells)
    assert {name: grades[name][0] for name in cells} == {n: 0.0 if n == names[1] else cells[n] for n in cells}
    assert {cell for cell, _, _ in notes.clamped} == set(cells) and notes.ignored == [f"{chapter.notebook}/bogus"]
    assert record["timestamp"] == datetime(2026, 3, 2, 12)
    kept = sum(m for n, m in cells.items() if n != names[1])
    assert record[chapter.notebook]["late_submission_penalty"] == kept      # "zero": the late notebook scores 0


def test_the_local_dashboard_listens_on_loopback_only():
    """The dashboard shows students' names and tracebacks to anyone who reaches it, without a log-in: the local
    cluster listens on loopback alone, and the link printed for the instructor is that address."""
    from urllib.parse import urlparse

    from autograder.grading.parallel import grading_client
    with grading_client(None, 1) as client:
        listening = {c.laddr.ip for c in psutil.Process().net_connections() if c.status == psutil.CONN_LISTEN}
        link = client.dashboard_link
    assert listening == {"127.0.0.1"}
    assert urlparse(link).hostname == "127.0.0.1"


def test_every_output_channel_stays_under_the_cap_on_dask(built_course, tmp_path):
    """`python -m autograder grade` on Dask: a student's own cells send megabytes through display updates,
    results, output metadata, widget state and an exception's name. The student keeps full marks; the autograded
    notebook, and the feedback page made from it, grow by less than a notebook's output cap."""
    import course_config
    course = course_copy(built_course, tmp_path / "course", "ch03")
    chapter = course.chapter("ch03")
    perfect = solved_notebook_maker(course, chapter)("")
    hand_in(course, chapter, {"perfect": perfect, "outgrower": outgrower(perfect, "mul")})
    run = grade_chapter(course, chapter, jobs=2, progress=False)
    assert run.problems == {} and sorted(run.graded) == ["outgrower", "perfect"]
    assert {c for c, (s, m) in scores(course, chapter)["outgrower"].items() if (s or 0) < m} == set()
    run_nbgrader(course.root, "generate_feedback", chapter.id)
    cap = course_config.OUTPUT_BYTES_PER_NOTEBOOK
    for folder, suffix, room in ((course.config.AUTOGRADED_DIR, ".ipynb", cap), (course.config.FEEDBACK_DIR, ".html", 2 * cap)):
        size = {s: (course.root / folder / s / chapter.id / f"{chapter.notebook}{suffix}").stat().st_size
                for s in ("perfect", "outgrower")}
        assert size["outgrower"] - size["perfect"] < room, size
