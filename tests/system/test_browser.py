"""In a real browser: JupyterLab on localhost, a chapter 3 notebook whose Mul exercise holds a typical
mistake, opened in headless Chromium (Debian's `chromium`, driven by Playwright), all cells run. The
check's teaching message must be on the page; nbgrader's Validate button must report the failure.
The screenshot is saved next to the test's files, and to docs/ with BABYGRAD_UPDATE_SCREENSHOT=1."""
import json
import os
import shutil

import nbformat
import pytest

from autograder.build import submissions
from autograder.course import Course

from helpers.chromium import chromium_page, skip_without_chromium
from helpers.course_paths import ROOT
from helpers.jupyter_servers import serving

COURSE = Course(ROOT)
MISTAKE = "mul_same_input"
MESSAGE = "Mul().backward with inputs a(2, 3), b(2, 3)"   # the start of the visible check's teaching message
SCREENSHOT = ROOT / "docs" / "screenshot-jupyterlab.png"
pytestmark = pytest.mark.slow

skip_without_chromium()
if "ch03" not in [c.id for c in COURSE.chapters]:
    pytest.skip("the browser test opens chapter 3, which course_config.py does not list", allow_module_level=True)

LAB_SETTINGS = {
    # render every cell (JupyterLab 4 only renders cells near the viewport by default)
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    # no "would you like news?" toast over the screenshot
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}


@pytest.fixture
def student_folder(tmp_path):
    """release/ch03 with every exercise solved except Mul, which holds a typical mistake."""
    chapter = COURSE.chapter("ch03")
    folder = tmp_path / "course" / "ch03"
    shutil.copytree(COURSE.notebook(COURSE.config.RELEASE_DIR, chapter).parent, folder)
    catalog = submissions.load_catalog(COURSE, chapter)
    mistake = next(m for m in catalog.MISTAKES if m.name == MISTAKE)
    answers = submissions.solved_answers(nbformat.read(COURSE.notebook(COURSE.config.SOURCE_DIR, chapter), 4))
    release = nbformat.read(folder / f"{chapter.notebook}.ipynb", 4)
    nbformat.write(submissions.filled(release, submissions.with_mistakes(answers, [mistake])),
                   folder / f"{chapter.notebook}.ipynb")
    return folder


@pytest.fixture
def lab(tmp_path, student_folder):
    """JupyterLab serving the student's folder; yields its base URL and token. Its settings and workspaces (the
    layout Lab saves as the page changes) are the test's own, not the home folder's, which every test run shares."""
    settings = tmp_path / "lab-settings"
    for name, values in LAB_SETTINGS.items():
        path = settings / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    with serving(student_folder.parent, tmp_path, env, app="lab") as (base, token):
        yield base, token


def test_teaching_message_appears_in_jupyterlab(lab, tmp_path):
    base, token = lab
    with chromium_page(tmp_path) as page:
        page.goto(f"{base}/lab/tree/ch03/autodiff.ipynb?token={token}")
        page.locator(".jp-Notebook").first.wait_for(timeout=120_000)
        page.locator("#jp-main-statusbar").get_by_text("Idle").first.wait_for(timeout=120_000)

        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()

        message = page.locator(".jp-OutputArea-output", has_text=MESSAGE).first
        message.wait_for(state="visible", timeout=180_000)
        text = message.inner_text()
        assert "the gradient for a is wrong" in text and "Hint:" in text
        cell = page.locator(".jp-Cell", has=page.locator(".jp-OutputArea-output", has_text=MESSAGE)).first
        cell.scroll_into_view_if_needed()
        page.mouse.wheel(0, 120)      # the exercise's code above, the message in full view
        page.wait_for_timeout(500)
        shot = tmp_path / "screenshot-jupyterlab.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000
        print(f"screenshot: {shot}")
        if os.environ.get("BABYGRAD_UPDATE_SCREENSHOT") == "1":
            shutil.copy(shot, SCREENSHOT)

        # nbgrader's Validate button (its JupyterLab extension) runs the notebook and reports the failure
        page.locator(".jp-Toolbar-item button, .jp-ToolbarButtonComponent", has_text="Validate").first.click()
        dialog = page.locator(".jp-Dialog").first
        dialog.wait_for(state="visible", timeout=180_000)
        page.get_by_text(MESSAGE).last.wait_for(timeout=180_000)
        assert "Mul().backward" in dialog.inner_text()
