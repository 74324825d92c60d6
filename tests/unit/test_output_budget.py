"""The output budget in process: what a notebook keeps of each channel, in bytes of its JSON, and what it says
it cut. The same budget runs while cells run (SandboxedExecute) and once over the finished notebook."""
import copy
import json

import nbformat

from autograder.grading.output_budget import ERROR_BYTES, NOTED_CELLS, OutputBudget, bound_notebook, output_bytes
from autograder.grading.sandbox import SandboxLimits

from helpers.course_paths import ROOT

LIMITS = SandboxLimits()
PER_CELL, PER_NOTEBOOK = LIMITS.output_bytes_per_cell, LIMITS.output_bytes_per_notebook
TEST_MARKS = {"grade": True, "solution": False, "locked": True, "grade_id": "test_x", "points": 1, "schema_version": 3}


def stream(text):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def error(name, message):
    return nbformat.from_dict({"output_type": "error", "ename": name, "evalue": message, "traceback": [f"{name}: {message}"]})


def is_test(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade", False)


def test_a_solved_notebooks_outputs_are_kept_byte_for_byte():
    """Chapter 3's executed solution: nothing is cut, no note is added."""
    notebook = nbformat.read(ROOT / "solutions" / "ch03" / "autodiff.ipynb", as_version=4)
    before = copy.deepcopy(notebook)
    budget = bound_notebook(notebook.cells, LIMITS, {}, is_test)
    assert nbformat.writes(notebook) == nbformat.writes(before) and budget.cut == {}


def test_printed_text_is_cut_where_the_cap_falls():
    budget = OutputBudget(PER_CELL, PER_NOTEBOOK)
    kept = budget.admit(0, stream("y" * 10_000_000))
    assert output_bytes(kept) <= PER_CELL and output_bytes(kept) > PER_CELL - 100
    assert budget.cut[0]["stream"] >= 10_000_000 - PER_CELL


def test_displays_results_and_metadata_that_do_not_fit_are_dropped_whole():
    budget = OutputBudget(PER_CELL, PER_NOTEBOOK)
    heavy = nbformat.v4.new_output("display_data", data={"text/plain": "m"}, metadata={"big": "M" * 20_000_000})
    assert budget.admit(0, heavy) is None and budget.cut[0]["display_data"] > 20_000_000
    results = [nbformat.v4.new_output("execute_result", data={"text/plain": "r" * 8000}, execution_count=1)
               for _ in range(2000)]
    kept = [r for r in (budget.admit(1, r) for r in results) if r is not None]
    assert len(kept) == 2 and sum(map(output_bytes, kept)) <= PER_CELL and budget.cut[1]["execute_result"] > 15_000_000


def test_a_test_cells_first_error_is_kept_shortened_and_a_flood_of_errors_is_not():
    """A 5 MB exception name and message: the error that scores the test cell 0 stays, in at most its cell's
    room; 1,000 more forged errors add nothing."""
    budget = OutputBudget(PER_CELL, PER_NOTEBOOK)
    budget.admit(0, stream("x" * 50_000))                  # the cell is full
    first = budget.admit(0, error("E" * 5_000_000, "v" * 5_000_000), must_keep=True)
    assert first is not None and output_bytes(first) <= ERROR_BYTES and first.ename == "E" * 100
    assert all(budget.admit(0, error("F", "w" * 10_000), must_keep=True) is None for _ in range(1000))


def test_a_display_update_that_does_not_fit_empties_the_display():
    budget = OutputBudget(PER_CELL, PER_NOTEBOOK)
    shown = budget.admit(0, nbformat.v4.new_output("display_data", data={"text/plain": "small"}))
    budget.update(0, 0, shown, {"text/plain": "u" * 20_000_000}, {}, cut_to=1)
    assert shown.data == {} and budget.cut[1]["update"] > 20_000_000
    budget.update(0, 0, shown, {"text/plain": "fits"}, {}, cut_to=1)
    assert shown.data == {"text/plain": "fits"} and budget.total == output_bytes(shown)


def test_the_finished_notebook_holds_at_most_its_cap_and_says_what_was_cut():
    """The grader's own outputs (a judge's verdict quoting a 5 MB name) and 300 cells of 20 kB: the notebook keeps
    its cap, a test cell's error, and a note in the first NOTED_CELLS cells that lost output."""
    cells = [nbformat.v4.new_code_cell("print('x')", outputs=[stream("x" * 19_000)]) for _ in range(300)]
    graded = nbformat.v4.new_code_cell("check()", metadata={"nbgrader": TEST_MARKS},
                                       outputs=[error("JudgeVerdict", "raised " + "E" * 5_000_000)])
    cells.append(graded)
    bound_notebook(cells, LIMITS, {}, is_test)
    notes = [c for c in cells if any("output cut:" in o.get("text", "") for o in c.outputs)]
    kept = sum(output_bytes(o) for c in cells for o in c.outputs if "output cut:" not in o.get("text", ""))
    assert kept <= PER_NOTEBOOK + ERROR_BYTES and len(notes) == NOTED_CELLS
    [verdict] = graded.outputs[:1]
    assert verdict.ename == "JudgeVerdict" and output_bytes(verdict) <= ERROR_BYTES
    assert "bytes of printed text not kept" in json.dumps(notes[0].outputs)
