"""The flag report: code a student wrote that reaches for the grading machinery or outside its folder
(the checker, builtins, sys.modules, gc, frames, files, sockets, sqlite3, subprocesses, ctypes,
importlib, exec/eval), listed by cell and line for the instructor to read; and submissions whose files
others could have changed or that differ from the exchange's copy (grading/submission_modes.py).

It is a report, not a penalty: nothing here changes a grade, and most flags in an honest class are
curiosity. Only what the student wrote is scanned (solution cells, and cells nbgrader does not know),
so the course's own provided code never raises a flag. Code that does not parse is scanned line by
line with regular expressions instead of being skipped.
"""
import ast
import csv
import os
import re
from dataclasses import astuple, dataclass, fields

import nbformat

from autograder import cell_marks
from autograder.grading import intake

LEFT_OUT = "left out"      # a flag's category for what of a submission folder grading never read
NOTICE = ("Flags are a report for the instructor to review, not a penalty: "
          "no grade is changed by them.")

# Modules (and names bound to them by the course's provided code) and what touching them means.
MODULES = {
    "autograder": "checker", "builtins": "builtins", "gc": "gc", "inspect": "frames",
    "os": "files", "pathlib": "files", "shutil": "files", "glob": "files", "tempfile": "files",
    "socket": "sockets", "urllib": "sockets", "http": "sockets", "requests": "sockets", "ssl": "sockets",
    "ftplib": "sockets", "smtplib": "sockets", "sqlite3": "sqlite3", "subprocess": "subprocess",
    "multiprocessing": "subprocess", "pty": "subprocess", "ctypes": "ctypes", "importlib": "importlib",
}
NAMES = {
    "check": "checker", "Checker": "checker", "Verdict": "checker",
    "__builtins__": "builtins", "__import__": "importlib",
    "exec": "exec/eval", "eval": "exec/eval", "compile": "exec/eval",
    "globals": "frames",
}
ATTRIBUTES = {
    "Checker": "checker", "Verdict": "checker",
    "__builtins__": "builtins", "__subclasses__": "builtins",
    "_getframe": "frames", "f_back": "frames", "f_globals": "frames", "f_locals": "frames",
    "f_builtins": "frames", "tb_frame": "frames", "gi_frame": "frames", "cr_frame": "frames",
    "__globals__": "frames", "settrace": "frames", "setprofile": "frames",
}
OS_PROCESSES = {"system", "popen", "fork", "forkpty", "kill", "killpg", "posix_spawn", "posix_spawnp",
                "execv", "execve", "execl", "execle", "execlp", "execvp", "execvpe", "spawnv", "spawnl"}
SHELL_MAGIC = re.compile(r"^\s*(!|%%?(bash|sh|script|system|sx|perl|ruby)\b)")
FILE_MAGIC = re.compile(r"^\s*%%?(run|load|writefile|save|store|cd|env|bookmark)\b")
OUTSIDE_PATH = re.compile(r"^(/|~|\\|[A-Za-z]:)|(^|[/\\])\.\.([/\\]|$)")
# A string that names a path outside the submission's folder, whatever reads it (np.load, sqlite3, ...).
PATH_OUTSIDE = re.compile(r"^(/|~/|\.\./|\.\.\\)\S*[A-Za-z]")

# For code that does not parse: a category per pattern, tried on each line.
LINE_PATTERNS = [(re.compile(p), category) for p, category in [
    (r"\b(check|Checker|Verdict|autograder)\b", "checker"),
    (r"\b(__builtins__|builtins|__subclasses__)\b", "builtins"),
    (r"\bsys\s*\.\s*modules\b", "sys.modules"),
    (r"\bgc\b", "gc"),
    (r"\b(_getframe|inspect|f_back|f_globals|f_locals|tb_frame|__globals__|settrace|setprofile)\b", "frames"),
    (r"\b(os|pathlib|shutil|glob|tempfile)\b|\bopen\s*\(\s*[rbuf]*['\"](/|~|\.\.)", "files"),
    (r"\b(socket|urllib|requests|http|ssl)\b", "sockets"),
    (r"\bsqlite3\b", "sqlite3"),
    (r"\b(subprocess|multiprocessing|pty)\b", "subprocess"),
    (r"\bctypes\b", "ctypes"),
    (r"\b(importlib|__import__)\b", "importlib"),
    (r"\b(exec|eval|compile)\s*\(", "exec/eval"),
]]


# Class attributes the chapters ask students to set: chapter 3's no_grad() turns recording off and on
# through the provided Function's switch. Setting one is the exercise, not a patch.
COURSE_SWITCHES = {("Function", "grad_enabled")}


