"""What of a submission folder grading reads: regular files only, within limits, of allowed types, on
every path. A hostile class (helpers/hostile_folders.py: a notebook that is a link to the instructor's
source notebook, a chapter folder that is a link, a FIFO named like the notebook, a FIFO beside it,
links beside it to the source notebook, the password file and the gradebook, pages under upper-case
extensions, 20,000 files) is graded by plain `nbgrader autograde` and by `grade` on Dask, an honest
student last: each attack is left out with a reason, and the class goes on."""
import csv
import os
import random
import stat
import subprocess
import sys
import threading
from fnmatch import fnmatchcase

import nbformat
import pytest

from autograder.grading import file_bundle, flags, intake
from autograder.grading.intake import IntakeLimits, NotRegular, survey
from autograder.grading.nbgrader_cli import nbgrader_env
from autograder.grading.parallel import grade_chapter

from helpers.across_workers import once_per_run
from helpers.class_support import course_copy
from helpers.hostile_folders import (
    FULL_MARKS,
    LINKED_MARKERS,
    MANY_FILES,
    NO_NOTEBOOK,
    OWN_NOTES,
    PAGE,
    PAGES,
    STUDENTS,
    files_under,
    hand_in,
    lay_out,
)

CHAPTER = "ch01"        # the attacks do not depend on the chapter: the cheapest one to grade
# Far above what grading this class takes; a FIFO that blocks nbgrader holds it here, and the test fails.
NBGRADER_SECONDS = 1500


def limits():
    import course_config
    return IntakeLimits.from_config(course_config)


# -- the survey, in process ---------------------------------------------------------------------------


def test_a_survey_follows_no_link_opens_no_fifo_and_says_why(tmp_path):
    folder = tmp_path / "ch03"
    (folder / "mybabygrad").mkdir(parents=True)
    (folder / "autodiff.ipynb").write_text("{}")
    (folder / "mybabygrad" / "ch02_tensor.py").write_text("x = 1\n")
    (folder / "DATA.CSV").write_text("1,2\n")
    (folder / "notes.HTML").write_text(PAGE)
    (folder / "README").write_text("no extension")
    os.symlink("/etc/passwd", folder / "passwords.txt")
    os.mkfifo(folder / "pipe.txt")
    (folder / "a" / "b" / "c" / "d").mkdir(parents=True)
    (folder / "a" / "b" / "c" / "d" / "deep.py").write_text("")
    found = survey(folder, ["autodiff.ipynb"], limits())
    assert found.admitted == ("DATA.CSV", "autodiff.ipynb", "mybabygrad/ch02_tensor.py")
    reasons = {item.path: item.reason for item in found.refused}
    assert set(reasons) == {"notes.HTML", "README", "passwords.txt", "pipe.txt", "a/b/c/d"}
    assert reasons["passwords.txt"] == "is a symbolic link (to /etc/passwd): never followed"
    assert reasons["pipe.txt"] == "is a FIFO (named pipe): never opened"
    assert "(.HTML)" in reasons["notes.HTML"] and "SUBMISSION_MAX_DEPTH" in reasons["a/b/c/d"]
    assert found.over_limit is None and found.notebook_refusal("autodiff.ipynb") is None


def test_a_linked_or_fifo_notebook_is_refused_and_a_linked_folder_wholly(tmp_path):
    submitted = tmp_path / "submitted"
    (submitted / "alice" / "ch03").mkdir(parents=True)
    os.symlink("/work/source/ch03/autodiff.ipynb", submitted / "alice" / "ch03" / "autodiff.ipynb")
    (submitted / "bob" / "ch03").mkdir(parents=True)
    os.mkfifo(submitted / "bob" / "ch03" / "autodiff.ipynb")
    (submitted / "carol").mkdir()
    os.symlink(tmp_path, submitted / "carol" / "ch03")
    said = {s: survey(submitted / s / "ch03", ["autodiff.ipynb"], limits(), within=submitted).notebook_refusal(
        "autodiff.ipynb") for s in ("alice", "bob", "carol")}
    assert said["alice"] == "autodiff.ipynb is a symbolic link (to /work/source/ch03/autodiff.ipynb): never followed"
    assert said["bob"] == "autodiff.ipynb is a FIFO (named pipe): never opened"
    assert said["carol"].startswith("the submission folder ch03 is a symbolic link")


