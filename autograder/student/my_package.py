"""The bonus assignment's provided cell: the notebook runs on the student's own `mybabygrad/` package.

The USE_MY_LIBRARY switch (my_library.py) fills a chapter the package lacks with the course's code. The
bonus must not: its point is the student's library. It imports the package's chapter 9 and the chapters
that module builds on, nothing of the course's, and says which are missing instead of filling them in.
It never raises: what went wrong is printed, and the bonus's check fails with the same words.
"""
import importlib
import re
import sys
import traceback
import types
from pathlib import Path

from autograder.student.checks.capstone import (  # the globals the check reads
    MY_LIBRARY as LOADED,
)
from autograder.student.checks.capstone import MY_LIBRARY_PROBLEM as PROBLEM
from autograder.student.export import COLAB_DRIVE, PACKAGE
from autograder.student.my_library import (
    CHOSEN_FOLDER,
    find_package,
    package_folders,
    short,
)

TOP = "ch09_trainer"           # the MLP capstone's chapter: its Trainer and build_mlp
IMPORTS = re.compile(r"^from \.(ch\d\d_\w+) import \*$", re.MULTILINE)
EXPORT_HOW = ("export each chapter notebook (its \"Keep your library\" cell, or `python -m autograder export "
              "NOTEBOOK` in a terminal), then hand in the mybabygrad/ folder next to this notebook")


def needed_chapters(package, top=TOP):
    """The chapters the package's `top` module imports, in course order, and `top` itself."""
    return tuple(IMPORTS.findall((package / f"{top}.py").read_text(encoding="utf-8"))) + (top,)


def forget_package():
    """Drop an earlier import of the package, so a re-run cell reads the files as they are now."""
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def import_chapter(package, top):
    """The package's `top` module with the modules it imports, and not the package's __init__ (which imports
    every chapter: a half-written chapter 10 must not cost the MLP bonus)."""
    forget_package()
    parent = types.ModuleType(PACKAGE, f"Your babygrad, from {package}")
    parent.__path__ = [str(package)]
    sys.modules[PACKAGE] = parent
    return importlib.import_module(f"{PACKAGE}.{top}")


def where(package, folder="."):
    """Where the package was found, in words that do not depend on the machine."""
    here = Path(folder).resolve()
    if package == here / PACKAGE:
        return "next to this notebook"
    if package == here.parent / PACKAGE:
        return "next to this notebook's folder"
    if package == COLAB_DRIVE / PACKAGE:
        return "in your Google Drive"
    return f"in ${CHOSEN_FOLDER}"


def failing_line(error, package):
    """`ch03_autodiff.py, line 12` for the deepest frame of the error in the package's files, or ''."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if str(package) in f.filename]
    return f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno})" if frames else ""


def find_problem(package, top):
    """Why the package cannot run the capstone (missing files), or '' when it has every chapter it needs."""
    if package is None:
        looked = ", ".join(str(p.parent) for p in package_folders("."))
        return f"there is no {PACKAGE}/ (looked in {looked}). To make it, {EXPORT_HOW}."
    if not (package / f"{top}.py").is_file():
        return f"your {PACKAGE}/ has no {top}.py: the capstone needs chapter 9's Trainer and build_mlp. {EXPORT_HOW}."
    missing = [name for name in needed_chapters(package, top) if not (package / f"{name}.py").is_file()]
    if missing:
        return (f"your {PACKAGE}/ has no {', '.join(m + '.py' for m in missing)}, which {top}.py builds on. "
                f"Export {'that chapter' if len(missing) == 1 else 'those chapters'} too.")
    return ""


def load_my_library(namespace, folder=".", top=TOP, out=print):
    """Put the names of the student's `top` chapter (and what it imports) into `namespace`.

    Sets namespace[LOADED] to the chapters loaded, or to None with namespace[PROBLEM] saying why."""
    namespace[LOADED], namespace[PROBLEM] = None, ""
    package = find_package(folder)
    problem = find_problem(package, top)
    if not problem:
        try:
            module = import_chapter(package, top)
        except Exception as error:  # noqa: BLE001 (the student's code failing to import is the finding)
            problem = (f"importing your {PACKAGE}/ raised {type(error).__name__}: {error}{failing_line(error, package)}. "
                       f"Fix it in that chapter's notebook and export it again.")
    if problem:
        namespace[PROBLEM] = problem
        out(f"Your library: {problem}")
        return None
    names = getattr(module, "__all__", [n for n in vars(module) if not n.startswith("_")])
    namespace.update({name: getattr(module, name) for name in names})
    namespace[LOADED] = needed_chapters(package, top)
    out(f"Your library ({PACKAGE}/ {where(package, folder)}): {short(namespace[LOADED])}, all yours")
    return module
