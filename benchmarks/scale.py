"""Every figure of docs/performance.md's tables, in one run, and what they project to.

    .venv/bin/python benchmarks/scale.py [--students 40] [--torch-python PATH] [--cores 8] \\
        --record benchmarks/latest_run.json --markdown docs/performance.md --summary README.md
    .venv/bin/python benchmarks/scale.py --results benchmarks/latest_run.json --markdown docs/performance.md --summary README.md

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

`--record FILE` keeps the run's figures (JSON) with its command, commit, date, machine and load;
`--markdown FILE` rewrites the tables between the `<!-- scale:begin -->` and `<!-- scale:end -->` marks of
that file from them, and `--summary FILE` the README's few figures between its `<!-- scale-summary:... -->` marks. `--results FILE` renders a recorded run again without measuring anything, so the
document always shows one run's figures, and a test checks it does (tests/unit/test_docs.py).

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
Run it on a machine nothing else is loading: the load average is recorded before and after.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEGIN, END = "<!-- scale:begin -->", "<!-- scale:end -->"
SUMMARY = ("<!-- scale-summary:begin -->", "<!-- scale-summary:end -->")     # the README's figures


def run(script, *args, python=sys.executable, env=None):
    """Run one benchmark, its output shown as it comes and returned."""
    print(f"\n$ {Path(python).name} benchmarks/{script} {' '.join(map(str, args))}", flush=True)
    process = subprocess.Popen([python, str(HERE / script), *map(str, args)], cwd=ROOT, text=True,
                               stdout=subprocess.PIPE, env=dict(os.environ, **(env or {})))
    lines = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line)
    if process.wait():
        sys.exit(f"benchmarks/{script} failed (exit status {process.returncode})")
    return "".join(lines)


def efficiency(cluster):
    return cluster["one_thread_seconds"] / (cluster["threads"] * cluster["cluster_seconds"])


def projection(rates, efficiency, cores, submissions):
    """Hours for `submissions` spread evenly over the chapters of `rates` ({chapter: s per submission})."""
    per_chapter = submissions / len(rates)
    return per_chapter * sum(rates.values()) / (cores * efficiency) / 3600


def machine():
    """The CPU's model name and the number of cores, as /proc/cpuinfo tells them (Linux)."""
    cpuinfo = Path("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.*)$", cpuinfo.read_text(), re.M) if cpuinfo.exists() else None
    return f"{os.cpu_count()} cores, {model.group(1) if model else platform.processor() or platform.machine()}"


def commit():
    described = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return described.stdout.strip() or "unknown"


def measure(args):
    """One run of every step; its figures, with what a reader needs to weigh them."""
    from autograder.grading.sandbox import unavailable_reason
    if reason := unavailable_reason():     # every grading figure is measured with the sandbox on
        sys.exit(f"scale.py grades in the course's sandbox, which cannot start here: {reason}")
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = os.getloadavg()[0]
    print(f"{machine()}; load average {load_start:.2f} at the start")
    with tempfile.TemporaryDirectory() as scratch:
        paths = {name: Path(scratch, f"{name}.json") for name in ("cluster", "cost", "step")}
        run("autograde_parallel.py", "--students", args.students, "--json", paths["cluster"])
        run("cost_per_submission.py", "--json", paths["cost"])
        if args.torch_python:     # that interpreter finds the course and its stack through PYTHONPATH
            site = next(Path(sys.prefix, "lib").glob("python3*/site-packages"))
            training = run("train_mnist.py", "--repeats", 3, python=args.torch_python,
                           env={"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"})
        else:
            training = run("train_mnist.py", "--repeats", 3)
        run("mlp_step.py", "--json", paths["step"])
        figures = {name: json.loads(path.read_text()) for name, path in paths.items()}
    return {"run": {"command": shlex.join(["benchmarks/scale.py", *sys.argv[1:]]), "commit": commit(),
                    "date": started.strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
                    "load_average": [round(load_start, 1), round(os.getloadavg()[0], 1)]},
            "cluster": figures["cluster"], "cost": figures["cost"], "training": training, "mlp_step": figures["step"],
            "cores": args.cores, "term": args.term}


