"""Inside Gradescope: grade the one submission in /autograder/submission with the real
`nbgrader autograde`, and write /autograder/results/results.json in Gradescope's format.

One test per graded cell, carrying its points. A cell with hidden tests is reported twice: its
visible checks at once (no points: the student sees what the notebook showed them), and the cell
itself, points and full message, with visibility `after_due_date`, so hidden inputs stay hidden
until the deadline. A submission that cannot be graded still gets a results.json: zero points and
the reason.

Gradescope runs this as root. The student's code must not be able to read the hidden tests or write
the results, so nbgrader stays root and only the kernel runs unprivileged (grading.kernel_user);
the course folder and the results folder are made root's alone first, every process of the kernel's
user is killed when nbgrader is done, and results.json is written atomically (grading.results_file).

    python -m autograder.grading.gradescope_runner CHAPTER --root /autograder [--kernel-user NAME|UID] [--unsafe]
"""
import argparse
import json
import os
import pwd
import re
import shutil
import stat
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import nbformat

from autograder import cell_marks
from autograder.course import Course
from autograder.grading import intake
from autograder.grading.judged_execute import JUDGE_ERROR_NAME, judge_error_line
from autograder.grading.kernel_user import KernelLimits
from autograder.grading.results_file import secure_results_folder, write_results

STUDENT = "gradescope"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CONFIG_FAILED = "Exception while loading config file"     # nbgrader logs this, then grades with defaults
KERNEL_USER = "babygrad-student"      # setup.sh creates it
FALLBACK_UID = 64000                  # used, without an account, when KERNEL_USER does not exist


class RunnerSetupError(RuntimeError):
    """The runner cannot grade safely here (not root, no unprivileged user): it grades nothing."""


@dataclass(frozen=True)
class KernelIsolation:
    """How the runner keeps the student's kernel away from everything else: the lines added to the
    scratch course's nbgrader_config.py, and the uid whose processes are killed after grading."""

    description: str
    config_lines: list = field(default_factory=list)
    uid: int = None
    gid: int = None
    kernel_homes: Path = None      # the folder of the kernels' working folders, removed after grading


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder.grading.gradescope_runner")
    parser.add_argument("chapter")
    parser.add_argument("--root", default="/autograder")
    parser.add_argument("--kernel-user", default=KERNEL_USER,
                        help=f"user name or uid the student's kernel runs as (default {KERNEL_USER}, "
                             f"else uid {FALLBACK_UID})")
    parser.add_argument("--unsafe", action="store_true",
                        help="when not root: run the kernel as this user, with access to everything it can read")
    args = parser.parse_args(argv)
    root = Path(args.root)
    started = time.monotonic()
    isolation = None
    try:
        limits = KernelLimits.from_config(Course(root / "source" / "course").config)
        isolation = choose_isolation(args.kernel_user, args.unsafe, limits)
        lock_down(root)
        results = grade(root, args.chapter, isolation)
    except (Exception, SystemExit):           # a results.json in every case: Gradescope shows nothing otherwise
        traceback.print_exc()
        results = {"score": 0.0, "output": "The autograder itself failed on this submission; your instructor has "
                                           "the log. Please tell them.", "tests": []}
    finally:
        survivors = end_kernel_processes(isolation)
    if survivors:
        print(f"warning: {len(survivors)} processes of uid {isolation.uid} survived SIGKILL", file=sys.stderr)
    results["execution_time"] = round(time.monotonic() - started)
    write_results(root / "results", results)
    print(json.dumps({k: v for k, v in results.items() if k != "tests"}, indent=2))


def choose_isolation(kernel_user, unsafe, limits):
    """The strongest isolation this machine allows.

    Seam for the course sandbox: when `autograder.grading.sandbox` offers `gradescope_isolation(limits)`
    and it returns a KernelIsolation (bwrap works in this container), that is used instead.
    """
    try:
        from autograder.grading import sandbox
    except ImportError:
        sandbox = None
    offered = getattr(sandbox, "gradescope_isolation", None)
    if callable(offered):
        chosen = offered(limits)
        if chosen is not None:
            return chosen
    if os.geteuid() == 0:
        uid, gid = kernel_ids(kernel_user)
        kernels = Path(tempfile.mkdtemp(prefix="babygrad-kernels-"))
        os.chmod(kernels, 0o711)              # the kernel reaches its own folder inside, lists nothing
        lines = ["from autograder.grading.kernel_user import run_kernels_unprivileged",
                 "from autograder.grading.kernel_user import KernelLimits",
                 f"run_kernels_unprivileged(get_config(), uid={uid}, gid={gid}, home_parent={str(kernels)!r},",
                 f"                         limits={limits!r})"]
        return KernelIsolation(f"kernel as uid {uid}", lines, uid, gid, kernels)
    if unsafe:
        print("warning: --unsafe: the kernel runs as this user and can read the hidden tests", file=sys.stderr)
        return KernelIsolation("none (--unsafe)")
    raise RunnerSetupError("the runner must start as root (Gradescope does) to run the kernel as an "
                           "unprivileged user; pass --unsafe to grade anyway on a trusted machine")


