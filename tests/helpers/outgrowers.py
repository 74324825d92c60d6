"""Submissions that try to outgrow their bounds, for every grading path's tests: cells of the student's own that
send megabytes through each output channel other than print, and notebooks whose metadata is nested hundreds or
a hundred thousand levels deep. Their exercises are solved: each must keep full marks."""
import copy
import json

import nbformat

# Each a code cell of the student's own, sent after the first solution cell; each prints a word once it is done.
CHANNELS = {
    "display": "from IPython.display import display\n_handle = display({'text/plain': 'small'}, raw=True, display_id=True)",
    "display update": "_handle.update({'text/plain': 'u' * 20_000_000}, raw=True)\nprint('UPDATED')",
    # 1.6 MB, eight times a notebook's cap, in 200 results: what the cap does to each one is the same at any count,
    # and the cell must finish well within the tests' 6 s cell timeout on a busy machine (2,000 did not, always)
    "results": "import sys\nfor _ in range(200):\n    sys.displayhook('r' * 8000)\nprint('HOOKED')",
    "output metadata": "from IPython.display import display\n"
                       "display({'text/plain': 'm'}, metadata={'big': 'M' * 20_000_000}, raw=True)\nprint('METADATA')",
    "widget state": "from comm import create_comm\n_comm = create_comm(target_name='jupyter.widget', data={'state': "
                    "{'_model_name': 'Ballast', '_model_module': 'ballast', 'big': 'W' * 20_000_000}, "
                    "'buffer_paths': []})\nprint('WIDGET')",
    "error name": "raise type('E' * 5_000_000, (Exception,), {})('v' * 5_000_000)",
}
# What each cell's note says was cut, by channel (output_budget.KINDS).
CUT_KINDS = {"display update": "display updates", "results": "results", "output metadata": "displays",
             "error name": "error text"}
DEEP = 900          # levels of metadata nbformat's reader cannot follow: repaired
TOO_DEEP = 100_000  # levels no JSON reader of Python follows: refused, alone


def with_cells_after(notebook, cell_id, codes):
    """A copy of `notebook` with new code cells of the student's own after solution cell `cell_id`."""
    notebook = copy.deepcopy(notebook)
    index = next(i for i, c in enumerate(notebook.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == cell_id)
    notebook.cells[index + 1:index + 1] = [nbformat.v4.new_code_cell(code) for code in codes]
    return notebook


def outgrower(solved, cell_id):
    """The solved notebook, with a cell per channel of CHANNELS after solution cell `cell_id`."""
    return with_cells_after(solved, cell_id, CHANNELS.values())


def nested(depth):
    """JSON text of an object nested `depth` levels deep (json.dumps itself would recurse too deep)."""
    return '{"a": ' * depth + "{}" + "}" * depth


def deeply_nested(notebook, depth):
    """The notebook as text, its metadata and its first cell's metadata each holding `depth` levels of nesting
    beside what nbgrader and Jupyter keep there."""
    data = json.loads(nbformat.writes(notebook))
    data["metadata"]["deep"] = "DEEP-NOTEBOOK"
    data["cells"][0]["metadata"]["deep"] = "DEEP-CELL"
    text = json.dumps(data)
    return text.replace('"DEEP-NOTEBOOK"', nested(depth)).replace('"DEEP-CELL"', nested(depth))
