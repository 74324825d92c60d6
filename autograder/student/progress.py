"""Where a student stands: which of a notebook's visible checks passed, as one table.

The same table comes from two places. Inside the notebook, `watch_checks()` (called by the set-up
cell) records the outcome of every check cell the kernel runs, and the last cell's
`show_progress(...)` prints it. Outside, `python -m autograder check NOTEBOOK` runs the notebook and
reads the outcomes from its outputs (autograder/student/selfcheck.py).

A check cell is recognised by its first line, `# Check <id> · <n> point(s)`, which the build writes
into every test cell (autograder/build/frame.py). Test cells are locked, so this works in JupyterLab,
Colab and headless runs alike, without knowing where the notebook file is.
"""
import re
from dataclasses import dataclass

from autograder.student.verdict import graded_by_judge

HEADER = re.compile(r"^# Check (?P<id>\S+) · (?P<points>\d+) points?\b")
PASSED, FAILED, NOT_RUN = "passed", "FAILED", "not run"

_outcomes = {}          # check id -> (passed, the teaching message): what the kernel saw last


@dataclass(frozen=True)
class CheckResult:
    """One check cell: its id, its points, and what happened when it last ran."""

    exercise: str
    points: int
    status: str
    message: str = ""

    @property
    def earned(self):
        return self.points if self.status == PASSED else 0


def header(check_id, points):
    """The first line of a check cell: names it and says what it is worth."""
    return f"# Check {check_id} · {points} point{'' if points == 1 else 's'}"


def teaching_message(ename, evalue):
    """A failed check's whole teaching message (an assertion's text), or the error's name and message."""
    text = str(evalue).strip()
    if ename == "AssertionError":
        return text or "AssertionError (the check gave no message)"
    return f"{ename}: {text}" if text else ename


def teaching_line(message):
    """The message in one line: its first line, and when that line only announces what follows (it ends
    with a colon), the first thing that follows too."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return ""
    if lines[0].endswith(":") and len(lines) > 1:
        rest = f" (and {len(lines) - 2} more)" if len(lines) > 2 else ""
        return f"{lines[0]} {lines[1].lstrip('- ')}{rest}"
    return lines[0]


def record(result):
    """IPython `post_run_cell` hook: remember the outcome of a check cell."""
    try:
        match = HEADER.match(result.info.raw_cell.lstrip())
        if not match:
            return
        error = result.error_in_exec or result.error_before_exec
        _outcomes[match["id"]] = (error is None, "" if error is None else teaching_message(type(error).__name__, error))
    except Exception:  # noqa: BLE001 (a hook that raises would write to stderr, which zeroes a graded cell)
        pass


def watch_checks():
    """Start recording check cells in the running IPython kernel (once, however often it is called)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    if record not in shell.events.callbacks["post_run_cell"]:
        shell.events.register("post_run_cell", record)
    return True


def results_seen(points):
    """CheckResults, in notebook order, for the checks {id: points} from what the kernel recorded."""
    results = []
    for check_id, value in points.items():
        if check_id in _outcomes:
            passed, message = _outcomes[check_id]
            results.append(CheckResult(check_id, value, PASSED if passed else FAILED, message))
        else:
            results.append(CheckResult(check_id, value, NOT_RUN, "run this check's cell"))
    return results


def format_table(title, results, short=False, written=0):
    """The table a student reads: exercise, status, points and message, then a total. A failure's whole
    message is shown, its further lines (the worst element, the hint) indented under its row; `short`
    keeps one line per check. `written`: the points of the notebook's written questions, which people grade."""
    width = max([len(r.exercise) for r in results] + [len("exercise")])
    lines = [title, f"{'exercise':<{width}}  {'status':<7}  {'points':>6}  message"]
    for r in results:
        first, *more = r.message.splitlines() or [""]
        if short:
            first, more = teaching_line(r.message), []
        lines.append(f"{r.exercise:<{width}}  {r.status:<7}  {f'{r.earned}/{r.points}':>6}  {first}".rstrip())
        lines.extend(f"    {line.rstrip()}" for line in more if line.strip())
    lines.append(summary(results))
    if written:
        lines.append(written_note(written))
    return "\n".join(lines)


def written_note(points):
    return (f"Written questions: {points} more point{'' if points == 1 else 's'}, graded by your instructor "
            "(not counted above).")


def summary(results):
    earned, total = sum(r.earned for r in results), sum(r.points for r in results)
    percent = 100 * earned // total if total else 100      # floor: 100% only when everything passes
    passed = sum(r.status == PASSED for r in results)
    return (f"Progress: {earned}/{total} points ({percent}%), {passed} of {len(results)} checks passed. "
            "Visible checks only: the hidden tests run when your notebook is graded.")


GRADED_OUTSIDE = ("Being graded: the grader checks this notebook outside it, so a table made in here could not "
                  "know its verdicts. Each check cell the grader failed says why, under the cell; your points "
                  "are in your feedback.")


def show_progress(title, points, short=False, written=0):
    """Print where the student stands on the checks {id: points} (the notebook's last cell), and how
    many points of written questions are left to the instructor. While the judge grades the notebook, the
    kernel's check cells pass without looking (verdict.judged_outside): then a table would claim every
    point, so the cell says where the verdicts are instead."""
    if graded_by_judge():
        print(f"{title}\n{GRADED_OUTSIDE}")
        return
    print(format_table(title, results_seen(points), short, written))
