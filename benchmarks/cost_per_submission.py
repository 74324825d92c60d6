"""Where the seconds of one graded submission go: one nbgrader process grading several submissions in
a row through `NbGraderAPI.autograde`, as a grading worker does (`grading.worker.grade_one`), with
the sandbox and the judge on.

Every row is a measured interval. The grader's own methods are wrapped with a stopwatch in this
process (nbgrader's Autograde steps, each preprocessor, nbclient's kernel start and shutdown, each
cell's execution, the judge's probes); a row's time is exclusive (a probe's round trip is not also
counted in the judge's row), and what no row covers is printed as the unaccounted remainder of the
measured total. Interpreter and nbgrader start are paid once per worker: measured in a fresh
interpreter, and shown amortized over the submissions graded.

    .venv/bin/python benchmarks/cost_per_submission.py [--chapters ch03 ...] [--submissions 4] [--breakdown ch03]
"""
import argparse
import contextlib
import functools
import inspect
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STARTUP = "from nbgrader.apps import NbGraderAPI; import autograder.grading.judged_execute"


class Stopwatch:
    """Exclusive time per row: a wrapped call pauses the row of the call it runs inside."""

    def __init__(self):
        self.seconds = defaultdict(float)
        self.counts = defaultdict(int)
        self.stack = []         # [row, started]

    def enter(self, row):
        now = time.perf_counter()
        if self.stack:
            outer = self.stack[-1]
            self.seconds[outer[0]] += now - outer[1]
        self.stack.append([row, now])
        self.counts[row] += 1

    def leave(self):
        now = time.perf_counter()
        row, started = self.stack.pop()
        self.seconds[row] += now - started
        if self.stack:
            self.stack[-1][1] = now

    @contextlib.contextmanager
    def row(self, name):
        self.enter(name)
        try:
            yield
        finally:
            self.leave()

    def wrap(self, owner, method, row):
        """Time every call of owner.method as `row` (a name, or a function of the call's arguments);
        a method this version of the grader lacks is left out."""
        original = getattr(owner, method, None)
        if original is None:
            return
        name_of = row if callable(row) else (lambda *a, **k: row)
        if inspect.iscoroutinefunction(original):
            @functools.wraps(original)
            async def timed(*args, **kwargs):
                self.enter(name_of(*args, **kwargs))
                try:
                    return await original(*args, **kwargs)
                finally:
                    self.leave()
        else:
            @functools.wraps(original)
            def timed(*args, **kwargs):
                self.enter(name_of(*args, **kwargs))
                try:
                    return original(*args, **kwargs)
                finally:
                    self.leave()
        setattr(owner, method, timed)

    def take(self):
        seconds, counts = dict(self.seconds), dict(self.counts)
        self.seconds.clear()
        self.counts.clear()
        return seconds, counts


ROWS = [   # (row, what it is), in the order a submission goes through them
    ("course-folder layout", "worker folder laid out afresh, submission copied in (grade_one, prepare)"),
    ("gradebook setup", "Autograde.init_assignment: student, submission, notebooks found in the gradebook"),
    ("repair and sanitize", "RepairNotebook, ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCellsReadOnce "
                            "(the submission rebuilt on the source, cells overwritten from the gradebook)"),
    ("judge setup", "Judge.from_source: the source notebook's checks planned"),
    ("kernel start (sandboxed)", "bwrap + ipykernel started, client connected, kernel_info answered"),
    ("setup cells (imports)", "the notebook's set-up and import cells"),
    ("student and provided code", "solution cells and provided example cells"),
    ("test cells run in the kernel", "the capstones' checks; the judge decides every other test cell without "
                                     "sending it to the kernel (JudgedExecute.preprocess_cell)"),
    ("judge probes: kernel round trips", "probe code sent, run in the kernel, reply received"),
    ("judge probes: judge's own work", "the judge's inputs, expected values and comparisons"),
    ("kernel shutdown", "kernel stopped, sandbox ended, sockets removed"),
    ("gradebook writes", "SaveAutoGrades and AssignLatePenalties"),
    ("nbgrader's metadata checks (twice)", "CheckCellMetadata(SchemaOnce), after sanitizing and after grading"),
    ("other preprocessors", "UseCourseChapters, IgnorePattern, ClearMetadata, LimitOutput"),
    ("notebook files", "notebooks read, written, support files copied (nbgrader's converter)"),
    ("hand-off", "diagnose, repair log read, gradebook and notebook moved out for the merge"),
]


