"""nbgrader's marks on a notebook cell, read in one place.

nbgrader keeps them under `metadata["nbgrader"]` (grade, solution, locked, grade_id, points); a cell a
student pasted or a tool stripped has none, so every reader needs the same empty default."""


SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN_TEST_MARKERS = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")


def hidden_test_lines(source):
    """1-based numbers of a test cell's lines inside its hidden region (nbgrader's `### BEGIN/END HIDDEN TESTS`)."""
    begin, end = HIDDEN_TEST_MARKERS
    inside, found = False, []
    for number, line in enumerate(source.splitlines(), 1):
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            found.append(number)
    return found


def without_solution_markers(source):
    """A solution cell's code as solved, its `### BEGIN/END SOLUTION` lines left out."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in SOLUTION_MARKERS)


def marks(cell):
    """The cell's nbgrader metadata, {} when it has none (a NotebookNode or a plain dict)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell):
    """The cell's nbgrader name, or None."""
    return marks(cell).get("grade_id")


def is_graded(cell):
    """A cell that earns points: an autograded test cell, or a written answer graded by a person."""
    return bool(marks(cell).get("grade"))


def is_test_cell(cell):
    """An autograded test cell: graded, and code."""
    return cell.get("cell_type") == "code" and is_graded(cell)


def autograded_points(notebook):
    """The points of a notebook's test cells: what autograde can give it."""
    return sum(marks(cell)["points"] for cell in notebook.cells if is_test_cell(cell))


def is_solution(cell):
    return bool(marks(cell).get("solution"))
