"""A student's chapter notebook → one module of their own package, `mybabygrad/`.

The course grades each chapter on its own, with the course's finished earlier chapters. This is the
other half: the code the student wrote, kept as a library (`python -m autograder export NOTEBOOK`,
or the "Keep your library" cell at the end of each notebook). It takes the notebook's `export`
cells as they are now, the student's exercise cells and the provided ones, the same cells the
build hands on to later chapters as `earlier_chapters.py`.
"""
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from autograder import cell_marks

PACKAGE = "mybabygrad"
EXPORT_TAG = "export"
COURSE_PROVIDED = "earlier_chapters.py"       # next to a notebook: names the chapters it builds on
SECTION = re.compile(r"^# ════ (ch\d\d_\w+) ════$", re.MULTILINE)
ANY_SECTION = re.compile(r"^# ════ .* ════$", re.MULTILINE)
CHAPTER_MODULE = re.compile(r"^ch\d\d_\w+$")
# What ClearSolutions leaves in an exercise the student has not written yet (course_config's code_stub).
STUB = re.compile(r"# YOUR CODE HERE\s*\n\s*raise NotImplementedError\(\)")
COLAB_DRIVE = Path("/content/drive/MyDrive/babygrad")   # the folder the notebooks' text tells Colab users to use



def exports_trailer(import_line):
    """The end of a module of exported chapters (earlier_chapters.py, a mybabygrad module): its __all__.
    `@tensor_method def sum(...)` also binds `sum` in the module, and without this list `import_line`
    (`from earlier_chapters import *`, `from .ch02_tensor import *`) would replace Python's own sum()."""
    return (f"\n# ════ what `{import_line}` brings in ════\nimport builtins as _builtins\n\n"
            "__all__ = [_name for _name in dir() if not _name.startswith(\"_\") and not hasattr(_builtins, _name)]\n")


def export_sources(notebook):
    """The source of each `export` cell, solution markers removed, headed by its cell id: the code a
    chapter hands on (to earlier_chapters.py from the course's scripts, to mybabygrad/ from a student's
    notebook)."""
    sources = []
    for cell in notebook.cells:
        if cell.cell_type == "code" and EXPORT_TAG in cell.metadata.get("tags", []):
            code = cell_marks.without_solution_markers(cell.source)
            sources.append(f"# ── cell {cell.get('id', '?')!r} ──\n" + code.strip() + "\n")
    return sources


@dataclass(frozen=True)
class Export:
    """What one export wrote: the module, the chapters it imports, the exercises still to write."""

    module: Path
    needs: tuple
    unfinished: tuple
    missing: tuple          # chapters it imports that the package does not hold yet

    def summary(self):
        lines = [f"Wrote {self.module}"]
        if self.unfinished:
            lines.append(f"  still unfinished (they raise NotImplementedError): {', '.join(self.unfinished)}")
        if self.missing:
            lines.append(f"  it builds on {', '.join(self.missing)}, not in {self.module.parent} yet: export those "
                         f"notebooks too (until then USE_MY_LIBRARY takes them from the course)")
        return "\n".join(lines)


def chapter_module(notebook_path):
    """`release/ch03/autodiff.ipynb` → `ch03_autodiff`, the name the chapter has everywhere in the course."""
    path = Path(notebook_path)
    name = f"{path.parent.name}_{path.stem}"
    if not CHAPTER_MODULE.match(name):
        raise ValueError(f"{path} is not in a chapter folder (ch01, ch02, ...): cannot name its module")
    return name


def course_sections(text):
    """earlier_chapters.py's text → {chapter module: its code}, for the chapters that export code
    (chapter 1 exports none), without the file's header and its __all__ trailer."""
    sections, marks = {}, list(ANY_SECTION.finditer(text))
    for mark, following in zip(marks, marks[1:] + [None]):
        name = SECTION.match(mark.group(0))
        code = text[mark.end():following.start() if following else len(text)]
        if name and code.strip():
            sections[name.group(1)] = code
    return sections


# A chapter before its deadline, in a published earlier_chapters.py: its section holds this instead of the
# course's code (autograder/build/publish.py), and the notebook runs on the student's own export of it.
OPEN_MARK = "# still open: "


def open_section(name):
    """The section that stands for chapter `name` (`ch03_autodiff`) while it is open."""
    chapter = name.split("_")[0]
    return (f"{OPEN_MARK}{chapter} is not past its deadline, so the course does not hand out its code yet.\n"
            f"# This notebook runs on your own {chapter}: export it (the \"Keep your library\" cell at its end).\n"
            f"raise ImportError(\"{chapter} is still open: export your {chapter} notebook to mybabygrad/ first\")\n")


def open_chapters(text):
    """The chapters of an earlier_chapters.py text that are still open (their code withheld)."""
    return tuple(name for name, code in course_sections(text).items() if code.strip().startswith(OPEN_MARK))


def earlier_modules(folder):
    """The chapters a notebook in `folder` builds on, read from the earlier_chapters.py next to it."""
    provided = Path(folder) / COURSE_PROVIDED
    return tuple(course_sections(provided.read_text(encoding="utf-8"))) if provided.exists() else ()


