"""What grades nobody can forge cost: seconds per submission of plain `nbgrader autograde` for chapters
3 and 10, with nbgrader's own Execute, with the sandbox, and with the sandbox and the judge, in one run.

Three throwaway copies of the course per chapter differ only in their nbgrader configuration; each
grades the same submissions (the solved demo notebook, `--students` times). Rounds go through the
three in turn, so that load from elsewhere falls on all alike; the figures are medians over rounds of
wall-clock time. (Not CPU time: the grader's RUSAGE_CHILDREN misses part of a sandboxed kernel's,
whose processes are reaped inside its PID namespace; it read 24% below nbgrader's Execute for chapter 3
while wall time read 4% above.) Every configuration must give every submission full marks, or the
figure would mean nothing. Run it on a machine nothing else is loading.

    .venv/bin/python benchmarks/integrity_overhead.py [--chapters ch03 ch10] [--students 2] [--rounds 3]
"""
import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402
from nbgrader.api import Gradebook  # noqa: E402

from autograder.build.submissions import demo_notebooks  # noqa: E402
from autograder.course import Course  # noqa: E402
from autograder.grading.nbgrader_cli import run_nbgrader  # noqa: E402

# Appended to each copy's nbgrader_config.py, after the course's own configuration.
CONFIGURATIONS = {
    "nbgrader Execute": "from nbgrader.preprocessors import Execute\n"
                        "from autograder.grading.judged_execute import JudgedExecute\n"
                        "_steps = get_config().Autograde.autograde_preprocessors  # noqa: F821\n"
                        "_steps[_steps.index(JudgedExecute)] = Execute\n",
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
    perfect = demo_notebooks(Course(ROOT), chapter)["perfect"]
    for n in range(students):
        folder = target / "submitted" / f"student{n:02d}" / chapter.id
        shutil.copytree(release, folder)
        nbformat.write(perfect, folder / f"{chapter.notebook}.ipynb")
    return target


def grade(root, chapter, students):
    """Seconds per submission of one `nbgrader autograde` run."""
    started = time.perf_counter()
    run_nbgrader(root, "autograde", chapter.id, "--force")
    wall = time.perf_counter() - started
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        scores = {s.student.id: s.score for s in gradebook.find_assignment(chapter.id).submissions}
    assert len(scores) == students and set(scores.values()) == {Course(ROOT).autograded_points(chapter)}, scores
    return wall / students


def measure(chapter, students, rounds, scratch):
    courses = {name: course_copy(scratch / chapter.id / str(i), chapter, students, extra)
               for i, (name, extra) in enumerate(CONFIGURATIONS.items())}
    times = {name: [] for name in courses}
    for _ in range(rounds):
        for name, root in courses.items():
            times[name].append(grade(root, chapter, students))
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapters", nargs="+", default=["ch03", "ch10"])
    parser.add_argument("--students", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    course = Course(ROOT)
    print(f"seconds per submission, median of {args.rounds} rounds of {args.students} solved submissions")
    print(f"{'chapter':<8} {'configuration':<18} {'median':>7} {'vs nbgrader Execute':>20}   every round")
    with tempfile.TemporaryDirectory() as scratch:
        for chapter_id in args.chapters:
            times = measure(course.chapter(chapter_id), args.students, args.rounds, Path(scratch))
            base = statistics.median(times["nbgrader Execute"])
            for name, runs in times.items():
                median = statistics.median(runs)
                print(f"{chapter_id:<8} {name:<18} {median:7.2f} {100 * (median / base - 1):+19.0f}%   "
                      + " ".join(f"{r:.2f}" for r in runs), flush=True)


if __name__ == "__main__":
    main()
