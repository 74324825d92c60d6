"""The student distribution: a tree holding only what students may see, ready to be pushed as the
public course repository (course_config.PUBLISHED_REPOSITORY) or as an orphan branch.

It holds release/ of the chapters released so far, solutions/ of the chapters whose deadline passed,
the student side of the course package (what release notebooks, `check` and `export` import, without
the checks of unreleased chapters), the files that install it (pyproject.toml, requirements.txt,
runtime.txt for Binder) and a README written for students. Never chapters/, source/, demo/ or the
grading side (the judge restates solutions).

Terms overlap: chapter N+1 comes out while chapter N is open. Each chapter folder's earlier_chapters.py
holds the solved code of every earlier chapter, so the published copy has an open chapter's section
replaced (export.open_section): the notebook then runs on the student's own export of it
(student/my_library.py) and its set-up cell says so. Grading keeps source/'s copy, every chapter solved.
"""
import re
import shutil
import tomllib
from pathlib import Path

from autograder.build import frame, readme
from autograder.build.pipeline import PROVIDED_MODULE
from autograder.student.export import SECTION, open_section

# The student side of the package: autograder/student/ whole, and the neutral modules it reads (the CLI
# facade, nbgrader's cell marks, written questions). build/ and grading/ (with the judge's kernel side that
# restates chapter solutions) are left out: `check` and `export` run without them.
NEUTRAL_MODULES = ["__init__", "__main__", "cell_marks", "course", "questions"]
STUDENT_PACKAGE = "student"
PACKAGE_DATA = "data/mnist/*.gz"                    # in student/: all of MNIST: notebooks never download it
# What a student's environment needs from requirements.txt (its pins are kept): the notebooks' imports,
# JupyterLab with nbgrader's Validate, and what `check` runs notebooks with. Not grading, tests or Dask.
STUDENT_REQUIREMENTS = {"numpy", "matplotlib", "tqdm", "threadpoolctl", "nbgrader", "jupyterlab", "notebook", "nbconvert",
                        "nbclient", "nbformat", "ipykernel", "jupyter_client", "jupyter_server", "SQLAlchemy"}
CACHES = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
# Check modules written for one chapter are named after it (`ch05_optimizer.py`, `ch05_optimizer_facts.py`).
# Most hold the course's own version of what their chapter asks, swapped in so that each exercise is graded
# alone (ch02_tensor's stand-ins for chapter 2's Tensor methods, ch08_persistence_facts' state for chapter 8's
# state_dict, formulas chapter 4's layers in NumPy, slow's loops chapter 10's forwards), written so as not to be
# the chapter's solution (tests/system/test_publish.py scans every release point), but still the chapter's
# material: until their chapter is released they are published as WITHHELD_CHECKS, a module that
# checks/__init__ still imports, whose every name refuses. A later chapter is released only with every chapter
# before it (check_deadlines), so chapter 3's ops, shared with later chapters' checks, are there when needed.
# Besides the named ones, the shared modules first needed by a later chapter:
FIRST_NEEDED_BY = {"formulas": "ch04", "capstone": "ch09", "slow": "ch10"}


def chapter_checks(course):
    """{chapter id: the check modules withheld until it is released}, from the modules' names."""
    modules = sorted(p.stem for p in (course.root / "autograder" / STUDENT_PACKAGE / "checks").glob("ch*_*.py"))
    found = {c.id: [m for m in modules if m.startswith(f"{c.id}_")] for c in course.chapters}
    for module, chapter_id in FIRST_NEEDED_BY.items():
        found[chapter_id].append(module)
    return {chapter_id: names for chapter_id, names in found.items() if names}


WITHHELD_CHECKS = '''"""Chapter {number}'s checks, published with chapter {number}."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return withheld


def withheld(*args, **kwargs):
    raise RuntimeError("chapter {number}'s checks come with chapter {number}: once it is released, update "
                       "the course package (pip install -r requirements.txt)")
'''


class PublishError(Exception):
    """A publish that would reveal what students may not see yet."""


def check_deadlines(course, released, solved):
    """Solutions only of released chapters; every chapter before the newest released one released too (a
    chapter builds on all before it). Released chapters not in `solved` are open: see withhold_open_chapters."""
    order = [c.id for c in course.chapters]
    if not released:
        raise PublishError("name at least one chapter to release (--chapters)")
    unreleased = [c.id for c in solved if c not in released]
    if unreleased:
        raise PublishError(f"solutions of unreleased chapters: {', '.join(unreleased)}")
    newest = max(order.index(c.id) for c in released)
    skipped = [cid for cid in order[:newest] if cid not in {c.id for c in released}]
    if skipped:
        raise PublishError(f"{order[newest]} builds on every chapter before it: release {', '.join(skipped)} too "
                           f"(open chapters come from each student's own exported code)")


def withhold_open_chapters(text, open_modules):
    """earlier_chapters.py's text with the section of each open chapter (`ch03_autodiff`) replaced by
    export.open_section: no line of an open chapter's solution leaves the course."""
    marks = list(SECTION.finditer(text))
    ends = [m.start() for m in marks[1:]] + [text.index("\n# ════ what ", marks[-1].end()) if marks else len(text)]
    pieces, last = [], 0
    for mark, end in zip(marks, ends):
        if mark.group(1) in open_modules and text[mark.end():end].strip():     # chapter 1 exports no code
            pieces += [text[last:mark.end()], "\n" + open_section(mark.group(1)) + "\n"]
            last = end
    return "".join(pieces) + text[last:]


