"""Move grading results between nbgrader gradebooks through nbgrader's own API.

Parallel grading gives each worker a private SQLite gradebook: `copy_assignment` seeds it with the
chapter's definition from the course gradebook, and `merge_submission` writes a graded submission
back, the way nbgrader's SaveAutoGrades would have written it there.
"""
import warnings
from contextlib import contextmanager

from nbgrader.api import Base, MissingEntry
from sqlalchemy import create_engine, text
from sqlalchemy.exc import SAWarning


@contextmanager
def quiet_nbgrader():
    """nbgrader's update_or_create_submission trips SQLAlchemy's autoflush warnings; they are harmless."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        yield


def find_chapter(gradebook, chapter_id):
    """The chapter's assignment, or an exit that says how to put it in the gradebook."""
    try:
        return gradebook.find_assignment(chapter_id)
    except MissingEntry:
        raise SystemExit(f"{chapter_id} is not in the gradebook: run `python -m autograder build {chapter_id}` "
                         "first") from None


def create_like(source, url):
    """An empty gradebook at `url` with `source`'s schema version. nbgrader would ask the `alembic`
    command for that version, which costs a Python start-up; the source gradebook already knows it."""
    version = source.db.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    engine = create_engine(url)
    Base.metadata.create_all(bind=engine)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
        connection.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": version})
    engine.dispose()


def copy_assignment(source, target, chapter_id):
    """Give `target` the chapter's assignment exactly as `source` has it: notebooks, cells, checksums."""
    assignment = find_chapter(source, chapter_id)
    target.update_or_create_assignment(chapter_id, duedate=assignment.duedate)
    for notebook in assignment.notebooks:
        target.update_or_create_notebook(notebook.name, chapter_id, kernelspec=notebook.kernelspec)
        for cell in notebook.grade_cells:
            target.update_or_create_grade_cell(cell.name, notebook.name, chapter_id,
                                               max_score=cell.max_score, cell_type=cell.cell_type)
        for cell in notebook.solution_cells:
            target.update_or_create_solution_cell(cell.name, notebook.name, chapter_id)
        for cell in notebook.task_cells:
            target.update_or_create_task_cell(cell.name, notebook.name, chapter_id,
                                              max_score=cell.max_score, cell_type=cell.cell_type)
        for cell in notebook.source_cells:
            target.update_or_create_source_cell(cell.name, notebook.name, chapter_id, cell_type=cell.cell_type,
                                                locked=cell.locked, source=cell.source, checksum=cell.checksum)


def extension(gradebook, chapter_id, student):
    """The deadline extension the course granted this student, if any (late penalties depend on it)."""
    try:
        return gradebook.find_submission(chapter_id, student).extension
    except MissingEntry:
        return None


def merge_submission(source, target, chapter_id, student):
    """Write `student`'s autograded submission from `source` into `target`.

    Automatic fields (auto scores, auto comments, timestamp, late penalty) come from `source`; what a
    human set in `target` (manual scores and comments, extra credit, flags, extension) is kept, and
    a grade with a manual score still needs review, as nbgrader's SaveAutoGrades decides.
    """
    graded = source.find_submission(chapter_id, student)
    submission = submission_for(target, chapter_id, student)
    submission.timestamp = graded.timestamp
    for notebook in graded.notebooks:
        kept = target.find_submission_notebook(notebook.name, chapter_id, student)
        kept.late_submission_penalty = notebook.late_submission_penalty
        grades = {g.name: g for g in kept.grades}
        for grade in notebook.grades:
            mine = grades[grade.name]
            mine.auto_score = grade.auto_score
            mine.needs_manual_grade = mine.manual_score is not None or grade.needs_manual_grade
        comments = {c.name: c for c in kept.comments}
        for comment in notebook.comments:
            comments[comment.name].auto_comment = comment.auto_comment
    target.db.commit()


def submission_for(target, chapter_id, student):
    """The student's submission of the chapter in `target`, created (with the student) if need be."""
    try:
        target.find_student(student)
    except MissingEntry:
        target.add_student(student)
    with quiet_nbgrader():
        return target.update_or_create_submission(chapter_id, student)


def record_ungraded(target, chapter_id, student):
    """A submission nbgrader could not finish: it stands in the gradebook with no automatic points."""
    submission = submission_for(target, chapter_id, student)
    for notebook in submission.notebooks:
        for grade in notebook.grades:
            grade.auto_score = None
            grade.needs_manual_grade = True
        for comment in notebook.comments:
            comment.auto_comment = None
    target.db.commit()


def submission_record(gradebook, chapter_id, student):
    """Every field nbgrader keeps for one submission, as plain values (to compare two gradebooks)."""
    submission = gradebook.find_submission(chapter_id, student)
    record = {"timestamp": submission.timestamp, "extension": submission.extension}
    for notebook in submission.notebooks:
        record[notebook.name] = {
            "flagged": notebook.flagged,
            "late_submission_penalty": notebook.late_submission_penalty,
            "grades": {g.name: (g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade,
                                g.max_score, g.score) for g in notebook.grades},
            "comments": {c.name: (c.auto_comment, c.manual_comment) for c in notebook.comments},
        }
    return record