def kernel_ids(kernel_user):
    """(uid, gid) for a user name or number; FALLBACK_UID when the default user was not created."""
    if str(kernel_user).isdigit():
        uid = int(kernel_user)
        try:
            return uid, pwd.getpwuid(uid).pw_gid
        except KeyError:
            return uid, uid
    try:
        entry = pwd.getpwnam(kernel_user)
    except KeyError:
        if kernel_user != KERNEL_USER:
            raise RunnerSetupError(f"no user {kernel_user!r} for the kernel") from None
        try:
            taken = pwd.getpwuid(FALLBACK_UID).pw_name
        except KeyError:
            return FALLBACK_UID, FALLBACK_UID
        raise RunnerSetupError(f"no user {KERNEL_USER}, and uid {FALLBACK_UID} belongs to {taken}") from None
    if entry.pw_uid == 0:
        raise RunnerSetupError(f"{kernel_user} is root: the kernel must run unprivileged")
    return entry.pw_uid, entry.pw_gid


def lock_down(root):
    """Before any student code runs: the autograder's files and results are root's and not writable
    by others; the course folder (autograde source, gradebook: hidden tests) is root's alone."""
    for folder in (root / "source", root / "submission"):
        if folder.is_dir():
            for path in [folder, *folder.rglob("*")]:
                info = os.lstat(path)
                if not stat.S_ISLNK(info.st_mode):
                    os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o022)
    if (root / "source" / "course").is_dir():
        os.chmod(root / "source" / "course", 0o700)
    secure_results_folder(root / "results")


def end_kernel_processes(isolation):
    """Kill every process of the kernel's user, so nothing the student started outlives grading or
    touches the results; return the processes that survived (none, normally)."""
    if isolation is None or isolation.uid is None:
        return []
    from autograder.grading.kernel_user import kill_user_processes
    survivors = kill_user_processes(isolation.uid, isolation.gid)
    if isolation.kernel_homes is not None:
        shutil.rmtree(isolation.kernel_homes, ignore_errors=True)
    return survivors


def check_isolation(work, isolation):
    """The configuration that makes kernels unprivileged loads and takes effect, or nothing runs."""
    from autograder.grading.kernel_user import runs_kernels_unprivileged
    if not runs_kernels_unprivileged(work):
        raise RunnerSetupError(f"{work / 'nbgrader_config.py'} does not run kernels unprivileged; not grading")


def grade(root, chapter_id, isolation):
    from nbgrader.api import Gradebook

    from autograder.grading.kernel_user import kernels_started
    from autograder.grading.nbgrader_cli import run_nbgrader
    from autograder.grading.worker import diagnose

    with tempfile.TemporaryDirectory(prefix="babygrad-gradescope-") as scratch:
        work = Path(scratch) / "course"
        shutil.copytree(root / "source" / "course", work)
        if isolation.config_lines:
            with open(work / "nbgrader_config.py", "a", encoding="utf-8") as config:
                config.write("\n# Added by the Gradescope runner: " + isolation.description + "\n"
                             + "\n".join(isolation.config_lines) + "\n")
            check_isolation(work, isolation)
        course = Course(work)
        chapter = course.chapter(chapter_id)
        cfg = course.config
        upload = root / "submission"
        found = intake.survey(upload, [f"{chapter.notebook}.ipynb"], intake.IntakeLimits.from_config(cfg))
        notebook = find_notebook(found, chapter.notebook)
        source = nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4)
        if notebook is None:          # nothing to run: every exercise scores 0, and the summary says why
            scores = {cell_id(c): (0, cell_marks.marks(c)["points"]) for c in source.cells if cell_marks.is_test_cell(c)}
            return results_json(chapter, source, None, scores, None, found=None,
                                refused=refusal(found, chapter.notebook))
        target = course.notebook(cfg.SUBMITTED_DIR, chapter, STUDENT)
        target.parent.mkdir(parents=True)
        target.write_bytes(intake.read_regular(upload / notebook))
        done = run_nbgrader(work, "autograde", chapter.id, "--force", check=False)
        started = kernels_started(isolation.kernel_homes) if isolation.kernel_homes else None
        end_kernel_processes(isolation)       # before reading anything the run produced
        autograded = course.notebook(cfg.AUTOGRADED_DIR, chapter, STUDENT)
        if started == 0 and autograded.exists():
            raise RunnerSetupError("nbgrader ran the notebook, but not through UnprivilegedKernelManager; "
                                   "its scores are not trusted")
        if CONFIG_FAILED in done.stdout + done.stderr:
            raise RunnerSetupError(f"nbgrader could not load the course's configuration:\n{done.stderr[-3000:]}")
        problem = diagnose(done.stdout + done.stderr, autograded.parent, chapter.notebook, cfg.CELL_TIMEOUT_SECONDS)
        with Gradebook(course.gradebook_url, course_id=cfg.COURSE_ID) as gradebook:
            submitted = gradebook.find_submission_notebook(chapter.notebook, chapter.id, STUDENT)
            scores = {g.name: (g.score, g.max_score) for g in submitted.grades}
        graded = nbformat.read(autograded, as_version=4) if autograded.exists() else None
        return results_json(chapter, source, graded, scores, problem, found=notebook)


