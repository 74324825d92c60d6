"""Submissions nobody else can change between a student's submit and the grade.

nbgrader's submit leaves each submission folder in the exchange 0777 (so the instructor can delete it), and
nbgrader's collect copies the mode into submitted/<student>/<chapter>/: where another student can reach
submitted/ (a readable home folder), they can replace her notebook before it is graded. Two guards:

* the course's collect (PrivateCollect, nbgrader's collect plugin through ExchangeFactory.collect) leaves
  every collected folder and file the instructor's alone (0700 and 0600);
* before grading, each submission is checked (`check_submission`): no file or folder writable by anyone
  but the instructor or owned by someone else, and the same bytes as the exchange's inbound copy when there
  is one. A finding flags the submission (the flags report, the problems ledger) and changes no grade: to
  refuse it would let whoever tampered zero someone else's work; the instructor collects it again instead.
  `python -m autograder grade` checks before it hands submissions out; plain `nbgrader autograde` (and
  formgrader's Autograde button) through Autograde's pre-convert hook (`before_autograde`).

Not handled yet: a groupshared course (nbgrader's CourseDirectory.groupshared, several instructors in one
Unix group) gets 2770/660 from the collect, and the check flags its group-writable files all the same.
"""
import hashlib
import stat
import sys
from dataclasses import dataclass
from pathlib import Path


from autograder.grading.exchange_collect import IntakeCollect
from autograder.grading.ledger import SUBMISSION_KIND

PRIVATE_FOLDER, PRIVATE_FILE = 0o700, 0o600
KIND = SUBMISSION_KIND              # the problems ledger's kind and the flags report's category


# nbgrader's groupshared course (several instructors in one Unix group): the group keeps what the owner has.
SHARED_FOLDER, SHARED_FILE = 0o2770, 0o660


def make_private(folder, groupshared=False):
    """Every folder and file under `folder` (and `folder`) the owner's alone (and the group's, for a
    groupshared course); symlinks are left as they are."""
    folder = Path(folder)
    folder_mode, file_mode = (SHARED_FOLDER, SHARED_FILE) if groupshared else (PRIVATE_FOLDER, PRIVATE_FILE)
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        path.chmod(folder_mode if path.is_dir() else file_mode)


class PrivateCollect(IntakeCollect):
    """nbgrader's collect as intake admits it (grading/exchange_collect.py), whose copies in submitted/ only the instructor (or, groupshared, the
    instructors' group) can read or change."""

    def do_copy(self, src, dest, log=None):
        super().do_copy(src, dest, log)
        shared = self.coursedir.groupshared
        make_private(dest, shared)
        student = Path(dest).parent                     # submitted/<student>/, made by nbgrader's os.makedirs
        if not student.is_symlink():
            student.chmod(SHARED_FOLDER if shared else PRIVATE_FOLDER)


@dataclass(frozen=True)
class Finding:
    """One reason to doubt that a submission is what its student submitted."""

    path: str          # relative to submitted/<student>/<chapter>/ ("." for the folder itself)
    reason: str

    def __str__(self):
        return f"{self.path}: {self.reason}"


def open_to_others(path, owner_uid):
    """Why a path could have been changed by someone other than `owner_uid`, or None."""
    info = path.lstat()
    reasons = []
    if info.st_uid != owner_uid:
        reasons.append(f"owned by uid {info.st_uid}, not the instructor's {owner_uid}")
    if info.st_mode & 0o022 and not stat.S_ISLNK(info.st_mode):
        who = " and ".join(w for w, bit in (("group", 0o020), ("others", 0o002)) if info.st_mode & bit)
        reasons.append(f"{who} can change it (mode {stat.S_IMODE(info.st_mode):04o})")
    return "; ".join(reasons) or None


def digests(folder, notebooks, limits):
    """{relative path: sha256} of what intake admits from `folder` (grading/intake.py): the files grading
    reads, never a link, a FIFO or more than the limits allow."""
    from autograder.grading import intake

    found = intake.survey(folder, notebooks, limits)
    return {name: hashlib.sha256(intake.read_regular(Path(folder) / name)).hexdigest() for name in found.admitted}


