"""Where the committed course is (the repository's root, found from this file, so tests run from any
folder), and what a fresh copy of it needs."""
import fnmatch
import shutil
import subprocess
from pathlib import Path

from autograder.course import Course

ROOT = Path(__file__).resolve().parents[2]

# What `python -m autograder build` reads: no demo/, no README.md (tests/pipeline/test_build_steps.py holds it to that).
BUILD_INPUTS = ["course_config.py", "nbgrader_config.py", "chapters", "data"]
# What an instructor's clone needs to make every generated file from scratch: the demo students'
# mistakes, and the README whose chapter table is generated.
COURSE_INPUTS = BUILD_INPUTS + ["catalogue", "README.md"]


def copy_course_inputs(target, names=COURSE_INPUTS):
    for name in names:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.exists():
            shutil.copy2(source, target / name)
    return Course(target)


def ignored(relative, is_dir, patterns):
    """Whether .gitignore's simple patterns (`name`, `/name`, `name/`, `*.ext`) leave out `relative`."""
    for pattern in patterns:
        if pattern.endswith("/") and not is_dir:
            continue
        pattern = pattern.rstrip("/")
        if pattern.startswith("/"):
            if fnmatch.fnmatch(relative, pattern[1:]):
                return True
        elif fnmatch.fnmatch(relative.rsplit("/", 1)[-1], pattern):
            return True
    return False


def gitignore_patterns(root=ROOT):
    """.gitignore's patterns, and .git/ (which git leaves out of its own lists)."""
    gitignore = (Path(root) / ".gitignore").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in gitignore if line.strip() and not line.startswith("#")] + [".git/"]


def left_out(relative, patterns):
    """Whether `patterns` leave out the file `relative` or a folder it is in."""
    parts = relative.split("/")
    return any(ignored("/".join(parts[:i]), i < len(parts), patterns) for i in range(1, len(parts) + 1))


def course_files(root=ROOT, untracked=False):
    """The course's files, relative paths: git's list in a checkout (with `untracked`, also the files git does not
    ignore yet, as a clone of the next commit would hold them); in a copy without .git (`git archive`, as
    .ci/reproduce-elsewhere makes), every file .gitignore does not leave out."""
    extra = ["--others", "--exclude-standard"] if untracked else []
    listed = subprocess.run(["git", "ls-files", "--cached", *extra, "-z"], cwd=root, capture_output=True)
    if not listed.returncode:
        return sorted(p for p in listed.stdout.decode().split("\0") if p and (Path(root) / p).is_file())
    patterns = gitignore_patterns(root)
    found, folders = [], [root]
    while folders:
        for entry in sorted(folders.pop().iterdir()):
            relative = entry.relative_to(root).as_posix()
            if not ignored(relative, entry.is_dir(), patterns):
                (folders if entry.is_dir() else found).append(entry if entry.is_dir() else relative)
    return sorted(found)
