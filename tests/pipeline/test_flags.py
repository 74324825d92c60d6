"""The flag report lists what a student wrote that reaches for the checker, builtins, sys.modules,
gc, frames, files, sockets, sqlite3, subprocesses, ctypes, importlib or exec/eval, by cell and line,
and stays silent on every honest chapter 3 answer (the perfect one and every catalogued alternative)."""
import csv
import shutil
import subprocess
import sys

import nbformat
import pytest

from autograder.build import submissions
from autograder.course import Course
from autograder.grading.flags import NOTICE, scan_notebook, scan_source

from helpers.course_paths import ROOT

COURSE = Course(ROOT)
CH03 = COURSE.chapter("ch03")
SOURCE = nbformat.read(COURSE.notebook(COURSE.config.SOURCE_DIR, CH03), as_version=4)
RELEASE = nbformat.read(COURSE.notebook(COURSE.config.RELEASE_DIR, CH03), as_version=4)
ANSWERS = submissions.solved_answers(SOURCE)
CATALOG = submissions.load_catalog(COURSE, CH03)


def perfect():
    return submissions.filled(RELEASE, ANSWERS)


def categories(notebook):
    return sorted({f.category for f in scan_notebook("s", notebook, SOURCE)})


@pytest.mark.parametrize("answer", [None] + CATALOG.ALTERNATIVES + CATALOG.MISTAKES,
                         ids=lambda m: m.name if m else "perfect")
def test_honest_answers_raise_no_flag(answer):
    """Right or wrong, an honest answer touches nothing it should not."""
    notebook = submissions.filled(RELEASE, submissions.with_mistakes(ANSWERS, [answer] if answer else []))
    assert scan_notebook("s", notebook, SOURCE) == []


def test_provided_code_raises_no_flag_even_when_an_editor_stripped_the_metadata():
    """Colab and VS Code may drop nbgrader's metadata: the provided cells, unchanged, are still not the
    student's code (they import autograder and call check)."""
    notebook = perfect()
    assert any("check" in c.source for c in notebook.cells if not c.metadata.get("nbgrader", {}).get("solution"))
    for cell in notebook.cells:
        if not cell.metadata.get("nbgrader", {}).get("solution"):
            cell.metadata.pop("nbgrader", None)
    assert scan_notebook("s", notebook, SOURCE) == []


HOSTILE = [  # (code, the categories it must raise)
    ("type(check).__getattribute__ = lambda self, name: (lambda *a, **k: None)", {"checker", "class patch"}),
    ("from autograder.student.verdict import Verdict", {"checker"}),
    ("import builtins\nbuiltins.print = lambda *a: None", {"builtins"}),
    ("__builtins__.len = lambda x: 0", {"builtins"}),
    ("import sys\nsys.modules['numpy'] = None", {"sys.modules"}),
    ("import gc\nfor o in gc.get_objects(): pass", {"gc"}),
    ("import sys\nsys._getframe(1).f_back.f_globals['x'] = 1", {"frames"}),
    ("import inspect\ninspect.currentframe()", {"frames"}),
    ("print(open('/etc/passwd').read())", {"files"}),
    ("print(open('../../source/ch03/autodiff.ipynb').read())", {"files"}),
    ("import pathlib\npathlib.Path('..').resolve()", {"files"}),
    ("import shutil\nshutil.rmtree('x')", {"files"}),
    ("np.load('../../../solutions/ch03/answers.npy')", {"files"}),
    ("import socket\nsocket.create_connection(('example.org', 80))", {"sockets"}),
    ("import sqlite3\nsqlite3.connect('../../../gradebook.db').execute('update grade set manual_score=1000')",
     {"sqlite3", "files"}),
    ("import subprocess\nsubprocess.Popen(['sleep', '600'], start_new_session=True)", {"subprocess"}),
    ("import os\nos.system('ls')", {"files", "subprocess"}),
    ("!ls ../..", {"subprocess"}),
    ("import ctypes\nctypes.string_at(0)", {"ctypes"}),
    ("import importlib\nimportlib.reload(np)", {"importlib"}),
    ("__import__('os')", {"importlib"}),
    ("exec('x = 1')", {"exec/eval"}),
    ("eval('1 + 1')", {"exec/eval"}),
    ("Tensor.__add__ = lambda a, b: a", {"class patch"}),
    ("setattr(Tensor, 'backward', None)", {"class patch"}),
    ("def broken(:\n    import sqlite3", {"sqlite3"}),           # does not parse: the line pass finds it
]


