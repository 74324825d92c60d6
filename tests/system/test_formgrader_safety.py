"""A student's work cannot act in the instructor's browser.

Formgrader renders each autograded notebook into a page of the instructor's own Jupyter server, and the
server serves the feedback pages and the files of a submission, so a script that ran there would act with
the instructor's session: set any student's grade through formgrader's API, read the gradebook, run
commands. Mallory's chapter 3 submission carries a catalogue of script carriers (CARRIERS): in her written
answer and an added markdown cell (tags, event handlers, `javascript:` URLs, SVG, frames, `meta refresh`,
`<base>`, styles, attachments), in what her code displays (every output mimetype, in odd cases too, and
crafted output metadata), and in pages handed in beside her notebook, named in any case. Each carrier, if
it ran, would log its name, mark the page and write pwned-<name>.txt into the course through the server's
contents API; those that load instead of run name a /canary/<name> URL.

Her notebook goes through the real `nbgrader autograde` and `generate_feedback`; then headless Chromium
logs in as the instructor to one Jupyter server and opens formgrader's submission view, her feedback page
as the server serves it, the server's own rendering of her autograded notebook, and each file formgrader
or the server serves from her work (some placed straight into autograded/ and feedback/). No carrier may
run or reach the server, every page is sent with the policy of grading/page_policy.py, and formgrader's
own grading still works: the score typed for her answer reaches the gradebook.
"""
import base64
import json
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

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
BROKEN_IMAGE = "AAAA"    # base64, but no picture: an <img> of it fires onerror


def script(name):
    """JavaScript that logs `name`, marks the page with it and writes pwned-<name>.txt into the server's
    root with the instructor's login cookie and XSRF token: what a real attack would do with formgrader's
    grade API instead. No quotes, spaces or angle brackets, so it also fits where a bare attribute value goes."""
    return ("(function(n,x){console.log(`carrier-ran:`+n);document.documentElement.setAttribute(`data-ran-`+n,`1`);"
            "x=(document.cookie.match(/_xsrf=([^;]+)/)||[])[1]||``;"
            "fetch(`/api/contents/pwned-`+n+`.txt`,{method:`PUT`,headers:{[`Content-Type`]:`application/json`,"
            "[`X-XSRFToken`]:x},body:JSON.stringify({type:`file`,format:`text`,content:n})})})(`%s`)" % name)


def canary(name):
    """A URL of the server that only a carrier that loads something names."""
    return f"/canary/{name}"


def html_carriers(prefix):
    """{carrier name: HTML}: each way an HTML fragment can run script or make the browser fetch."""
    def attribute(text):
        return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    return {
        f"{prefix}-script": f"<script>{script(f'{prefix}-script')}</script>",
        f"{prefix}-onerror": f'<img src="nowhere.png" onerror="{script(f"{prefix}-onerror")}">',
        f"{prefix}-svg-onload": f'<svg onload="{script(f"{prefix}-svg-onload")}"><circle r="1"/></svg>',
        f"{prefix}-autofocus": f'<input autofocus onfocus="{script(f"{prefix}-autofocus")}">',
        f"{prefix}-iframe-srcdoc": f'<iframe srcdoc="{attribute("<script>" + script(f"{prefix}-iframe-srcdoc") + "</script>")}"></iframe>',
        f"{prefix}-javascript-url": f'<a class="carrier-link" href="javascript:{script(f"{prefix}-javascript-url")}">open</a>',
        f"{prefix}-meta-refresh": f'<meta http-equiv="refresh" content="0;url={canary(f"{prefix}-meta-refresh")}">',
        f"{prefix}-base-href": f'<base href="{canary(f"{prefix}-base-href")}/"><img src="probe.png">',
        f"{prefix}-object": f'<object data="{canary(f"{prefix}-object")}"></object>',
        f"{prefix}-style": f"<style>@import url({canary(f'{prefix}-style')});</style>"
                           f'<p style="background:url({canary(f"{prefix}-style-attribute")})">styled</p>',
        f"{prefix}-server-image": f'<img src="{canary(f"{prefix}-server-image")}">',
    }


ANSWER_CARRIERS = html_carriers("answer")
HOSTILE_ANSWER = (f"Mallory's answer: the gradients of both uses add up.\n\n"
                  f"![pasted](data:image/png;base64,{PIXEL})\n\n"
                  f"[a markdown link](javascript:{script('answer-markdown-link')})\n\n"
                  "![attached](attachment:diagram.svg) ![attached page](attachment:page.html)\n\n"
                  + "\n\n".join(ANSWER_CARRIERS.values()) + "\n")
