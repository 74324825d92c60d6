"""The Gradescope autograder zip, run as Gradescope runs it: unzipped into a folder laid out like
/autograder (source, submission, results), `run_autograder` once per submission, results.json
checked against Gradescope's published specification and against nbgrader's own scores."""
import functools
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import zipfile
from contextlib import contextmanager
from pathlib import Path

import nbformat
import psutil
import pytest
from nbgrader.api import Gradebook

from autograder.build.submissions import (
    filled,
    load_catalog,
    solved_answers,
    with_mistakes,
)
from autograder.course import Course
from autograder.grading.feedback_guard import leaked_lines, secret_lines
from autograder.grading.gradescope import build_autograder_zip
from autograder.grading.gradescope_runner import FALLBACK_UID, results_json
from autograder.grading.judged_execute import judge_error
from autograder.grading.kernel_user import (
    KernelLimits,
    runs_kernels_unprivileged,
    user_processes,
)
from autograder.grading.results_file import write_results
from autograder.grading.runner_config import runner_config

from helpers.across_workers import once_per_run
from helpers.class_support import CLASS_CHAPTERS, class_notebooks, course_copy, solved_notebook_maker
from helpers.hostile_folders import LINKED_MARKERS, MANY_FILES, PAGE, PAGES, SNOOP, password_file
from helpers.machine_lock import machine_wide
from helpers.course_paths import ROOT
from helpers.outgrowers import DEEP, deeply_nested, outgrower
from helpers.readable_text import file_text

CHAPTERS = [c.id for c in Course(ROOT).chapters]
# The runner drops the kernel to an unprivileged user: only root can, as on Gradescope.
needs_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or not shutil.which("prlimit"),
                                reason="the Gradescope runner runs as root and needs setpriv and prlimit")
# https://gradescope-autograders.readthedocs.io/en/latest/specs/ : the fields results.json may hold.
TOP_LEVEL_FIELDS = {"score", "execution_time", "output", "output_format", "test_output_format",
                    "test_name_format", "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST_FIELDS = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format",
               "tags", "visibility", "extra_data"}
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}


@pytest.fixture(scope="module")
def gradescope_runs(repo_course, tmp_path_factory):
    """results.json of a full-marks, a partial, a broken and a hostile chapter 3 submission, each
    graded by the zip's own run_autograder as root (the kernel unprivileged), built from the committed
    course. Chapter 3 is the reference chapter; the other chapters' results are checked from their
    graded demo class below."""
    chapter_id = "ch03"

    def run_all(folder):
        course = course_copy(repo_course, folder / "course", chapter_id)
        chapter = course.chapter(chapter_id)
        archive = build_autograder_zip(course, chapter)
        notebooks = class_notebooks(course, chapter)
        runs = {"zip": archive}
        perfect = notebooks["perfect"]
        notebooks["outgrower"] = outgrower(perfect, "mul")
        notebooks["deep-metadata"] = deeply_nested(perfect, DEEP)
        for name in ("perfect", "partial", "corrupt", "outgrower", "deep-metadata"):
            with gradescope_root() as root:
                runs[name] = run_like_gradescope(archive, root, chapter, notebooks[name])
        return runs

    folder, runs = once_per_run(tmp_path_factory, f"gradescope-{chapter_id}", run_all)
    course = Course(folder / "course")
    return dict(runs, course=course, chapter=course.chapter(chapter_id))


@contextmanager
def gradescope_root():
    """A folder laid out like /autograder, for one run at a time on this machine: every run's kernel runs as
    the same fallback uid, and a run ends by killing that uid's processes, as Gradescope's one-submission
    container allows, so two runs at once (two xdist workers, or two test suites in two checkouts) would kill
    each other's kernels; runs take turns through a machine-wide lock (helpers/machine_lock.py). The folder
    lives in /tmp, traversable by everyone, because the kernel's user must reach the course package in it, as
    it does in /autograder (pytest's own folders are root's alone)."""
    with machine_wide("gradescope-test"):
        root = Path(tempfile.mkdtemp(prefix="babygrad-gradescope-test-", dir="/tmp"))
        os.chmod(root, 0o755)
        try:
            yield root
        finally:
            shutil.rmtree(root, ignore_errors=True)


