"""Notebook repair before grading: a submission is rebuilt on the assignment's own skeleton, so a
student who duplicated, deleted, reordered or stripped cells is graded as if the notebook were intact.

`RepairNotebook` runs first in nbgrader's sanitize step (course_config.configure_nbgrader). The skeleton
is the source notebook put through nbgrader's own release preprocessors, so it holds no solution; every
cell comes from it, in its order and with its metadata, and only solution cells take the student's code
(cell_matching decides which cell is which). Cells the student added stay, without nbgrader metadata.
`SubmissionExporter` reads the file for it: a notebook that is JSON with a cells list but not valid
nbformat is salvaged instead of failing the student, and metadata nested deeper than nbformat's reader can
follow is dropped (`without_deep_metadata`), nbgrader's own marks kept.
"""
import copy
import io
import json
import os
import re
from functools import lru_cache

import nbformat
from nbconvert.exporters import NotebookExporter
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import (
    ClearHiddenTests,
    ClearMarkScheme,
    ClearSolutions,
    ComputeChecksums,
    LockCells,
    NbGraderPreprocessor,
)
from traitlets import Integer, Unicode

from autograder import cell_marks
from autograder.grading.intake import NotRegular, read_regular
from autograder.grading.cell_matching import Rule, SkeletonCell, StudentCell, plan
from autograder.grading.repair_log import Repair, RepairKind, record_student_repairs

NBGRADER_FIELDS = ("grade", "solution", "locked", "points", "task")   # what decides how a cell is graded
# Levels of nesting a submission's metadata, outputs or attachments may hold. nbformat's reader and validator
# recurse once per level (and more), so 900 levels overflow Python's stack; an editor's metadata is under 10
# deep. Deeper parts are dropped before reading: grading reads nothing of them but nbgrader's marks.
MAX_NESTING = 64
RULE_KINDS = {Rule.CELL_ID: RepairKind.MATCHED_BY_ID, Rule.CONTENT: RepairKind.MATCHED_BY_CONTENT,
              Rule.POSITION: RepairKind.MATCHED_BY_POSITION}


class UnreadableSubmission(ValueError):
    """The submitted file cannot be read as a notebook at all; nbgrader fails this one student."""