def unfinished_exercises(notebook):
    """The ids of the `export` cells that are still the release's stub."""
    return tuple(cell_marks.marks(cell).get("grade_id", cell.get("id", "?")) for cell in notebook.cells
                 if cell.cell_type == "code" and EXPORT_TAG in cell.metadata.get("tags", [])
                 and STUB.search(cell.source))


def module_text(name, needs, sources):
    imports = "".join(f"from .{earlier} import *\n" for earlier in needs)
    return (f'"""{name}: your own code, exported from your notebook by `python -m autograder export`.\n\n'
            f'Export the notebook again to update it; edits here are overwritten."""\n'
            f"import numpy as np\n\n{needs_check(name, needs)}{imports}\n\n" + "\n\n".join(sources)
            + exports_trailer(f"from .{name} import *"))


def needs_check(name, needs):
    """Code that, imported as part of the package, names the earlier chapters the package does not hold yet,
    instead of Python's "No module named" for the first one. (USE_MY_LIBRARY runs the module's code outside a
    package, with the chapters it needs already in place: there `__package__` is empty and it does nothing.)"""
    if not needs:
        return ""
    return (f"import importlib.util as _spec\n\n_missing = [_m for _m in {list(needs)!r} "
            "if __package__ and _spec.find_spec(f\"{__package__}.{_m}\") is None]\n"
            "if _missing:\n"
            f"    raise ImportError(\"{name} builds on chapters not exported yet: \" + \", \".join(_missing) + \". Export "
            "those notebooks too (python -m autograder export NOTEBOOK, or the 'Keep your library' cell at their "
            "end), then import again.\")\n\n")


def init_text(chapters):
    imports = "".join(f"from .{name} import *\n" for name in chapters)
    return (f'"""Your babygrad: the chapters you wrote, one module each, in course order.\n\n'
            f'`python -m autograder export NOTEBOOK` adds or updates a chapter; CHAPTERS says which are here."""\n'
            f"CHAPTERS = {list(chapters)!r}\n\n{imports}")


def write_module(notebook, name, needs, target):
    """Write mybabygrad/<name>.py into `target` from a notebook object, and refresh the package's __init__."""
    package = Path(target) / PACKAGE
    sources, unfinished = export_sources(notebook), unfinished_exercises(notebook)
    if not sources:
        raise ValueError(f"{name} has no export cells, so there is nothing of it to keep: later chapters do not "
                         f"build on its code, and nothing was written to {package}")
    package.mkdir(parents=True, exist_ok=True)
    module = package / f"{name}.py"
    module.write_text(module_text(name, needs, sources), encoding="utf-8")
    chapters = sorted(p.stem for p in package.glob("ch*.py") if CHAPTER_MODULE.match(p.stem))
    (package / "__init__.py").write_text(init_text(chapters), encoding="utf-8")
    missing = tuple(earlier for earlier in needs if earlier not in chapters)
    return Export(module, tuple(needs), unfinished, missing)


def export_notebook(notebook_path, target=None):
    """Export a saved chapter notebook; `target` defaults to the folder holding the chapter folders."""
    path = Path(notebook_path).resolve()
    import nbformat  # here, not at the top: every chapter's set-up cell imports this module

    notebook = nbformat.read(path, as_version=4)
    target = Path(target) if target is not None else path.parent.parent
    return write_module(notebook, chapter_module(path), earlier_modules(path.parent), target)


def running_notebook_path():
    """The notebook this kernel runs, where the front end says so (else None).

    Jupyter Server 2 gives each kernel JPY_SESSION_NAME (the notebook's path, relative to the
    server's root, and the kernel starts in the notebook's folder); VS Code sets __vsc_ipynb_file__.
    """
    import __main__
    candidates = [getattr(__main__, "__vsc_ipynb_file__", None), os.environ.get("JPY_SESSION_NAME")]
    for candidate in filter(None, candidates):
        for path in (Path(candidate), Path.cwd() / Path(candidate).name):
            if path.suffix == ".ipynb" and path.is_file():
                return path.resolve()
    return None


def colab_notebook():
    """The notebook open in Colab, as Colab's front end holds it (Colab keeps no file of it), else None."""
    try:
        from google.colab import _message
    except ImportError:
        return None
    reply = _message.blocking_request("get_ipynb", timeout_sec=30)
    import nbformat

    return nbformat.reads(json.dumps(reply["ipynb"]), as_version=4) if reply else None


def export_my_chapter(name, out=print):
    """The "Keep your library" cell: export the notebook this kernel runs (its saved version)."""
    notebook = colab_notebook()
    if notebook is not None:
        if not COLAB_DRIVE.parent.exists():
            out("Mount your Google Drive first (Files panel → Mount Drive), then run this cell again: "
                f"your library is kept in {COLAB_DRIVE / PACKAGE}, where later chapters find it.")
            return None
        result = write_module(notebook, name, earlier_modules("."), COLAB_DRIVE)
    else:
        path = running_notebook_path()
        if path is None:
            out(f"Cannot tell which file this notebook is (this front end does not say). Save it, then run in a "
                f"terminal, in the notebook's folder:\n    python -m autograder export {name.split('_', 1)[1]}.ipynb")
            return None
        out(f"Exporting the saved {path.name} (save first if you changed it since).")
        result = export_notebook(path)
    out(result.summary())
    return result
