"""The cells every chapter notebook gets from the build, so no chapter script repeats them.

* a locked badge cell on top: open this chapter in Colab, or the course on Binder, and what the chapter
  is worth, summed from its cells (no chapter script states its total, so none can state it wrong);
* in chapters built on earlier ones, an unlocked first code cell with the USE_MY_LIBRARY switch
  (autograder/student/my_library.py), explained by a locked markdown cell above it;
* a locked set-up cell before the chapter's first code cell: on Colab it installs the course package at the
  course's version; anywhere it fetches missing support files, starts recording the checks and
  reads the switch;
* a first line on every test cell, `# Check <id> · <n> points`, that names it for the progress table;
* in chapters with `export` cells, a locked "Keep your library" cell near the end (autograder/student/export.py);
* a locked progress cell at the end: the table of `python -m autograder check`, inside the notebook, and
  the points of the written questions, which the instructor grades.
"""
import nbformat

from autograder import cell_marks
from autograder.build.authoring import nbgrader_meta
from autograder.questions import written_points
from autograder.student.export import EXPORT_TAG
from autograder.student.progress import HEADER, header

BADGES_ID, SETUP_ID, PROGRESS_TITLE_ID, PROGRESS_ID = "course-badges", "course-setup", "course-progress-title", "course-progress"
SWITCH_TITLE_ID, SWITCH_ID = "my-library-title", "my-library-switch"
KEEP_TITLE_ID, KEEP_ID = "keep-library-title", "keep-library"
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
PACKAGE = "babygrad-course"


def locked(cell, cell_id):
    cell.id = cell_id
    cell.metadata = {"nbgrader": nbgrader_meta("provided", {"id": cell_id}, 0)}
    return cell


def badge_markdown(config, chapter, checks, written):
    return (f"[![Open in Colab]({COLAB_BADGE})]({config.colab_url(chapter)}) "
            f"[![Binder]({BINDER_BADGE})]({config.binder_url()})\n\n"
            + points_sentence(sum(checks.values()), written, bonus=chapter in getattr(config, "BONUS", [])))


def points_sentence(autograded, written, bonus=False):
    """What the chapter is worth: its check cells' points, and apart from them its written questions'."""
    kind = "bonus point" if bonus else "point"
    sentence = f"This notebook's check cells are worth **{plural(autograded, kind)}**"
    if written:
        sentence += f", and its written questions **{plural(written, 'point')}** more, graded by your instructor"
    return sentence + "."


def plural(count, noun):
    return f"{count} {noun}{'' if count == 1 else 's'}"


def setup_source(config, chapter, support_files, switch=False):
    install = f"{PACKAGE} @ git+{config.PUBLISHED_REPOSITORY}@{config.TAG}"
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

from autograder.student.cpus import fit_blas_threads
from autograder.student.progress import watch_checks
from autograder.student.support import fetch_support_files

fit_blas_threads()     # no more BLAS threads than this kernel has CPUs (Binder, shared hubs)
fetch_support_files([{files}], "{config.support_url(chapter)}")
watch_checks();''' + (SWITCH_READ if switch else "")


EARLIER_IMPORT = "from earlier_chapters import"


def builds_on_earlier_chapters(notebook):
    """Chapters 3 to 10 import the course's earlier chapters: those get the USE_MY_LIBRARY switch."""
    return any(EARLIER_IMPORT in cell.source for cell in notebook.cells if cell.cell_type == "code")


SWITCH_READ = '''

from autograder.student.my_library import choose_earlier_chapters

choose_earlier_chapters(globals().get("USE_MY_LIBRARY", False));  # the switch in the cell above'''

SWITCH_TEXT = """### Your own library or the course's

This chapter builds on the earlier ones. By default it uses the course's finished code for them
(`earlier_chapters.py`). Set `USE_MY_LIBRARY = True` in the cell below, then run the notebook from the
top, to build this chapter on your own code instead: the chapters you kept with the "Keep your
library" cell at the end of each notebook, in `mybabygrad/` next to your chapter folders (on Colab:
mount your Google Drive, and they are in `My Drive/babygrad/mybabygrad/`). The set-up cell then
says which chapters are yours and which are the course's (for the ones you have not exported).

Each chapter is graded on its own: grading always uses the course's earlier chapters, whatever this
switch says, so a mistake in an earlier chapter never costs points here. If a check fails with the
switch on and passes with it off, the mistake is in your earlier code."""

SWITCH_SOURCE = """# Your library or the course's (see the text above). Grading always uses the course's.
USE_MY_LIBRARY = False"""

KEEP_TEXT = """## Keep your library

The cell below copies this chapter's code, as you wrote it (the cells marked `export`), into your own
package `mybabygrad/`, next to your chapter folders: later chapters can run on it (`USE_MY_LIBRARY`),
and it is yours to keep. Save the notebook first: it exports the saved file. On Colab, mount your
Google Drive first; the package goes to `My Drive/babygrad/mybabygrad/`. In a terminal, in this
notebook's folder, `python -m autograder export NOTEBOOK.ipynb` does the same."""


def progress_source(chapter, checks, written=0):
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
            f"from autograder.student.progress import show_progress\n\n"
            f'show_progress("{chapter.id} · {chapter.title}: visible checks", {{\n{body}\n}}'
            + (f", written={written})" if written else ")"))


def add_frame(notebook, config, chapter, support_files):
    """Put the badges, set-up, check headers and progress cells into a chapter's source notebook."""
    checks = {}
    for cell in notebook.cells:
        meta = cell_marks.marks(cell)
        if meta.get("grade") and cell.cell_type == "code":
            checks[meta["grade_id"]] = meta["points"]
            if not HEADER.match(cell.source):
                cell.source = header(meta["grade_id"], meta["points"]) + "\n" + cell.source
    first_code = next(i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code")
    switch = builds_on_earlier_chapters(notebook)
    notebook.cells.insert(first_code, locked(nbformat.v4.new_code_cell(
        setup_source(config, chapter, support_files, switch)), SETUP_ID))
    if switch:
        switch_cell = nbformat.v4.new_code_cell(SWITCH_SOURCE)
        switch_cell.id = SWITCH_ID     # no nbgrader metadata: the student's to edit, and autograde keeps it
        notebook.cells[first_code:first_code] = [
            locked(nbformat.v4.new_markdown_cell(SWITCH_TEXT), SWITCH_TITLE_ID), switch_cell]
    written = written_points(notebook)
    notebook.cells.insert(0, locked(nbformat.v4.new_markdown_cell(
        badge_markdown(config, chapter, checks, written)), BADGES_ID))
    if any(EXPORT_TAG in cell.metadata.get("tags", []) for cell in notebook.cells):
        notebook.cells.append(locked(nbformat.v4.new_markdown_cell(KEEP_TEXT), KEEP_TITLE_ID))
        notebook.cells.append(locked(nbformat.v4.new_code_cell(
            f"# Keep your library (provided): export this notebook's code to mybabygrad/.\n"
            f"from autograder.student.export import export_my_chapter\n\n"
            f'export_my_chapter("{chapter.id}_{chapter.notebook}");'), KEEP_ID))
    notebook.cells.append(locked(nbformat.v4.new_markdown_cell(
        "## Where you stand\n\nThe cell below lists every check of this notebook with what it said when you last "
        "ran it. The same table comes from `python -m autograder check` on the command line."), PROGRESS_TITLE_ID))
    notebook.cells.append(locked(nbformat.v4.new_code_cell(
        progress_source(chapter, checks, written)), PROGRESS_ID))
    return notebook
