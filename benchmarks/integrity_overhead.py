"""What grades nobody can forge cost: seconds per submission of plain `nbgrader autograde` for chapters
3 and 10, with nbgrader's own Execute, with the sandbox, and with the sandbox and the judge, in one run.

Three throwaway copies of the course per chapter differ only in their nbgrader configuration; each
grades the same submissions (the solved demo notebook, `--students` times). Rounds go through the
three in turn, so that load from elsewhere falls on all alike; the figures are medians over rounds.
CPU seconds (nbgrader and every kernel it waited for) move less than wall time on a shared machine.
Every configuration must give every submission full marks, or the figure would mean nothing.

    .venv/bin/python benchmarks/integrity_overhead.py [--chapters ch03 ch10] [--students 2] [--rounds 3]
"""
import argparse
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nbgrader.api import Gradebook  # noqa: E402

from autograder.course import Course  # noqa: E402
from autograder.nbgrader_cli import run_nbgrader  # noqa: E402

# Appended to each copy's nbgrader_config.py, after the course's own configuration.
CONFIGURATIONS = {
    "nbgrader Execute": "from nbgrader.preprocessors import Execute\n"
                        "get_config().Autograde.autograde_preprocessors[0] = Execute  # noqa: F821\n",
    "sandbox": "get_config().JudgedExecute.judged_assignments = []  # noqa: F821\n",
    "sandbox + judge": "",
}


def course_copy(target, chapter, students, extra_config):
    target.mkdir(parents=True)
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy(ROOT / name, target / name)
    with open(target / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write(extra_config)
    shutil.copytree(ROOT / "source" / chapter.id, target / "source" / chapter.id)
    run_nbgrader(target, "generate_assignment", chapter.id, "--force")
    release = ROOT / "release" / chapter.id
    for n in range(students):
        folder = target / "submitted" / f"student{n:02d}" / chapter.id
        shutil.copytree(release, folder)
        shutil.copy(ROOT / "demo" / "submitted" / "perfect" / chapter.id / f"{chapter.notebook}.ipynb", folder)
    return target


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def grade(root, chapter, students):
    """(wall, CPU) seconds per submission of one `nbgrader autograde` run."""
    started, cpu = time.perf_counter(), cpu_seconds()
    run_nbgrader(root, "autograde", chapter.id, "--force")
    wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        scores = {s.student.id: s.score for s in gradebook.find_assignment(chapter.id).submissions}
    assert len(scores) == students and set(scores.values()) == {chapter.points}, scores
    return wall / students, cpu / students


def measure(chapter, students, rounds, scratch):
    courses = {name: course_copy(scratch / chapter.id / str(i), chapter, students, extra)
               for i, (name, extra) in enumerate(CONFIGURATIONS.items())}
    times = {name: [] for name in courses}
    for _ in range(rounds):
        for name, root in courses.items():
            times[name].append(grade(root, chapter, students))
    return {name: tuple(statistics.median(values) for values in zip(*runs)) for name, runs in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", nargs="+", default=["ch03", "ch10"])
    parser.add_argument("--students", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    course = Course(ROOT)
    print(f"seconds per submission, median of {args.rounds} rounds of {args.students} solved submissions")
    print(f"{'chapter':<8} {'configuration':<18} {'wall':>6} {'CPU':>6} {'wall vs Execute':>16} {'CPU vs Execute':>15}")
    with tempfile.TemporaryDirectory() as scratch:
        for chapter_id in args.chapters:
            medians = measure(course.chapter(chapter_id), args.students, args.rounds, Path(scratch))
            base_wall, base_cpu = medians["nbgrader Execute"]
            for name, (wall, cpu) in medians.items():
                print(f"{chapter_id:<8} {name:<18} {wall:6.2f} {cpu:6.2f} {100 * (wall / base_wall - 1):+15.0f}% "
                      f"{100 * (cpu / base_cpu - 1):+14.0f}%")


if __name__ == "__main__":
    main()
