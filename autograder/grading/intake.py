"""What of a submission folder is ever read: regular files only, within limits, of allowed types.

Every way a submission reaches a kernel (plain `nbgrader autograde` on submitted/, `python -m autograder
grade` on Dask, the Gradescope runner) and every report on it (flags) asks `survey` first, and reads
nothing it did not admit. A survey looks at names and `lstat` only: it never follows a link and never
opens a file, so a link cannot lead it to the instructor's files and a FIFO cannot block it. It stops
counting past the limits, so a folder of a million files costs what the limits cost. A submission over
the limits on the number of files or their total size is graded from its notebook alone.

Files are then read by `open_regular`: without following a link, without waiting on a FIFO, and only
when the open descriptor is a regular file (what was surveyed may have changed since).
"""
from __future__ import annotations

import csv
import errno
import os
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Left out of every survey without a word: editors' and Python's clutter, never a student's work.
CLUTTER_FOLDERS = {".ipynb_checkpoints", "__pycache__"}
TIMESTAMP = "timestamp.txt"          # nbgrader's record of when it was handed in: kept with the notebook
KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
         stat.S_IFBLK: "a block device", stat.S_IFDIR: "a folder"}


@dataclass(frozen=True)
class IntakeLimits:
    """What one submission folder may hold (course_config SUBMISSION_*). The defaults are its values, for
    a submission read outside the course (the Gradescope runner before its course is loaded)."""

    files: int = 100
    total_bytes: int = 100 << 20
    file_bytes: int = 50 << 20
    notebook_bytes: int = 512 << 20
    depth: int = 3
    file_types: tuple[str, ...] = (".ipynb", ".py", ".txt", ".csv", ".json", ".npy", ".npz", ".gz", ".png",
                                   ".jpg", ".jpeg")

    @classmethod
    def from_config(cls, cfg) -> IntakeLimits:
        """The limits named SUBMISSION_* in course_config (a module, or its globals())."""
        values = cfg if isinstance(cfg, Mapping) else vars(cfg)
        return cls(files=values["SUBMISSION_MAX_FILES"], total_bytes=values["SUBMISSION_MAX_BYTES"],
                   file_bytes=values["SUBMISSION_MAX_FILE_BYTES"],
                   notebook_bytes=values["SUBMISSION_MAX_NOTEBOOK_BYTES"], depth=values["SUBMISSION_MAX_DEPTH"],
                   file_types=tuple(values["SUBMISSION_FILE_TYPES"]))

    def allows(self, name: str) -> bool:
        """Is a file of this name one of the allowed types? Matched without regard to case."""
        return name.lower().endswith(tuple(t.lower() for t in self.file_types))


@dataclass(frozen=True)
class Refused:
    """One entry of a submission folder that is never read, and why."""

    path: str          # relative to the submission folder, with /; "." is the folder itself
    reason: str


@dataclass(frozen=True)
class Intake:
    """A survey's verdict: the regular files grading may read (relative paths with /, sorted), what it
    may not and why, and the limit the submission is over when it is graded from its notebook alone."""

    admitted: tuple[str, ...]
    refused: tuple[Refused, ...] = ()
    over_limit: str | None = None

    def notebook_refusal(self, notebook: str) -> str | None:
        """Why the submission's notebook named `notebook` is refused, or None: it is admitted, or absent
        (nothing was refused; grading says it is missing)."""
        if notebook in self.admitted:
            return None
        for item in self.refused:
            if item.path in (notebook, "."):
                return f"{notebook} {item.reason}" if item.path == notebook else item.reason
        return None

    def describe(self) -> str:
        """What was left out and why, in one line for the problems ledger ("" when nothing was)."""
        parts = [self.over_limit] if self.over_limit else []
        shown = [f"{item.path}: {item.reason}" for item in self.refused[:10]]
        if len(self.refused) > 10:
            shown.append(f"and {len(self.refused) - 10} more")
        parts += shown
        return "; ".join(parts)


