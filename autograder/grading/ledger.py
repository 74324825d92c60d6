"""The grading ledger: which submission (by content) was graded, and what went wrong with it.

A run records each student as soon as their grades are in the gradebook, so an interrupted run
resumes where it stopped and a repeated run does no work twice. A student is graded again only when
their submitted files change (or with --force). Problems are kept for the instructor in
`<LEDGER_DIR>/<chapter>_problems.csv`.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.grading.intake import Intake, read_records, read_regular
from autograder.grading.protocol import Problem

if TYPE_CHECKING:
    from autograder.course import Course
    from course_config import Chapter

PROBLEM_FIELDS = ["student", "kind", "reason"]
SUBMISSION_KIND = "submission files"      # grading/submission_modes.py: files others could have changed
LEFT_OUT = "left out"       # the kind of a problems row that says what of a submission was never read


def fingerprint(folder: str | Path, found: Intake) -> str:
    """A hash of what grading reads of a submission folder (intake.survey's admitted files, names and
    contents) and of what it left out and why."""
    digest = hashlib.sha256()
    folder = Path(folder)
    for relative in found.admitted:
        try:
            data = read_regular(folder / relative)
        except OSError as error:
            data = f"unreadable: {error.strerror}".encode()
        digest.update(relative.encode() + b"\0" + data + b"\0")
    digest.update(found.describe().encode())
    return digest.hexdigest()


class Ledger:
    """`<LEDGER_DIR>/<chapter>.json`: {student: {"fingerprint", and "kind" and "reason" if a problem}}.
    What intake left out of each submission is in `<LEDGER_DIR>/refused/<chapter>/` (intake.write_record)."""

    def __init__(self, course: Course, chapter: Chapter):
        self._open(course.root / course.config.LEDGER_DIR, chapter.id)

    @classmethod
    def at(cls, folder: str | Path, chapter_id: str) -> Ledger:
        """The chapter's ledger in `folder` (<LEDGER_DIR>), where no Course is at hand (inside nbgrader)."""
        ledger = cls.__new__(cls)
        ledger._open(Path(folder), chapter_id)
        return ledger

    def _open(self, folder: Path, chapter_id: str) -> None:
        self.folder = folder
        self.chapter_id = chapter_id
        self.path = self.folder / f"{chapter_id}.json"
        self.problems_path = self.folder / f"{chapter_id}_problems.csv"
        self.entries = json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else {}

    def is_current(self, student: str, print_: str) -> bool:
        return self.entries.get(student, {}).get("fingerprint") == print_

    def record(self, student: str, print_: str, problem: Problem | None = None) -> None:
        """Note a student as graded (with the problem nbgrader met, if any), and save at once."""
        entry = {"fingerprint": print_}
        if problem:
            entry["kind"], entry["reason"] = problem
        self.entries[student] = entry
        self.save()

    def note_submission(self, student: str, reason: str | None) -> None:
        """Say (or, with None, unsay) that a student's submitted files may not be theirs as submitted
        (grading/submission_modes.py): kept beside the grading's own problem, checked again each run."""
        entry = self.entries.setdefault(student, {})
        if reason:
            entry["submission"] = reason
        elif entry.pop("submission", None) is None:
            return
        self.save()

    def save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".json.partial")
        partial.write_text(json.dumps(self.entries, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(partial, self.path)          # a run killed here leaves the previous ledger intact

    def problems(self, students: set[str] | None = None) -> dict[str, Problem]:
        """The graded students whose submission had a problem, and the problem (a doubt about the submitted
        files, when there is one, is added to the reason)."""
        found = {}
        for student, entry in sorted(self.entries.items()):
            if students is not None and student not in students:
                continue
            reasons = [entry[key] for key in ("reason", "submission") if key in entry]
            if reasons:
                found[student] = Problem(entry.get("kind", SUBMISSION_KIND), "; ".join(reasons))
        return found

    def left_out(self, students: set[str] | None = None) -> dict[str, str]:
        """{student: what intake left out of their submission, and why}."""
        return {s: why for s, why in read_records(self.folder, self.chapter_id).items()
                if students is None or s in students}

    def write_problems(self, students: set[str] | None = None) -> Path:
        """The problems, and what was left out of each submission, as a CSV an instructor can open; returns
        its path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        rows = [(s, kind, reason) for s, (kind, reason) in self.problems(students).items()]
        rows += [(s, LEFT_OUT, why) for s, why in self.left_out(students).items()]
        with open(self.problems_path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(PROBLEM_FIELDS)
            writer.writerows(sorted(rows))
        return self.problems_path
