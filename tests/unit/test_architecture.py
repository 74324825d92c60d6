"""The package's map (docs/architecture.md) matches the code, and the layers import only downwards:
student/ never imports build/ or grading/ (it is published alone), and the judge's kernel side imports
nothing of the course (it is shipped as text into a kernel the student controls)."""
import ast
import re
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


def test_the_modules_the_judge_ships_as_text_import_nothing_of_the_course_and_run_in_a_fresh_scope():
    """probes.SHIPPED's modules are compiled in the kernel from their text alone, each in a scope of its own: an
    import of the course or a relative one, or a read of `__file__`, would break there or run code the student can
    replace."""
    from autograder.grading.judge import probes
    wrong, trees = [], {}
    for name, module in probes.SHIPPED.items():
        path = Path(module.__file__)
        wrong += [f"{name} imports {imported}" for imported in every_import(path) if imported.startswith(("autograder", "."))]
        trees[name] = ast.parse(path.read_text(encoding="utf-8"))
        wrong += [f"{name} reads __file__" for node in ast.walk(trees[name])
                  if isinstance(node, ast.Name) and node.id == "__file__"]
    assert not wrong, "; ".join(wrong)
    for tree in trees.values():
        exec(compile(tree, "<babygrad probe>", "exec"), {})             # defines its names without the course


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
