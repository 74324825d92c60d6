"""Binder builds the environment from requirements.txt (repo2docker) and opens JupyterLab on release/.
Simulated from scratch: a fresh virtual environment, `pip install -r requirements.txt` from the
repository root, then every release notebook executed headless. The only errors allowed are the
student's: exercises not written yet (NotImplementedError) and the checks they fail (AssertionError)."""
import shutil

import pytest

from autograder.course import Course

from helpers import fresh_env
from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory):
    """A fresh environment from requirements.txt, as Binder builds it; made once per test run."""
    def make(folder):
        env = fresh_env.create(folder / "venv")
        env.pip_install("-r", "requirements.txt", cwd=ROOT)
        return env
    return once_per_run(tmp_path_factory, "binder-env", make)[1]


def test_jupyterlab_has_nbgrader_validate(binder_env):
    """The Validate button: nbgrader's lab extension and its validate server extension, both enabled."""
    labextensions = binder_env.run(binder_env.bin / "jupyter", "labextension", "list")
    listing = labextensions.stdout + labextensions.stderr
    assert any("@jupyter/nbgrader" in line and "enabled" in line and "OK" in line for line in listing.splitlines())
    servers = binder_env.run(binder_env.bin / "jupyter", "server", "extension", "list")
    listing = servers.stdout + servers.stderr
    assert any("nbgrader.server_extensions.validate_assignment" in line and "enabled" in line
               for line in listing.splitlines()), listing


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_every_release_notebook_runs_in_the_binder_environment(binder_env, tmp_path, chapter_id):
    chapter = COURSE.chapter(chapter_id)
    release = COURSE.notebook(COURSE.config.RELEASE_DIR, chapter)
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
