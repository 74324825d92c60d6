"""Where the committed course is (the repository's root, found from this file, so tests run from any
folder), and what a fresh copy of it needs."""
import shutil
from pathlib import Path

from autograder.course import Course

ROOT = Path(__file__).resolve().parents[2]

# What `python -m autograder build` reads: no demo/, no README.md (tests/pipeline/test_build_steps.py holds it to that).
BUILD_INPUTS = ["course_config.py", "nbgrader_config.py", "chapters", "data"]
# What an instructor's clone needs to make every generated file from scratch: the demo students'
# mistakes, and the README whose chapter table is generated.
COURSE_INPUTS = BUILD_INPUTS + ["catalogue", "README.md"]


def copy_course_inputs(target, names=COURSE_INPUTS):
    for name in names:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.exists():
            shutil.copy2(source, target / name)
    return Course(target)
