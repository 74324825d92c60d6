"""Small preprocessors the course adds to nbgrader's own pipelines (see course_config.configure_nbgrader).

* CoalesceStreams: one stdout output per cell, however the kernel happened to flush it, so the
  executed solutions/ notebooks are the same bytes on every build.
* ShortTracebacks: an error in the feedback shows its name and teaching message only. IPython's
  tracebacks quote source lines, and in a graded test cell those can be hidden tests; nbgrader's
  ClearHiddenTests, run before it, removes the hidden region from the cells' source.
* UseCourseChapters: every chapter is graded on its own, so a submission's USE_MY_LIBRARY switch
  (autograder/student/my_library.py) is set back to False before it runs, and the cell says so.
* EnvironmentExecute: nbgrader's Execute, its kernels started with the course's variables
  (course_config.KERNEL_ENVIRONMENT), handed to each kernel, never written into nbgrader's own process.
* CheckCellMetadataSchemaOnce: nbgrader's metadata check, with its JSON schema checked once per
  process instead of once per cell.
* OverwriteCellsReadOnce: nbgrader's OverwriteCells, the notebook's source cells read from the gradebook
  in one go instead of one query per cell.
* SaveAutoGradesAtOnce: nbgrader's SaveAutoGrades, the submission's grade and comment rows read in one
  query each and written in one commit, instead of a query and a commit per cell.
"""
import os
import re
import traceback

import jsonschema
from nbclient.util import run_sync
from nbconvert.preprocessors import CoalesceStreamsPreprocessor
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.api import Comment, Grade, Gradebook, MissingEntry
from nbgrader.preprocessors import CheckCellMetadata, Execute, NbGraderPreprocessor, OverwriteCells, SaveAutoGrades
from sqlalchemy.orm import joinedload
from traitlets import Bool, Dict, Unicode


class CoalesceStreams(CoalesceStreamsPreprocessor):
    """nbconvert's stream merger, switched on."""

    enabled = Bool(True)


class ShortTracebacks(NbGraderPreprocessor):
    """Replace every error's traceback by `<name>: <message>`: what failed and why, not the test's code."""

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources


GRADED_SWITCH = "USE_MY_LIBRARY = False  # set by grading: every chapter is graded with the course's earlier chapters"
SWITCH_LINE = re.compile(r"^([ \t]*)USE_MY_LIBRARY\s*=.*$", re.MULTILINE)


class UseCourseChapters(NbGraderPreprocessor):
    """Grade on the course's earlier chapters: every `USE_MY_LIBRARY = ...` line becomes `= False`.

    The switch cell is the student's to edit (it has no nbgrader metadata, so OverwriteCells keeps it);
    this puts the course's choice back before the kernel starts.
    """

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and "USE_MY_LIBRARY" in cell.source:
            cell.source = SWITCH_LINE.sub(lambda m: m.group(1) + GRADED_SWITCH, cell.source)
        return cell, resources


class EnvironmentExecute(Execute):
    """Execute whose kernels start with `kernel_environment` on top of the grader's environment.

    The kernel's environment is passed to the kernel it starts, so loading the configuration changes
    no process's environment. The sandboxed kernels (SandboxedExecute) get only these variables and the
    sandbox's own, none of the grader's.
    """

    kernel_environment = Dict(value_trait=Unicode(), help=(
        "Environment variables every kernel starts with: course_config.KERNEL_ENVIRONMENT (no progress "
        "bars, one BLAS thread).")).tag(config=True)

    def kernel_variables(self):
        """The variables this run's kernels start with (a subclass may add its own for the run)."""
        return dict(self.kernel_environment)

    async def async_start_new_kernel(self, **kwargs):
        kwargs.setdefault("env", {**os.environ, **self.kernel_variables()})
        await super().async_start_new_kernel(**kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)


_validators: dict[int, jsonschema.protocols.Validator] = {}     # schema version -> its validator


def _metadata_schema_validator(version: int, schema: dict) -> jsonschema.protocols.Validator:
    """A validator for nbgrader's cell metadata schema of this version, the schema itself checked once."""
    if version not in _validators:
        kind = jsonschema.validators.validator_for(schema)
        kind.check_schema(schema)
        _validators[version] = kind(schema)
    return _validators[version]


class _SchemaCheckedOnce(BaseMetadataValidator):
    """BaseMetadataValidator.validate_cell, the same checks and errors, with a validator made once.
    (`jsonschema.validate` checks the schema before every instance: 85% of the step's time.)"""

    def validate_cell(self, cell) -> None:
        if "nbgrader" not in cell.metadata:
            return
        if cell.metadata["nbgrader"].get("schema_version", 0) != self.schema_version:
            super().validate_cell(cell)          # nbgrader's own error: the schema is too old or too new
            return
        validator = _metadata_schema_validator(self.schema_version, self.schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(cell.metadata["nbgrader"]))
        if error is not None:
            raise error


