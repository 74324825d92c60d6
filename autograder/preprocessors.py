"""Small preprocessors the course adds to nbgrader's own pipelines (see course_config.configure_nbgrader).

* CoalesceStreams: one stdout output per cell, however the kernel happened to flush it, so the
  executed solutions/ notebooks are the same bytes on every build.
* ShortTracebacks: an error in the feedback shows its name and teaching message only. IPython's
  tracebacks quote source lines, and in a graded test cell those can be hidden tests; nbgrader's
  ClearHiddenTests, run before it, removes the hidden region from the cells' source.
"""
from nbconvert.preprocessors import CoalesceStreamsPreprocessor
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
