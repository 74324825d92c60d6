"""`python -m autograder permissions` warns, with the chmod that fixes it, wherever other users of the
machine can read or change the course's answers, submissions or grades, and checks nbgrader's exchange
against the modes nbgrader itself sets. Real files and modes in temporary folders; as root, also a real
second Linux user who reads before the fix and is refused after it."""
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from autograder.course import Course
from autograder.grading import permissions
from autograder.grading.nbgrader_cli import run_nbgrader

from helpers.course_paths import ROOT

PRIVATE = ["source/ch03", "solutions/ch03", "submitted/ann/ch03", "autograded", "feedback", "grading_ledger",
           ".venv/bin", "autograder/grading", "chapters"]


def private_course(folder):
    """A course folder whose every path is the owner's alone, in a parent that others cannot enter."""
    folder.chmod(0o700)
    root = folder / "course"
    root.mkdir()
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy(ROOT / name, root / name)
    for name in PRIVATE:
        (root / name).mkdir(parents=True)
    (root / "source/ch03/autodiff.ipynb").write_text("{}", encoding="utf-8")
    (root / "gradebook.db").write_bytes(b"")
    for path in [root, *root.rglob("*")]:
        path.chmod(0o700 if path.is_dir() else 0o600)
    return Course(root)


def nbgrader_exchange(folder, course_id):
    """An exchange with the modes nbgrader's release_assignment and submit give it, the root sticky."""
    exchange = folder / "exchange"
    for path, mode in ((exchange, 0o1777), (exchange / course_id, 0o755), (exchange / course_id / "outbound", 0o755),
                       (exchange / course_id / "outbound" / "ch03", 0o755), (exchange / course_id / "inbound", 0o2733)):
        path.mkdir()
        path.chmod(mode)
    return exchange


def run_command(course, *args):
    return subprocess.run([sys.executable, "-m", "autograder", "--root", str(course.root), "permissions", *args],
                          capture_output=True, text=True)


def test_a_private_course_and_nbgraders_exchange_raise_nothing(tmp_path):
    course = private_course(tmp_path)
    exchange = nbgrader_exchange(tmp_path, course.config.COURSE_ID)
    problems, _ = permissions.check(course, exchange)
    assert problems == []
    done = run_command(course, "--exchange", str(exchange))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No other user can read or change" in done.stdout


@pytest.mark.parametrize("name", ["source", "solutions", "submitted", "autograder", ".venv", "grading_ledger",
                                  "gradebook.db"])
def test_each_readable_path_is_named_with_what_others_can_do_and_the_fix(tmp_path, name):
    course = private_course(tmp_path)
    path = course.root / name
    path.chmod(0o755 if path.is_dir() else 0o644)
    problems, _ = permissions.check(course, tmp_path / "no-exchange")
    assert [p.path for p in problems] == [path]
    line = problems[0].line()
    assert line.startswith(f"{path}: others can ")
    assert ("list and enter it" if path.is_dir() else "read it") in line
    assert line.endswith(f"Fix: chmod o-rwx {path}")
    done = run_command(course, "--exchange", str(tmp_path / "no-exchange"))
    assert done.returncode == 1
    assert line in done.stdout


def test_a_folder_others_can_write_says_so(tmp_path):
    course = private_course(tmp_path)
    (course.root / "submitted").chmod(0o777)
    [problem] = permissions.check(course, tmp_path / "no-exchange")[0]
    assert "others can list and enter and create, rename and delete files in it" in problem.what


