"""One term of chapter 3 on a real JupyterHub, set up by deploy/jupyterhub/setup.sh (docs/jupyterhub.md):
PAM users, the LocalProcessSpawner, configurable-http-proxy, the instructor's and the students' environments
on Debian's own Python. The instructor generates and releases; three students fetch, work and submit through
their servers' nbgrader handlers; the instructor collects and runs plain `nbgrader autograde`, grades a
written answer through formgrader's API, and releases feedback, which a student fetches. Scores must equal
`python -m autograder grade`'s on the same notebooks; students must reach neither answers, nor formgrader,
nor each other's submissions; Validate must run with the course's cell timeout and one BLAS thread."""
import json
import re

import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.api import Gradebook

from autograder.course import Course
from helpers import hub as hub_support
from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT
from helpers.demo_students import demo_notebook
from helpers.hub import INSTRUCTOR, STUDENTS
from helpers.machine_lock import machine_wide

pytestmark = pytest.mark.slow
COURSE = Course(ROOT)
CHAPTER = COURSE.chapter("ch03")
NOTEBOOK = f"{CHAPTER.notebook}.ipynb"
PROBE_SLEEP = 35        # seconds: longer than nbgrader's own default cell timeout (30 s), shorter than the course's


def course_nbgrader(hub, *args):
    return hub.command(INSTRUCTOR, "nbgrader", *args, cwd=hub.course)


def by_cell(gradebook_url):
    """{student: {cell: autograded score}} of every student in the gradebook."""
    with Gradebook(gradebook_url, course_id=COURSE.config.COURSE_ID) as gradebook:
        return {student: {grade.name: grade.auto_score for grade in
                          gradebook.find_submission_notebook(CHAPTER.notebook, CHAPTER.id, student).grades}
                for student in STUDENTS.values()}


