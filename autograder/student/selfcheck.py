"""`python -m autograder check NOTEBOOK`: run a notebook's visible checks outside the browser.

The notebook is executed as saved on disk (in its own folder, so `earlier_chapters.py` is found) by
a fresh kernel, in the grading sandbox when this machine has the instructor's package and bubblewrap (the
first line says whether it could), otherwise unsandboxed; nothing is written back. Each test cell, found by its nbgrader metadata, passed when
it ran without an error; otherwise its error is the check's teaching message, shown whole (`--short`: one line).
Written questions are not checked: the table says how many points they add, which the instructor grades.
"""
import warnings
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config.loader import ConfigFileNotFound, PyFileConfigLoader

from autograder import cell_marks
from autograder.questions import written_points_in
from autograder.student.progress import (
    FAILED,
    NOT_RUN,
    PASSED,
    CheckResult,
    format_table,
    teaching_message,
)

# The kernel's own log stays quiet: on a laptop ipykernel warns at every start that it "is running over
# TCP without encryption", which is true of every local Jupyter kernel and tells a student nothing.
QUIET_KERNEL = ["--IPKernelApp.log_level=ERROR"]

# Per cell, as course_config.CELL_TIMEOUT_SECONDS for grading (a test keeps the two equal): the timeout of a
# notebook whose folder has no nbgrader_config.py, as on Colab, which downloads only the chapter's support files.
TIMEOUT_SECONDS = 120
CONFIG_FILE = "nbgrader_config.py"     # autograder/build/student_config.py writes one next to each student notebook


def validate_settings(folder):
    """(cell timeout, extra kernel arguments) that Validate uses for a notebook in `folder`, from its
    nbgrader_config.py (the course's timeout, and the kernel environment its first line sets), else
    (TIMEOUT_SECONDS, []). The file is the student's own copy of the course's: nbgrader runs it too."""
    try:
        config = PyFileConfigLoader(CONFIG_FILE, path=str(folder)).load_config()
    except ConfigFileNotFound:
        return TIMEOUT_SECONDS, []
    return config.Execute.get("timeout", TIMEOUT_SECONDS), list(config.Execute.get("extra_arguments", []))


def outcome(cell, stopped=None):
    """(status, message) of an executed test cell, from its outputs; `stopped` says why the run ended
    early (see `stop_reason`), for the cells it never reached."""
    if cell.get("execution_count") is None:
        return NOT_RUN, f"not reached ({stopped or 'an earlier cell stopped the run'})"
    for output in cell.get("outputs", []):
        if output.output_type == "error":
            return FAILED, teaching_message(output.ename, output.evalue)
    return PASSED, ""


def stop_reason(error, started):
    """Why the run stopped before the end, in words, from what client.execute() raised: a cell that ran too
    long, a kernel that died, or one that never started (then no cell was `started`). Whether a cell started
    comes from nbclient's hook, not from execution counts: a kernel that dies at once never sends one."""
    text = " ".join(str(error).split())
    text = text if len(text) <= 200 else text[:197] + "..."
    said = f"{type(error).__name__}{': ' + text if text else ''}"
    if not started:
        return f"the kernel could not run the notebook at all: {said}"
    return f"the run stopped early: {said}"


def sandbox_kernel_manager():
    """(the sandboxed kernel manager class, or None; one line saying which, or "" when there is nothing to say)
    for this machine. A student's copy of the course has no sandbox at all, by design: telling them so at every
    check would be noise. Only where the grading package is installed does the line matter (an instructor
    checking a notebook sees whether it ran as grading runs it)."""
    try:
        from autograder.grading.sandbox import unavailable_reason
        from autograder.grading.sandboxed_kernel import SandboxedKernelManager
    except ImportError:                # a student's install without the instructor's packages
        return None, ""
    reason = unavailable_reason()
    if reason:
        return None, f"Running without a sandbox ({reason})."
    return SandboxedKernelManager, "Running in the grading sandbox (no network, read-only system)."


