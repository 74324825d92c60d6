"""Autograde every submission of a chapter on a Dask cluster, into the course gradebook.

nbgrader grades one submission after another (jupyter/nbgrader#174). Here each submission is one Dask
task (task.grade_submission): it receives the chapter's kit and the student's files as bytes,
grades them with nbgrader's own API in a private folder and SQLite gradebook on whichever worker runs
it, and returns the gradebook and the autograded notebook as bytes (the records are in protocol.py). This process merges each result
into the course gradebook (SQLite or PostgreSQL) through nbgrader's API and writes the autograded
notebook into `autograded/`. The scores are those serial `nbgrader autograde` writes.

The cluster is a LocalCluster sized to this machine, or an existing one (`--scheduler tcp://HOST:8786`,
started with `dask scheduler` and `dask worker`, or through dask-jobqueue or dask-kubernetes). A
submission that crashes, hangs or is corrupt is recorded for its student (zero points, a reason in the
ledger) and never stops the run; a worker that dies has its tasks run again elsewhere by Dask; the
ledger makes a re-run resume where an interrupted one stopped.
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nbgrader.api import Gradebook, MissingEntry
from tqdm import tqdm

from autograder.grading import file_bundle, register
from autograder.grading.gradebook_merge import (
    extension,
    late_penalty_rule,
    merge_submission,
    record_ungraded,
    submitted_timestamp,
)
from autograder.grading.intake import Intake, IntakeLimits, survey, update_record
from autograder.grading.kit import KIT_GRADEBOOK, chapter_kit
from autograder.grading import submission_modes
from autograder.grading.ledger import Ledger, fingerprint
from autograder.grading.nbgrader_cli import nbgrader_env
from autograder.grading.protocol import GradingKit, GradingResult, Problem, Submission
from autograder.grading.repair_log import record_student_repairs
from autograder.grading.task import GradingSetupError, grade_submission, stop_all_graders, stop_orphaned_graders
from autograder.grading.worker import error_line

if TYPE_CHECKING:
    from autograder.course import Course
    from course_config import Chapter

# Submissions sent ahead per thread of the cluster: enough to keep every worker busy, few enough that
# a class of thousands is never all in memory at once.
AHEAD_PER_THREAD = 4
# The local cluster's dashboard: loopback only (it shows students' names and tracebacks, with no log-in),
# on a free port. The instructor reaches it from another machine through an SSH tunnel.
DASHBOARD_ADDRESS = "127.0.0.1:0"


@dataclass
class GradingRun:
    """What a run did: students graded now, students already graded before, and problems met."""

    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    problems: dict[str, Problem] = field(default_factory=dict)
    problems_csv: Path | None = None
    dashboard: str | None = None


def submitted_students(course: Course, chapter: Chapter) -> list[str]:
    base = course.root / course.config.SUBMITTED_DIR
    return sorted(p.name for p in base.iterdir() if (p / chapter.id).is_dir()) if base.is_dir() else []


def grade_chapter(course: Course, chapter: Chapter, jobs: int | None = None, force: bool = False,
                  progress: bool = True, submission_timeout: float | None = None, unsafe: bool = False,
                  scheduler: str | None = None) -> GradingRun:
    """Autograde the chapter's submissions in `submitted/` on the Dask cluster at `scheduler` (default: a
    LocalCluster of `jobs` threads, one per core); return a GradingRun. `unsafe` lets kernels run
    unsandboxed where bwrap is unusable (SandboxedExecute.unsafe)."""
    cfg = course.config
    os.environ.update(nbgrader_env())        # a new gradebook runs `alembic`, found on PATH
    submission_timeout = submission_timeout or cfg.SUBMISSION_TIMEOUT_SECONDS
    ledger = Ledger(course, chapter)
    students = submitted_students(course, chapter)
    submitted = {s: course.root / cfg.SUBMITTED_DIR / s / chapter.id for s in students}
    found = {s: survey(submitted[s], [f"{chapter.notebook}.ipynb"], IntakeLimits.from_config(cfg),
                       within=course.root / cfg.SUBMITTED_DIR) for s in students}
    for student in students:
        update_record(ledger.folder, chapter.id, student, found[student], submitted[student])
    prints = {s: fingerprint(submitted[s], found[s]) for s in students}
    doubts = submission_modes.check_chapter(course, chapter)     # the files as they are graded
    run = GradingRun()
    register(course, chapter)                # the chapter's cells, in the course gradebook
    with Gradebook(course.gradebook_url, course_id=cfg.COURSE_ID) as gradebook:
        try:
            gradebook.find_assignment(chapter.id)
        except MissingEntry:
            raise GradingSetupError(f"{chapter.id} is not in the gradebook {course.gradebook_url}") from None
        todo = [s for s in students if force or not _already_graded(course, chapter, gradebook, ledger, s, prints[s])]
        run.skipped = [s for s in students if s not in todo]
        if todo:
            kit = chapter_kit(course, chapter, gradebook, unsafe)
            late_rule = late_penalty_rule(course.root)
            with grading_client(scheduler, jobs or os.cpu_count() or 1, dashboard=progress) as client:
                run.dashboard = client.dashboard_link if progress else None
                if run.dashboard:
                    print(f"Dask dashboard: {run.dashboard}", flush=True)
                bar = tqdm(total=len(todo), desc=f"grading {chapter.id}", unit="submission", disable=not progress)
                try:
                    for student, result in _graded(client, kit, course, chapter, gradebook, todo, submitted, found,
                                                   submission_timeout):
                        _keep(course, chapter, gradebook, ledger, result, prints[student], late_rule)
                        run.graded.append(student)
                        bar.update(1)
                        bar.set_postfix(problems=len(ledger.problems(set(run.graded))))
                finally:
                    bar.close()
    for student in students:
        if student in doubts or "submission" in ledger.entries.get(student, {}):
            ledger.note_submission(student, submission_modes.describe(doubts[student]) if student in doubts else None)
    run.problems = ledger.problems(set(students))
    run.problems_csv = ledger.write_problems(set(students))
    return run


@contextmanager
def grading_client(scheduler: str | None, threads: int, dashboard: bool = True):
    """A Dask client: of the cluster at `scheduler`, or of a LocalCluster with `threads` threads in this
    process. Local threads are enough: each grades in a process of its own (task.py)."""
    import dask
    from distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler) as client:
            yield client
        return
    try:
        # the printed link names the address the dashboard listens on, not the machine's
        with dask.config.set({"distributed.dashboard.link": "{scheme}://127.0.0.1:{port}/status"}), \
                LocalCluster(n_workers=1, threads_per_worker=threads, processes=False, memory_limit=0,
                             dashboard_address=DASHBOARD_ADDRESS if dashboard else None, silence_logs=logging.ERROR,
                             scheduler_kwargs={"dashboard_address": DASHBOARD_ADDRESS},
                             worker_dashboard_address=DASHBOARD_ADDRESS) as cluster:
            with Client(cluster) as client:
                try:
                    yield client
                except BaseException:
                    stop_all_graders(gently=False)  # Ctrl-C: the threads' submissions end now, not at their timeouts
                    raise
    finally:
        stop_orphaned_graders()             # the cluster's threads are gone; their grading processes go too


def _graded(client, kit: GradingKit, course: Course, chapter: Chapter, gradebook: Gradebook, students: list[str],
            submitted: dict[str, Path], found: dict[str, Intake], timeout: float) -> Iterator[tuple[str, GradingResult]]:
    """Yield (student, result) as the cluster finishes them, keeping a bounded number in flight. A task
    whose worker died is run again by Dask elsewhere; one that killed workers again and again
    (KilledWorker) is reported for its student like a crash. A submission with no regular notebook is
    never sent; each task gets the files intake admitted, and nothing else."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    notebook = f"{chapter.notebook}.ipynb"
    for student in students:
        refusal = found[student].notebook_refusal(notebook)
        if refusal:
            yield student, GradingResult.unscored(student, "refused", f"{refusal}; no exercise was scored")
    students = [s for s in students if not found[s].notebook_refusal(notebook)]
    if not students:
        return
    shared_kit = client.scatter(kit, broadcast=True, hash=False)
    waiting, owner = iter(students), {}

    def submit(student):
        submission = Submission(student, chapter.id, chapter.notebook, course.config.CELL_TIMEOUT_SECONDS,
                                extension=extension(gradebook, chapter.id, student))
        files = file_bundle.pack(submitted[student], found[student].admitted)
        future = client.submit(grade_submission, shared_kit, submission, files, timeout,
                               key=f"grade-{chapter.id}-{student}-{os.urandom(4).hex()}", pure=False)
        owner[future.key] = student
        return future

    ahead = AHEAD_PER_THREAD * max(1, sum(client.nthreads().values()))
    finished = as_completed([submit(s) for _, s in zip(range(ahead), waiting)])
    try:
        for future in finished:
            student = owner.pop(future.key)
            try:
                result = future.result()
            except KilledWorker:
                result = GradingResult.unscored(student, "crash", "every worker that ran this submission died "
                                                                  "(out of memory?); no exercise was scored")
            except GradingSetupError:
                raise
            except Exception as error:
                result = GradingResult.unscored(student, "error", f"grading failed: {error_line(error)}")
            future.release()
            following = next(waiting, None)
            if following is not None:
                finished.add(submit(following))
            yield student, result
    except BaseException:                     # Ctrl-C or a setup error: what is merged stays
        client.cancel(list(finished.futures))
        raise


