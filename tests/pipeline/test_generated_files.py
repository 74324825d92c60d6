"""Generated files are generated: rebuilding from chapters/*.py reproduces what is committed, and
the student versions leak neither solutions nor hidden tests.

Two layers: the source notebooks and earlier_chapters.py are regenerated in memory in milliseconds
(a chapter edited but not rebuilt fails at once, and conftest runs these tests first); the full
rebuild executes every solution and compares every committed generated file by meaning
(autograder/build/generated_files.py). Failures name the first differing file, cell and output; nothing
asks pytest to diff large text.

What the build makes and .gitignore leaves out is not compared, as nothing of it is committed:
demo/submitted/ (the demo students, made from the committed release and source notebooks and catalogue/
whenever they are needed: `make demo`, helpers/demo_students.py, conftest's course copies) and
solutions/<id>/earlier_chapters.py (release/<id>/'s, which is compared, byte for byte: the rebuild
proves they are alike, and `make setup` copies it)."""
import ast
import json
from pathlib import Path

import nbformat
import pytest
from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme, ClearSolutions
from traitlets.config import Config

from autograder.build.generated_files import (
    compare_cells,
    compare_notebooks,
    compare_trees,
    digest,
    first_text_difference,
)
from autograder.build import pipeline as build
from autograder.build import student_config
from autograder.course import Course
from autograder.grading.feedback_guard import leaked_lines, secret_lines

from helpers.course_paths import ROOT, course_files, gitignore_patterns, left_out
from helpers.readable_text import file_text

COURSE = Course(ROOT)
CHAPTERS = [c.id for c in COURSE.chapters]
ASSIGNMENTS = [c.id for c in COURSE.assignments]      # the chapters and the bonus assignments (built alike)
GENERATED = [COURSE.config.SOURCE_DIR, COURSE.config.RELEASE_DIR, COURSE.config.SOLUTIONS_DIR]


def files_under(root, folder, chapter_id):
    base = root / folder
    return sorted(p.relative_to(root) for p in base.rglob("*") if p.is_file() and chapter_id in p.parts
                  and "__pycache__" not in p.parts)


def committed_under(folder, chapter_id):
    """The chapter's committed files in `folder` (git's list, or .gitignore's walk in a copy without .git)."""
    return sorted(Path(p) for p in course_files() if Path(p).parts[0] == folder and chapter_id in Path(p).parts)


def made_under(root, folder, chapter_id):
    """What the build made of the chapter in `folder`, without what .gitignore leaves out (never committed)."""
    patterns = gitignore_patterns()
    return [p for p in files_under(root, folder, chapter_id) if not left_out(p.as_posix(), patterns)]


@pytest.mark.parametrize("chapter_id", ASSIGNMENTS)
def test_source_notebooks_are_current(repo_course, chapter_id):
    """Seconds, not minutes: the source notebook and earlier_chapters.py as the chapter script makes them."""
    chapter = repo_course.chapter(chapter_id)
    path = repo_course.notebook(repo_course.config.SOURCE_DIR, chapter)
    made = json.loads(nbformat.writes(build.source_notebook(repo_course, chapter)))
    difference = compare_notebooks(str(path.relative_to(ROOT)), json.loads(path.read_text(encoding="utf-8")), made)
    assert difference is None, str(difference)
    provided = path.parent / build.PROVIDED_MODULE
    if chapter in repo_course.bonus:            # it runs on the student's own library, never on the course's
        assert not provided.exists(), f"{provided.relative_to(ROOT)}: a bonus assignment gets no earlier chapters"
        return
    expected = build.earlier_chapters(repo_course, chapter)
    text = provided.read_text(encoding="utf-8")
    assert digest(text.encode()) == digest(expected.encode()), \
        f"{provided.relative_to(ROOT)}: {first_text_difference(text, expected)} (run `make build` and commit)"


def student_config_folders(course):
    release = course.root / course.config.RELEASE_DIR
    return [release] + [release / chapter.id for chapter in course.assignments]


def test_student_nbgrader_configs_are_current(repo_course):
    """release/ and each chapter folder carry the students' nbgrader_config.py as autograder/build/student_config.py
    writes it from course_config.py: Validate outside the course root reads nothing else."""
    expected = student_config.text(repo_course.config)
    for folder in student_config_folders(repo_course):
        path = folder / student_config.FILE_NAME
        assert path.is_file(), f"{path.relative_to(ROOT)} is missing (run `make build` and commit)"
        text = path.read_text(encoding="utf-8")
        assert digest(text.encode()) == digest(expected.encode()), \
            f"{path.relative_to(ROOT)}: {first_text_difference(text, expected)} (run `make build` and commit)"


