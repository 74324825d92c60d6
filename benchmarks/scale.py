"""Every figure of the README's "grading at scale" section, in one run, and what they project to.

    .venv/bin/python benchmarks/scale.py [--students 40] [--torch-python PATH] [--cores 8]

One after another, so that none loads the machine while another measures:
1. `autograde_parallel.py`: serial `nbgrader autograde` against `python -m autograder grade` (Dask,
   LocalCluster) on chapter 3, on all of this machine's cores, with identical scores, and the same
   engine on one thread, for the efficiency below;
2. `cost_per_submission.py`: seconds per submission in one grading process for every chapter, and
   where chapter 3's go;
3. `train_mnist.py`: babygrad, the NumPy floor and (with `--torch-python`, an interpreter that has
   PyTorch: never a requirement of the course) PyTorch, seconds per epoch for both capstones; then
   `mlp_step.py`: where the MLP's training step goes, babygrad's phases against the floor's;
4. the projection: how long a term's submissions take on `--cores` cores.

The model behind the projection: a Dask thread grades one submission after another in one grading
process, as step 2 measures, so a chapter's per-core rate is step 2's seconds per submission. Many
threads on one machine do not add up perfectly (they share memory bandwidth and the machine's other
work); step 1 measures how well they add up on this machine, as an efficiency: the LocalCluster's
speed-up over the same engine on one thread (`grade --jobs 1`), on the same class, per thread,
    e = one thread's wall time / (threads × the LocalCluster's wall time).
Both sides grade the same notebooks (a mixed class: mistakes stop early, so each costs less than a solved
one); step 2's rates, of solved notebooks, are never divided by a time measured on other notebooks.
A term of N submissions spread evenly over the chapters then takes
    N / chapters × Σ_chapter seconds per submission / (cores × e).
Run it on a machine nothing else is loading: the load average is printed before and after.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def run(script, *args, python=sys.executable, env=None):
    print(f"\n$ {Path(python).name} benchmarks/{script} {' '.join(map(str, args))}", flush=True)
    subprocess.run([python, str(HERE / script), *map(str, args)], cwd=ROOT, check=True,
                   env=dict(os.environ, **(env or {})))


def projection(rates, efficiency, cores, submissions):
    """Hours for `submissions` spread evenly over the chapters of `rates` ({chapter: s per submission})."""
    per_chapter = submissions / len(rates)
    return per_chapter * sum(rates.values()) / (cores * efficiency) / 3600


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=40, help="chapter 3 submissions for step 1 (default 40)")
    parser.add_argument("--torch-python", help="a Python with PyTorch installed, for step 3's third column")
    parser.add_argument("--cores", type=int, default=8, help="cores of the projected grading machine (default 8)")
    parser.add_argument("--term", type=int, default=10_000, help="submissions in the projected term (default 10,000)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from autograder.grading.sandbox import unavailable_reason
    if reason := unavailable_reason():     # every grading figure is measured with the sandbox on
        sys.exit(f"scale.py grades in the course's sandbox, which cannot start here: {reason}")
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at the start")
    with tempfile.TemporaryDirectory() as scratch:
        cluster_json, cost_json = Path(scratch, "cluster.json"), Path(scratch, "cost.json")
        run("autograde_parallel.py", "--students", args.students, "--json", cluster_json)
        run("cost_per_submission.py", "--json", cost_json)
        cluster, cost = json.loads(cluster_json.read_text()), json.loads(cost_json.read_text())
    if args.torch_python:     # that interpreter finds the course and its stack through PYTHONPATH
        site = next(Path(sys.prefix, "lib").glob("python3*/site-packages"))
        run("train_mnist.py", "--repeats", 3, python=args.torch_python, env={"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"})
    else:
        run("train_mnist.py", "--repeats", 3)
    run("mlp_step.py")

    rates = cost["seconds_per_submission"]
    efficiency = cluster["one_thread_seconds"] / (cluster["threads"] * cluster["cluster_seconds"])
    print(f"\nProjection (model in this script's docstring), load average {os.getloadavg()[0]:.2f} at the end:")
    print(f"  per-core seconds per submission, all chapters: {sum(rates.values()):.1f} (one student, every chapter)")
    print(f"  efficiency of {cluster['threads']} threads on this machine: {efficiency:.2f}")
    hours = projection(rates, min(efficiency, 1.0), args.cores, args.term)
    print(f"  {args.term:,} submissions evenly over {len(rates)} chapters (a {args.term // len(rates):,}-student "
          f"course, every chapter once) on {args.cores} cores: {hours:.2f} h")

if __name__ == "__main__":
    main()