class RepairNotebook(NbGraderPreprocessor):
    """Rebuild the submitted notebook on the source notebook's release skeleton, and log each repair."""

    ledger_directory = Unicode(
        "grading_ledger", help="Folder (under the course root) of repairs/<chapter>/<student>.csv; '' writes none."
    ).tag(config=True)
    max_cell_characters = Integer(
        1_000_000,
        help="A student cell longer than this is replaced by a failing stub instead of being run.",
    ).tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        self.coursedir = CourseDirectory(config=self.config)
        self.student, self.chapter, self.notebook = info["student"], info["assignment"], info["notebook"]
        read = resources.get("babygrad", {})
        self.repairs = [self._repair(RepairKind.UNREADABLE_NOTEBOOK, "", problem) for problem in read.get("read_problems", [])]
        self.repairs += [self._repair(RepairKind.DEEP_METADATA_DROPPED, cell, detail)
                         for cell, detail in read.get("dropped_deep", [])]
        skeleton = release_skeleton(self._source_path(), self.config)
        cells = student_cells(nb)
        matching = plan(skeleton_cells(skeleton), cells)
        repaired = nbformat.v4.new_notebook(metadata=copy.deepcopy(skeleton.metadata))
        repaired.nbformat_minor = skeleton.nbformat_minor
        repaired.cells = self._rebuild(skeleton, cells, matching)
        self._check_kernelspec(nb, skeleton)
        for repair in self.repairs:
            self.log.warning("Repair for %s", repair.describe())
        resources.setdefault("babygrad", {})["repairs"] = [r.as_row() for r in self.repairs]
        if self.ledger_directory:
            ledger = os.path.join(self.coursedir.root, self.ledger_directory)
            record_student_repairs(ledger, self.chapter, self.student, self.repairs)
        return repaired, resources

    def _source_path(self):
        folder = self.coursedir.format_path(self.coursedir.source_directory, ".", self.chapter)
        return os.path.join(folder, f"{self.notebook}.ipynb")

    def _rebuild(self, skeleton, cells, matching):
        taken_ids = {c.get("id") for c in skeleton.cells}
        rebuilt = self._added(cells, matching.added.get(-1, []), taken_ids)
        for index, template in enumerate(skeleton.cells):
            name = _name(template)
            cell = copy.deepcopy(template)
            match = matching.matches.get(index)
            theirs = cells[match.student] if match else None
            if match is None:
                kind = RepairKind.MISSING_SOLUTION if _is_solution(template) else RepairKind.MISSING_CELL
                self.repairs.append(self._repair(kind, name, "not found in the submission"))
            else:
                self._note_match(template, theirs, match, index in matching.moved)
            if theirs is not None and _is_solution(template):
                cell.source = self._capped(theirs.source, name)
            rebuilt.append(cell)
            rebuilt.extend(self._added(cells, matching.added.get(index, []), taken_ids))
        for duplicate in matching.duplicates:
            self.repairs.append(self._repair(
                RepairKind.DUPLICATE_DROPPED, _name(skeleton.cells[duplicate.skeleton]),
                f"submitted cell {duplicate.student} dropped, cell {duplicate.kept} kept"))
        return rebuilt

    def _note_match(self, template, theirs, match, moved):
        name = _name(template)
        where = f"submitted cell {theirs.index}"
        if match.rule != Rule.GRADE_ID:
            if template.metadata.get("nbgrader"):   # a plain cell (the USE_MY_LIBRARY switch) has none to miss
                self.repairs.append(self._repair(RULE_KINDS[match.rule], name, f"{where}: nbgrader metadata missing"))
        else:
            ours = cell_marks.marks(template)
            changed = [f for f in NBGRADER_FIELDS if theirs.nbgrader.get(f) != ours.get(f)]
            if changed:
                self.repairs.append(self._repair(RepairKind.METADATA_RESTORED, name, f"{where}: {', '.join(changed)}"))
        if theirs.cell_type != template.cell_type:
            self.repairs.append(self._repair(
                RepairKind.CELL_TYPE_RESTORED, name, f"{where} was {theirs.cell_type}, now {template.cell_type}"))
        if moved:
            self.repairs.append(self._repair(RepairKind.MOVED, name, f"{where} was out of order"))

    def _added(self, cells, indices, taken_ids):
        """The student's own cells: kept as they wrote them, with no nbgrader metadata (no points to claim)."""
        added = []
        for i in indices:
            theirs = cells[i]
            if theirs.nbgrader:
                self.repairs.append(self._repair(RepairKind.FOREIGN_METADATA_STRIPPED, theirs.grade_id or "",
                                                 f"submitted cell {i} matches no cell of the assignment"))
            source = self._capped(theirs.source, f"added cell {i}")
            make = nbformat.v4.new_markdown_cell if theirs.cell_type == "markdown" else nbformat.v4.new_code_cell
            cell = make(source)
            if theirs.cell_id and theirs.cell_id not in taken_ids and _valid_id(theirs.cell_id):
                cell.id = theirs.cell_id
            taken_ids.add(cell.id)
            added.append(cell)
        return added

    def _capped(self, source, name):
        """A cell over the limit is not run: a stub says why. Truncating it would only make a syntax
        error, and keeping it would copy megabytes into every autograded notebook and feedback page."""
        if len(source) <= self.max_cell_characters:
            return source
        self.repairs.append(self._repair(RepairKind.CELL_TOO_LARGE, name,
                                         f"{len(source):,} characters, over the limit of {self.max_cell_characters:,}"))
        return (f"# This cell held {len(source):,} characters, over the course's limit of "
                f"{self.max_cell_characters:,}: it was not run.\n"
                f"raise RuntimeError('cell too large to grade ({len(source):,} characters)')")

    def _check_kernelspec(self, nb, skeleton):
        metadata = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
        theirs, ours = metadata.get("kernelspec"), skeleton.metadata.get("kernelspec")
        if ours and theirs != ours:
            self.repairs.append(self._repair(RepairKind.KERNELSPEC_RESTORED, "", f"was {json.dumps(theirs)[:200]}"))

    def _repair(self, kind, cell, detail):
        return Repair(self.student, self.chapter, self.notebook, kind, cell, detail)


