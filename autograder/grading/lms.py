"""Collect a chapter's submissions from an LMS's zip (Canvas's "Download Submissions") into
`submitted/<student>/<chapter>/`, safely.

nbgrader's `zip_collect` is deliberately out of the path: it extracts every archive it finds, nested
ones included, keeps the zip's permission bits, has no size caps, and lets one odd file stop the
whole class. Here only the top-level zip is read, member by member, with `zipfile`:

* a member is refused when its name is absolute or climbs out (`..`), when it is a symlink, a nested
  archive, or larger than LMS_MAX_MEMBER_BYTES once decompressed (counted while reading: the header's
  size is the uploader's word); reading stops for good at LMS_MAX_TOTAL_BYTES;
* students are identified by their LMS user id through the roster (course_config LMS_ROSTER); the
  name in the file name is for display only, and a user id missing from the roster is reported;
* the newest of several uploads is kept (highest re-upload number, then latest time), and its time
  goes to nbgrader's `timestamp.txt`, so late penalties apply;
* files are written 0644 and folders 0755, whatever the zip says;
* every member gets one row in `grading_ledger/<chapter>_collect.csv`: one bad upload is a row with a
  problem, never a stopped class.

A bonus assignment (course_config BONUS) runs on the student's own library, so its submission is the
notebook and the modules of `mybabygrad/`, uploaded as files of their own (`ch02_tensor.py`, ...,
Canvas's naming, `.py`): each module's newest upload goes to `submitted/<student>/<bonus>/mybabygrad/`,
next to the notebook, for a student whose notebook was collected. Only chapter module names
(`ch02_tensor`) and `__init__` are taken, so no upload names a file of its own choosing.
"""
import csv
import re
import shutil
import stat
import zipfile
import zlib
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from autograder.student.export import CHAPTER_MODULE, PACKAGE

CHUNK = 1 << 16
FILE_MODE, FOLDER_MODE = 0o644, 0o755
# A student id becomes a folder name under submitted/: letters, digits and . _ -, not starting with a dot.
SAFE_STUDENT_ID = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")
ARCHIVE_SUFFIXES = (".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar")
ARCHIVE_MAGIC = (b"PK\x03\x04", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf", b"Rar!")


class CollectError(RuntimeError):
    """The collect cannot start at all (no roster, unreadable zip): nothing was written."""


@dataclass(frozen=True)
class RosterEntry:
    lms_user_id: str
    student_id: str
    name: str


@dataclass(frozen=True)
class Upload:
    """One member of the zip whose name Canvas's naming (LMS_FILE_REGEXP) could read."""

    member: zipfile.ZipInfo
    slug: str                 # the display name in the file name; never used to identify
    lms_user_id: str
    submission_id: int
    file_id: str
    late: bool
    reupload: int             # Canvas numbers re-uploads autodiff-1.ipynb, autodiff-2.ipynb, ...
    timestamp: datetime       # the member's date, in UTC (None if the header's date is impossible)

    @property
    def order(self):
        """Newer uploads sort later."""
        return (self.reupload, self.timestamp, self.submission_id)


@dataclass
class CollectRow:
    """One line of the collect report: what became of one member of the zip."""

    student: str
    lms_user_id: str
    file: str
    late: str
    timestamp: str
    problem: str


@dataclass
class CollectRun:
    students: list            # students with a collected submission, sorted
    rows: list                # a CollectRow per member of the zip
    report: Path

    @property
    def problems(self):
        return [row for row in self.rows if row.problem]


def read_roster(path):
    """{lms user id: RosterEntry} from a CSV with columns lms_user_id, student_id, name."""
    path = Path(path)
    if not path.exists():
        raise CollectError(f"no roster at {path}: collect identifies students by LMS user id through a CSV "
                           f"with columns lms_user_id,student_id,name (course_config LMS_ROSTER, or --roster)")
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = {"lms_user_id", "student_id", "name"} - set(reader.fieldnames or [])
        if missing:
            raise CollectError(f"roster {path} lacks the column(s) {sorted(missing)}")
        roster = {}
        for line, row in enumerate(reader, start=2):
            entry = RosterEntry(row["lms_user_id"].strip(), row["student_id"].strip(), row["name"].strip())
            if not SAFE_STUDENT_ID.match(entry.student_id):
                raise CollectError(f"roster {path}, line {line}: student id {entry.student_id!r} is not a safe "
                                   f"folder name (letters, digits, . _ -)")
            if entry.lms_user_id in roster:
                raise CollectError(f"roster {path}, line {line}: LMS user id {entry.lms_user_id} appears twice")
            roster[entry.lms_user_id] = entry
    return roster


def unsafe_name(name):
    """Why a member's name is refused, or "" when it may be read."""
    if "\x00" in name:
        return "name contains a NUL byte"
    normal = name.replace("\\", "/")
    if normal.startswith("/") or re.match(r"^[A-Za-z]:", normal):
        return "absolute path"
    if ".." in normal.split("/"):
        return "path climbs out of the archive (..)"
    return ""


def is_symlink(member):
    return stat.S_ISLNK(member.external_attr >> 16)


def is_archive(member, head):
    return member.filename.lower().endswith(ARCHIVE_SUFFIXES) or head.startswith(ARCHIVE_MAGIC)


def parse_upload(member, pattern, zone):
    """The Upload a member's name describes, or None if it does not follow Canvas's naming."""
    match = pattern.match(member.filename)
    if not match:
        return None
    found = match.groupdict()
    try:
        stamp = datetime(*member.date_time, tzinfo=zone).astimezone(ZoneInfo("UTC"))
    except ValueError:          # a crafted header (month 0): reported by member_problem
        stamp = None
    return Upload(member, found["student_id"], found["lms_user_id"], int(found["submission_id"]),
                  found["file_id"], bool(found.get("late")), int(found.get("reupload") or 0), stamp)


class Budget:
    """Decompressed bytes read so far, against the course's caps."""

    def __init__(self, member_cap, total_cap):
        self.member_cap, self.total_cap, self.used = member_cap, total_cap, 0

    @property
    def exhausted(self):
        return self.used >= self.total_cap


def read_member(archive, member, budget):
    """The member's bytes, or (None, why) when it breaks a cap or cannot be read. Sizes are counted
    as the data is inflated, and a damaged member (bad CRC, forged sizes, encryption) is only reported."""
    data = bytearray()
    try:
        with archive.open(member) as stream:
            while chunk := stream.read(CHUNK):
                data += chunk
                if len(data) > budget.member_cap:
                    budget.used += len(data)
                    return None, f"larger than LMS_MAX_MEMBER_BYTES ({budget.member_cap} bytes) once decompressed"
                if budget.used + len(data) > budget.total_cap:
                    budget.used = budget.total_cap
                    return None, f"LMS_MAX_TOTAL_BYTES ({budget.total_cap} bytes) reached: extraction stopped here"
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError) as error:
        budget.used += len(data)
        return None, f"unreadable member: {type(error).__name__}: {error}"
    budget.used += len(data)
    return bytes(data), ""


