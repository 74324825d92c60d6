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
    Chapter("ch04", "nn", "Layers, models and losses", points=42),
    Chapter("ch05", "optimizer", "Optimizers", points=12),
    Chapter("ch06", "data", "Data handling", points=25),
    Chapter("ch07", "init", "Initialization", points=15),
    Chapter("ch08", "persistence", "Model persistence", points=20),
    Chapter("ch09", "trainer", "The Trainer", points=17),
    Chapter("ch10", "conv", "Convolutional networks", points=31),
]

# Folders, relative to the repository root. nbgrader names them "directories".
SOURCE_DIR = "source"
RELEASE_DIR = "release"
SOLUTIONS_DIR = "solutions"
SUBMITTED_DIR = "submitted"
AUTOGRADED_DIR = "autograded"
FEEDBACK_DIR = "feedback"
DEMO_DIR = "demo/submitted"

# The gradebook: None is nbgrader's embedded SQLite file, gradebook.db in the course root.
GRADEBOOK_URL = None

# Grading.
KERNEL_NAME = "python3"
CELL_TIMEOUT_SECONDS = 120     # per cell; the slowest solution cell, chapter 10's capstone, trains ~15 s on one core
ADD_MISSING_CELLS = True

# The capstones (chapters 9 and 10): held-out accuracy on the 10,000 MNIST test digits that a student's
# model must reach, trained by the course's fixed recipe with the student's library. The reference
# solutions reach 96.6% (MLP) and 97.8% (CNN); autograder/checks/capstone.py holds the same numbers
# for notebooks that run without this file, and a test keeps the two equal.
CAPSTONE_MLP_ACCURACY = 0.95
CAPSTONE_CNN_ACCURACY = 0.97       # a student who deleted a test cell gets it back, and graded


def chapter(chapter_id: str) -> Chapter:
    """The chapter with this id, or a KeyError that lists the known ones."""
    for ch in CHAPTERS:
        if ch.id == chapter_id:
            return ch
    raise KeyError(f"no chapter {chapter_id!r} in course_config.py; known: {[c.id for c in CHAPTERS]}")


def configure_nbgrader(c) -> None:
    """Write the course's settings into an nbgrader (traitlets) config object `c`."""
    import os

    from autograder.preprocessors import CoalesceStreams
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
    c.Execute.record_timing = False      # executed solutions/ stay byte-for-byte reproducible:
    c.Execute.coalesce_streams = True    # no timestamps, and one stream output however the kernel split it
    c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
    c.OverwriteCells.add_missing_cells = ADD_MISSING_CELLS
    c.Autograde.create_student = True
    # Kernels that nbgrader starts inherit these. No progress bars (autograder/progress.py). One BLAS
    # thread: babygrad's matrices are small, and on a busy grading machine threaded BLAS made chapter
    # 7's training epoch ten times slower (135 s instead of 14 s); one thread also makes results
    # independent of the core count, so rebuilt solutions reproduce.
    os.environ["BABYGRAD_HEADLESS"] = "1"
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    # Solutions are published to students after the deadline: they must not carry hidden tests
    # (nbgrader's default generate_solution keeps them).
    c.GenerateSolution.preprocessors = [
        IncludeHeaderFooter, LockCells, ClearOutput, ClearMarkScheme, ClearHiddenTests, Execute, CoalesceStreams,
    ]