def exchange_copy(exchange, course_id, student, chapter_id, submitted):
    """The inbound folder this submission was collected from (same timestamp.txt), or None. Every student can
    write in inbound/, so its stamps are read as intake reads a submission: never through a link or a FIFO."""
    inbound = Path(exchange) / course_id / "inbound"
    wanted = stamp(submitted)
    if not inbound.is_dir() or wanted is None:
        return None
    try:
        candidates = sorted(inbound.glob(f"{student}+{chapter_id}+*"))
    except PermissionError:
        return None
    return next((candidate for candidate in candidates if stamp(candidate) == wanted), None)


def stamp(folder):
    """The bytes of the folder's timestamp.txt, or None where it is missing or not a regular file."""
    from autograder.grading import intake

    try:
        return intake.read_regular(Path(folder) / "timestamp.txt")
    except OSError:
        return None


def check_submission(submitted, owner_uid, inbound=None, notebooks=(), limits=None):
    """Findings for one submitted/<student>/<chapter>/ folder: paths others could change, and files that
    differ from the exchange's inbound copy `inbound` (None when there is none), both read as intake admits
    them with `limits` (course_config SUBMISSION_*), the chapter's `notebooks` graded from."""
    submitted = Path(submitted)
    findings = []
    for path in [submitted.parent, submitted, *sorted(submitted.rglob("*"))]:
        reason = open_to_others(path, owner_uid)
        if reason:
            where = ".." if path == submitted.parent else path.relative_to(submitted).as_posix()
            findings.append(Finding(where, reason))
    if inbound is not None:
        from autograder.grading.intake import IntakeLimits

        limits = limits or IntakeLimits()
        graded, sent = digests(submitted, notebooks, limits), digests(inbound, notebooks, limits)
        for name in sorted(set(graded) | set(sent)):
            if graded.get(name) != sent.get(name):
                what = ("not in the exchange's copy" if name not in sent else
                        "missing here, in the exchange's copy" if name not in graded else
                        "differs from the exchange's copy")
                findings.append(Finding(name, f"{what} ({inbound})"))
    return findings


def check_chapter(course, chapter, exchange=None):
    """{student: findings} for every submission of the chapter in submitted/ that has any."""
    from autograder.grading.permissions import configured_exchange

    exchange = Path(exchange) if exchange is not None else configured_exchange(course)
    owner_uid = course.root.stat().st_uid
    found = {}
    base = course.root / course.config.SUBMITTED_DIR
    for submitted in sorted(base.glob(f"*/{chapter.id}")) if base.is_dir() else []:
        student = submitted.parent.name
        inbound = exchange_copy(exchange, course.config.COURSE_ID, student, chapter.id, submitted)
        findings = check_submission(submitted, owner_uid, inbound, [f"{chapter.notebook}.ipynb"], limits(course))
        if findings:
            found[student] = findings
    return found


def limits(course):
    """The course's intake limits (course_config SUBMISSION_*)."""
    from autograder.grading.intake import IntakeLimits

    return IntakeLimits.from_config(course.config)


def describe(findings):
    """One sentence for the problems ledger."""
    return ("its files may not be what the student submitted: " + "; ".join(map(str, findings))
            + ". Collect it again (the course's collect leaves it the instructor's alone) and regrade.")


def before_autograde(course_root):
    """Autograde's pre_convert_hook (course_config): check the submission nbgrader is about to grade, say
    what is wrong on stderr and in the problems ledger. nbgrader calls it with the submitted notebooks."""
    def check_before_grading(assignment, student, notebooks):
        from autograder.course import Course
        from autograder.grading.ledger import Ledger
        from autograder.grading.permissions import configured_exchange

        if not notebooks:
            return
        submitted = Path(notebooks[0]).parent
        course = Course(course_root)
        chapter, student_id = course.chapter(submitted.name), submitted.parent.name
        inbound = exchange_copy(configured_exchange(course), course.config.COURSE_ID, student_id, chapter.id,
                                submitted)
        findings = check_submission(submitted, course.root.stat().st_uid, inbound, [f"{chapter.notebook}.ipynb"],
                                    limits(course))
        ledger = Ledger(course, chapter)
        ledger.note_submission(student_id, describe(findings) if findings else None)
        ledger.write_problems()
        if findings:
            print(f"[{KIND}] {student_id} {chapter.id}: {describe(findings)}", file=sys.stderr)
    return check_before_grading
