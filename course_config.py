"""The course's single configuration: chapters, folders and grading settings.

Everything that builds or grades the course reads this file: the `autograder`
commands import it, and `nbgrader_config.py` hands it to plain `nbgrader`.
"""
from typing import NamedTuple

from autograder import __version__


class Chapter(NamedTuple):
    """One nbgrader assignment: `source/<id>/<notebook>.ipynb`. Its points are its cells': each test and
    answer cell's `points=N` in the chapter script (Course.autograded_points, Course.written_points)."""

    id: str
    notebook: str
    title: str


COURSE_ID = "babygrad"

CHAPTERS = [
    Chapter("ch01", "scalar", "Introduction: automatic differentiation on scalars"),
    Chapter("ch02", "tensor", "The Tensor"),
    Chapter("ch03", "autodiff", "Automatic differentiation"),
    Chapter("ch04", "nn", "Layers, models and losses"),
    Chapter("ch05", "optimizer", "Optimizers"),
    Chapter("ch06", "data", "Data handling"),
    Chapter("ch07", "init", "Initialization"),
    Chapter("ch08", "persistence", "Model persistence"),
    Chapter("ch09", "trainer", "The Trainer"),
    Chapter("ch10", "conv", "Convolutional networks"),
]

# Optional assignments, built and graded like a chapter (`python -m autograder build`, `grade capstone_mine`)
# but outside CHAPTERS: no chapter's grade and no course total counts them. nbgrader knows no bonus points,
# so an instructor who wants them adds the assignment's score to the final grade by hand (README).
BONUS = [
    Chapter("capstone_mine", "capstone", "Bonus: the MLP capstone on your own babygrad"),
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
LMS_DOWNLOAD_DIR = "downloaded"      # plain `nbgrader zip_collect` only (unsafe; `autograder collect` does not use it)

# The gradebook: None is nbgrader's embedded SQLite file, gradebook.db in the course root. A course
# with several graders points every one of them at one PostgreSQL database instead, e.g.
# "postgresql://grader:secret@db.example.edu:5432/babygrad" (driver: psycopg, in requirements.txt).
GRADEBOOK_URL = None

# Where the course lives. REPOSITORY is this instructor repository: it holds every solution and hidden
# test, and nothing a student opens links to it. PUBLISHED_REPOSITORY is the student-only repository
# that `python -m autograder publish` fills (README "Publishing the course"); whoever publishes it pushes
# a tag `v<VERSION>` (VERSION is the package's, autograder.__version__) there. The badges, Binder and the
# Colab set-up cell point at that tag: Colab installs the course package from it and downloads each
# chapter's support files from its release/ folder.
REPOSITORY = "https://github.com/babygrad-course/babygrad-course"               # the instructors' (private)
PUBLISHED_REPOSITORY = "https://github.com/babygrad-course/babygrad"           # the students' (public)
VERSION = __version__
TAG = f"v{VERSION}"
BRANCH_FOR_BINDER = TAG             # Binder builds the environment of this tag (or a branch name)


def github_path():
    """`owner/name` of PUBLISHED_REPOSITORY, the only repository students are sent to."""
    return PUBLISHED_REPOSITORY.removeprefix("https://github.com/").strip("/")


def colab_url(chapter):
    """Open the chapter's student version straight from the published repository in Google Colab."""
    return (f"https://colab.research.google.com/github/{github_path()}/blob/{TAG}/"
            f"{RELEASE_DIR}/{chapter.id}/{chapter.notebook}.ipynb")


def binder_url():
    """JupyterLab on release/, in an environment built from requirements.txt, on mybinder.org."""
    return f"https://mybinder.org/v2/gh/{github_path()}/{BRANCH_FOR_BINDER}?urlpath=lab/tree/{RELEASE_DIR}"


def support_url(chapter):
    """Where the Colab set-up cell downloads the chapter's support files (earlier_chapters.py, data)."""
    return f"https://raw.githubusercontent.com/{github_path()}/{TAG}/{RELEASE_DIR}/{chapter.id}/"


# Grading.
KERNEL_NAME = "python3"
CELL_TIMEOUT_SECONDS = 120     # per cell; the slowest solution cell, chapter 10's capstone, trains ~15 s on one core
ADD_MISSING_CELLS = True       # a student who deleted a test cell gets it back, and graded
# The environment variables of every kernel nbgrader starts: configure_nbgrader hands them to the course's
# Execute steps, which pass them to each kernel they start (grading, sandboxed or not, and the build's
# solutions); the students' nbgrader_config.py sets them in Validate's kernels (autograder/build/student_config.py).
# No progress bars (autograder/student/progress_bars.py). One BLAS thread: babygrad's matrices are small,
# and on a busy grading machine threaded BLAS made chapter 7's training epoch ten times slower (135 s
# instead of 14 s); one thread also makes results independent of the core count, so rebuilt solutions reproduce.
# Graphs drawn with the built-in renderer (autograder/student/graph.py), as the build does: no Graphviz
# process inside the sandbox, and the same bytes on every grading machine.
KERNEL_ENVIRONMENT = {"BABYGRAD_HEADLESS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                      "BABYGRAD_GRAPH_RENDERER": "builtin"}
# Chapters whose grade cells the judge re-checks outside the kernel (autograder/grading/judge): their
# catalogued mistakes are proven to score the same through it. Other chapters keep the kernel's verdicts.
JUDGED_CHAPTERS = ["ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09", "ch10"]
# One notebook's cells, its judge's probes and its re-runs after kernel deaths, together: the cells not reached
# in time score 0 and say why, so no submission holds up the class for long (chapter 10's solution takes ~10 s).
NOTEBOOK_TIMEOUT_SECONDS = 900
SUBMISSION_TIMEOUT_SECONDS = 1800  # parallel grading stops a submission that takes longer than this in all
# Notebook repair (autograder/grading/repair.py): a submitted cell longer than this is not run, a stub
# saying why takes its place. The longest cell of any solution is under 4,000 characters.
MAX_CELL_CHARACTERS = 1_000_000

# The sandbox every grading kernel runs in (autograder/grading/sandbox.py): bwrap, no network, a read-only
# system, a private copy of the submission's folder, and these limits. One student's code can use this
# much and no more, and cannot outlive its kernel.
SANDBOX_MEMORY_BYTES = 4 << 30    # address space, not resident memory: NumPy and OpenBLAS reserve far more than they touch
SANDBOX_PROCESSES = 64            # processes and threads of one kernel (ipykernel runs ~10); a fork bomb stops here
SANDBOX_FILE_BYTES = 64 << 20     # largest file a kernel may write; the course's own files are all far smaller
SANDBOX_CPU_SECONDS = 900         # CPU time per kernel: chapter 10's capstone trains ~60 s, a slow machine 5x that
SANDBOX_SCRATCH_BYTES = 256 << 20  # each of the kernel's writable folders (its working folder, /tmp), held in memory
# Output kept, in bytes of the notebook's JSON, whatever the channel (printed text, displays and their updates,
# results, errors, output metadata: autograder/grading/output_budget.py). A test's message is a few lines, a
# table a few thousand; chapter 3's solution keeps 32 kB in all. 9 prints of 10 MB, a 20 MB display update or
# 2,000 results give a small notebook and feedback page; a test cell's error is kept all the same, shortened.
OUTPUT_BYTES_PER_CELL = 20_000
OUTPUT_BYTES_PER_NOTEBOOK = 200_000

# Collecting from an LMS (`python -m autograder collect`, autograder/grading/lms.py). Canvas names each file
# <name>[_late]_<user id>_<submission id>_<file name>, and numbers re-uploads (autodiff-1.ipynb).
# Students are identified by their Canvas user id through the roster (columns lms_user_id,student_id,name);
# the name in the file name is for display only. The regexp is matched against the member's whole path.
LMS_FILE_REGEXP = (r"^(?:.*[/\\])?(?P<student_id>[^_/\\]+)_(?P<late>[Ll][Aa][Tt][Ee]_)?(?P<lms_user_id>\d+)_"
                   r"(?P<submission_id>\d+)_(?P<file_id>[^/\\]+?)(?:-(?P<reupload>\d+))?\.ipynb$")
LMS_ROSTER = "roster.csv"                 # relative to the course root; `collect --roster` overrides it
LMS_ZIP_TIMEZONE = "UTC"                  # a zip stores wall-clock times without a zone: the LMS's zone
LMS_MAX_MEMBER_BYTES = 50 * 2**20         # one notebook, decompressed (executed solutions are < 0.3 MB)
LMS_MAX_TOTAL_BYTES = 2 * 2**30           # the whole download, decompressed: a zip bomb stops here

# The capstones' thresholds (chapters 9 and 10, and the bonus) are not here: they live with the check
# that applies them, autograder/student/checks/capstone.py (MLP_ACCURACY, CNN_ACCURACY), which every
# notebook has, on Colab too, where this file is not.


def chapter(chapter_id: str) -> Chapter:
    """The chapter (or bonus assignment) with this id, or a KeyError that lists the known ones."""
    for ch in CHAPTERS + BONUS:
        if ch.id == chapter_id:
            return ch
    raise KeyError(f"no chapter {chapter_id!r} in course_config.py; known: {[c.id for c in CHAPTERS + BONUS]}")


# Kinds of file a browser runs script in when it opens them: web pages, SVG and XML images, scripts.
ACTIVE_CONTENT = ["*.html", "*.htm", "*.xhtml", "*.shtml", "*.svg", "*.svgz", "*.xml", "*.xsl", "*.js", "*.mjs"]


def configure_nbgrader(c) -> None:
    """Write the course's settings into an nbgrader (traitlets) config object `c` (and nowhere else:
    the process's environment is left alone)."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties, ClearHiddenTests, ClearMarkScheme, ClearOutput, DeduplicateIds,
        GetGrades, IgnorePattern, IncludeHeaderFooter, LimitOutput, LockCells, OverwriteKernelspec,
    )

    from autograder.build.student_config import kernel_arguments
    from autograder.grading.feedback_guard import FeedbackGuard, NeutraliseStudentMarkers
    from autograder.grading.judged_execute import JudgedExecute
    from autograder.grading.repair import RepairNotebook, SubmissionExporter
    from autograder.grading.safe_html import FILTERS as SAFE_HTML_FILTERS
    from autograder.grading.sandbox import SandboxLimits
    from autograder.grading.preprocessors import (
        CheckCellMetadataSchemaOnce, CoalesceStreams, EnvironmentExecute, OverwriteCellsReadOnce, SaveAutoGradesAtOnce,
        ShortTracebacks, UseCourseChapters,
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
    # Files nbgrader never copies from a submission into autograded/ (nor from there into feedback/). Besides
    # the clutter: anything a browser runs as a page. Formgrader serves a submission's files from the
    # instructor's own server (SubmissionFilesHandler), so a student's notes.html opened there would run with
    # the instructor's session; the notebook itself is rendered inert (grading/safe_html.py).
    c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", ".*", *ACTIVE_CONTENT]

    c.Execute.timeout = CELL_TIMEOUT_SECONDS
    c.Execute.interrupt_on_timeout = True
    c.Execute.kernel_name = KERNEL_NAME
    c.Execute.record_timing = False      # no timestamps: executed solutions/ rebuild byte for byte
    c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
    c.OverwriteCells.add_missing_cells = ADD_MISSING_CELLS
    c.Autograde.create_student = True
    # Before nbgrader sanitizes a submission, rebuild it on the source notebook's skeleton: duplicated,
    # deleted, reordered or stripped cells are graded as if intact, each repair logged and kept in
    # <LEDGER_DIR>/<chapter>_repairs.csv. The exporter salvages JSON notebooks that are not valid nbformat.
    c.Autograde.exporter_class = SubmissionExporter
    # nbconvert validates the whole notebook against its schema after every preprocessor (14 a
    # submission); once after the last is as strict about what reaches the gradebook, and cheaper.
    c.Exporter.optimistic_validation = True
    c.Autograde.sanitize_preprocessors = [
        RepairNotebook, ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCellsReadOnce, CheckCellMetadataSchemaOnce,
    ]
    c.RepairNotebook.ledger_directory = LEDGER_DIR
    c.RepairNotebook.max_cell_characters = MAX_CELL_CHARACTERS
    # Student code runs only in the sandbox (SandboxedExecute, autograder/grading/sandbox.py), and its
    # verdicts are decided outside it: after each grade cell, the judge re-runs the cell's checks from
    # source/ in this process, with secret inputs, and fails the cell if the kernel's numbers are wrong
    # (autograder/grading/judge, docs/judge.md). JudgedExecute is a SandboxedExecute; the list is
    # nbgrader's default with it in Execute's place, and it reads the c.Execute settings above.
    c.SandboxedExecute.limits = SandboxLimits.from_config(globals())
    c.SandboxedExecute.notebook_timeout = NOTEBOOK_TIMEOUT_SECONDS
    # A submission's USE_MY_LIBRARY switch is set back to False: each chapter is graded on the course's
    # earlier chapters (autograder/student/my_library.py).
    c.Autograde.autograde_preprocessors = [
        UseCourseChapters, JudgedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGradesAtOnce,
        AssignLatePenalties, CheckCellMetadataSchemaOnce,
    ]
    c.JudgedExecute.judged_assignments = JUDGED_CHAPTERS + [bonus.id for bonus in BONUS]   # the bonus is judged too
    # Every kernel the course's Execute steps start gets KERNEL_ENVIRONMENT: JudgedExecute's (and so the
    # Gradescope runner's unprivileged ones) and generate_solution's EnvironmentExecute below.
    c.EnvironmentExecute.kernel_environment = KERNEL_ENVIRONMENT
    # nbgrader's own Execute (an instructor's `nbgrader validate` or formgrader's Validate button here, a
    # student's Validate through release/'s copy of the setting) sets it by the kernel's first line instead;
    # the course's Execute steps need no such line.
    c.Execute.extra_arguments = kernel_arguments(KERNEL_ENVIRONMENT)
    c.EnvironmentExecute.extra_arguments = []
    c.ZipCollectApp.downloaded_directory = LMS_DOWNLOAD_DIR
    c.FileNameCollectorPlugin.named_regexp = LMS_FILE_REGEXP
    # Solutions are published to students after the deadline: they must not carry hidden tests
    # (nbgrader's default generate_solution keeps them).
    # A busy kernel may flush one print() as two stream messages (nbclient's own coalesce_streams
    # is not configurable): CoalesceStreams merges them, so solutions/ rebuild byte for byte.
    # Written questions (autograder/questions.py): each rubric is a mark scheme in the locked question
    # cell above its answer cell, which nbgrader's ClearMarkScheme refuses outside "task" cells unless
    # told not to. Autograde puts the locked cell back with its rubric, for formgrader; release/,
    # solutions/ and feedback clear it. autograder.questions.check_question_cells keeps rubrics there.
    c.ClearMarkScheme.enforce_metadata = False
    c.GenerateSolution.preprocessors = [
        IncludeHeaderFooter, LockCells, ClearOutput, ClearMarkScheme, ClearHiddenTests, EnvironmentExecute,
        CoalesceStreams,
    ]
    # Feedback shows each exercise's points and teaching message, never the hidden tests' source
    # (nbgrader shows it by design, jupyter/nbgrader#917): strip the region, shorten tracebacks.
    # Marker text in a student's cell is defused first (it made ClearHiddenTests fail); last, a page
    # that would show a hidden-test or solution line (a student printed source/) is withheld.
    # The rubrics of written questions are cleared too: the autograded notebook holds them for formgrader.
    c.GenerateFeedback.preprocessors = [GetGrades, NeutraliseStudentMarkers, ClearHiddenTests, ClearMarkScheme,
                                        ShortTracebacks, CSSHTMLHeaderPreprocessor, FeedbackGuard]
    c.FeedbackGuard.withheld_csv = f"{LEDGER_DIR}/feedback_withheld.csv"
    # Formgrader shows a submission inside the Jupyter server, where the instructor is logged in: every
    # HTML page made from a student's notebook (formgrader's and the feedback) is rendered inert, so a
    # script in an answer or an output cannot act with the instructor's session (grading/safe_html.py).
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.filters = SAFE_HTML_FILTERS
