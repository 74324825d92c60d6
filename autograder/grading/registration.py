"""A chapter registered in the course gradebook, as autograde needs: its notebooks and graded cells.

Registering is nbgrader's generate_assignment, a process of its own that takes about 3 s, and every
grading run starts with it. It is skipped when nothing it reads has changed since it last ran and the
gradebook still holds exactly what it wrote then. `<LEDGER_DIR>/<chapter>.registered` keeps both: a
digest of the inputs (the chapter's source folder, the two configuration files, the versions) and a digest of
the chapter's records in the gradebook right after registering. A gradebook replaced or registered
from other sources since reads differently, and is registered again.
"""
from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import nbgrader
from nbgrader.api import Gradebook, MissingEntry

import autograder

from autograder.grading.nbgrader_cli import run_nbgrader

if TYPE_CHECKING:
    from autograder.course import Course
    from course_config import Chapter


def register(course: Course, chapter: Chapter) -> None:
    """Record the chapter's notebooks and graded cells in the course gradebook, unless it holds them already.

    This is nbgrader's generate_assignment writing its release copy to a scratch folder, so release/
    stays as built. nbgrader refuses if the chapter's cells changed after submissions were graded.
    """
    marker = marker_path(course, chapter)
    inputs = inputs_digest(course, chapter)
    if marker.is_file() and marker.read_text(encoding="utf-8") == _marker_text(inputs, records_digest(course, chapter)):
        return
    marker.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        run_nbgrader(course.root, "generate_assignment", chapter.id, "--force",
                     f"--CourseDirectory.release_directory={scratch}")
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(_marker_text(inputs, records_digest(course, chapter)), encoding="utf-8")


def marker_path(course: Course, chapter: Chapter) -> Path:
    return course.root / course.config.LEDGER_DIR / f"{chapter.id}.registered"


def inputs_digest(course: Course, chapter: Chapter) -> str:
    """Everything generate_assignment reads: the chapter's source folder and the configuration files, and
    the versions of nbgrader and of the course package, whose preprocessors it runs."""
    digest = hashlib.sha256(f"nbgrader {nbgrader.__version__}, autograder {autograder.__version__}\0".encode())
    folder = course.root / course.config.SOURCE_DIR / chapter.id
    files = [p for p in sorted(folder.rglob("*")) if p.is_file() and ".ipynb_checkpoints" not in p.parts
             and "__pycache__" not in p.parts]
    for path in files + [course.root / "nbgrader_config.py", course.root / "course_config.py"]:
        digest.update(str(path.relative_to(course.root)).encode() + b"\0")
        digest.update((path.read_bytes() if path.is_file() else b"") + b"\0")
    return digest.hexdigest()


def records_digest(course: Course, chapter: Chapter) -> str | None:
    """A digest of what the gradebook records for the chapter (None: not registered)."""
    url = course.gradebook_url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        return None                     # opening it would make an empty gradebook: registering does that
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        try:
            assignment = gradebook.find_assignment(chapter.id)
        except MissingEntry:
            return None
        records = [{
            "name": notebook.name,
            "kernelspec": notebook.kernelspec,
            "grade": sorted((c.name, c.max_score, c.cell_type) for c in notebook.grade_cells),
            "task": sorted((c.name, c.max_score, c.cell_type) for c in notebook.task_cells),
            "solution": sorted(c.name for c in notebook.solution_cells),
            "source": sorted((c.name, c.cell_type, c.locked, c.checksum,
                              hashlib.sha256((c.source or "").encode()).hexdigest()) for c in notebook.source_cells),
        } for notebook in sorted(assignment.notebooks, key=lambda n: n.name)]
    return hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()


def _marker_text(inputs: str, records: str | None) -> str:
    return f"inputs {inputs}\ngradebook {records}\n"
