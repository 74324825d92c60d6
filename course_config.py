"""The course's single configuration: chapters, folders and grading settings.

Everything that builds or grades the course reads this file: the `autograder`
commands import it, and `nbgrader_config.py` hands it to plain `nbgrader`.
"""
import types
from pathlib import Path
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

# What of a submission folder grading reads (autograder/grading/intake.py), on every path: plain `nbgrader
# autograde` on submitted/ (however it got there), `grade` on Dask, the Gradescope runner. Only regular files:
# a link, FIFO, socket or device is never followed, opened or copied. A real chapter's folder holds its
# notebook, earlier_chapters.py, the bonus's mybabygrad/ (ten modules) and a few data files: a tenth of these
# limits. A submission over SUBMISSION_MAX_FILES or SUBMISSION_MAX_BYTES (its notebook aside) is graded from
# its notebook alone; a file over SUBMISSION_MAX_FILE_BYTES, or a folder deeper than SUBMISSION_MAX_DEPTH below
# the submission's (mybabygrad/ is 1), is left out. Each is said in grading_ledger/<chapter>_problems.csv.
SUBMISSION_MAX_FILES = 100
SUBMISSION_MAX_BYTES = 100 * 2**20
SUBMISSION_MAX_FILE_BYTES = 50 * 2**20
SUBMISSION_MAX_DEPTH = 3
# The notebook graded has a limit of its own: one that displayed a huge image is an honest accident, graded
# with its outputs cleared (a 200 MB one keeps full marks); executed solutions are < 0.3 MB.
SUBMISSION_MAX_NOTEBOOK_BYTES = 512 * 2**20
# The only kinds of file that travel from a submission into autograded/ and feedback/, matched without regard
# to case: what a chapter's work is made of (notebooks, Python modules) and its data (text, tables, NumPy
# arrays, gzip'd IDX files like MNIST's, PNG and JPEG pictures). A list of what is allowed, because a list of
# what is dangerous misses one: formgrader serves a submission's files from the instructor's own server, and
# a notes.HTML, page.xht or diagram.SVG there runs script with the instructor's session. None of these is
# served as a page (Jupyter serves .gz as application/gzip). nbgrader's own copies get the same list as
# ignore globs (intake.ignore_globs).
SUBMISSION_FILE_TYPES = [".ipynb", ".py", ".txt", ".csv", ".json", ".npy", ".npz", ".gz", ".png", ".jpg", ".jpeg"]

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


VALIDATE_WIDTH = 2000       # characters per line of Validate's report: no check's message is cut


