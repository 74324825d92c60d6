"""`nbgrader validate`, and JupyterLab's Validate button, work on a student's release folder (and in the
course root, for an instructor), with the course's settings: the student tree has no course_config.py, only the nbgrader_config.py files the build
writes into release/ and its chapter folders (autograder/build/student_config.py)."""
import json
import re
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import nbformat
import pytest

from autograder.build import student_config
from autograder.course import Course

from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT
from helpers.demo_students import demo_notebook
from helpers.jupyter_servers import fresh_jupyter_env as student_env, serving

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]
SOLVED = COURSE.chapter("ch10")     # the slowest notebook: its capstone cell trains a CNN on MNIST
# The Lab extension's own config loading (nbgrader/server_extensions/validate_assignment/handlers.py),
# run in the folder the server was started in.
LAB_CONFIG = ("import json; from nbgrader.server_extensions.validate_assignment.handlers import "
              "ValidateAssignmentHandler as H; print(json.dumps(H.load_config(None)))")


def published_release(tmp_path, student=None):
    """release/ alone, as the published student tree carries it, in a folder outside the course root
    (no nbgrader_config.py above it), with the demo student's chapter 10 notebook when one is named."""
    release = tmp_path / "published" / COURSE.config.RELEASE_DIR
    shutil.copytree(ROOT / COURSE.config.RELEASE_DIR, release,
                    ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "mybabygrad"))
    assert not any((folder / student_config.FILE_NAME).exists() for folder in release.parents)
    if student:
        nbformat.write(demo_notebook(SOLVED.id, student), release / SOLVED.id / f"{SOLVED.notebook}.ipynb")
    return release


def effective_config(cwd, tmp_path):
    """{"cli": ..., "lab": ...}: the settings `nbgrader validate` and the Lab extension read when run in `cwd`."""
    env = student_env(tmp_path)
    cli = subprocess.run([sys.executable, "-m", "nbgrader", "validate", "--ValidateApp.show_config_json=True"],
                         cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    lab = subprocess.run([sys.executable, "-c", LAB_CONFIG], cwd=cwd, capture_output=True, text=True, timeout=120,
                         env=env)
    assert cli.returncode == 0 and lab.returncode == 0, cli.stderr + lab.stderr
    return {name: {section: values for section, values in json.loads(done.stdout).items() if values}
            for name, done in (("cli", cli), ("lab", lab))}


@pytest.mark.parametrize("where", ["release root", "chapter folder"])
def test_validate_outside_the_course_uses_the_course_settings(tmp_path, where):
    """From release/ (`cd release; jupyter lab`, or a published tree whose root is release/) and from a
    chapter folder: the course's cell timeout, not nbgrader's 30 s, and no grading-only setting."""
    release = published_release(tmp_path)
    cwd = release if where == "release root" else release / SOLVED.id
    assert COURSE.config.CELL_TIMEOUT_SECONDS != 30, "nbgrader's own default would pass unnoticed"
    expected = {}
    for (section, name), value in student_config.settings(COURSE.config).items():
        expected.setdefault(section, {})[name] = value
    assert expected["Execute"]["timeout"] == COURSE.config.CELL_TIMEOUT_SECONDS
    assert effective_config(cwd, tmp_path) == {"cli": expected, "lab": expected}


@pytest.mark.parametrize("where", ["release root", "course root"])
def test_validate_kernels_start_with_the_course_kernel_environment(tmp_path, where):
    """One BLAS thread, no progress bars, set before the notebook's first line (threaded BLAS made chapter 10's
    capstone outrun the cell timeout on a busy machine): a notebook checks its own kernel, validated by a
    student in the release root and by an instructor in the course root (its settings come from
    course_config.py there: the same Validate, the formgrader's button included)."""
    cwd = published_release(tmp_path) if where == "release root" else ROOT
    cell = nbformat.v4.new_code_cell(
        "import os, sys\nassert 'numpy' not in sys.modules, 'numpy was imported before the environment was set'\n"
        f"assert {{k: os.environ.get(k) for k in {sorted(COURSE.config.KERNEL_ENVIRONMENT)!r}}} == "
        f"{COURSE.config.KERNEL_ENVIRONMENT!r}")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "test_environment", "points": 1, "solution": False,
                                 "locked": True, "schema_version": 3}
    notebook = nbformat.v4.new_notebook(cells=[cell])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = (cwd if where == "release root" else tmp_path) / "environment.ipynb"   # never into the course itself
    nbformat.write(notebook, path)
    env = {k: v for k, v in student_env(tmp_path).items() if k not in COURSE.config.KERNEL_ENVIRONMENT}
    done = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(path)], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=env)
    assert "Success! Your notebook passes all the tests." in done.stdout, done.stdout + done.stderr