class _FastMetadataValidator(MetadataValidator, _SchemaCheckedOnce):
    """nbgrader's current MetadataValidator, whose base check (its super()) is _SchemaCheckedOnce's."""


class CheckCellMetadataSchemaOnce(CheckCellMetadata):
    """nbgrader's CheckCellMetadata (unique grade ids, points, schema), run twice per submission by
    autograde, with the schema checked once per process: about 0.1 s less per chapter 3 submission."""

    def preprocess(self, nb, resources):
        try:
            _FastMetadataValidator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            message = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(message)
            raise ValidationError(message) from None
        return nb, resources


class _SourceCells:
    """The gradebook as OverwriteCells reads it, for one notebook: the two lookups it makes for every cell
    answered from that notebook's rows, read once; everything else is the gradebook's own."""

    def __init__(self, gradebook, notebook_id, assignment_id):
        self._gradebook = gradebook
        notebook = gradebook.find_notebook(notebook_id, assignment_id)
        self._source = {cell.name: cell for cell in notebook.source_cells}
        self._graded = {cell.name: cell for cell in [*notebook.task_cells, *notebook.grade_cells]}  # a grade cell wins

    def __getattr__(self, name):
        return getattr(self._gradebook, name)

    def find_source_cell(self, name, notebook_id, assignment_id):
        if name not in self._source:
            raise MissingEntry(f"No such source cell: {assignment_id}/{notebook_id}/{name}")
        return self._source[name]

    def find_graded_cell(self, name, notebook_id, assignment_id):
        if name not in self._graded:
            raise MissingEntry(f"No such grade cell: {assignment_id}/{notebook_id}/{name}")
        return self._graded[name]


class OverwriteCellsReadOnce(OverwriteCells):
    """nbgrader's OverwriteCells, unchanged but for where its per-cell lookups are answered: a chapter 3
    notebook has some 140 cells that nbgrader knows, and one SQL query each cost about 70 ms a submission."""

    def preprocess_cell(self, cell, resources, cell_index):
        if not isinstance(self.gradebook, _SourceCells):      # the Gradebook its preprocess just opened
            self.gradebook = _SourceCells(self.gradebook, self.notebook_id, self.assignment_id)
        return super().preprocess_cell(cell, resources, cell_index)


class SaveAutoGradesAtOnce(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, unchanged but for its traffic with the gradebook: it looked up and committed
    each cell's row on its own (about 140 queries and 140 commits for a chapter 3 submission). Here the
    rows are read once and written in one commit at the end, so a submission's grades land all together."""

    def preprocess(self, nb, resources):
        self.notebook_id = resources["nbgrader"]["notebook"]
        self.assignment_id = resources["nbgrader"]["assignment"]
        self.student_id = resources["nbgrader"]["student"]
        self.db_url = resources["nbgrader"]["db_url"]
        gradebook = Gradebook(self.db_url)
        with gradebook:
            self.gradebook = _SubmissionRows(gradebook, self.notebook_id, self.assignment_id, self.student_id)
            nb, resources = NbGraderPreprocessor.preprocess(self, nb, resources)   # SaveAutoGrades' per-cell steps
            gradebook.db.commit()
        return nb, resources


class _SubmissionRows:
    """The gradebook as SaveAutoGrades writes it, for one submitted notebook: the grade and comment it finds
    for every cell answered from rows read once, and the commit it makes after every cell left to the end."""

    def __init__(self, gradebook, notebook_id, assignment_id, student_id):
        self._gradebook = gradebook
        submission = gradebook.find_submission_notebook(notebook_id, assignment_id, student_id)
        self._grades = _rows_by_cell_name(gradebook.db, Grade, submission.id)
        self._comments = _rows_by_cell_name(gradebook.db, Comment, submission.id)
        self.db = _CommitLater(gradebook.db)

    def __getattr__(self, name):
        return getattr(self._gradebook, name)

    def find_grade(self, name, notebook_id, assignment_id, student_id):
        if name not in self._grades:
            raise MissingEntry(f"No such grade: {assignment_id}/{notebook_id}/{name} for {student_id}")
        return self._grades[name]

    def find_comment(self, name, notebook_id, assignment_id, student_id):
        if name not in self._comments:
            raise MissingEntry(f"No such taskcomment: {assignment_id}/{notebook_id}/{name} for {student_id}")
        return self._comments[name]


def _rows_by_cell_name(db, row_class, submission_id):
    """{cell name: row} of a submitted notebook's grades or comments (cell names are unique in a notebook:
    nbgrader's metadata check refuses a notebook that repeats one)."""
    rows = db.query(row_class).filter(row_class.notebook_id == submission_id).options(joinedload(row_class.cell))
    return {row.cell.name: row for row in rows}


class _CommitLater:
    """A database session whose commit does nothing: SaveAutoGradesAtOnce commits the real one once."""

    def __init__(self, session):
        self._session = session

    def __getattr__(self, name):
        return getattr(self._session, name)

    def commit(self):
        pass
