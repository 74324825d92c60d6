"""Grading: autograde a chapter with nbgrader, read scores back, and (in submodules) the trusted
side that runs student code in a sandbox and decides verdicts outside its reach."""
import shutil

import nbformat
from nbgrader.api import Gradebook

from autograder import cell_marks
from autograder.grading.nbgrader_cli import run_nbgrader
from autograder.grading.registration import register
from autograder.questions import answer_cells


def autograde(course, chapter, check=True, unsafe=False):
    """`nbgrader autograde <chapter>` over every student in submitted/, one after another; `unsafe`
    lets kernels run unsandboxed where bwrap is unusable (SandboxedExecute.unsafe)."""
    register(course, chapter)
    unsandboxed = ["--SandboxedExecute.unsafe=True"] if unsafe else []
    return run_nbgrader(course.root, "autograde", chapter.id, "--force", *unsandboxed, check=check)


def scores(course, chapter):
    """{student: {test cell: (score, max score)}} for every graded submission of the chapter."""
    table = {}
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        assignment = gradebook.find_assignment(chapter.id)
        for submission in assignment.submissions:
            cells = {}
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.cell_type == "code" and grade.max_score > 0:
                        cells[grade.name] = (grade.score, grade.max_score)
            table[submission.student.id] = cells
    return table


def graded_cells(course, chapter):
    """The chapter's autograded cells (its test cells), in notebook order."""
    notebook = nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4)
    return [c.metadata["nbgrader"]["grade_id"] for c in notebook.cells
            if cell_marks.is_test_cell(c)]


def written_questions(course, chapter):
    """{answer cell: points} of the chapter's written questions, graded by people, in notebook order."""
    notebook = nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"] for c in answer_cells(notebook)}


def format_table(chapter, table, cells):
    """A per-exercise, per-student table of points, with totals: what an instructor reads first."""
    students = sorted(table)
    width = max([len(c) for c in cells] + [len("exercise")])
    lines = [f"{chapter.id} · {chapter.title}", f"{'exercise':<{width}}  " + "  ".join(f"{s:>10}" for s in students)]
    for cell in cells:
        lines.append(f"{cell:<{width}}  " + "  ".join(f"{_points(table[s].get(cell)):>10}" for s in students))
    totals = [sum(v[0] or 0 for v in table[s].values()) for s in students]
    maxima = [sum(v[1] for v in table[s].values()) for s in students]
    lines.append(f"{'TOTAL':<{width}}  " + "  ".join(f"{f'{t:g}/{m:g}':>10}" for t, m in zip(totals, maxima)))
    return "\n".join(lines)


def _points(value):
    if value is None:
        return "-"
    score, maximum = value
    return f"{score or 0:g}/{maximum:g}"


def hand_in_demo(course, chapter):
    """Copy the shipped demo submissions of a chapter into submitted/; return their student ids."""
    cfg = course.config
    students = []
    for student_dir in sorted((course.root / cfg.DEMO_DIR).iterdir()):
        source = student_dir / chapter.id
        if source.is_dir():
            target = course.root / cfg.SUBMITTED_DIR / student_dir.name / chapter.id
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target)
            students.append(student_dir.name)
    return students


def grade_demo(course, chapter):
    """Hand in the demo submissions, autograde them, and return the table."""
    hand_in_demo(course, chapter)
    autograde(course, chapter)
    return scores(course, chapter)
