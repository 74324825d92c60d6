"""Small preprocessors the course adds to nbgrader's own pipelines (see course_config.configure_nbgrader).

* CoalesceStreams: one stdout output per cell, however the kernel happened to flush it, so the
  executed solutions/ notebooks are the same bytes on every build.
* ShortTracebacks: an error in the feedback shows its name and teaching message only. IPython's
  tracebacks quote source lines, and in a graded test cell those can be hidden tests; nbgrader's
  ClearHiddenTests, run before it, removes the hidden region from the cells' source.
* CheckCellMetadata: nbgrader's, validating against a schema checked once instead of once per cell.
"""
import traceback

import jsonschema
from nbconvert.preprocessors import CoalesceStreamsPreprocessor
from nbgrader import preprocessors as nbgrader_preprocessors
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import SchemaTooNewError, SchemaTooOldError
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool


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



class CellMetadataValidator(MetadataValidator):
    """nbgrader's metadata validator. Its `jsonschema.validate` call checks the schema itself against
    jsonschema's meta-schema for every cell: 0.13 s of a chapter 3 submission's grading. Here the
    schema is checked once per process; each cell meets the same checks and the same error."""

    _validators = {}        # schema version -> jsonschema validator of that schema, checked

    def validate_cell(self, cell):
        if "nbgrader" not in cell.metadata:
            return
        version = cell.metadata["nbgrader"].get("schema_version", 0)
        if version < self.schema_version:
            raise SchemaTooOldError(f"Outdated schema version: {version} (expected {self.schema_version})",
                                    version, self.schema_version)
        if version > self.schema_version:
            raise SchemaTooNewError(f"Schema version is too new: {version} (expected {self.schema_version})",
                                    version, self.schema_version)
        validator = self._validators.get(self.schema_version)
        if validator is None:
            kind = jsonschema.validators.validator_for(self.schema)
            kind.check_schema(self.schema)
            validator = self._validators[self.schema_version] = kind(self.schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(cell.metadata["nbgrader"]))
        if error is not None:
            raise error


class CheckCellMetadata(nbgrader_preprocessors.CheckCellMetadata):
    """nbgrader's CheckCellMetadata (unique grade ids, valid nbgrader metadata), with CellMetadataValidator."""

    def preprocess(self, nb, resources):
        try:
            CellMetadataValidator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            message = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(message)
            raise ValidationError(message) from None
        return nb, resources
