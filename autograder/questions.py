"""Written questions, graded by people: an answer cell, the question above it, and its rubric.

A question is two cells. The locked markdown cell above holds the question and, between nbgrader's
`### BEGIN MARK SCHEME` / `### END MARK SCHEME` lines, the rubric. The answer cell is nbgrader's
"manually graded answer": markdown, graded, a solution, unlocked, with points; in the source it holds
the model answer. Why the rubric sits in the question cell and not in the answer cell:

* nbgrader saves a cell's text to the gradebook after clearing solutions and before clearing the mark
  scheme, and autograde puts a locked cell's saved text back (OverwriteCells). So the rubric of a
  locked cell comes back in every autograded notebook, which formgrader shows the grader; release/,
  solutions/ and feedback run ClearMarkScheme and show none of it.
* an answer cell is the student's: its text is never put back, so a rubric there would never reach
  formgrader; and the gradebook's checksum of it would include the rubric while the student's cell
  has none, so an unanswered cell would wait for a person instead of scoring 0 (nbgrader gives 0 to
  an answer cell whose checksum is unchanged).

nbgrader allows a mark scheme only in "task" cells unless `ClearMarkScheme.enforce_metadata` is off
(course_config). A task cell would need a person even when nothing was written, and its answer would
live in cells nbgrader does not grade; `check_question_cells` keeps every rubric where it is safe.
"""
import re
from pathlib import Path

import nbformat

from autograder import cell_marks

BEGIN_RUBRIC, END_RUBRIC = "### BEGIN MARK SCHEME", "### END MARK SCHEME"
RUBRIC_REGION = re.compile(r"(?s)\n*[ \t]*### BEGIN MARK SCHEME.*?### END MARK SCHEME[^\n]*")
QUESTION_SUFFIX = "_question"


def nbgrader(cell):
    return cell_marks.marks(cell)


def is_answer(cell):
    """A manually graded answer cell: markdown, graded and a solution (nbgrader's definition)."""
    meta = nbgrader(cell)
    return cell.get("cell_type") == "markdown" and bool(meta.get("grade")) and bool(meta.get("solution"))


def answer_cells(notebook):
    return [cell for cell in notebook.cells if is_answer(cell)]


def written_points(notebook):
    """The points of a notebook's written questions (graded by people, never by autograde)."""
    return sum(nbgrader(cell)["points"] for cell in answer_cells(notebook))


def written_points_in(path):
    """The written questions' points of the notebook file at `path` (0 when there is no such file yet)."""
    path = Path(path)
    return written_points(nbformat.read(path, as_version=4)) if path.exists() else 0


def rubric(text):
    """The rubric inside a question cell's text ('' when there is none), markers left out."""
    match = re.search(re.escape(BEGIN_RUBRIC) + r"[^\n]*\n(?P<body>.*?)\n[^\n]*" + re.escape(END_RUBRIC),
                      text, flags=re.S)
    return match["body"].strip() if match else ""


def without_rubric(text):
    """A question cell's text as students see it (what ClearMarkScheme leaves)."""
    return RUBRIC_REGION.sub("", text)


def question_for(notebook, answer):
    """The cell above an answer cell: its question."""
    index = notebook.cells.index(answer)
    return notebook.cells[index - 1] if index else None


def check_question_cells(notebook):
    """Raise ValueError unless every answer cell follows a locked markdown question holding one rubric,
    and no other cell holds a rubric (it would be lost, or shown to students)."""
    questions = set()
    for answer in answer_cells(notebook):
        name = nbgrader(answer)["grade_id"]
        question = question_for(notebook, answer)
        if question is None or question.cell_type != "markdown" or not nbgrader(question).get("locked"):
            raise ValueError(f"answer cell {name}: the cell above it must be its question, locked markdown")
        if question.source.count(BEGIN_RUBRIC) != 1 or question.source.count(END_RUBRIC) != 1 or not rubric(question.source):
            raise ValueError(f"answer cell {name}: its question needs one rubric between "
                             f"`{BEGIN_RUBRIC}` and `{END_RUBRIC}`")
        if BEGIN_RUBRIC in answer.source:
            raise ValueError(f"answer cell {name}: the rubric belongs in the question above, not in the answer")
        questions.add(id(question))
    for cell in notebook.cells:
        if id(cell) not in questions and "MARK SCHEME" in cell.source:
            raise ValueError(f"cell {nbgrader(cell).get('grade_id', cell.get('id'))}: a mark scheme outside a "
                             "question cell would reach students; put rubrics only above answer cells")