JUDGE_OWN = "judge probes: judge's own work"
TEST_CELLS = "test cells run in the kernel"


def cell_row(preprocessor, cell, resources, index):
    """The row of one executed cell, by what the cell is."""
    meta = cell.metadata.get("nbgrader", {})
    if "part" in cell.metadata:                 # split_checks' halves of a test cell
        return f"{cell.metadata['part']} checks"
    if meta.get("grade"):
        return TEST_CELLS
    code = [c for c in preprocessor.nb.cells if c.cell_type == "code"]
    first_solution = next((i for i, c in enumerate(code) if c.metadata.get("nbgrader", {}).get("solution")), len(code))
    if any(c is cell for c in code[:first_solution]) and "import" in cell.source:
        return "setup cells (imports)"
    return "student and provided code"


def instrument(watch):
    """Wrap the grader's steps with the stopwatch (in this process only)."""
    from nbconvert.exporters import Exporter
    from nbgrader.converters.autograde import Autograde
    from nbgrader.converters.base import BaseConverter
    from traitlets.config import Config

    from autograder.grading import judge, judged_execute, sandboxed_execute
    from autograder.grading import worker as grading_worker
    from autograder.grading.sandboxed_execute import cell_label
    from course_config import configure_nbgrader

    config = Config()
    configure_nbgrader(config)
    watch.wrap(grading_worker, "prepare", "course-folder layout")
    watch.wrap(Autograde, "init_assignment", "gradebook setup")
    rows = {"SaveAutoGrades": "gradebook writes", "SaveAutoGradesAtOnce": "gradebook writes",
            "AssignLatePenalties": "gradebook writes",
            "CheckCellMetadata": "nbgrader's metadata checks (twice)",
            "CheckCellMetadataSchemaOnce": "nbgrader's metadata checks (twice)"}
    rows.update({p.__name__: "repair and sanitize" for p in config.Autograde.sanitize_preprocessors
                 if p.__name__ not in rows})
    steps = {*config.Autograde.sanitize_preprocessors, *config.Autograde.autograde_preprocessors}
    for preprocessor in steps - {judged_execute.JudgedExecute}:    # the kernel's and the judge's own rows below
        watch.wrap(preprocessor, "preprocess", rows.get(preprocessor.__name__, "other preprocessors"))
    watch.wrap(judge.Judge, "from_source", "judge setup")
    execute = sandboxed_execute.SandboxedExecute
    watch.wrap(execute, "start_new_kernel", "kernel start (sandboxed)")
    watch.wrap(execute, "start_new_kernel_client", "kernel start (sandboxed)")
    watch.wrap(execute, "wait_for_reply", "kernel start (sandboxed)")    # only _run_cells' kernel_info calls it
    if os.environ.get("COST_CELLS"):      # per-cell detail while investigating: one row per cell, not in the table
        watch.wrap(execute, "preprocess_cell", lambda p, cell, r, i: f"cell {i} {cell_label(cell, i)}")
    else:
        watch.wrap(execute, "preprocess_cell", cell_row)
    watch.wrap(execute, "_cleanup_kernel", "kernel shutdown")
    watch.wrap(judged_execute.JudgedExecute, "after_graded_cell", JUDGE_OWN)
    watch.wrap(judged_execute.JudgedExecute, "after_graded_run", JUDGE_OWN)
    watch.wrap(execute, "run_probe", "judge probes: kernel round trips")
    watch.wrap(Exporter, "from_filename", "notebook files")        # read, then the preprocessors (own rows)
    watch.wrap(BaseConverter, "write_single_notebook", "notebook files")
    watch.wrap(BaseConverter, "init_single_notebook_resources", "notebook files")
    watch.wrap(Autograde, "_init_preprocessors", "notebook files")
    watch.wrap(grading_worker, "diagnose", "hand-off")
    watch.wrap(grading_worker, "read_student_repairs", "hand-off")


