"""The grading process: nbgrader autogrades one student at a time in it, in process (nbgrader's
`NbGraderAPI.autograde`), so the seconds it takes to import nbgrader are paid once per process instead
of once per student. A Dask task (task.py) feeds it and stops it when a submission overruns.

The process owns a folder with the chapter's source files and a SQLite gradebook seeded from the
chapter's kit (kit.chapter_kit); the instructor's machine merges each graded
submission back. Both are laid out afresh for every student, and what a student's kernel left running
is killed before the next one: nothing one submission does here reaches the next submission.
"""
import ctypes
import functools
import os
import re
import shutil
import sqlite3
import sys
import threading
import time
import warnings
from multiprocessing.connection import Connection
from pathlib import Path

import nbformat
import psutil

from autograder import cell_marks
from autograder.grading.kit import KIT_GRADEBOOK
from autograder.grading.nbgrader_cli import nbgrader_env
from autograder.grading.protocol import (
    HANDOFF_AUTOGRADED,
    HANDOFF_GRADEBOOK,
    GradingSettings,
    Handoff,
    Hello,
    Problem,
    Submission,
)
from autograder.grading.repair_log import read_student_repairs


def course_settings(kit_root: Path, worker_root: Path, unsafe: bool = False):
    """The course's own nbgrader_config.py (the kit's copy), pointed at the worker's folder and gradebook
    (and, only when the instructor said --unsafe, allowed to run kernels unsandboxed where bwrap is
    unusable)."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(kit_root)).load_config()
    config.CourseDirectory.root = str(worker_root)
    config.CourseDirectory.db_url = f"sqlite:///{worker_root / 'gradebook.db'}"
    if unsafe:
        config.SandboxedExecute.unsafe = True
    return config


def prepare(kit_root: Path, worker_root: Path, chapter_id: str, source_dir: str) -> None:
    """Lay out the worker's folder: the chapter's source files, and a copy of the kit's gradebook,
    which knows the chapter (made once by the instructor's side: a new gradebook costs seconds).
    Called before every student, so a submission that changed them changes nothing for the next."""
    shutil.rmtree(worker_root, ignore_errors=True)
    shutil.copytree(kit_root / source_dir / chapter_id, worker_root / source_dir / chapter_id,
                    ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    shutil.copy(kit_root / KIT_GRADEBOOK, worker_root / "gradebook.db")


@functools.cache
def unsynced_gradebook(path: str) -> None:
    """Let SQLite connections to the worker's own gradebook `path` (a str) skip disk syncs.

    nbgrader commits after every graded cell: on a disk, ~70 syncs per chapter 3 submission, up to
    half a second when the disk is busy. This gradebook is scratch, laid out afresh per student and
    merged by the instructor's side after grading; if the machine crashes, the submission is graded again.
    """
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    def connected(connection, _record):
        if isinstance(connection, sqlite3.Connection) and \
                any(row[2] == path for row in connection.execute("PRAGMA database_list")):
            connection.execute("PRAGMA synchronous = OFF")
            connection.execute("PRAGMA journal_mode = MEMORY")

    event.listen(Engine, "connect", connected)


def grade_one(api, submission: Submission, settings: GradingSettings, kit_root: Path,
              worker_root: Path) -> Handoff:
    """Autograde one student's submission (the folder submission.folder) in `worker_root`, laid out afresh
    from the kit at `kit_root`; say how it went."""
    from nbgrader.api import Gradebook

    student, chapter_id = submission.student, submission.chapter
    unsynced_gradebook(str((worker_root / "gradebook.db").resolve()))
    prepare(kit_root, worker_root, chapter_id, settings.source)
    submitted = worker_root / settings.submitted / student
    shutil.copytree(submission.folder, submitted / chapter_id)
    with Gradebook(api.coursedir.db_url, course_id=api.coursedir.course_id) as gb:
        if submission.extension is not None:
            gb.update_or_create_student(student)
            gb.update_or_create_submission(chapter_id, student, extension=submission.extension)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = api.autograde(chapter_id, student, force=True, create=True)
    log = result.get("log", "") + result.get("error", "")
    output = worker_root / settings.autograded / student / chapter_id
    problem = diagnose(log, output, submission.notebook, submission.cell_timeout)
    repairs = read_student_repairs(worker_root / settings.ledger, chapter_id, student)
    # Hand the gradebook and notebook over in a folder of their own, outside the folder that is laid
    # out afresh for the next student.
    handoff = worker_root.parent / f"{worker_root.name}-done-{os.urandom(4).hex()}"
    handoff.mkdir()
    shutil.move(worker_root / "gradebook.db", handoff / HANDOFF_GRADEBOOK)
    if output.is_dir():
        shutil.move(output, handoff / HANDOFF_AUTOGRADED)
    return Handoff(student, success=bool(result.get("success")), problem=problem, repairs=tuple(repairs),
                   folder=str(handoff))


def diagnose(log: str, output: Path, notebook_name: str, cell_timeout: float) -> Problem | None:
    """What went wrong with a submission, in words an instructor can act on (None if nothing)."""
    if any(name in log for name in ("UnreadableSubmission", "NotJSONError", "NBFormatError", "ValidationError")):
        return Problem("corrupt", f"{notebook_name}.ipynb is not a readable notebook (not valid notebook JSON); "
                                  "no cell could run, so every exercise scores 0")
    repaired = re.findall(r"The kernel died in (.+?) \((.+?)\); re-running", log)   # SandboxedExecute's log
    if repaired:
        where = "; ".join(f"{cell} ({cause})" for cell, cause in repaired)
        return Problem("crash", f"the kernel died in {where}; that cell was skipped and the rest graded in a fresh "
                                "kernel, so only what depends on it scores 0")
    if "DeadKernelError" in log or "Kernel died" in log:
        return Problem("crash", "the notebook's Python process died while running (the code exited Python, "
                                "e.g. os._exit or sys.exit in a cell, or ran out of memory); no exercise was scored")
    if "UnresponsiveKernelError" in log:
        return Problem("timeout", "the kernel stopped responding and could not be interrupted; no exercise was scored")
    if "No submitted file" in log or "No notebooks found" in log:
        return Problem("missing", f"no {notebook_name}.ipynb in the submission; every exercise scores 0")
    interrupted = timed_out_cells(output / f"{notebook_name}.ipynb") if output.is_dir() else []
    if interrupted or "Timeout waiting for execute reply" in log:
        where = ", ".join(interrupted) or "a cell"
        return Problem("timeout", f"{where} ran longer than {cell_timeout} s and was interrupted; "
                                  "what depends on it scores 0, the rest was graded")
    if "There was an error processing" in log or "Traceback" in log:
        last = [line for line in log.splitlines() if line.strip()][-1:]
        return Problem("error", "nbgrader could not grade this submission: " + (last[0].strip() if last else "unknown error"))
    return None


def timed_out_cells(path: Path) -> list[str]:
    """Cells of an autograded notebook that nbgrader interrupted for running too long."""
    notebook = nbformat.read(path, as_version=4)
    return [cell_marks.marks(cell).get("grade_id", cell.get("id", "?")) for cell in notebook.cells
            if any(o.get("output_type") == "error" and o.get("ename") in ("KeyboardInterrupt", "CellTimeoutError")
                   for o in cell.get("outputs", []))]


PR_SET_CHILD_SUBREAPER = 36      # <linux/prctl.h>


def become_subreaper() -> None:
    """Orphans of this worker's kernels (a child started with start_new_session, say) are re-parented
    to the worker instead of to init, so end_leftovers finds them. Linux only; elsewhere a no-op."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def die_with_parent() -> None:
    """End, with everything below, as soon as the process that started this one is gone, even killed:
    a Dask worker that dies takes its grading along, so no grading outlives its worker. (Watched, not
    PR_SET_PDEATHSIG, which fires when the starting *thread* ends: a Dask worker's threads come and go.)"""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        end_leftovers()
        os._exit(1)
    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def kill_descendants(pid: int | None = None) -> list[psutil.Process]:
    """Kill every process below `pid` (default: this one) and wait for them; return them."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    for child in children:
        try:
            child.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(children, timeout=10)
    return children


def end_leftovers() -> None:
    """Kill every process this worker still has below it: what the last student's kernel started."""
    kill_descendants()


def error_line(error: BaseException) -> str:
    """An exception in one line an instructor can read in a problem report (at most 300 characters)."""
    said = " ".join(str(error).split())[:300]
    return f"{type(error).__name__}: {said}"


def run(conn: Connection, kit_root: str, worker_root: str, settings: GradingSettings) -> None:
    """The process's loop: grade each Submission the parent sends, in a fresh folder, until it sends None."""
    die_with_parent()
    os.setsid()                                   # the parent can stop this process and its kernels together
    become_subreaper()
    os.environ.update(nbgrader_env())
    kit_root, worker_root = Path(kit_root), Path(worker_root)
    try:
        prepare(kit_root, worker_root, settings.chapter, settings.source)
        from nbgrader.apps import NbGraderAPI
        api = NbGraderAPI(config=course_settings(kit_root, worker_root, settings.unsafe))
    except Exception as error:                    # the parent reports it; nothing can be graded here
        conn.send(Hello(fatal=f"{type(error).__name__}: {error}"))
        return
    conn.send(Hello())
    while True:
        submission = conn.recv()
        if submission is None:
            return
        try:
            result = grade_one(api, submission, settings, kit_root, worker_root)
        except Exception as error:
            result = Handoff.unscored(submission.student, "error", f"grading failed: {error_line(error)}")
        end_leftovers()
        conn.send(result)


def main(argv: list[str]) -> None:
    """`python -m autograder.grading.worker FD KIT_ROOT WORKER_ROOT SETTINGS_JSON`, as task.py starts it:
    FD is its end of a socket pair to the task's thread."""
    fd, kit_root, worker_root, settings = argv
    run(Connection(int(fd)), kit_root, worker_root, GradingSettings.from_json(settings))


if __name__ == "__main__":
    main(sys.argv[1:])