def run_like_gradescope(archive, root, chapter, notebook, check_course_unchanged=True, lay_out=None):
    """results.json of the zip's run_autograder on `notebook` as the upload, or on what `lay_out(submission
    folder, root)` puts there."""
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    (root / "results").mkdir()
    with zipfile.ZipFile(archive) as unzipped:
        unzipped.extractall(root / "source")
        for info in unzipped.infolist():              # zipfile drops permissions: restore them as unzip would
            mode = info.external_attr >> 16
            if mode:
                os.chmod(root / "source" / info.filename, mode)
    if lay_out:
        lay_out(root / "submission", root)
    else:
        path = root / "submission" / f"{chapter.notebook}.ipynb"
        path.write_text(notebook if isinstance(notebook, str) else json.dumps(notebook), encoding="utf-8")
    before = tree_hash(root / "source")
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), BABYGRAD_PYTHON=sys.executable)
    done = subprocess.run([str(root / "source" / "run_autograder")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree_hash(root / "source") == before, "grading changed the autograder's files"
    assert kernel_user_processes() == [], "processes of the kernel's user outlived grading"
    results = root / "results" / "results.json"
    assert stat.S_ISREG(os.lstat(results).st_mode), "results.json is not a regular file"
    return json.loads(results.read_text(encoding="utf-8"))


def tree_hash(folder):
    """One digest of every file's path and bytes under `folder`."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def kernel_user_processes():
    return [p.pid for p in user_processes(FALLBACK_UID)]


def full_marks(chapter):
    """What autograde can give the chapter: the points of its source notebook's test cells."""
    return Course(ROOT).autograded_points(chapter)


def check_against_specification(results, chapter):
    assert set(results) <= TOP_LEVEL_FIELDS and {"score", "tests", "output"} <= set(results)
    assert results["score"] == sum(t["score"] for t in results["tests"])
    for test in results["tests"]:
        assert set(test) <= TEST_FIELDS and {"name", "score", "max_score", "output", "visibility"} <= set(test)
        assert test["visibility"] in VISIBILITIES and test["status"] in {"passed", "failed"}
        assert 0 <= test["score"] <= test["max_score"] and isinstance(test["output"], str) and test["output"]
    assert sum(t["max_score"] for t in results["tests"]) == full_marks(chapter)
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


@needs_root
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


@needs_root
def test_run_autograder_grades_full_partial_and_broken_submissions(gradescope_runs, repo_course):
    chapter = gradescope_runs["chapter"]
    for name in ("perfect", "partial", "corrupt"):
        check_against_specification(gradescope_runs[name], chapter)
    assert gradescope_runs["perfect"]["score"] == full_marks(chapter)
    assert all(t["status"] == "passed" for t in gradescope_runs["perfect"]["tests"])
    check_partial(gradescope_runs["partial"], chapter, repo_course)
    broken = gradescope_runs["corrupt"]
    assert broken["score"] == 0 and "not a readable notebook" in broken["output"]
    assert all(t["score"] == 0 and t["output"].startswith("Not graded") for t in broken["tests"])


@needs_root
def test_outputs_through_every_channel_and_deep_metadata_keep_full_marks_and_a_small_page(gradescope_runs):
    """A student's own cells send megabytes through display updates, results, output metadata, widget state and
    an exception's name; another's metadata is nested 900 levels deep. Both keep full marks, and the results
    page (what the student sees on Gradescope) stays the size of the perfect student's."""
    chapter = gradescope_runs["chapter"]
    for name in ("outgrower", "deep-metadata"):
        results = gradescope_runs[name]
        check_against_specification(results, chapter)
        assert results["score"] == full_marks(chapter), [t for t in results["tests"] if t["status"] == "failed"]
        assert len(json.dumps(results)) < len(json.dumps(gradescope_runs["perfect"])) + 20_000


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
                assert results["score"] == full_marks(chapter)


@pytest.mark.parametrize("failing_line, visible_status", [(2, "failed"), (5, "passed"), (0, "failed")])
def test_a_judged_failure_of_a_hidden_check_stays_hidden_until_the_due_date(failing_line, visible_status):
    """The judge names the line of the check it failed: a hidden one leaves the visible test passed (its
    message is for after the due date), a visible one fails it, and an unnamed line counts as visible."""
    marks = {"grade": True, "solution": False, "locked": True, "grade_id": "test_mul_backward", "points": 2}
    code = ("verdict = check.backward(Mul(), shapes=[(2, 3), (2, 3)])\nassert verdict.passed, verdict.message\n"
            "### BEGIN HIDDEN TESTS\nverdict = check.backward(Mul(), shapes=[(5,), (5,)], seed=21)\n"
            "assert verdict.passed, verdict.message\n### END HIDDEN TESTS")
    source = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code, metadata={"nbgrader": marks})])
    graded = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code, metadata={"nbgrader": marks})])
    graded.cells[0].outputs = [judge_error("Mul().backward: the gradient for a is wrong", failing_line)]
    chapter = Course(ROOT).chapter("ch03")
    results = results_json(chapter, source, graded, {"test_mul_backward": (0, 2)}, problem=None, found=Path("x"))
    visible, everything = results["tests"]
    assert visible["status"] == visible_status and everything["status"] == "failed"
    assert everything["visibility"] == "after_due_date" and "gradient for a is wrong" in everything["output"]
    assert ("gradient for a is wrong" in visible["output"]) == (visible_status == "failed")