def test_over_the_file_count_a_submission_is_its_notebook_alone_and_the_walk_stops(tmp_path):
    folder = tmp_path / "ch01"
    folder.mkdir()
    (folder / "scalar.ipynb").write_text("{}")
    (folder / "timestamp.txt").write_text("2026-01-01 00:00:00 UTC")
    for i in range(MANY_FILES):
        (folder / f"f{i:05}.txt").touch()
    os.symlink("/etc/passwd", folder / "passwords.txt")
    found = survey(folder, ["scalar.ipynb"], limits())
    assert found.admitted == ("scalar.ipynb", "timestamp.txt")
    assert found.over_limit.startswith(f"more than {limits().files} files (SUBMISSION_MAX_FILES)")
    assert len(found.refused) <= limits().files, "the survey went on past the limit"


def test_over_the_total_size_a_submission_is_its_notebook_alone(tmp_path):
    small = IntakeLimits(total_bytes=1000, file_bytes=3000, notebook_bytes=5000)
    folder = tmp_path / "ch01"
    folder.mkdir()
    (folder / "scalar.ipynb").write_bytes(b" " * 4000)         # over the file limit, not the notebook's
    (folder / "small.npy").write_bytes(b"\0" * 900)
    assert survey(folder, ["scalar.ipynb"], small).admitted == ("scalar.ipynb", "small.npy")
    (folder / "big.npy").write_bytes(b"\0" * 2000)
    found = survey(folder, ["scalar.ipynb"], small)
    assert found.admitted == ("scalar.ipynb",) and "SUBMISSION_MAX_BYTES" in found.over_limit
    (folder / "scalar.ipynb").write_bytes(b" " * 6000)
    assert "SUBMISSION_MAX_NOTEBOOK_BYTES" in survey(folder, ["scalar.ipynb"], small).notebook_refusal("scalar.ipynb")


def test_open_regular_neither_follows_a_link_nor_waits_on_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    os.symlink("/etc/passwd", tmp_path / "link")
    outcome = {}

    def read(name):
        try:
            intake.read_regular(tmp_path / name)
        except NotRegular as error:
            outcome[name] = error.strerror
    for name in ("pipe", "link"):
        reader = threading.Thread(target=read, args=(name,), daemon=True)
        reader.start()
        reader.join(10)
        assert not reader.is_alive(), f"reading {name} blocked"
    assert outcome == {"pipe": "is a FIFO (named pipe): never opened",
                       "link": "is a symbolic link (to /etc/passwd): never followed"}


def test_a_bundle_of_the_admitted_files_holds_no_link_target(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "scalar.ipynb").write_text("{}")
    os.symlink("/etc/passwd", folder / "passwords.txt")
    os.mkfifo(folder / "pipe.txt")
    bundle = file_bundle.pack(folder, ["scalar.ipynb", "passwords.txt", "pipe.txt"])
    assert files_under(file_bundle.unpack(bundle, tmp_path / "out")) == ["scalar.ipynb"]


def test_nbgraders_ignore_globs_are_the_allow_list_in_any_case():
    """CourseDirectory.ignore (nbgrader's own copies: autograded/ to feedback/, the exchange) ignores a
    dotted name exactly when intake does not allow its type, whatever its case."""
    import course_config
    from traitlets.config import Config
    c = Config()
    course_config.configure_nbgrader(c)
    allowed = IntakeLimits.from_config(course_config)
    rng = random.Random(5)
    names = [f"{stem}{suffix}" for stem in ("notes", "a.b", "x") for suffix in
             [t for t in course_config.SUBMISSION_FILE_TYPES] + [".html", ".htm", ".xhtml", ".xht", ".svg", ".svgz",
                                                                 ".xml", ".js", ".mjs", ".pyc", ".pyy", ".p", "."]]
    names += PAGES + ["".join(rng.choice("aApPyYnN.gGzZsSvV") for _ in range(rng.randint(2, 8))) for _ in range(3000)]
    for name in names:
        name = "".join(ch.upper() if rng.random() < 0.5 else ch for ch in name)
        if "." not in name or name.startswith("."):
            continue
        ignored = any(fnmatchcase(name, glob) for glob in c.CourseDirectory.ignore)
        assert ignored == (not allowed.allows(name)), name


