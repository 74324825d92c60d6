"""The cells the build adds to every notebook: badges, the Colab set-up cell, check headers, progress."""
import ast
import contextlib
import io
import os

import nbformat
import pytest

import autograder
from autograder.build import frame, student_config
from autograder.course import Course
from autograder.student import support
from autograder.student.progress import HEADER

from helpers.course_paths import ROOT

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]


def notebook(folder, chapter_id):
    return nbformat.read(COURSE.notebook(folder, COURSE.chapter(chapter_id)), as_version=4)


def cell(nb, cell_id):
    return next(c for c in nb.cells if c.id == cell_id)


@pytest.mark.parametrize("folder", [COURSE.config.SOURCE_DIR, COURSE.config.RELEASE_DIR])
@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_every_notebook_is_framed(chapter_id, folder):
    chapter = COURSE.chapter(chapter_id)
    nb = notebook(folder, chapter_id)
    badges = nb.cells[0]
    assert badges.id == frame.BADGES_ID and COURSE.config.colab_url(chapter) in badges.source
    assert COURSE.config.binder_url() in badges.source
    codes = [c for c in nb.cells if c.cell_type == "code"]
    switch = [c for c in codes[:1] if c.id == frame.SWITCH_ID]
    # chapters 3 to 10 open with the USE_MY_LIBRARY switch, the student's to edit (no nbgrader metadata)
    assert bool(switch) == (chapter_id >= "ch03")
    assert all("nbgrader" not in c.metadata and c.source.endswith("USE_MY_LIBRARY = False") for c in switch)
    first_code = codes[len(switch)]
    assert first_code.id == frame.SETUP_ID
    assert ("choose_earlier_chapters" in first_code.source) == bool(switch)
    assert nb.cells[-1].id == frame.PROGRESS_ID
    assert (nb.cells[-3].id == frame.KEEP_ID) == (chapter_id >= "ch02")
    for framed in (badges, first_code, nb.cells[-1]):
        assert framed.metadata["nbgrader"]["locked"] and not framed.metadata["nbgrader"]["solution"]
    checks, written = {}, {}
    for c in nb.cells:
        meta = c.metadata.get("nbgrader", {})
        if meta.get("grade") and c.cell_type == "markdown":
            written[meta["grade_id"]] = meta["points"]      # a written question: no check header
        elif meta.get("grade"):
            match = HEADER.match(c.source)
            assert match and match["id"] == meta["grade_id"] and int(match["points"]) == meta["points"]
            checks[meta["grade_id"]] = meta["points"]
    call = ast.parse(nb.cells[-1].source).body[-1].value
    assert call.func.id == "show_progress" and ast.literal_eval(call.args[1]) == checks
    # what the chapter is worth, on top, is summed from these cells: no script states it
    assert f"check cells are worth **{sum(checks.values())} points**" in badges.source
    assert f"written questions **{sum(written.values())} points** more" in badges.source
    assert {k.arg: ast.literal_eval(k.value) for k in call.keywords} == {"written": sum(written.values())} and written


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_setup_cell_installs_this_version_and_lists_the_support_files(chapter_id):
    chapter = COURSE.chapter(chapter_id)
    source = cell(notebook(COURSE.config.RELEASE_DIR, chapter_id), frame.SETUP_ID).source
    assert f"babygrad-course @ git+{COURSE.config.PUBLISHED_REPOSITORY}@v{autograder.__version__}" in source
    assert COURSE.config.support_url(chapter) in source
    release = COURSE.notebook(COURSE.config.RELEASE_DIR, chapter).parent
    # every file of the chapter's folder but the notebook and Validate's settings (Colab has no Validate)
    shipped = sorted(str(p.relative_to(release)) for p in release.rglob("*")
                     if p.is_file() and p.suffix != ".ipynb" and p.name != student_config.FILE_NAME)
    call = next(node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
                and getattr(node.func, "id", "") == "fetch_support_files")
    assert ast.literal_eval(call.args[0]) == shipped