def table(header, rows):
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(map(str, row)) + " |" for row in rows])


def render(results):
    """The tables of one recorded run, as markdown: what `--markdown` writes between the marks."""
    run, cluster, cost = results["run"], results["cluster"], results["cost"]
    rates, e = cost["seconds_per_submission"], efficiency(cluster)
    n, threads = cluster["students"], cluster["threads"]
    start, end = run["load_average"]
    load = f"load average {start} at the start" + (f", {end} at the end" if end is not None else "")
    parts = [f"Measured by `{run['command']}`, {run['date']}, on {run['machine']}, with nothing else running "
             f"({load}).",
             f"**Serial nbgrader against Dask** (`autograde_parallel.py`): {n} {cluster['chapter']} submissions "
             "(the solution, the untouched notebook, the demo's partial student, every catalogued mistake and right "
             "answer in turn), identical scores in all three runs:",
             table([f"{n} submissions of {cluster['chapter']}", "wall clock", "per submission"], [
                 ["serial `nbgrader autograde --force`", f"{cluster['serial_seconds']:.1f} s",
                  f"{cluster['serial_seconds'] / n:.2f} s"],
                 [f"`python -m autograder grade` (Dask LocalCluster, {threads} threads)",
                  f"{cluster['cluster_seconds']:.1f} s", f"{cluster['cluster_seconds'] / n:.2f} s"],
                 ["speed-up", f"{cluster['serial_seconds'] / cluster['cluster_seconds']:.2f}x", ""],
                 ["`python -m autograder grade --jobs 1` (the same engine, 1 thread)",
                  f"{cluster['one_thread_seconds']:.1f} s", f"{cluster['one_thread_seconds'] / n:.2f} s"],
                 [f"efficiency of {threads} threads, e", f"{e:.2f}", ""]])]
    for chapter, breakdown in cost.get("breakdown", {}).items():
        rows = [[row, f"{seconds:.3f}"] for row, seconds in breakdown["rows"].items()]
        rows.append(["**total**", f"**{breakdown['total']:.3f}**"])
        parts += [f"**Where one solved {chapter} submission's seconds go** (`cost_per_submission.py`: one grading "
                  f"process grading solved notebooks in a row, sandbox and judge on; {breakdown['probes']:g} judge "
                  f"probes; once per grading process, {breakdown['once_per_process']:.2f} s for Python, nbgrader and "
                  "the imports):", table(["step", "seconds"], rows)]
    chapters = list(rates)
    parts += ["**Seconds per solved submission, every chapter** (`cost_per_submission.py`, the same process model):",
              table(["chapter", *(c.removeprefix("ch").lstrip("0") for c in chapters)],
                    [["s / submission", *(f"{rates[c]:.2f}" for c in chapters)]])]
    term, cores = results.get("term", 10_000), results.get("cores", 8)
    hours = projection(rates, min(e, 1.0), cores, term)
    parts += ["**A term's grading** (the projection in `benchmarks/scale.py`'s docstring: N / chapters × Σ seconds "
              "per submission / (cores × e)):",
              table(["every chapter, one student", "e", f"{term:,} submissions ({term // len(rates):,} students × "
                     f"{len(rates)} chapters) on {cores} cores"],
                    [[f"{sum(rates.values()):.1f} s", f"{e:.2f}", f"{hours:.2f} h"]])]
    parts += ["**Training one epoch** (`train_mnist.py --repeats 3`: the capstones' MLP and CNN, babygrad against "
              "the NumPy floor and PyTorch):", "```\n" + results["training"].strip() + "\n```"]
    step = results["mlp_step"]
    phases = step["phases_us"]
    names = list(phases["babygrad"])
    rows = []
    for name in names:
        rows.append([name, phases["babygrad"][name], phases["NumPy floor"][name]])
        if name == "forward, loss and backward":
            rows.append(["of which the five matrix products", step["products_us"], step["products_us"]])
    rows.append(["**the whole step**", f"**{sum(phases['babygrad'].values())}**", f"**{sum(phases['NumPy floor'].values())}**"])
    parts += ["**Where the MLP's training step goes** (`mlp_step.py`, microseconds per step, each library's fastest "
              "pass):", table(["phase", "babygrad µs", "NumPy floor µs"], rows)]
    return "\n\n".join(parts)