SVG = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{script("attachment-svg-onload")}"><script>{script("attachment-svg")}</script></svg>'
ATTACHMENTS = {"diagram.svg": {"image/svg+xml": base64.b64encode(SVG.encode()).decode()},
               "page.html": {"text/html": base64.b64encode(f"<script>{script('attachment-html')}</script>".encode()).decode()}}
ADDED_MARKDOWN = html_carriers("added-markdown")


def bitmap_metadata(name, mimetype):
    """Metadata nbconvert's templates write into an <img>: size (bare, unquoted), file name, alt text."""
    return {mimetype: {"width": f"1 onerror={script(f'{name}-width')}", "height": f"1 onload={script(f'{name}-height')}",
                       "alt": f'x" onerror="{script(f"{name}-alt")}', "unconfined": f"x onerror={script(f'{name}-unconfined')}"},
            "filenames": {mimetype: canary(f"{name}-filenames")},
            "width": f"1 onerror={script(f'{name}-top-width')}"}


# (carrier names, data, metadata) of each output her code displays
OUTPUTS = [
    (list(html_carriers("output-html")), {"text/html": "".join(html_carriers("output-html").values())}, {}),
    (["output-html-isolated"], {"text/html": f"<script>{script('output-html-isolated')}</script>"},
     {"text/html": {"isolated": True}}),
    (["output-svg"], {"image/svg+xml": SVG.replace("attachment-", "output-")}, {}),
    (["output-javascript"], {"application/javascript": script("output-javascript")}, {}),
    (["output-markdown", "output-markdown-link"],
     {"text/markdown": f'<img src="x" onerror="{script("output-markdown")}"> [link](javascript:{script("output-markdown-link")})'}, {}),
    (["output-latex"], {"text/latex": f"$x$ <script>{script('output-latex')}</script>"}, {}),
    (["output-png-width", "output-png-height", "output-png-alt", "output-png-unconfined", "output-png-filenames",
      "output-png-top-width"], {"image/png": BROKEN_IMAGE}, bitmap_metadata("output-png", "image/png")),
    (["output-jpeg-width", "output-jpeg-height", "output-jpeg-alt", "output-jpeg-unconfined", "output-jpeg-filenames",
      "output-jpeg-top-width"], {"image/jpeg": BROKEN_IMAGE}, bitmap_metadata("output-jpeg", "image/jpeg")),
    (["output-png-bad-data"], {"image/png": f'" onerror="{script("output-png-bad-data")}'}, {}),
    (["output-json"], {"application/json": {"html": f"<script>{script('output-json')}</script>"}}, {}),
    (["output-widget"], {"application/vnd.jupyter.widget-view+json": {"model_id": f"</script><script>{script('output-widget')}</script>"}}, {}),
    (["output-unusual"], {"application/x-course-page": f"<script>{script('output-unusual')}</script>",
                          "text/x-html": f"<script>{script('output-unusual')}</script>"}, {}),
    (["output-mixed-html"], {"Text/HTML": f'<img src="x" onerror="{script("output-mixed-html")}">'},
     {"Text/HTML": {"isolated": True}}),
    (["output-mixed-javascript"], {"Application/JavaScript": script("output-mixed-javascript")}, {}),
    (["output-mixed-svg"], {"IMAGE/SVG+XML": SVG.replace("attachment-", "output-mixed-")}, {}),
    (["output-mixed-png-width"], {"Image/PNG": BROKEN_IMAGE, "text/plain": "a picture"},
     {"Image/PNG": {"width": f"1 onerror={script('output-mixed-png-width')}"}}),
    (["output-stdout"], None, None),
]


def displaying(outputs):
    """Code that displays each output of `outputs` (None: prints HTML to stdout) and ends in an object
    whose HTML representation is hostile too (an execute_result)."""
    lines = ["from IPython.display import publish_display_data"]
    for names, data, metadata in outputs:
        if data is None:
            lines.append(f"print({'<script>%s</script>' % script(names[0])!r})")
        else:
            lines.append(f"publish_display_data({json.dumps(data)}, metadata={json.dumps(metadata)})")
    return "\n".join(lines) + "\n"


REPR_HTML = ("class _Shown:\n    def _repr_html_(self):\n"
             f"        return {'<img src=x onerror=%s>' % script('output-repr-html')!r}\n")