@dataclass(frozen=True)
class Flag:
    """One finding: which student, which cell, which line, and what it touches."""

    student: str
    cell: str          # the cell's grade_id, or "added cell N" (N counts the notebook's cells from 1)
    line: int
    code: str
    category: str


class Finder(ast.NodeVisitor):
    """Collects (line number, category) for one cell's syntax tree."""

    def __init__(self, own_names):
        self.own_names = own_names         # what the student bound: patching those is their business
        self.found = []

    def add(self, node, category):
        self.found.append((node.lineno, category))

    def visit_Import(self, node):
        for alias in node.names:
            self.module(node, alias.name)

    def visit_ImportFrom(self, node):
        if node.module and not node.level:
            self.module(node, node.module)
        self.generic_visit(node)

    def module(self, node, name):
        if name == "sys.modules":
            self.add(node, "sys.modules")
        category = MODULES.get(name.split(".")[0])
        if category:
            self.add(node, category)

    def visit_Name(self, node):
        category = NAMES.get(node.id) or MODULES.get(node.id)
        if category:
            self.add(node, category)

    def visit_Attribute(self, node):
        if isinstance(node.value, ast.Name):
            if node.value.id == "sys" and node.attr == "modules":
                self.add(node, "sys.modules")
            if node.value.id == "os" and node.attr in OS_PROCESSES:
                self.add(node, "subprocess")
        category = ATTRIBUTES.get(node.attr)
        if category:
            self.add(node, category)
        if (isinstance(node.ctx, (ast.Store, ast.Del)) and self.foreign_class(node.value)
                and not (isinstance(node.value, ast.Name) and (node.value.id, node.attr) in COURSE_SWITCHES)):
            self.add(node, "class patch")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and PATH_OUTSIDE.match(node.value):
            self.add(node, "files")

    def visit_Call(self, node):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name in ("setattr", "delattr") and node.args and self.foreign_class(node.args[0]):
            self.add(node, "class patch")
        if name == "open" and node.args and self.outside_path(node.args[0]):
            self.add(node, "files")
        self.generic_visit(node)

    def foreign_class(self, node):
        """A class the student did not make: `Tensor`, `type(x)`, `x.__class__`."""
        if isinstance(node, ast.Name):
            return node.id[:1].isupper() and node.id not in self.own_names
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type":
            return True
        return isinstance(node, ast.Attribute) and node.attr == "__class__"

    @staticmethod
    def outside_path(node):
        texts = [node.value] if isinstance(node, ast.Constant) and isinstance(node.value, str) else [
            part.value for part in getattr(node, "values", []) if isinstance(part, ast.Constant)][:1]
        return any(OUTSIDE_PATH.search(text) for text in texts)


def without_magics(source):
    """The source with IPython's `!cmd` and `%magic` lines blanked, and the findings those lines are."""
    lines, found = [], []
    for number, line in enumerate(source.splitlines(), start=1):
        if SHELL_MAGIC.match(line):
            found.append((number, "subprocess"))
        elif FILE_MAGIC.match(line):
            found.append((number, "files"))
        lines.append("" if line.lstrip().startswith(("!", "%")) else line)
    return "\n".join(lines), found


def scan_source(source, own_names=frozenset()):
    """Sorted, distinct (line number, category) of one cell's code; `own_names` are bound in the
    student's other cells (this cell's own are added here)."""
    code, found = without_magics(source)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        for number, line in enumerate(code.splitlines(), start=1):
            found += [(number, category) for pattern, category in LINE_PATTERNS if pattern.search(line)]
    else:
        finder = Finder(set(own_names) | bound_names([source]))
        finder.visit(tree)
        found += finder.found
    return sorted(set(found))


def bound_names(sources):
    """Names the student binds in these cells (classes, variables, arguments): setting attributes on
    what they made themselves, `W.grad = None`, is their business."""
    names = set()
    for source in sources:
        try:
            tree = ast.parse(without_magics(source)[0])
        except SyntaxError:
            names |= set(re.findall(r"^\s*class\s+(\w+)", source, re.MULTILINE))
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def normalized(text):
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())


def without_hidden_tests(text):
    """A test cell as the student version shows it: nbgrader's ClearHiddenTests drops the region."""
    return re.sub(r"(?s)[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[^\n]*", "", text)


