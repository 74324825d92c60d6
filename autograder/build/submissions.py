"""Make submissions the way students would: a release notebook with its exercise cells filled in.

Used for the course's demo students (perfect, partial, untouched: written to demo/submitted/ by
`make demo` and `make build`, never committed) and by the tests, which fill in realistic wrong and right
answers and grade them with the real nbgrader.
"""
import importlib.util
import shutil
from dataclasses import dataclass, field

import nbformat

from autograder import cell_marks


@dataclass(frozen=True)
class Edit:
    """Replace `old` by `new` in the solved source of exercise cell `cell`."""

    cell: str
    old: str
    new: str


@dataclass(frozen=True)
class Mistake:
    """A realistic answer: what a student wrote, and which test cells it must lose (none if right)."""

    name: str
    description: str
    edits: tuple
    loses: tuple = field(default_factory=tuple)
    # exercise cells that must be right for the loss to show: a check that probes this answer through
    # another exercise's code skips the probe when that code is broken (the tests never pair the two)
    needs: tuple = field(default_factory=tuple)


def wrong(name, description, cell, old, new, loses, needs=()):
    """A typical mistake: one edit to exercise cell `cell`, losing the test cells `loses` (when the
    exercise cells `needs` are right)."""
    return Mistake(name, description, (Edit(cell, old, new),), tuple(loses), tuple(needs))


def right(name, description, cell, old, new):
    """A correct answer written another way: one edit, and it must keep full marks."""
    return Mistake(name, description, (Edit(cell, old, new),), ())


def solved_answers(source_notebook):
    """{cell id: the solved code of that exercise cell, markers removed}."""
    return {cell_marks.grade_id(cell): cell_marks.without_solution_markers(cell.source)
            for cell in source_notebook.cells if cell_marks.is_solution(cell)}


def with_mistakes(answers, mistakes):
    answers = dict(answers)
    for mistake in mistakes:
        for edit in mistake.edits:
            if edit.old not in answers[edit.cell]:
                raise ValueError(f"mistake {mistake.name!r}: {edit.old!r} is not in cell {edit.cell!r}")
            answers[edit.cell] = answers[edit.cell].replace(edit.old, edit.new, 1)
    return answers


def filled(release_notebook, answers):
    """A copy of the student version with exercise cells replaced by `answers`."""
    notebook = nbformat.from_dict(release_notebook)
    for cell in notebook.cells:
        grade_id = cell_marks.grade_id(cell)
        if grade_id in answers and cell.metadata["nbgrader"].get("solution"):
            cell.source = answers[grade_id]
    return notebook


def load_catalog(course, chapter):
    """catalogue/<chapter>_<notebook>.py: the chapter's typical mistakes (MISTAKES, DEMO_PARTIAL) and
    correct alternatives (ALTERNATIVES)."""
    path = course.catalogue(chapter)
    spec = importlib.util.spec_from_file_location(f"mistakes_{chapter.id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_submission(course, chapter, student, notebook, folder):
    """Lay a submission out as nbgrader expects: <folder>/<student>/<chapter>/<notebook>.ipynb."""
    path = course.notebook(folder, chapter, student)
    shutil.rmtree(path.parent, ignore_errors=True)
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    return path


def demo_notebooks(course, chapter):
    """{"perfect", "partial", "untouched": notebook}: the built release notebook filled in with the solved
    answers, with the catalogue's DEMO_PARTIAL mistakes, and as handed out. Made in memory from the
    committed release and source notebooks and catalogue/, so demo/submitted/ is never committed."""
    cfg = course.config
    release_path = course.notebook(cfg.RELEASE_DIR, chapter)
    if not release_path.is_file():
        raise SystemExit(f"{release_path.relative_to(course.root)} is missing: the demo submissions are made "
                         f"from the built chapter (python -m autograder build {chapter.id})")
    release = nbformat.read(release_path, as_version=4)
    answers = solved_answers(nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4))
    catalog = load_catalog(course, chapter)
    by_name = {m.name: m for m in catalog.MISTAKES}
    partial = [by_name[name] for name in catalog.DEMO_PARTIAL]
    return {"perfect": filled(release, answers), "partial": filled(release, with_mistakes(answers, partial)),
            "untouched": release}


def write_demo_submissions(course, chapter):
    """<DEMO_DIR>/{perfect,partial,untouched}/<chapter>/: the chapter's demo_notebooks, as nbgrader expects them."""
    for student, notebook in demo_notebooks(course, chapter).items():
        write_submission(course, chapter, student, notebook, course.config.DEMO_DIR)


def write_all_demo_submissions(course, chapter_ids=None, log=print):
    """`python -m autograder demo-submissions [chNN ...]`: the demo students of every chapter (or those
    named). Bonus assignments have none: they run on the student's own library."""
    for chapter in course.chapters:
        if not chapter_ids or chapter.id in chapter_ids:
            write_demo_submissions(course, chapter)
            log(f"[{chapter.id}] demo submissions written to {course.config.DEMO_DIR}/")
