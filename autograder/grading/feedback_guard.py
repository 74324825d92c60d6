"""Feedback that cannot leak: two preprocessors for `nbgrader generate_feedback`.

* NeutraliseStudentMarkers, before ClearHiddenTests: a student's cell that contains the text of a
  hidden-test marker (`### BEGIN HIDDEN TESTS`) made ClearHiddenTests raise, and that student got no
  feedback at all. In cells the student wrote, the markers (and mark-scheme markers, for
  ClearMarkScheme) are defused; the course's test and question cells keep theirs, so their hidden
  region and rubric are still removed.
* FeedbackGuard, last: the sandbox should keep `source/` and `solutions/` out of a kernel's reach; this
  is the second line. Before the page is rendered, every output of the notebook (and the source of
  every cell the course provided) is compared with the chapter's secret lines: those inside
  `### BEGIN HIDDEN TESTS`, `### BEGIN SOLUTION` or `### BEGIN MARK SCHEME` regions of the source notebook that stand nowhere
  outside them, nor in the chapter's earlier_chapters.py. A page that would show one is replaced by a
  short page that says feedback was withheld and why; the instructor's log (and
  `FeedbackGuard.withheld_csv`) names the student and the first leaked line.
"""
import csv
import html
import os
from dataclasses import astuple, dataclass, fields
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from autograder import cell_marks

HIDDEN, SOLUTION, RUBRIC = "HIDDEN TESTS", "SOLUTION", "MARK SCHEME"
# A secret line counts as shown when a line of text is exactly it, or, once it is long enough to be
# unmistakable, when it stands inside a line (a print with a prefix, a repr in a list).
UNMISTAKABLE_CHARS = 24


def secret_lines(source, kind):
    """Lines inside `### BEGIN <kind>` regions that stand nowhere outside every region."""
    region, secret, public = None, set(), set()
    for line in source.splitlines():
        if "### BEGIN " in line:
            region = line.split("### BEGIN ", 1)[1].strip()
        elif "### END " in line:
            region = None
        elif region == kind and line.strip():
            secret.add(line.strip())
        elif region is None:
            public.add(line.strip())
    return secret - public


def leaked_lines(secret, text):
    """Secret lines that `text` shows, in sorted order."""
    lines = {line.strip() for line in text.splitlines()}
    return sorted(line for line in secret if line in lines or (len(line) >= UNMISTAKABLE_CHARS and line in text))