def write_open_chapters(course, released, solved, dest):
    """Each released chapter's earlier_chapters.py in `dest`, its open earlier chapters withheld."""
    open_modules = {f"{c.id}_{c.notebook}" for c in released if c not in solved}
    for chapter in released:
        path = dest / course.config.RELEASE_DIR / chapter.id / PROVIDED_MODULE
        if path.is_file() and open_modules:
            path.write_text(withhold_open_chapters(path.read_text(encoding="utf-8"), open_modules), encoding="utf-8")


def prepare(dest, replace):
    """An empty `dest`, or with `replace`, `dest` emptied of everything but its .git (an earlier publish)."""
    dest.mkdir(parents=True, exist_ok=True)
    present = [p for p in dest.iterdir() if p.name != ".git"]
    if present and not replace:
        raise PublishError(f"{dest} is not empty (holds {present[0].name}); --replace empties it first, keeping .git")
    for path in present:
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def copy_chapters(course, folder, chapters, dest):
    for chapter in chapters:
        shutil.copytree(course.root / folder / chapter.id, dest / folder / chapter.id, ignore=CACHES)


def copy_solutions(course, solved, dest):
    """solutions/<id>/ of each solved chapter, with release/<id>/'s earlier_chapters.py, which its notebook imports:
    solutions/'s copy is the same bytes but is not committed (the build and `make setup` write it)."""
    copy_chapters(course, course.config.SOLUTIONS_DIR, solved, dest)
    for chapter in solved:
        provided = course.root / course.config.RELEASE_DIR / chapter.id / PROVIDED_MODULE
        if provided.is_file():
            shutil.copy2(provided, dest / course.config.SOLUTIONS_DIR / chapter.id / PROVIDED_MODULE)


def copy_release_settings(course, dest):
    """Files at the top of release/ (a student-side nbgrader_config.py) belong to every chapter. The
    nbgrader configuration also goes to the tree's root: nbgrader reads it from the folder the Jupyter
    server started in, which is the root on Binder and for `jupyter lab release/`, never a parent folder."""
    for path in sorted((course.root / course.config.RELEASE_DIR).iterdir()):
        if path.is_file():
            shutil.copy2(path, dest / course.config.RELEASE_DIR / path.name)
            if path.name == "nbgrader_config.py":
                shutil.copy2(path, dest / path.name)


def copy_student_package(course, released, dest):
    source, target = course.root / "autograder", dest / "autograder"
    target.mkdir()
    for name in NEUTRAL_MODULES:
        shutil.copy2(source / f"{name}.py", target / f"{name}.py")
    shutil.copytree(source / STUDENT_PACKAGE, target / STUDENT_PACKAGE, ignore=CACHES)
    ids = {c.id for c in released}
    for chapter_id, modules in chapter_checks(course).items():
        for name in modules if chapter_id not in ids else []:
            text = WITHHELD_CHECKS.format(number=int(chapter_id[2:]))
            (target / STUDENT_PACKAGE / "checks" / f"{name}.py").write_text(text, encoding="utf-8")


def pyproject_text(course):
    """The instructor's project, reduced to the packages published."""
    project = tomllib.loads((course.root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dependencies = ", ".join(f'"{d}"' for d in project["dependencies"])
    return f'''[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "{frame.PACKAGE}"
dynamic = ["version"]
description = "The {course.config.COURSE_ID} course's checks, as the chapter notebooks call them."
readme = "README.md"
requires-python = "{project["requires-python"]}"
dependencies = [{dependencies}]

[tool.setuptools]
packages = ["autograder", "autograder.{STUDENT_PACKAGE}", "autograder.{STUDENT_PACKAGE}.checks"]

[tool.setuptools.dynamic]
version = {{attr = "autograder.__version__"}}

[tool.setuptools.package-data]
"autograder.{STUDENT_PACKAGE}" = ["{PACKAGE_DATA}"]
'''


def requirements_text(course):
    """requirements.txt's pins of STUDENT_REQUIREMENTS, then the published package itself."""
    lines = ["# The course's pinned stack for students (Binder reads this file and runtime.txt)."]
    for line in (course.root / "requirements.txt").read_text(encoding="utf-8").splitlines():
        name = re.split(r"[=<>\[ ;#]", line.strip(), maxsplit=1)[0]
        if name in STUDENT_REQUIREMENTS:
            lines.append(line.split("#")[0].rstrip())
    return "\n".join(lines + ["", "# The course's checks, from this repository", "-e .", ""])


def publish(course, dest, chapter_ids, solution_ids=(), replace=False):
    """Write the student distribution of `chapter_ids` (with solutions of `solution_ids`) into `dest`."""
    order = [c.id for c in course.chapters]
    unknown = sorted((set(chapter_ids) | set(solution_ids)) - set(order))
    if unknown:
        raise PublishError(f"no chapter {', '.join(unknown)} in course_config.py; known: {', '.join(order)}")
    released = [course.chapter(cid) for cid in sorted(set(chapter_ids), key=order.index)]
    solved = [course.chapter(cid) for cid in sorted(set(solution_ids), key=order.index)]
    check_deadlines(course, released, solved)
    dest = Path(dest).resolve()
    prepare(dest, replace)
    cfg = course.config
    copy_chapters(course, cfg.RELEASE_DIR, released, dest)
    write_open_chapters(course, released, solved, dest)
    bonus = course.bonus if len(released) == len(order) else []     # it trains on every chapter's library
    copy_chapters(course, cfg.RELEASE_DIR, bonus, dest)
    copy_release_settings(course, dest)
    copy_solutions(course, solved, dest)
    copy_student_package(course, released, dest)
    shutil.copy2(course.root / "runtime.txt", dest / "runtime.txt")
    (dest / "requirements.txt").write_text(requirements_text(course), encoding="utf-8")
    (dest / "pyproject.toml").write_text(pyproject_text(course), encoding="utf-8")
    (dest / "README.md").write_text(readme.student_readme(course, released, solved, bonus), encoding="utf-8")
    return dest
