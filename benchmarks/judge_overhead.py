"""Seconds per chapter 3 submission for serial `nbgrader autograde`, with and without the judge.

Grades the chapter's three demo students (perfect, partial, untouched) `--rounds` times in two
scratch copies of the course, one as configured (JudgedExecute) and one with nbgrader's plain
Execute, alternating the two so that load on a shared machine falls on both alike.

    .venv/bin/python benchmarks/judge_overhead.py [--rounds 2]
"""
import argparse
import re
import resource
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


def cpu_seconds():
    """CPU time of finished child processes (nbgrader and its kernels): unlike wall time, other
    users of a shared machine barely move it."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def seconds_per_submission(course):
    """(wall, CPU) seconds per submission of one `nbgrader autograde` run over the demo students."""
    chapter = course.chapter(CHAPTER)
    start, cpu = time.perf_counter(), cpu_seconds()
    run_nbgrader(course.root, "autograde", CHAPTER, "--force")
    wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    students = len(grading.scores(course, chapter))
    return wall / students, cpu / students


def main(rounds):
    with tempfile.TemporaryDirectory() as scratch:
        courses = {"plain Execute": scratch_course(Path(scratch) / "plain", judged=False),
                   "JudgedExecute": scratch_course(Path(scratch) / "judged", judged=True)}
        times = {name: [] for name in courses}
        for _ in range(rounds):
            for name, course in courses.items():
                times[name].append(seconds_per_submission(course))
        print(f"{CHAPTER}: seconds per submission (median of {rounds} runs of 3 demo students: perfect, partial, untouched)")
        medians = {}
        for name in courses:
            walls, cpus = zip(*times[name])
            medians[name] = statistics.median(walls), statistics.median(cpus)
            print(f"  {name:<14} wall {medians[name][0]:5.2f}  CPU {medians[name][1]:5.2f}   "
                  f"wall runs: {', '.join(f'{t:.2f}' for t in walls)}")
        (plain_wall, plain_cpu), (judged_wall, judged_cpu) = medians.values()
        print(f"  judge overhead: wall {100 * (judged_wall - plain_wall) / plain_wall:+.0f}%, "
              f"CPU {100 * (judged_cpu - plain_cpu) / plain_cpu:+.0f}%")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    main(parser.parse_args().rounds)