def startup_seconds():
    """A fresh interpreter importing nbgrader and the course's grading code: what a worker pays once."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", STARTUP], check=True, cwd=ROOT,
                   env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return time.perf_counter() - started


def scratch_course(scratch, chapter, submissions):
    """The chapter's grading kit unpacked, as a Dask task unpacks it (kit.chapter_kit: the autograde
    source, the configuration, a gradebook that knows the chapter), and `submissions` copies of the
    solved demo notebook to hand in, each in a folder of its own."""
    import nbformat
    from nbgrader.api import Gradebook

    from autograder.build.submissions import demo_notebooks
    from autograder.course import Course
    from autograder.grading import file_bundle, register
    from autograder.grading.kit import chapter_kit

    course_root = scratch / "course"
    course_root.mkdir(parents=True, exist_ok=True)
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy(ROOT / name, course_root / name)
    shutil.copytree(ROOT / "source" / chapter.id, course_root / "source" / chapter.id)
    course = Course(course_root)
    register(course, chapter)
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        kit = chapter_kit(course, chapter, gradebook)
    kit_root = file_bundle.unpack(kit.files, scratch / f"kit-{chapter.id}")
    students = {}
    perfect = demo_notebooks(Course(ROOT), chapter)["perfect"]
    for n in range(submissions):
        folder = scratch / "inbox" / f"student{n:02d}"
        shutil.copytree(ROOT / "release" / chapter.id, folder)
        nbformat.write(perfect, folder / f"{chapter.notebook}.ipynb")
        students[folder.name] = folder
    return kit_root, kit.settings, students


def grade_chapter(watch, chapter, submissions, scratch):
    """Grade `submissions` solved notebooks in a row in one NbGraderAPI; per submission, its rows and total."""
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI

    import course_config as cfg
    from autograder.course import Course
    from autograder.grading.protocol import Submission
    from autograder.grading.worker import course_settings, grade_one, prepare
    full = Course(ROOT).autograded_points(chapter)
    kit_root, settings, students = scratch_course(scratch, chapter, submissions)
    worker = scratch / f"worker-{chapter.id}"
    prepare(kit_root, worker, chapter.id, cfg.SOURCE_DIR)
    started = time.perf_counter()
    api = NbGraderAPI(config=course_settings(kit_root, worker))
    api_seconds = time.perf_counter() - started
    runs = []
    for student, folder in students.items():
        submission = Submission(student, chapter.id, chapter.notebook, cfg.CELL_TIMEOUT_SECONDS, folder=str(folder))
        watch.take()
        started = time.perf_counter()
        result = grade_one(api, submission, settings, kit_root, worker)
        total = time.perf_counter() - started
        seconds, counts = watch.take()
        assert result.success and result.problem is None, result
        with Gradebook(f"sqlite:///{result.gradebook}") as gradebook:
            score = gradebook.find_submission(chapter.id, student).score
        assert score == full, f"{chapter.id} {student}: {score} of {full}"
        shutil.rmtree(result.folder)
        runs.append((total, seconds, counts))
    return api_seconds, runs


def mean_rows(runs):
    """Each row's mean over the runs: means add up, so rows and remainder sum to the mean total."""
    return {row: statistics.mean(seconds.get(row, 0.0) for _, seconds, _ in runs) for row, _ in ROWS}


def print_breakdown(chapter, startup, api_seconds, runs):
    """Chapter's rows: the mean of every submission after the first (the first pays one-time imports)."""
    steady = runs[1:] or runs
    total = statistics.mean(t for t, _, _ in steady)
    rows = mean_rows(steady)
    if os.environ.get("COST_CELLS"):
        cells = {r: statistics.mean(s.get(r, 0.0) for _, s, _ in steady) for r in steady[-1][1] if r.startswith("cell ")}
        for name, sec in sorted(cells.items(), key=lambda kv: -kv[1])[:12] + sorted(cells.items(), key=lambda kv: kv[1])[:5]:
            print(f"  {name:<38} {sec:8.3f}")
    probes = statistics.mean(c.get("judge probes: kernel round trips", 0) for _, _, c in steady)
    once = startup + api_seconds
    print(f"\n{chapter.id}: where one graded submission's seconds go (mean of submissions 2..{len(runs)} "
          f"of {len(runs)} graded in one process; sandbox and judge on)")
    print(f"{'row':<40} {'seconds':>8} {'share':>6}")
    for row, _ in ROWS:
        print(f"{row:<40} {rows[row]:8.3f} {100 * rows[row] / total:5.1f}%")
    accounted = sum(rows.values())
    print(f"{'unaccounted (total - rows)':<40} {total - accounted:8.3f} {100 * (total - accounted) / total:5.1f}%")
    print(f"{'measured total per submission':<40} {total:8.3f}")
    print(f"judge probes per submission: {probes:g}; first submission: {runs[0][0]:.2f} s; "
          f"every submission: {' '.join(f'{t:.2f}' for t, _, _ in runs)}")
    print(f"once per worker: interpreter + nbgrader + grading imports {startup:.2f} s, NbGraderAPI {api_seconds:.2f} s "
          f"= {once:.2f} s; amortized over {len(runs)} submissions {once / len(runs):.2f} s, over 100: {once / 100:.3f} s")
    return {"rows": {**rows, "unaccounted (total - rows)": total - accounted}, "total": total, "probes": probes,
            "once_per_process": once}