def strings_in(value):
    """Every string inside a JSON value, keys included, and each HTML-unescaped as a browser shows it."""
    if isinstance(value, str):
        yield value
        if "&" in value:
            yield html.unescape(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


@dataclass(frozen=True)
class ChapterSecrets:
    hidden: frozenset        # hidden-test lines: never shown to a student
    solution: frozenset      # reference-solution lines: shown only where the student wrote them
    rubric: frozenset = frozenset()   # rubric lines of written questions: for graders only


@dataclass(frozen=True)
class Leak:
    """What the guard found: whose page, which cell, and the first secret line it would show."""

    student: str
    assignment: str
    notebook: str
    cell: str
    line: str


def chapter_secrets(source_path):
    """The secret lines of a source notebook, minus what earlier_chapters.py next to it hands out."""
    notebook = nbformat.read(source_path, as_version=4)
    text = "\n".join(cell.source for cell in notebook.cells)
    provided = Path(source_path).with_name("earlier_chapters.py")
    public = {line.strip() for line in provided.read_text(encoding="utf-8").splitlines()} if provided.exists() else set()
    return ChapterSecrets(frozenset(secret_lines(text, HIDDEN) - public),
                          frozenset(secret_lines(text, SOLUTION) - public),
                          frozenset(secret_lines(text, RUBRIC) - public))


def course_cell_ids(resources):
    """(grade ids of the chapter's test cells, of its locked cells), from the gradebook: the cells whose
    text autograde restored from the source, the only ones that may hold markers."""
    info = resources["nbgrader"]
    with Gradebook(info["db_url"]) as gradebook:
        notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
        return ({cell.name for cell in notebook.grade_cells},
                {cell.name for cell in notebook.source_cells if cell.locked})


def cell_label(cell, index):
    return cell_marks.grade_id(cell) or f"cell {index + 1}"


def is_course_cell(cell, grade_ids):
    """A test cell whose text nbgrader restored from the source (OverwriteCells), not the student's."""
    meta = cell_marks.marks(cell)
    return meta.get("grade_id") in grade_ids and not meta.get("solution")


def defused(text, marker):
    """`BEGIN HIDDEN TESTS` → `BEGIN HIDDEN_TESTS`: still readable, no longer a marker."""
    return text.replace(marker, "_".join(marker.rsplit(" ", 1)))


class NeutraliseStudentMarkers(NbGraderPreprocessor):
    """Defuse hidden-test and mark-scheme markers in cells the student wrote, so ClearHiddenTests and
    ClearMarkScheme neither fail on them nor cut the student's own text. A locked question cell keeps
    its mark-scheme markers (its rubric is cleared); a test cell keeps its hidden-test markers."""

    begin = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end = Unicode("END HIDDEN TESTS").tag(config=True)
    rubric_markers = ("BEGIN MARK SCHEME", "END MARK SCHEME")

    def preprocess(self, nb, resources):
        grade_ids, locked_ids = course_cell_ids(resources)
        for cell in nb.cells:
            if not is_course_cell(cell, grade_ids):
                for marker in (self.begin, self.end):
                    cell.source = defused(cell.source, marker)
            meta = cell_marks.marks(cell)
            if meta.get("grade_id") not in locked_ids or meta.get("solution"):
                for marker in self.rubric_markers:
                    cell.source = defused(cell.source, marker)
        return nb, resources


class FeedbackGuard(NbGraderPreprocessor):
    """Withhold a feedback page that would show a hidden-test or reference-solution line."""

    withheld_csv = Unicode("", help="CSV (relative to the course root) where withheld pages are recorded; "
                                    "empty: the log only").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        leak = self.find_leak(nb, self.secrets(info["assignment"], info["notebook"]), info)
        if leak is None:
            return nb, resources
        self.log.error("feedback withheld for student %s (%s/%s): cell %s would show the secret line %r",
                       leak.student, leak.assignment, leak.notebook, leak.cell, leak.line)
        self.record(leak)
        return withheld_notebook(nb, leak), resources

    def secrets(self, assignment, notebook):
        coursedir = CourseDirectory(parent=self)
        path = Path(coursedir.format_path(coursedir.source_directory, ".", assignment)) / f"{notebook}.ipynb"
        return chapter_secrets(path)

    @staticmethod
    def find_leak(nb, secrets, info):
        """The first Leak in notebook order, or None.

        Outputs may show no secret line, except solution lines the student wrote themselves (a
        student may print their own code). Cells the student wrote are not scanned: they show what
        the student typed. The course's cells are, in case a hidden region survived.
        """
        test_cell = lambda cell: (cell_marks.marks(cell).get("grade")          # noqa: E731
                                  and not cell.metadata["nbgrader"].get("solution"))
        locked_cell = lambda cell: (cell_marks.marks(cell).get("locked")      # noqa: E731
                                    and not cell.metadata["nbgrader"].get("solution"))
        own_code = {line.strip() for cell in nb.cells if not test_cell(cell) for line in cell.source.splitlines()}
        in_outputs = secrets.hidden | (secrets.solution - own_code) | secrets.rubric
        for index, cell in enumerate(nb.cells):
            texts = list(strings_in(cell.get("outputs", [])))
            found = [line for text in texts for line in leaked_lines(in_outputs, text)]
            if test_cell(cell):
                found += leaked_lines(secrets.hidden | secrets.solution, cell.source)
            if locked_cell(cell):
                found += leaked_lines(secrets.rubric, cell.source)
            if found:
                return Leak(info["student"], info["assignment"], info["notebook"], cell_label(cell, index), found[0])
        return None

    def record(self, leak):
        if not self.withheld_csv:
            return
        path = Path(self.withheld_csv)
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        with open(path, "a", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            if new:
                writer.writerow([f.name for f in fields(Leak)])
            writer.writerow(astuple(leak))
        os.chmod(path, 0o600)        # it quotes secret lines: the instructor's eyes only


def withheld_notebook(nb, leak):
    """A one-cell notebook that says why there is no feedback, naming the cell but no secret."""
    text = (f"## Feedback withheld\n\n"
            f"This page would have shown text from the course's hidden tests or reference solutions "
            f"(in cell `{leak.cell}`), so it was not written. Your grade is unaffected: "
            f"your instructor has been told and will send you your feedback another way.")
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)], metadata=nb.metadata)
