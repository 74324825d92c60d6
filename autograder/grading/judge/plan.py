"""What the judge checks, read from the trusted source notebook's test cells (never the student's copy).

Every call `check.NAME(args...)` in a grade cell, also inside `check.all(...)`, becomes a `CheckCall`
whose arguments are evaluated here, in the grader: op constructors become `OpSpec` descriptors (the
judge never holds a student's object), lambdas and NumPy functions are trusted expected functions.
"""
import ast
import builtins
import inspect
from dataclasses import dataclass, field

import numpy as np

from autograder import cell_marks
from autograder.student.checks import slow


@dataclass(frozen=True)
class OpSpec:
    """An op as the test cell builds it, `Summation((0, -1))`: built in the kernel from its class name."""

    name: str
    args: tuple = ()
    kwargs: tuple = ()        # (name, value) pairs, so the spec stays hashable

    @property
    def label(self):
        """`Summation((0, -1))`, as the test cell writes it."""
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        return f"{self.name}({', '.join(parts)})"

    def request(self):
        return {"name": self.name, "args": tuple(self.args), "kwargs": dict(self.kwargs)}


@dataclass(frozen=True)
class NotebookName:
    """A notebook global passed to a check by name, `check.trained_model(model, ...)`: only the kernel holds
    its value, so the judge can only ask the kernel about it, by this name."""

    name: str


@dataclass(frozen=True)
class CheckCall:
    """One `check.NAME(...)` in a test cell, its arguments evaluated in the judge."""

    name: str
    args: tuple
    kwargs: dict = field(hash=False)
    line: int
    hidden: bool = False        # it stands in the cell's hidden region: its failure must not show its inputs


@dataclass
class GradeCellPlan:
    """A grade cell's judged checks; `unjudged` says why the judge cannot decide it, if it cannot."""

    grade_id: str
    calls: list
    unjudged: str = ""
    only_checks: bool = False       # the cell does nothing but call checks and assert their verdicts


class _OpConstructors(dict):
    """Names in a test cell: the cell's literals first, then capitalised ones are op classes and build an
    OpSpec; `np` is NumPy."""

    def __missing__(self, name):
        if name[:1].isupper():
            return lambda *args, **kwargs: OpSpec(name, tuple(args), tuple(sorted(kwargs.items())))
        raise KeyError(name)          # LOAD_NAME then tries the globals (np) and builtins


def check_calls(source):
    """Every `check.NAME(...)` call node in the cell, in source order, `check.all` looked through."""
    calls = []

    class Visitor(ast.NodeVisitor):
        def visit_Call(self, node):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "check" \
                    and func.attr != "all":
                calls.append(node)
            self.generic_visit(node)

    Visitor().visit(ast.parse(source))
    return calls


def evaluate(node, names=None):
    """A check's argument, evaluated from the trusted source: literals, lambdas, np.*, `slow.*` (the grader's
    own reference loops, autograder/student/checks/slow.py), op constructors, and the cell's literal `names`."""
    expression = ast.fix_missing_locations(ast.Expression(node))
    return eval(compile(expression, "<test cell>", "eval"), {"np": np, "slow": slow},  # noqa: S307 (trusted source)
                _OpConstructors(names or {}))


def argument(node, names, bound):
    """A check's argument: a bare name the cell never binds is a NotebookName; anything else is `evaluate`d."""
    if isinstance(node, ast.Name) and node.id not in bound and node.id not in ("np", "slow") \
            and node.id[:1].islower() and not hasattr(builtins, node.id):
        return NotebookName(node.id)
    return evaluate(node, names)


def literal_names(tree, line):
    """The names the cell binds to a literal (`helpers = ["Flip", "Dilate"]`) before `line`; a name
    bound to anything else is forgotten, so a call never sees a value the kernel would not."""
    names = {}
    for statement in tree.body:
        if statement.end_lineno >= line:
            break
        for target in statement.targets if isinstance(statement, ast.Assign) else ():
            if isinstance(target, ast.Name):
                try:
                    names[target.id] = ast.literal_eval(statement.value)
                except ValueError:
                    names.pop(target.id, None)
    return names


