"""The cells every chapter notebook gets from the build, so no chapter script repeats them.

* a locked badge cell on top: open this chapter in Colab, or the course on Binder;
* a locked set-up cell before the first code cell: on Colab it installs the course package at the
  course's version; anywhere it fetches missing support files and starts recording the checks;
* a first line on every test cell, `# Check <id> · <n> points`, that names it for the progress table;
* a locked progress cell at the end: the table of `python -m autograder check`, inside the notebook.
"""
import nbformat

from .authoring import nbgrader_meta
from .progress import HEADER, header

BADGES_ID, SETUP_ID, PROGRESS_TITLE_ID, PROGRESS_ID = "course-badges", "course-setup", "course-progress-title", "course-progress"
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
PACKAGE = "babygrad-course"


def locked(cell, cell_id):
    cell.id = cell_id
    cell.metadata = {"nbgrader": nbgrader_meta("provided", {"id": cell_id}, 0)}
    return cell


def badge_markdown(config, chapter):
    return (f"[![Open in Colab]({COLAB_BADGE})]({config.colab_url(chapter)}) "
            f"[![Binder]({BINDER_BADGE})]({config.binder_url()})")


def setup_source(config, chapter, support_files):
    install = f"{PACKAGE} @ git+{config.REPOSITORY}@{config.TAG}"
    files = ", ".join(f'"{name}"' for name in support_files)
    return f'''# Set-up (provided). On Google Colab it installs the course package ({config.TAG}) and downloads this
# chapter's files; on your own machine or on Binder they are here already and it changes nothing.
import sys

if "google.colab" in sys.modules:
    import importlib, subprocess
    package = "{install}"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", package],
                         capture_output=True, text=True)
    if pip.returncode:
        raise RuntimeError("Installing the course package failed:\\n" + pip.stdout + pip.stderr)
    importlib.invalidate_caches()

from autograder.progress import watch_checks
from autograder.support import fetch_support_files

fetch_support_files([{files}], "{config.support_url(chapter)}")
watch_checks()'''


def progress_source(chapter, checks):
    entries = [f'"{check_id}": {points},' for check_id, points in checks.items()]
    lines, line = [], "   "
    for entry in entries:
        if len(line) + 1 + len(entry) > 100:
            lines.append(line)
            line = "   "
        line += " " + entry
    lines.append(line)
    body = "\n".join(lines)
    return (f"# Where you stand (provided): every check of this notebook, and what it said when you last ran it.\n"
            f"# Run all the cells above first. `python -m autograder check {chapter.notebook}.ipynb` prints the same.\n"
            f"from autograder.progress import show_progress\n\n"
            f'show_progress("{chapter.id} · {chapter.title}: visible checks", {{\n{body}\n}})')


def add_frame(notebook, config, chapter, support_files):
    """Put the badges, set-up, check headers and progress cells into a chapter's source notebook."""
    checks = {}
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") and cell.cell_type == "code":
            checks[meta["grade_id"]] = meta["points"]
            if not HEADER.match(cell.source):
                cell.source = header(meta["grade_id"], meta["points"]) + "\n" + cell.source
    first_code = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    notebook.cells.insert(first_code, locked(nbformat.v4.new_code_cell(
        setup_source(config, chapter, support_files)), SETUP_ID))
    notebook.cells.insert(0, locked(nbformat.v4.new_markdown_cell(badge_markdown(config, chapter)), BADGES_ID))
    notebook.cells.append(locked(nbformat.v4.new_markdown_cell(
        "## Where you stand\n\nThe cell below lists every check of this notebook with what it said when you last "
        "ran it. The same table comes from `python -m autograder check` on the command line."), PROGRESS_TITLE_ID))
    notebook.cells.append(locked(nbformat.v4.new_code_cell(progress_source(chapter, checks)), PROGRESS_ID))
    return notebook