def run_checks(path, timeout=None, kernel_manager_class=None):
    """Execute the notebook at `path` as Validate would (`validate_settings`), each cell for at most `timeout`
    seconds when given; return a CheckResult per test cell, in notebook order."""
    return results_of(*executed(path, timeout, kernel_manager_class))


def executed(path, timeout=None, kernel_manager_class=None):
    """(the notebook at `path` executed as Validate would, why its run stopped early or None)."""
    path = Path(path).resolve()
    configured_timeout, kernel_arguments = validate_settings(path.parent)
    timeout = timeout or configured_timeout
    notebook = nbformat.read(path, as_version=4)
    kernel = notebook.metadata.get("kernelspec", {}).get("name", "python3")
    chosen = {"kernel_manager_class": kernel_manager_class} if kernel_manager_class else {}
    started = []
    client = NotebookClient(notebook, timeout=timeout, kernel_name=kernel, allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}},
                            extra_arguments=QUIET_KERNEL + kernel_arguments,
                            on_cell_execute=lambda cell, cell_index: started.append(cell_index), **chosen)
    stopped = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            client.execute()
        except Exception as error:  # noqa: BLE001 (a timeout, a dead kernel: the cells not reached say so)
            stopped = stop_reason(error, started)
    return notebook, stopped


def first_cell_error(notebook, results=None):
    """'the provided cell under “heading” raised E: message' for the first code cell that is not a check and
    raised before the first check that did not pass (the set-up cell that cannot import earlier_chapters, say),
    whose error the checks after it may only echo; None when none did. The cell is named as the student sees
    it: by the heading above it (cells carry no numbers in JupyterLab) and by what it is, an exercise or
    provided code; `results` (results_of) says where the first check that did not pass is."""
    failing = {r.exercise for r in results or [] if r.status != PASSED}
    heading = ""
    for cell in notebook.cells:
        meta = cell_marks.marks(cell)
        if cell.cell_type == "markdown":
            titles = [line.lstrip("#").strip() for line in cell.source.splitlines() if line.startswith("#")]
            heading = titles[-1] if titles else heading
            continue
        if cell.cell_type != "code":
            continue
        if meta.get("grade"):
            if results is not None and meta.get("grade_id") in failing:
                return None            # this check failed before any cell raised: its own message says why
            continue
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                text = " ".join(str(output.evalue).split())
                kind = (f"exercise cell ({meta['grade_id']})" if meta.get("solution") and meta.get("grade_id")
                        else "provided cell" if meta.get("locked") else "code cell")
                where = f"the {kind} under “{heading[:80]}”" if heading else f"the first {kind}"
                return f"{where} raised {output.ename}: {text[:300] if text else '(no message)'}"
    return None


def results_of(notebook, stopped=None):
    """A CheckResult per test cell of an executed notebook, in notebook order, read from its outputs."""
    results = []
    for cell in notebook.cells:
        meta = cell_marks.marks(cell)
        if cell.cell_type == "code" and meta.get("grade"):
            status, message = outcome(cell, stopped)
            results.append(CheckResult(meta["grade_id"], int(meta.get("points", 0)), status, message))
    return results


def main(path, timeout=None, out=print, short=False):
    """Print the table (a failure's whole message, or one line per check when `short`); return the exit
    code: 0 only when every visible check passed."""
    path = Path(path)
    if not path.is_file():
        out(f"{path}: no such notebook")
        return 2
    manager, how = sandbox_kernel_manager()
    if how:
        out(how)
    out(f"Running {path} as saved on disk (save it first in JupyterLab)...")
    notebook, stopped = executed(path, timeout, manager)
    results = results_of(notebook, stopped)
    error = first_cell_error(notebook, results)
    if error:
        out(f"Before the checks, {error}\n  The checks after it may fail only because of it: fix it first.")
    if not results:
        out(f"{path} has no check cells (nbgrader test cells): nothing to report.")
        return 2
    out(format_table(f"{path}: visible checks", results, short, written_points_in(path)))
    return 0 if all(r.status == PASSED for r in results) else 1