def test_the_owners_open_folders_above_the_course_are_named_up_to_the_first_closed_one(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    course = private_course(home)
    home.chmod(0o755)                      # Debian's home folders
    tmp_path.chmod(0o755)
    problems, _ = permissions.check(course, tmp_path / "no-exchange")
    named = [p.path for p in problems]
    assert named[:2] == [home, tmp_path], named
    assert not tmp_path.parent.stat().st_mode & 0o001, "pytest's base folder is 0700: the path closes there"
    assert tmp_path.parent not in named


def test_fix_closes_every_path_and_the_check_passes_after(tmp_path):
    course = private_course(tmp_path)
    for name in ("source", "submitted", "gradebook.db", ""):
        path = course.root / name
        path.chmod(0o777 if path.is_dir() else 0o666)
    before = run_command(course, "--exchange", str(tmp_path / "no-exchange"))
    assert before.returncode == 1 and before.stdout.count("Fix: chmod o-rwx") == 4, before.stdout
    fixed = run_command(course, "--exchange", str(tmp_path / "no-exchange"), "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "fixed 4 of 4" in fixed.stdout
    assert oct((course.root / "source").stat().st_mode & 0o777) == oct(0o770)
    assert oct((course.root / "gradebook.db").stat().st_mode & 0o777) == oct(0o660)


def test_an_exchange_root_without_the_sticky_bit_and_a_listable_inbound_are_warned(tmp_path):
    course = private_course(tmp_path)
    exchange = nbgrader_exchange(tmp_path, course.config.COURSE_ID)
    exchange.chmod(0o777)
    inbound = exchange / course.config.COURSE_ID / "inbound"
    inbound.chmod(0o777)
    problems, _ = permissions.check(course, exchange)
    said = {p.path: p for p in problems}
    assert set(said) == {exchange, inbound}
    assert "no sticky bit" in said[exchange].what and said[exchange].fix == f"chmod +t {exchange}"
    assert "others can list every submission in it" in said[inbound].what
    assert said[inbound].fix == f"chmod 2733 {inbound}"


def test_an_inbound_students_cannot_write_is_warned(tmp_path):
    course = private_course(tmp_path)
    exchange = nbgrader_exchange(tmp_path, course.config.COURSE_ID)
    inbound = exchange / course.config.COURSE_ID / "inbound"
    inbound.chmod(0o2700)
    [problem] = permissions.check(course, exchange)[0]
    assert problem.path == inbound and "students cannot submit into it" in problem.what


def test_the_expected_modes_are_the_ones_nbgrader_release_assignment_sets(tmp_path):
    """The real `nbgrader release_assignment` makes the exchange: only the sticky bit it leaves out is warned."""
    course = private_course(tmp_path)
    shutil.rmtree(course.root / "autograder")      # nbgrader imports the course's package, not this stand-in
    shutil.copytree(ROOT / "release/ch03", course.root / "release/ch03")
    exchange = tmp_path / "exchange"
    run_nbgrader(course.root, "release_assignment", "ch03", f"--Exchange.root={exchange}",
                 f"--CourseDirectory.db_url=sqlite:///{tmp_path / 'release.db'}")
    assert (exchange / course.config.COURSE_ID / "outbound/ch03/autodiff.ipynb").is_file()
    (course.root / "release").chmod(0o700)
    problems, _ = permissions.check(course, exchange)
    assert [(p.path, p.fix) for p in problems] == [(exchange, f"chmod +t {exchange}")]
    exchange.chmod(0o1777)
    assert permissions.check(course, exchange)[0] == []
    run_nbgrader(course.root, "release_assignment", "ch03", "--force", f"--Exchange.root={exchange}",
                 f"--CourseDirectory.db_url=sqlite:///{tmp_path / 'release.db'}")
    assert oct(exchange.stat().st_mode & 0o7777) == oct(0o1777), "nbgrader's next release dropped the sticky bit"


def test_the_exchange_comes_from_nbgraders_configuration(tmp_path):
    course = private_course(tmp_path)
    with open(course.root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(f"\nget_config().Exchange.root = {str(tmp_path / 'course-exchange')!r}\n")
    assert permissions.configured_exchange(course) == tmp_path / "course-exchange"


@pytest.fixture
def other_user():
    """A temporary Linux user with no home folder, removed afterwards (needs root)."""
    if os.geteuid() != 0:
        pytest.skip("creating a second Linux user needs root")
    name = f"bgstudent{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False)


def as_user(name, *command):
    return subprocess.run(["runuser", "-u", name, "--", *command], capture_output=True, text=True)


def test_another_user_reads_what_is_warned_and_nothing_after_the_fix(other_user):
    folder = Path(tempfile.mkdtemp(prefix="bg-permissions-"))      # outside pytest's 0700 base folder
    srv = Path(tempfile.mkdtemp(prefix="bg-exchange-"))             # like /srv/nbgrader, not the course's
    try:
        course = private_course(folder)
        folder.chmod(0o755)
        for path in [course.root, *course.root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)          # a clone under Debian's defaults
        srv.chmod(0o755)
        exchange = nbgrader_exchange(srv, course.config.COURSE_ID)
        exchange.chmod(0o777)
        answers = course.root / "source/ch03/autodiff.ipynb"
        assert as_user(other_user, "cat", str(answers)).returncode == 0
        moved = as_user(other_user, "mv", str(exchange / "babygrad"), str(exchange / "stolen"))
        assert moved.returncode == 0, moved.stderr
        (exchange / "stolen").rename(exchange / "babygrad")

        warned = run_command(course, "--exchange", str(exchange))
        assert warned.returncode == 1
        assert f"{answers.parent.parent}: others can list and enter it" in warned.stdout
        assert f"{exchange}: others can rename babygrad/" in warned.stdout
        fixed = run_command(course, "--exchange", str(exchange), "--fix")
        assert fixed.returncode == 0, fixed.stdout

        refused = as_user(other_user, "cat", str(answers))
        assert refused.returncode != 0 and "Permission denied" in refused.stderr
        assert as_user(other_user, "ls", str(course.root / "submitted")).returncode != 0
        moved = as_user(other_user, "mv", str(exchange / "babygrad"), str(exchange / "stolen"))
        assert moved.returncode != 0 and "not permitted" in moved.stderr
    finally:
        shutil.rmtree(folder)
        shutil.rmtree(srv)


def test_a_folder_everyone_shares_above_the_course_is_neither_named_nor_changed(tmp_path):
    """A sticky, world-writable folder (/tmp) is everyone's by design: the walk stops there and --fix leaves it."""
    shared = tmp_path / "shared"
    shared.mkdir()
    home = shared / "home"
    home.mkdir()
    course = private_course(home)
    home.chmod(0o755)
    shared.chmod(0o1777)
    tmp_path.chmod(0o755)
    problems, _ = permissions.check(course, tmp_path / "no-exchange")
    assert [p.path for p in problems] == [home]
    assert run_command(course, "--exchange", str(tmp_path / "no-exchange"), "--fix").returncode == 0
    assert oct(shared.stat().st_mode & 0o7777) == oct(0o1777)
