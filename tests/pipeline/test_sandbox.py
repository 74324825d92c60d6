"""The sandbox, for real: hostile chapter 3 submissions graded by plain `nbgrader autograde` through the
course's configuration, with real bwrap. Each student is the solved notebook plus a few lines; each
test states what that student must score, and what must not have happened to the course."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import psutil
import pytest
from nbgrader.api import Gradebook, MissingEntry
from traitlets.config import Config

from autograder.course import Course
from autograder.grading import sandbox
from autograder.grading.gradebook_merge import submission_record
from autograder.grading.nbgrader_cli import run_nbgrader
from autograder.grading.judge.probes import PROGRESS_MIME, Probe, ProbeStopped
from autograder.grading.sandboxed_execute import SandboxedExecute, SandboxUnavailable
from autograder.questions import written_points

from helpers.across_workers import once_per_run
from helpers.class_support import registered
from helpers.course_paths import ROOT
from helpers.demo_students import demo_notebook
from helpers.outgrowers import CHANNELS, CUT_KINDS, outgrower

pytestmark = pytest.mark.skipif(sandbox.unavailable_reason() is not None,
                                reason=f"no usable sandbox here: {sandbox.unavailable_reason()}")

CHAPTER, NOTEBOOK = "ch03", "autodiff.ipynb"
POINTS = Course(ROOT).autograded_points(Course(ROOT).chapter(CHAPTER))
CELL_TIMEOUT = 6           # the endless cell costs this long; several times any chapter 3 cell or probe, loaded
# Every process a hostile student leaves behind is `sleep MARK`, a number of this test process's own: another test
# run's hostile students, grading at the same time on the machine, are not this one's leftovers.
MARK = f"737.{os.getpid()}"

# Appended to the first solution cell (`operators`); each attempt reports how it went, and never raises.
SNOOP = r'''
import glob, os, sqlite3, autograder
_found, _gradebook = [], []
for _up in range(8):
    _root = os.path.abspath(os.path.join(".", *[".."] * _up))
    for _path in glob.glob(f"{_root}/source/*/*.ipynb") + glob.glob(f"{_root}/solutions/*/*.ipynb"):
        _found.append(_path)
        print(open(_path).read())
    try:
        _db = sqlite3.connect(f"file:{_root}/gradebook.db?mode=rw", uri=True)
        _db.execute("UPDATE grade SET auto_score = 47000")
        _db.commit()
        print("GRADEBOOK WRITTEN")
    except Exception as _e:
        _gradebook.append(f"{type(_e).__name__}: {_e}")
try:
    print(open("../../../source/ch03/autodiff.ipynb").read())
except OSError as _e:
    print("SNOOP source:", type(_e).__name__)
print("SNOOP found", len(_found), "notebooks; gradebook:", _gradebook[0])
import base64
_own = glob.glob("**/*.ipynb", recursive=True)      # the notebook being graded holds the hidden tests
print("SNOOP own folder:", len(_own), "notebooks")
for _path in _own:                                   # encoded: the feedback guard matches plain lines only
    print("SNOOPB64:" + base64.b64encode(open(_path, "rb").read()[::-1]).decode())
try:
    with open(os.path.join(os.path.dirname(autograder.__file__), "student", "checks", "__init__.py"), "a") as _f:
        _f.write("\nraise SystemExit('tampered')\n")
    print("PACKAGE WRITTEN")
except OSError as _e:
    print("SNOOP package:", _e.strerror)
'''
MEMORY_BOMB = '''
import numpy as _np
_hoard = []
try:
    while True:
        _hoard.append(_np.empty(256 << 20, dtype=_np.uint8))     # address space, never touched
except MemoryError:
    print("MEMORY BOMB stopped at", len(_hoard) // 4, "GiB")
del _hoard
'''
FORK_BOMB = f'''
import os as _os
_children = 0
try:
    while True:
        if _os.fork() == 0:
            _os.execvp("sleep", ["sleep", "{MARK}"])
        _children += 1
except OSError as _e:
    print("FORK BOMB stopped after", _children, "children:", _e.strerror)
'''
DAEMONS = f'''
import os as _os, subprocess as _subprocess
_subprocess.Popen(["sleep", "{MARK}"], start_new_session=True)
if _os.fork() == 0:                  # the classic double fork: a daemon re-parented away from the kernel
    _os.setsid()
    if _os.fork() == 0:
        _os.execvp("sleep", ["sleep", "{MARK}"])
    _os._exit(0)
print("DAEMONS started")
'''
# Appended to the `mul` exercise: Mul.backward stays right for the notebook's own checks, but misbehaves
# when the judge's probe calls it (its frames come from "<babygrad probe>"): it floods or hangs there.
def inside_probe(action):
    return f'''
import sys as _sys
_right_backward = Mul.backward
def _backward(self, out_grad, node):
    _frame = _sys._getframe(1)
    while _frame is not None:
        if _frame.f_code.co_filename == "<babygrad probe>":
{action}
        _frame = _frame.f_back
    return _right_backward(self, out_grad, node)
Mul.backward = _backward
'''


PROBE_FLOOD = inside_probe("            while True:\n                print('p' * 10_000)")
PROBE_HANG = inside_probe("            import time\n            while True:\n                try:\n"
                          "                    time.sleep(1)\n                except KeyboardInterrupt:\n"
                          "                    pass")
PROBE_KILL = inside_probe("            import os\n            os._exit(1)")
FLOOD = '''
for _ in range(9):
    print("y" * 10_000_000)
while True:
    print("z" * 10_000)
'''


def solved():
    return demo_notebook(CHAPTER, "perfect")


def appended(code, cell_id="operators"):
    """The solved notebook with `code` appended to one solution cell."""
    notebook = solved()
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell_id)
    cell.source += "\n" + code
    return notebook


def huge():
    """A 200 MB notebook, as a student who displayed a huge image and pasted a huge array would hand in:
    100 MB of output (never run, cleared before grading) and a 100 MB cell (not run: over the limit)."""
    notebook = solved()
    picture = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo" + "A" * (100 << 20)})
    notebook.cells[0].outputs = [picture] if notebook.cells[0].cell_type == "code" else []
    if notebook.cells[0].cell_type != "code":
        notebook.cells.insert(1, nbformat.v4.new_code_cell("print('a picture')", outputs=[picture]))
    notebook.cells.insert(2, nbformat.v4.new_code_cell("_pasted = [" + "0.5, " * (20 << 20) + "]"))
    return notebook


def with_cells_after(cell_id, *codes):
    """The solved notebook with new code cells of the student's own after one solution cell."""
    notebook = solved()
    index = next(i for i, c in enumerate(notebook.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == cell_id)
    notebook.cells[index + 1:index + 1] = [nbformat.v4.new_code_cell(code) for code in codes]
    return notebook


STUDENTS = {
    "daemons": appended(DAEMONS),
    "flood": appended(FLOOD, "mul"),
    "forkbomb": appended(FORK_BOMB),
    "huge": huge(),
    "intruder": appended(SNOOP),
    "killer": with_cells_after("mul", "import os\nos._exit(1)", "import ctypes\nctypes.string_at(0)",
                               "import time\nwhile True:\n    try:\n        time.sleep(1)\n    except KeyboardInterrupt:\n"
                               "        pass"),
    "memory": appended(MEMORY_BOMB),
    "outgrower": outgrower(solved(), "mul"),
    "probe-flood": appended(PROBE_FLOOD, "mul"),
    "probe-hang": appended(PROBE_HANG, "mul"),
    "probe-killer": appended(PROBE_KILL, "mul"),
}
WITH_FEEDBACK = ["outgrower", "perfect"]   # their feedback pages are made too
# Graded first, in a run of their own: the hostile run must leave their gradebook rows as they were.
BYSTANDERS = {
    "perfect": solved(),
    "partial": demo_notebook(CHAPTER, "partial"),
}


def tree_hash(*paths):
    digest = hashlib.sha256()
    for path in paths:
        for file in sorted(p for p in Path(path).rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(str(file).encode() + file.read_bytes())
    return digest.hexdigest()


def leftovers(root):
    """Processes grading started, still alive: a hostile student's (`sleep MARK`), or any whose command
    line names the course folder (nbgrader, bwrap: each sandbox's processes die with its bwrap)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if cmdline == ["sleep", MARK] or any(str(root) in part for part in cmdline):
            found.append(f"{process.pid}: {' '.join(cmdline)[:200]}")
    return found


def hidden_test_lines(source_notebook):
    lines = set()
    for cell in source_notebook.cells:
        inside = False
        for line in cell.source.splitlines():
            if "BEGIN HIDDEN TESTS" in line:
                inside = True
            elif "END HIDDEN TESTS" in line:
                inside = False
            elif inside and len(line.strip()) > 12:
                lines.add(line.strip())
    return lines


def course_with(root, students=(), notebook_timeout=None):
    """A course folder with chapter 3 registered in a fresh gradebook, and these submissions handed in."""
    shutil.copy(ROOT / "nbgrader_config.py", root)
    config = (ROOT / "course_config.py").read_text(encoding="utf-8")
    config = re.sub(r"(?m)^CELL_TIMEOUT_SECONDS = \d+", f"CELL_TIMEOUT_SECONDS = {CELL_TIMEOUT}", config)
    if notebook_timeout:
        config = re.sub(r"(?m)^NOTEBOOK_TIMEOUT_SECONDS = \d+", f"NOTEBOOK_TIMEOUT_SECONDS = {notebook_timeout}", config)
    (root / "course_config.py").write_text(config, encoding="utf-8")
    shutil.copytree(ROOT / "source" / CHAPTER, root / "source" / CHAPTER)
    registered(Course(root), CHAPTER)
    hand_in(root, dict(students))
    return root


def hand_in(root, students):
    for student, notebook in students.items():
        folder = root / "submitted" / student / CHAPTER
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / NOTEBOOK)
        shutil.copy(ROOT / "release" / CHAPTER / "earlier_chapters.py", folder)


def gradebook_rows(root, students):
    """Every field nbgrader keeps for these students' submissions."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        return {s: submission_record(gradebook, CHAPTER, s) for s in students}


def score(root, student):
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        try:
            return gradebook.find_submission(CHAPTER, student).score
        except MissingEntry:
            return None


def grade_the_class(root):
    """The bystanders graded by `nbgrader autograde ch03`; then the hostile class handed in and graded
    by a second plain `nbgrader autograde ch03` (which leaves graded students alone). Plain data back."""
    course_with(root)
    hand_in(root, BYSTANDERS)
    run_nbgrader(root, "autograde", CHAPTER)
    bystanders_before = gradebook_rows(root, BYSTANDERS)
    hand_in(root, STUDENTS)
    protected = [ROOT / "autograder", root / "source", root / "course_config.py", root / "nbgrader_config.py"]
    before = tree_hash(*protected)
    done = run_nbgrader(root, "autograde", CHAPTER, check=False)
    time.sleep(1)                   # a sandbox's last processes are reaped as it exits
    others = ",".join(sorted((set(STUDENTS) | set(BYSTANDERS)) - set(WITH_FEEDBACK)))
    feedback = run_nbgrader(root, "generate_feedback", CHAPTER, f"--CourseDirectory.student_id_exclude={others}", check=False)
    everyone = {**STUDENTS, **BYSTANDERS}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        scores = {s: gradebook.find_submission(CHAPTER, s).score for s in everyone}
        maxima = {s: gradebook.find_submission(CHAPTER, s).max_score for s in everyone}
    return {"root": root, "log": done.stdout + done.stderr, "returncode": done.returncode, "scores": scores,
            "maxima": maxima, "unchanged": tree_hash(*protected) == before, "leftovers": leftovers(root),
            "bystanders_before": bystanders_before, "bystanders_after": gradebook_rows(root, BYSTANDERS),
            "feedback_log": feedback.stdout + feedback.stderr}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The hostile class graded once per test run, in a copy of the course (see grade_the_class)."""
    _, graded = once_per_run(tmp_path_factory, "sandboxed-class", grade_the_class)
    return graded


def autograded(graded_class, student):
    return nbformat.read(graded_class["root"] / "autograded" / student / CHAPTER / NOTEBOOK, as_version=4)


def outputs_text(notebook):
    """Everything the cells printed or raised, not their source. A cell's consecutive stream outputs are one text,
    as Jupyter shows them: the kernel may flush one print() in two messages ("FORK BOMB stopped after", " 53
    children"), as it did once under load."""
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append(output["text"] if output.get("output_type") == "stream" else f"\n{output}\n")
        parts.append("\n")
    return "".join(parts)


def test_the_whole_class_is_graded_and_nothing_outlives_it(graded_class):
    assert graded_class["returncode"] == 0, graded_class["log"][-3000:]
    assert graded_class["leftovers"] == [], "processes started by grading survived it"
    assert graded_class["unchanged"], "the autograder package, source/ or the configuration changed"
    # the gradebook's maximum holds the autograded points and the written questions' (graded by people)
    written = written_points(nbformat.read(ROOT / "source" / CHAPTER / NOTEBOOK, as_version=4))
    assert written > 0 and all(graded_class["maxima"][s] == POINTS + written for s in graded_class["scores"])


def test_other_students_gradebook_rows_are_unchanged_field_by_field(graded_class):
    before, after = graded_class["bystanders_before"], graded_class["bystanders_after"]
    assert before["perfect"] and before["partial"]
    for student in before:
        assert after[student] == before[student], f"{student}'s gradebook rows changed during the hostile run"
    assert 0 < graded_class["scores"]["partial"] < POINTS


def test_perfect_keeps_full_marks_sandboxed(graded_class):
    assert graded_class["scores"]["perfect"] == POINTS


def test_intruder_sees_no_source_no_gradebook_and_cannot_write_the_package(graded_class):
    """Keeps full marks (its exercises are right); every attempt failed, and the feedback-to-be holds
    no line of the hidden tests."""
    assert graded_class["scores"]["intruder"] == POINTS
    text = outputs_text(autograded(graded_class, "intruder"))
    assert "SNOOP found 0 notebooks" in text and "SNOOP source: FileNotFoundError" in text
    assert "SNOOP own folder: 0 notebooks" in text
    assert "GRADEBOOK WRITTEN" not in text and "PACKAGE WRITTEN" not in text
    assert re.search("SNOOP package: (Read-only file system|Permission denied)", text)
    assert "gradebook: OperationalError: unable to open database file" in text
    hidden = hidden_test_lines(nbformat.read(ROOT / "source" / CHAPTER / NOTEBOOK, as_version=4))
    assert hidden and not [line for line in hidden if line in text]


def test_memory_bomb_stops_at_the_limit_and_keeps_full_marks(graded_class):
    assert graded_class["scores"]["memory"] == POINTS
    assert "MEMORY BOMB stopped at" in outputs_text(autograded(graded_class, "memory"))


def test_fork_bomb_stops_at_the_process_limit_and_keeps_full_marks(graded_class):
    assert graded_class["scores"]["forkbomb"] == POINTS
    text = outputs_text(autograded(graded_class, "forkbomb"))
    children = int(re.search(r"FORK BOMB stopped after (\d+) children", text).group(1))
    assert 0 < children < sandbox.SandboxLimits().processes


def test_daemons_die_with_the_sandbox_and_keep_full_marks(graded_class):
    assert graded_class["scores"]["daemons"] == POINTS
    assert "DAEMONS started" in outputs_text(autograded(graded_class, "daemons"))
    assert graded_class["leftovers"] == []


def test_flood_is_cut_to_a_small_notebook_and_keeps_full_marks(graded_class):
    """9 prints of 10 MB, then an endless print loop: interrupted by the timeout, output capped."""
    assert graded_class["scores"]["flood"] == POINTS
    path = graded_class["root"] / "autograded" / "flood" / CHAPTER / NOTEBOOK
    assert path.stat().st_size < 1_000_000
    text = outputs_text(autograded(graded_class, "flood"))
    assert "output cut:" in text and "bytes of printed text not kept" in text


def test_a_200_mb_notebook_is_graded_and_keeps_full_marks(graded_class):
    """Its outputs are cleared before grading and its huge cell is not run: a small autograded notebook."""
    assert graded_class["scores"]["huge"] == POINTS
    path = graded_class["root"] / "autograded" / "huge" / CHAPTER / NOTEBOOK
    assert path.stat().st_size < 1_000_000
    assert "cell too large to grade" in outputs_text(autograded(graded_class, "huge"))


def output_bytes_of(notebook):
    """{cell index: bytes of the JSON of its outputs}, as the notebook file holds them."""
    return {i: sum(len(json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode()) for o in c.get("outputs", []))
            for i, c in enumerate(notebook.cells)}


def grown(graded_class, student, folder, suffix):
    """How many bytes bigger than the perfect student's a student's file in `folder` is."""
    path = Path(graded_class["root"]) / folder / "{}" / CHAPTER / NOTEBOOK.replace(".ipynb", suffix)
    return Path(str(path).format(student)).stat().st_size - Path(str(path).format("perfect")).stat().st_size


def test_every_output_channel_stays_under_the_cap_and_keeps_full_marks(graded_class):
    """Cells of the student's own send 20 MB as a display update, 200 results of 8 kB, 20 MB of output
    metadata, 20 MB of widget state and an exception whose name and message are 5 MB each: each cell keeps at most
    its cap, says what was cut, and the autograded notebook and feedback page grow by less than a notebook's cap."""
    import course_config
    per_cell, per_notebook = course_config.OUTPUT_BYTES_PER_CELL, course_config.OUTPUT_BYTES_PER_NOTEBOOK
    assert graded_class["scores"]["outgrower"] == POINTS
    notebook = autograded(graded_class, "outgrower")
    sizes = output_bytes_of(notebook)
    own = {name: next(i for i, c in enumerate(notebook.cells) if c.source == code) for name, code in CHANNELS.items()}
    notes = {name: "".join(o.get("text", "") for o in notebook.cells[i].outputs if "output cut:" in o.get("text", ""))
             for name, i in own.items()}
    for name, kind in CUT_KINDS.items():
        assert f"bytes of {kind} not kept" in notes[name], (name, notebook.cells[own[name]].outputs)
    for name, index in own.items():
        assert sizes[index] <= per_cell + len(notes[name]) + 100, (name, sizes[index])
    assert "UPDATED" in outputs_text(notebook) and "HOOKED" in outputs_text(notebook) and "WIDGET" in outputs_text(notebook)
    assert sum(sizes.values()) <= per_notebook + 10_000
    assert "widgets" not in notebook.metadata and len(json.dumps(notebook.metadata)) < 2_000
    assert grown(graded_class, "outgrower", "autograded", ".ipynb") < per_notebook
    assert grown(graded_class, "outgrower", "feedback", ".html") < 2 * per_notebook, graded_class["feedback_log"][-2000:]


@pytest.mark.parametrize(("student", "error"), [("probe-flood", "JudgeVerdict"), ("probe-hang", "KernelDied")])
def test_code_that_floods_or_hangs_under_the_judge_loses_only_that_cell(graded_class, student, error):
    """Right for the notebook's checks, endless under the judge's probe: the student loses test_mul_backward
    and nothing else, and grading goes on. The flood is cut once it has printed `flood_chars` (in a second,
    not at the timeout) and stops when interrupted, so the judge says it printed too much; the hang is cut at
    the cell timeout and ignores the interrupt, so the kernel is killed and the notebook re-run without that cell.
    The worker's progress marks name the cell in the probe of several cells: no run judges each cell alone,
    which would cut the hang a second time."""
    notebook = autograded(graded_class, student)
    assert f"running {student}'s {NOTEBOOK.removesuffix('.ipynb')} again, judging each cell alone" not in graded_class["log"]
    assert f"running probe-killer's {NOTEBOOK.removesuffix('.ipynb')} again, judging each cell alone" in graded_class["log"]
    cell = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_mul_backward")
    points = cell.metadata["nbgrader"]["points"]
    assert graded_class["scores"][student] == POINTS - points
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert [o.ename for o in errors] == [error], cell.outputs
    if error == "JudgeVerdict":
        assert "your kernel's answer: on the judge's inputs your code printed more than 20,000,000 characters" in errors[0].evalue
    path = graded_class["root"] / "autograded" / student / CHAPTER / NOTEBOOK
    assert path.stat().st_size < 1_000_000


def test_a_kernel_killed_while_cells_are_judged_together_is_blamed_on_the_cell_that_killed_it(graded_class):
    """The judge checks test_mul_forward and test_mul_backward in one probe; Mul.backward exits Python under
    the judge. Which cell's checks did it is unknown, so the notebook runs again with each cell judged alone:
    test_mul_backward dies alone (a KernelDied, repaired) and test_mul_forward keeps its point."""
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in autograded(graded_class, "probe-killer").cells
             if c.metadata.get("nbgrader", {}).get("grade")}
    assert graded_class["scores"]["probe-killer"] == POINTS - cells["test_mul_backward"].metadata["nbgrader"]["points"]
    assert [o.ename for o in cells["test_mul_backward"].outputs if o.output_type == "error"] == ["KernelDied"]
    assert not [o for o in cells["test_mul_forward"].outputs if o.output_type == "error"]
    assert "the kernel died while the judge checked test_mul_forward, test_mul_backward together" in graded_class["log"]
    assert "(exit status 1)" in cells["test_mul_backward"].outputs[-1].evalue     # how it died, not a timeout


def test_cells_that_kill_the_kernel_are_repaired_not_scored_zero(graded_class):
    """Three cells of the student's own kill the kernel (os._exit, a segfault) or make it unusable (an
    endless loop that ignores interrupts): each gets a KernelDied error, and every graded cell keeps its points."""
    assert graded_class["scores"]["killer"] == POINTS
    cells = autograded(graded_class, "killer").cells
    died = [c for c in cells if any(o.get("ename") == "KernelDied" for o in c.get("outputs", []))]
    assert [c.source.splitlines()[1] for c in died] == ["os._exit(1)", "ctypes.string_at(0)", "while True:"]
    assert "SIGSEGV" in died[1].outputs[-1].evalue
    assert "did not stop when interrupted" in died[2].outputs[-1].evalue
    killers_deaths = [line for line in graded_class["log"].splitlines()
                      if "The kernel died in cell" in line and "re-running killer's autodiff" in line]
    assert len(killers_deaths) == 3, killers_deaths


def test_a_notebook_out_of_time_keeps_what_it_earned_and_holds_up_no_one(tmp_path):
    """Plain `nbgrader autograde`: after the `mul` exercise, twelve cells that each sleep just under the cell
    timeout, then say so. The notebook's budget (here 30 s, less than their sleep together) stops them: the
    graded cells above keep their points, the sleeping cells before the cut ran, the one cut was stopped, every
    code cell after it did not run, all of those score 0 and say why, and the student graded next keeps full marks.
    The budget counts from the kernel's start; the cells above the sleepers take about 4 s of it on a busy
    machine, so the cut falls among the sleepers there too."""
    budget, nap, sleepers = 30, CELL_TIMEOUT - 2, 12
    assert sleepers * nap > budget
    dawdler = with_cells_after("mul", *[f"import time\ntime.sleep({nap})\nprint('slept {i}')" for i in range(sleepers)])
    root = course_with(tmp_path, {"dawdler": dawdler, "perfect": solved()}, notebook_timeout=budget)
    done = run_nbgrader(root, "autograde", CHAPTER, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert score(root, "perfect") == POINTS
    cells = nbformat.read(root / "autograded" / "dawdler" / CHAPTER / NOTEBOOK, as_version=4).cells
    stopped = [i for i, c in enumerate(cells) if any(o.get("ename") == "NotebookTimeout" for o in c.get("outputs", []))]
    assert stopped, "no cell says the notebook ran out of time"
    cut = stopped[0]
    assert "time.sleep" in cells[cut].source and f"longer than {budget} s in all" in cells[cut].outputs[-1].evalue
    assert stopped == [i for i, c in enumerate(cells) if i >= cut and c.cell_type == "code"]
    slept = [i for i, c in enumerate(cells) if "time.sleep" in c.source and "slept" in outputs_text(nbformat.v4.new_notebook(cells=[c]))]
    # the cell cut may have finished its nap as its time ran out; no cell after it ran
    assert all(i <= cut for i in slept) and len(slept) < sleepers, "a sleeping cell after the cut ran"
    assert all([o.ename for o in cells[i].outputs] == ["NotebookTimeout"] for i in stopped[1:])
    earned = sum(c.metadata["nbgrader"]["points"] for c in cells[:cut] if c.metadata.get("nbgrader", {}).get("grade")
                 and c.cell_type == "code")
    assert 0 < earned < POINTS and score(root, "dawdler") == earned
    assert f"dawdler's autodiff ran out of its {budget} s" in done.stdout + done.stderr


def test_a_probe_and_the_cells_after_it_get_what_is_left_of_the_budget(tmp_path):
    """SandboxedExecute alone: a probe that sleeps ten minutes gets only what is left of the notebook's 20 s (which
    count from the kernel's start: a busy machine's start leaves most of them), is stopped and says why, and the
    cell after it does not run, says why and scores 0."""
    class SlowProbe(SandboxedExecute):
        raised = []

        def after_graded_cell(self, cell, index):
            try:
                self.run_probe(Probe("import time\ntime.sleep(600)\n", "1"))
            except ProbeStopped as error:
                self.raised.append(str(error))

    notebook = probe_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell("print('ran after the probe')"))
    executed, _ = SlowProbe(timeout=900, notebook_timeout=20).preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    assert len(SlowProbe.raised) == 1 and "longer than 20 s in all" in SlowProbe.raised[0]
    assert [o.ename for o in executed.cells[1].outputs] == ["NotebookTimeout"]
    assert "ran after the probe" not in outputs_text(executed)


def test_process_limit_counts_each_sandbox_apart(tmp_path):
    """RLIMIT_NPROC set inside each sandbox's own user namespace: two fork bombs at once each reach
    the limit, so neither counts the other's processes (nor any other process of the same uid)."""
    limits = sandbox.SandboxLimits(processes=20)
    bomb = ("import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n            time.sleep(3)\n"
            "            os._exit(0)\n        n += 1\nexcept OSError:\n    print(n)\n")

    def run(_):
        launch = sandbox.sandbox_launch([sys.executable, "-c", bomb], tmp_path, limits)
        try:
            return subprocess.run(launch.argv, capture_output=True, text=True, timeout=60, pass_fds=launch.fds)
        finally:
            launch.close()

    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(run, range(2)))
    assert [r.returncode for r in runs] == [0, 0], [r.stderr for r in runs]
    assert [int(r.stdout) for r in runs] == [limits.processes - 1] * 2


def test_kernels_start_with_matplotlibs_font_list_already_built(tmp_path):
    """font_cache builds matplotlib's font list once, in a sandbox; a sandbox seeded with it imports matplotlib
    without scanning the fonts again, and one without the seed still scans them (so the check proves something)."""
    from autograder.grading import font_cache
    code = "import logging; logging.basicConfig(level=logging.INFO); import matplotlib.pyplot"

    def scanned(seeds):
        launch = sandbox.sandbox_launch([sys.executable, "-c", code], tmp_path, sandbox.SandboxLimits(), seeds=seeds)
        try:
            done = subprocess.run(launch.argv, capture_output=True, text=True, timeout=120, pass_fds=launch.fds)
        finally:
            launch.close()
        assert done.returncode == 0, done.stderr[-2000:]
        return "generated new fontManager" in done.stderr
    assert font_cache.seeds(), "no font list was built"
    assert not scanned(font_cache.seeds()) and scanned([])
    with pytest.raises(ValueError, match="under the sandbox's /tmp"):
        sandbox.sandbox_launch(["true"], tmp_path, sandbox.SandboxLimits(), seeds=[(font_cache.font_list(), "/etc/x")])


def probe_notebook():
    graded = nbformat.v4.new_code_cell("x = 41 + 1")
    graded.metadata["nbgrader"] = {"grade": True, "grade_id": "answer", "points": 1, "solution": False,
                                   "locked": True, "schema_version": 3}
    return nbformat.v4.new_notebook(cells=[graded])


class RecordingExecute(SandboxedExecute):
    """A stand-in judge: after each graded cell, it asks the kernel for `x` as data, then for a name that
    does not exist."""

    probes = []

    def after_graded_cell(self, cell, index):
        setup = "from IPython.display import display\n"
        self.probes.append(self.run_probe(Probe(setup, "display({'application/json': {'x': x}}, raw=True)")))
        self.probes.append(self.run_probe(Probe("", "no_such_name")))


def test_run_probe_returns_display_data_and_adds_no_cell(tmp_path):
    notebook = probe_notebook()
    executed, resources = RecordingExecute(timeout=30).preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    [outputs, failed] = RecordingExecute.probes
    assert [o.output_type for o in outputs] == ["display_data"]
    assert outputs[0].data["application/json"] == {"x": 42}
    assert [(o.output_type, o.ename) for o in failed] == [("error", "NameError")] and "no_such_name" in failed[0].evalue
    assert len(executed.cells) == 1 and resources["babygrad"]["kernel_deaths"] == []
    assert executed.cells[0].execution_count == 1           # probes add no execution to the kernel's count


def marked_probe(*steps):
    """A probe that acts as the worker does for a batch of cells: before each cell's checks a progress mark,
    here followed by a sleep. `steps`: (mark index, seconds) in order."""
    code = "".join(f"publish_display_data({{{PROGRESS_MIME!r}: json.dumps({{'started': {mark}}})}})\n"
                   f"time.sleep({seconds})\n" for mark, seconds in steps)
    return Probe("import json, time\nfrom IPython.display import publish_display_data\n" + code, "'done'",
                 marks=(0, 1))


class MarkedExecute(SandboxedExecute):
    """A stand-in judge asking one marked probe after the graded cell; it keeps what the probe gave or raised."""

    probe, outcome = None, []

    def after_graded_cell(self, cell, index):
        try:
            self.outcome.append(self.run_probe(self.probe))
        except ProbeStopped as stopped:
            self.outcome.append(stopped)


@pytest.mark.parametrize(("limit", "steps", "stopped_at"), [
    (10, [(0, 6), (1, 6)], None),        # 12 s in all, each cell's checks 4 s within the 10 s limit (a busy machine's delay)
    (3, [(0, 0), (1, 60)], 1),           # the second cell's checks outrun it: the stop names it
    (3, [(1, 2), (1, 2)], 1),            # a mark twice: the clock does not start again
    (3, [(1, 2), (0, 2)], 1),            # a mark out of order: likewise
], ids=["each cell in time", "second cell stuck", "mark repeated", "mark backwards"])
def test_a_probe_of_several_cells_gives_each_cell_the_whole_timeout(tmp_path, limit, steps, stopped_at):
    """The worker's progress marks start the probe's clock again for each cell's checks, as a probe of that
    cell alone would get; each mark counts once and in order, so forged marks cannot stretch a probe."""
    MarkedExecute.probe, MarkedExecute.outcome = marked_probe(*steps), []
    MarkedExecute(timeout=limit).preprocess(probe_notebook(), {"metadata": {"path": str(tmp_path)}})
    [outcome] = MarkedExecute.outcome
    if stopped_at is None:
        assert outcome == [], outcome        # the marks are the runner's, not outputs; 'done' is no output
        return
    assert isinstance(outcome, ProbeStopped) and f"ran past the cell time limit ({limit} s)" in str(outcome)
    assert (outcome.started, outcome.killed, outcome.out_of_time) == (stopped_at, False, False)


class ExitingExecute(SandboxedExecute):
    """A stand-in judge whose probe runs code that exits the kernel, as a student's answer to it may."""

    def after_graded_cell(self, cell, index):
        self.run_probe(Probe("import os\nos._exit(3)", "None"))


def test_a_kernel_that_exits_during_a_probe_is_a_death_with_its_exit_status(tmp_path):
    """The probe notices the death while it waits, rather than wait out the cell timeout (here 60 s) and
    blame the kernel for ignoring an interrupt it was too dead to answer."""
    notebook = probe_notebook()
    _, resources = ExitingExecute(timeout=60).preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    [death] = resources["babygrad"]["kernel_deaths"]
    assert (death.cell, death.cause) == ("answer", "exit status 3")


def test_without_a_sandbox_grading_refuses_unless_unsafe(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "unavailable_reason", lambda: "bwrap not found (test)")
    with pytest.raises(SandboxUnavailable, match="--unsafe"):
        SandboxedExecute(timeout=30).preprocess(probe_notebook(), {"metadata": {"path": str(tmp_path)}})
    executed, _ = SandboxedExecute(timeout=30, unsafe=True).preprocess(
        probe_notebook(), {"metadata": {"path": str(tmp_path)}})
    assert executed.cells[0].execution_count == 1


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "unsafe"])
def test_kernels_get_the_course_environment_from_the_configuration(tmp_path, monkeypatch, sandboxed):
    """KERNEL_ENVIRONMENT reaches the kernel though the grader's environment lacks it; a sandboxed kernel
    gets nothing else of the grader's, an unsafe one (no sandbox) inherits the grader's environment."""
    course_config = Course(ROOT).config
    wanted = course_config.KERNEL_ENVIRONMENT
    config = Config()
    course_config.configure_nbgrader(config)
    for name in wanted:                 # absent here, whatever loading the configuration did
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BABYGRAD_GRADERS_OWN", "secret")
    if not sandboxed:
        monkeypatch.setattr(sandbox, "unavailable_reason", lambda: "bwrap not found (test)")
    names = [*wanted, "BABYGRAD_GRADERS_OWN"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        f"import json, os\nprint(json.dumps({{k: os.environ.get(k) for k in {names!r}}}))")])
    executed, _ = SandboxedExecute(config=config, unsafe=not sandboxed).preprocess(
        notebook, {"metadata": {"path": str(tmp_path)}})
    seen = json.loads(executed.cells[0].outputs[0].text)
    assert seen == {**wanted, "BABYGRAD_GRADERS_OWN": None if sandboxed else "secret"}