HIDDEN_MARK = "### BEGIN HIDDEN TESTS"


def split_checks(watch, chapter, scratch):
    """Visible and hidden checks' seconds, measured apart: they share each test cell, so here the source
    notebook (solutions in place) runs once more in a sandboxed kernel (no judge, no nbgrader) with every test cell cut in two
    at the hidden-tests marker, each half timed as a cell of its own."""
    import nbformat

    from autograder.grading.sandboxed_execute import SandboxedExecute

    notebook = nbformat.read(ROOT / "source" / chapter.id / f"{chapter.notebook}.ipynb", as_version=4)
    cells = []
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade") and HIDDEN_MARK in cell.source:
            visible, hidden = cell.source.split(HIDDEN_MARK, 1)
            cells += [nbformat.v4.new_code_cell(visible, metadata={"part": "visible"}),
                      nbformat.v4.new_code_cell(HIDDEN_MARK + hidden, metadata={"part": "hidden"})]
        elif cell.metadata.get("nbgrader", {}).get("grade"):
            cells.append(nbformat.v4.new_code_cell(cell.source, metadata={"part": "visible"}))
        else:
            cells.append(cell)
    notebook.cells = cells
    folder = scratch / f"split-{chapter.id}"
    shutil.copytree(ROOT / "release" / chapter.id, folder)
    executor = SandboxedExecute(timeout=600)
    executor.preprocess(notebook, {"metadata": {"path": str(folder)}})       # warm the caches once
    watch.take()
    executor = SandboxedExecute(timeout=600)
    executor.preprocess(notebook, {"metadata": {"path": str(folder)}})
    seconds, _ = watch.take()
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", nargs="+", default=None, help="default: every chapter")
    parser.add_argument("--submissions", type=int, default=4, help="graded in a row per chapter (>= 2)")
    parser.add_argument("--breakdown", nargs="+", default=["ch03"], help="chapters whose rows are printed")
    parser.add_argument("--json", type=Path, help="also write seconds per submission and the breakdowns to this file (benchmarks/scale.py)")
    args = parser.parse_args()

    from autograder.course import Course
    from autograder.grading.nbgrader_cli import nbgrader_env

    os.environ.update(nbgrader_env())
    os.chdir(ROOT)
    course = Course(ROOT)
    chapters = [course.chapter(c) for c in args.chapters] if args.chapters else course.chapters
    startup = statistics.median(startup_seconds() for _ in range(3))
    watch = Stopwatch()
    instrument(watch)
    summary, breakdowns = [], {}
    with tempfile.TemporaryDirectory(prefix="bg-cost-") as scratch:
        for chapter in chapters:
            api_seconds, runs = grade_chapter(watch, chapter, args.submissions, Path(scratch) / chapter.id)
            if chapter.id in args.breakdown:
                breakdowns[chapter.id] = print_breakdown(chapter, startup, api_seconds, runs)
                split = split_checks(watch, chapter, Path(scratch))
                print(f"test cells cut at the hidden-tests marker, run apart (sandboxed kernel, no judge): visible "
                      f"checks {split.get('visible checks', 0):.3f} s, hidden checks {split.get('hidden checks', 0):.3f} s")
            summary.append((chapter, runs))
    print(f"\nseconds per submission, one process grading {args.submissions} solved notebooks in a row "
          f"(mean of 2..{args.submissions}; load average {os.getloadavg()[0]:.2f} at the end)")
    print(f"{'chapter':<8} {'s/submission':>13} {'first':>7} {'kernel start':>13} {'judge probes':>13} {'test cells':>11}")
    for chapter, runs in summary:
        steady = runs[1:] or runs
        rows = mean_rows(steady)
        print(f"{chapter.id:<8} {statistics.mean(t for t, _, _ in steady):13.2f} {runs[0][0]:7.2f} "
              f"{rows['kernel start (sandboxed)']:13.2f} "
              f"{rows['judge probes: kernel round trips'] + rows[JUDGE_OWN]:13.2f} "
              f"{rows[TEST_CELLS]:11.2f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"seconds_per_submission": {
            chapter.id: statistics.mean(t for t, _, _ in (runs[1:] or runs)) for chapter, runs in summary},
            "breakdown": breakdowns}))


if __name__ == "__main__":
    main()
