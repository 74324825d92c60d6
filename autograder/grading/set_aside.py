"""Before plain `nbgrader autograde` copies a submission, what intake refuses is moved out of submitted/.

nbgrader's Autograde copies every file of `submitted/<student>/<chapter>/` into autograded/ with
`shutil.copy`, which follows links and waits forever on a FIFO, after matching each file's name against
the ignore globs by listing its whole folder once per glob (a folder of 10,000 files took 17 minutes).
Its `pre_convert_hook` runs just before that copy, for each submission: `SetAside` is that hook
(course_config.configure_nbgrader). It surveys the folder (intake.survey) and moves each refused entry,
without following or opening it, to `<LEDGER_DIR>/refused/<chapter>/<student>/`, where the instructor
finds it beside `<student>.csv`, which says why (and `<LEDGER_DIR>/<chapter>_problems.csv` says it again). nbgrader then copies only regular files of allowed
types, within the limits; a notebook that was a link or a FIFO is missing, and scores 0.

A failure of the survey itself sets the whole folder aside: nothing unsurveyed is copied.
"""
from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath

from autograder.grading import intake
from autograder.grading.intake import Intake, IntakeLimits, Refused
from autograder.grading.ledger import Ledger


@dataclass(frozen=True)
class SetAside:
    """nbgrader's pre_convert_hook (called as hook(assignment=..., student=..., notebooks=[...]), the
    notebooks of one submission), with the course's limits and folder names."""

    limits: IntakeLimits
    ledger_directory: str = "grading_ledger"
    submitted_directory: str = "submitted"

    def __call__(self, assignment=None, student=None, notebooks=(), **_):
        if not notebooks:
            return
        folder = Path(notebooks[0]).absolute().parent
        submitted = folder.parents[1]
        root = folder.parents[1 + len(PurePath(self.submitted_directory).parts)]
        ledger = root / self.ledger_directory
        student_id, chapter_id = folder.parent.name, folder.name
        try:
            found = intake.survey(folder, [Path(n).name for n in notebooks], self.limits, within=submitted)
        except Exception as error:       # nothing unsurveyed is copied
            found = Intake(admitted=(), refused=(Refused(".", f"could not be surveyed ({error}): set aside"),))
        try:
            set_aside(folder, found, ledger, chapter_id, student_id)
        except OSError as error:        # nbgrader would only log it as information, and copy on
            _log().error("Could not set aside what was refused in %s (%s): grade it after moving it by hand",
                         folder, error)
            raise
        Ledger.at(ledger, chapter_id).write_problems()
        for item in found.refused:
            _log().warning("Left out of %s's %s: %s %s", student_id, chapter_id, item.path, item.reason)
        if found.over_limit:
            _log().warning("%s's %s: %s", student_id, chapter_id, found.over_limit)


def set_aside(folder: Path, found: Intake, ledger: Path, chapter_id: str, student_id: str) -> None:
    """Move what `found` does not admit out of `folder` into the student's quarantine, and write the
    record; with nothing refused, a record older than the folder (a new hand-in) is removed."""
    quarantine = intake.record_path(ledger, chapter_id, student_id).with_suffix("")
    if not found.refused and not found.over_limit:
        intake.update_record(ledger, chapter_id, student_id, found, folder)
        return
    shutil.rmtree(quarantine, ignore_errors=True)
    quarantine.mkdir(parents=True)
    if any(item.path == "." for item in found.refused):
        _move(folder, quarantine / folder.name)
    elif found.over_limit:          # the whole folder aside at once, however many files, its notebook back
        mode = stat.S_IMODE(os.lstat(folder).st_mode)
        quarantine.rmdir()
        _move(folder, quarantine)
        folder.mkdir(mode=mode)
        for name in found.admitted:
            os.rename(quarantine / name, folder / name)
    else:
        for relative in _to_move(folder, found):
            _move(folder / relative, quarantine / relative)
    intake.write_record(ledger, chapter_id, student_id, found)


def _move(entry: Path, target: Path) -> None:
    """Move an entry (never following or opening it); where it cannot be moved (another filesystem), remove
    it: nbgrader's copy must not find it."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(entry, target)
    except OSError as error:
        _log().warning("%s could not be set aside (%s): removed", entry, error.strerror)
        if os.path.isdir(entry) and not os.path.islink(entry):
            shutil.rmtree(entry)
        else:
            os.unlink(entry)


def _to_move(folder: Path, found: Intake) -> list[str]:
    """The refused entries to move, a refused folder with what is inside it."""
    moved = []
    for item in found.refused:       # a refused folder takes what is inside along
        if not any(PurePath(item.path).is_relative_to(m) for m in moved) and _exists(folder / item.path):
            moved.append(item.path)
    return moved


def _exists(path: Path) -> bool:
    try:
        os.lstat(path)
    except OSError:
        return False
    return True


def _log():
    from traitlets.log import get_logger
    return get_logger()