def student_cells(notebook, source_notebook):
    """[(label, source)] of what the student wrote and the kernel may run.

    Solution cells go by their grade_id; a cell with the grade_id of a provided cell is skipped
    (autograde puts the provided text back); any other code cell is "added", unless its text is
    exactly a provided cell's (metadata stripped by another editor).
    """
    solution_ids, provided_ids, provided_text = set(), set(), set()
    for cell in source_notebook.cells:
        meta = cell_marks.marks(cell)
        if meta.get("solution") and cell.cell_type == "markdown":
            continue                    # a written answer: prose, graded by a person (autograder/questions.py)
        if meta.get("solution"):
            solution_ids.add(meta.get("grade_id"))
        else:
            provided_ids.add(meta.get("grade_id"))
            provided_text |= {normalized(cell.source), normalized(without_hidden_tests(cell.source))}
    cells = []
    for number, cell in enumerate(notebook.cells, start=1):
        grade_id = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")
        if grade_id in solution_ids:
            cells.append((grade_id, cell.source))
        elif grade_id in provided_ids and grade_id is not None:
            continue
        elif cell.cell_type == "code" and normalized(cell.source) not in provided_text:
            cells.append((f"added cell {number}", cell.source))
    return cells


def scan_notebook(student, notebook, source_notebook):
    """Every Flag in one submitted notebook."""
    cells = student_cells(notebook, source_notebook)
    own = bound_names(source for _, source in cells)
    flags = []
    for label, source in cells:
        lines = source.splitlines()
        for number, category in scan_source(source, own):
            flags.append(Flag(student, label, number, lines[number - 1].strip(), category))
    return flags


def scan_chapter(course, chapter):
    """(flags, unreadable students) over every notebook of the chapter in submitted/, read only as intake
    admits it (a notebook that is a link or a FIFO is never read); what intake left out of a submission,
    now or when plain autograde set it aside, is a flag of its own ("left out")."""
    cfg = course.config
    source = nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4)
    submitted = course.root / cfg.SUBMITTED_DIR
    name = f"{chapter.notebook}.ipynb"
    ledger = course.root / cfg.LEDGER_DIR
    recorded = intake.read_records(ledger, chapter.id)
    flags, unreadable = [], []
    for student in sorted(set(os.listdir(submitted) if submitted.is_dir() else []) | set(recorded)):
        folder = submitted / student / chapter.id
        found = intake.survey(folder, [name], intake.IntakeLimits.from_config(cfg), within=submitted) \
            if os.path.lexists(folder) else intake.Intake(admitted=())
        flags += left_out_flags(student, found, intake.read_record(ledger, chapter.id, student))
        if name not in found.admitted:
            continue
        try:
            notebook = nbformat.reads(intake.read_regular(folder / name).decode("utf-8"), as_version=4)
        except Exception:           # a corrupt notebook is graded (and reported) elsewhere; nothing to scan
            unreadable.append(student)
            continue
        flags += scan_notebook(student, notebook, source)
    return flags, unreadable


def submission_flags(course, chapter):
    """A flag per path of a submission that others could have changed, or that differs from the exchange's
    copy (grading/submission_modes.py): what was graded may not be what the student submitted."""
    from autograder.grading import submission_modes

    return [Flag(student, "submitted files", 0, str(finding), submission_modes.KIND)
            for student, findings in submission_modes.check_chapter(course, chapter).items() for finding in findings]


def left_out_flags(student, found, recorded):
    """A flag for each entry intake refuses now (`found`) or refused before (`recorded`, set aside)."""
    items = {item.path: item.reason for item in recorded}
    if found.over_limit:
        items["*"] = found.over_limit
    items.update({item.path: item.reason for item in found.refused})
    return [Flag(student, "submission folder", 0, reason if path == "*" else f"{path}: {reason}", LEFT_OUT)
            for path, reason in sorted(items.items())]


def flags_csv(course, chapter):
    return course.root / course.config.EXPORT_DIR / f"{chapter.id}_flags.csv"


def write_flags(course, chapter):
    """exports/<chapter>_flags.csv, one row per Flag; returns (path, flags, unreadable students)."""
    flags, unreadable = scan_chapter(course, chapter)
    flags += submission_flags(course, chapter)
    path = flags_csv(course, chapter)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([f.name for f in fields(Flag)])
        writer.writerows(astuple(flag) for flag in flags)
    return path, flags, unreadable


def counts_by_student(flags):
    counts = {}
    for flag in flags:
        counts[flag.student] = counts.get(flag.student, 0) + 1
    return counts


def format_flags(chapter, flags):
    """The flags as the instructor reads them: per student, cell:line, category, code."""
    if not flags:
        return f"{chapter.id}: no flags.\n{NOTICE}"
    lines = [f"{chapter.id}: {len(flags)} flags in {len(counts_by_student(flags))} submissions. {NOTICE}"]
    for flag in flags:
        lines.append(f"  {flag.student}  {flag.cell}:{flag.line}  [{flag.category}]  {flag.code}")
    return "\n".join(lines)
