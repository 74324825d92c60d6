"""What travels between the grading client, a Dask task and its grading process, as typed records.

The client (parallel.py) sends each Dask task a `GradingKit` (shared by the run's tasks) and a
`Submission` with the student's files as bytes; Dask pickles them. The task (task.py) starts a grading
process (worker.py) with `GradingSettings` as JSON on its command line, then sends it `Submission`s
over a socket pair (pickled by multiprocessing's Connection); the process answers `Hello` once, then a
`Handoff` per submission. The task returns a `GradingResult`, whose files are bytes again, so no
machine of the cluster needs a filesystem shared with the instructor's.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import NamedTuple

from autograder.grading.repair_log import Repair

# A Handoff's folder holds these.
HANDOFF_GRADEBOOK = "gradebook.db"
HANDOFF_AUTOGRADED = "autograded"


class Problem(NamedTuple):
    """Why a submission scored less than its code deserves, for the instructor: a kind (corrupt, crash,
    timeout, missing, error, tampered, refused) and a reason in words they can act on."""

    kind: str
    reason: str


@dataclass(frozen=True)
class GradingSettings:
    """How a grading process lays out its scratch course: the chapter and the course's folder names
    (course_config's *_DIR), and whether kernels may run unsandboxed (--unsafe)."""

    chapter: str
    source: str
    submitted: str
    autograded: str
    ledger: str
    unsafe: bool = False

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> GradingSettings:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class GradingKit:
    """What every task of a run needs besides the submission (kit.chapter_kit): the package version it
    was made with, the grading process's settings, and the kit's files (file_bundle bytes)."""

    version: str
    settings: GradingSettings
    files: bytes


@dataclass(frozen=True)
class Submission:
    """One student's hand-in to grade. `folder` is where the grading process finds the files: unset
    on the client, which sends the files as bytes; the task sets it once it has unpacked them."""

    student: str
    chapter: str
    notebook: str                          # the notebook's name, without .ipynb
    cell_timeout: float                    # seconds, for the problem report of a cell that overran
    extension: timedelta | None = None     # the deadline extension the course granted, if any
    folder: str | None = None


@dataclass(frozen=True)
class Hello:
    """A grading process's first message: ready to grade, or why it cannot (`fatal`)."""

    fatal: str | None = None


@dataclass(frozen=True)
class Handoff:
    """A grading process's answer for one submission: how it went, and the folder, outside its scratch
    course, where it left the submission's gradebook and autograded folder (none if it graded nothing)."""

    student: str
    success: bool = False
    problem: Problem | None = None
    repairs: tuple[Repair, ...] = ()
    folder: str | None = None

    @classmethod
    def unscored(cls, student: str, kind: str, reason: str) -> Handoff:
        """A submission that could not be graded: nothing handed off, a problem report."""
        return cls(student, problem=Problem(kind, reason))

    @property
    def gradebook(self) -> Path | None:
        path = Path(self.folder, HANDOFF_GRADEBOOK) if self.folder else None
        return path if path and path.is_file() else None

    @property
    def autograded(self) -> Path | None:
        path = Path(self.folder, HANDOFF_AUTOGRADED) if self.folder else None
        return path if path and path.is_dir() else None


@dataclass(frozen=True)
class GradingResult:
    """A task's result for one submission: how it went, the private gradebook (SQLite file bytes) and
    the autograded folder (file_bundle bytes), each None when grading produced none. The gradebook sat
    next to a kernel that ran student code: the client reads it as untrusted (gradebook_merge)."""

    student: str
    success: bool = False
    problem: Problem | None = None
    repairs: tuple[Repair, ...] = ()
    gradebook: bytes | None = None
    autograded: bytes | None = None

    @classmethod
    def unscored(cls, student: str, kind: str, reason: str) -> GradingResult:
        """A submission that could not be graded: no gradebook, no notebook, a problem report."""
        return cls(student, problem=Problem(kind, reason))
