"""The student distribution (`python -m autograder publish`): chapters 1 to 3 released, 1 and 2 past
their deadline. Every byte of every published file is scanned for what students may not see yet, and
a release notebook runs from the published tree alone, in a fresh environment, as on Colab."""
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.build import frame, publish
from autograder.course import Course
from autograder.student import export, support

from helpers import fresh_env
from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT, course_files

COURSE = Course(ROOT)
RELEASED, SOLVED = ["ch01", "ch02", "ch03"], ["ch01", "ch02"]
SHORTEST = 25            # shorter marked lines are too generic to point at a leak (`pass`, `return out`)
INSTRUCTOR_ONLY = {"chapters", "source", "demo"}


def cell_lines(notebook_path):
    return [line for cell in nbformat.read(notebook_path, as_version=4).cells for line in cell.source.splitlines()]


def marked(lines, begin, end):
    """The lines strictly between `### BEGIN <x>` and `### END <x>` markers."""
    inside, found = False, []
    for line in lines:
        if line.strip() == begin:
            inside = True
        elif line.strip() == end:
            inside = False
        elif inside:
            found.append(line.strip())
    return found


def forbidden_lines(course, released, solved):
    """{line: what it is}: solution lines of every chapter not published with its solutions, and hidden-test
    lines of every chapter, both from the source notebooks. Left out as proving no leak: lines shorter
    than SHORTEST characters (`pass`, `return out`), and lines that stand anywhere in a release notebook
    or a published solution notebook (provided code, an idiom the text teaches such as
    `rng = np.random.default_rng(seed)`, or an earlier chapter's solution published on purpose after its
    deadline: chapter 1's scalar engine sorts its graph with the same lines as chapter 3's)."""
    notebooks = [course.notebook(course.config.RELEASE_DIR, c) for c in course.chapters]
    notebooks += [course.notebook(course.config.SOLUTIONS_DIR, course.chapter(cid)) for cid in solved]
    public = "\n".join("\n".join(cell_lines(path)) for path in notebooks)
    found = {}
    for chapter in course.chapters:
        lines = cell_lines(course.notebook(course.config.SOURCE_DIR, chapter))
        kinds = [("hidden-test line", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")]
        if chapter.id not in solved:
            kinds.append(("solution line", "### BEGIN SOLUTION", "### END SOLUTION"))
        for what, begin, end in kinds:
            for line in marked(lines, begin, end):
                if len(line) >= SHORTEST and line not in public:
                    found.setdefault(line, f"{what} of {chapter.id}")
    return found


# A run of text: what a needle can stand in. Binary files (MNIST's .gz) give few and short ones.
TEXT_RUN = re.compile(r"[^\x00-\x08\x0b-\x1f\ufffd]{%d,}" % SHORTEST)


def first_hit(tree, forbidden):
    """`file:line: what` for the first forbidden line found anywhere in `tree`, as written or as
    escaped inside a JSON string (a notebook), or None."""
    needles = {}
    for line, what in forbidden.items():
        needles[line] = what
        needles[json.dumps(line, ensure_ascii=False)[1:-1]] = what
        needles[json.dumps(line)[1:-1]] = what
    for path in sorted(p for p in Path(tree).rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", errors="replace")
        runs = "\n".join(TEXT_RUN.findall(text))
        for needle, what in needles.items():
            if needle in runs:
                number = text[:text.index(needle)].count("\n") + 1
                return f"{path.relative_to(tree)}:{number}: {what}: {needle[:100]!r}"
    return None


def later_chapters_support(tree, released):
    """Published files whose bytes are an unreleased chapter's earlier_chapters.py, by published path."""
    later = {COURSE.notebook(COURSE.config.RELEASE_DIR, c).parent.joinpath("earlier_chapters.py").read_bytes(): c.id
             for c in COURSE.chapters if c.id not in released}
    return [f"{p.relative_to(tree)} is {later[p.read_bytes()]}'s earlier_chapters.py"
            for p in Path(tree).rglob("*") if p.is_file() and p.read_bytes() in later]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The tree `python -m autograder publish` writes, made once per test run."""
    def make(folder):
        subprocess.run([sys.executable, "-m", "autograder", "--root", str(ROOT), "publish", str(folder / "tree"),
                        "--chapters", *RELEASED, "--solutions", *SOLVED], check=True, capture_output=True, timeout=300)
        return str(folder / "tree")
    return Path(once_per_run(tmp_path_factory, "published-course", make)[1])


def test_published_tree_holds_no_solution_or_hidden_test(published):
    hit = first_hit(published, forbidden_lines(COURSE, RELEASED, SOLVED))
    assert not hit, hit


def test_published_tree_holds_no_later_chapter_or_instructor_folder(published):
    paths = [p.relative_to(published) for p in published.rglob("*")]
    assert [p for p in paths if INSTRUCTOR_ONLY & set(p.parts)] == []
    assert later_chapters_support(published, RELEASED) == []
    release, solutions = (sorted(p.name for p in (published / f).iterdir() if p.is_dir())
                          for f in (COURSE.config.RELEASE_DIR, COURSE.config.SOLUTIONS_DIR))
    assert (release, solutions) == (RELEASED, SOLVED)
    shipped = sorted(p.name for p in (published / "autograder").iterdir() if p.is_dir())
    assert shipped == ["student"], f"published autograder/ holds {shipped}: build/ and grading/ (the judge) stay home"
    modules = ROOT / "autograder" / publish.STUDENT_PACKAGE / "checks"
    withheld = publish.chapter_checks(COURSE)
    named = [name for names in withheld.values() for name in names]
    assert [name for name in named if not (modules / f"{name}.py").is_file()] == [], "FIRST_NEEDED_BY names no module"
    assert {"ch05_optimizer", "ch05_optimizer_facts", "ch08_persistence_facts"} <= set(withheld["ch05"] + withheld["ch08"])
    later = [name for cid, names in withheld.items() if cid not in RELEASED for name in names]
    assert len(later) > 10 and [name for name in later if "published with chapter" not in
                                (published / "autograder" / "student" / "checks" / f"{name}.py").read_text()] == []


def test_a_fresh_clone_publishes_each_solution_with_its_earlier_chapters(tmp_path):
    """solutions/<id>/earlier_chapters.py is not committed: a clone's files alone, before any `make`, publish
    each solved chapter with release/<id>/'s, which the solution notebook imports."""
    clone = tmp_path / "clone"
    for name in course_files():
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, clone / name)
    assert not list(clone.glob(f"{COURSE.config.SOLUTIONS_DIR}/*/earlier_chapters.py"))
    tree = publish.publish(Course(clone), tmp_path / "tree", RELEASED, SOLVED)
    for chapter_id in SOLVED:
        provided = tree / COURSE.config.SOLUTIONS_DIR / chapter_id / "earlier_chapters.py"
        assert provided.read_bytes() == (ROOT / COURSE.config.RELEASE_DIR / chapter_id / provided.name).read_bytes()


def test_scan_finds_what_it_looks_for(tmp_path):
    """The scan is not vacuous: a solution line of chapter 3 and one with quotes (escaped in the JSON)
    planted in notebooks, a hidden-test line in a Python file, and chapter 4's release folder are each
    reported by file and line."""
    forbidden = forbidden_lines(COURSE, RELEASED, SOLVED)
    assert sum(what.startswith("solution line") for what in forbidden.values()) > 100
    ch03 = next(line for line, what in forbidden.items() if what == "solution line of ch03")
    quoted = next(line for line, what in forbidden.items() if what.startswith("solution line") and '"' in line)
    hidden = next(line for line, what in forbidden.items() if what == "hidden-test line of ch03")

    for name, line in (("one", ch03), ("two", quoted)):
        (tmp_path / name).mkdir()
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"x = 1\n    {line}\n")])
        nbformat.write(nb, tmp_path / name / "planted.ipynb")
        assert (first_hit(tmp_path / name, forbidden) or "").startswith("planted.ipynb:"), line
    (tmp_path / "three").mkdir()
    (tmp_path / "three" / "checks.py").write_text(f"a = 1\nb = 2\n{hidden}\n")
    assert (first_hit(tmp_path / "three", forbidden) or "").startswith("checks.py:3: hidden-test line of ch03")

    ch04 = COURSE.notebook(COURSE.config.RELEASE_DIR, COURSE.chapter("ch04")).parent
    shutil.copytree(ch04, tmp_path / "four" / "ch04")
    assert "solution line of ch03" in (first_hit(tmp_path / "four", forbidden) or "")
    assert later_chapters_support(tmp_path / "four", RELEASED) == \
        ["ch04/earlier_chapters.py is ch04's earlier_chapters.py"]


