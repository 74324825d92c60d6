"""The Gradescope autograder zip, run as Gradescope runs it: unzipped into a folder laid out like
/autograder (source, submission, results), `run_autograder` once per submission, results.json
checked against Gradescope's published specification and against nbgrader's own scores."""
import json
import os
import stat
import subprocess
import sys
import zipfile

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.course import Course
from autograder.gradescope import build_autograder_zip
from autograder.gradescope_runner import results_json
from autograder.submissions import load_catalog

from class_support import class_notebooks, course_copy
from conftest import CLASS_CHAPTERS, ROOT

CHAPTERS = [c.id for c in Course(ROOT).chapters]
# https://gradescope-autograders.readthedocs.io/en/latest/specs/ : the fields results.json may hold.
TOP_LEVEL_FIELDS = {"score", "execution_time", "output", "output_format", "test_output_format",
                    "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_FIELDS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format",
               "tags", "visibility", "extra_data"}
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}


@pytest.fixture(scope="module")
def gradescope_runs(built_course, tmp_path_factory):
    """results.json of a full-marks, a partial and a broken submission of the first chapter, each
    graded by the zip's own run_autograder (running the real nbgrader takes a while; the other
    chapters' results are checked from their graded demo class below)."""
    chapter_id = CHAPTERS[0]
    folder = tmp_path_factory.mktemp(f"gradescope-{chapter_id}")
    course = course_copy(built_course, folder / "course", chapter_id)
    chapter = course.chapter(chapter_id)
    archive = build_autograder_zip(course, chapter)
    notebooks = class_notebooks(course, chapter)
    runs = {"zip": archive, "chapter": chapter}
    for name in ("perfect", "partial", "corrupt"):
        runs[name] = run_like_gradescope(archive, folder / name, chapter, notebooks[name])
    return runs


def run_like_gradescope(archive, root, chapter, notebook):
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    (root / "results").mkdir()
    with zipfile.ZipFile(archive) as unzipped:
        unzipped.extractall(root / "source")
        for info in unzipped.infolist():              # zipfile drops permissions: restore them as unzip would
            mode = info.external_attr >> 16
            if mode:
                os.chmod(root / "source" / info.filename, mode)
    path = root / "submission" / f"{chapter.notebook}.ipynb"
    path.write_text(notebook if isinstance(notebook, str) else json.dumps(notebook), encoding="utf-8")
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), BABYGRAD_PYTHON=sys.executable)
    done = subprocess.run([str(root / "source" / "run_autograder")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))


def check_against_specification(results, chapter):
    assert set(results) <= TOP_LEVEL_FIELDS and {"score", "tests", "output"} <= set(results)
    assert results["score"] == sum(t["score"] for t in results["tests"])
    for test in results["tests"]:
        assert set(test) <= TEST_FIELDS and {"name", "score", "max_score", "output", "visibility"} <= set(test)
        assert test["visibility"] in VISIBILITIES and test["status"] in {"passed", "failed"}
        assert 0 <= test["score"] <= test["max_score"] and isinstance(test["output"], str) and test["output"]
    assert sum(t["max_score"] for t in results["tests"]) == chapter.points
    assert any(t["visibility"] == "after_due_date" for t in results["tests"]), "no hidden checks reported"


def check_partial(results, chapter, course):
    """The demo's partial student loses exactly its catalogued cells, each with a teaching message."""
    catalog = load_catalog(course, chapter)
    by_name = {m.name: m for m in catalog.MISTAKES}
    expected_lost = {cell for name in catalog.DEMO_PARTIAL for cell in by_name[name].loses}
    scored = [t for t in results["tests"] if t["max_score"] > 0]
    assert {t["name"].split(" · ")[0] for t in scored if t["score"] < t["max_score"]} == expected_lost
    for test in scored:
        if test["name"].split(" · ")[0] in expected_lost:
            assert test["output"] not in ("passed", "Not graded."), test


def test_zip_has_gradescopes_two_scripts_at_its_root(gradescope_runs):
    with zipfile.ZipFile(gradescope_runs["zip"]) as archive:
        infos = {i.filename: i for i in archive.infolist()}
        for script in ("setup.sh", "run_autograder"):
            assert script in infos
            assert (infos[script].external_attr >> 16) & stat.S_IXUSR, f"{script} is not executable"
            assert archive.read(script).startswith(b"#!/usr/bin/env bash\n")
        setup = archive.read("setup.sh").decode()
    assert subprocess.run(["bash", "-n"], input=setup, text=True).returncode == 0
    assert "requirements.txt" in setup and "requirements.txt" in infos


def test_run_autograder_grades_full_partial_and_broken_submissions(gradescope_runs, repo_course):
    chapter = gradescope_runs["chapter"]
    for name in ("perfect", "partial", "corrupt"):
        check_against_specification(gradescope_runs[name], chapter)
    assert gradescope_runs["perfect"]["score"] == chapter.points
    assert all(t["status"] == "passed" for t in gradescope_runs["perfect"]["tests"])
    check_partial(gradescope_runs["partial"], chapter, repo_course)
    broken = gradescope_runs["corrupt"]
    assert broken["score"] == 0 and "not a readable notebook" in broken["output"]
    assert all(t["score"] == 0 and t["output"].startswith("Not graded") for t in broken["tests"])


@pytest.mark.parametrize("chapter_id", CLASS_CHAPTERS)
def test_every_chapters_results_follow_the_specification(graded_class, chapter_id, tmp_path):
    """Each chapter: its zip builds, and results.json made from its graded demo class is right."""
    course, _ = graded_class(chapter_id)
    chapter = course.chapter(chapter_id)
    with zipfile.ZipFile(build_autograder_zip(course, chapter)) as archive:
        assert f"course/{course.config.SOURCE_DIR}/{chapter.id}/{chapter.notebook}.ipynb" in archive.namelist()
    source = nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4)
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        for student in ("perfect", "partial"):
            grades = gradebook.find_submission_notebook(chapter.notebook, chapter.id, student).grades
            graded = nbformat.read(course.notebook(course.config.AUTOGRADED_DIR, chapter, student), as_version=4)
            results = results_json(chapter, source, graded, {g.name: (g.score, g.max_score) for g in grades},
                                   problem=None, found=tmp_path)
            check_against_specification(results, chapter)
            if student == "partial":
                check_partial(results, chapter, course)
            else:
                assert results["score"] == chapter.points
