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


def corruptions():
    """A source notebook of chapter 3, and copies each broken in one way nbgrader's check must refuse."""
    import copy

    from autograder import cell_marks
    from helpers.course_paths import ROOT
    source = nbformat.read(ROOT / "source" / "ch03" / "autodiff.ipynb", as_version=4)
    graded = [i for i, c in enumerate(source.cells) if cell_marks.is_graded(c)]

    def broken(change):
        notebook = copy.deepcopy(source)
        change(notebook.cells)
        return notebook
    yield "intact", source
    yield "points not a number", broken(lambda cells: cells[graded[0]].metadata.nbgrader.update(points="many"))
    yield "no points", broken(lambda cells: cells[graded[0]].metadata.nbgrader.pop("points"))
    yield "duplicate id", broken(lambda cells: cells[graded[1]].metadata.nbgrader.update(
        grade_id=cells[graded[0]].metadata.nbgrader.grade_id))
    yield "old schema", broken(lambda cells: cells[graded[0]].metadata.nbgrader.update(schema_version=1))
    yield "new schema", broken(lambda cells: cells[graded[0]].metadata.nbgrader.update(schema_version=99))
    yield "unknown key type", broken(lambda cells: cells[graded[0]].metadata.nbgrader.update(locked="yes"))


def test_the_schema_once_check_refuses_and_passes_what_nbgraders_own_does():
    """Same verdict, same error type and message as nbgrader's CheckCellMetadata, on real cells."""
    from nbgrader.preprocessors import CheckCellMetadata

    from autograder.grading.preprocessors import CheckCellMetadataSchemaOnce

    def verdict(check, notebook):
        try:
            check().preprocess(notebook, {})
        except Exception as error:             # both raise ValidationError (or a schema version error)
            return type(error).__name__, str(error)
        return None
    seen = {}
    for name, notebook in corruptions():
        seen[name] = verdict(CheckCellMetadataSchemaOnce, notebook)
        assert seen[name] == verdict(CheckCellMetadata, notebook), name
    assert seen["intact"] is None and all(seen[name] for name in seen if name != "intact"), seen
