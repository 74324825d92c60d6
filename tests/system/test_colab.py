"""Colab opens one release notebook alone. Simulated: the notebook copied into an empty folder, a
fresh environment with only the course package's wheel (and a Jupyter kernel), and the chapter's
release folder served on localhost in place of GitHub. The set-up cell must fetch the support files,
and the notebook must run up to the first exercise without an import error, its checks working."""
import shutil
import subprocess
import sys

import pytest

from autograder.build import frame, student_config
from autograder.course import Course
from autograder.student import support

from helpers import fresh_env
from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]
pytestmark = pytest.mark.slow


def course_wheel(folder):
    """The course package built as a wheel from a clean copy of its sources, in `folder`/dist."""
    dist, source = folder / "dist", folder / "package-source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):            # what the package is built from; the build
        shutil.copy(ROOT / name, source / name)             # leaves no build/ or egg-info in the clone
    for folder_name in ("autograder", "jupyter-config"):    # the package, and the server extension's switch
        shutil.copytree(ROOT / folder_name, source / folder_name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(source)],
                   check=True, capture_output=True, timeout=600)
    wheels = list(dist.glob("babygrad_course-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def environment_with_the_wheel(folder, python=sys.executable):
    """A fresh environment of `python` holding the course package from its wheel, plus what runs a notebook."""
    env = fresh_env.create(folder / "venv", python)
    env.pip_install(course_wheel(folder), "ipykernel", "nbclient")
    where = env.run(env.python, "-c", "import autograder; print(autograder.__file__)", cwd=folder / "dist").stdout
    assert str(env.root) in where, f"autograder must come from the wheel, not {where}"
    return env


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
    """The wheel's environment on the grader's Python, made once per test run."""
    return once_per_run(tmp_path_factory, "wheel-env", environment_with_the_wheel)[1]


def test_wheel_carries_no_chapter_solution(wheel_env):
    """Support files (earlier chapters' solutions) are fetched per chapter, never shipped in the package."""
    files = wheel_env.run(wheel_env.python, "-c", "import importlib.metadata as m; "
                          "print('\\n'.join(str(f) for f in m.files('babygrad-course')))").stdout.split()
    assert not [f for f in files if "earlier_chapters" in f or f.endswith(".ipynb")]


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_release_notebook_alone_runs_with_only_the_wheel(wheel_env, tmp_path, chapter_id):
    runs_alone(wheel_env, tmp_path, chapter_id)


# Students' machines and Colab run newer Pythons than the grader's: every minor version pyproject.toml admits
# besides the grader's own runs the chapters of ops and of convolution alone with the wheel.
NEWER_PYTHONS = ["3.12", "3.13"]


def test_the_pythons_tried_are_those_the_package_admits():
    import tomllib

    from packaging.specifiers import SpecifierSet
    admitted = SpecifierSet(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])
    grader = "%d.%d" % sys.version_info[:2]
    assert [v for v in (f"3.{minor}" for minor in range(8, 20)) if f"{v}.0" in admitted] == [grader, *NEWER_PYTHONS]


@pytest.mark.parametrize("version", NEWER_PYTHONS)
def test_release_notebooks_run_alone_on_newer_pythons(tmp_path, version):
    python = fresh_env.interpreter(version)
    if python is None:
        pytest.skip(f"no Python {version} on this machine (on PATH or pyenv's): nothing to try it on")
    env = environment_with_the_wheel(tmp_path, python)
    for chapter_id in ("ch03", "ch10"):
        runs_alone(env, tmp_path / chapter_id, chapter_id)


def runs_alone(wheel_env, tmp_path, chapter_id):
    """The chapter's release notebook, alone in an empty folder as Colab opens it, runs in `wheel_env`: its
    set-up cell fetches the support files, nothing before the first exercise fails, the first check teaches."""
    chapter = COURSE.chapter(chapter_id)
    release = COURSE.notebook(COURSE.config.RELEASE_DIR, chapter)
    alone = tmp_path / "content"
    alone.mkdir(parents=True)
    shutil.copy(release, alone)
    with fresh_env.serve(release.parent) as url:
        executed = wheel_env.execute(alone / release.name, **{support.BASE_URL_VARIABLE: url})

    # every file of the chapter's folder but the notebook and Validate's settings (Colab has no Validate)
    shipped = sorted(p for p in release.parent.rglob("*")
                     if p.is_file() and p.suffix != ".ipynb" and p.name != student_config.FILE_NAME)
    assert shipped, "the chapter has no support files to fetch"
    for path in shipped:
        fetched = alone / path.relative_to(release.parent)
        assert fetched.read_bytes() == path.read_bytes(), f"{fetched.name} was not fetched"
    setup = next(c for c in executed.cells if c.id == frame.SETUP_ID)
    assert "Downloaded" in "".join(o.get("text", "") for o in setup.outputs)

    problems = fresh_env.environment_errors(executed)
    assert problems == [], "set-up errors (import, name) in a notebook opened alone"
    position = {c.id: i for i, c in enumerate(executed.cells)}
    first_exercise = next(i for i, c in enumerate(executed.cells) if c.metadata.get("nbgrader", {}).get("solution"))
    assert [e for e in fresh_env.errors(executed) if position[e[0]] < first_exercise] == [], \
        "a cell before the first exercise failed"
    first_check = next(c for c in executed.cells if c.metadata.get("nbgrader", {}).get("grade"))
    (name, message), = [(o.ename, o.evalue) for o in first_check.outputs if o.output_type == "error"]
    assert name == "AssertionError" and len(message.strip()) > 20, "the first check gave no teaching message"
    progress = "".join(o.get("text", "") for o in executed.cells[-1].outputs)
    assert f"Progress: 0/{COURSE.autograded_points(chapter)} points (0%)" in progress

