"""A student's notebook cannot act in the instructor's browser.

Formgrader renders each autograded notebook into a page of the instructor's own Jupyter server, so a
script that ran there would act with the instructor's session: set any student's grade through
formgrader's API, read the gradebook, run commands. Mallory's chapter 3 submission puts script
everywhere a page could run it: in her written answer (an `<img onerror>`, a `<script>`) and in what her
code displays (HTML with an event handler, JavaScript, markdown). Each script, if it ran, would mark the
page and write a file into the course through the server's contents API.

Her notebook goes through the real `nbgrader autograde` and `generate_feedback`; then headless
Chromium logs in as the instructor and opens formgrader's manual-grading page for it, and her feedback page.
Nothing may run and nothing may be written, while her answer and the image she pasted into it are still
there, and formgrader's own grading still works: the score typed for her answer reaches the gradebook
(grading/safe_html.py).
"""
import base64
import time

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder import cell_marks
from autograder.build import submissions
from autograder.grading.nbgrader_cli import run_nbgrader

from helpers.chromium import chromium_page, skip_without_chromium
from helpers.class_support import course_copy, hand_in
from helpers.jupyter_servers import fresh_jupyter_env, serving

pytestmark = pytest.mark.slow
skip_without_chromium()

CHAPTER, STUDENT, ANSWER = "ch03", "mallory", "q_accumulate"
# A 1×1 PNG, pasted into her answer as an inline image: markdown's own images must survive the cleaning.
PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5f0bf570000000049454e44ae426082")).decode()


def script(vector):
    """JavaScript that marks the page with `vector` and writes pwned-<vector>.txt into the server's root
    with the instructor's login cookie and XSRF token: what a real attack would do with formgrader's
    grade API instead."""
    return ("(function(){document.documentElement.setAttribute('data-ran-%s','1');"
            "var x=(document.cookie.match(/_xsrf=([^;]+)/)||[])[1]||'';"
            "fetch('/api/contents/pwned-%s.txt',{method:'PUT',headers:{'Content-Type':'application/json','X-XSRFToken':x},"
            "body:JSON.stringify({type:'file',format:'text',content:'%s'})})})()" % (vector, vector, vector))


HOSTILE_ANSWER = (f"Mallory's answer: the gradients of both uses add up.\n\n"
                  f"![pasted](data:image/png;base64,{PIXEL})\n\n"
                  f'<img src="nowhere.png" onerror="{script("answer-onerror")}">\n\n'
                  f"<script>{script('answer-script')}</script>\n")
HOSTILE_OUTPUTS = f"""from IPython.display import HTML, Javascript, Markdown, display
display(HTML({'<img src="nowhere.png" onerror="%s">' % script("output-html")!r}))
display(Javascript({script("output-javascript")!r}))
display(Markdown({'<img src="nowhere.png" onerror="%s">' % script("output-markdown")!r}))
"""

# Pages handed in beside her notebook: formgrader serves a submission's files from the instructor's server.
HOSTILE_FILES = {"notes.html": f"<html><body><script>{script('file-html')}</script>notes</body></html>",
                 "diagram.svg": f'<svg xmlns="http://www.w3.org/2000/svg"><script>{script("file-svg")}</script></svg>'}


@pytest.fixture(scope="module")
def graded_mallory(built_course, tmp_path_factory):
    """A course in which Mallory's hostile chapter 3 submission was autograded and fed back."""
    course = course_copy(built_course, tmp_path_factory.mktemp("formgrader") / "course", CHAPTER)
    chapter = course.chapter(CHAPTER)
    release = nbformat.read(course.notebook(course.config.RELEASE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4))
    first_code = next(cell_marks.grade_id(c) for c in release.cells if c.cell_type == "code" and cell_marks.is_solution(c))
    notebook = submissions.filled(release, {ANSWER: HOSTILE_ANSWER, first_code: HOSTILE_OUTPUTS + answers[first_code]})
    hand_in(course, chapter, {STUDENT: notebook})
    folder = course.notebook(course.config.SUBMITTED_DIR, chapter, STUDENT).parent
    for name, page in HOSTILE_FILES.items():
        (folder / name).write_text(page, encoding="utf-8")
    run_nbgrader(course.root, "autograde", CHAPTER, "--force")
    run_nbgrader(course.root, "generate_feedback", CHAPTER, "--force", f"--student={STUDENT}")
    graded = nbformat.read(course.notebook(course.config.AUTOGRADED_DIR, chapter, STUDENT), as_version=4)
    javascript = [output for cell in graded.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
                  if "application/javascript" in output.get("data", {})]
    assert len(javascript) == 1, "her code's JavaScript output should reach the autograded notebook"
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        submission_id = gradebook.find_submission_notebook(chapter.notebook, CHAPTER, STUDENT).id
    return course, submission_id


