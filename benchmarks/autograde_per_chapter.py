"""Seconds per submission for serial `nbgrader autograde`, chapter by chapter.

Grades each chapter's three demo students (perfect, partial, untouched) in a scratch copy of the
course, one `nbgrader autograde` run per chapter, and prints the wall time per submission. The
course's own gradebook and folders are not touched.

    .venv/bin/python benchmarks/autograde_per_chapter.py [ch03 ch07 ...]
"""
import shutil
import sys
import tempfile
import time
from pathlib import Path

from autograder import grading
from autograder.course import Course
from autograder.nbgrader_cli import run_nbgrader

ROOT = Path(__file__).resolve().parents[1]
NEEDED = ["course_config.py", "nbgrader_config.py", "source", "demo"]


def scratch_course(folder):
    for name in NEEDED:
        source = ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, folder / name)
    return Course(folder)


def main(chapter_ids):
    with tempfile.TemporaryDirectory() as scratch:
        course = scratch_course(Path(scratch))
        print(f"{'chapter':<8} {'submissions':>11} {'seconds':>8} {'s/submission':>13}")
        for chapter in course.chapters:
            if chapter_ids and chapter.id not in chapter_ids:
                continue
            students = grading.hand_in_demo(course, chapter)
            grading.register(course, chapter)          # once per chapter, outside the timing
            start = time.perf_counter()
            run_nbgrader(course.root, "autograde", chapter.id, "--force")
            seconds = time.perf_counter() - start
            graded = grading.scores(course, chapter)
            assert sorted(graded) == sorted(students), (graded.keys(), students)
            print(f"{chapter.id:<8} {len(students):>11} {seconds:>8.1f} {seconds / len(students):>13.1f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
