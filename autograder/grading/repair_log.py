"""What notebook repair did, for the instructor: typed records, one small CSV per student, merged on read.

Each grading of a student rewrites `<ledger>/repairs/<chapter>/<student>.csv` in one atomic step, so two
grading processes never write the same file; the class-wide `<ledger>/<chapter>_repairs.csv` is rebuilt
from those files under a lock, so the last process to merge always sees every student's file.
"""
import csv
import enum
import fcntl
import os
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path


class RepairKind(str, enum.Enum):
    """What was wrong with a submitted notebook, and so what the repair did."""

    UNREADABLE_NOTEBOOK = "notebook salvaged"           # JSON with a cells list, but not valid nbformat
    MISSING_CELL = "missing cell restored"               # a test, provided or markdown cell was deleted
    MISSING_SOLUTION = "missing solution cell given the release stub"
    DUPLICATE_DROPPED = "duplicate cell dropped"
    MOVED = "cell put back in place"                     # the student reordered cells
    MATCHED_BY_ID = "cell recognised by its cell id"      # nbgrader metadata lost, nbformat id kept
    MATCHED_BY_CONTENT = "cell recognised by its content"
    MATCHED_BY_POSITION = "cell recognised by its position"
    METADATA_RESTORED = "nbgrader metadata restored"
    CELL_TYPE_RESTORED = "cell type restored"             # a solution cell turned into markdown, and back
    FOREIGN_METADATA_STRIPPED = "added cell stripped of nbgrader metadata"
    CELL_TOO_LARGE = "oversized cell not run"
    KERNELSPEC_RESTORED = "kernelspec restored"
    DEEP_METADATA_DROPPED = "deeply nested metadata dropped"   # deeper than nbformat's reader can follow


@dataclass(frozen=True)
class Repair:
    """One repair of one student's notebook: what, on which cell (the source's grade_id), and the evidence."""

    student: str
    chapter: str
    notebook: str
    kind: RepairKind
    cell: str
    detail: str

    def as_row(self):
        """The record at the boundary (resources, CSV, a worker's answer): plain strings."""
        return dict(asdict(self), kind=self.kind.value)

    @classmethod
    def from_row(cls, row):
        """Back from as_row; a row with unknown fields or kind raises."""
        return cls(**{f: str(row[f]) for f in FIELDS if f != "kind"}, kind=RepairKind(row["kind"]))

    def describe(self):
        return f"{self.student}: {self.kind.value} (cell {self.cell or '-'}): {self.detail}"


FIELDS = [f.name for f in fields(Repair)]


def student_file(ledger_root, chapter_id, student):
    return Path(ledger_root) / "repairs" / chapter_id / f"{student}.csv"


def record_student_repairs(ledger_root, chapter_id, student, repairs):
    """Replace the student's repair file with this grading's repairs (none: the file is removed),
    then rebuild the chapter's merged CSV. Returns the merged CSV's path."""
    path = student_file(ledger_root, chapter_id, student)
    path.parent.mkdir(parents=True, exist_ok=True)
    if repairs:
        _write_atomically(path, [r.as_row() for r in repairs])
    else:
        path.unlink(missing_ok=True)
    return write_chapter_csv(ledger_root, chapter_id)


def read_student_repairs(ledger_root, chapter_id, student):
    """The repairs of the student's latest grading ([] if none)."""
    return _read(student_file(ledger_root, chapter_id, student))


def read_repairs(ledger_root, chapter_id):
    """Every student's latest repairs for the chapter, students in name order."""
    folder = Path(ledger_root) / "repairs" / chapter_id
    return [r for path in (sorted(folder.glob("*.csv")) if folder.is_dir() else []) for r in _read(path)]


def _read(path):
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        return [Repair.from_row(row) for row in csv.DictReader(handle)]


def write_chapter_csv(ledger_root, chapter_id):
    """`<ledger>/<chapter>_repairs.csv`: the merge of the students' files, rebuilt under a lock."""
    ledger_root = Path(ledger_root)
    ledger_root.mkdir(parents=True, exist_ok=True)
    target = ledger_root / f"{chapter_id}_repairs.csv"
    with open(ledger_root / f".{chapter_id}_repairs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _write_atomically(target, [r.as_row() for r in read_repairs(ledger_root, chapter_id)])
    return target


def _write_atomically(path, rows):
    handle = tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", delete=False,
                                         newline="", encoding="utf-8")
    with handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(handle.name, path)