def survey(folder, notebooks: Iterable[str], limits: IntakeLimits, within=None) -> Intake:
    """What of `folder` may be read. `notebooks` are the names of the notebooks to grade (autodiff.ipynb),
    at the top of the folder; `within`, when given, is a folder above it (submitted/) none of whose
    folders on the way down may be a link."""
    folder = Path(folder)
    notebooks = tuple(notebooks)
    why = _linked_path(folder, within)
    if why:
        return Intake(admitted=(), refused=(Refused(".", why),))
    found, refused, count, total, over = [], [], 0, 0, None
    pending = [(folder, PurePosixPath(), 0)]
    while pending and over is None:
        here, relative, depth = pending.pop()
        try:
            entries = os.scandir(here)
        except OSError as error:
            refused.append(Refused(str(relative), f"unreadable folder: {error.strerror}"))
            continue
        with entries:
            for entry in entries:
                path = str(relative / entry.name)
                if entry.name in CLUTTER_FOLDERS or entry.name.startswith(".") and _is_plain(entry):
                    continue
                count += not _is_dir(entry)
                if count > limits.files:
                    over = (f"more than {limits.files} files (SUBMISSION_MAX_FILES): graded from its notebook "
                            f"alone, every other file left out")
                    break
                if _is_dir(entry):
                    if depth + 1 > limits.depth:
                        refused.append(Refused(path, f"a folder nested deeper than {limits.depth} levels "
                                                     "(SUBMISSION_MAX_DEPTH): left out"))
                    else:
                        pending.append((Path(entry.path), relative / entry.name, depth + 1))
                    continue
                kind = _not_regular(entry)
                if kind:
                    refused.append(Refused(path, kind))
                    continue
                size = entry.stat(follow_symlinks=False).st_size
                notebook = depth == 0 and entry.name in notebooks
                if not limits.allows(entry.name):
                    refused.append(Refused(path, f"not a type of file grading reads ({_suffix(entry.name)}): left out"))
                elif _too_large(size, notebook, limits):
                    refused.append(Refused(path, _too_large(size, notebook, limits)))
                else:
                    total += 0 if notebook else size
                    found.append(path)
        if over is None and total > limits.total_bytes:
            over = (f"more than {limits.total_bytes:,} bytes in all (SUBMISSION_MAX_BYTES): graded from its "
                    "notebook alone, every other file left out")
    if over is None:
        return Intake(admitted=tuple(sorted(found)), refused=tuple(sorted(refused, key=lambda r: r.path)))
    return _notebook_alone(folder, notebooks, limits, refused, over)


def _notebook_alone(folder: Path, notebooks: tuple[str, ...], limits: IntakeLimits, refused, over) -> Intake:
    """The intake of a submission over the limits: its notebooks (and nbgrader's timestamp.txt), each
    looked at on its own, and nothing else."""
    admitted, refused = [], [r for r in refused if r.path in notebooks]
    for name in (*notebooks, TIMESTAMP):
        try:
            info = os.lstat(folder / name)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            if name in notebooks and not any(r.path == name for r in refused):
                refused.append(Refused(name, _kind(info.st_mode, folder / name)))
        elif _too_large(info.st_size, name in notebooks, limits):
            refused.append(Refused(name, _too_large(info.st_size, name in notebooks, limits)))
        else:
            admitted.append(name)
    return Intake(admitted=tuple(sorted(admitted)), refused=tuple(refused), over_limit=over)


def _too_large(size: int, notebook: bool, limits: IntakeLimits) -> str | None:
    """Why a file of `size` bytes is left out for its size (a notebook to grade has a limit of its own), or None."""
    limit, name = (limits.notebook_bytes, "SUBMISSION_MAX_NOTEBOOK_BYTES") if notebook else \
        (limits.file_bytes, "SUBMISSION_MAX_FILE_BYTES")
    return f"{size:,} bytes, over the limit of {limit:,} ({name}): left out" if size > limit else None


def _linked_path(folder: Path, within) -> str | None:
    """Why the folder cannot be read at all (it, or a folder between it and `within`, is a link or no
    folder), or None."""
    chain = [folder]
    if within is not None:
        within = Path(within)
        try:
            relative = folder.relative_to(within)
        except ValueError:
            return f"the submission folder is outside {within}"
        chain = [within / Path(*relative.parts[:i]) for i in range(1, len(relative.parts) + 1)]
    for path in chain:
        try:
            mode = os.lstat(path).st_mode
        except OSError as error:
            return f"the submission folder cannot be read ({path.name}: {error.strerror})"
        if stat.S_ISLNK(mode):
            return f"the submission folder {path.name} {_kind(mode, path)}: nothing in it was read"
        if not stat.S_ISDIR(mode):
            return f"the submission folder {path.name} is not a folder: nothing in it was read"
    return None


def _is_dir(entry: os.DirEntry) -> bool:
    return entry.is_dir(follow_symlinks=False)


def _is_plain(entry: os.DirEntry) -> bool:
    """A regular file or folder (hidden ones of these are clutter; a hidden link is still reported)."""
    return entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False)


def _not_regular(entry: os.DirEntry) -> str | None:
    if entry.is_file(follow_symlinks=False):
        return None
    return _kind(entry.stat(follow_symlinks=False).st_mode, Path(entry.path))


