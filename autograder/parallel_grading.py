"""Autograde every submission of a chapter on all cores, into the course gradebook.

nbgrader grades one submission after another (jupyter/nbgrader#174). Here each core runs a worker
(grading_worker) that autogrades one student at a time with nbgrader's own API in a private course
folder and SQLite gradebook; this process merges each result into the course gradebook (SQLite or
PostgreSQL) through nbgrader's API and moves the autograded notebook into `autograded/`. The scores
are those serial `nbgrader autograde` writes. A submission that crashes, hangs or is corrupt is
recorded for its student (zero points, a reason in the ledger) and never stops the run; the ledger
makes a re-run resume where an interrupted one stopped.
"""
import multiprocessing
import os
import queue
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from nbgrader.api import Gradebook, MissingEntry
from tqdm import tqdm

from . import grading_worker
from .gradebook_merge import (
    copy_assignment, create_like, extension, late_penalty_rule, merge_submission, record_ungraded, submitted_timestamp,
)
from .grading import register
from .grading.repair_log import Repair, record_student_repairs
from .ledger import Ledger, fingerprint
from .nbgrader_cli import nbgrader_env


@dataclass
class GradingRun:
    """What a run did: students graded now, students already graded before, and problems met."""

    graded: list = field(default_factory=list)
    skipped: list = field(default_factory=list)
    problems: dict = field(default_factory=dict)
    problems_csv: Path = None


class GradingSetupError(RuntimeError):
    """The course, not a submission, is at fault (no assignment in the gradebook, say)."""


def submitted_students(course, chapter):
    base = course.root / course.config.SUBMITTED_DIR
    return sorted(p.name for p in base.iterdir() if (p / chapter.id).is_dir()) if base.is_dir() else []


def grade_chapter(course, chapter, jobs=None, force=False, progress=True, submission_timeout=None, unsafe=False):
    """Autograde the chapter's submissions in `submitted/` with `jobs` workers; return a GradingRun.
    `unsafe` lets kernels run unsandboxed where bwrap is unusable (SandboxedExecute.unsafe)."""
    cfg = course.config
    os.environ.update(nbgrader_env())        # a new gradebook runs `alembic`, found on PATH
    jobs = max(1, jobs or os.cpu_count() or 1)
    submission_timeout = submission_timeout or cfg.SUBMISSION_TIMEOUT_SECONDS
    ledger = Ledger(course, chapter)
    students = submitted_students(course, chapter)
    prints = {s: fingerprint(course.root / cfg.SUBMITTED_DIR / s / chapter.id) for s in students}
    run = GradingRun()
    register(course, chapter)                # the chapter's cells, in the course gradebook
    with Gradebook(course.gradebook_url, course_id=cfg.COURSE_ID) as gradebook:
        try:
            gradebook.find_assignment(chapter.id)
        except MissingEntry:
            raise GradingSetupError(f"{chapter.id} is not in the gradebook {course.gradebook_url}") from None
        todo = [s for s in students if force or not _already_graded(course, chapter, gradebook, ledger, s, prints[s])]
        run.skipped = [s for s in students if s not in todo]
        tasks = [{"student": s, "chapter": chapter.id, "notebook": chapter.notebook,
                  "cell_timeout": cfg.CELL_TIMEOUT_SECONDS, "extension": extension(gradebook, chapter.id, s)}
                 for s in todo]
        if tasks:
            with tempfile.TemporaryDirectory(prefix=f"babygrad-{chapter.id}-") as scratch:
                template = Path(scratch) / "template-gradebook.db"
                create_like(gradebook, f"sqlite:///{template}")
                with Gradebook(f"sqlite:///{template}", course_id=cfg.COURSE_ID) as worker_gb:
                    copy_assignment(gradebook, worker_gb, chapter.id)
                pool = WorkerPool(course, chapter, Path(scratch), min(jobs, len(tasks)), submission_timeout, unsafe)
                late_rule = late_penalty_rule(course.root)
                bar = tqdm(total=len(tasks), desc=f"grading {chapter.id}", unit="submission", disable=not progress)
                try:
                    for result in pool.results(tasks):
                        _keep(course, chapter, gradebook, ledger, result, prints[result["student"]], late_rule)
                        run.graded.append(result["student"])
                        bar.update(1)
                        bar.set_postfix(problems=len(ledger.problems(set(run.graded))))
                except BaseException:                # Ctrl-C or a setup error: what is merged stays
                    pool.stop(now=True)
                    raise
                else:
                    pool.stop(now=False)
                finally:
                    bar.close()
    run.problems = ledger.problems(set(students))
    run.problems_csv = ledger.write_problems(set(students))
    return run


def _already_graded(course, chapter, gradebook, ledger, student, print_):
    """The same files were graded before, and their grades and autograded notebook are in place."""
    if not ledger.is_current(student, print_):
        return False
    try:
        gradebook.find_submission(chapter.id, student)
    except MissingEntry:
        return False
    graded = course.root / course.config.AUTOGRADED_DIR / student / chapter.id
    return graded.is_dir() or student in ledger.problems()


