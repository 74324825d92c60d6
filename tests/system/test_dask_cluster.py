"""Grading on a real Dask cluster: `dask scheduler` and two `dask worker` processes on localhost, each
worker in an empty folder of its own with an environment of its own, grading twenty chapter 3
submissions through `python -m autograder grade ch03 --scheduler ...`. One worker is killed while it
grades; every submission is still graded exactly once, and every submission's gradebook record equals, field
by field, the one serial `nbgrader autograde` writes for the same notebook (ten kinds, each handed in twice:
serial nbgrader grades each kind once)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from autograder.build import submissions
from autograder.grading import autograde
from autograder.grading.nbgrader_cli import nbgrader_env

from helpers.class_support import course_copy, hand_in, records
from helpers.grading_support import mistake_buckets

CHAPTER = "ch03"
STUDENTS = 20
KINDS = 10              # distinct notebooks: serial nbgrader grades each once, the reference for both its students
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="grading sandboxes kernels with bwrap")


def twenty_submissions(course, chapter):
    """{student: notebook}: ten kinds (the solution, the untouched notebook, the demo's partial student, the
    catalogue's first mistakes and right alternatives), each handed in by two students, student i and i + 10."""
    cfg = course.config
    release = nbformat.read(course.notebook(cfg.RELEASE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4))
    catalog = submissions.load_catalog(course, chapter)
    kinds = [submissions.filled(release, answers), release,
             nbformat.read(course.notebook(cfg.DEMO_DIR, chapter, "partial"), as_version=4)]
    kinds += [submissions.filled(release, submissions.with_mistakes(answers, bucket))
              for bucket in mistake_buckets(catalog.MISTAKES)[:5] + mistake_buckets(catalog.ALTERNATIVES)[:2]]
    return {f"student{i:02d}": kinds[i % KINDS] for i in range(STUDENTS)}


def twin(student):
    """The student handing in the same notebook among the first ten: the one the serial reference grades."""
    return f"student{int(student.removeprefix('student')) % KINDS:02d}"


def started(argv, folder, log, env=None):
    folder.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        return subprocess.Popen(argv, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def worker_env(folder):
    """Only what a worker on another machine would have: its own home, temporary folder and name."""
    (folder / "tmp").mkdir(parents=True)
    return {"PATH": f"{BIN}{os.pathsep}/usr/local/bin:/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8",
            "TMPDIR": str(folder / "tmp")}


def wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.2)


def grading_kernels(worker):
    """The sandboxed kernels below a worker process: it is grading a submission right now."""
    try:
        return [p for p in worker.children(recursive=True) if p.name() == "bwrap"]
    except psutil.Error:
        return []


@pytest.fixture
def cluster(tmp_path):
    """(scheduler address, {name: worker Popen}, folder); everything is stopped afterwards."""
    scheduler_file = tmp_path / "scheduler.json"
    processes = {"scheduler": started([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                       "--no-dashboard", "--scheduler-file", str(scheduler_file)],
                                      tmp_path / "scheduler", tmp_path / "scheduler.log")}
    try:
        wait_for(scheduler_file.exists, 300, "the scheduler")
        for name in ("a", "b"):
            folder = tmp_path / f"worker-{name}"
            folder.mkdir()
            processes[name] = started(
                [str(BIN / "dask"), "worker", "--scheduler-file", str(scheduler_file), "--name", name,
                 "--nthreads", "1", "--no-dashboard", "--local-directory", str(folder / "dask")],
                folder, tmp_path / f"worker-{name}.log", env=worker_env(folder))
        from distributed import Client
        with Client(scheduler_file=str(scheduler_file), timeout=60) as client:
            client.wait_for_workers(2, timeout=600)
            address = client.scheduler.address
        yield address, processes, tmp_path
    finally:
        for process in processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def test_a_cluster_grades_like_serial_nbgrader_even_when_a_worker_dies(repo_course, cluster, tmp_path):
    address, processes, logs = cluster
    serial = course_copy(repo_course, tmp_path / "serial", CHAPTER)
    course = course_copy(repo_course, tmp_path / "cluster", CHAPTER)
    chapter = course.chapter(CHAPTER)
    notebooks = twenty_submissions(course, chapter)
    hand_in(course, chapter, notebooks)
    hand_in(serial, chapter, {s: notebooks[s] for s in notebooks if twin(s) == s})
    ledger = course.root / course.config.LEDGER_DIR / f"{CHAPTER}.json"

    grade = subprocess.Popen([sys.executable, "-m", "autograder", "grade", CHAPTER, "--scheduler", address, "--quiet"],
                             cwd=course.root, env=dict(os.environ, **nbgrader_env()),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = psutil.Process(processes["a"].pid)

    def busy_after_two_graded():
        assert grade.poll() is None, grade.communicate()
        graded = json.loads(ledger.read_text()) if ledger.exists() else {}
        return len(graded) >= 2 and grading_kernels(victim)

    wait_for(busy_after_two_graded, 600, "worker a to grade after two results")
    below = victim.children(recursive=True)
    os.killpg(processes["a"].pid, signal.SIGKILL)           # worker a dies in the middle of a submission
    out, err = grade.communicate(timeout=3600)          # a guard against a hang: a busy machine takes long
    assert grade.returncode == 0, (out, err[-3000:])
    _, alive = psutil.wait_procs(below, timeout=30)
    assert alive == [], f"the dead worker's grading outlived it: {[p.cmdline() for p in alive]}"

    assert f"{CHAPTER}: graded {STUDENTS}, already graded 0, with problems 0" in out, out
    assert sorted(json.loads(ledger.read_text())) == sorted(notebooks)
    autograde(serial, chapter, check=False)
    reference = records(serial, chapter)
    assert sorted(reference) == sorted({twin(s) for s in notebooks}) and len(reference) == KINDS
    expected = {s: reference[twin(s)] for s in notebooks}
    got = records(course, chapter)
    differing = [s for s in expected if got.get(s) != expected[s]]
    assert sorted(got) == sorted(expected) and not differing, f"first differing student: {differing[:1]}"
    totals = {s: sum(g[5] for g in r[chapter.notebook]["grades"].values()) for s, r in got.items()}
    assert totals["student00"] == course.autograded_points(chapter) and totals["student01"] == 0
    assert all((course.root / course.config.AUTOGRADED_DIR / s / CHAPTER / f"{chapter.notebook}.ipynb").is_file()
               for s in notebooks)
    # the survivor graded from its own folder: the chapter's kit was shipped to it as bytes
    assert list((logs / "worker-b" / "dask").rglob("kit-*/source/ch03/*.ipynb"))


def test_the_slurm_job_script_starts_a_worker_that_grades(built_course, tmp_path):
    """deploy/slurm's settings give dask-jobqueue a valid batch script; run as Slurm would run it (its
    #SBATCH lines are comments to bash), it starts a worker that grades a chapter's demo class."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "deploy" / "slurm"))
    from helpers.class_support import demo_class
    from start_cluster import slurm_cluster

    from autograder.grading import scores
    from autograder.grading.parallel import grade_chapter

    chapter_id = built_course.chapters[0].id
    course = course_copy(built_course, tmp_path / "course", chapter_id)
    chapter = course.chapter(chapter_id)
    hand_in(course, chapter, demo_class(course, chapter))
    with slurm_cluster(scheduler_options={"dashboard_address": ":0"}) as cluster:
        script = cluster.job_script()
        assert "#SBATCH --cpus-per-task=2" in script and "#SBATCH --mem=8G" in script
        assert f"{sys.executable} -m distributed.cli.dask_worker {cluster.scheduler_address}" in script
        node = tmp_path / "node"
        env = worker_env(node)                    # TMPDIR, the local directory in jobqueue.yaml: node/tmp
        (node / "job.sh").write_text(script)
        job = started(["bash", str(node / "job.sh")], node, tmp_path / "job.log", env=env)
        try:
            run = grade_chapter(course, chapter, progress=False, scheduler=cluster.scheduler_address)
            kits = list((node / "tmp").rglob("kit-*/source"))    # before the worker ends and clears its scratch
        finally:
            os.killpg(job.pid, signal.SIGTERM)
            job.wait(60)
    assert sorted(run.graded) == ["partial", "perfect", "untouched"] and run.problems == {}
    table = scores(course, chapter)
    assert sum(s or 0 for s, _ in table["perfect"].values()) == course.autograded_points(chapter)
    assert sum(s or 0 for s, _ in table["untouched"].values()) == 0
    assert kits, "the worker did not grade in the node's own scratch"