def write_submission(folder, notebook_name, data, timestamp):
    """submitted/<student>/<chapter>/ with the notebook and nbgrader's timestamp.txt, fresh permissions."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, mode=FOLDER_MODE)
    for parent in (folder, folder.parent):
        parent.chmod(FOLDER_MODE)
    path = folder / notebook_name
    path.write_bytes(data)
    path.chmod(FILE_MODE)
    stamp = folder / "timestamp.txt"
    stamp.write_text(timestamp.strftime("%Y-%m-%d %H:%M:%S UTC"), encoding="utf-8")
    stamp.chmod(FILE_MODE)


def write_module(folder, name, data):
    """submitted/<student>/<bonus>/mybabygrad/<name>.py, next to the notebook write_submission wrote."""
    package = folder / PACKAGE
    package.mkdir(mode=FOLDER_MODE, exist_ok=True)
    package.chmod(FOLDER_MODE)
    path = package / f"{name}.py"
    path.write_bytes(data)
    path.chmod(FILE_MODE)


def package_pattern(notebook_pattern):
    """The LMS's naming for the bonus's module files: the notebooks' regexp, ending in .py."""
    if not notebook_pattern.endswith(r"\.ipynb$"):
        raise CollectError(r"LMS_FILE_REGEXP must end in \.ipynb$ for a bonus's mybabygrad/ modules to be read")
    return re.compile(notebook_pattern[:-len(r"\.ipynb$")] + r"\.py$")


def is_package_module(name):
    return name == "__init__" or bool(CHAPTER_MODULE.match(name))


