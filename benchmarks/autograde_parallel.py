"""Serial `nbgrader autograde` against `python -m autograder grade` (Dask, a LocalCluster on all cores)
on the same machine.

Builds a throwaway copy of the course with N synthetic submissions of a chapter (a mix of the
solution, the untouched student version, the demo's partial student, the catalogued mistakes and
the correct alternatives), grades them both ways in one run, checks the scores are identical, and
prints both wall-clock times and their ratio. It also grades them with `grade --jobs 1`, the same engine
on one thread: the cluster's speed-up over that, per thread, is how well threads add up on this machine
(the efficiency benchmarks/scale.py projects with). Takes a few minutes; not part of the test suite.

    python benchmarks/autograde_parallel.py [--chapter ch03] [--students 100] [--jobs N] [--json FILE]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder import grading  # noqa: E402
from autograder.build import submissions  # noqa: E402
from autograder.course import Course  # noqa: E402
from autograder.grading.nbgrader_cli import nbgrader_env, run_nbgrader  # noqa: E402

COURSE_FILES = ["course_config.py", "nbgrader_config.py", "chapters", "catalogue", "source", "release"]


def variants(course, chapter):
    """Named notebooks a class might hand in: right, wrong in catalogued ways, untouched."""
    cfg = course.config
    release = nbformat.read(course.notebook(cfg.RELEASE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4))
    catalog = submissions.load_catalog(course, chapter)
    by_name = {m.name: m for m in catalog.MISTAKES}
    found = {"perfect": submissions.filled(release, answers), "untouched": release,
             "partial": submissions.filled(release, submissions.with_mistakes(
                 answers, [by_name[n] for n in catalog.DEMO_PARTIAL]))}
    for mistake in catalog.MISTAKES + catalog.ALTERNATIVES:
        found[mistake.name] = submissions.filled(release, submissions.with_mistakes(answers, [mistake]))
    return found


def make_course(folder, chapter_id, students):
    folder.mkdir(parents=True)
    for name in COURSE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, folder / name)
    course = Course(folder)
    chapter = course.chapter(chapter_id)
    run_nbgrader(folder, "generate_assignment", chapter.id, "--force")   # the gradebook knows the chapter
    kinds = list(variants(course, chapter).items())
    for i in range(students):
        name, notebook = kinds[i % len(kinds)]
        submissions.write_submission(course, chapter, f"s{i:03d}-{name}"[:60], notebook, course.config.SUBMITTED_DIR)
    return course, chapter


def timed(command, cwd):
    env = dict(os.environ, **nbgrader_env())
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapter", default="ch03")
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--json", type=Path, help="also write the figures to this file (benchmarks/scale.py reads it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="babygrad-benchmark-") as scratch:
        serial_course, chapter = make_course(Path(scratch) / "serial", args.chapter, args.students)
        parallel_course, _ = make_course(Path(scratch) / "parallel", args.chapter, args.students)
        one_thread_course, _ = make_course(Path(scratch) / "one-thread", args.chapter, args.students)
        print(f"{args.students} submissions of {chapter.id}, {os.cpu_count()} cores, {args.jobs} threads "
              f"(load average before: {os.getloadavg()[0]:.1f})")
        serial = timed([sys.executable, "-m", "nbgrader", "autograde", chapter.id, "--force"], serial_course.root)
        print(f"serial nbgrader autograde                       {serial:7.1f} s  {serial / args.students:5.2f} s each")
        cluster = timed([sys.executable, "-m", "autograder", "grade", chapter.id, "--jobs", str(args.jobs),
                         "--quiet"], parallel_course.root)
        print(f"python -m autograder grade (Dask LocalCluster)  {cluster:7.1f} s  {cluster / args.students:5.2f} s each")
        print(f"speed-up                                        {serial / cluster:7.2f}x")
        one_thread = timed([sys.executable, "-m", "autograder", "grade", chapter.id, "--jobs", "1", "--quiet"],
                           one_thread_course.root)
        efficiency = one_thread / (args.jobs * cluster)
        print(f"python -m autograder grade --jobs 1             {one_thread:7.1f} s  {one_thread / args.students:5.2f} s each")
        print(f"efficiency of {args.jobs} threads (speed-up over --jobs 1, per thread)  {efficiency:5.2f}")
        scores = grading.scores(serial_course, chapter)
        same = scores == grading.scores(parallel_course, chapter) == grading.scores(one_thread_course, chapter)
        print(f"identical scores, all three runs: {same}  (load average after: {os.getloadavg()[0]:.1f})")
        if not same:
            raise SystemExit("the two runs disagree")
        if args.json:
            args.json.write_text(json.dumps({"chapter": chapter.id, "students": args.students, "threads": args.jobs,
                                             "serial_seconds": serial, "cluster_seconds": cluster,
                                             "one_thread_seconds": one_thread}))


if __name__ == "__main__":
    main()
