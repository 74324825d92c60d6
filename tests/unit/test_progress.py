"""The progress table inside a notebook: an IPython hook records check cells, show_progress prints them."""
import pytest
from IPython.core.interactiveshell import InteractiveShell

from autograder.student import progress
from autograder.student.progress import CheckResult, format_table, header, watch_checks
from autograder.student.verdict import JUDGED_OUTSIDE_ENV


@pytest.fixture
def shell(monkeypatch):
    monkeypatch.setattr(progress, "_outcomes", {})
    shell = InteractiveShell.instance()
    yield shell
    if progress.record in shell.events.callbacks["post_run_cell"]:
        shell.events.unregister("post_run_cell", progress.record)


def test_header_is_recognised_and_says_points():
    assert header("test_mul_backward", 2) == "# Check test_mul_backward · 2 points"
    assert header("test_engine_product", 1) == "# Check test_engine_product · 1 point"
    match = progress.HEADER.match(header("test_mul_backward", 2))
    assert (match["id"], match["points"]) == ("test_mul_backward", "2")


def test_hook_records_passing_failing_and_crashing_checks(shell):
    assert watch_checks() and watch_checks()           # registering twice keeps one hook
    assert shell.events.callbacks["post_run_cell"].count(progress.record) == 1
    shell.run_cell(header("test_a", 1) + "\nassert 1 + 1 == 2")
    shell.run_cell(header("test_b", 2) + "\nassert False, 'Mul().backward: the gradient for a is wrong\\n  Hint: ...'")
    shell.run_cell(header("test_c", 3) + "\nundefined_name")
    shell.run_cell("x = 1  # an ordinary cell is not recorded")
    results = progress.results_seen({"test_a": 1, "test_b": 2, "test_c": 3, "test_d": 1})
    assert results == [
        CheckResult("test_a", 1, "passed", ""),
        CheckResult("test_b", 2, "FAILED", "Mul().backward: the gradient for a is wrong\n  Hint: ..."),
        CheckResult("test_c", 3, "FAILED", "NameError: name 'undefined_name' is not defined"),
        CheckResult("test_d", 1, "not run", "run this check's cell"),
    ]


def test_rerunning_a_check_replaces_its_outcome(shell):
    watch_checks()
    shell.run_cell(header("test_a", 1) + "\nassert False, 'not yet'")
    shell.run_cell(header("test_a", 1) + "\nassert True")
    assert progress.results_seen({"test_a": 1})[0].status == "passed"


def test_table_lists_every_check_and_the_total(capsys, shell):
    watch_checks()
    shell.run_cell(header("test_a", 1) + "\nassert True")
    shell.run_cell(header("test_b", 2) + "\nassert False, 'expected (2, 3), received (3, 2)'")
    progress.show_progress("ch99 · Test chapter", {"test_a": 1, "test_b": 2, "test_c": 3})
    lines = capsys.readouterr().out.splitlines()
    table = lines[lines.index("ch99 · Test chapter"):]
    assert table[1].split() == ["exercise", "status", "points", "message"]
    assert table[2].split() == ["test_a", "passed", "1/1"]
    assert table[3].split()[:3] == ["test_b", "FAILED", "0/2"] and table[3].endswith("expected (2, 3), received (3, 2)")
    assert table[4].split()[:3] == ["test_c", "not", "run"]
    assert table[5].startswith("Progress: 1/6 points (16%), 1 of 3 checks passed.")


def test_while_the_judge_grades_the_cell_claims_no_points(capsys, shell, monkeypatch):
    """In a grading kernel the judged checks pass without looking, so a table would claim every point:
    the last cell says where the verdicts are instead."""
    watch_checks()
    monkeypatch.setenv(JUDGED_OUTSIDE_ENV, "backward")
    shell.run_cell(header("test_a", 1) + "\nassert True")
    progress.show_progress("ch99 · Test chapter", {"test_a": 1, "test_b": 2})
    out = capsys.readouterr().out
    assert "ch99 · Test chapter" in out and "in your feedback" in out
    assert "Progress:" not in out and "1/1" not in out


def test_percent_reaches_100_only_when_everything_passes():
    almost = [CheckResult("a", 199, "passed"), CheckResult("b", 1, "FAILED", "no")]
    assert "(99%)" in format_table("t", almost)
    assert "(100%)" in format_table("t", [CheckResult("a", 3, "passed")])


def test_outside_ipython_watching_is_a_no_op(monkeypatch):
    monkeypatch.setattr("IPython.get_ipython", lambda: None)
    assert watch_checks() is False


MESSAGE = "Mul().backward: the gradient for a is wrong.\n  worst element a[0]: ...\n  Hint: the rule"
LIST = "2 of 3 Tensor operators are not wired right:\n  - `a * b` calls Add\n  - `a - b` calls Add"


def test_a_failures_whole_message_is_shown_under_its_row():
    table = format_table("t", [CheckResult("test_b", 2, "FAILED", MESSAGE), CheckResult("test_a", 1, "passed")])
    lines = table.splitlines()
    assert lines[2].endswith("Mul().backward: the gradient for a is wrong.")
    assert lines[3] == "      worst element a[0]: ..." and lines[4] == "      Hint: the rule"
    assert lines[5].split() == ["test_a", "passed", "1/1"]


def test_short_keeps_one_line_per_check_without_a_dangling_colon():
    lines = format_table("t", [CheckResult("test_b", 2, "FAILED", MESSAGE),
                               CheckResult("test_ops", 4, "FAILED", LIST)], short=True).splitlines()
    assert lines[2].endswith("Mul().backward: the gradient for a is wrong.") and lines[3].startswith("test_ops")
    assert lines[3].endswith("not wired right: `a * b` calls Add (and 1 more)")
    assert lines[4].startswith("Progress:")


def test_written_questions_are_named_apart_from_the_checks(capsys, shell):
    """Their points are the instructor's to give: the table says how many, and counts none of them."""
    watch_checks()
    shell.run_cell(header("test_a", 1) + "\nassert True")
    progress.show_progress("ch99 · Test chapter", {"test_a": 1}, written=3)
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].startswith("Progress: 1/1 points (100%)")
    assert lines[-1] == "Written questions: 3 more points, graded by your instructor (not counted above)."
    assert "Written questions" not in format_table("t", [CheckResult("a", 3, "passed")])