ORDER = [c.id for c in COURSE.chapters]


@pytest.mark.parametrize("newest", ORDER)
def test_each_release_point(newest, tmp_path):
    """Every chapter released in turn, the earlier ones past their deadline: the same scan. A chapter's own
    check modules are published with it, so their stand-ins (the course's version of the chapter's other
    exercises, to grade each one alone) must not be its solution: they answer from tables, fixtures or NumPy."""
    released, solved = ORDER[:ORDER.index(newest) + 1], ORDER[:ORDER.index(newest)]
    tree = publish.publish(COURSE, tmp_path / "tree", released, solved)
    hit = first_hit(tree, forbidden_lines(COURSE, released, solved))
    assert not hit, hit
    assert later_chapters_support(tree, released) == []
    bonus = [(tree / COURSE.config.RELEASE_DIR / b.id).is_dir() for b in COURSE.bonus]
    assert bonus and bonus == [newest == ORDER[-1]] * len(bonus), "the bonus comes out with the last chapter"
    assert all((b.title in (tree / "README.md").read_text()) == (newest == ORDER[-1]) for b in COURSE.bonus)


def test_publish_refuses_a_chapter_whose_earlier_chapters_are_unreleased(tmp_path):
    with pytest.raises(publish.PublishError, match="release ch02 too"):
        publish.publish(COURSE, tmp_path / "tree", ["ch01", "ch03"], ["ch01"])
    with pytest.raises(publish.PublishError, match="unreleased"):
        publish.publish(COURSE, tmp_path / "tree", ["ch01"], ["ch01", "ch02"])
    assert not (tmp_path / "tree").exists()


