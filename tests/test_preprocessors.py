"""The course's own nbgrader preprocessors."""
import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from autograder.grading.preprocessors import CoalesceStreams


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
