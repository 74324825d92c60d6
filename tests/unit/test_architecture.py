"""The package's map (docs/architecture.md) matches the code, and the layers import only downwards:
student/ never imports build/ or grading/ (it is published alone), and the judge's kernel side imports
nothing of the course (it is shipped as text into a kernel the student controls)."""
import ast
import contextlib
import io
import re
import sys
from pathlib import Path

import pytest


from helpers.course_paths import ROOT

PACKAGE = ROOT / "autograder"
MAP = ROOT / "docs" / "architecture.md"
SECTIONS = {"Neutral modules": PACKAGE, "`student/`": PACKAGE / "student", "`build/`": PACKAGE / "build",
            "`grading/`": PACKAGE / "grading"}


def mapped_names():
    """{package folder: names in the first column of its section's table} of docs/architecture.md."""
    names, folder = {}, None
    for line in MAP.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            folder = next((path for title, path in SECTIONS.items() if line[3:].startswith(title)), None)
        elif folder and line.startswith("| `"):
            names.setdefault(folder, set()).update(re.findall(r"`([\w/]+)`", line.split("|")[1]))
    return names


def modules_of(folder):
    """The names a map must give for `folder`: its modules and its subfolders (as `name/`)."""
    found = {p.stem for p in folder.glob("*.py") if p.stem != "__init__" or folder.name == "grading"}
    found |= {f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").is_file() and p not in SECTIONS.values()}
    return found


@pytest.mark.parametrize("folder", list(SECTIONS.values()), ids=lambda p: p.name)
def test_the_map_names_every_module_and_nothing_else(folder):
    named, present = mapped_names().get(folder, set()), modules_of(folder)
    assert named == present, (f"docs/architecture.md, {folder.relative_to(ROOT)}: not on the map "
                              f"{sorted(present - named)}; on the map but gone {sorted(named - present)}")


def module_level_imports(path):
    """The autograder modules `path` imports when it is imported (not those a function imports lazily)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def every_import(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            yield "." * node.level + (node.module or "")
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_the_student_side_imports_neither_build_nor_grading():
    wrong = [f"{path.relative_to(ROOT)} imports {name}" for path in sorted((PACKAGE / "student").rglob("*.py"))
             for name in module_level_imports(path) if name.startswith(("autograder.build", "autograder.grading"))]
    assert not wrong, "; ".join(wrong)


def test_the_neutral_modules_import_no_layer_when_imported():
    wrong = [f"{path.name} imports {name}" for path in sorted(PACKAGE.glob("*.py"))
             for name in module_level_imports(path)
             if name.startswith(("autograder.student", "autograder.build", "autograder.grading"))]
    assert not wrong, "; ".join(wrong)


def test_the_kernel_side_of_the_judge_imports_nothing_of_the_course():
    wrong = [f"{path.name} imports {name}" for path in sorted((PACKAGE / "grading/judge/in_kernel").glob("*.py"))
             for name in every_import(path) if name.startswith(("autograder", "."))]
    assert not wrong, "; ".join(wrong)


def kernel_unsafe_imports(source):
    """What a file shipped as text into a kernel imports beyond NumPy and the standard library (relative imports
    too: a shipped file runs in a fresh scope, outside any package)."""
    allowed = set(sys.stdlib_module_names) | {"numpy"}
    for node in ast.walk(ast.parse(source)):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            ["." * node.level + (node.module or "")] if isinstance(node, ast.ImportFrom) else []
        yield from (name for name in names if name.startswith(".") or name.split(".")[0] not in allowed)


def test_a_course_import_is_told_apart_from_numpy_and_the_standard_library():
    source = "import gzip\nimport numpy as np\nfrom autograder.student.checks import describe\nfrom . import slow\n"
    assert list(kernel_unsafe_imports(source)) == ["autograder.student.checks", "."]


def test_every_file_shipped_to_the_kernel_imports_only_numpy_and_the_standard_library():
    """probes.SHIPPED's files are sent as text and compiled in the student's kernel, where the course is not
    installed: an import of `autograder` works in the checks and fails only in the judge's probe."""
    from autograder.grading.judge.probes import SHIPPED
    wrong = [f"{module.__name__} imports {name}" for module in SHIPPED.values()
             for name in kernel_unsafe_imports(Path(module.__file__).read_text(encoding="utf-8"))]
    assert not wrong, "; ".join(wrong)


def test_every_file_shipped_to_the_kernel_runs_alone_in_a_fresh_scope_and_writes_no_stderr():
    """As worker.shipped compiles it: no `__file__`, no package, and nothing on stderr (which zeroes a cell)."""
    from autograder.grading.judge.probes import SHIPPED
    for name, module in SHIPPED.items():
        source = Path(module.__file__).read_text(encoding="utf-8")
        assert "__file__" not in {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}, name
        scope, stderr = {}, io.StringIO()
        with contextlib.redirect_stderr(stderr):
            exec(compile(source, "<babygrad probe>", "exec"), scope)  # noqa: S102 (the course's own file)
        assert stderr.getvalue() == "", name
        public = {n for n in vars(module) if not n.startswith("_") and callable(getattr(module, n))}
        assert public <= set(scope), f"{name}: {sorted(public - set(scope))} missing when run alone"


def test_grading_imports_nothing_of_the_build():
    """A grading machine (a Dask worker, Gradescope) carries the grading kit, not the build."""
    wrong = [f"{path.relative_to(ROOT)} imports {name}" for path in sorted((PACKAGE / "grading").rglob("*.py"))
             for name in every_import(path) if name.startswith("autograder.build")]
    assert not wrong, "; ".join(wrong)


def test_tests_share_code_through_helpers_not_through_each_other():
    """Shared test code lives in tests/helpers/. A test module or conftest imported by another test module
    is imported twice (once by pytest, once by the import), and what it shares hides among its tests."""
    tests = ROOT / "tests"
    pytest_modules = {path.stem for path in tests.glob("test_*.py")} | {"conftest"}
    wrong = [f"{path.relative_to(tests)} imports {name}" for path in sorted(tests.rglob("*.py"))
             for name in every_import(path) if name.split(".")[0] in pytest_modules]
    assert not wrong, "; ".join(wrong)


CHAPTER_SCRIPTS = sorted(p.stem for p in (ROOT / "chapters").glob("ch[0-9][0-9]_*.py"))
# Where an exercise's pieces live; `git ls-files | grep ch05_optimizer` finds them all.
EXERCISE_FOLDERS = [PACKAGE / "student" / "checks", PACKAGE / "grading" / "judge", PACKAGE / "grading" / "judge" / "in_kernel",
                    ROOT / "catalogue", ROOT / "tests" / "unit"]


def chapter_of(module):
    """The chapter script a module `chNN_<notebook>[_<part>]` (or `test_chNN_...`) belongs to, or None."""
    name = module.removeprefix("test_")
    return next((s for s in CHAPTER_SCRIPTS if name == s or name.startswith(f"{s}_")), None)


def test_a_module_named_for_a_chapter_names_a_real_one():
    """One name per exercise: a module of a chapter's material is named as that chapter's script, so a
    misspelt or renamed chapter leaves no module behind under a name nothing else uses."""
    wrong = [str(p.relative_to(ROOT)) for folder in EXERCISE_FOLDERS for p in folder.glob("*ch[0-9][0-9]_*.py")
             if chapter_of(p.stem) is None]
    assert wrong == [], f"named like a chapter, but no chapters/ script is theirs: {wrong}"
    assert {chapter_of(p.stem) for p in (ROOT / "catalogue").glob("ch*.py")} == set(CHAPTER_SCRIPTS)


def test_a_check_registered_in_a_chapters_module_is_called_by_that_chapter():
    """The visible check and the judge of an exercise sit in the modules named after the chapter that calls
    them: a check registered under another chapter's name would send a reader to the wrong files."""
    from autograder.grading.judge import JUDGED_CHECKS
    from autograder.student.checks.registry import CHECKS
    called = {s: set(re.findall(r"check\.(\w+)\(", (ROOT / "chapters" / f"{s}.py").read_text(encoding="utf-8")))
              for s in CHAPTER_SCRIPTS}
    wrong = [f"{function.__module__}: check.{name}" for registry in (CHECKS, JUDGED_CHECKS)
             for name, function in registry.items()
             if chapter_of(function.__module__.rsplit(".", 1)[1]) is not None
             and name not in called[chapter_of(function.__module__.rsplit(".", 1)[1])]]
    assert wrong == [], f"registered in a chapter's module, but that chapter never calls it: {wrong}"