def _kind(mode: int, path: Path) -> str:
    """What a non-regular entry is, in words, and that it is never followed or opened."""
    if stat.S_ISLNK(mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"is a symbolic link (to {target[:200]}): never followed"
    return f"is {KINDS.get(stat.S_IFMT(mode), 'not a regular file')}: never opened"


def _suffix(name: str) -> str:
    return Path(name).suffix or "no extension"


class NotRegular(OSError):
    """A path that is not a regular file where one was expected (a link, a FIFO, a device...)."""


def open_regular(path) -> int:
    """An open descriptor of `path`, read-only, when it is a regular file; NotRegular otherwise. A link is
    not followed (O_NOFOLLOW) and a FIFO does not block the open (O_NONBLOCK)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotRegular(errno.ELOOP, _kind(os.lstat(path).st_mode, Path(path)), str(path)) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegular(errno.EINVAL, _kind(mode, Path(path)), str(path))
    return fd


def read_regular(path) -> bytes:
    """The bytes of `path`, a regular file (see open_regular)."""
    with os.fdopen(open_regular(path), "rb") as handle:
        return handle.read()


def copy_admitted(folder, intake: Intake, target) -> Path:
    """Copy the admitted files of `folder` into `target` (created), each read by open_regular; a file that
    is no longer regular is skipped. Returns `target`."""
    folder, target = Path(folder), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    for relative in intake.admitted:
        try:
            data = read_regular(folder / relative)
        except OSError:
            continue
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return target


def ignore_globs(file_types: Iterable[str]) -> list[str]:
    """nbgrader's ignore globs (CourseDirectory.ignore) for every name with an extension that is not one of
    `file_types`, in any case: the same allow-list for nbgrader's own copies (autograded/ to feedback/,
    the exchange). Globs cannot tell a file from a folder, so a name without a dot passes them (a folder,
    mybabygrad/), and survey, which can, is what refuses such a file.

    Built on the suffixes read backwards: at each point, a name whose next character (from the end) leads
    to no allowed suffix is ignored, provided it has a dot further on."""
    suffixes = {t.lower() for t in file_types}
    globs = []

    def walk(tail: str):
        if tail in suffixes:
            return
        following = sorted({s[-len(tail) - 1] for s in suffixes if s.endswith(tail) and len(s) > len(tail)})
        if following:
            others = "".join(c + c.upper() if c.isalpha() else c for c in following)
            globs.append(f"*.*[!{others}]{_any_case(tail)}")
        if "." not in following:
            globs.append(f"*.{_any_case(tail)}")
        for char in following:
            if char != ".":
                walk(char + tail)

    walk("")
    return globs


def _any_case(text: str) -> str:
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in text)


# -- the record kept of what was left out ---------------------------------------------------------

RECORD_FIELDS = ["path", "reason"]


def record_path(ledger_folder, chapter_id: str, student: str) -> Path:
    """<LEDGER_DIR>/refused/<chapter>/<student>.csv: what intake left out of one submission."""
    return Path(ledger_folder) / "refused" / chapter_id / f"{student}.csv"


def write_record(ledger_folder, chapter_id: str, student: str, intake: Intake) -> Path:
    path = record_path(ledger_folder, chapter_id, student)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(RECORD_FIELDS)
        if intake.over_limit:
            writer.writerow(["*", intake.over_limit])
        writer.writerows([item.path, item.reason] for item in intake.refused)
    return path


def update_record(ledger_folder, chapter_id: str, student: str, found: Intake, folder) -> None:
    """Keep the record of what was left out of `folder` current: written when something was; removed, with
    what was set aside beside it, when nothing was and the folder is newer than the record (a new hand-in;
    an older record tells of this hand-in, whose refused entries were set aside already)."""
    if found.refused or found.over_limit:
        write_record(ledger_folder, chapter_id, student, found)
        return
    record = record_path(ledger_folder, chapter_id, student)
    try:
        stale = os.lstat(folder).st_mtime_ns > record.stat().st_mtime_ns
    except OSError:
        return
    if stale:
        record.unlink()
        shutil.rmtree(record.with_suffix(""), ignore_errors=True)


def read_record(ledger_folder, chapter_id: str, student: str) -> list[Refused]:
    """What the record says was left out of one submission ("*" for the limit it was over)."""
    path = record_path(ledger_folder, chapter_id, student)
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        return [Refused(row["path"], row["reason"]) for row in csv.DictReader(handle)]


def read_records(ledger_folder, chapter_id: str) -> dict[str, str]:
    """{student: what was left out of their submission, in one line} for a chapter."""
    found = {}
    for path in sorted((Path(ledger_folder) / "refused" / chapter_id).glob("*.csv")):
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        if rows:
            found[path.stem] = "; ".join(r["reason"] if r["path"] == "*" else f"{r['path']}: {r['reason']}"
                                         for r in rows)
    return found