# Pages handed in beside her notebook: formgrader serves a submission's files from the instructor's server.
# course_config's SUBMISSION_FILE_TYPES keeps them out of autograded/ in any case (never served there); wherever
# they land they are served harmlessly, and they are placed straight into autograded/ and feedback/ too.
HOSTILE_FILES = {"notes.html": f"<html><body><script>{script('file-html')}</script>notes</body></html>",
                 "diagram.svg": f'<svg xmlns="http://www.w3.org/2000/svg"><script>{script("file-svg")}</script></svg>'}


def page_files(prefix):
    """{file name: content}: a page or picture in each extension and case a browser runs script in."""
    html = "<html><body><script>{}</script><img src=x onerror={}>notes</body></html>"
    xhtml = ('<html xmlns="http://www.w3.org/1999/xhtml"><body><script>{}</script>'
             '<img src="x" onerror="{}"/>page</body></html>')
    svg = '<svg xmlns="http://www.w3.org/2000/svg" onload="{1}"><script>{0}</script></svg>'
    files = {"notes.HTML": html, "notes.Htm": html, "page.XHTML": xhtml, "page.xht": xhtml, "diagram.SVG": svg}
    return {name: text.format(script(f"{prefix}-{name}"), script(f"{prefix}-{name}-handler"))
            for name, text in files.items()}


SUBMITTED_PAGES, PLACED_PAGES = page_files("submitted-file"), page_files("placed-file")
PLACED_NOTEBOOK = "placed-with-attachments.ipynb"


@pytest.fixture(scope="module")
def graded_mallory(built_course, tmp_path_factory):
    """A course in which Mallory's hostile chapter 3 submission was autograded and fed back."""
    course = course_copy(built_course, tmp_path_factory.mktemp("formgrader") / "course", CHAPTER)
    chapter = course.chapter(CHAPTER)
    release = nbformat.read(course.notebook(course.config.RELEASE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4))
    exercises = [cell_marks.grade_id(c) for c in release.cells if c.cell_type == "code" and cell_marks.is_solution(c)]
    # a few outputs a cell, so no cell's output grows past the course's cap
    hostile = {grade_id: displaying(OUTPUTS[i::4]) + answers[grade_id] for i, grade_id in enumerate(exercises[:4])}
    hostile[exercises[4]] = answers[exercises[4]] + REPR_HTML + "_Shown()\n"
    notebook = submissions.filled(release, {ANSWER: HOSTILE_ANSWER, **hostile})
    at = next(i for i, cell in enumerate(notebook.cells) if cell_marks.grade_id(cell) == ANSWER)
    notebook.cells[at].attachments = ATTACHMENTS
    notebook.cells.insert(at + 1, nbformat.v4.new_markdown_cell("\n\n".join(ADDED_MARKDOWN.values())))
    assert not set(script("name")) & set(" '\"<>"), "a carrier's script must fit a bare attribute value"
    hand_in(course, chapter, {STUDENT: notebook})
    folder = course.notebook(course.config.SUBMITTED_DIR, chapter, STUDENT).parent
    for name, page in {**HOSTILE_FILES, **SUBMITTED_PAGES}.items():
        (folder / name).write_text(page, encoding="utf-8")
    run_nbgrader(course.root, "autograde", CHAPTER, "--force")
    run_nbgrader(course.root, "generate_feedback", CHAPTER, "--force", f"--student={STUDENT}")
    for kind in (course.config.AUTOGRADED_DIR, course.config.FEEDBACK_DIR):
        for name, page in PLACED_PAGES.items():
            (course.root / kind / STUDENT / CHAPTER / f"{kind}-{name}").write_text(page, encoding="utf-8")
    graded = nbformat.read(course.notebook(course.config.AUTOGRADED_DIR, chapter, STUDENT), as_version=4)
    # autograde leaves her attachments out (her answer still names them); a copy of her autograded notebook
    # with them, placed beside it, is what the server's own nbconvert renders of her work at its worst
    graded_with_attachments = nbformat.from_dict(graded)
    next(c for c in graded_with_attachments.cells if cell_marks.grade_id(c) == ANSWER).attachments = ATTACHMENTS
    nbformat.write(graded_with_attachments, course.root / course.config.AUTOGRADED_DIR / STUDENT / CHAPTER / PLACED_NOTEBOOK)
    outputs = [output for cell in graded.cells if cell.cell_type == "code" for output in cell.get("outputs", [])]
    assert sum("application/javascript" in output.get("data", {}) for output in outputs) == 1, \
        "her code's JavaScript output should reach the autograded notebook"
    widths = [output.metadata["image/png"]["width"] for output in outputs if "image/png" in output.get("metadata", {})]
    assert widths and "onerror" in widths[0], "her image's crafted metadata should reach the autograded notebook"
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        submission_id = gradebook.find_submission_notebook(chapter.notebook, CHAPTER, STUDENT).id
    return course, submission_id


