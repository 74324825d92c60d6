"""The course's single configuration: chapters, points, folders and grading settings.

Everything that builds or grades the course reads this file: the `autograder`
commands import it, and `nbgrader_config.py` hands it to plain `nbgrader`.
"""
from typing import NamedTuple


class Chapter(NamedTuple):
    """One nbgrader assignment: `source/<id>/<notebook>.ipynb`."""

    id: str
    notebook: str
    title: str
    points: int


COURSE_ID = "babygrad"

CHAPTERS = [
    Chapter("ch03", "autodiff", "Automatic differentiation", points=76),
]

# Folders, relative to the repository root. nbgrader names them "directories".
SOURCE_DIR = "source"
RELEASE_DIR = "release"
SOLUTIONS_DIR = "solutions"
SUBMITTED_DIR = "submitted"
AUTOGRADED_DIR = "autograded"
FEEDBACK_DIR = "feedback"
DEMO_DIR = "demo/submitted"
LEDGER_DIR = "grading_ledger"        # what parallel grading has done, and the problems it met
EXPORT_DIR = "exports"               # grades CSV and class reports
GRADESCOPE_DIR = "gradescope"        # one Gradescope autograder zip per chapter
LMS_DOWNLOAD_DIR = "downloaded"      # nbgrader zip_collect's folder: downloaded/<chapter>/archive/*.zip

# The gradebook: None is nbgrader's embedded SQLite file, gradebook.db in the course root. A course
# with several graders points every one of them at one PostgreSQL database instead, e.g.
# "postgresql://grader:secret@db.example.edu:5432/babygrad" (driver: psycopg, in requirements.txt).
GRADEBOOK_URL = None

# Grading.
KERNEL_NAME = "python3"
CELL_TIMEOUT_SECONDS = 120     # per cell; the slowest solution cell takes about a second
ADD_MISSING_CELLS = True       # a student who deleted a test cell gets it back, and graded
SUBMISSION_TIMEOUT_SECONDS = 1800  # parallel grading stops a submission that takes longer than this in all

# Collecting from an LMS: nbgrader zip_collect reads a zip of the LMS's downloads. Canvas names each
# file <name>[_late]_<user id>_<submission id>_<file name>, and numbers re-uploads (autodiff-1.ipynb);
# nbgrader matches the regexp against the file's whole path. The student id is Canvas's login-style
# name (last and first name run together, lowercase); the Canvas user id is kept apart.
LMS_FILE_REGEXP = (r"^(?:.*[/\\])?(?P<student_id>[^_/\\]+)_(?:[Ll][Aa][Tt][Ee]_)?(?P<lms_user_id>\d+)_"
                   r"(?P<submission_id>\d+)_(?P<file_id>[^/\\]+?)(?:-\d+)?\.ipynb$")


def chapter(chapter_id: str) -> Chapter:
    """The chapter with this id, or a KeyError that lists the known ones."""
    for ch in CHAPTERS:
        if ch.id == chapter_id:
            return ch
    raise KeyError(f"no chapter {chapter_id!r} in course_config.py; known: {[c.id for c in CHAPTERS]}")


def configure_nbgrader(c) -> None:
    """Write the course's settings into an nbgrader (traitlets) config object `c`."""
    from nbgrader.preprocessors import (
        ClearHiddenTests, ClearMarkScheme, ClearOutput, Execute, IncludeHeaderFooter, LockCells,
    )

    c.CourseDirectory.course_id = COURSE_ID
    c.CourseDirectory.source_directory = SOURCE_DIR
    c.CourseDirectory.release_directory = RELEASE_DIR
    c.CourseDirectory.solution_directory = SOLUTIONS_DIR
    c.CourseDirectory.submitted_directory = SUBMITTED_DIR
    c.CourseDirectory.autograded_directory = AUTOGRADED_DIR
    c.CourseDirectory.feedback_directory = FEEDBACK_DIR
    if GRADEBOOK_URL:
        c.CourseDirectory.db_url = GRADEBOOK_URL
    c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*"]

    c.Execute.timeout = CELL_TIMEOUT_SECONDS
    c.Execute.interrupt_on_timeout = True
    c.Execute.kernel_name = KERNEL_NAME
    c.Execute.record_timing = False      # executed solutions/ stay byte-for-byte reproducible
    c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
    c.OverwriteCells.add_missing_cells = ADD_MISSING_CELLS
    c.Autograde.create_student = True
    c.ZipCollectApp.downloaded_directory = LMS_DOWNLOAD_DIR
    c.FileNameCollectorPlugin.named_regexp = LMS_FILE_REGEXP
    # Solutions are published to students after the deadline: they must not carry hidden tests
    # (nbgrader's default generate_solution keeps them).
    c.GenerateSolution.preprocessors = [
        IncludeHeaderFooter, LockCells, ClearOutput, ClearMarkScheme, ClearHiddenTests, Execute,
    ]