class SubmissionExporter(NotebookExporter):
    """nbgrader's notebook exporter, reading submissions leniently (see read_submission), and only from a
    regular file: a notebook that is a link or a FIFO is refused, never followed or waited on."""

    def from_filename(self, filename, resources=None, **kw):
        try:
            data = read_regular(filename)
        except NotRegular as error:
            raise UnreadableSubmission(f"{os.path.basename(filename)} {error.strerror}; it cannot be graded") from None
        resources = resources if resources is not None else {}
        resources.setdefault("metadata", {})
        resources["metadata"]["name"] = os.path.splitext(os.path.basename(filename))[0]
        resources["metadata"]["path"] = os.path.dirname(filename)
        return self.from_file(io.StringIO(data.decode("utf-8", errors="replace")), resources=resources, **kw)

    def from_file(self, file_stream, resources=None, **kw):
        notebook, problems, dropped = read_submission(file_stream.read())
        resources = resources if resources is not None else {}
        resources.setdefault("babygrad", {}).update(read_problems=problems, dropped_deep=dropped)
        return self.from_notebook_node(notebook, resources, **kw)


def read_submission(text):
    """(notebook, problems, dropped): nbformat's reading when it succeeds; else, for JSON with a `cells` list,
    a bare notebook around those cells for RepairNotebook to sort out. Anything else is unreadable. Metadata
    nested too deep to read is dropped first; `dropped` says where, as (cell, what) pairs."""
    try:
        data = json.loads(text)
    except ValueError as error:
        raise UnreadableSubmission(f"the submitted notebook is not JSON ({error}); it cannot be graded") from None
    except RecursionError:
        raise UnreadableSubmission("the submitted notebook nests its JSON too deeply to be read (thousands of "
                                   "levels); it cannot be graded") from None
    if not isinstance(data, dict):
        raise UnreadableSubmission(f"the submitted notebook is JSON but a {type(data).__name__}, not a notebook")
    dropped = without_deep_metadata(data)
    if dropped:
        text = json.dumps(data)
    if data.get("nbformat") == 4 or "worksheets" in data:
        try:
            return nbformat.reads(text, as_version=4), [], dropped
        except Exception as error:     # nbformat raises many kinds; the reason is kept for the instructor
            problem = f"not valid nbformat ({type(error).__name__}: {str(error)[:200]})"
    else:
        problem = f"no nbformat 4 header (nbformat={data.get('nbformat')!r})"
    if not isinstance(data.get("cells"), list):
        raise UnreadableSubmission(f"the submitted notebook has no list of cells; {problem}")
    bare = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
    if isinstance(data.get("metadata"), dict):
        bare["metadata"] = data["metadata"]
    notebook = nbformat.from_dict(bare)
    notebook.cells = [nbformat.from_dict(c) for c in data["cells"] if isinstance(c, dict)]
    return notebook, [f"{problem}: its {len(notebook.cells)} cells were read one by one"], dropped