def probe_notebook():
    """A graded cell that outlasts nbgrader's default timeout, then reports the kernel's OpenBLAS threads."""
    code = f"""import ctypes, pathlib, time
import numpy
time.sleep({PROBE_SLEEP})
blas = next(pathlib.Path(numpy.__file__).parent.parent.joinpath("numpy.libs").glob("libscipy_openblas*"))
threads = ctypes.CDLL(str(blas)).scipy_openblas_get_num_threads64_()
raise AssertionError(f"probe ran {PROBE_SLEEP} s; OpenBLAS threads: {{threads}}")"""
    cell = new_code_cell(code, metadata={"nbgrader": {"grade": True, "solution": False, "locked": True,
                                                      "grade_id": "probe", "points": 1, "schema_version": 3}})
    return new_notebook(cells=[cell], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"}})


def live_term(hub, folder):
    """The term, in the order a class lives it; what each step left and what each user could reach, as
    plain data for the tests to look at."""
    seen = {}
    hub.admin("POST", "/users", json={"usernames": list(STUDENTS.values())})
    for user in [INSTRUCTOR, *STUDENTS.values()]:
        hub.start_server(user)
    course_nbgrader(hub, "generate_assignment", CHAPTER.id, "--force")
    course_nbgrader(hub, "release_assignment", CHAPTER.id)
    form = {"course_id": COURSE.config.COURSE_ID, "assignment_id": CHAPTER.id}
    for kind, student in STUDENTS.items():
        fetched = hub.as_user(student, "POST", "/assignments/fetch", data=form)
        assert fetched.status_code == 200, fetched.text
        if kind != "untouched":
            work = demo_notebook(CHAPTER.id, kind)
            saved = hub.as_user(student, "PUT", f"/api/contents/{CHAPTER.id}/{NOTEBOOK}",
                                json={"type": "notebook", "format": "json", "content": work})
            assert saved.status_code == 200, saved.text
        submitted = hub.as_user(student, "POST", "/assignments/submit", data=form)
        assert submitted.status_code == 200 and "success\": false" not in submitted.text, submitted.text

    student = STUDENTS["partial"]
    saved = hub.as_user(student, "PUT", "/api/contents/validate_probe.ipynb",
                        json={"type": "notebook", "format": "json", "content": probe_notebook()})
    assert saved.status_code == 201, saved.text
    validated = hub.as_user(student, "POST", "/assignments/validate", data={"path": "validate_probe.ipynb"})
    seen["validate"] = (validated.status_code, validated.text)

    course_nbgrader(hub, "collect", CHAPTER.id)
    course_nbgrader(hub, "autograde", CHAPTER.id)

    # The written answers, graded in formgrader (the instructor's server, through the hub)
    api = "/formgrader/api"
    notebooks = hub.as_user(INSTRUCTOR, "GET", f"{api}/submitted_notebooks/{CHAPTER.id}/{CHAPTER.notebook}")
    assert notebooks.status_code == 200, notebooks.text
    perfect = next(n for n in notebooks.json() if n["student"] == STUDENTS["perfect"])
    grades = hub.as_user(INSTRUCTOR, "GET", f"{api}/grades", params={"submission_id": perfect["id"]}).json()
    written = [g for g in grades if g["auto_score"] is None and g["max_score"]]
    for grade in written:
        put = hub.as_user(INSTRUCTOR, "PUT", f"{api}/grade/{grade['id']}", json={"manual_score": grade["max_score"]})
        assert put.status_code == 200, put.text
    seen["written_points"] = [g["max_score"] for g in written]

    course_nbgrader(hub, "generate_feedback", CHAPTER.id)
    course_nbgrader(hub, "release_feedback", CHAPTER.id)
    fetched = hub.as_user(STUDENTS["perfect"], "POST", "/assignments/fetch_feedback", data=form)
    assert fetched.status_code == 200, fetched.text
    pages = hub.command(STUDENTS["perfect"], "find", f"{CHAPTER.id}/feedback", "-name", f"{CHAPTER.notebook}.html",
                        "-print0").stdout
    seen["feedback"] = [hub.command(STUDENTS["perfect"], "cat", page).stdout for page in pages.split("\0") if page]

    # What students can reach: the course's files, the grading code, formgrader, each other's submissions
    course = hub.course
    private = [course / COURSE.config.SOURCE_DIR / CHAPTER.id / NOTEBOOK,
               course / COURSE.config.SOLUTIONS_DIR / CHAPTER.id / NOTEBOOK, course / "gradebook.db",
               course / "autograder" / "grading" / "judge" / "__init__.py"]
    seen["readable"] = {s: [str(p) for p in private if hub.command(s, "head", "-c1", p, check=False).returncode == 0]
                        for s in STUDENTS.values()}
    seen["imports"] = {module: hub.command(student, "python", "-c", f"import {module}", check=False).stderr
                       for module in ("autograder.student.checks", "autograder.grading")}
    seen["rfc3987-syntax"] = [user for user in (INSTRUCTOR, student)
                              if hub.command(user, "python", "-c", "import rfc3987_syntax", check=False).returncode == 0]
    seen["own formgrader"] = hub.as_user(student, "GET", "/formgrader").status_code
    seen["instructor's formgrader"] = hub.as_user(student, "GET", "/formgrader", owner=INSTRUCTOR).status_code
    lab = hub.as_user(student, "GET", "/lab").text
    seen["lab page config"] = json.loads(re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', lab, re.S)[1])
    mine = hub.as_user(INSTRUCTOR, "GET", "/formgrader/manage_assignments")
    seen["formgrader"] = (mine.status_code, mine.headers.get("Content-Security-Policy", ""))
    intruder, victim = STUDENTS["untouched"], STUDENTS["perfect"]
    collected = course / COURSE.config.SUBMITTED_DIR / victim / CHAPTER.id
    seen["intruder"] = {
        "list the inbound folder": hub.command(intruder, "ls", hub.exchange / COURSE.config.COURSE_ID / "inbound",
                                               check=False).returncode,
        "plant a file": hub.command(intruder, "touch", collected / "planted.py", check=False).returncode,
        "replace the notebook": hub.command(intruder, "cp", "/dev/null", collected / NOTEBOOK, check=False).returncode}
    handed_in = list((course / COURSE.config.SUBMITTED_DIR).rglob("*"))
    seen["collected files"] = len(handed_in)
    seen["writable by others"] = sorted(str(p) for p in handed_in if p.lstat().st_mode & 0o022)
    seen["panel"] = formgrader_panel(hub, folder)

    # The same notebooks, graded by the course's own command on the instructor's environment (Debian's Python)
    compare = hub.course.parent / "compare"       # a course folder of its own: its own gradebook
    names = ["course_config.py", "nbgrader_config.py", COURSE.config.SOURCE_DIR, COURSE.config.RELEASE_DIR,
             COURSE.config.SUBMITTED_DIR, "chapters"]
    hub.command(INSTRUCTOR, "mkdir", compare)
    hub.command(INSTRUCTOR, "cp", "-r", *[hub.course / name for name in names], compare)
    hub.command(INSTRUCTOR, "python", "-m", "autograder", "--root", compare, "grade", CHAPTER.id, "--quiet",
                "--jobs", "1")
    seen["scores on the hub"] = by_cell(f"sqlite:///{course / 'gradebook.db'}")
    seen["scores by the course"] = by_cell(f"sqlite:///{compare / 'gradebook.db'}")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE.config.COURSE_ID) as gradebook:
        submission = gradebook.find_submission(CHAPTER.id, STUDENTS["perfect"])
        seen["perfect total"] = (submission.score, submission.max_score)
    return seen


def formgrader_panel(hub, folder):
    """The instructor logs in through the hub's form and opens Nbgrader > Formgrader in JupyterLab: the text
    its panel shows (a page that may not be framed shows none), and a screenshot in `folder`."""
    from helpers.chromium import chromium_page
    try:
        with chromium_page(folder) as page:
            page.goto(f"{hub.url}/hub/login")
            page.fill("#username_input", INSTRUCTOR)
            page.fill("#password_input", hub_support.PASSWORD)
            page.click("#login_submit")
            page.wait_for_url("**/lab**", timeout=300_000)
            page.get_by_text("Nbgrader", exact=True).click(timeout=300_000)
            page.get_by_text("Formgrader", exact=True).first.click()
            panel = page.frame_locator("iframe").first
            panel.locator("td", has_text=CHAPTER.id).first.wait_for(timeout=120_000)   # the assignments table
            news = page.locator(".jp-toast-buttonBar").get_by_role("button", name="No", exact=True)
            if news.count():                    # JupyterLab's question about news, over the table
                news.first.click()
            page.wait_for_timeout(1000)
            page.screenshot(path=str(folder / "jupyterhub-formgrader.png"))
            return panel.locator("body").inner_text()
    except Exception as error:       # the test says what failed; the other observations stand
        return f"the panel could not be read: {error}"


@pytest.fixture(scope="session")
def term(tmp_path_factory):
    """One hub for every hub test, whichever xdist worker asks first: set up, a term lived, stopped, its users
    and folders removed; the tests look at what it recorded.

    The hub's Linux users and students' group have fixed names (helpers/hub.py), which the set-up first
    removes where a stopped run left them, and its ports are chosen free before the minutes setup.sh takes:
    two test suites on one machine take turns, through a machine-wide lock held from the set-up to the
    removal (helpers/machine_lock.py)."""
    reason = hub_support.missing_machinery()
    if reason:
        pytest.skip(reason)

    def make(folder):
        with machine_wide("jupyterhub"):
            base = hub_support.make_base()
            running = None
            try:
                running = hub_support.set_up(base)
                return live_term(running, folder)
            finally:
                hub_support.tear_down(running)
                hub_support.remove_base(base)
    return once_per_run(tmp_path_factory, "jupyterhub-term", make)


def test_autograde_on_the_hub_scores_as_the_course_grades(term):
    _, seen = term
    scores = seen["scores on the hub"]
    assert scores == seen["scores by the course"]
    totals = {kind: sum(s or 0 for s in scores[student].values()) for kind, student in STUDENTS.items()}
    assert totals["perfect"] == COURSE.autograded_points(CHAPTER) and totals["untouched"] == 0
    assert 0 < totals["partial"] < totals["perfect"]


def test_a_written_answer_graded_in_formgrader_reaches_the_students_feedback(term):
    _, seen = term
    assert seen["written_points"], "chapter 3 has written questions, graded by hand"
    score, max_score = seen["perfect total"]
    assert score == max_score == COURSE.autograded_points(CHAPTER) + sum(seen["written_points"])
    assert len(seen["feedback"]) == 1, "one feedback page fetched"
    assert f"{CHAPTER.notebook} (Score: {float(score)} / {float(max_score)})" in seen["feedback"][0]


def test_students_can_read_no_answer_no_gradebook_and_no_grading_code(term):
    _, seen = term
    assert seen["readable"] == {student: [] for student in STUDENTS.values()}
    assert seen["imports"]["autograder.student.checks"] == ""
    assert "No module named 'autograder.grading'" in seen["imports"]["autograder.grading"]


def test_neither_environment_holds_rfc3987_syntax(term):
    """jupyterhub brings it back; it costs every nbgrader process 1.3 s and checks nothing here (Makefile)."""
    _, seen = term
    assert seen["rfc3987-syntax"] == []


def test_students_cannot_open_formgrader_and_the_instructors_panel_shows(term):
    folder, seen = term
    assert seen["own formgrader"] == 404 and seen["instructor's formgrader"] == 403
    assert {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"} <= set(
        seen["lab page config"]["disabledExtensions"])
    status, policy = seen["formgrader"]
    assert status == 200 and "frame-ancestors 'self'" in policy
    assert "Manage Assignments" in seen["panel"] and CHAPTER.id in seen["panel"], seen["panel"]
    assert (folder / "jupyterhub-formgrader.png").is_file()


def test_a_student_cannot_change_another_students_submission(term):
    """Before grading, a submission lies in the exchange's inbound folder (students may add, never list) and,
    once collected, in the instructor's private course folder, writable by the instructor alone."""
    _, seen = term
    assert all(code != 0 for code in seen["intruder"].values()), seen["intruder"]
    # nbgrader's submit leaves 0777; the course's collect leaves nothing under submitted/ writable but by its owner
    assert seen["collected files"] and seen["writable by others"] == [], seen["writable by others"]


def test_validate_in_a_students_server_uses_the_course_timeout_and_one_blas_thread(term):
    _, seen = term
    status, text = seen["validate"]
    assert status == 200 and "OpenBLAS threads: 1" in text, text[-3000:]