def find_notebook(found, name):
    """The submitted notebook, among the regular files intake admitted from the upload (`found`): `<name>.ipynb`
    anywhere in it, else its only notebook; its path relative to the upload, or None."""
    notebooks = [p for p in found.admitted if p.endswith(".ipynb")]
    named = [p for p in notebooks if PurePosixPath(p).name == f"{name}.ipynb"]
    if named:
        return named[0]
    return notebooks[0] if len(notebooks) == 1 else None


def refusal(found, name):
    """Why the upload's `<name>.ipynb` was not read (a link, a FIFO, too large), or None."""
    for item in found.refused:
        if PurePosixPath(item.path).name == f"{name}.ipynb":
            return f"{item.path} {item.reason}"
        if item.path == ".":
            return item.reason
    return None


def results_json(chapter, source, graded, scores, problem, found, refused=None):
    outputs = {cell_id(c): c for c in graded.cells} if graded is not None else {}
    tests = []
    for cell in source.cells:
        name = cell_id(cell)
        if name not in scores or not cell_marks.is_graded(cell):
            continue
        if cell.cell_type != "code":      # a written question: graded by people, in Gradescope's own grading
            continue
        score, max_score = scores[name]
        score = float(score or 0)
        hidden = hidden_lines(cell.source)
        ran = outputs.get(name)
        message = cell_message(ran) if ran is not None else None
        if message is None:
            message = not_run_message(problem, found, chapter)
        status = "passed" if score >= max_score else "failed"
        if hidden:
            failed_line = error_line(ran) if ran is not None else None
            visible_failed = status == "failed" and (failed_line is None or failed_line < hidden[0])
            tests.append({"name": f"{name} · visible checks", "score": 0.0, "max_score": 0.0,
                          "status": "failed" if visible_failed else "passed",
                          "output": message if visible_failed or ran is None else
                          "The visible checks of this cell pass. Hidden checks run too; their result "
                          "and this cell's points are shown after the due date.",
                          "visibility": "visible"})
            tests.append({"name": f"{name} · all checks, hidden ones included", "score": score,
                          "max_score": float(max_score), "status": status, "output": message,
                          "visibility": "after_due_date"})
        else:
            tests.append({"name": name, "score": score, "max_score": float(max_score), "status": status,
                          "output": message, "visibility": "visible"})
    total = sum(t["score"] for t in tests)
    summary = f"{chapter.title}: graded with nbgrader, one cell at a time, exactly as in the course."
    if found is None:
        summary = f"No {chapter.notebook}.ipynb found in the submission: upload the notebook itself."
        if refused:
            summary = f"Your upload's {refused}. Upload the notebook itself, as a file."
    elif problem:
        summary = f"This submission could not be fully graded: {problem[1]}."
    return {"score": total, "output": summary, "stdout_visibility": "hidden", "visibility": "visible",
            "tests": tests}


def cell_id(cell):
    return cell_marks.grade_id(cell)


def hidden_lines(source):
    """1-based line numbers of the cell's hidden region (empty if it has none)."""
    return cell_marks.hidden_test_lines(source)


def cell_message(cell):
    """What the cell told the student: its check's message when it failed, its output when it passed."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            if output.get("ename") == "AssertionError" and output.get("evalue"):
                return output["evalue"]
            return f"{output.get('ename')}: {output.get('evalue')}".strip()
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    return ANSI.sub("", text).strip() or "passed"


def error_line(cell):
    """The line of the cell where its error was raised, read from the traceback, or where the check the judge
    failed is (None if unknown)."""
    for output in cell.get("outputs", []):
        if output.get("output_type") != "error":
            continue
        if output.get("ename") == JUDGE_ERROR_NAME:
            return judge_error_line(output)
        match = re.search(r"Cell In\[\d+\], line (\d+)", ANSI.sub("", "\n".join(output.get("traceback", []))))
        return int(match.group(1)) if match else None
    return None


def not_run_message(problem, found, chapter):
    if found is None:
        return f"Not graded: no {chapter.notebook}.ipynb in the submission."
    if problem:
        return f"Not graded: {problem[1]}."
    return "Not graded."


if __name__ == "__main__":
    sys.exit(main())
