"""Binder builds the published repository (what `python -m autograder publish` writes, the repository its
badge points to) with repo2docker: `pip install -r requirements.txt` from the tree's root, with its
runtime.txt, then JupyterLab on release/. Simulated from scratch: the whole course published, a fresh
virtual environment, that install, then every release notebook executed headless from the published
tree. The only errors allowed are the student's: exercises not written yet (NotImplementedError) and
the checks they fail (AssertionError)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course import Course
from autograder.student import selfcheck
from autograder.student.progress import FAILED

from helpers import fresh_env
from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def binder_tree(tmp_path_factory):
    """The published tree of the whole course (every chapter, the solutions of all but the last), and a
    fresh environment built from it as repo2docker builds it; made once per test run."""
    def make(folder):
        tree = folder / "tree"
        subprocess.run([sys.executable, "-m", "autograder", "--root", str(ROOT), "publish", str(tree),
                        "--chapters", *CHAPTERS, "--solutions", *CHAPTERS[:-1]],
                       check=True, capture_output=True, timeout=300)
        env = fresh_env.create(folder / "venv")
        env.pip_install("-r", "requirements.txt", cwd=tree)
        return str(tree), str(env.root)
    tree, root = once_per_run(tmp_path_factory, "binder-env", make)[1]
    return Path(tree), fresh_env.FreshEnv(root)


@pytest.fixture(scope="module")
def binder_env(binder_tree):
    return binder_tree[1]


def test_jupyterlab_has_nbgrader_validate(binder_env):
    """The Validate button: nbgrader's lab extension and its validate server extension, both enabled."""
    labextensions = binder_env.run(binder_env.bin / "jupyter", "labextension", "list")
    listing = labextensions.stdout + labextensions.stderr
    assert any("@jupyter/nbgrader" in line and "enabled" in line and "OK" in line for line in listing.splitlines())
    servers = binder_env.run(binder_env.bin / "jupyter", "server", "extension", "list")
    listing = servers.stdout + servers.stderr
    assert any("nbgrader.server_extensions.validate_assignment" in line and "enabled" in line
               for line in listing.splitlines()), listing


def test_binder_holds_the_students_stack_alone(binder_env):
    """The published requirements.txt keeps the course's pins of what students need: not the grading
    engine, the gradebook driver or the tests' tools, which only slow Binder's build."""
    find = "import importlib.util as u, sys; print(*(m for m in sys.argv[1:] if u.find_spec(m)))"
    wanted = ("numpy", "matplotlib", "tqdm", "nbgrader", "jupyterlab", "autograder")
    unwanted = ("distributed", "psycopg", "playwright", "pytest", "ruff", "bokeh", "dask_jobqueue")
    found = binder_env.run(binder_env.python, "-c", find, *wanted, *unwanted).stdout.split()
    assert (sorted(set(found) & set(wanted)), sorted(set(found) & set(unwanted))) == (sorted(wanted), [])
    def pinned(words):
        return {w.split("==")[0].split("[")[0].lower().replace("_", "-"): w.split("==")[1] for w in words if "==" in w}
    pins = pinned((ROOT / "requirements.txt").read_text().split())
    installed = pinned(binder_env.run(binder_env.python, "-m", "pip", "freeze").stdout.split())
    assert {name: version for name, version in installed.items() if pins.get(name, version) != version} == {}


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_every_release_notebook_runs_in_the_binder_environment(binder_tree, tmp_path, chapter_id):
    tree, binder_env = binder_tree
    chapter = COURSE.chapter(chapter_id)
    release = tree / COURSE.notebook(COURSE.config.RELEASE_DIR, chapter).relative_to(ROOT)
    folder = tmp_path / chapter_id
    shutil.copytree(release.parent, folder)
    before = sorted(p.name for p in folder.iterdir())
    executed = binder_env.execute(folder / release.name)
    assert sorted(p.name for p in folder.iterdir() if p.name != "__pycache__") == before, "set-up fetched files"
    errors = fresh_env.errors(executed)
    assert fresh_env.environment_errors(executed) == []
    assert errors, "an untouched release notebook must fail its checks"
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "every cell ran"
    stderr = [c.id for c in code for o in c.outputs if o.output_type == "stream" and o.name == "stderr"]
    assert stderr == [], "set-up cells must not write to stderr"
    assert executed.metadata.kernelspec.name == "python3"
    # every check fails with a message, as the student's table shows it (`python -m autograder check`)
    results = selfcheck.results_of(executed)
    points = {c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader["points"] for c in code
              if c.metadata.get("nbgrader", {}).get("grade")}
    assert {r.exercise: r.points for r in results} == points and len(results) == len(points) > 0
    assert [r for r in results if r.status != FAILED or r.earned != 0 or not r.message.strip()] == []
    progress = "".join(o.get("text", "") for o in executed.cells[-1].outputs)
    assert f"Progress: 0/{COURSE.autograded_points(chapter)} points (0%)" in progress
