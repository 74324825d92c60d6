"""How much a student's kernel may put into the notebook: bytes of the JSON each output adds, per cell
and per notebook, whatever the channel (printed text, displays and their updates, results, errors with
their name, message and traceback, and every output's metadata).

Printed text is cut where the cap falls; anything else that does not fit is dropped whole, except a cell's
first error: shortened to ERROR_BYTES at most, it is kept while the notebook has room for it, and in a test
cell, where it is what scores the cell 0, always. What was
cut is counted by kind, and a short note in the cell says so (`cut_note`).
"""
import copy
import json
from collections import Counter

from nbformat import NotebookNode

ERROR_BYTES = 2_000     # a test cell's error past the cap keeps this much: its name and its message's start
NAME_CHARACTERS = 100   # an error's name longer than this is cut: a class name is a few words
NOTED_CELLS = 50        # at most this many cells get a note of what was cut: the notes are bounded too
KINDS = {"stream": "printed text", "display_data": "displays", "execute_result": "results",
         "error": "error text", "update": "display updates"}


def output_bytes(output):
    """What an output costs in the notebook file: the bytes of its JSON, metadata included."""
    return len(json.dumps(output, ensure_ascii=False, separators=(",", ":")).encode())


def trimmed_stream(output, room):
    """The stream output cut to at most `room` bytes, or None when not even its first character fits."""
    trimmed = copy.copy(output)
    trimmed.text = output.text[:max(0, room - output_bytes(dict(output, text="")))]
    while trimmed.text and output_bytes(trimmed) > room:     # escaped or multi-byte characters cost more than one
        excess = output_bytes(trimmed) - room
        trimmed.text = trimmed.text[:max(0, len(trimmed.text) - max(1, excess // 2))]
    return trimmed if trimmed.text else None


def shortened_error(output, room):
    """The error kept in at most `room` bytes (ERROR_BYTES at least): its name cut to NAME_CHARACTERS, its
    message and traceback to what fits. The traceback's last lines say where it was raised: they are kept."""
    room = max(room, ERROR_BYTES)
    short = copy.copy(output)
    short.ename = str(output.get("ename", ""))[:NAME_CHARACTERS]
    short.evalue = str(output.get("evalue", ""))
    short.traceback = [str(line) for line in output.get("traceback", [])[-20:]]
    short.pop("metadata", None)
    while output_bytes(short) > room:
        excess = output_bytes(short) - room
        if short.traceback and sum(map(len, short.traceback)) > len(short.evalue):
            longest = max(range(len(short.traceback)), key=lambda i: len(short.traceback[i]))
            line = short.traceback[longest]
            short.traceback[longest] = line[:max(0, len(line) - max(1, excess))]
            if not short.traceback[longest]:
                del short.traceback[longest]
        else:
            short.evalue = short.evalue[:max(0, len(short.evalue) - max(1, excess))]
    return short


class OutputBudget:
    """The bytes each cell's outputs hold, kept in step with the outputs themselves (`sizes`, one per
    output), and what was cut, per cell and kind. A cell that earns points keeps its error (`must_keep`)."""

    def __init__(self, per_cell, per_notebook):
        self.per_cell, self.per_notebook = per_cell, per_notebook
        self.sizes = {}         # cell index -> [bytes of each of its outputs, in order]
        self.total = 0
        self.cut = {}           # cell index -> Counter(kind -> bytes not kept)
        self.failed = set()     # cells that keep an error: one is enough to score a test cell 0

    def room(self, cell):
        return max(0, min(self.per_cell - sum(self.sizes.get(cell, [])), self.per_notebook - self.total))

    def cut_bytes(self, cell):
        return sum(self.cut.get(cell, Counter()).values())

    def admit(self, cell, output, must_keep=False):
        """The output as it may be kept (whole, a stream cut short, an error shortened), or None; counted.
        A cell's first error is kept, shortened, while the notebook has room for it; a test cell's always."""
        room = self.room(cell)
        text = output.get("text") if output.get("output_type") == "stream" else None
        # A flood's stream is far over the room: its length in characters is all the count of what is cut needs.
        size = len(text) if isinstance(text, str) and len(text) > 2 * room + 1_000 else output_bytes(output)
        if size <= room:
            kept = output
        elif output.get("output_type") == "error" and cell not in self.failed and (
                must_keep or self.per_notebook - self.total >= ERROR_BYTES):
            kept = shortened_error(output, room)
        elif output.get("output_type") == "stream":
            kept = trimmed_stream(output, room)
        else:
            kept = None
        kept_size = output_bytes(kept) if kept is not None else 0
        if kept_size < size:
            self.record_cut(cell, output.get("output_type"), size - kept_size)
        if kept is not None:
            if kept.get("output_type") == "error":
                self.failed.add(cell)
            self.sizes.setdefault(cell, []).append(kept_size)
            self.total += kept_size
        return kept

    def record_cut(self, cell, kind, size):
        self.cut.setdefault(cell, Counter())[kind] += size

    def cleared(self, cell):
        """The cell's outputs were cleared (IPython's clear_output): what they held is free again."""
        self.total -= sum(self.sizes.pop(cell, []))
        self.failed.discard(cell)

    def update(self, cell, index, output, data, metadata, cut_to):
        """A display update (`display_handle.update`) to output `index` of `cell`: applied when the new data fits,
        else the display is emptied; what did not fit is counted as cut in cell `cut_to`, the cell that sent it."""
        old = self.sizes[cell][index]
        new = output_bytes(dict(output, data=data, metadata=metadata))
        if new - old <= self.room(cell):
            output["data"], output["metadata"] = data, metadata
        else:
            output["data"], output["metadata"] = {}, {}
            self.record_cut(cut_to, "update", new)
        self.sizes[cell][index] = output_bytes(output)
        self.total += self.sizes[cell][index] - old


def cut_note(cut, limits):
    """The stream output that tells a cell's reader what was not kept, by kind."""
    kinds = ", ".join(f"{size:,} bytes of {KINDS.get(kind, kind)}" for kind, size in sorted(cut.items()) if size)
    return NotebookNode(output_type="stream", name="stdout", text=(
        f"\n… output cut: {kinds} not kept (at most {limits.output_bytes_per_cell:,} bytes of output per cell, "
        f"{limits.output_bytes_per_notebook:,} per notebook)\n"))


def bound_notebook(cells, limits, cut, must_keep):
    """Every output of every cell put through one budget, in order, then a note in each cell that lost some
    (the first NOTED_CELLS of them): the notebook's outputs stay under the caps whoever added them. `cut`:
    {cell index: Counter} of what was already cut while the cells ran; `must_keep(cell)`: its error stays."""
    budget = OutputBudget(limits.output_bytes_per_cell, limits.output_bytes_per_notebook)
    for index, counter in cut.items():
        budget.cut[index] = Counter(counter)
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        kept = [budget.admit(index, output, must_keep(cell)) for output in cell.get("outputs", [])]
        cell.outputs = [output for output in kept if output is not None]
    noted = [index for index in sorted(budget.cut) if budget.cut_bytes(index) and index < len(cells)
             and cells[index].get("cell_type") == "code"]
    for index in noted[:NOTED_CELLS]:
        cells[index].outputs.append(cut_note(budget.cut[index], limits))
    return budget
