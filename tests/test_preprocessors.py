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


def tamperings():
    """Chapter 3's release notebook as submitted, and copies changed in each way OverwriteCells repairs."""
    import copy

    from autograder import cell_marks
    from helpers.course_paths import ROOT
    release = nbformat.read(ROOT / "release" / "ch03" / "autodiff.ipynb", as_version=4)
    tests = [i for i, c in enumerate(release.cells) if cell_marks.is_test_cell(c)]
    answers = [i for i, c in enumerate(release.cells) if c.metadata.get("nbgrader", {}).get("solution")]
    locked_text = next(i for i, c in enumerate(release.cells) if c.cell_type == "markdown"
                       and c.metadata.get("nbgrader", {}).get("locked"))

    def changed(change):
        notebook = copy.deepcopy(release)
        change(notebook.cells)
        return notebook
    yield "as released", release
    yield "hidden tests deleted", changed(lambda cells: setattr(cells[tests[0]], "source", "assert True"))
    yield "points raised", changed(lambda cells: cells[tests[1]].metadata.nbgrader.update(points=99))
    yield "unlocked", changed(lambda cells: cells[tests[2]].metadata.nbgrader.update(locked=False))
    yield "text rewritten", changed(lambda cells: setattr(cells[locked_text], "source", "nothing to see"))
    yield "made markdown", changed(lambda cells: cells.__setitem__(tests[3], nbformat.v4.new_markdown_cell(
        "x", metadata=cells[tests[3]].metadata)))
    yield "unknown id", changed(lambda cells: cells[answers[0]].metadata.nbgrader.update(grade_id="made-up"))
    yield "checksum forged", changed(lambda cells: cells[answers[1]].metadata.nbgrader.update(checksum="0" * 32))


def test_overwrite_cells_read_once_repairs_what_nbgraders_own_does(tmp_path):
    """The same notebook out, cell for cell, as nbgrader's OverwriteCells, on every way a submission can
    tamper with the cells it restores (or the same error); only where the source cells are read from differs."""
    import hashlib
    import shutil

    from nbgrader.preprocessors import OverwriteCells

    from autograder import grading
    from autograder.course import Course
    from autograder.grading.preprocessors import OverwriteCellsReadOnce
    from helpers.course_paths import ROOT
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy2(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "source" / "ch03", tmp_path / "source" / "ch03")
    course = Course(tmp_path)
    grading.register(course, course.chapter("ch03"))
    resources = {"nbgrader": {"notebook": "autodiff", "assignment": "ch03",
                              "db_url": f"sqlite:///{tmp_path / 'gradebook.db'}"}}

    def repaired(step, notebook):
        try:
            out, _ = step(add_missing_cells=True).preprocess(nbformat.from_dict(notebook), resources)
        except Exception as error:          # nbgrader's own fails on a made-up id (RepairNotebook runs first)
            return [f"{type(error).__name__}: {error}"]
        return [hashlib.sha256(nbformat.writes(nbformat.from_dict({"cells": [c], "metadata": {}, "nbformat": 4,
                                                                     "nbformat_minor": 5})).encode()).hexdigest()
                for c in out.cells]
    for name, notebook in tamperings():
        ours, theirs = repaired(OverwriteCellsReadOnce, notebook), repaired(OverwriteCells, notebook)
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
        assert len(ours) == len(theirs) and first is None, f"{name}: cell {first} differs ({len(ours)}, {len(theirs)} cells)"
