"""The USE_MY_LIBRARY switch: a chapter built on the student's own earlier chapters instead of the course's.

The set-up cell calls `choose_earlier_chapters(USE_MY_LIBRARY)` before the chapter's
`from earlier_chapters import *`. With the switch on, `earlier_chapters` becomes one module built
in course order from the student's `mybabygrad/` chapters, and from the course's code for any
chapter the package does not hold, so a student with chapters 2 and 3 exported can still open
chapter 5. Grading never sees the switch on: autograde sets it back (preprocessors.UseCourseChapters).

When a chapter is released before an earlier one is past its deadline, the published earlier_chapters.py
holds no code for the open one (export.open_section, written by autograder/build/publish.py): whatever the
switch, the open chapters come from the student's package, and the set-up cell says which did. Grading is
unchanged: autograde puts source/'s earlier_chapters.py, every chapter solved, in place of the student's.
"""
import os
import re
import sys
import types
from pathlib import Path

from autograder.student.export import (
    COLAB_DRIVE,
    COURSE_PROVIDED,
    PACKAGE,
    course_sections,
    open_chapters,
)

MODULE = "earlier_chapters"
MINE = "__babygrad_mine__"              # marks a module built from the student's package
RELATIVE_IMPORT = re.compile(r"^from \.\w+ import \*$", re.MULTILINE)


CHOSEN_FOLDER = "BABYGRAD_LIBRARY_FOLDER"    # a folder holding mybabygrad/, looked in first when set


def package_folders(folder="."):
    """Where mybabygrad/ may be: in $BABYGRAD_LIBRARY_FOLDER, next to the notebook, next to its chapter
    folder, in the Colab Drive folder. (A grading sandbox's environment never has the variable.)"""
    here = Path(folder).resolve()
    chosen = [Path(os.environ[CHOSEN_FOLDER]).resolve() / PACKAGE] if os.environ.get(CHOSEN_FOLDER) else []
    return chosen + [here / PACKAGE, here.parent / PACKAGE, COLAB_DRIVE / PACKAGE]


def find_package(folder="."):
    return next((p for p in package_folders(folder) if (p / "__init__.py").is_file()), None)


def assemble(namespace, sections, package, only=None):
    """Run each chapter in course order in `namespace`: the package's module if it holds the chapter (and
    `only`, when given, names it), else the course's code (all of it when `package` is None).

    `sections` is {chapter module: (course code, file name)}; returns the chapter names (mine, course)."""
    mine, course = [], []
    exec("import numpy as np", namespace)
    for name, (code, filename) in sections.items():
        own = package / f"{name}.py" if package and (only is None or name in only) else None
        if own and own.is_file():           # its `from .earlier import *` lines: those names are here already
            exec(compile(RELATIVE_IMPORT.sub("", own.read_text(encoding="utf-8")), str(own), "exec"), namespace)
            mine.append(name)
        else:
            exec(compile(code, filename, "exec"), namespace)
            course.append(name)
    return tuple(mine), tuple(course)


def build_module(package, course_file, only=None):
    """One `earlier_chapters` module: each chapter from the package if it holds it (of those in `only`,
    when given), else the course's."""
    import builtins
    module = types.ModuleType(MODULE, f"Earlier chapters: yours from {package}, the rest the course's.")
    sections = {name: (code, str(course_file))
                for name, code in course_sections(course_file.read_text(encoding="utf-8")).items()}
    namespace = module.__dict__
    namespace[MINE] = assemble(namespace, sections, package, only)
    namespace["__all__"] = [n for n in dir(module) if not n.startswith("_") and not hasattr(builtins, n)]
    return module


def short(names):
    return ", ".join(name.split("_")[0] for name in names) or "none"


class OpenChapterMissing(ImportError):
    """A chapter still open is not in the student's package: the notebook has nothing to build on."""


def still_open(course_file):
    """The earlier chapters whose code the course does not hand out yet (export.open_section)."""
    return open_chapters(course_file.read_text(encoding="utf-8")) if course_file.is_file() else ()


def choose_earlier_chapters(use_mine, folder=".", out=print):
    """Make the next `from earlier_chapters import *` load the student's chapters (True) or the course's,
    and the student's for every chapter still open, whatever the switch."""
    current = sys.modules.get(MODULE)
    if current is not None and hasattr(current, MINE):
        del sys.modules[MODULE]        # a run with the switch on came before: back to the file
    course_file = Path(folder) / COURSE_PROVIDED
    open_now = still_open(course_file)
    if not use_mine and not open_now:
        return None
    package = find_package(folder)
    missing = [name for name in open_now if package is None or not (package / f"{name}.py").is_file()]
    if missing:
        raise OpenChapterMissing(
            f"{short(missing)} {'is' if len(missing) == 1 else 'are'} not past the deadline yet, so the course does "
            f"not hand out that code: this notebook builds on your own. Export your {short(missing)} notebook (the "
            f"\"Keep your library\" cell at its end) into {PACKAGE}/, looked for in "
            f"{', '.join(str(p.parent) for p in package_folders(folder))}, then run this cell again.")
    if package is None:
        out(f"USE_MY_LIBRARY is True, but there is no {PACKAGE}/ in "
            f"{', '.join(str(p.parent) for p in package_folders(folder))}: this notebook uses the course's "
            f"earlier chapters. Export your earlier notebooks first (the \"Keep your library\" cell at their end).")
        return None
    module = build_module(package, course_file, only=None if use_mine else open_now)
    sys.modules[MODULE] = module
    mine, course = module.__dict__[MINE]
    opened = f" ({short(open_now)} still open: yours whatever USE_MY_LIBRARY says)" if open_now else ""
    out(f"Earlier chapters, yours ({package}): {short(mine)}{opened}; the course's: {short(course)}")
    return module