def test_validate_shows_every_line_of_a_checks_message_whole(tmp_path):
    """nbgrader's Validator cuts each line of a failed cell's error at its width (90 by default, "..." after):
    with the students' nbgrader_config.py, a check's longest line comes through whole."""
    from nbgrader.validator import Validator
    from traitlets.config.loader import PyFileConfigLoader

    (tmp_path / student_config.FILE_NAME).write_text(student_config.text(COURSE.config))
    config = PyFileConfigLoader(student_config.FILE_NAME, path=str(tmp_path)).load_config()
    line = "SGD(lr=0.1, momentum=0.9, weight_decay=0.1): after step 2 of 4, parameter 1 is wrong " * 6
    assert Validator()._indent(line).endswith("..."), "nbgrader's default cuts it"
    assert Validator(config=config)._indent(line) == Validator(config=config).indent + line


@pytest.fixture(scope="module")
def validated_release(tmp_path_factory):
    """{chapter id: what `nbgrader validate` said about its untouched release notebook}: one nbgrader process for
    every chapter (each section starts with its "Validating" line), in a copy of release/, once per test run."""
    def make(folder):
        release = folder / "release"
        shutil.copytree(ROOT / COURSE.config.RELEASE_DIR, release,
                        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "mybabygrad"))
        paths = [COURSE.notebook(COURSE.config.RELEASE_DIR, c).relative_to(ROOT / COURSE.config.RELEASE_DIR)
                 for c in COURSE.chapters]
        done = subprocess.run([sys.executable, "-m", "nbgrader", "validate", *map(str, paths)], cwd=release,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200,
                              env=dict(student_env(folder), PYTHONUNBUFFERED="1"))     # the log and the report in order
        sections = re.split(r"^\[ValidateApp \| INFO\] Validating '", done.stdout, flags=re.M)[1:]
        return {Path(section.split("'", 1)[0]).parent.name: section for section in sections}
    return once_per_run(tmp_path_factory, "validated-release", make)[1]


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_validate_lists_the_failing_checks_of_a_release_notebook(validated_release, chapter_id):
    output = validated_release[chapter_id]
    assert "VALIDATION FAILED" in output and "The following cell failed:" in output
    assert "# Check test_" in output, "the failing check cells are named"
    # an unwritten exercise shows up either as the stub's own error or as a check's teaching message
    assert "NotImplementedError" in output or "is not implemented yet" in output
    assert "Traceback" not in output.split("VALIDATION FAILED")[0], "validate itself crashed"


def test_validate_button_passes_a_solved_notebook(tmp_path):
    """One solved chapter, the slowest, through the Validate button's own request to nbgrader's server
    extension, in the published layout with the server started in release/."""
    release = published_release(tmp_path, "perfect")
    with serving(release, tmp_path, student_env(tmp_path)) as (base, token):
        request = urllib.request.Request(
            f"{base}/assignments/validate", method="POST", headers={"Authorization": f"token {token}"},
            data=urllib.parse.urlencode({"path": f"{SOLVED.id}/{SOLVED.notebook}.ipynb"}).encode())
        with urllib.request.urlopen(request, timeout=900) as response:
            reply = json.loads(response.read())
    assert reply["success"], reply["value"]
    assert reply["value"] == {}, f"changed or failed cells: {str(reply['value'])[:2000]}"