PLANTED_PASSWORD = "planted-Pa55word-9d1c"
PLANTED_TOKEN = "ghp_plantedtoken0123456789"


def zip_member_texts(archive, scratch):
    """{member: its text}: notebooks as their strings (sources, outputs, metadata), SQLite files as
    every row they hold, everything else as raw bytes decoded leniently."""
    texts = {}
    with zipfile.ZipFile(archive) as unzipped:
        for info in unzipped.infolist():
            data = unzipped.read(info)
            text = data.decode("utf-8", "replace")
            if info.filename.endswith(".ipynb"):
                path = scratch / "member.ipynb"
                path.write_bytes(data)
                text += "\n" + file_text(path)
            elif data.startswith(b"SQLite format 3"):
                path = scratch / "member.db"
                path.write_bytes(data)
                with sqlite3.connect(path) as database:
                    text += "\n" + "\n".join(database.iterdump())
                path.unlink()
            texts[info.filename] = text
    return texts


def test_zip_holds_no_solution_and_no_credential(repo_course, tmp_path):
    """Every byte of the zip: no line of a solution region, no password from GRADEBOOK_URL, no token
    from REPOSITORY; the hidden tests are there (nbgrader grades with them), which also shows that
    the scan sees inside the notebooks."""
    course = course_copy(repo_course, tmp_path / "course", "ch03")
    registered = course.gradebook_url
    config = (course.root / "course_config.py").read_text(encoding="utf-8")
    config = config.replace("GRADEBOOK_URL = None",
                            f'GRADEBOOK_URL = "postgresql://grader:{PLANTED_PASSWORD}@db.example.edu/babygrad"')
    config = config.replace('REPOSITORY = "https://github.com/',
                            f'REPOSITORY = "https://x-access-token:{PLANTED_TOKEN}@github.com/')
    (course.root / "course_config.py").write_text(config, encoding="utf-8")
    course = Course(course.root)
    assert PLANTED_PASSWORD in course.config.GRADEBOOK_URL and PLANTED_TOKEN in course.config.REPOSITORY
    chapter = course.chapter("ch03")
    archive = build_autograder_zip(course, chapter, gradebook_url=registered)

    source_path = course.notebook(course.config.SOURCE_DIR, chapter)
    all_source = "\n".join(c.source for c in nbformat.read(source_path, as_version=4).cells)
    solution = secret_lines(all_source, "SOLUTION")
    provided = (source_path.parent / "earlier_chapters.py").read_text(encoding="utf-8")
    solution -= {line.strip() for line in provided.splitlines()}      # handed out on purpose
    # The course package is public (Colab installs it from the published tag): a line of it that
    # also stands in a solution (`else:`) gives nothing away.
    package = {line.strip() for path in (ROOT / "autograder").rglob("*.py")
               for line in path.read_text(encoding="utf-8").splitlines()}
    solution -= package
    hidden = secret_lines(all_source, "HIDDEN TESTS")
    assert len(solution) > 50 and hidden
    assert leaked_lines(solution, file_text(source_path)), "the scan must find solution lines in the source itself"

    raw = archive.read_bytes()
    assert PLANTED_PASSWORD.encode() not in raw and PLANTED_TOKEN.encode() not in raw
    texts = zip_member_texts(archive, tmp_path)
    for name, text in texts.items():
        assert PLANTED_PASSWORD not in text and PLANTED_TOKEN not in text, f"{name} carries a credential"
        assert leaked_lines(solution, text) == [], f"{name} leaks solution lines: {leaked_lines(solution, text)[:5]}"
    autograde_source = texts[f"course/{course.config.SOURCE_DIR}/ch03/{chapter.notebook}.ipynb"]
    assert all(line in autograde_source for line in hidden), "the autograde source lost its hidden tests"
    assert "BEGIN SOLUTION" not in autograde_source
    assert not any(n.startswith(("course/solutions/", "course/release/", "course/submitted/")) for n in texts)
    assert {"course/gradebook.db", "course/nbgrader_config.py", "course/course_config.py"} <= set(texts)


