"""`python -m autograder build` is the build and nothing else: it needs no demo/ and leaves README.md
alone. The demo submissions and the README's table are steps of their own (`demo-submissions`,
`readme`; `make build` runs all three)."""
import pytest
from helpers.course_paths import BUILD_INPUTS, ROOT, copy_course_inputs, gitignore_patterns, left_out

from autograder.build import pipeline, readme, submissions
from autograder.build.generated_files import compare_trees
from autograder.build.readme import BEGIN, END

CHAPTER = "ch02"        # a small chapter with an earlier one (its earlier_chapters.py is not empty)
STALE_README = f"# A course\n\n{BEGIN}\nno table yet\n{END}\n"


def built_files(root, chapter_id, folders):
    """The chapter's files in `folders` that git keeps (solutions/'s earlier_chapters.py, say, is written by the
    build but never committed: test_generated_files holds it to release/'s)."""
    patterns = gitignore_patterns()
    found = (p.relative_to(root).as_posix() for folder in folders for p in (root / folder).rglob("*")
             if p.is_file() and chapter_id in p.parts)
    return sorted(relative for relative in found if not left_out(relative, patterns))


def test_a_chapter_builds_without_demo_and_leaves_the_readme_alone(tmp_path):
    course = copy_course_inputs(tmp_path, BUILD_INPUTS)
    (tmp_path / "README.md").write_text(STALE_README, encoding="utf-8")
    assert not (tmp_path / "demo").exists()

    pipeline.build(course, [CHAPTER], log=lambda message: None)

    cfg = course.config
    folders = [cfg.SOURCE_DIR, cfg.RELEASE_DIR, cfg.SOLUTIONS_DIR]
    built, committed = built_files(tmp_path, CHAPTER, folders), built_files(ROOT, CHAPTER, folders)
    assert built == committed, "the build in a folder without demo/ makes other files than the committed ones"
    difference = compare_trees(ROOT, tmp_path, committed)
    assert difference is None, str(difference)
    assert not (tmp_path / "demo").exists(), "the build wrote demo submissions"
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == STALE_README, "the build rewrote README.md"


def test_readme_rewrites_a_stale_table_and_leaves_a_current_readme_untouched(tmp_path):
    """`python -m autograder readme` says whether it changed anything, and writes nothing when the table is current:
    `make build` and `make demo` end with it, and an untouched README keeps its time."""
    course = copy_course_inputs(tmp_path, BUILD_INPUTS + ["source", "catalogue"])
    path = tmp_path / "README.md"
    path.write_text(STALE_README, encoding="utf-8")
    assert readme.update_readme(course) is True
    made = path.read_text(encoding="utf-8")
    assert "no table yet" not in made and "| **total** |" in made
    path.touch()
    before = path.stat().st_mtime_ns
    assert readme.update_readme(course) is False
    assert path.stat().st_mtime_ns == before and path.read_text(encoding="utf-8") == made
    path.unlink()
    assert readme.update_readme(course) is None


def test_demo_submissions_ask_for_the_build_first(tmp_path):
    course = copy_course_inputs(tmp_path, BUILD_INPUTS + ["catalogue"])
    with pytest.raises(SystemExit, match=rf"python -m autograder build {CHAPTER}"):
        submissions.write_all_demo_submissions(course, [CHAPTER], log=lambda message: None)


@pytest.mark.parametrize("command", [["build", "ch3"], ["demo-submissions", "ch02", "ch99"], ["grade", "chapter3"],
                                     ["gradescope", "ch3"]])
def test_a_misspelt_chapter_is_refused_with_the_known_ones(command):
    """A misspelt id (`demo-submissions ch3`) must not write nothing and say nothing: every command that takes
    chapter ids stops before doing anything, naming the ids it knows."""
    from autograder.__main__ import main
    with pytest.raises(SystemExit, match=rf"{command[0]}: no chapter {command[-1]} in course_config.py; known: ch01, ch02"):
        main(["--root", str(ROOT), *command])


def test_the_kernels_a_build_starts_import_the_building_checkouts_code(tmp_path):
    """A second checkout (a git worktree) builds with its own checks: the editable install points at the first
    one, so the build puts its own code first on the path of the kernels nbgrader starts."""
    import os
    import shutil
    import subprocess
    import sys
    copy = tmp_path / "second-checkout"
    shutil.copytree(ROOT / "autograder", copy / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    elsewhere = tmp_path / "notebook-folder"
    elsewhere.mkdir()
    kernel = ("import sys, os, subprocess; sys.path.insert(0, sys.argv[1]); "
              "from autograder.build.pipeline import build_environment; "
              "env = dict(os.environ, **build_environment()); "
              "print(subprocess.run([sys.executable, '-c', 'import autograder; print(autograder.__file__)'], "
              "env=env, cwd=sys.argv[2], capture_output=True, text=True, check=True).stdout)")
    imported = subprocess.run([sys.executable, "-c", kernel, str(copy), str(elsewhere)], capture_output=True,
                              text=True, check=True, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert imported.stdout.strip() == str(copy / "autograder" / "__init__.py")