def _already_graded(course: Course, chapter: Chapter, gradebook: Gradebook, ledger: Ledger, student: str,
                    print_: str) -> bool:
    """The same files were graded before, and their grades and autograded notebook are in place."""
    if not ledger.is_current(student, print_):
        return False
    try:
        gradebook.find_submission(chapter.id, student)
    except MissingEntry:
        return False
    graded = course.root / course.config.AUTOGRADED_DIR / student / chapter.id
    return graded.is_dir() or student in ledger.problems()


def _keep(course: Course, chapter: Chapter, gradebook: Gradebook, ledger: Ledger, result: GradingResult, print_: str,
          late_rule) -> None:
    """Put one result in the course: gradebook first, then the autograded notebook, then the ledger.

    The result's gradebook sat next to a kernel that ran student code, so it is untrusted (see
    gradebook_merge): only this student's scores for the course's cells are read, clamped; a gradebook
    that cannot even be read leaves the student ungraded.
    """
    student, problem = result.student, result.problem
    merged = False
    if result.gradebook:
        with tempfile.TemporaryDirectory(prefix="babygrad-merge-") as scratch:
            url = f"sqlite:///{Path(scratch) / KIT_GRADEBOOK}"
            (Path(scratch) / KIT_GRADEBOOK).write_bytes(result.gradebook)
            try:
                with Gradebook(url, course_id=course.config.COURSE_ID) as worker_gb:
                    worker_gb.find_submission(chapter.id, student)
                    notes = merge_submission(worker_gb, gradebook, chapter.id, student,
                                             submitted_timestamp(course, chapter.id, student), late_rule)
                merged = True
                if notes and problem is None:
                    problem = Problem("tampered", notes.describe())
            except MissingEntry:
                gradebook.db.rollback()
            except Exception as error:                       # a gradebook the kernel could have corrupted
                gradebook.db.rollback()
                problem = problem or Problem("error", f"the worker's gradebook could not be read "
                                                      f"({error_line(error)}); no exercise was scored")
    if not merged:
        record_ungraded(gradebook, chapter.id, student)
    target = course.root / course.config.AUTOGRADED_DIR / student / chapter.id
    shutil.rmtree(target, ignore_errors=True)
    if result.autograded:
        file_bundle.unpack(result.autograded, target)
    record_student_repairs(ledger.folder, chapter.id, student, list(result.repairs))
    ledger.record(student, print_, problem)