# What nbgrader's generate_assignment and generate_solution do to a source cell's text, short of
# executing it: run in memory, they say in seconds whether release/ and solutions/ are stale.
VERSION_STEPS = {"RELEASE_DIR": (ClearSolutions, ClearHiddenTests, ClearMarkScheme),
                 "SOLUTIONS_DIR": (ClearMarkScheme, ClearHiddenTests)}


@pytest.mark.parametrize("chapter_id", ASSIGNMENTS)
def test_student_and_solution_versions_are_current(repo_course, chapter_id):
    """Every cell's kind, id and text in release/ and solutions/ as nbgrader makes them from the source."""
    chapter = repo_course.chapter(chapter_id)
    config = Config()
    repo_course.config.configure_nbgrader(config)
    for folder, steps in VERSION_STEPS.items():
        made = build.source_notebook(repo_course, chapter)
        for step in steps:
            made, _ = step(config=config).preprocess(made, {})
        path = repo_course.notebook(getattr(repo_course.config, folder), chapter)
        committed = nbformat.read(path, as_version=4)
        assert len(committed.cells) == len(made.cells), \
            f"{path.relative_to(ROOT)}: {len(committed.cells)} cells, the source makes {len(made.cells)} (run `make build`)"
        for index, (have, want) in enumerate(zip(committed.cells, made.cells)):
            difference = compare_cells({**have, "metadata": {}, "outputs": [], "execution_count": None},
                                       {**want, "metadata": {}, "outputs": [], "execution_count": None})
            assert difference is None, \
                f"{path.relative_to(ROOT)}: cell {index} ({have.get('id')}){difference[0]}: {difference[1]} (run `make build`)"


@pytest.mark.parametrize("chapter_id", ASSIGNMENTS)
def test_rebuilding_reproduces_the_committed_files(rebuilt, chapter_id):
    rebuilt_course = rebuilt(chapter_id)
    for folder in GENERATED:
        committed = committed_under(folder, chapter_id)
        made = made_under(rebuilt_course.root, folder, chapter_id)
        missing, extra = sorted(set(made) - set(committed)), sorted(set(committed) - set(made))
        assert not missing and not extra, \
            f"{folder}/: not committed {missing[:3]}, no longer built {extra[:3]}: run `make build` and commit"
        difference = compare_trees(ROOT, rebuilt_course.root, [p.as_posix() for p in committed])
        assert difference is None, str(difference)
    solved, released = (rebuilt_course.root / getattr(COURSE.config, folder) / chapter_id / build.PROVIDED_MODULE
                        for folder in ("SOLUTIONS_DIR", "RELEASE_DIR"))
    assert solved.is_file() == released.is_file()
    assert not released.is_file() or solved.read_bytes() == released.read_bytes(), \
        f"the build's {solved.relative_to(rebuilt_course.root)} differs from release/'s, which `make setup` copies"


def test_rebuilding_reproduces_the_files_beside_the_chapter_folders(rebuilt):
    """release/'s own files, which belong to no chapter (the students' nbgrader_config.py)."""
    rebuilt_course = rebuilt()
    def files(root):
        return sorted(p.relative_to(root).as_posix() for p in (root / COURSE.config.RELEASE_DIR).iterdir()
                      if p.is_file())
    assert files(ROOT) == files(rebuilt_course.root), "run `make build` and commit"
    difference = compare_trees(ROOT, rebuilt_course.root, files(ROOT))
    assert difference is None, str(difference)


def test_rebuilding_reproduces_the_readme(rebuilt):
    """README.md as `python -m autograder readme` leaves it after the rebuild (its table from the rebuilt sources)."""
    rebuilt_course = rebuilt()
    committed, made = (root / "README.md" for root in (ROOT, rebuilt_course.root))
    text, expected = committed.read_text(encoding="utf-8"), made.read_text(encoding="utf-8")
    assert digest(text.encode()) == digest(expected.encode()), \
        f"README.md: {first_text_difference(text, expected)} (run `make build` and commit)"


