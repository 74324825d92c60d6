"""An LMS's zip of submissions (Canvas's file naming) becomes submitted/<student>/<chapter>/, read by
the course's own collector (autograder/grading/lms.py), never by nbgrader's zip_collect: students are found by
LMS user id in the roster, the newest upload wins and keeps its time, and no member of the zip can
write outside its student's folder, plant another student's work, or stop the class."""
import csv
import io
import shutil
import stat
import subprocess
import sys
import zipfile
from datetime import datetime, timezone

import pytest

from autograder.course import Course
from autograder.grading.lms import CollectError, collect

from helpers.course_paths import ROOT
from helpers.demo_students import demo_bytes

NB = "autodiff"
PERFECT, PARTIAL, UNTOUCHED = (demo_bytes("ch03", student) for student in ("perfect", "partial", "untouched"))
ROSTER = [("12345", "ada", "Ada Lovelace"), ("23456", "grace", "Grace Hopper"),
          ("34567", "alan", "Alan Turing"), ("45678", "alan2", "Alan Turing")]
WHEN = (2026, 11, 20, 14, 3, 0)


@pytest.fixture
def course(tmp_path):
    """A course folder with just its configuration and a roster: collecting needs nothing built."""
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(ROOT / "course_config.py", root)
    with open(root / "roster.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["lms_user_id", "student_id", "name"])
        writer.writerows(ROSTER)
    return Course(root)


def canvas_zip(path, members):
    """members: [(name, bytes, date_time or None, unix mode or None)]."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, when, mode in members:
            info = zipfile.ZipInfo(name, date_time=when or WHEN)
            info.compress_type = zipfile.ZIP_DEFLATED
            if mode is not None:
                info.external_attr = mode << 16
            archive.writestr(info, data)
    return path


def member(name, data=PERFECT, when=None, mode=None):
    return (name, data, when, mode)


def submitted(course, student):
    return course.root / "submitted" / student / "ch03"


def report_rows(course):
    with open(course.root / "grading_ledger" / "ch03_collect.csv", newline="", encoding="utf-8") as handle:
        return {row["file"]: row for row in csv.DictReader(handle)}


def all_files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_canvas_zip_becomes_one_submission_folder_per_student_by_lms_user_id(course, tmp_path):
    download = canvas_zip(tmp_path / "submissions.zip", [
        member(f"lovelaceada_12345_900001_{NB}.ipynb", PERFECT),
        member(f"hoppergrace_LATE_23456_900002_{NB}-1.ipynb", PARTIAL, when=(2026, 11, 21, 9, 0, 0)),
        member(f"turingalan_34567_900003_{NB}.ipynb", UNTOUCHED),
        member(f"turingalan_45678_900005_{NB}.ipynb", PARTIAL),     # same name, another student
        member("turingalan_34567_900004_notes.txt", b"not a notebook"),
    ])
    run = collect(course, course.chapter("ch03"), download)

    assert run.students == ["ada", "alan", "alan2", "grace"]
    for student, data in [("ada", PERFECT), ("grace", PARTIAL), ("alan", UNTOUCHED), ("alan2", PARTIAL)]:
        folder = submitted(course, student)
        assert sorted(p.name for p in folder.iterdir()) == [f"{NB}.ipynb", "timestamp.txt"]
        assert (folder / f"{NB}.ipynb").read_bytes() == data
    # nbgrader reads timestamp.txt for late penalties: the member's date, in UTC.
    assert (submitted(course, "grace") / "timestamp.txt").read_text() == "2026-11-21 09:00:00 UTC"
    rows = report_rows(course)
    assert rows[f"hoppergrace_LATE_23456_900002_{NB}-1.ipynb"]["late"] == "yes"
    assert rows[f"lovelaceada_12345_900001_{NB}.ipynb"]["late"] == "no"
    assert rows[f"lovelaceada_12345_900001_{NB}.ipynb"]["timestamp"] == "2026-11-20T14:03:00+00:00"
    assert rows[f"turingalan_45678_900005_{NB}.ipynb"]["student"] == "alan2"
    assert rows["turingalan_34567_900004_notes.txt"]["problem"].startswith("not a notebook")


def test_nbgrader_reads_the_timestamp_as_the_submission_time(course, tmp_path):
    """The file collect writes is one nbgrader parses, so late penalties use the LMS's time."""
    from nbgrader.utils import parse_utc
    download = canvas_zip(tmp_path / "s.zip", [member(f"lovelaceada_LATE_12345_1_{NB}.ipynb")])
    collect(course, course.chapter("ch03"), download)
    text = (submitted(course, "ada") / "timestamp.txt").read_text()
    assert parse_utc(text) == datetime(*WHEN, tzinfo=timezone.utc).replace(tzinfo=None)


def test_path_traversal_absolute_and_symlink_members_are_refused(course, tmp_path):
    download = canvas_zip(tmp_path / "s.zip", [
        member("../../evil.ipynb", b"{}"),
        member(f"../../lovelaceada_12345_1_{NB}.ipynb", PARTIAL),
        member(f"/tmp/lovelaceada_12345_2_{NB}.ipynb", PARTIAL),
        member(f"hoppergrace_23456_3_{NB}.ipynb", b"/etc/passwd", mode=stat.S_IFLNK | 0o777),
        member(f"turingalan_34567_4_{NB}.ipynb", UNTOUCHED),
    ])
    before = all_files(tmp_path)
    run = collect(course, course.chapter("ch03"), download)

    assert run.students == ["alan"]
    created = set(all_files(tmp_path)) - set(before)
    assert created == {f"course/submitted/alan/ch03/{NB}.ipynb", "course/submitted/alan/ch03/timestamp.txt",
                       "course/grading_ledger/ch03_collect.csv"}
    rows = report_rows(course)
    assert "climbs out" in rows["../../evil.ipynb"]["problem"]
    assert "climbs out" in rows[f"../../lovelaceada_12345_1_{NB}.ipynb"]["problem"]
    assert "absolute" in rows[f"/tmp/lovelaceada_12345_2_{NB}.ipynb"]["problem"]
    assert "symlink" in rows[f"hoppergrace_23456_3_{NB}.ipynb"]["problem"]


def test_a_nested_zip_cannot_plant_a_submission_for_another_student(course, tmp_path):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as nested:
        nested.writestr(f"lovelaceada_12345_900001_{NB}.ipynb", PARTIAL)
    download = canvas_zip(tmp_path / "s.zip", [
        member(f"lovelaceada_12345_900001_{NB}.ipynb", PERFECT),
        member(f"hoppergrace_23456_900002_{NB}.zip", inner.getvalue()),
        member(f"turingalan_34567_900003_{NB}.ipynb", inner.getvalue()),    # a zip named .ipynb
    ])
    run = collect(course, course.chapter("ch03"), download)

    assert run.students == ["ada"]
    assert (submitted(course, "ada") / f"{NB}.ipynb").read_bytes() == PERFECT
    rows = report_rows(course)
    assert "nested archive" in rows[f"hoppergrace_23456_900002_{NB}.zip"]["problem"]
    assert "nested archive" in rows[f"turingalan_34567_900003_{NB}.ipynb"]["problem"]
    assert not submitted(course, "grace").exists() and not submitted(course, "alan").exists()


@pytest.mark.filterwarnings("ignore:Duplicate name")   # the second copy is the point
def test_several_uploads_of_one_student_keep_the_newest_and_report_the_others(course, tmp_path):
    download = canvas_zip(tmp_path / "s.zip", [
        member(f"lovelaceada_12345_900001_{NB}.ipynb", UNTOUCHED, when=(2026, 11, 19, 8, 0, 0)),
        member(f"lovelaceada_12345_900007_{NB}-2.ipynb", PERFECT, when=(2026, 11, 20, 8, 0, 0)),
        member(f"lovelaceada_12345_900004_{NB}-1.ipynb", PARTIAL, when=(2026, 11, 20, 9, 0, 0)),
        member(f"lovelaceada_12345_900004_{NB}-1.ipynb", PARTIAL, when=(2026, 11, 20, 9, 0, 0)),  # a second copy
        member(f"hoppergrace_23456_900002_{NB}.ipynb", PARTIAL),
    ])
    run = collect(course, course.chapter("ch03"), download)

    assert run.students == ["ada", "grace"]
    assert (submitted(course, "ada") / f"{NB}.ipynb").read_bytes() == PERFECT
    assert (submitted(course, "ada") / "timestamp.txt").read_text() == "2026-11-20 08:00:00 UTC"
    older = [row for row in run.rows if row.student == "ada" and row.problem]
    assert len(older) == 3 and all(r.problem == f"older upload: lovelaceada_12345_900007_{NB}-2.ipynb kept"
                                   for r in older)


def test_unknown_lms_user_id_is_reported_not_guessed_from_the_name(course, tmp_path):
    download = canvas_zip(tmp_path / "s.zip", [
        member(f"lovelaceada_99999_900001_{NB}.ipynb", PARTIAL),     # Ada's name, someone else's id
        member(f"hoppergrace_23456_900002_{NB}.ipynb", PERFECT),
    ])
    run = collect(course, course.chapter("ch03"), download)

    assert run.students == ["grace"]
    assert not submitted(course, "ada").exists()
    row = report_rows(course)[f"lovelaceada_99999_900001_{NB}.ipynb"]
    assert row["student"] == "" and row["lms_user_id"] == "99999" and "not in the roster" in row["problem"]


def test_an_impossible_date_in_a_header_is_reported_not_fatal(course, tmp_path):
    download = canvas_zip(tmp_path / "s.zip", [member(f"lovelaceada_12345_1_{NB}.ipynb", when=(2026, 0, 0, 0, 0, 0)),
                                               member(f"hoppergrace_23456_2_{NB}.ipynb")])
    run = collect(course, course.chapter("ch03"), download)
    assert run.students == ["grace"]
    assert "no valid date" in report_rows(course)[f"lovelaceada_12345_1_{NB}.ipynb"]["problem"]


def test_permissions_are_reset_whatever_the_zip_says(course, tmp_path):
    download = canvas_zip(tmp_path / "s.zip", [
        member(f"lovelaceada_12345_1_{NB}.ipynb", PERFECT, mode=stat.S_IFREG | stat.S_ISUID | 0o777),
    ])
    collect(course, course.chapter("ch03"), download)
    folder = submitted(course, "ada")
    assert stat.S_IMODE((folder / f"{NB}.ipynb").stat().st_mode) == 0o644
    assert stat.S_IMODE((folder / "timestamp.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o755


def test_member_cap_and_a_zip_bomb_are_stopped_while_inflating(course, tmp_path):
    """A member over LMS_MAX_MEMBER_BYTES is refused; a 1 GB bomb (a few MB of zip) is cut at the cap
    after reading no more than the cap, and the header's size claim is not what stops it."""
    cap = course.config.LMS_MAX_MEMBER_BYTES
    gigabyte = 2**30
    bomb = tmp_path / "s.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr(f"lovelaceada_12345_1_{NB}.ipynb", PERFECT)
        with archive.open(f"hoppergrace_23456_2_{NB}.ipynb", "w", force_zip64=True) as stream:
            block = b"\0" * 2**22
            for _ in range(gigabyte // len(block)):
                stream.write(block)
        archive.writestr(f"turingalan_34567_3_{NB}.ipynb", b"x" * (cap + 1))
    assert bomb.stat().st_size < 10 * 2**20

    run = collect(course, course.chapter("ch03"), bomb)
    assert run.students == ["ada"]
    rows = report_rows(course)
    assert "LMS_MAX_MEMBER_BYTES" in rows[f"hoppergrace_23456_2_{NB}.ipynb"]["problem"]
    assert "LMS_MAX_MEMBER_BYTES" in rows[f"turingalan_34567_3_{NB}.ipynb"]["problem"]
    assert not submitted(course, "grace").exists() and not submitted(course, "alan").exists()


def test_a_forged_size_in_the_header_makes_that_member_unreadable_not_the_class(course, tmp_path):
    """The header claims 1,000 bytes for a 110 kB notebook: inflating stops at the claim and the CRC
    fails, so the member is reported; the rest of the class is collected."""
    download = canvas_zip(tmp_path / "s.zip", [member(f"lovelaceada_12345_1_{NB}.ipynb"),
                                               member(f"hoppergrace_23456_2_{NB}.ipynb")])
    data = bytearray(download.read_bytes())
    name = f"hoppergrace_23456_2_{NB}.ipynb".encode()
    for signature, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):   # local and central headers
        header = data.find(signature)
        while name not in data[header:header + 100]:
            header = data.find(signature, header + 1)
        data[header + size_at:header + size_at + 4] = (1000).to_bytes(4, "little")
    download.write_bytes(bytes(data))

    run = collect(course, course.chapter("ch03"), download)
    assert run.students == ["ada"]
    assert "unreadable" in report_rows(course)[f"hoppergrace_23456_2_{NB}.ipynb"]["problem"]


def test_total_cap_stops_extraction_but_keeps_what_was_read(course, tmp_path):
    config = course.root / "course_config.py"
    size = len(PERFECT)
    config.write_text(config.read_text().replace("LMS_MAX_TOTAL_BYTES = 2 * 2**30",
                                                 f"LMS_MAX_TOTAL_BYTES = {2 * size + size // 2}"))
    course = Course(course.root)
    download = canvas_zip(tmp_path / "s.zip", [
        member(f"lovelaceada_12345_1_{NB}.ipynb"), member(f"hoppergrace_23456_2_{NB}.ipynb"),
        member(f"turingalan_34567_3_{NB}.ipynb"), member(f"turingalan_45678_4_{NB}.ipynb"),
    ])
    run = collect(course, course.chapter("ch03"), download)
    assert run.students == ["ada", "alan"]        # students in id order: ada, alan fit, then the cap
    assert {r.student for r in run.problems} == {"alan2", "grace"}
    assert all("LMS_MAX_TOTAL_BYTES" in r.problem for r in run.problems)


def test_collect_needs_a_roster_and_a_zip(course, tmp_path):
    (course.root / "roster.csv").unlink()
    download = canvas_zip(tmp_path / "s.zip", [member(f"lovelaceada_12345_1_{NB}.ipynb")])
    with pytest.raises(CollectError, match="no roster"):
        collect(course, course.chapter("ch03"), download)
    (tmp_path / "bad.csv").write_text("lms_user_id,student_id,name\n1,../evil,Eve\n")
    with pytest.raises(CollectError, match="not a safe folder name"):
        collect(course, course.chapter("ch03"), download, tmp_path / "bad.csv")
    (tmp_path / "good.csv").write_text("lms_user_id,student_id,name\n12345,ada,Ada\n")
    (tmp_path / "not.zip").write_text("hello")
    with pytest.raises(CollectError, match="cannot read"):
        collect(course, course.chapter("ch03"), tmp_path / "not.zip", tmp_path / "good.csv")


def test_collect_command_line(course, tmp_path):
    roster = tmp_path / "other_roster.csv"
    roster.write_text("lms_user_id,student_id,name\n12345,ada_l,Ada Lovelace\n")
    download = canvas_zip(tmp_path / "s.zip", [member(f"lovelaceada_12345_1_{NB}.ipynb"),
                                               member("../../evil.ipynb", b"{}")])
    done = subprocess.run([sys.executable, "-m", "autograder", "--root", str(course.root), "collect", "ch03",
                           str(download), "--roster", str(roster)], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "1 submissions in submitted/: ada_l" in done.stdout
    assert "../../evil.ipynb: path climbs out" in done.stdout
    assert (submitted(course, "ada_l") / f"{NB}.ipynb").read_bytes() == PERFECT


def test_nbgrader_autograde_records_a_late_upload_as_late(course, tmp_path):
    """End to end with the real nbgrader: the upload's time reaches the gradebook, so the course's late
    policy (nbgrader's LateSubmissionPlugin) sees how late it was."""
    from nbgrader.api import Gradebook

    from autograder.grading import register
    from autograder.grading.nbgrader_cli import run_nbgrader

    shutil.copy(ROOT / "nbgrader_config.py", course.root)
    shutil.copytree(ROOT / "source" / "ch03", course.root / "source" / "ch03")
    chapter = course.chapter("ch03")
    register(course, chapter)
    run_nbgrader(course.root, "db", "assignment", "add", "ch03", "--duedate=2026-11-20 12:00:00 UTC")
    download = canvas_zip(tmp_path / "s.zip", [member(f"hoppergrace_LATE_23456_2_{NB}.ipynb", UNTOUCHED),
                                               member(f"lovelaceada_12345_1_{NB}.ipynb", UNTOUCHED,
                                                      when=(2026, 11, 20, 11, 0, 0))])
    assert collect(course, chapter, download).students == ["ada", "grace"]
    run_nbgrader(course.root, "autograde", "ch03", "--force")

    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        late = gradebook.find_submission("ch03", "grace")
        on_time = gradebook.find_submission("ch03", "ada")
        assert late.timestamp == datetime(*WHEN)             # 14:03 UTC, 2 h 3 min after the deadline
        assert late.total_seconds_late == 2 * 3600 + 3 * 60
        assert on_time.total_seconds_late == 0


def test_a_bonus_submission_brings_the_newest_of_each_mybabygrad_module(course, tmp_path):
    """The bonus runs on the student's own library: its modules, uploaded as files of their own, go to
    mybabygrad/ next to the notebook; no other name is taken, and a module without a notebook is reported."""
    bonus = course.chapter("capstone_mine")
    download = canvas_zip(tmp_path / "bonus.zip", [
        member(f"lovelaceada_12345_7_{bonus.notebook}.ipynb", PERFECT),
        member("lovelaceada_12345_7_ch02_tensor.py", b"# first upload\n", when=(2026, 11, 20, 10, 0, 0)),
        member("lovelaceada_12345_7_ch02_tensor-1.py", b"# second upload\n", when=(2026, 11, 20, 12, 0, 0)),
        member("lovelaceada_12345_7_ch09_trainer.py", b"# trainer\n"),
        member("lovelaceada_12345_7___init__.py", b"# package\n"),
        member("lovelaceada_12345_7_sitecustomize.py", b"import os\n"),
        member("hoppergrace_23456_8_ch02_tensor.py", b"# a module without its notebook\n"),
    ])
    run = collect(course, bonus, download)

    assert run.students == ["ada"]
    folder = course.root / "submitted" / "ada" / "capstone_mine"
    assert all_files(folder) == [f"{bonus.notebook}.ipynb", "mybabygrad/__init__.py", "mybabygrad/ch02_tensor.py",
                                 "mybabygrad/ch09_trainer.py", "timestamp.txt"]
    assert (folder / "mybabygrad" / "ch02_tensor.py").read_bytes() == b"# second upload\n"
    assert stat.S_IMODE((folder / "mybabygrad").stat().st_mode) == 0o755
    assert not (course.root / "submitted" / "grace").exists()
    with open(run.report, newline="", encoding="utf-8") as handle:
        problems = {row["file"]: row["problem"] for row in csv.DictReader(handle)}
    assert problems["lovelaceada_12345_7_ch02_tensor.py"] == "older upload: lovelaceada_12345_7_ch02_tensor-1.py kept"
    assert problems["lovelaceada_12345_7_ch09_trainer.py"] == ""
    assert problems["lovelaceada_12345_7_sitecustomize.py"].startswith("not a module of mybabygrad/")
    assert problems["hoppergrace_23456_8_ch02_tensor.py"].startswith("no capstone.ipynb collected for this student")


def test_a_chapter_takes_its_notebook_only(course, tmp_path):
    download = canvas_zip(tmp_path / "s.zip", [member(f"lovelaceada_12345_7_{NB}.ipynb"),
                                               member("lovelaceada_12345_7_ch02_tensor.py", b"# module\n")])
    collect(course, course.chapter("ch03"), download)
    assert all_files(submitted(course, "ada")) == [f"{NB}.ipynb", "timestamp.txt"]
    assert report_rows(course)["lovelaceada_12345_7_ch02_tensor.py"]["problem"].startswith("not a notebook")