def configure_nbgrader(c) -> None:
    """Write the course's settings into an nbgrader (traitlets) config object `c` (and nowhere else:
    the process's environment is left alone)."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties, ClearHiddenTests, ClearMarkScheme, ClearOutput, DeduplicateIds,
        GetGrades, IgnorePattern, IncludeHeaderFooter, LimitOutput, LockCells, OverwriteKernelspec,
    )

    from autograder.build.student_config import after_generate_assignment, kernel_arguments
    from autograder.grading.feedback_guard import FeedbackGuard, NeutraliseStudentMarkers
    from autograder.grading.intake import IntakeLimits, ignore_globs
    from autograder.grading.judged_execute import JudgedExecute
    from autograder.grading.repair import RepairNotebook, SubmissionExporter
    from autograder.grading.safe_html import FILTERS as SAFE_HTML_FILTERS
    from autograder.grading.safe_outputs import ShownOutputsOnly
    from autograder.grading.sandbox import SandboxLimits
    from autograder.grading.set_aside import SetAside
    from autograder.grading.submission_modes import before_autograde
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
    # Files nbgrader never copies from a submission into autograded/ (nor from there into feedback/, nor
    # through the exchange): the clutter, and every type not in SUBMISSION_FILE_TYPES, in any case.
    # Formgrader serves a submission's files from the instructor's own server (SubmissionFilesHandler), so a
    # student's notes.HTML opened there would run with the instructor's session; the notebook itself is
    # rendered inert (grading/safe_html.py).
    c.CourseDirectory.ignore = [".ipynb_checkpoints", "__pycache__", "feedback", ".*", *ignore_globs(SUBMISSION_FILE_TYPES)]

    c.Execute.timeout = CELL_TIMEOUT_SECONDS
    c.Execute.interrupt_on_timeout = True
    c.Execute.kernel_name = KERNEL_NAME
    c.Execute.record_timing = False      # no timestamps: executed solutions/ rebuild byte for byte
    # Validate cuts every line of a failed cell's error at its width (90 by default): a check's message, a few
    # hundred characters on its first line, lost its end ("...with a = Value(2.016) an..."). Wide enough for any.
    c.Validator.width = VALIDATE_WIDTH
    c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
    # release/<chapter>/ gets the students' nbgrader_config.py from nbgrader itself, so a plain
    # `nbgrader generate_assignment --force` keeps it (autograder/build/student_config.py).
    c.GenerateAssignment.post_convert_hook = after_generate_assignment(
        types.SimpleNamespace(configure_nbgrader=configure_nbgrader), Path(__file__).parent / RELEASE_DIR)
    c.OverwriteCells.add_missing_cells = ADD_MISSING_CELLS
    c.Autograde.create_student = True
    # Before nbgrader sanitizes a submission, rebuild it on the source notebook's skeleton: duplicated,
    # deleted, reordered or stripped cells are graded as if intact, each repair logged and kept in
    # <LEDGER_DIR>/<chapter>_repairs.csv. The exporter salvages JSON notebooks that are not valid nbformat.
    c.Autograde.exporter_class = SubmissionExporter
    # Before nbgrader copies a submission (its copy follows links, blocks on a FIFO, and is quadratic in the
    # number of files), what intake refuses is moved out to <LEDGER_DIR>/refused/ (grading/set_aside.py);
    # then what is left is checked for files others could have changed, or unlike the exchange's copy
    # (grading/submission_modes.py). nbgrader calls one hook, with keywords.
    intake_limits = IntakeLimits.from_config(globals())      # what one submission folder may hold
    set_aside = SetAside(intake_limits, LEDGER_DIR, SUBMITTED_DIR)
    check_modes = before_autograde(Path(__file__).parent)

    def before_autograde_copies(**submission):
        set_aside(**submission)
        check_modes(**submission)
    c.Autograde.pre_convert_hook = before_autograde_copies
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
    # (autograder/grading/judge, docs/grading-correctness.md). JudgedExecute is a SandboxedExecute; the list is
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
    # nbgrader's exchange collect copies from inbound/, which every student can write: only what intake admits
    # (nbgrader's own copy follows links: grading/exchange_collect.py), and nbgrader's submit leaves submission
    # folders 0777, which its collect keeps: the course's collect leaves submitted/<student>/<chapter>/ the
    # instructor's alone (grading/submission_modes.py).
    c.ExchangeFactory.collect = "autograder.grading.submission_modes.PrivateCollect"
    c.IntakeCollect.limits = intake_limits
    c.IntakeCollect.notebooks = {a.id: f"{a.notebook}.ipynb" for a in CHAPTERS + BONUS}
    c.IntakeCollect.ledger_directory = LEDGER_DIR
    # A chapter released through the exchange before an earlier one is due carries none of its solution
    # (autograder/build/exchange_release.py: the gradebook's due dates say which chapters are open).
    c.ExchangeFactory.release_assignment = "autograder.build.exchange_release.CourseReleaseAssignment"
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
    # script in an answer or an output cannot act with the instructor's session (grading/safe_html.py):
    # outputs keep only the mimetypes and metadata a page may show (grading/safe_outputs.py), then HTML
    # and markdown are cleaned. The server sends those pages with a policy that runs none of the student's
    # script even so (grading/page_policy.py, a Jupyter server extension).
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.filters = SAFE_HTML_FILTERS
    c.HTMLExporter.preprocessors = [ShownOutputsOnly]
