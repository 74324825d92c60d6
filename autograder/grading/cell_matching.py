"""Which submitted cell is which cell of the assignment: the matching behind notebook repair.

Pure data in, a plan out: no nbgrader, no files. A skeleton cell (the release version of a source cell)
is matched to the student's cell that carries its nbgrader grade_id, else its nbformat cell id, else
the same text, else (metadata lost in another editor) the most similar cell between its matched
neighbours. Cells left over were added by the student; they stay after the matched cell they followed.
"""
import bisect
import difflib
from dataclasses import dataclass, field
from enum import Enum

SOLUTION_SIMILARITY = 0.3   # line similarity to the release stub: a filled-in stub keeps ~0.7, another op's ~0.45
FIXED_SIMILARITY = 0.6      # a test, provided or markdown cell lightly edited in an editor that ignores locks
MAX_CANDIDATES = 200        # per gap: a notebook of a million cells costs seconds, not hours
COMPARED_LINES = 400        # similarity of the first lines: a 50 MB cell costs milliseconds


@dataclass(frozen=True)
class SkeletonCell:
    """A cell of the assignment as released: where it is, what it is, and its release text."""

    index: int
    grade_id: str | None
    cell_id: str | None
    cell_type: str
    source: str
    is_solution: bool


@dataclass(frozen=True)
class StudentCell:
    """A submitted cell, read defensively: whatever the file held, these fields are well typed."""

    index: int
    cell_type: str
    source: str
    grade_id: str | None
    cell_id: str | None
    nbgrader: dict
    execution_count: int | None


class Rule(str, Enum):
    GRADE_ID = "grade_id"
    CELL_ID = "cell id"
    CONTENT = "content"
    POSITION = "position"


@dataclass(frozen=True)
class Match:
    skeleton: int
    student: int
    rule: Rule


@dataclass(frozen=True)
class Duplicate:
    """A student cell that is a second copy of a matched skeleton cell, and not kept."""

    student: int
    skeleton: int
    kept: int


@dataclass
class Plan:
    matches: dict = field(default_factory=dict)       # skeleton index -> Match
    duplicates: list = field(default_factory=list)    # [Duplicate]
    added: dict = field(default_factory=dict)         # skeleton index it follows (-1: the top) -> [student index]
    moved: list = field(default_factory=list)         # skeleton indices whose student cell was out of order


def plan(skeleton, student):
    """Match `student` cells to `skeleton` cells (both lists, in notebook order)."""
    result = Plan()
    used = set()
    _match_by_grade_id(skeleton, student, result, used)
    _match_by_cell_id(skeleton, student, result, used)
    _match_by_content(skeleton, student, result, used)
    in_order = _in_order(result.matches)
    _match_by_position(skeleton, student, result, used, in_order)
    in_order = _in_order(result.matches)
    result.moved = sorted(set(result.matches) - in_order)
    _place_added_cells(student, result, used)
    return result


def _match_by_grade_id(skeleton, student, result, used):
    """A duplicated solution cell keeps the copy the student ran last (highest execution count: the
    definition their kernel held), else the lower one (what a top-to-bottom run leaves defined, and
    the copy nbgrader's DeduplicateIds keeps). Other cells are restored from the skeleton anyway."""
    by_grade_id = {s.grade_id: s for s in skeleton if s.grade_id}
    claims = {}
    for cell in student:
        if cell.grade_id in by_grade_id:
            claims.setdefault(by_grade_id[cell.grade_id].index, []).append(cell)
    for index, cells in claims.items():
        if skeleton[index].is_solution:
            kept = max(cells, key=lambda c: (c.execution_count if c.execution_count is not None else -1, c.index))
        else:
            kept = cells[0]
        result.matches[index] = Match(index, kept.index, Rule.GRADE_ID)
        used.update(c.index for c in cells)
        result.duplicates.extend(Duplicate(c.index, index, kept.index) for c in cells if c is not kept)


def _match_by_cell_id(skeleton, student, result, used):
    by_cell_id = {s.cell_id: s for s in skeleton if s.cell_id and s.index not in result.matches}
    for cell in student:
        target = by_cell_id.get(cell.cell_id)
        if cell.index not in used and target is not None and target.index not in result.matches:
            result.matches[target.index] = Match(target.index, cell.index, Rule.CELL_ID)
            used.add(cell.index)


