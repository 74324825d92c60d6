"""The course's own nbgrader preprocessors."""
import os
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import SaveAutoGrades as NbgraderSaveAutoGrades

from autograder.preprocessors import CoalesceStreams, SaveAutoGrades


def test_split_prints_are_merged_and_other_outputs_kept_in_order():
    cell = new_code_cell("print('a'); print('b')", outputs=[
        new_output("stream", name="stdout", text="✔ a"), new_output("stream", name="stdout", text="\n"),
        new_output("stream", name="stderr", text="warning\n"),
        new_output("display_data", data={"text/plain": "<Figure>"}),
        new_output("stream", name="stdout", text="b\n")])
    notebook, _ = CoalesceStreams()(new_notebook(cells=[cell]), {})      # as nbconvert calls it: enabled
    outputs = notebook.cells[0].outputs
    assert [(o.output_type, o.get("name"), o.get("text")) for o in outputs] == [
        ("stream", "stdout", "✔ a\n"), ("stream", "stderr", "warning\n"), ("display_data", None, None),
        ("stream", "stdout", "b\n")]
    nbformat.validate(notebook)


def submitted_gradebook(path):
    """A gradebook with one submitted notebook: three grade cells (one a grader scored), two solution cells."""
    gradebook = Gradebook(f"sqlite:///{path}")
    gradebook.add_assignment("ch03")
    gradebook.add_notebook("autodiff", "ch03")
    for name in ("test_right", "test_wrong", "test_reviewed"):
        gradebook.add_grade_cell(name, "autodiff", "ch03", max_score=2, cell_type="code")
    for name in ("kept", "answered"):
        gradebook.add_solution_cell(name, "autodiff", "ch03")
    gradebook.add_student("ada")
    gradebook.add_submission("ch03", "ada")
    grade = gradebook.find_grade("test_reviewed", "autodiff", "ch03", "ada")
    grade.manual_score = 1
    gradebook.db.commit()
    return gradebook


def graded_notebook():
    def cell(source, grade_id, grade=False, solution=False, outputs=()):
        made = new_code_cell(source, outputs=list(outputs))
        made.metadata["nbgrader"] = {"grade": grade, "solution": solution, "locked": not solution,
                                     "grade_id": grade_id, "schema_version": 3, **({"points": 2} if grade else {})}
        made.metadata["nbgrader"]["checksum"] = utils.compute_checksum(made)
        return made
    answered = cell("# YOUR CODE HERE", "answered", solution=True)
    answered.source = "x = 1"                          # changed since release: a response
    wrong = new_output("error", ename="AssertionError", evalue="no", traceback=[])
    return new_notebook(cells=[cell("# YOUR CODE HERE", "kept", solution=True), answered,
                               cell("assert True", "test_right", grade=True),
                               cell("assert False", "test_wrong", grade=True, outputs=[wrong]),
                               cell("assert True", "test_reviewed", grade=True)])


def test_save_autogrades_writes_what_nbgraders_writes(tmp_path, monkeypatch):
    """The course's SaveAutoGrades (one transaction) leaves every field nbgrader's leaves (one commit per cell)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")   # alembic
    fields = {}
    for name, preprocessor in (("nbgrader", NbgraderSaveAutoGrades), ("course", SaveAutoGrades)):
        path = tmp_path / f"{name}.db"
        submitted_gradebook(path).close()
        resources = {"nbgrader": {"notebook": "autodiff", "assignment": "ch03", "student": "ada",
                                  "db_url": f"sqlite:///{path}"}}
        preprocessor().preprocess(graded_notebook(), resources)
        with Gradebook(f"sqlite:///{path}") as gradebook:
            notebook = gradebook.find_submission_notebook("autodiff", "ch03", "ada")
            fields[name] = ({g.name: (g.auto_score, g.manual_score, g.needs_manual_grade) for g in notebook.grades},
                            {c.name: c.auto_comment for c in notebook.comments})
    assert fields["course"] == fields["nbgrader"]
    assert fields["course"] == ({"test_right": (2, None, False), "test_wrong": (0, None, False),
                                 "test_reviewed": (2, 1, True)}, {"kept": "No response.", "answered": None})