def comprehension_bindings(tree):
    """{(line, column) of a call: [{name: value}, ...]} for the calls inside a comprehension over a literal:
    `[check.parse_idx("types", seed=seed) for seed in (11, 12, 13)]` is three calls, one per seed."""
    bindings = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(node.generators) != 1:
            continue
        loop = node.generators[0]
        if not isinstance(loop.target, ast.Name) or loop.ifs:
            continue
        try:
            values = list(ast.literal_eval(loop.iter))
        except (ValueError, TypeError):
            continue
        for inner in ast.walk(node.elt):
            if isinstance(inner, ast.Call):
                bindings[(inner.lineno, inner.col_offset)] = [{loop.target.id: v} for v in values]
    return bindings


def only_checks(tree):
    """Whether every statement of a test cell is `NAME = check.NAME(...)` (or `check.all(...)`), `NAME = <a
    literal>`, or `assert NAME.passed, NAME.message`: a cell whose run in the kernel, once its checks are the
    judge's, leaves nothing behind that the judge or a later cell could need."""
    def is_check_call(node):
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "check")

    def is_literal(node):
        try:
            ast.literal_eval(node)
            return True
        except ValueError:
            return False

    def is_verdict_field(node, attribute):
        return isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.value, ast.Name)

    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            if not all(isinstance(t, ast.Name) for t in statement.targets) or not (
                    is_check_call(statement.value) or is_literal(statement.value)):
                return False
        elif isinstance(statement, ast.Assert):
            if not is_verdict_field(statement.test, "passed") or not (
                    statement.msg is None or is_verdict_field(statement.msg, "message")):
                return False
        else:
            return False
    return True


def plan_cell(grade_id, source, judged, kernel_decides=None):
    """The plan of one grade cell; unjudged when a call names a check the judge has no implementation of,
    or passes arguments that implementation does not take. `judged`: {name: fn(rng, ...)}.

    `kernel_decides`: {name: why} of checks the judge knowingly leaves to the kernel; the cell's other
    checks are still judged (the kernel's outcome counts as well), and a cell of only those is unjudged.
    """
    kernel_decides = kernel_decides or {}
    try:
        nodes = check_calls(source)
        tree = ast.parse(source)
        loops = comprehension_bindings(tree)
        bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        hidden = set(cell_marks.hidden_test_lines(source))
    except SyntaxError as error:
        return GradeCellPlan(grade_id, [], unjudged=f"the source cell does not parse ({error})")
    calls, left = [], []
    for node in nodes:
        name = node.func.attr
        if name in kernel_decides:
            left.append(f"check.{name}: {kernel_decides[name]}")
            continue
        if name not in judged:
            return GradeCellPlan(grade_id, [], unjudged=f"check.{name} has no judge-side implementation")
        for binding in loops.get((node.lineno, node.col_offset), [{}]):
            try:
                names = {**literal_names(tree, node.lineno), **binding}
                args = tuple(argument(a, names, bound) for a in node.args)
                kwargs = {k.arg: argument(k.value, names, bound) for k in node.keywords}
                inspect.signature(judged[name]).bind(None, *args, **kwargs)
            except Exception as error:  # noqa: BLE001 (an argument the judge cannot evaluate: leave the cell to the kernel)
                return GradeCellPlan(grade_id, [], unjudged=f"check.{name} on line {node.lineno}: {error}")
            calls.append(CheckCall(name, args, kwargs, node.lineno, node.lineno in hidden))
    if not calls:
        return GradeCellPlan(grade_id, [], unjudged="; ".join(dict.fromkeys(left)) or "no check.NAME(...) call in the cell")
    return GradeCellPlan(grade_id, calls, only_checks=only_checks(tree))


def plan_notebook(notebook, judged, kernel_decides=None):
    """{grade_id: GradeCellPlan} for every graded code cell of the source notebook."""
    plans = {}
    for cell in notebook.cells:
        meta = cell_marks.marks(cell)
        if cell.cell_type == "code" and meta.get("grade") and meta.get("grade_id"):
            plans[meta["grade_id"]] = plan_cell(meta["grade_id"], cell.source, judged, kernel_decides)
    return plans