@dataclass
class Browser:
    """The instructor's logged-in browser, and what every page it opened did: the requests that reached a
    server, the carriers that logged their name."""
    base: str
    page: object
    requests: list = field(default_factory=list)
    ran: list = field(default_factory=list)

    def forget(self):
        """Leave the last page, with whatever it still had in flight, and start a new record."""
        self.page.goto("about:blank")
        self.page.wait_for_timeout(500)
        self.requests.clear()
        self.ran.clear()

    def open(self, path, expect=200):
        """Open `path` as a link on the server's own pages opens it (the server serves /files/ only to
        its own pages); fire what needs a click; return its response's Content-Security-Policy."""
        response = self.page.goto(self.base + path, referer=self.base + "/lab")
        assert response.status == expect, f"{path}: status {response.status}, expected {expect}"
        self.page.wait_for_load_state("load")
        for link in self.page.locator("a.carrier-link, a[href^='javascript:' i]").all():
            link.click(force=True, no_wait_after=True, timeout=5_000)
        self.page.wait_for_timeout(1000)                   # any fetch a script started, any refresh
        return response.headers.get("content-security-policy", "")

    def marks(self):
        return self.page.evaluate("Array.from(document.documentElement.attributes).map(a => a.name)"
                                  ".filter(n => n.startsWith('data-ran-')).map(n => n.slice(9))")

    def reached(self, allowed):
        """The paths requested that are not `allowed` (prefixes): a carrier's fetch, load or navigation."""
        paths = [urlsplit(url).path for url in self.requests]
        allowed = (*allowed, "/favicon.ico")              # what Chromium asks of every site
        return sorted({path for path in paths if not path.startswith(allowed) or "canary" in path or "pwned" in path})


@pytest.fixture(scope="module")
def instructor(graded_mallory, tmp_path_factory):
    """One Jupyter server on Mallory's graded course, with the instructor logged in to it in Chromium."""
    course, _ = graded_mallory
    tmp_path = tmp_path_factory.mktemp("instructor")
    with serving(course.root, tmp_path, fresh_jupyter_env(tmp_path)) as (base, token), chromium_page(tmp_path) as page:
        browser = Browser(base, page)
        # a request that reached a server is one that got a response (what the page's policy blocks gets none)
        page.context.on("response", lambda response: browser.requests.append(response.url))
        page.context.on("console", lambda message: browser.ran.append(message.text[len("carrier-ran:"):])
                        if message.text.startswith("carrier-ran:") else None)
        page.goto(f"{base}/login")                        # the instructor logs in, as in a fresh browser
        page.locator("#password_input").fill(token)
        page.locator("#password_input").press("Enter")
        page.wait_for_load_state("networkidle")
        yield browser


def saved_grade(course, score, within):
    """(manual score, needs manual grade) of her answer, once formgrader has saved `score` (or after `within` s)."""
    deadline = time.monotonic() + within
    while True:
        with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
            grade = gradebook.find_grade(ANSWER, course.chapter(CHAPTER).notebook, CHAPTER, STUDENT)
            found = grade.manual_score, grade.needs_manual_grade
        if found[0] == score or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def written(course):
    return sorted(p.name for p in course.root.glob("pwned-*"))