def _keep(course, chapter, gradebook, ledger, result, print_, late_rule):
    """Put one worker result in the course: gradebook first, then the autograded notebook, then the ledger.

    The worker's gradebook is untrusted (see gradebook_merge): only this student's scores for the
    course's cells are read, clamped; a gradebook that cannot even be read leaves the student ungraded.
    """
    student = result["student"]
    worker_db = result.get("gradebook")
    problem = result.get("problem")
    merged = False
    if worker_db:
        try:
            with Gradebook(worker_db, course_id=course.config.COURSE_ID) as worker_gb:
                worker_gb.find_submission(chapter.id, student)
                notes = merge_submission(worker_gb, gradebook, chapter.id, student,
                                         submitted_timestamp(course, chapter.id, student), late_rule)
            merged = True
            if notes and problem is None:
                problem = ("tampered", notes.describe())
        except MissingEntry:
            gradebook.db.rollback()
        except Exception as error:                       # a gradebook the kernel could have corrupted
            gradebook.db.rollback()
            said = " ".join(str(error).split())[:300]
            problem = problem or ("error", f"the worker's gradebook could not be read ({type(error).__name__}: "
                                           f"{said}); no exercise was scored")
    if not merged:
        record_ungraded(gradebook, chapter.id, student)
    target = course.root / course.config.AUTOGRADED_DIR / student / chapter.id
    shutil.rmtree(target, ignore_errors=True)
    if result.get("autograded"):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(result["autograded"], target)
    record_student_repairs(ledger.folder, chapter.id, student,
                           [Repair.from_row(row) for row in result.get("repairs", [])])
    if result.get("handoff"):
        shutil.rmtree(result["handoff"], ignore_errors=True)
    ledger.record(student, print_, problem)


class WorkerPool:
    """`jobs` worker processes fed from one queue by one thread each; a worker that overruns the
    submission timeout or dies is stopped (with its kernels) and replaced, and its student recorded."""

    def __init__(self, course, chapter, scratch, jobs, submission_timeout, unsafe=False):
        self.course, self.chapter, self.scratch, self.unsafe = course, chapter, scratch, unsafe
        self.jobs, self.timeout = jobs, submission_timeout
        # Workers fork from a clean server process that has imported nbgrader once (seconds saved
        # per worker), and never from this process, whose threads make forking unsafe.
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(["autograder.parallel_grading", "autograder.grading", "autograder.build"])
        self.live = {}
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.threads = []

    def results(self, tasks):
        """Yield one result per task, in the order they finish."""
        pending, done = queue.Queue(), queue.Queue()
        for task in tasks:
            pending.put(task)
        self.threads = [threading.Thread(target=self._serve, args=(k, pending, done), daemon=True)
                        for k in range(self.jobs)]
        for thread in self.threads:
            thread.start()
        for _ in tasks:
            result = done.get()
            if "fatal" in result:
                raise GradingSetupError(f"a grading worker could not start: {result['fatal']}")
            yield result

    def _serve(self, slot, pending, done):
        worker = None
        try:
            while not self.stopping.is_set():
                try:
                    task = pending.get_nowait()
                except queue.Empty:
                    return
                if worker is None:
                    worker, fatal = self._start(slot)
                    if fatal:
                        done.put({"fatal": fatal})
                        return
                result, worker = self._ask(worker, task)
                if worker is None:       # a worker that had to be stopped leaves no gradebook: its student is ungraded
                    result["gradebook"] = None
                done.put(result)
        finally:
            if worker is not None:
                self._stop(worker, gently=True)

    def _start(self, slot):
        cfg = self.course.config
        root = self.scratch / f"worker-{slot}-{os.urandom(4).hex()}"
        parent_end, child_end = self.context.Pipe()
        settings = {"template_gradebook": str(self.scratch / "template-gradebook.db"), "chapter": self.chapter.id,
                    "source": cfg.SOURCE_DIR, "submitted": cfg.SUBMITTED_DIR, "autograded": cfg.AUTOGRADED_DIR,
                    "ledger": cfg.LEDGER_DIR, "unsafe": self.unsafe}
        process = self.context.Process(target=_worker_main,
                                       args=(child_end, str(self.course.root), str(root), settings), daemon=True)
        process.start()
        child_end.close()
        worker = {"process": process, "conn": parent_end, "root": root}
        with self.lock:
            self.live[slot] = worker
        try:
            hello = parent_end.recv() if parent_end.poll(600) else {"fatal": "no answer within 600 s"}
        except EOFError:
            hello = {"fatal": "the worker exited while starting"}
        return worker, hello.get("fatal")

    def _ask(self, worker, task):
        """Send one task; the result, and the worker (None if it had to be stopped)."""
        student = task["student"]
        try:
            worker["conn"].send(task)
            if worker["conn"].poll(self.timeout):
                return worker["conn"].recv(), worker
            problem = ("timeout", f"grading took longer than {self.timeout} s (SUBMISSION_TIMEOUT_SECONDS) and "
                                  "was stopped; no exercise was scored")
        except (EOFError, OSError):
            problem = ("crash", "the grading process died on this submission; no exercise was scored")
        self._stop(worker)
        return {"student": student, "success": False, "autograded": None, "problem": problem}, None

    def _stop(self, worker, gently=False):
        process = worker["process"]
        if gently and process.is_alive():
            try:
                worker["conn"].send(None)
                process.join(10)
            except (OSError, BrokenPipeError):
                pass
        if process.is_alive():
            try:
                for child in psutil.Process(process.pid).children(recursive=True):
                    child.kill()
            except psutil.Error:
                pass
            process.kill()
        process.join()
        worker["conn"].close()
        with self.lock:
            self.live = {k: w for k, w in self.live.items() if w is not worker}

    def stop(self, now):
        """At the end of a run, let each worker finish and exit; on Ctrl-C (now), stop them at once."""
        self.stopping.set()
        if not now:
            for thread in self.threads:
                thread.join()
        with self.lock:
            workers = list(self.live.values())
        for worker in workers:
            self._stop(worker)


def _worker_main(conn, course_root, worker_root, settings):
    """The worker process: its output goes to a log file, so the progress bar stays readable."""
    Path(worker_root).mkdir(parents=True, exist_ok=True)
    log = os.open(Path(worker_root).parent / f"{Path(worker_root).name}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(log, 1)
    os.dup2(log, 2)
    grading_worker.run(conn, course_root, worker_root, settings)