@pytest.mark.parametrize("solved", [["ch01", "ch02"], ["ch01"], []], ids=["ch03-open", "ch02-and-ch03-open",
                                                                       "all-open"])
def test_a_chapter_released_while_earlier_ones_are_open_ships_none_of_their_solutions(solved, tmp_path):
    """Overlapping deadlines: chapter 4 out while chapter 3 (and 2) are open. No line of an open chapter's
    solution is published; each open chapter's section of earlier_chapters.py says so, the others are kept."""
    released = ["ch01", "ch02", "ch03", "ch04"]
    tree = publish.publish(COURSE, tmp_path / "tree", released, solved)
    hit = first_hit(tree, forbidden_lines(COURSE, released, solved))
    assert not hit, hit
    assert later_chapters_support(tree, released) == []
    provided = (tree / "release" / "ch04" / "earlier_chapters.py").read_text(encoding="utf-8")
    opened = [c for c in released[1:3] if c not in solved]
    assert export.open_chapters(provided) == tuple(f"{c}_{COURSE.chapter(c).notebook}" for c in opened)
    course_copy = (ROOT / "release" / "ch04" / "earlier_chapters.py").read_text(encoding="utf-8")
    kept = {name: code for name, code in export.course_sections(course_copy).items()
            if name.split("_")[0] in solved}
    assert {name: export.course_sections(provided)[name] for name in kept} == kept
    assert (ROOT / "release" / "ch04" / "earlier_chapters.py").read_text(encoding="utf-8") == course_copy


def test_readme_names_only_what_is_published(published):
    readme = (published / "README.md").read_text(encoding="utf-8")
    links = [link for link in re.findall(r"\]\(([^)]+)\)", readme) if not link.startswith("http")]
    assert links and [link for link in links if not (published / link).exists()] == []
    for chapter in COURSE.chapters:
        assert (COURSE.config.colab_url(chapter) in readme) == (chapter.id in RELEASED), chapter.id
    assert COURSE.config.binder_url() in readme and COURSE.config.PUBLISHED_REPOSITORY in readme
    assert COURSE.config.REPOSITORY not in readme.replace(COURSE.config.PUBLISHED_REPOSITORY, "")
    assert not [name for name in INSTRUCTOR_ONLY if f"{name}/" in readme]


def test_the_student_nbgrader_settings_are_where_every_server_start_reads_them(published):
    """Validate reads nbgrader_config.py from the folder the Jupyter server started in (no parent folder):
    the tree's root (Binder, `jupyter lab release/`), release/ and each chapter folder all hold the student's."""
    student = (ROOT / "release" / "nbgrader_config.py").read_bytes()
    places = [published, published / "release"] + [published / "release" / cid for cid in RELEASED]
    assert [p for p in places if (p / "nbgrader_config.py").read_bytes() != student] == []


