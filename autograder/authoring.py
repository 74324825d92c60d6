"""Turn a chapter script (`chapters/*.py`, jupytext's percent format) into an nbgrader source notebook.

Chapter scripts are the course's one source: they diff and review like code. Cell markers after `# %%`:
    provided [export]             read-only code the student runs (locked)
    solution id=NAME [export]     code with ### BEGIN/END SOLUTION regions; `export` hands the
                                  solved code on to later chapters (see autograder/build.py)
    test id=NAME points=N         an autograded, locked test cell
    [markdown]                    prose; `[markdown] locked` makes it read-only
    ... numeric                   (with any code marker) its outputs hold floating-point results that
                                  differ in the last digits between CPUs: see autograder/generated_files.py
"""
import re

import jupytext
import nbformat

from .export import export_sources
from .generated_files import NUMERIC_TAG

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
TAGS = {"export": "export", "numeric": NUMERIC_TAG}   # marker word → cell tag
MARKER = re.compile(r"^# %%(?P<md> \[markdown\])?(?P<rest>.*)$")


def nbgrader_meta(kind, fields, index):
    grade_id = fields.get("id", f"cell-{index:03d}")
    meta = {"grade": kind == "test", "grade_id": grade_id, "locked": kind != "solution",
            "schema_version": 3, "solution": kind == "solution", "task": False}
    if kind == "test":
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
        kind = next((w for w in words if w in ("provided", "solution", "test", "locked")), None)
        fields = dict(w.split("=", 1) for w in words if "=" in w)
        cells_meta.append((kind, fields, [tag for word, tag in TAGS.items() if word in words]))
        lines.append("# %% [markdown]" if m.group("md") else "# %%")
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
    nb.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    return nb



def exported_code(text):
    """The solved code of a chapter script's `export` cells, solution markers removed."""
    return export_sources(notebook_from_script(text))
