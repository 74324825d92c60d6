"""`python -m autograder hub`'s files, read as JupyterHub and nbgrader read them (traitlets), without a hub:
students' Validate gets the course's settings, the instructor's formgrader the course's root wherever the
server starts, and each user's server the environment meant for them. tests/system/test_jupyterhub.py runs them."""
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from traitlets.config import Config, PyFileConfigLoader

from autograder.build import hub
from autograder.course import Course

from helpers.course_paths import ROOT

COURSE = Course(ROOT)
LAYOUT = hub.HubLayout("teacher", ROOT, Path("/opt/babygrad/students"))


def written(tmp_path):
    subprocess.run([sys.executable, "-m", "autograder", "hub", str(tmp_path / "hub"), "--instructor", "teacher",
                    "--students-env", "/opt/babygrad/students"], cwd=ROOT, check=True, capture_output=True)
    return tmp_path / "hub"


def load(path, cwd):
    """The file as nbgrader loads it from an environment's etc/jupyter, with the process in `cwd`."""
    here = os.getcwd()
    os.chdir(cwd)
    try:
        return PyFileConfigLoader(path.name, str(path.parent)).load_config()
    finally:
        os.chdir(here)


def test_students_validate_with_the_course_timeout_and_kernel_environment(tmp_path):
    config = load(written(tmp_path) / "students/etc/jupyter/nbgrader_config.py", tmp_path)
    assert config.Execute.timeout == COURSE.config.CELL_TIMEOUT_SECONDS
    assert "'OPENBLAS_NUM_THREADS': '1'" in config.Execute.extra_arguments[0]
    assert config.Exchange.root == "/srv/nbgrader/exchange"
    assert config.CourseDirectory.course_id == COURSE.config.COURSE_ID


def test_instructors_formgrader_finds_the_course_from_the_home_folder_only(tmp_path):
    path = written(tmp_path) / "instructor/etc/jupyter/nbgrader_config.py"
    home = load(path, tmp_path)
    assert home.CourseDirectory.root == str(ROOT) and home.HTMLExporter.sanitize_html is True
    in_a_course_folder = load(path, ROOT)              # there the folder's own nbgrader_config.py decides
    assert "root" not in in_a_course_folder.CourseDirectory


def test_each_user_gets_the_environment_meant_for_them_and_the_hub_listens_on_loopback(tmp_path):
    config = Config()
    namespace = {"get_config": lambda: config}
    exec(compile((written(tmp_path) / "jupyterhub_config.py").read_text(), "jupyterhub_config.py", "exec"), namespace)
    assert config.JupyterHub.bind_url.startswith("http://127.0.0.1:")
    commands = {}
    for name in ("teacher", "alice"):
        spawner = SimpleNamespace(user=SimpleNamespace(name=name), environment={}, cmd=None)
        config.Spawner.pre_spawn_hook(spawner)
        commands[name] = spawner.cmd
    assert commands == {"teacher": [str(ROOT / ".venv/bin/jupyterhub-singleuser")],
                        "alice": ["/opt/babygrad/students/bin/jupyterhub-singleuser"]}


def test_students_environment_is_pinned_and_not_editable():
    lines = hub.students_requirements(COURSE).splitlines()
    assert "jupyterhub==6.1.1" in lines and "nbgrader==0.9.6" in lines
    assert not [line for line in lines if line.startswith("-e")]
