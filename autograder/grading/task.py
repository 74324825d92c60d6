"""The Dask task that grades one submission, on whichever worker of the cluster runs it.

It receives everything as bytes (the chapter's GradingKit, shared by all tasks of a run, and the
student's submitted folder) and returns a GradingResult whose files are bytes (the private gradebook,
the autograded folder), so a worker needs no filesystem shared with the instructor's machine; it needs
only this package. The records it exchanges are in protocol.py.

Each thread of a worker keeps one grading process (worker.py), which grades one student after
another; a submission that overruns its time or kills the process gets a problem report, the process
is stopped with its kernels, and the thread's next task starts a new one.
"""
import atexit
import dataclasses
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from autograder import __version__
from autograder.grading import file_bundle
from autograder.grading.protocol import GradingKit, GradingResult, GradingSettings, Handoff, Hello, Submission
from autograder.grading.worker import kill_descendants


class GradingSetupError(RuntimeError):
    """The course or the worker, not a submission, is at fault: nothing can be graded there."""


def grade_submission(kit: GradingKit, submission: Submission, files: bytes, timeout: float) -> GradingResult:
    """Grade `submission`, whose `files` are file_bundle bytes of the student's submitted folder, with the
    chapter's `kit`."""
    if kit.version != __version__:
        raise GradingSetupError(f"this worker runs autograder {__version__}, the course {kit.version}: "
                                "install the course's package on every worker")
    root = _scratch()
    kit_root = _unpacked(kit, root)
    inbox = file_bundle.unpack(files, Path(tempfile.mkdtemp(prefix=f"{submission.student}-", dir=root)))
    try:
        handoff = _grader(kit_root, kit.settings).grade(dataclasses.replace(submission, folder=str(inbox)), timeout)
    finally:
        shutil.rmtree(inbox, ignore_errors=True)
    return _as_bytes(handoff)


def _scratch() -> Path:
    """The worker's own scratch folder (Dask's local directory), or a temporary one outside Dask."""
    try:
        from distributed import get_worker
        root = Path(get_worker().local_directory) / "babygrad"
    except ValueError:                                # not inside a Dask worker
        root = Path(tempfile.gettempdir()) / f"babygrad-{os.getpid()}"
    root.mkdir(parents=True, exist_ok=True)
    return root


_lock = threading.Lock()


def _unpacked(kit: GradingKit, root: Path) -> Path:
    """The kit's files in the worker's scratch, unpacked once per worker and kit."""
    folder = root / f"kit-{hashlib.sha256(kit.files).hexdigest()[:16]}"
    with _lock:
        if not folder.is_dir():
            partial = Path(tempfile.mkdtemp(prefix="kit-", dir=root))
            file_bundle.unpack(kit.files, partial)
            partial.rename(folder)
    return folder


def _as_bytes(handoff: Handoff) -> GradingResult:
    """The grading process's answer, its handoff folder read into bytes and removed."""
    gradebook, autograded = handoff.gradebook, handoff.autograded
    result = GradingResult(handoff.student, success=handoff.success, problem=handoff.problem,
                           repairs=handoff.repairs, gradebook=gradebook.read_bytes() if gradebook else None,
                           autograded=file_bundle.pack(autograded) if autograded else None)
    if handoff.folder:
        shutil.rmtree(handoff.folder, ignore_errors=True)
    return result


_graders: dict[tuple[int, str], "GradingProcess"] = {}          # (thread id, kit folder) -> GradingProcess


def _grader(kit_root: Path, settings: GradingSettings) -> "GradingProcess":
    key = (threading.get_ident(), str(kit_root))
    with _lock:
        for other in [k for k in _graders if k[0] == key[0] and k != key]:     # this thread, another kit
            _graders.pop(other).stop(gently=True)
        if key not in _graders:
            _graders[key] = GradingProcess(kit_root, settings)
        return _graders[key]


def stop_orphaned_graders() -> None:
    """Stop the grading processes of threads that have ended. A LocalCluster's threads end when it
    closes, and nothing else would stop their processes before this interpreter exits."""
    alive = {thread.ident for thread in threading.enumerate()}
    with _lock:
        orphans = [_graders.pop(key) for key in list(_graders) if key[0] not in alive]
    for grader in orphans:
        grader.stop(gently=True)


@atexit.register
def stop_all_graders(gently: bool = True) -> None:
    """Stop every grading process of this interpreter. Not gently when grading was interrupted: a process
    grading a submission reads no request until it is done, and a LocalCluster closes only once its threads,
    waiting on those processes, have returned."""
    with _lock:
        graders = list(_graders.values())
        _graders.clear()
    for grader in graders:
        grader.stop(gently=gently)


class GradingProcess:
    """One grading process (worker.py), started on first use and again after it had to be stopped.

    A plain subprocess, not a multiprocessing child: a worker under a Dask nanny is a daemonic process,
    which multiprocessing forbids to have children."""

    def __init__(self, kit_root: Path, settings: GradingSettings):
        self.kit_root, self.settings = Path(kit_root), settings
        self.process = self.conn = None

    def grade(self, submission: Submission, timeout: float) -> Handoff:
        """The grading process's answer for one submission; a problem report when it overran or crashed."""
        if self.process is None:
            self._start()
        try:
            self.conn.send(submission)
            if self.conn.poll(timeout):
                return self.conn.recv()
            problem = ("timeout", f"grading took longer than {timeout:g} s (SUBMISSION_TIMEOUT_SECONDS) and "
                                  "was stopped; no exercise was scored")
        except (EOFError, OSError):
            problem = ("crash", "the grading process died on this submission; no exercise was scored")
        self.stop()
        return Handoff.unscored(submission.student, *problem)

    def _start(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="grading-", dir=self.kit_root.parent))
        ours, theirs = socket.socketpair()
        with open(f"{self.folder}.log", "ab") as log:      # its output, away from the worker's terminal
            self.process = subprocess.Popen(
                [sys.executable, "-m", "autograder.grading.worker", str(theirs.fileno()), str(self.kit_root),
                 str(self.folder / "course"), self.settings.to_json()],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        theirs.close()
        self.conn = Connection(ours.detach())
        try:
            hello = self.conn.recv() if self.conn.poll(600) else Hello(fatal="no answer within 600 s")
        except (EOFError, OSError):
            hello = Hello(fatal=f"the grading process exited while starting (see {self.folder}.log)")
        if hello.fatal:
            self.stop()
            raise GradingSetupError(f"a grading process could not start: {hello.fatal}")

    def stop(self, gently: bool = False) -> None:
        """End the process with everything below it (its kernels, what they started)."""
        process, self.process = self.process, None
        if process is None:
            return
        if gently and process.poll() is None:
            try:
                self.conn.send(None)
                process.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if process.poll() is None:
            kill_descendants(process.pid)
            process.kill()
        process.wait()
        self.conn.close()
        shutil.rmtree(self.folder, ignore_errors=True)
