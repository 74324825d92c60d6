"""Seconds per submission to autograde a chapter with the sandbox (the course's SandboxedExecute) and
without it (nbgrader's own Execute), in one run, on the same machine.

Two throwaway course copies differ only in the first autograde preprocessor; each grades the same N
copies of the chapter's solved demo notebook with plain `nbgrader autograde`. Runs alternate between
the two, so a busy machine slows both alike. Checks both give full marks.

    python benchmarks/sandbox_overhead.py [--chapter ch03] [--students 4] [--rounds 2]
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

from nbgrader.api import Gradebook  # noqa: E402

from autograder.course import Course  # noqa: E402
from autograder.nbgrader_cli import run_nbgrader  # noqa: E402

PLAIN_EXECUTE = """
from nbgrader.preprocessors import Execute  # the benchmark's baseline: nbgrader's Execute, no sandbox
get_config().Autograde.autograde_preprocessors[0] = Execute  # noqa: F821
"""


def course_copy(target, chapter, students, plain):
    target.mkdir(parents=True)
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy(ROOT / name, target / name)
    if plain:
        with open(target / "nbgrader_config.py", "a", encoding="utf-8") as config:
            config.write(PLAIN_EXECUTE)
    shutil.copytree(ROOT / "source" / chapter.id, target / "source" / chapter.id)
    run_nbgrader(target, "generate_assignment", chapter.id, "--force")
    release = ROOT / "release" / chapter.id
    for n in range(students):
        folder = target / "submitted" / f"student{n:02d}" / chapter.id
        shutil.copytree(release, folder)
        shutil.copy(ROOT / "demo" / "submitted" / "perfect" / chapter.id / f"{chapter.notebook}.ipynb", folder)
    return target


def grade(root, chapter, students):
    started = time.monotonic()
    run_nbgrader(root, "autograde", chapter.id, "--force")
    seconds = (time.monotonic() - started) / students
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        scores = {s.student.id: s.score for s in gradebook.find_assignment(chapter.id).submissions}
    assert set(scores.values()) == {chapter.points}, scores
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", default="ch03")
    parser.add_argument("--students", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    chapter = Course(ROOT).chapter(args.chapter)
    with tempfile.TemporaryDirectory() as scratch:
        courses = {"sandboxed": course_copy(Path(scratch) / "sandboxed", chapter, args.students, plain=False),
                   "plain": course_copy(Path(scratch) / "plain", chapter, args.students, plain=True)}
        times = {name: [] for name in courses}
        for _ in range(args.rounds):
            for name, root in courses.items():
                times[name].append(grade(root, chapter, args.students))
    sandboxed, plain = statistics.median(times["sandboxed"]), statistics.median(times["plain"])
    print(f"{chapter.id}: {args.students} submissions x {args.rounds} rounds, seconds per submission (median)")
    print(f"  without the sandbox (nbgrader Execute): {plain:.2f}")
    print(f"  with the sandbox (SandboxedExecute):    {sandboxed:.2f}")
    print(f"  overhead: {100 * (sandboxed / plain - 1):+.0f}%")


if __name__ == "__main__":
    main()