# -- plain `nbgrader autograde` --------------------------------------------------------------------------


def autograde_plainly(root):
    """`nbgrader autograde ch01` in the course, as an instructor types it; (exit status, log)."""
    done = subprocess.run([sys.executable, "-m", "nbgrader", "autograde", CHAPTER], cwd=root,
                          env=dict(os.environ, **nbgrader_env()), capture_output=True, text=True,
                          timeout=NBGRADER_SECONDS)
    return done.returncode, done.stdout + done.stderr


def outputs_text(notebook):
    return "\n".join(str(output) for cell in notebook.cells for output in cell.get("outputs", []))


def class_outcome(course, chapter):
    """Plain data on what grading made of the hostile class: scores, autograded/ and feedback-to-be."""
    from nbgrader.api import Gradebook, MissingEntry
    root = course.root
    scores = {}
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        for student in STUDENTS:
            try:
                scores[student] = gradebook.find_submission(CHAPTER, student).score
            except MissingEntry:
                scores[student] = None
    autograded = {s: files_under(root / "autograded" / s / CHAPTER) for s in STUDENTS}
    texts = {}
    for student in FULL_MARKS:
        path = root / "autograded" / student / CHAPTER / f"{chapter.notebook}.ipynb"
        texts[student] = outputs_text(nbformat.read(path, as_version=4)) if path.exists() else None
    problems_csv = root / "grading_ledger" / f"{CHAPTER}_problems.csv"
    problems = []
    if problems_csv.exists():
        with open(problems_csv, newline="", encoding="utf-8") as handle:
            problems = [tuple(row.values()) for row in csv.DictReader(handle)]
    return {"scores": scores, "autograded": autograded, "texts": texts, "problems": problems,
            "full": course.autograded_points(chapter), "submitted": {s: files_under(root / "submitted" / s)
                                                                   for s in STUDENTS}}


@pytest.fixture(scope="module")
def plain(built_course, tmp_path_factory):
    def make(folder):
        course = course_copy(built_course, folder, CHAPTER)
        chapter = course.chapter(CHAPTER)
        hand_in(course, chapter)
        status, log = autograde_plainly(course.root)
        path, found, _ = flags.write_flags(course, chapter)
        return dict(class_outcome(course, chapter), status=status, log=log,
                    flags=[(f.student, f.code) for f in found if f.category == flags.LEFT_OUT])
    folder, outcome = once_per_run(tmp_path_factory, "intake-plain", make)
    return dict(outcome, root=folder)


def test_plain_autograde_grades_the_class_past_every_attack(plain):
    assert {s: plain["scores"][s] for s in FULL_MARKS} == {s: plain["full"] for s in FULL_MARKS}, plain["log"][-3000:]
    assert all(not plain["scores"][s] for s in NO_NOTEBOOK), plain["scores"]
    assert all("scalar.ipynb" not in plain["autograded"][s] for s in NO_NOTEBOOK)


def test_plain_autograde_lets_no_byte_of_a_linked_file_reach_the_kernel(plain):
    text = plain["texts"]["links-beside"]
    assert OWN_NOTES in text, "the kernel's listing did not run"
    assert not [marker for marker in LINKED_MARKERS if marker in text]
    assert not {"answers.txt", "passwords.txt", "gradebook.txt", "course"} & set(plain["autograded"]["links-beside"])


def test_plain_autograde_keeps_only_allowed_types_and_the_notebook_of_many_files(plain):
    assert plain["autograded"]["pages"] == ["earlier_chapters.py", "mybabygrad", "mybabygrad/__init__.py",
                                            "notes.txt", "scalar.ipynb"]
    assert plain["autograded"]["many-files"] == ["earlier_chapters.py", "scalar.ipynb"]
    assert plain["autograded"]["fifo-beside"] == ["earlier_chapters.py", "notes.txt", "scalar.ipynb"]