@pytest.mark.parametrize("chapter_id", ASSIGNMENTS)
def test_release_leaks_no_solution_and_no_hidden_test(repo_course, chapter_id):
    chapter = repo_course.chapter(chapter_id)
    source = nbformat.read(repo_course.notebook(repo_course.config.SOURCE_DIR, chapter), as_version=4)
    all_source = "\n".join(c.source for c in source.cells)
    secret = secret_lines(all_source, "SOLUTION") | secret_lines(all_source, "HIDDEN TESTS")
    # Earlier chapters' solved code is handed out on purpose (earlier_chapters.py): a line of this
    # chapter's solution that also stands there (`else:`, `p.grad = None`) is public already.
    provided = repo_course.notebook(repo_course.config.SOURCE_DIR, chapter).parent / "earlier_chapters.py"
    if provided.exists():
        secret -= {line.strip() for line in provided.read_text(encoding="utf-8").splitlines()}
    release_files = [ROOT / p for p in files_under(ROOT, repo_course.config.RELEASE_DIR, chapter_id)]
    assert release_files
    for path in release_files:
        text = file_text(path)
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, path
        leaked = leaked_lines(secret, text)
        assert leaked == [], f"{path} leaks: {leaked[:5]}"


@pytest.mark.parametrize("chapter_id", ASSIGNMENTS)
def test_solutions_are_executed_and_carry_no_hidden_tests(repo_course, chapter_id):
    chapter = repo_course.chapter(chapter_id)
    source = nbformat.read(repo_course.notebook(repo_course.config.SOURCE_DIR, chapter), as_version=4)
    hidden = secret_lines("\n".join(c.source for c in source.cells), "HIDDEN TESTS")
    solution = nbformat.read(repo_course.notebook(repo_course.config.SOLUTIONS_DIR, chapter), as_version=4)
    text = "\n".join(c.source for c in solution.cells)
    assert "HIDDEN TESTS" not in text
    assert hidden or chapter in repo_course.bonus, "a chapter without hidden tests"    # the bonus has none
    assert not any(line in text for line in hidden)
    code = [c for c in solution.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), "solutions/ must be executed"
    errors = [(c.id, o.get("ename")) for c in code for o in c.outputs
              if o.output_type == "error" or (o.output_type == "stream" and o.name == "stderr")]
    assert errors == []


def last_statement(source):
    body = ast.parse(source).body
    return body[-1] if body else None


@pytest.mark.parametrize("chapter_id", ASSIGNMENTS)
def test_source_notebook_follows_nbgrader_rules(repo_course, chapter_id):
    """Outputs cleared, python3 kernel, every test cell ends in an assertion (with and without its
    hidden part: an expression would be read as partial credit), unique grade ids, and some points."""
    chapter = repo_course.chapter(chapter_id)
    notebook = nbformat.read(repo_course.notebook(repo_course.config.SOURCE_DIR, chapter), as_version=4)
    assert notebook.metadata.kernelspec.name == repo_course.config.KERNEL_NAME == "python3"
    points, ids = 0, []
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
        if meta:
            ids.append(meta["grade_id"])
        if meta.get("grade") and cell.cell_type == "markdown":
            assert meta["solution"] and not meta["locked"], f"{meta['grade_id']}: a written answer is the student's"
        elif meta.get("grade"):
            points += meta["points"]
            visible = "\n".join(line for line in cell.source.split("### BEGIN HIDDEN TESTS")[0].splitlines())
            for version in (cell.source, visible):
                assert isinstance(last_statement(version), ast.Assert), f"{meta['grade_id']} must end in an assert"
            assert meta["locked"]
    assert len(ids) == len(set(ids)), "grade ids must be unique"
    assert points > 0, "a chapter without points"


def test_readme_chapter_table_is_current(repo_course):
    from autograder.build.readme import with_chapter_table
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "<!-- chapters:begin -->" in text
    expected = with_chapter_table(text, repo_course)
    assert digest(expected.encode()) == digest(text.encode()), \
        f"README.md's chapter table is stale ({first_text_difference(text, expected)}): run `make build` " \
        "(or `python -m autograder readme`)"


@pytest.mark.parametrize("chapter_id", CHAPTERS)
def test_provided_code_does_not_shadow_python_builtins(repo_course, chapter_id, tmp_path):
    """`from earlier_chapters import *` must leave sum, abs, pow, ... as Python defines them."""
    import builtins
    import runpy
    folder = repo_course.notebook(repo_course.config.SOURCE_DIR, repo_course.chapter(chapter_id)).parent
    namespace = runpy.run_path(str(folder / "earlier_chapters.py"))
    exported = namespace.get("__all__", [n for n in namespace if not n.startswith("_")])
    assert [n for n in exported if hasattr(builtins, n)] == []
    assert "Tensor" in exported or chapter_id <= "ch02"