def test_runner_config_keeps_settings_and_drops_secrets(tmp_path):
    text = (ROOT / "course_config.py").read_text(encoding="utf-8")
    text = text.replace("GRADEBOOK_URL = None", f'GRADEBOOK_URL = "postgresql://g:{PLANTED_PASSWORD}@db/x"')
    text = text.replace('REPOSITORY = "https://github.com/', f'REPOSITORY = "https://t:{PLANTED_TOKEN}@github.com/')
    (tmp_path / "course_config.py").write_text(text, encoding="utf-8")
    module = Course(tmp_path).config
    made = runner_config(text, module)
    assert PLANTED_PASSWORD not in made.text and PLANTED_TOKEN not in made.text
    assert {"GRADEBOOK_URL", "REPOSITORY"} <= set(made.withheld) and "colab_url" in made.dropped_functions
    namespace = {}
    exec(compile(made.text, "runner course_config.py", "exec"), namespace)
    assert namespace["GRADEBOOK_URL"] is None and "REPOSITORY" not in namespace
    assert namespace["CHAPTERS"] == module.CHAPTERS and namespace["CELL_TIMEOUT_SECONDS"] == module.CELL_TIMEOUT_SECONDS
    assert namespace["chapter"]("ch03") == module.chapter("ch03") and callable(namespace["configure_nbgrader"])


def test_the_course_config_alone_does_not_run_kernels_unprivileged():
    """The runner refuses to start nbgrader unless the configuration it adds took effect: this is the
    check it makes, and the course's own configuration must fail it."""
    assert runs_kernels_unprivileged(ROOT) is False


def test_results_json_replaces_a_planted_fifo_and_symlink(tmp_path):
    """Whatever stands at results/results.json (a FIFO with a reader waiting, a symlink to another
    file), the runner's write replaces it: the reader gets nothing and the link's target is untouched."""
    results = tmp_path / "results"
    results.mkdir()
    os.mkfifo(results / "results.json")
    heard = []
    reader = threading.Thread(target=lambda: heard.append(open(results / "results.json").read()), daemon=True)
    reader.start()
    write_results(results, {"score": 12.0, "tests": []})
    assert stat.S_ISREG(os.lstat(results / "results.json").st_mode)
    assert json.loads((results / "results.json").read_text())["score"] == 12.0
    reader.join(0.5)
    assert heard == [] and reader.is_alive(), "the runner wrote into the FIFO"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (results / "results.json").unlink()
    (results / "results.json").symlink_to(victim)
    write_results(results, {"score": 3.0, "tests": []})
    assert victim.read_text() == "keep me" and not (results / "results.json").is_symlink()
    assert sorted(p.name for p in results.iterdir()) == ["results.json"]
    assert stat.S_IMODE(os.stat(results).st_mode) == 0o755