def test_plain_autograde_says_what_it_left_out_in_the_ledger_and_the_flags(plain):
    """Each refused entry, with its reason, in grading_ledger/ch01_problems.csv and the flags report."""
    left_out = {student: reason for student, kind, reason in plain["problems"] if kind == "left out"}
    assert set(left_out) == set(STUDENTS) - {"zz-honest"}
    assert "scalar.ipynb: is a symbolic link" in left_out["linked-notebook"]
    assert "the submission folder ch01 is a symbolic link" in left_out["linked-folder"]
    assert "scalar.ipynb: is a FIFO (named pipe): never opened" in left_out["fifo-notebook"]
    assert "data.csv: is a FIFO" in left_out["fifo-beside"] and "timestamp.txt: is a FIFO" in left_out["fifo-beside"]
    assert all(f"{name}: is a symbolic link" in left_out["links-beside"]
               for name in ("answers.txt", "passwords.txt", "gradebook.txt", "course"))
    assert all(f"{page}: not a type of file grading reads" in left_out["pages"] for page in PAGES)
    assert "more than 100 files (SUBMISSION_MAX_FILES): graded from its notebook alone" in left_out["many-files"]
    flagged = {student for student, _ in plain["flags"]}
    assert flagged == set(STUDENTS) - {"zz-honest"}
    assert ("links-beside", "passwords.txt: is a symbolic link (to /etc/shadow): never followed") in plain["flags"] \
        or ("links-beside", "passwords.txt: is a symbolic link (to /etc/passwd): never followed") in plain["flags"]


def test_what_plain_autograde_left_out_is_set_aside_not_lost(plain):
    aside = plain["root"] / "grading_ledger" / "refused" / CHAPTER
    assert stat.S_ISFIFO(os.lstat(aside / "fifo-notebook" / "scalar.ipynb").st_mode)
    assert os.path.islink(aside / "links-beside" / "passwords.txt")
    assert len(os.listdir(aside / "many-files")) == MANY_FILES + 1      # the files and notes.txt
    assert plain["submitted"]["many-files"] == ["ch01", "ch01/scalar.ipynb"]


def test_nbgraders_own_copy_to_feedback_leaves_out_every_type_not_allowed(plain):
    """generate_feedback copies autograded/ into feedback/ with nbgrader's ignore globs: a page planted in
    autograded/ under any case stays there."""
    folder = plain["root"] / "autograded" / "pages" / CHAPTER
    for page in PAGES:
        (folder / page).write_text(PAGE, encoding="utf-8")
    (folder / "table.CSV").write_text("1,2\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "nbgrader", "generate_feedback", CHAPTER, "--student", "pages",
                           "--force"], cwd=plain["root"], env=dict(os.environ, **nbgrader_env()),
                          capture_output=True, text=True, timeout=NBGRADER_SECONDS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert files_under(plain["root"] / "feedback" / "pages" / CHAPTER) == [
        "earlier_chapters.py", "mybabygrad", "mybabygrad/__init__.py", "notes.txt", "scalar.html", "table.CSV"]


# -- `python -m autograder grade` on Dask ------------------------------------------------------------------


@pytest.fixture(scope="module")
def on_dask(built_course, tmp_path_factory):
    def make(folder):
        course = course_copy(built_course, folder, CHAPTER)
        chapter = course.chapter(CHAPTER)
        hand_in(course, chapter)
        run = grade_chapter(course, chapter, jobs=2, progress=False)
        return dict(class_outcome(course, chapter), graded=sorted(run.graded), problems_run=dict(run.problems))
    folder, outcome = once_per_run(tmp_path_factory, "intake-dask", make)
    return dict(outcome, root=folder)


def test_dask_grades_the_class_past_every_attack(on_dask):
    assert on_dask["graded"] == STUDENTS
    assert {s: on_dask["scores"][s] for s in FULL_MARKS} == {s: on_dask["full"] for s in FULL_MARKS}
    assert all(not on_dask["scores"][s] for s in NO_NOTEBOOK)
    assert {s: p[0] for s, p in on_dask["problems_run"].items()} == {s: "refused" for s in NO_NOTEBOOK}
    assert "scalar.ipynb is a symbolic link" in on_dask["problems_run"]["linked-notebook"][1]
    assert "scalar.ipynb is a FIFO" in on_dask["problems_run"]["fifo-notebook"][1]