@pytest.mark.parametrize("code, expected", HOSTILE, ids=[code.splitlines()[-1][:40] for code, _ in HOSTILE])
def test_hostile_code_is_flagged_in_a_solution_cell_and_in_an_added_cell(code, expected):
    in_solution = submissions.filled(RELEASE, dict(ANSWERS, mul=ANSWERS["mul"] + "\n\n" + code))
    assert set(categories(in_solution)) == expected
    added = perfect()
    added.cells.insert(3, nbformat.v4.new_code_cell(code))
    assert set(categories(added)) == expected


def test_a_flag_names_the_cell_the_line_and_the_code():
    notebook = submissions.filled(RELEASE, dict(ANSWERS, mul=ANSWERS["mul"] + "\nimport sqlite3"))
    notebook.cells.insert(3, nbformat.v4.new_code_cell("x = 1\n\n    \nimport gc  # look around"))
    flags = scan_notebook("eve", notebook, SOURCE)
    last = len(ANSWERS["mul"].splitlines()) + 1
    assert {(f.student, f.cell, f.line, f.code, f.category) for f in flags} == {
        ("eve", "added cell 4", 4, "import gc  # look around", "gc"),
        ("eve", "mul", last, "import sqlite3", "sqlite3"),
    }


def test_patching_what_the_student_made_is_not_a_flag():
    assert scan_source("class Box:\n    pass\nBox.size = 3\nsetattr(Box, 'k', 1)") == []
    assert scan_source("W = Tensor(np.ones(2))\nW.grad = None\nself.W = W") == []
    assert scan_source("with open('notes.txt', 'w') as f:\n    f.write('hi')") == []


def test_a_copied_test_cell_is_not_the_students_code_but_a_new_grade_id_is():
    notebook = perfect()
    test_cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade"))
    notebook.cells.append(nbformat.from_dict(test_cell))                   # a copy: provided code
    forged = nbformat.v4.new_code_cell("import gc")
    forged.metadata["nbgrader"] = {"grade_id": "my_own", "solution": False, "grade": False, "locked": True}
    notebook.cells.append(forged)
    assert [(f.cell, f.category) for f in scan_notebook("s", notebook, SOURCE)] == [
        (f"added cell {len(notebook.cells)}", "gc")]


def test_flags_command_writes_the_csv_and_says_it_is_not_a_penalty(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(ROOT / "course_config.py", root)
    shutil.copytree(ROOT / "source" / "ch03", root / "source" / "ch03")
    course = Course(root)
    hostile = submissions.filled(RELEASE, dict(ANSWERS, mul=ANSWERS["mul"] + "\nimport subprocess"))
    submissions.write_submission(course, CH03, "eve", hostile, "submitted")
    submissions.write_submission(course, CH03, "ada", perfect(), "submitted")
    (root / "submitted" / "bob" / "ch03").mkdir(parents=True)
    (root / "submitted" / "bob" / "ch03" / "autodiff.ipynb").write_text("{ not json")

    done = subprocess.run([sys.executable, "-m", "autograder", "--root", str(root), "flags", "ch03"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert NOTICE in done.stdout
    assert "eve  mul:" in done.stdout and "[subprocess]  import subprocess" in done.stdout
    assert "bob: the notebook is not readable JSON" in done.stdout
    with open(root / "exports" / "ch03_flags.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["student"], r["cell"], r["code"], r["category"]) for r in rows] == [
        ("eve", "mul", "import subprocess", "subprocess")]