def _match_by_content(skeleton, student, result, used):
    """The same text as a skeleton cell: that cell, or (if it is already matched) a copy of it."""
    free, any_ = {}, {}
    for s in skeleton:
        text = _normal(s.source)
        if text:
            any_.setdefault(text, s.index)
            if s.index not in result.matches:
                free.setdefault(text, []).append(s.index)
    for cell in student:
        text = _normal(cell.source)
        if cell.index in used or not text:
            continue
        if free.get(text):
            index = free[text].pop(0)
            result.matches[index] = Match(index, cell.index, Rule.CONTENT)
            used.add(cell.index)
        elif text in any_:
            index = any_[text]
            result.duplicates.append(Duplicate(cell.index, index, result.matches[index].student))
            used.add(cell.index)


def _match_by_position(skeleton, student, result, used, in_order):
    """Each run of unmatched skeleton cells between two in-order matches takes its cells from the
    student's cells between the same two matches: the most similar first; a lone solution cell takes
    a lone cell of its kind whatever it holds (that is where the student wrote the exercise, or the
    answer to a written question)."""
    anchors = sorted(in_order)
    gap = []
    for s in skeleton + [None]:
        if s is not None and s.index not in result.matches:
            gap.append(s)
            continue
        if gap:
            before = bisect.bisect_left(anchors, gap[0].index) - 1
            low = result.matches[anchors[before]].student if before >= 0 else -1
            after = bisect.bisect_right(anchors, gap[-1].index)
            high = result.matches[anchors[after]].student if after < len(anchors) else len(student)
            candidates = [c for c in student[low + 1:high] if c.index not in used][:MAX_CANDIDATES]
            _fill_gap(gap, candidates, result, used)
            gap = []


def _fill_gap(gap, candidates, result, used):
    lines = {c.index: _lines(c.source) for c in candidates}
    scored = []
    for s in gap:
        threshold = SOLUTION_SIMILARITY if s.is_solution else FIXED_SIMILARITY
        stub = _lines(s.source)
        for c in candidates:
            score = difflib.SequenceMatcher(None, stub, lines[c.index], autojunk=False).ratio()
            if score >= threshold:
                scored.append((score, -c.index, s.index, c.index))
    for _score, _, s_index, c_index in sorted(scored, reverse=True):
        if s_index not in result.matches and c_index not in used:
            result.matches[s_index] = Match(s_index, c_index, Rule.POSITION)
            used.add(c_index)
    open_solutions = [s for s in gap if s.is_solution and s.index not in result.matches]
    if len(open_solutions) == 1:
        lone = open_solutions[0]
        open_same = [c for c in candidates if c.index not in used and c.cell_type == lone.cell_type]
        if len(open_same) == 1:
            result.matches[lone.index] = Match(lone.index, open_same[0].index, Rule.POSITION)
            used.add(open_same[0].index)


def _in_order(matches):
    """The skeleton indices of the largest set of matches whose student cells are in skeleton order
    (a longest increasing subsequence): the others were moved by the student."""
    pairs = sorted((m.student, m.skeleton) for m in matches.values())
    tails, previous = [], {}        # tails[k]: the smallest last skeleton index of a chain of length k+1
    for _, skel in pairs:
        k = bisect.bisect_left(tails, skel)
        previous[skel] = tails[k - 1] if k else None
        if k == len(tails):
            tails.append(skel)
        else:
            tails[k] = skel
    chain, node = set(), tails[-1] if tails else None
    while node is not None:
        chain.add(node)
        node = previous[node]
    return chain


def _place_added_cells(student, result, used):
    """Unmatched cells follow the nearest matched (or dropped duplicate) cell above them."""
    owner = {m.student: m.skeleton for m in result.matches.values()}
    owner.update({d.student: d.skeleton for d in result.duplicates})
    anchor = -1
    for cell in student:
        if cell.index in owner:
            anchor = owner[cell.index]
        elif cell.index not in used:
            result.added.setdefault(anchor, []).append(cell.index)


def _normal(text):
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _lines(text):
    return [line.rstrip() for line in text[:COMPARED_LINES * 200].strip().splitlines()[:COMPARED_LINES]]