def saved_grade(course, within):
    """(manual score, needs manual grade) of her answer, once formgrader has saved a score (or after `within` s)."""
    deadline = time.monotonic() + within
    while True:
        with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
            grade = gradebook.find_grade(ANSWER, course.chapter(CHAPTER).notebook, CHAPTER, STUDENT)
            found = grade.manual_score, grade.needs_manual_grade
        if found[0] is not None or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def scripts_that_ran(page):
    return page.evaluate("Array.from(document.documentElement.attributes).map(a => a.name)"
                         ".filter(n => n.startsWith('data-ran-')).map(n => n.slice(9))")


def test_formgrader_shows_the_hostile_submission_inert(graded_mallory, tmp_path):
    course, submission_id = graded_mallory
    with serving(course.root, tmp_path, fresh_jupyter_env(tmp_path)) as (base, token), chromium_page(tmp_path) as page:
        page.goto(f"{base}/login")                        # the instructor logs in, as in a fresh browser
        page.locator("#password_input").fill(token)
        page.locator("#password_input").press("Enter")
        page.wait_for_load_state("networkidle")
        page.goto(f"{base}/formgrader/submissions/{submission_id}/")
        score = page.locator(f"input.score#{ANSWER}")     # formgrader's box for her answer's score
        score.wait_for(timeout=60_000)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(1000)                       # any fetch a script started
        ran = scripts_that_ran(page)
        answer_shown = page.get_by_text("Mallory's answer: the gradients of both uses add up.").count()
        pasted = page.locator("img[alt=pasted]").first.get_attribute("src", timeout=10_000)
        score.fill("1.5")                                 # the instructor grades her answer as usual;
        score.press("Tab")                                # formgrader saves on change
        saved = saved_grade(course, within=30)
    written = sorted(p.name for p in course.root.glob("pwned-*"))
    assert not ran, f"her scripts ran in formgrader's page, with the instructor's session: {ran}"
    assert not written, f"her scripts wrote into the course through the server: {written}"
    assert answer_shown == 1, "her written answer should be on the page, for the instructor to grade"
    assert pasted.startswith("data:image/png;base64,"), f"the image pasted into her answer should stay: {pasted[:60]}"
    assert saved == (1.5, False), f"the score typed in formgrader did not reach the gradebook: {saved}"


def test_pages_she_hands_in_beside_her_notebook_are_never_served(graded_mallory, tmp_path):
    """course_config's SUBMISSION_FILE_TYPES: nbgrader leaves them out of autograded/ and feedback/, so formgrader's
    submission-files URL has nothing to serve; her notebook is still graded."""
    course, submission_id = graded_mallory
    kept = [p.relative_to(course.root).as_posix() for folder in (course.config.AUTOGRADED_DIR, course.config.FEEDBACK_DIR)
            for name in HOSTILE_FILES for p in (course.root / folder).rglob(name)]
    assert kept == [], f"nbgrader copied her pages where formgrader serves them: {kept}"
    with serving(course.root, tmp_path, fresh_jupyter_env(tmp_path)) as (base, token), chromium_page(tmp_path) as page:
        page.goto(f"{base}/login")
        page.locator("#password_input").fill(token)
        page.locator("#password_input").press("Enter")
        page.wait_for_load_state("networkidle")
        statuses = {}
        for name in HOSTILE_FILES:
            statuses[name] = page.goto(f"{base}/formgrader/submissions/{submission_id}/{name}").status
            page.wait_for_timeout(500)
        ran = scripts_that_ran(page)
    assert statuses == {name: 404 for name in HOSTILE_FILES}, statuses
    assert not ran and not sorted(p.name for p in course.root.glob("pwned-*"))


def test_her_feedback_page_is_inert_too(graded_mallory, tmp_path):
    course, _ = graded_mallory
    chapter = course.chapter(CHAPTER)
    feedback = course.root / course.config.FEEDBACK_DIR / STUDENT / CHAPTER / f"{chapter.notebook}.html"
    with chromium_page(tmp_path) as page:
        page.goto(feedback.as_uri())
        page.get_by_text("Mallory's answer: the gradients of both uses add up.").wait_for(timeout=30_000)
        page.wait_for_timeout(1000)
        ran = scripts_that_ran(page)
    assert not ran, f"her scripts ran in her feedback page: {ran}"
