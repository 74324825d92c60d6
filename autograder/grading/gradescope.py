"""Build a Gradescope autograder zip for one chapter, following Gradescope's specification.

The zip holds, at its root, `setup.sh` (run once when Gradescope builds its image: a virtual
environment with the course's pinned stack, and the unprivileged user the student's kernel runs as)
and `run_autograder` (run for each submission: the real `nbgrader autograde`, then
`results/results.json`; see gradescope_runner). Next to them: the course package and, in `course/`,
what nbgrader needs to grade the chapter and nothing more. Gradescope is a machine outside the
course, so no solution and no credential goes there (kit.py, as for a Dask worker).
"""
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path

from nbgrader.api import Gradebook

from autograder.grading.gradebook_merge import copy_assignment, create_like
from autograder.grading.kit import write_grading_course

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
apt-get update
PYTHON=python3.11
if ! apt-get install -y --no-install-recommends python3.11 python3.11-venv; then
    apt-get install -y --no-install-recommends python3 python3-venv
    PYTHON=python3
fi
# The student's kernel runs as this user: it cannot read the hidden tests or write the results.
id -u babygrad-student >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin babygrad-student
"$PYTHON" -m venv /autograder/venv
cd /autograder/source
/autograder/venv/bin/python -m pip install --quiet --upgrade pip
/autograder/venv/bin/python -m pip install --quiet -r requirements.txt
# 1.3 s less per submission's nbgrader start: see the course's Makefile (setup)
/autograder/venv/bin/python -m pip uninstall --quiet --yes rfc3987-syntax
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission. It always writes results/results.json.
# AUTOGRADER_ROOT and BABYGRAD_PYTHON let the course's tests run it outside Gradescope.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{BABYGRAD_PYTHON:-$ROOT/venv/bin/python}}"
export PYTHONPATH="$ROOT/source${{PYTHONPATH:+:$PYTHONPATH}}"
cd "$ROOT/source"
exec "$PYTHON" -m autograder.grading.gradescope_runner {chapter} --root "$ROOT"
"""

PACKAGE_FILES = ["requirements.txt"]        # what setup.sh installs


def build_autograder_zip(course, chapter, gradebook_url=None):
    """gradescope/<chapter>_autograder.zip; returns its path. The chapter's cells are read from the
    gradebook at `gradebook_url` (default: the course's), which nbgrader filled when it registered them."""
    cfg = course.config
    target = course.root / cfg.GRADESCOPE_DIR / f"{chapter.id}_autograder.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"gradescope-{chapter.id}-") as scratch:
        tree = Path(scratch)
        _write_script(tree / "setup.sh", SETUP_SH)
        _write_script(tree / "run_autograder", RUN_AUTOGRADER.format(chapter=chapter.id))
        package_root = Path(__file__).resolve().parents[2]      # the course repository
        for name in PACKAGE_FILES:
            for base in (course.root, package_root):
                if (base / name).exists():
                    shutil.copy2(base / name, tree / name)
                    break
        shutil.copytree(Path(__file__).resolve().parents[1], tree / "autograder",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        grading_course = tree / "course"
        write_grading_course(course, chapter, grading_course)
        shipped = f"sqlite:///{grading_course / 'gradebook.db'}"
        with Gradebook(gradebook_url or course.gradebook_url, course_id=cfg.COURSE_ID) as source:
            create_like(source, shipped)
            with Gradebook(shipped, course_id=cfg.COURSE_ID) as target_gb:
                copy_assignment(source, target_gb, chapter.id)
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(tree.rglob("*")):
                if path.is_file():
                    info = zipfile.ZipInfo.from_file(path, path.relative_to(tree).as_posix())
                    with open(path, "rb") as handle:
                        archive.writestr(info, handle.read(), zipfile.ZIP_DEFLATED)
    return target


def _write_script(path, text):
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
