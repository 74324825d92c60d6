"""nbgrader preprocessors of the course's own, plugged in through course_config.configure_nbgrader."""
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool


class CoalesceStreams(Preprocessor):
    """Merge consecutive stdout (or stderr) outputs of a cell into one.

    How a kernel cuts printed text into messages depends on timing: on a busy machine one `print`
    can arrive as two outputs, its text and then its newline. Merged, the executed solutions are the
    same bytes on every build.
    """

    enabled = Bool(True, help="nbconvert's preprocessors are off unless enabled").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        merged = []
        for output in cell.outputs:
            previous = merged[-1] if merged else None
            if (output.output_type == "stream" and previous is not None
                    and previous.output_type == "stream" and previous.name == output.name):
                previous.text += output.text
            else:
                merged.append(output)
        cell.outputs = merged
        return cell, resources