def grade_command(root, *options, path):
    return subprocess.run([sys.executable, "-m", "autograder", "--root", str(root), "grade", CHAPTER, "--quiet",
                           *options], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PATH": path})


def test_grade_command_grades_the_intruder_sandboxed_and_leaves_everything_else_alone(tmp_path):
    """`python -m autograder grade`: a bystander graded first, then the intruder in a second run. The
    intruder keeps its marks and sees nothing; the bystander's gradebook rows, the course tree and the
    process table are as they were."""
    root = course_with(tmp_path, {"partial": BYSTANDERS["partial"]})
    done = grade_command(root, "--jobs", "1", path=os.environ["PATH"])
    assert done.returncode == 0, done.stdout + done.stderr
    bystander = gradebook_rows(root, ["partial"])
    hand_in(root, {"intruder": appended(SNOOP)})
    protected = [ROOT / "autograder", root / "source", root / "course_config.py", root / "nbgrader_config.py"]
    before = tree_hash(*protected)
    done = grade_command(root, "--jobs", "1", path=os.environ["PATH"])
    time.sleep(1)                   # a sandbox's last processes are reaped as it exits
    assert done.returncode == 0 and score(root, "intruder") == POINTS, done.stdout + done.stderr
    text = outputs_text(nbformat.read(root / "autograded" / "intruder" / CHAPTER / NOTEBOOK, as_version=4))
    assert "SNOOP found 0 notebooks" in text and "GRADEBOOK WRITTEN" not in text and "PACKAGE WRITTEN" not in text
    assert gradebook_rows(root, ["partial"]) == bystander
    assert tree_hash(*protected) == before
    assert leftovers(root) == []


def test_grade_command_refuses_without_bwrap_unless_unsafe(tmp_path):
    """Without bwrap on PATH (a machine without bubblewrap), grading refuses and names --unsafe; with
    --unsafe it grades, unsandboxed."""
    root = course_with(tmp_path, {"perfect": solved()})
    no_bwrap = str(Path(sys.executable).parent)
    done = grade_command(root, "--serial", path=no_bwrap)
    assert not (root / "autograded" / "perfect" / CHAPTER / NOTEBOOK).exists() and not score(root, "perfect")
    assert "SandboxUnavailable" in done.stderr and "--unsafe" in done.stderr, done.stderr[-2000:]
    done = grade_command(root, "--serial", "--unsafe", path=no_bwrap)
    assert score(root, "perfect") == POINTS, done.stderr[-2000:]


def test_check_command_without_bwrap_runs_unsandboxed_and_says_so(tmp_path):
    """A student's laptop without bubblewrap: the checks still run, and the first line says how."""
    folder = tmp_path / CHAPTER
    shutil.copytree(ROOT / "release" / CHAPTER, folder)
    nbformat.write(solved(), folder / NOTEBOOK)
    done = subprocess.run([sys.executable, "-m", "autograder", "check", str(folder / NOTEBOOK)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PATH": str(Path(sys.executable).parent)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0].startswith("Running without a sandbox (bwrap, prlimit")
    assert f"Progress: {POINTS}/{POINTS} points (100%)" in done.stdout


def test_check_command_runs_sandboxed_and_says_so(tmp_path):
    folder = tmp_path / CHAPTER
    shutil.copytree(ROOT / "release" / CHAPTER, folder)
    nbformat.write(solved(), folder / NOTEBOOK)
    done = subprocess.run([sys.executable, "-m", "autograder", "check", str(folder / NOTEBOOK)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "Running in the grading sandbox (no network, read-only system)."
    assert f"Progress: {POINTS}/{POINTS} points (100%)" in done.stdout


def test_limit_defaults_are_the_course_configs():
    """`check` outside the course uses SandboxLimits(); grading reads course_config.py: the same values."""
    import course_config
    assert sandbox.SandboxLimits.from_config(course_config) == sandbox.SandboxLimits()


SYSTEM_PYTHON = Path("/usr/bin/python3")
INSIDE = r'''
import os, resource, socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=2)
    network = "up"
except OSError as error:
    network = type(error).__name__
try:
    open("/usr/babygrad-was-here", "w")
    system = "writable"
except OSError as error:
    system = type(error).__name__
print(os.getuid(), resource.getrlimit(resource.RLIMIT_NPROC)[0], os.path.exists("/root"), network, system)
'''


@pytest.mark.skipif(os.geteuid() != 0 or not SYSTEM_PYTHON.exists(),
                    reason="needs root (to become an unprivileged user) and a Python anyone may run (/usr/bin/python3)")
def test_an_unprivileged_grader_starts_the_sandbox_itself(tmp_path):
    """A grader that is not root (an instructor's own account): bwrap makes the user namespace itself,
    and the kernel is as closed in as under root. The sandbox module is stdlib-only, so the system
    Python can load it from a copy of the package that user may read."""
    folder = Path(tempfile.mkdtemp(prefix="bg-unprivileged-", dir="/tmp"))
    try:
        shutil.copytree(ROOT / "autograder", folder / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
        (folder / "work").mkdir()
        shutil.chown(folder / "work", sandbox.NOBODY, sandbox.NOBODY)
        os.chmod(folder, 0o755)
        launcher = f'''
import importlib.util, subprocess, sys
sys.path.insert(0, {str(folder)!r})
spec = importlib.util.spec_from_file_location("sandbox", {str(folder / "autograder/grading/sandbox.py")!r})
sandbox = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sandbox)
launch = sandbox.sandbox_launch(["{SYSTEM_PYTHON}", "-c", {INSIDE!r}], {str(folder / "work")!r}, sandbox.SandboxLimits())
assert "--unshare-user" in launch.argv and "setpriv" not in launch.argv
done = subprocess.run(launch.argv, capture_output=True, text=True, pass_fds=launch.fds, timeout=60)
print(done.stdout.strip() or done.stderr.strip()[-500:])
'''
        done = subprocess.run(["setpriv", f"--reuid={sandbox.NOBODY}", f"--regid={sandbox.NOBODY}", "--clear-groups",
                               str(SYSTEM_PYTHON), "-c", launcher], capture_output=True, text=True, timeout=120,
                              cwd=folder, env={"PATH": "/usr/bin:/bin"})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    uid, processes, sees_root, network, system = done.stdout.split()
    assert (uid, processes, sees_root) == (str(sandbox.NOBODY), str(sandbox.SandboxLimits().processes), "False")
    assert network != "up" and system in ("OSError", "PermissionError"), done.stdout
