"""The Gradescope autograder zip, run as Gradescope runs it: unzipped into a folder laid out like
/autograder (source, submission, results), `run_autograder` once per submission, results.json
checked against Gradescope's published specification and against nbgrader's own scores."""
import json
import os
import stat
import subprocess
import sys
import zipfile

import pytest

from autograder.course import Course
from autograder.gradescope import build_autograder_zip
from autograder.submissions import load_catalog

from class_support import class_notebooks, course_copy
from conftest import ROOT

CHAPTERS = [c.id for c in Course(ROOT).chapters]
# https://gradescope-autograders.readthedocs.io/en/latest/specs/ : the fields results.json may hold.
TOP_LEVEL_FIELDS = {"score", "execution_time", "output", "output_format", "test_output_format",
                    "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_FIELDS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format",
               "tags", "visibility", "extra_data"}
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}


@pytest.fixture(scope="module")
def gradescope_runs(built_course, tmp_path_factory):
    """{chapter: {submission: results.json}} for a full-marks, a partial and a broken submission."""
    cache = {}

    def run(chapter_id):
        if chapter_id not in cache:
            folder = tmp_path_factory.mktemp(f"gradescope-{chapter_id}")
            course = course_copy(built_course, folder / "course", chapter_id)
            chapter = course.chapter(chapter_id)
            archive = build_autograder_zip(course, chapter)
            notebooks = class_notebooks(course, chapter)
            cache[chapter_id] = {"zip": archive}
            for name in ("perfect", "partial", "corrupt"):
                cache[chapter_id][name] = run_like_gradescope(archive, folder / name, chapter, notebooks[name])
        return cache[chapter_id]
    return run


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


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_zip_has_gradescopes_two_scripts_at_its_root(gradescope_runs, chapter_id):
    with zipfile.ZipFile(gradescope_runs(chapter_id)["zip"]) as archive:
        infos = {i.filename: i for i in archive.infolist()}
        for script in ("setup.sh", "run_autograder"):
            assert script in infos
            assert (infos[script].external_attr >> 16) & stat.S_IXUSR, f"{script} is not executable"
            assert archive.read(script).startswith(b"#!/usr/bin/env bash\n")
        setup = archive.read("setup.sh").decode()
    assert subprocess.run(["bash", "-n"], input=setup, text=True).returncode == 0
    assert "requirements.txt" in setup and "requirements.txt" in infos


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_results_json_follows_gradescopes_specification(gradescope_runs, chapter_id):
    chapter = Course(ROOT).chapter(chapter_id)
    for name in ("perfect", "partial", "corrupt"):
        results = gradescope_runs(chapter_id)[name]
        assert set(results) <= TOP_LEVEL_FIELDS and {"score", "tests", "output"} <= set(results), name
        assert results["score"] == sum(t["score"] for t in results["tests"])
        for test in results["tests"]:
            assert set(test) <= TEST_FIELDS and {"name", "score", "max_score", "output", "visibility"} <= set(test)
            assert test["visibility"] in VISIBILITIES and test["status"] in {"passed", "failed"}
            assert 0 <= test["score"] <= test["max_score"] and isinstance(test["output"], str) and test["output"]
        assert sum(t["max_score"] for t in results["tests"]) == chapter.points
        assert any(t["visibility"] == "after_due_date" for t in results["tests"]), "no hidden checks reported"


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_full_partial_and_broken_submissions_score_as_in_nbgrader(gradescope_runs, chapter_id, repo_course):
    chapter = repo_course.chapter(chapter_id)
    runs = gradescope_runs(chapter_id)
    assert runs["perfect"]["score"] == chapter.points
    assert all(t["status"] == "passed" for t in runs["perfect"]["tests"])

    catalog = load_catalog(repo_course, chapter)
    by_name = {m.name: m for m in catalog.MISTAKES}
    expected_lost = {cell for name in catalog.DEMO_PARTIAL for cell in by_name[name].loses}
    scored = [t for t in runs["partial"]["tests"] if t["max_score"] > 0]
    lost = {t["name"].split(" · ")[0] for t in scored if t["score"] < t["max_score"]}
    assert lost == expected_lost
    for test in scored:
        if test["name"].split(" · ")[0] in expected_lost:
            assert test["output"] not in ("passed", "Not graded."), test   # the check's teaching message

    broken = runs["corrupt"]
    assert broken["score"] == 0 and "not a readable notebook" in broken["output"]
    assert all(t["score"] == 0 and t["output"].startswith("Not graded") for t in broken["tests"])
