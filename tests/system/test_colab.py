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


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
    """A fresh environment holding the course package from its wheel, plus what runs a notebook;
    made once per test run."""
    def make(folder):
        dist, source = folder / "dist", folder / "package-source"
        source.mkdir()
        for name in ("pyproject.toml", "README.md"):            # what the package is built from; the build
            shutil.copy(ROOT / name, source / name)             # leaves no build/ or egg-info in the clone
        shutil.copytree(ROOT / "autograder", source / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(source)],
                       check=True, capture_output=True, timeout=600)
        wheels = list(dist.glob("babygrad_course-*.whl"))
        assert len(wheels) == 1, wheels
        env = fresh_env.create(folder / "venv")
        env.pip_install(wheels[0], "ipykernel", "nbclient")
        where = env.run(env.python, "-c", "import autograder; print(autograder.__file__)", cwd=dist).stdout
        assert str(env.root) in where, f"autograder must come from the wheel, not {where}"
        return env
    return once_per_run(tmp_path_factory, "wheel-env", make)[1]


def test_wheel_carries_no_chapter_solution(wheel_env):
    """Support files (earlier chapters' solutions) are fetched per chapter, never shipped in the package."""
    files = wheel_env.run(wheel_env.python, "-c", "import importlib.metadata as m; "
                          "print('\\n'.join(str(f) for f in m.files('babygrad-course')))").stdout.split()
    assert not [f for f in files if "earlier_chapters" in f or f.endswith(".ipynb")]


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_release_notebook_alone_runs_with_only_the_wheel(wheel_env, tmp_path, chapter_id):
    chapter = COURSE.chapter(chapter_id)
    release = COURSE.notebook(COURSE.config.RELEASE_DIR, chapter)
    alone = tmp_path / "content"
    alone.mkdir()
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