def test_requirements_install_the_published_package(published):
    import tomllib
    project = tomllib.loads((published / "pyproject.toml").read_text())
    packages = project["tool"]["setuptools"]["packages"]
    assert [p for p in packages if not (published / p.replace(".", "/") / "__init__.py").is_file()] == []
    assert project["project"]["name"] == frame.PACKAGE
    requirements = (published / "requirements.txt").read_text().splitlines()
    assert "-e ." in requirements and "nbgrader==0.9.6" in requirements
    assert [r for r in requirements if r.startswith("threadpoolctl==")], "the set-up cell imports it"
    assert not [r for r in requirements if r.startswith(("pytest", "dask", "psycopg", "playwright"))]
    assert (published / "runtime.txt").read_text() == (ROOT / "runtime.txt").read_text()


@pytest.mark.slow
def test_release_notebook_runs_from_the_published_tree_alone(published, tmp_path_factory, tmp_path):
    """As on Colab: the package pip-installed from the published tree (not editable, as from its git
    tag), the chapter 3 notebook alone in an empty folder, its support files served from the tree.
    Then chapter 3's solution scores in full with that package, and instructor commands refuse."""
    def make(folder):
        source = folder / "package-source"                # pip may write egg-info next to pyproject.toml
        shutil.copytree(published, source)
        env = fresh_env.create(folder / "venv")
        env.pip_install(str(source), "ipykernel", "nbclient")
        every_module = ("import importlib, pkgutil, autograder; print(*(importlib.import_module(m.name).__name__ "
                        "for m in pkgutil.walk_packages(autograder.__path__, 'autograder.')))")
        modules = env.run(env.python, "-c", every_module, cwd=folder).stdout.split()
        return str(env.root), modules
    root, modules = once_per_run(tmp_path_factory, "published-env", make)[1]
    env = fresh_env.FreshEnv(root)
    assert "autograder.student.checks" in modules and not [m for m in modules if m.startswith("autograder.grading")]

    chapter = COURSE.chapter("ch03")
    release = published / COURSE.config.RELEASE_DIR / chapter.id
    alone = tmp_path / "content"
    alone.mkdir()
    shutil.copy(release / f"{chapter.notebook}.ipynb", alone)
    with fresh_env.serve(release) as url:
        executed = env.execute(alone / f"{chapter.notebook}.ipynb", **{support.BASE_URL_VARIABLE: url})
    assert (alone / "earlier_chapters.py").read_bytes() == (release / "earlier_chapters.py").read_bytes()
    assert fresh_env.environment_errors(executed) == [], "set-up errors (import, name) in the published notebook"
    first_check = next(c for c in executed.cells if c.metadata.get("nbgrader", {}).get("grade"))
    (name, message), = [(o.ename, o.evalue) for o in first_check.outputs if o.output_type == "error"]
    assert name == "AssertionError" and len(message.strip()) > 20, "the first check gave no teaching message"
    assert f"Progress: 0/{COURSE.autograded_points(chapter)} points (0%)" in "".join(o.get("text", "") for o in executed.cells[-1].outputs)

    solved = tmp_path / "solved"                  # chapter 3's checks work with later chapters' withheld
    shutil.copytree(ROOT / COURSE.config.SOLUTIONS_DIR / chapter.id, solved)
    # beside a solution notebook, publish puts release/'s earlier_chapters.py (solutions/'s is not committed)
    shutil.copy2(ROOT / COURSE.config.RELEASE_DIR / chapter.id / "earlier_chapters.py", solved)
    assert fresh_env.errors(env.execute(solved / f"{chapter.notebook}.ipynb")) == [], "a check failed the solution"

    refused = subprocess.run([str(env.python), "-m", "autograder", "build"], cwd=published, capture_output=True,
                             text=True, env=env.env())
    assert refused.returncode and "invalid choice: 'build' (choose from 'check', 'export')" in refused.stderr
    listed = subprocess.run([str(env.python), "-m", "autograder", "--help"], cwd=published, capture_output=True,
                            text=True, env=env.env())
    assert listed.returncode == 0 and "{check,export}" in listed.stdout and " grade" not in listed.stdout


def test_a_copy_without_the_instructors_package_lists_only_the_students_commands(monkeypatch, capsys):
    from autograder import __main__ as cli
    monkeypatch.setattr(cli, "instructor_package", lambda: False)
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    shown = capsys.readouterr().out
    assert done.value.code == 0 and "{check,export}" in shown
    assert not [word for word in ("grade", "collect", "publish", "gradescope", "build", "root")
                if re.search(rf"(?<![\w.]){word}\b", shown)]