def test_dask_sends_no_byte_of_a_linked_file_and_only_allowed_types(on_dask):
    text = on_dask["texts"]["links-beside"]
    assert OWN_NOTES in text and not [marker for marker in LINKED_MARKERS if marker in text]
    assert on_dask["autograded"]["pages"] == ["earlier_chapters.py", "mybabygrad", "mybabygrad/__init__.py",
                                              "notes.txt", "scalar.ipynb"]
    assert on_dask["autograded"]["many-files"] == ["earlier_chapters.py", "scalar.ipynb"]
    assert on_dask["autograded"]["links-beside"] == ["earlier_chapters.py", "notes.txt", "scalar.ipynb"]


def test_dask_says_what_it_left_out_in_the_ledger(on_dask):
    left_out = {student: reason for student, kind, reason in on_dask["problems"] if kind == "left out"}
    assert set(left_out) == set(STUDENTS) - {"zz-honest"}
    assert "more than 100 files (SUBMISSION_MAX_FILES): graded from its notebook alone" in left_out["many-files"]
    assert "data.csv: is a FIFO" in left_out["fifo-beside"] and "timestamp.txt: is a FIFO" in left_out["fifo-beside"]
    assert len(on_dask["submitted"]["many-files"]) == MANY_FILES + 3, "grade on Dask changed submitted/"


# -- nbgrader's exchange collect ---------------------------------------------------------------------------


def test_exchange_collect_copies_only_what_intake_admits(built_course, tmp_path):
    """Students write the exchange's inbound/ themselves: a notebook there that is a link to the source
    notebook, and links, a FIFO and pages beside a notebook, reach submitted/ as nothing but the regular
    files of allowed types, and the record says what was left out."""
    course = course_copy(built_course, tmp_path / "course", CHAPTER)
    chapter = course.chapter(CHAPTER)
    inbound = tmp_path / "exchange" / course.config.COURSE_ID / "inbound"
    inbound.mkdir(parents=True)
    when = "2026-11-20 14:03:00.000000 UTC"
    lay_out(course, chapter, tmp_path / "handed-in")
    for student in ("linked-notebook", "links-beside", "fifo-beside", "pages"):
        folder = inbound / f"{student}+{CHAPTER}+{when}+0123abcd"
        os.rename(tmp_path / "handed-in" / student / CHAPTER, folder)
        if not os.path.lexists(folder / "timestamp.txt"):
            (folder / "timestamp.txt").write_text(when, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "nbgrader", "collect", CHAPTER, f"--Exchange.root={tmp_path / 'exchange'}"],
                          cwd=course.root, env=dict(os.environ, **nbgrader_env()), capture_output=True, text=True,
                          timeout=NBGRADER_SECONDS)
    assert done.returncode == 0, done.stdout + done.stderr
    submitted = {s: files_under(course.root / "submitted" / s / CHAPTER)
                 for s in ("linked-notebook", "links-beside", "fifo-beside", "pages")}
    assert submitted == {"linked-notebook": ["timestamp.txt"],
                         "links-beside": ["notes.txt", "scalar.ipynb", "timestamp.txt"],
                         "fifo-beside": ["notes.txt", "scalar.ipynb"],
                         "pages": ["mybabygrad", "mybabygrad/__init__.py", "notes.txt", "scalar.ipynb", "timestamp.txt"]}
    recorded = intake.read_records(course.root / "grading_ledger", CHAPTER)
    assert "scalar.ipynb: is a symbolic link" in recorded["linked-notebook"]
    assert "passwords.txt: is a symbolic link" in recorded["links-beside"]
    assert "data.csv: is a FIFO (named pipe): never opened" in recorded["fifo-beside"]
    assert "timestamp.txt: is a FIFO (named pipe): never opened" in recorded["fifo-beside"]
    assert "notes.HTML: not a type of file grading reads (.HTML)" in recorded["pages"]