def write_report(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([f.name for f in fields(CollectRow)])
        for row in rows:
            writer.writerow([getattr(row, f.name) for f in fields(CollectRow)])
    return path


def member_problem(member, upload, entry, chapter, module=False):
    """Why a member is not collected, before reading it ("" when it is a candidate); `module`: it is
    named like a bonus's .py file."""
    if unsafe_name(member.filename):
        return unsafe_name(member.filename)
    if is_symlink(member):
        return "symlink: not extracted"
    if member.filename.lower().endswith(ARCHIVE_SUFFIXES):
        return "nested archive: ignored, never extracted"
    if upload is None:
        return "not a notebook named by the LMS: left out"
    if module and not is_package_module(upload.file_id):
        return f"not a module of {PACKAGE}/ (ch02_tensor.py, ..., __init__.py): left out"
    if not module and upload.file_id != chapter.notebook:
        return f"not {chapter.notebook}.ipynb: left out"
    if entry is None:
        return f"LMS user id {upload.lms_user_id} ({upload.slug}) is not in the roster: not collected"
    if upload.timestamp is None:
        return f"the zip gives no valid date for it ({member.date_time}): not collected"
    return ""


def newest_readable(archive, candidates, budget):
    """(Upload, bytes) of the newest of one student's uploads of one file that can be read, or (None,
    None); every other candidate's row says why it was not kept."""
    candidates.sort(key=lambda pair: pair[0].order, reverse=True)
    kept = kept_data = None
    for upload, row in candidates:
        if kept:
            row.problem = f"older upload: {kept.member.filename} kept"
            continue
        if budget.exhausted:
            row.problem = f"LMS_MAX_TOTAL_BYTES ({budget.total_cap} bytes) reached: not extracted"
            continue
        data, row.problem = read_member(archive, upload.member, budget)
        if data is not None and is_archive(upload.member, data[:8]):
            data, row.problem = None, "nested archive: ignored, never extracted"
        if data is not None:
            kept, kept_data = upload, data
    return kept, kept_data


def collect(course, chapter, zip_path, roster_path=None):
    """Read the LMS's zip into submitted/; return a CollectRun (students, one row per member, report path)."""
    cfg = course.config
    roster = read_roster(Path(roster_path) if roster_path else course.root / cfg.LMS_ROSTER)
    pattern = re.compile(cfg.LMS_FILE_REGEXP)
    modules_pattern = package_pattern(cfg.LMS_FILE_REGEXP) if chapter in course.bonus else None
    zone = ZoneInfo(cfg.LMS_ZIP_TIMEZONE)
    budget = Budget(cfg.LMS_MAX_MEMBER_BYTES, cfg.LMS_MAX_TOTAL_BYTES)
    try:
        archive = zipfile.ZipFile(zip_path)
    except (OSError, zipfile.BadZipFile) as error:
        raise CollectError(f"cannot read {zip_path} as a zip: {error}") from error

    rows, uploads = [], {}          # uploads: {student id: [(Upload, row), ...]}
    modules = {}                    # a bonus's: {(student id, module name): [(Upload, row), ...]}
    with archive:
        for member in archive.infolist():
            if member.is_dir():
                continue
            upload = parse_upload(member, pattern, zone)
            module = upload is None and modules_pattern is not None
            if module:
                upload = parse_upload(member, modules_pattern, zone)
            row = CollectRow("", upload.lms_user_id if upload else "", member.filename,
                             ("yes" if upload.late else "no") if upload else "",
                             upload.timestamp.isoformat() if upload and upload.timestamp else "", "")
            rows.append(row)
            entry = roster.get(upload.lms_user_id) if upload else None
            row.student = entry.student_id if entry else ""
            row.problem = member_problem(member, upload, entry, chapter, module)
            if not row.problem and module:
                modules.setdefault((entry.student_id, upload.file_id), []).append((upload, row))
            elif not row.problem:
                uploads.setdefault(entry.student_id, []).append((upload, row))

        collected = []
        for student, candidates in sorted(uploads.items()):
            kept, data = newest_readable(archive, candidates, budget)
            if kept:
                write_submission(course.root / cfg.SUBMITTED_DIR / student / chapter.id,
                                 f"{chapter.notebook}.ipynb", data, kept.timestamp)
                collected.append(student)
        for (student, name), candidates in sorted(modules.items()):
            if student not in collected:
                for _, row in candidates:
                    row.problem = f"no {chapter.notebook}.ipynb collected for this student: module left out"
                continue
            kept, data = newest_readable(archive, candidates, budget)
            if kept:
                write_module(course.root / cfg.SUBMITTED_DIR / student / chapter.id, name, data)
    report = write_report(course.root / cfg.LEDGER_DIR / f"{chapter.id}_collect.csv", rows)
    return CollectRun(sorted(collected), rows, report)
