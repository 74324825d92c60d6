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

from autograder.grading.protocol import Problem

if TYPE_CHECKING:
    from autograder.course import Course
    from course_config import Chapter

PROBLEM_FIELDS = ["student", "kind", "reason"]
SUBMISSION_KIND = "submission files"      # grading/submission_modes.py: files others could have changed


def fingerprint(folder: str | Path) -> str:
    """A hash of every file in a submission folder, names and contents (checkpoints ignored)."""
    digest = hashlib.sha256()
    folder = Path(folder)
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".ipynb_checkpoints" not in p.parts):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


class Ledger:
    """`<LEDGER_DIR>/<chapter>.json`: {student: {"fingerprint", and "kind" and "reason" if a problem}}."""

    def __init__(self, course: Course, chapter: Chapter):
        self.folder = course.root / course.config.LEDGER_DIR
        self.path = self.folder / f"{chapter.id}.json"
        self.problems_path = self.folder / f"{chapter.id}_problems.csv"
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

    def write_problems(self, students: set[str] | None = None) -> Path:
        """The problems as a CSV an instructor can open; returns its path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.problems_path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(PROBLEM_FIELDS)
            for student, (kind, reason) in self.problems(students).items():
                writer.writerow([student, kind, reason])
        return self.problems_path