# Added to a chapter 3 submission whose Mul.backward is wrong: it tries the ways to forge or steal
# that a root-run Gradescope container offered, records what happened in the probe folder, and
# leaves a detached process that keeps trying to replace results.json for two minutes.
HOSTILE = '''import json as _json, os as _os, subprocess as _subprocess, sys as _sys
_root, _probe = {root!r}, {probe!r}
_forged = _json.dumps({{"score": 87.0, "output": "forged", "tests": []}})
_seen = {{}}
def _attempt(name, action):
    try:
        action()
        _seen[name] = "succeeded"
    except Exception as error:
        _seen[name] = type(error).__name__
_attempt("mkfifo_results", lambda: _os.mkfifo(_root + "/results/results.json"))
_attempt("rewrite_results", lambda: open(_root + "/results/results.json", "w").write(_forged))
_attempt("read_autograde_source", lambda: open(_root + "/source/course/source/ch03/autodiff.ipynb").read())
_attempt("read_gradebook", lambda: open(_root + "/source/course/gradebook.db", "rb").read())
_attempt("tamper_package", lambda: open(_root + "/source/autograder/__init__.py", "a").write("#"))
_attempt("list_course", lambda: _os.listdir(_root + "/source/course"))
_background = """
import os, time
root, forged = {root!r}, {forged!r}
end = time.time() + 120
while time.time() < end:
    for act in (lambda: os.mkfifo(root + "/results/results.json"),
                lambda: open(root + "/results/results.json", "w").write(forged)):
        try:
            act()
        except Exception:
            pass
    time.sleep(0.1)
"""
# (this test machine's venv python is a link into /root, which the kernel's user may not exec)
_python = "/usr/bin/python3" if _os.access("/usr/bin/python3", _os.X_OK) else _sys.executable
_seen["uid"] = _os.getuid()
try:
    _child = _subprocess.Popen([_python, "-c", _background], start_new_session=True, stdin=_subprocess.DEVNULL,
                               stdout=_subprocess.DEVNULL, stderr=_subprocess.DEVNULL)
    _seen["background_pid"] = _child.pid
except Exception as _error:
    _seen["background_pid"] = repr(_error)
with open(_probe + "/probe.json", "w") as _file:
    _file.write(_json.dumps(_seen))
'''


@needs_root
def test_hostile_submission_gets_its_true_score(gradescope_runs):
    """A submission with a wrong Mul.backward that tries to forge results.json (a FIFO, a rewrite, a
    detached process that keeps trying), read the hidden tests and the gradebook, and change the
    autograder's code: every attempt is refused, its process is gone, the autograder's files are
    unchanged (run_like_gradescope), and it scores exactly what its exercises earn."""
    course, chapter, archive = gradescope_runs["course"], gradescope_runs["chapter"], gradescope_runs["zip"]
    mistake = next(m for m in load_catalog(course, chapter).MISTAKES if m.name == "mul_ignores_out_grad")
    release = nbformat.read(course.notebook(course.config.RELEASE_DIR, chapter), as_version=4)
    source = nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4)
    answers = with_mistakes(solved_answers(source), [mistake])
    probe = Path(tempfile.mkdtemp(prefix="babygrad-probe-", dir="/tmp"))
    os.chmod(probe, 0o777)
    try:
        with gradescope_root() as root:
            first = next(iter(answers))
            hostile = HOSTILE.format(root=str(root), probe=str(probe), forged='{"score": 87.0, "tests": []}')
            notebook = filled(release, dict(answers, **{first: hostile + "\n" + answers[first]}))
            results = run_like_gradescope(archive, root, chapter, notebook)
        seen = json.loads((probe / "probe.json").read_text())
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    assert seen.pop("uid") == FALLBACK_UID, "the kernel did not run as the unprivileged user"
    background = seen.pop("background_pid")
    assert seen == {"mkfifo_results": "PermissionError", "rewrite_results": "PermissionError",
                    "read_autograde_source": "PermissionError", "read_gradebook": "PermissionError",
                    "tamper_package": "PermissionError", "list_course": "PermissionError"}
    assert isinstance(background, int), f"the background process did not start: {background}"
    assert not psutil.pid_exists(background) or FALLBACK_UID not in psutil.Process(background).uids()
    check_against_specification(results, chapter)
    lost = {t["name"].split(" · ")[0] for t in results["tests"] if t["score"] < t["max_score"]}
    assert lost == set(mistake.loses)
    mul_points = sum(t["max_score"] for t in results["tests"] if t["name"].split(" · ")[0] in mistake.loses)
    assert mul_points > 0 and results["score"] == full_marks(chapter) - mul_points