def run_setup_cell(source):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        exec(compile(source, "setup-cell", "exec"), {})
    return out.getvalue(), err.getvalue()


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_setup_cell_does_nothing_when_the_files_are_here(chapter_id, tmp_path, monkeypatch):
    chapter = COURSE.chapter(chapter_id)
    release = COURSE.notebook(COURSE.config.RELEASE_DIR, chapter).parent
    for path in release.iterdir():
        if path.is_file():
            (tmp_path / path.name).write_bytes(path.read_bytes())
    before = sorted(p.name for p in tmp_path.iterdir())
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(support.BASE_URL_VARIABLE, raising=False)
    source = cell(notebook(COURSE.config.RELEASE_DIR, chapter_id), frame.SETUP_ID).source
    assert run_setup_cell(source) == ("", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_support_files_come_from_the_overridable_url(tmp_path, monkeypatch):
    served = tmp_path / "served"
    served.mkdir()
    (served / "earlier_chapters.py").write_text("X = 1\n")
    (served / "data").mkdir()
    (served / "data" / "small.csv").write_text("a,b\n")
    monkeypatch.setenv(support.BASE_URL_VARIABLE, served.as_uri() + "/")
    work = tmp_path / "work"
    work.mkdir()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fetched = support.fetch_support_files(["earlier_chapters.py", "data/small.csv"],
                                              "https://example.invalid/never-used/", folder=work)
    assert fetched == ["earlier_chapters.py", "data/small.csv"]
    assert (work / "data" / "small.csv").read_text() == "a,b\n"
    assert out.getvalue().startswith("Downloaded earlier_chapters.py, data/small.csv from file:")
    assert support.fetch_support_files(["earlier_chapters.py"], "https://example.invalid/", folder=work) == []


def test_badge_in_readme_for_every_chapter():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for chapter in COURSE.chapters:
        assert COURSE.config.colab_url(chapter) in readme, f"README: no Colab badge for {chapter.id}"
    assert COURSE.config.binder_url() in readme
    assert "docs/screenshot-jupyterlab.png" in readme and (ROOT / "docs" / "screenshot-jupyterlab.png").is_file()


def test_binder_environment_is_the_pinned_one():
    """repo2docker reads requirements.txt at the root (a binder/ folder would hide it) and runtime.txt."""
    assert not (ROOT / "binder").exists() and not (ROOT / ".binder").exists()
    runtime = (ROOT / "runtime.txt").read_text().strip()
    assert runtime == "python-3.11"
    assert "-e ." in (ROOT / "requirements.txt").read_text().splitlines()
    assert os.path.isdir(ROOT / COURSE.config.RELEASE_DIR) and "urlpath=lab/tree/release" in COURSE.config.binder_url()


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_setup_cell_on_colab_pip_installs_the_course_tag(chapter_id, tmp_path, monkeypatch):
    """Colab detected (google.colab imported): one pip install of this version, quietly; pip itself
    is replaced here (the real one would fetch the tag from GitHub)."""
    import subprocess
    import sys
    import types
    calls = []
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(subprocess, "run", lambda args, **kw: calls.append((args, kw)) or
                        subprocess.CompletedProcess(args, 0, "", ""))
    release = COURSE.notebook(COURSE.config.RELEASE_DIR, COURSE.chapter(chapter_id)).parent
    for path in release.iterdir():
        if path.is_file():
            (tmp_path / path.name).write_bytes(path.read_bytes())
    monkeypatch.chdir(tmp_path)
    source = cell(notebook(COURSE.config.RELEASE_DIR, chapter_id), frame.SETUP_ID).source
    assert run_setup_cell(source) == ("", "")
    (args, options), = calls
    assert args == [sys.executable, "-m", "pip", "install", "--quiet",
                    f"babygrad-course @ git+{COURSE.config.PUBLISHED_REPOSITORY}@{COURSE.config.TAG}"]
    assert options == {"capture_output": True, "text": True}


def test_setup_cell_installs_the_package_this_repository_builds():
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert frame.PACKAGE == project["name"] and project["dynamic"] == ["version"]


@pytest.mark.parametrize("switch", [False, True])
def test_framed_cells_show_no_return_value(switch):
    """The set-up and Keep cells call functions for what they do: what those return (True, the chosen module,
    the export's record) must not show under the cell. IPython shows a cell's final expression unless a
    semicolon ends it."""
    chapter = COURSE.chapter("ch03")
    exported = nbformat.v4.new_code_cell("x = 1", metadata={"tags": [frame.EXPORT_TAG]})
    nb = frame.add_frame(nbformat.v4.new_notebook(cells=[exported]), COURSE.config, chapter, ["earlier_chapters.py"])
    framed = [frame.setup_source(COURSE.config, chapter, ["earlier_chapters.py"], switch)]
    framed += [c.source for c in nb.cells if c.id == frame.KEEP_ID]
    assert len(framed) == 2
    for source in framed:
        last = ast.parse(source).body[-1]
        if isinstance(last, ast.Expr):
            line = source.splitlines()[last.end_lineno - 1].split("#")[0].rstrip()
            assert line.endswith(";"), line
