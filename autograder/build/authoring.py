"""Turn a chapter script (`chapters/*.py`, jupytext's percent format) into an nbgrader source notebook.

Chapter scripts are the course's one source: they diff and review like code. Cell markers after `# %%`:
    provided [export]             read-only code the student runs (locked)
    solution id=NAME [export]     code with ### BEGIN/END SOLUTION regions; `export` hands the
                                  solved code on to later chapters (see autograder/build/pipeline.py)
    test id=NAME points=N         an autograded, locked test cell
    answer id=NAME points=N       a written answer graded by a person (markdown; the script holds the
                                  model answer); the locked markdown cell above is its question, with
                                  the rubric between ### BEGIN/END MARK SCHEME (autograder/questions.py)
    [markdown]                    prose; `[markdown] locked` makes it read-only
    ... numeric                   (with any code marker) its outputs hold floating-point results that
                                  differ in the last digits between CPUs: see autograder/build/generated_files.py
"""
import re
from pathlib import Path

import jupytext

from autograder import cell_marks
from autograder.build.generated_files import NUMERIC_TAG
from autograder.questions import QUESTION_SUFFIX, check_question_cells
from autograder.student.export import export_sources

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
TAGS = {"export": "export", "numeric": NUMERIC_TAG}   # marker word → cell tag
MARKER = re.compile(r"^# %%(?P<md> \[markdown\])?(?P<rest>.*)$")


def nbgrader_meta(kind, fields, index):
    grade_id = fields.get("id", f"cell-{index:03d}")
    meta = {"grade": kind in ("test", "answer"), "grade_id": grade_id, "locked": kind not in ("solution", "answer"),
            "schema_version": 3, "solution": kind in ("solution", "answer"), "task": False}
    if kind in ("test", "answer"):
        meta["points"] = int(fields["points"])
    return meta


def notebook_from_script(text):
    """The nbgrader source notebook that a chapter script describes."""
    cells_meta, lines = [], []
    for line in text.splitlines():
        m = MARKER.match(line)
        if not m:
            lines.append(line)
            continue
        words = m.group("rest").split()
        kind = next((w for w in words if w in ("provided", "solution", "test", "answer", "locked")), None)
        fields = dict(w.split("=", 1) for w in words if "=" in w)
        cells_meta.append((kind, fields, [tag for word, tag in TAGS.items() if word in words]))
        lines.append("# %% [markdown]" if m.group("md") or kind == "answer" else "# %%")
    nb = jupytext.reads("\n".join(lines) + "\n", fmt="py:percent")
    assert len(nb.cells) == len(cells_meta), "every cell needs a `# %%` marker"
    for index, (cell, (kind, fields, tags)) in enumerate(zip(nb.cells, cells_meta)):
        cell.metadata = {}
        if kind:
            cell.metadata["nbgrader"] = nbgrader_meta("provided" if kind == "locked" else kind, fields, index)
            cell.id = cell.metadata["nbgrader"]["grade_id"]
        else:
            cell.id = f"cell-{index:03d}"
        if tags:
            cell.metadata["tags"] = tags
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    name_questions(nb)
    check_question_cells(nb)
    nb.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    return nb


def name_questions(nb):
    """A question cell is named after its answer (`q_order_question` above `q_order`), so formgrader
    and the gradebook say which question a rubric belongs to."""
    for above, cell in zip(nb.cells, nb.cells[1:]):
        meta = cell_marks.marks(cell)
        if cell.cell_type == "markdown" and meta.get("grade") and "nbgrader" in above.metadata:
            above.id = above.metadata["nbgrader"]["grade_id"] = meta["grade_id"] + QUESTION_SUFFIX


def exported_code(text):
    """The solved code of a chapter script's `export` cells, solution markers removed."""
    return export_sources(notebook_from_script(text))


def solved_exports(root):
    """{chapter module: (its export cells' solved code, the script)} for every chapter script of the course
    at `root` that exports any, in course order: the library a student who finished every chapter has."""
    exports = {}
    for script in sorted((Path(root) / "chapters").glob("ch*.py")):
        parts = exported_code(script.read_text(encoding="utf-8"))
        if parts:
            exports[script.stem] = (parts, script)
    return exports