@needs_root
def test_runner_refuses_to_grade_when_it_cannot_drop_privileges():
    """Started by a user who cannot run the kernel as another, the runner grades nothing (zero points
    and its reason in the log) unless told --unsafe."""
    other = FALLBACK_UID + 1
    root = Path(tempfile.mkdtemp(prefix="babygrad-gradescope-test-", dir="/tmp"))
    try:
        for name in ("results", "source", "submission"):
            (root / name).mkdir()
            os.chown(root / name, other, other)
        (root / "source" / "course").mkdir()
        shutil.copy(ROOT / "course_config.py", root / "source" / "course" / "course_config.py")
        os.chmod(root, 0o755)
        done = subprocess.run(["setpriv", f"--reuid={other}", f"--regid={other}", "--clear-groups",
                               sys.executable, "-m", "autograder.grading.gradescope_runner", "ch03", "--root", str(root)],
                              capture_output=True, text=True, timeout=120, cwd=root,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
        results = json.loads((root / "results" / "results.json").read_text())
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert "must start as root" in done.stderr, done.stderr
    assert results["score"] == 0 and results["tests"] == []


def test_every_execute_step_of_the_course_runs_its_kernel_unprivileged(tmp_path):
    """The course's own Execute subclasses (the judge's, the sandbox's) keep what they do and their
    settings; only their kernel manager becomes UnprivilegedKernelManager."""
    from jupyter_client.manager import AsyncKernelManager
    from nbgrader.preprocessors import Execute, SaveAutoGrades
    from traitlets.config import Config

    from autograder.grading.kernel_user import (
        UnprivilegedKernelManager,
        run_kernels_unprivileged,
    )

    class CourseExecute(Execute):                 # as the sandbox's SandboxedExecute chooses its manager
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("kernel_manager_class", AsyncKernelManager)
            super().__init__(*args, **kwargs)

    c = Config()
    c.Autograde.autograde_preprocessors = [CourseExecute, SaveAutoGrades]
    c.CourseExecute.timeout = 7
    run_kernels_unprivileged(c, uid=FALLBACK_UID, home_parent=str(tmp_path))
    step, kept = c.Autograde.autograde_preprocessors
    assert kept is SaveAutoGrades and issubclass(step, CourseExecute) and step.runs_unprivileged
    made = step(config=c)
    assert made.kernel_manager_class is UnprivilegedKernelManager and made.timeout == 7
    (tmp_path / "nbgrader_config.py").write_text(
        "from autograder.grading.kernel_user import run_kernels_unprivileged\n"
        f"run_kernels_unprivileged(get_config(), uid={FALLBACK_UID}, home_parent={str(tmp_path)!r})\n")
    assert runs_kernels_unprivileged(tmp_path) is True


BOMBS = '''import json as _json, os as _os, time as _time
_seen = {{}}
try:
    _hog = bytearray(16 << 30)
    _seen["memory"] = "allocated"
except MemoryError:
    _seen["memory"] = "MemoryError"
_forks, _end = 0, _time.time() + 5
while _time.time() < _end:
    try:
        _pid = _os.fork()
    except OSError as _error:
        _seen["fork"] = type(_error).__name__
        break
    if _pid == 0:
        _time.sleep(600)
        _os._exit(0)
    _forks += 1
_seen["forks"] = _forks
with open({probe!r}, "w") as _file:
    _file.write(_json.dumps(_seen))
'''


@needs_root
def test_memory_and_fork_bombs_are_contained_and_cost_nothing_else(gradescope_runs):
    """A right submission whose first exercise also asks for 16 GB and forks until it cannot: the
    allocation fails, the forks stop at the process limit, none of them outlives grading
    (run_like_gradescope checks), and every exercise keeps its points."""
    course, chapter, archive = gradescope_runs["course"], gradescope_runs["chapter"], gradescope_runs["zip"]
    release = nbformat.read(course.notebook(course.config.RELEASE_DIR, chapter), as_version=4)
    answers = solved_answers(nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4))
    probe = Path(tempfile.mkdtemp(prefix="babygrad-probe-", dir="/tmp"))
    os.chmod(probe, 0o777)
    try:
        with gradescope_root() as root:
            first = next(iter(answers))
            bombs = BOMBS.format(probe=str(probe / "bombs.json"))
            results = run_like_gradescope(archive, root, chapter,
                                          filled(release, dict(answers, **{first: bombs + answers[first]})))
        seen = json.loads((probe / "bombs.json").read_text())
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    assert seen["memory"] == "MemoryError"
    assert seen.get("fork") == "BlockingIOError" and 0 < seen["forks"] < KernelLimits.processes
    assert results["score"] == full_marks(chapter), [t["name"] for t in results["tests"] if t["status"] == "failed"]


