"""A `course_config.py` for a grading machine outside the course (Gradescope, a Dask worker): the
course's settings without its secrets.

The course's own file may hold a PostgreSQL password in GRADEBOOK_URL, and a runner that read it
would grade into the live course database. This writes a new file from the course's *values*: every
constant written out literally except those that name or contain credentials, GRADEBOOK_URL forced to
None (nbgrader's SQLite file next to it), and the course's imports, classes and functions copied from
its source, minus the functions that need a withheld constant.
"""
import ast
import re
from dataclasses import dataclass

# A constant is withheld when its name says it is a secret or a location, or its value holds a URL
# (a URL may carry `user:password@`); the runner needs neither.
SECRET_NAME = re.compile(r"URL|PASSWORD|PASSWD|SECRET|TOKEN|KEY|CREDENTIAL|REPOSITORY|BRANCH", re.IGNORECASE)
URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# What the runner itself calls: without them it cannot grade, so withholding them is an error.
REQUIRED_FUNCTIONS = ("chapter", "configure_nbgrader")


@dataclass(frozen=True)
class RunnerConfig:
    """The generated file's text, and the constants and functions it leaves out (for the log)."""

    text: str
    withheld: tuple
    dropped_functions: tuple


class RunnerConfigError(ValueError):
    """The course's configuration cannot be written without its secrets."""


def runner_config(source_text, module):
    """RunnerConfig for the course config whose source is `source_text` and loaded module `module`."""
    tree = ast.parse(source_text)
    withheld = [name for name in _constants(tree) if _is_secret(name, getattr(module, name, None))]
    kept_constants = {name for name in _constants(tree) if name not in withheld} | {"GRADEBOOK_URL"}
    parts = ['"""Generated for a grading machine from the course\'s course_config.py, without its\n'
             f'secrets (withheld: {", ".join(withheld) or "none"}). Do not edit; rebuild the zip."""']
    dropped = _functions_needing(tree, set(withheld) - {"GRADEBOOK_URL"})
    for node in tree.body:
        if _is_docstring(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef)):
            parts.append(ast.get_source_segment(source_text, node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name not in dropped:
                parts.append(ast.get_source_segment(source_text, node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            name = _target(node)
            if name == "GRADEBOOK_URL":
                parts.append("GRADEBOOK_URL = None    # nbgrader's SQLite gradebook next to this file")
            elif name in kept_constants:
                parts.append(f"{name} = {getattr(module, name)!r}")
        else:
            raise RunnerConfigError(f"course_config.py line {node.lineno}: a top-level "
                                    f"{type(node).__name__} statement; the runner's copy holds only imports, "
                                    "classes, functions and constants")
    missing = [name for name in REQUIRED_FUNCTIONS if name in dropped]
    if missing:
        raise RunnerConfigError(f"the runner needs {', '.join(missing)} from course_config.py, but it reads a "
                                f"withheld secret ({', '.join(withheld)})")
    text = "\n\n".join(parts) + "\n"
    _check_round_trip(text, module, kept_constants - {"GRADEBOOK_URL"})
    return RunnerConfig(text, tuple(withheld), tuple(dropped))


def _constants(tree):
    return [_target(n) for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign)) and _target(n)]


def _target(node):
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        raise RunnerConfigError(f"course_config.py line {node.lineno}: assign one name per statement")
    return targets[0].id


def _is_secret(name, value):
    return bool(SECRET_NAME.search(name)) or any(URL.search(text) for text in _strings(value))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)


def _is_docstring(node):
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _functions_needing(tree, withheld):
    """Functions that read a withheld name, directly or through another such function."""
    functions = {n.name: _global_names(n) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    dropped, grew = [], True
    while grew:
        grew = False
        for name, used in functions.items():
            if name not in dropped and used & (withheld | set(dropped)):
                dropped.append(name)
                grew = True
    return dropped


def _global_names(function):
    return {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}


def _check_round_trip(text, module, names):
    """Each constant written as its repr() must read back equal, or the runner would grade differently."""
    namespace = {"__name__": "course_config"}
    exec(compile(text, "course_config.py (runner)", "exec"), namespace)
    changed = [name for name in sorted(names) if namespace.get(name) != getattr(module, name)]
    if changed:
        raise RunnerConfigError(f"these course_config.py values do not survive being written out: {changed}")