def test_formgrader_shows_the_hostile_submission_inert_and_grading_works(graded_mallory, instructor):
    course, submission_id = graded_mallory
    instructor.forget()
    page = instructor.page
    response = page.goto(f"{instructor.base}/formgrader/submissions/{submission_id}/")
    policy = response.headers.get("content-security-policy", "")
    score = page.locator(f"input.score#{ANSWER}")         # formgrader's box for her answer's score
    score.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    for link in page.locator("#notebook a").all():        # her links, javascript: ones among them
        if (link.get_attribute("href") or "").lower().startswith("javascript:"):
            link.click(force=True, no_wait_after=True, timeout=5_000)
    page.wait_for_timeout(1000)                           # any fetch a script started
    ran, marks = sorted(set(instructor.ran)), instructor.marks()
    # nbgrader's stylesheets load under the policy too (its navigation bar is fixed to the top)
    navigation = page.evaluate("getComputedStyle(document.querySelector('nav.navbar')).position")
    answer_shown = page.get_by_text("Mallory's answer: the gradients of both uses add up.").count()
    pasted = page.locator("img[alt=pasted]").first.get_attribute("src", timeout=10_000)
    score.fill("1.5")                                     # the instructor grades her answer as usual;
    score.press("Tab")                                    # formgrader saves on change, through its API
    saved = saved_grade(course, 1.5, within=30)
    reached = instructor.reached(["/formgrader/"])
    assert not ran and not marks, f"her scripts ran in formgrader's page, with the instructor's session: {ran} {marks}"
    assert not reached, f"her carriers reached the server from formgrader's page: {reached}"
    assert not written(course), f"her scripts wrote into the course through the server: {written(course)}"
    assert "'nonce-" in policy and "'unsafe-inline'" not in policy and "frame-ancestors 'self'" in policy, \
        f"formgrader's submission view should come with grading/page_policy.py's policy: {policy!r}"
    assert navigation == "fixed", f"formgrader's own styles did not apply: {navigation}"
    assert answer_shown == 1, "her written answer should be on the page, for the instructor to grade"
    assert pasted.startswith("data:image/png;base64,"), f"the image pasted into her answer should stay: {pasted[:60]}"
    assert saved == (1.5, False), f"the score typed in formgrader did not reach the gradebook: {saved}"


def test_the_views_policy_alone_stops_what_cleaning_might_miss(graded_mallory, instructor):
    """Formgrader's submission view as the server sends it, nonce and policy included, with raw carriers put
    into her part of the page on the way (as if the cleaning had missed each one): none runs or reaches the
    server, and nbgrader's own scripts still save a score. (A `meta refresh`, which no policy stops, is
    renamed by the server in the page's body: tests/unit/test_page_policy.py.)"""
    course, submission_id = graded_mallory
    view = f"{instructor.base}/formgrader/submissions/{submission_id}/"
    carriers = {name: html for name, html in html_carriers("missed").items() if name != "missed-meta-refresh"}
    missed = "".join(carriers.values()) + f'<img src="data:image/png;base64,{BROKEN_IMAGE}" width=1 onerror={script("missed-width")}>'

    def uncleaned(route):
        response = route.fetch()
        page = response.text()
        at = page.index('<div class="container" id="notebook-container">')
        route.fulfill(response=response, body=page[:at] + missed + page[at:])

    instructor.forget()
    page = instructor.page
    page.route(view, uncleaned)
    try:
        page.goto(view)
        score = page.locator(f"input.score#{ANSWER}")
        score.wait_for(timeout=60_000)
        raw_link = page.locator("a.carrier-link[href^='javascript:']")   # the cleaned ones have lost their href
        assert raw_link.count() == 1, "the raw carriers should be in the page"
        raw_link.click(force=True, no_wait_after=True, timeout=5_000)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(1000)
        ran, marks = sorted(set(instructor.ran)), instructor.marks()
        score.fill("2")
        score.press("Tab")
        saved = saved_grade(course, 2.0, within=30)
    finally:
        page.unroute(view)
    reached = instructor.reached(["/formgrader/"])
    assert not ran and not marks, f"scripts the cleaning missed would run in formgrader's page: {ran} {marks}"
    assert not reached, f"carriers the cleaning missed would reach the server: {reached}"
    assert not written(course), written(course)
    assert saved == (2.0, False), f"nbgrader's own scripts should still save the score: {saved}"


def test_her_feedback_page_as_the_server_serves_it_runs_nothing(graded_mallory, instructor):
    """The feedback page, and the server's own HTML of her autograded notebook with her attachments
    (nbconvert, without the course's cleaning): sandboxed, so nothing in them runs or loads."""
    course, _ = graded_mallory
    notebook = course.chapter(CHAPTER).notebook
    pages = [f"/files/{course.config.FEEDBACK_DIR}/{STUDENT}/{CHAPTER}/{notebook}.html", f"/nbconvert/html/{course.config.AUTOGRADED_DIR}/{STUDENT}/{CHAPTER}/{PLACED_NOTEBOOK}"]
    instructor.forget()
    policies, marks = {}, {}
    for path in pages:
        policies[path] = instructor.open(path)
        marks[path] = instructor.marks()
    ran, reached = sorted(set(instructor.ran)), instructor.reached(pages)
    assert not ran and not any(marks.values()), f"her scripts ran in her feedback: {ran} {marks}"
    assert not reached, f"her carriers reached the server from her feedback: {reached}"
    assert not written(course), written(course)
    unsandboxed = {path: policy for path, policy in policies.items()
                   if not ("sandbox" in policy and "allow-scripts" not in policy and "allow-same-origin" not in policy)}
    assert not unsandboxed, f"pages made from her work should come sandboxed, without scripts: {unsandboxed}"


