"""Move grading results between nbgrader gradebooks through nbgrader's own API.

Parallel grading gives each worker a private SQLite gradebook: `copy_assignment` seeds it with the
chapter's definition from the course gradebook, and `merge_submission` writes a graded submission
back, the way nbgrader's SaveAutoGrades would have written it there.

A worker's gradebook sat next to a kernel that ran student code, so it is untrusted: the merge reads
only the automatic score and comment of each cell the course knows, for the one student graded,
clamps the score to 0..max_score as the course gradebook records it, and takes the submission time
(timestamp.txt in the course's submitted/ folder) and the late penalty (nbgrader's own rule, on the
course gradebook) from the instructor's side.
"""
import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

from nbgrader.api import Base, MissingEntry
from nbgrader.utils import parse_utc
from sqlalchemy import create_engine, text
from sqlalchemy.exc import SAWarning

from autograder.grading.intake import read_regular


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


@dataclass
class MergeNotes:
    """What a merge did not take from the worker's gradebook as it stood: scores outside 0..max_score
    (clamped) and cells or notebooks the course does not know (ignored)."""

    clamped: list = field(default_factory=list)       # (cell, worker's score, score kept)
    ignored: list = field(default_factory=list)       # "notebook/cell" names

    def __bool__(self):
        return bool(self.clamped or self.ignored)

    def describe(self):
        parts = [f"{cell}: {given!r} clamped to {kept:g}" for cell, given, kept in self.clamped[:5]]
        parts += [f"unknown cell {name} ignored" for name in self.ignored[:5]]
        return "the worker's gradebook held impossible entries (" + "; ".join(parts) + ")"


def clamp_score(score, max_score):
    """A worker's automatic score within 0..max_score; None (not scored) stays None, NaN counts 0."""
    if score is None:
        return None
    score = float(score)
    if math.isnan(score):
        return 0.0
    return min(max(score, 0.0), float(max_score))


def submitted_timestamp(course, chapter_id, student):
    """When the student submitted, as nbgrader reads it: submitted/<student>/<chapter>/timestamp.txt,
    in UTC; None when there is no file, it is empty, it does not parse, or it is no regular file (a link
    or a FIFO there is never followed or waited on)."""
    path = course.root / course.config.SUBMITTED_DIR / student / chapter_id / "timestamp.txt"
    try:
        written = read_regular(path)[:200].decode("utf-8", errors="replace").strip()
        return parse_utc(written) if written else None
    except (OSError, ValueError):
        return None


def late_penalty_rule(course_root):
    """nbgrader's AssignLatePenalties, configured by the course's nbgrader_config.py, with its plugin."""
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    rule = AssignLatePenalties(config=config)
    rule.init_plugin()
    return rule


def assign_late_penalty(rule, submission, notebook, student):
    """What AssignLatePenalties.preprocess does, on the course gradebook's own records."""
    notebook.late_submission_penalty = None
    if submission.total_seconds_late > 0:
        penalty = rule.plugin_inst.late_submission_penalty(student, notebook.score, submission.total_seconds_late)
        if penalty is not None:
            notebook.late_submission_penalty = rule._check_late_penalty(notebook, penalty)


def merge_submission(source, target, chapter_id, student, timestamp=None, late_rule=None):
    """Write `student`'s autograded submission from the untrusted worker gradebook `source` into the
    course gradebook `target`; return MergeNotes.

    From `source`: each known cell's auto score (clamped to the course's max_score), auto comment and
    needs-manual-grade flag. From the instructor's side: the cells, their max scores, `timestamp`
    (kept as it was when None, as nbgrader does without a timestamp.txt), and the late penalty,
    recomputed by `late_rule` (late_penalty_rule). What a human set in `target` (manual scores and
    comments, extra credit, flags, extension) is kept, and a grade with a manual score still needs
    review, as nbgrader's SaveAutoGrades decides.
    """
    notes = MergeNotes()
    graded = source.find_submission(chapter_id, student)
    submission = submission_for(target, chapter_id, student)
    if timestamp is not None:
        submission.timestamp = timestamp
    kept_notebooks = {n.name: n for n in submission.notebooks}
    for notebook in graded.notebooks:
        kept = kept_notebooks.get(notebook.name)
        if kept is None:
            notes.ignored.append(notebook.name)
            continue
        grades = {g.name: g for g in kept.grades}
        for grade in notebook.grades:
            mine = grades.get(grade.name)
            if mine is None:
                notes.ignored.append(f"{notebook.name}/{grade.name}")
                continue
            score = clamp_score(grade.auto_score, mine.max_score)
            if score != grade.auto_score and not (score is None and grade.auto_score is None):
                notes.clamped.append((grade.name, grade.auto_score, score))
            mine.auto_score = score
            mine.needs_manual_grade = mine.manual_score is not None or bool(grade.needs_manual_grade)
        comments = {c.name: c for c in kept.comments}
        for comment in notebook.comments:
            if comment.name in comments:
                comments[comment.name].auto_comment = comment.auto_comment
    target.db.flush()
    if late_rule is not None:
        for notebook in submission.notebooks:
            assign_late_penalty(late_rule, submission, notebook, student)
    target.db.commit()
    return notes


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