def nesting(value):
    """How many levels of lists and objects `value` holds, counted without recursion (it may hold thousands)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            items = item.values()
        elif isinstance(item, list):
            items = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in items if isinstance(child, (dict, list)))
    return deepest


def without_deep_metadata(data):
    """Drop, in place, every part of the notebook's JSON nested deeper than MAX_NESTING: the notebook's metadata,
    a cell's metadata (its nbgrader marks kept when they are plain values), outputs and attachments. Grading reads
    none of them: the repaired notebook takes its metadata from the assignment, and outputs are cleared. Returns
    (cell, what was dropped) for the repairs ledger."""
    dropped = []
    if nesting(data.get("metadata")) > MAX_NESTING:
        dropped.append(("", f"notebook metadata nested {nesting(data['metadata']):,} levels deep dropped"))
        data["metadata"] = {key: value for key, value in data["metadata"].items() if key == "kernelspec"
                            and nesting(value) <= 2}
    cells = data.get("cells") if isinstance(data.get("cells"), list) else []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        name = f"submitted cell {index}"
        if nesting(cell.get("metadata")) > MAX_NESTING:
            depth = nesting(cell["metadata"])
            marks = cell["metadata"].get("nbgrader")
            cell["metadata"] = {"nbgrader": {k: v for k, v in marks.items() if nesting(v) == 0}} \
                if isinstance(marks, dict) else {}
            dropped.append((name, f"cell metadata nested {depth:,} levels deep dropped, nbgrader's marks kept"))
        for field in ("outputs", "attachments"):
            if nesting(cell.get(field)) > MAX_NESTING:
                dropped.append((name, f"{field} nested {nesting(cell[field]):,} levels deep dropped"))
                cell[field] = [] if field == "outputs" else {}
    return dropped


def student_cells(nb):
    """The submitted cells as StudentCell records, whatever types the file held."""
    cells = nb.get("cells") if isinstance(nb.get("cells"), list) else []
    return [_student_cell(i, c if isinstance(c, dict) else {}) for i, c in enumerate(cells)]


def _student_cell(index, cell):
    metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    nbgrader = metadata.get("nbgrader") if isinstance(metadata.get("nbgrader"), dict) else {}
    grade_id = nbgrader.get("grade_id")
    count = cell.get("execution_count")
    return StudentCell(
        index=index,
        cell_type=cell.get("cell_type") if cell.get("cell_type") in ("code", "markdown", "raw") else "code",
        source=_text(cell.get("source")),
        grade_id=grade_id if isinstance(grade_id, str) else None,
        cell_id=cell.get("id") if isinstance(cell.get("id"), str) else None,
        nbgrader=dict(nbgrader),
        execution_count=count if isinstance(count, int) and not isinstance(count, bool) else None,
    )


def _text(source):
    if isinstance(source, str):
        return source
    if isinstance(source, list):
        return "".join(s if isinstance(s, str) else str(s) for s in source)
    return "" if source is None else str(source)


def skeleton_cells(skeleton):
    return [SkeletonCell(index=i, grade_id=cell_marks.grade_id(c), cell_id=c.get("id"),
                         cell_type=c.cell_type, source=c.source, is_solution=_is_solution(c))
            for i, c in enumerate(skeleton.cells)]


def release_skeleton(source_path, config):
    """The source notebook as nbgrader releases it (locked; solutions, hidden tests and the rubrics of
    written questions cleared): the cells a repaired submission is made of. Cached per file version; callers get their own copy."""
    stat = os.stat(source_path)
    return copy.deepcopy(_release_skeleton(str(source_path), stat.st_mtime_ns, stat.st_size, _config_key(config)))


@lru_cache(maxsize=8)
def _release_skeleton(path, mtime_ns, size, config_json):
    from traitlets.config import Config
    config = Config(json.loads(config_json))
    notebook = nbformat.read(path, as_version=4)
    resources = {}
    for step in (LockCells, ClearSolutions, ClearHiddenTests, ClearMarkScheme, ComputeChecksums):
        notebook, resources = step(config=config).preprocess(notebook, resources)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return notebook


def _config_key(config):
    """The settings the release preprocessors read, as a hashable key."""
    wanted = ("LockCells", "ClearSolutions", "ClearHiddenTests", "ClearMarkScheme")
    return json.dumps({k: dict(config[k]) for k in wanted if k in config}, sort_keys=True, default=str)


def _is_solution(cell):
    return cell_marks.is_solution(cell)


def _name(cell):
    return cell_marks.grade_id(cell) or cell.get("id") or ""


def _valid_id(cell_id):
    return re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", cell_id) is not None