def summary(results):
    """The figures a reader decides on (seconds per submission per chapter, what a term costs), with their
    command, date and machine: what `--summary` writes between the README's summary marks."""
    run, rates = results["run"], results["cost"]["seconds_per_submission"]
    e = efficiency(results["cluster"])
    term, cores = results.get("term", 10_000), results.get("cores", 8)
    hours = projection(rates, min(e, 1.0), cores, term)
    chapters = list(rates)
    return "\n".join([
        f"Seconds per solved submission on one core, sandbox and judge on, and what a term of {term // len(rates):,} "
        f"students × {len(rates)} chapters takes on {cores} cores (`{run['command']}`, {run['date']}, "
        f"{run['machine']}, with nothing else running):", "",
        table(["chapter", *(c.removeprefix("ch").lstrip("0") for c in chapters), "one student, every chapter",
               f"{term:,} submissions, {cores} cores"],
              [["seconds", *(f"{rates[c]:.2f}" for c in chapters), f"{sum(rates.values()):.1f} s", f"{hours:.2f} h"]])])


def rewrite_region(text, tables, marks=(BEGIN, END)):
    """`text` with what stands between the `marks` replaced by `tables`."""
    begin, end = marks
    if begin not in text or end not in text:
        raise ValueError(f"no {begin} ... {end} region to rewrite")
    return re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: f"{begin}\n{tables}\n{end}", text, flags=re.S)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=40, help="chapter 3 submissions for step 1 (default 40)")
    parser.add_argument("--torch-python", help="a Python with PyTorch installed, for step 3's third column")
    parser.add_argument("--cores", type=int, default=8, help="cores of the projected grading machine (default 8)")
    parser.add_argument("--term", type=int, default=10_000, help="submissions in the projected term (default 10,000)")
    parser.add_argument("--record", type=Path, help="write the run's figures to this JSON file")
    parser.add_argument("--results", type=Path, help="measure nothing: render this recorded run")
    parser.add_argument("--markdown", type=Path, help="rewrite the tables between this file's scale marks")
    parser.add_argument("--summary", type=Path, help="rewrite the figures between this file's scale-summary marks")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    results = json.loads(args.results.read_text()) if args.results else measure(args)
    if args.record:
        args.record.write_text(json.dumps(results, indent=1) + "\n")
    rates = results["cost"]["seconds_per_submission"]
    e = efficiency(results["cluster"])
    hours = projection(rates, min(e, 1.0), results["cores"], results["term"])
    print("\nProjection (model in this script's docstring):")
    print(f"  per-core seconds per submission, all chapters: {sum(rates.values()):.1f} (one student, every chapter)")
    print(f"  efficiency of {results['cluster']['threads']} threads on this machine: {e:.2f}")
    print(f"  {results['term']:,} submissions evenly over {len(rates)} chapters on {results['cores']} cores: {hours:.2f} h")
    if args.markdown:
        args.markdown.write_text(rewrite_region(args.markdown.read_text(encoding="utf-8"), render(results)),
                                 encoding="utf-8")
        print(f"tables written into {args.markdown}")
    if args.summary:
        args.summary.write_text(rewrite_region(args.summary.read_text(encoding="utf-8"), summary(results), SUMMARY),
                                encoding="utf-8")
        print(f"figures written into {args.summary}")


if __name__ == "__main__":
    main()