def test_files_served_from_her_work_run_nothing(graded_mallory, instructor):
    """Every page or picture beside her notebook, in any case, through formgrader's submission files and the
    server's /files/: the ones she handed in (where nbgrader copied them) and ones placed straight into
    autograded/ and feedback/."""
    course, submission_id = graded_mallory
    config = course.config
    folder = f"{STUDENT}/{CHAPTER}"
    paths = []
    for name in SUBMITTED_PAGES:       # handed in: still in submitted/, or where autograde set it aside
        handed_in = f"{config.SUBMITTED_DIR}/{folder}/{name}"
        set_aside = f"{config.LEDGER_DIR}/refused/{CHAPTER}/{STUDENT}/{name}"
        paths.append(f"/files/{handed_in if (course.root / handed_in).exists() else set_aside}")
        if (course.root / config.AUTOGRADED_DIR / folder / name).exists():
            paths += [f"/formgrader/submissions/{submission_id}/{name}", f"/files/{config.AUTOGRADED_DIR}/{folder}/{name}"]
    for name in PLACED_PAGES:
        paths.append(f"/formgrader/submissions/{submission_id}/{config.AUTOGRADED_DIR}-{name}")
        paths += [f"/files/{kind}/{folder}/{kind}-{name}" for kind in (config.AUTOGRADED_DIR, config.FEEDBACK_DIR)]
    instructor.forget()
    policies, marks = {}, {}
    for path in paths:
        policies[path] = instructor.open(path)
        marks[path] = instructor.marks()
    ran, reached = sorted(set(instructor.ran)), instructor.reached(paths)
    assert not ran and not any(marks.values()), f"her pages ran script with the instructor's origin: {ran} {marks}"
    assert not reached, f"her pages reached the server: {reached}"
    assert not written(course), written(course)
    unsandboxed = {path: policy for path, policy in policies.items()
                   if not ("sandbox" in policy and "allow-scripts" not in policy and "allow-same-origin" not in policy)}
    assert not unsandboxed, f"files from her work should come sandboxed, without scripts: {unsandboxed}"


def test_pages_she_hands_in_beside_her_notebook_in_lower_case_are_never_served(graded_mallory, instructor):
    """course_config's SUBMISSION_FILE_TYPES: nbgrader leaves them out of autograded/ and feedback/, so formgrader's
    submission-files URL has nothing to serve; her notebook is still graded."""
    course, submission_id = graded_mallory
    kept = [p.relative_to(course.root).as_posix() for folder in (course.config.AUTOGRADED_DIR, course.config.FEEDBACK_DIR)
            for name in HOSTILE_FILES for p in (course.root / folder).rglob(name)]
    assert kept == [], f"nbgrader copied her pages where formgrader serves them: {kept}"
    instructor.forget()
    for name in HOSTILE_FILES:
        instructor.open(f"/formgrader/submissions/{submission_id}/{name}", expect=404)
    assert not instructor.ran and not [name for name in written(course) if name.startswith(("pwned-file-html", "pwned-file-svg"))]


def test_her_feedback_page_is_inert_even_opened_from_disk(graded_mallory, instructor):
    """Opened as a file (as a student opens hers), no server policy applies: the cleaning alone holds."""
    course, _ = graded_mallory
    chapter = course.chapter(CHAPTER)
    feedback = course.root / course.config.FEEDBACK_DIR / STUDENT / CHAPTER / f"{chapter.notebook}.html"
    instructor.forget()
    page = instructor.page
    page.goto(feedback.as_uri())
    page.get_by_text("Mallory's answer: the gradients of both uses add up.").wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    ran, marks = sorted(set(instructor.ran)), instructor.marks()
    assert not ran and not marks, f"her scripts ran in her feedback page: {ran} {marks}"
    assert not written(course), written(course)