# Uploads that attack with what they hold (helpers/hostile_folders.py), on the cheapest chapter: the
# instructor's source notebook inside the container is /autograder/source/course/source/<chapter>/.
def linked_notebook(course, chapter, submission, root):
    """The notebook is a link to the instructor's source notebook, with links and a FIFO beside it."""
    os.symlink(root / "source" / "course" / "source" / chapter.id / f"{chapter.notebook}.ipynb",
               submission / f"{chapter.notebook}.ipynb")
    os.symlink(password_file(), submission / "passwords.txt")
    os.mkfifo(submission / "data.csv")


def fifo_notebook(course, chapter, submission, root):
    """The notebook is a FIFO, with 20,000 files beside it."""
    os.mkfifo(submission / f"{chapter.notebook}.ipynb")
    for i in range(MANY_FILES):
        (submission / f"f{i:05}.txt").touch()


def honest_among_attacks(course, chapter, submission, root):
    """A solved notebook, with every attack beside it: links to the source notebook, the password file and
    the gradebook, a FIFO, pages under upper-case extensions, 20,000 files."""
    solved = solved_notebook_maker(course, chapter)(SNOOP)
    nbformat.write(solved, submission / f"{chapter.notebook}.ipynb")
    os.symlink(root / "source" / "course" / "source" / chapter.id / f"{chapter.notebook}.ipynb", submission / "answers.txt")
    os.symlink(password_file(), submission / "passwords.txt")
    os.symlink(root / "source" / "course" / "gradebook.db", submission / "gradebook.txt")
    os.mkfifo(submission / "data.csv")
    for page in PAGES:
        (submission / page).write_text(PAGE, encoding="utf-8")
    for i in range(MANY_FILES):
        (submission / f"f{i:05}.txt").touch()


UPLOADS = {"linked-notebook": linked_notebook, "fifo-notebook": fifo_notebook,
           "honest-among-attacks": honest_among_attacks}


@pytest.fixture(scope="module")
def hostile_uploads(repo_course, tmp_path_factory):
    """results.json of each upload of UPLOADS, graded by the zip's run_autograder as root."""
    chapter_id = repo_course.chapters[0].id

    def run_all(folder):
        course = course_copy(repo_course, folder / "course", chapter_id)
        chapter = course.chapter(chapter_id)
        archive = build_autograder_zip(course, chapter)
        runs = {}
        for name, lay_out in UPLOADS.items():
            with gradescope_root() as root:
                runs[name] = run_like_gradescope(archive, root, chapter, None,
                                                 lay_out=functools.partial(lay_out, course, chapter))
        return dict(runs, full=full_marks(chapter), notebook=f"{chapter.notebook}.ipynb")

    _, runs = once_per_run(tmp_path_factory, "gradescope-hostile-uploads", run_all)
    return runs


@needs_root
def test_a_linked_notebook_is_refused_not_graded_as_the_instructors(hostile_uploads):
    results, notebook = hostile_uploads["linked-notebook"], hostile_uploads["notebook"]
    assert results["score"] == 0 and results["tests"]
    assert results["output"].startswith(f"Your upload's {notebook} is a symbolic link (to /tmp/")
    assert results["output"].endswith("never followed. Upload the notebook itself, as a file.")
    assert all(t["output"].startswith("Not graded") for t in results["tests"])


@needs_root
def test_a_fifo_notebook_among_many_files_is_refused_with_its_reason(hostile_uploads):
    results, notebook = hostile_uploads["fifo-notebook"], hostile_uploads["notebook"]
    assert results["score"] == 0
    assert results["output"] == f"Your upload's {notebook} is a FIFO (named pipe): never opened. " \
                                "Upload the notebook itself, as a file."


@needs_root
def test_a_notebook_among_links_fifos_pages_and_many_files_keeps_full_marks(hostile_uploads):
    results = hostile_uploads["honest-among-attacks"]
    assert results["score"] == hostile_uploads["full"], [t["name"] for t in results["tests"] if t["status"] == "failed"]
    text = json.dumps(results)
    assert not [marker for marker in LINKED_MARKERS if marker in text]
