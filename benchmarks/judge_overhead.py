"""Seconds per chapter 3 submission for serial `nbgrader autograde`, with and without the judge.

Grades the chapter's three demo students (perfect, partial, untouched) `--rounds` times in two
scratch copies of the course, one as configured (JudgedExecute) and one with nbgrader's plain
Execute, alternating the two so that load on a shared machine falls on both alike.

    .venv/bin/python benchmarks/judge_overhead.py [--rounds 2]
"""
import argparse
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from autograder import grading
from autograder.course import Course
from autograder.nbgrader_cli import run_nbgrader

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = "ch03"


def scratch_course(folder, judged):
    folder.mkdir()
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy2(ROOT / name, folder / name)
    shutil.copytree(ROOT / "source" / CHAPTER, folder / "source" / CHAPTER)
    shutil.copytree(ROOT / "demo" / "submitted", folder / "demo" / "submitted",
                    ignore=lambda d, names: [n for n in names if n.startswith("ch") and n != CHAPTER])
    if not judged:
        config = (folder / "course_config.py").read_text(encoding="utf-8")
        (folder / "course_config.py").write_text(
            re.sub(r"\bJudgedExecute, IgnorePattern", "Execute, IgnorePattern", config), encoding="utf-8")
    course = Course(folder)
    chapter = course.chapter(CHAPTER)
    grading.hand_in_demo(course, chapter)
    grading.register(course, chapter)
    return course


def seconds_per_submission(course):
    chapter = course.chapter(CHAPTER)
    start = time.perf_counter()
    run_nbgrader(course.root, "autograde", CHAPTER, "--force")
    seconds = time.perf_counter() - start
    return seconds / len(grading.scores(course, chapter))


def main(rounds):
    with tempfile.TemporaryDirectory() as scratch:
        courses = {"plain Execute": scratch_course(Path(scratch) / "plain", judged=False),
                   "JudgedExecute": scratch_course(Path(scratch) / "judged", judged=True)}
        times = {name: [] for name in courses}
        for _ in range(rounds):
            for name, course in courses.items():
                times[name].append(seconds_per_submission(course))
        plain, judged = (statistics.median(times[n]) for n in courses)
        print(f"{CHAPTER}: seconds per submission (median of {rounds} runs of 3 demo students)")
        for name in courses:
            print(f"  {name:<14} {statistics.median(times[name]):6.2f}   runs: {', '.join(f'{t:.2f}' for t in times[name])}")
        print(f"  judge overhead {100 * (judged - plain) / plain:+.0f}%")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    main(parser.parse_args().rounds)
