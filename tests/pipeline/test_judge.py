"""The judge (autograder/grading/judge): verdicts cannot be forged from the notebook (chapter 3 in
depth; chapters 1, 4 and 5 with one forged wrong exercise each).

Every attack below is first graded without the judge (plain nbgrader Execute) to prove it is real:
it earns full marks there. Through the course's configuration (JudgedExecute) it must lose exactly
the cells of its wrong op. All grading is the real `nbgrader autograde` on a copy of the committed
course files (no rebuild).
"""
import re
import shutil

import nbformat
import numpy as np
import pytest

from autograder import cell_marks, grading
from autograder.build import submissions
from autograder.course import Course
from autograder.grading.judge import JUDGED_CHECKS, KERNEL_DECIDES, Judge
from autograder.grading.judge.hidden import EVIDENCE, without_inputs
from autograder.grading.judge.plan import NotebookName, OpSpec, plan_cell, plan_notebook
from autograder.grading.judge.probes import (
    PROBE_MIME,
    ProbeFailure,
    ProbeStopped,
    encode,
    reply_from_outputs,
    returned,
)
from autograder.grading.judged_execute import JUDGE_ERROR_NAME, judge_error, judge_error_line, judge_pass
from autograder.grading.nbgrader_cli import run_nbgrader
from autograder.student.checks import Checker
from autograder.student.checks.ch03_autodiff_engine import GRAPHS, expected_grads
from autograder.student.verdict import JUDGED_OUTSIDE_ENV

from helpers.across_workers import once_per_run
from helpers.course_paths import ROOT
from helpers.forgeries import FORGED, FORGE_CHECKER, FORGE_VERDICT, forged_notebook
from helpers.soak import catalogue_edits, extra_losses, passed_mistakes, soak
from helpers.solved_code import in_process

CHAPTER = "ch03"
FULL_MARKS = Course(ROOT).autograded_points(Course(ROOT).chapter(CHAPTER))

# A wrong Mul.backward (catalogue: mul_same_input), and the other wrong ops the variants use.
WRONG_MUL = ("mul", "return out_grad * b, out_grad * a", "return out_grad * a, out_grad * b")
WRONG_SUB = ("sub", "return out_grad, -out_grad", "return out_grad, out_grad")
WRONG_DIV = ("div", "return out_grad / b, -out_grad * a / (b * b)", "return out_grad / b, out_grad * a / (b * b)")
WRONG_ENGINE = ("engine", "grads[key] = parent_grad if key not in grads else grads[key] + parent_grad",
                "grads[key] = parent_grad")

FORGE_SYS_MODULES = '''
import sys as _sys, types as _types
class _Pass:
    passed, message = True, "✔"
class _AnyCheck:
    def __init__(self, namespace=None):
        pass
    def __getattr__(self, name):
        return lambda *args, **kwargs: _Pass()
_fake = _types.ModuleType("autograder.student.checks")
_fake.Checker = _AnyCheck
_sys.modules["autograder.student.checks"] = _fake
from autograder.student.checks import Checker
check = Checker(globals())
'''
FORGE_NUMPY = '''
np.allclose = lambda *args, **kwargs: True
'''
# Right answers only where the public course package says the checks will look (seeds 0, 21, 22, 23).
PRECOMPUTED_MUL = '''
from autograder.student import gradcheck as _gradcheck
def _public(shapes, seed, domain="real"):
    rng = np.random.default_rng(seed)
    return [_gradcheck.sample(s, domain, rng) for s in shapes]
_KNOWN = [_public([(2, 3), (2, 3)], 0), _public([(5,), (5,)], 21), _public([(2, 3, 4), (2, 3, 4)], 22),
          _public([(), ()], 23), _public([(3, 4), (3, 4)], 24, "with_zeros")]

class Mul(Function):
    def forward(self, a, b):
        return a * b

    def backward(self, out_grad, node):
        a, b = node._inputs
        for x, y in _KNOWN:
            if x.shape == a.data.shape and np.array_equal(x, a.data) and np.array_equal(y, b.data):
                return out_grad * b, out_grad * a
        return out_grad * a, out_grad * b
'''

# The grader's own signal that the judge decides these checks (autograder/student/verdict.py), set by hand:
# the kernel's checks then pass without looking, and only the judge can tell.
FORGE_DEFERRAL = f'''
import os as _os
_os.environ["{JUDGED_OUTSIDE_ENV}"] = "forward,backward,engine,engine_rule,operators"
'''
# student: (wrong edit or None, code appended to that exercise cell, the cells it must lose)
ATTACKS = {
    "forged-checker": (WRONG_MUL, FORGE_CHECKER, {"test_mul_backward"}),
    "forged-verdict": (WRONG_SUB, FORGE_VERDICT, {"test_sub_backward"}),
    "forged-sys-modules": (WRONG_DIV, FORGE_SYS_MODULES, {"test_div_backward"}),
    "forged-numpy": (WRONG_ENGINE, FORGE_NUMPY, {"test_engine_diamond", "test_engine_reuse"}),
    "precomputed": (("mul", "", ""), PRECOMPUTED_MUL, {"test_mul_backward"}),
    "forged-deferral": (WRONG_MUL, FORGE_DEFERRAL, {"test_mul_backward"}),
}


def committed_course(target, judged=True, chapter=CHAPTER):
    """A course folder with `chapter` (chapter 3 by default) as committed (source, release), registered
    in a fresh gradebook. Without the judge, autograde runs nbgrader's Execute with the course's kernel
    environment (EnvironmentExecute), unsandboxed: what the course did before the judge."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ("course_config.py", "nbgrader_config.py"):
        shutil.copy2(ROOT / name, target / name)
    for folder in ("source", "release"):
        shutil.copytree(ROOT / folder / chapter, target / folder / chapter)
    (target / "catalogue").mkdir(parents=True)
    shutil.copy2(Course(ROOT).catalogue(Course(ROOT).chapter(chapter)), target / "catalogue")
    if not judged:
        config = (target / "course_config.py").read_text(encoding="utf-8")
        config, count = re.subn(r"\bJudgedExecute, IgnorePattern", "EnvironmentExecute, IgnorePattern", config)
        assert count == 1, "course_config.py no longer lists JudgedExecute first in autograde_preprocessors"
        (target / "course_config.py").write_text(config, encoding="utf-8")
    course = Course(target)
    grading.register(course, course.chapter(chapter))
    return course


def attack_notebooks(course):
    chapter = course.chapter(CHAPTER)
    release = nbformat.read(course.notebook("release", chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook("source", chapter), as_version=4))
    notebooks = {"perfect": submissions.filled(release, answers), "untouched": release}
    for student, ((cell, old, new), code, _) in ATTACKS.items():
        solved = dict(answers)
        assert old in solved[cell], f"{student}: {old!r} is not in the solved {cell} cell"
        solved[cell] = solved[cell].replace(old, new, 1) + "\n" + code
        notebooks[student] = submissions.filled(release, solved)
    return notebooks


def grade(course, notebooks, chapter_id=CHAPTER):
    chapter = course.chapter(chapter_id)
    for student, notebook in notebooks.items():
        submissions.write_submission(course, chapter, student, notebook, "submitted")
    run_nbgrader(course.root, "autograde", chapter_id, "--force")
    return grading.scores(course, chapter)


def total(cells):
    return sum(score or 0 for score, _ in cells.values())


def lost(cells):
    return {cell for cell, (score, maximum) in cells.items() if (score or 0) < maximum}


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """(course, scores): the attacks graded through the judge, once per test run."""
    def make(folder):
        course = committed_course(folder)
        return grade(course, attack_notebooks(course))
    folder, scores = once_per_run(tmp_path_factory, "judged", make)
    return Course(folder), scores


@pytest.fixture(scope="module")
def unjudged(tmp_path_factory):
    """scores: the attacks graded with nbgrader's plain Execute, once per test run."""
    def make(folder):
        course = committed_course(folder, judged=False)
        return grade(course, {s: nb for s, nb in attack_notebooks(course).items() if s in ATTACKS})
    return once_per_run(tmp_path_factory, "unjudged", make)[1]


@pytest.mark.parametrize("student", list(ATTACKS))
def test_attack_forges_full_marks_without_the_judge(unjudged, student):
    assert total(unjudged[student]) == FULL_MARKS, (student, lost(unjudged[student]))


@pytest.mark.parametrize("student", list(ATTACKS))
def test_attack_loses_exactly_its_wrong_cells_through_the_judge(judged, student):
    _, scores = judged
    assert lost(scores[student]) == ATTACKS[student][2], student


def test_forged_checker_loses_only_the_two_points_of_mul_backward(judged):
    _, scores = judged
    assert total(scores["forged-checker"]) == FULL_MARKS - 2


def test_perfect_keeps_full_marks_and_untouched_scores_zero(judged):
    _, scores = judged
    assert total(scores["perfect"]) == FULL_MARKS and lost(scores["perfect"]) == set()
    assert total(scores["untouched"]) == 0 and scores["untouched"]


def test_the_judges_outputs_are_valid_notebook_outputs():
    """judge_error and judge_pass skip nbformat's per-output validation: they must pass it all the same."""
    cell = nbformat.v4.new_code_cell("verdict = check.forward(Add(), shapes=[(2,)])")
    cell.outputs = [judge_pass("all 1 checks passed"), judge_error("Add().forward: wrong", 3)]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    nbformat.validate(notebook)
    assert judge_error_line(cell.outputs[1]) == 3


def test_a_judged_failure_says_why_in_the_graded_notebook(judged):
    course, _ = judged
    errors = judge_errors(course, CHAPTER, "forged-checker", "test_mul_backward")
    assert [e.ename for e in errors] == [JUDGE_ERROR_NAME]
    assert "Mul().backward" in errors[0].evalue and "finite differences give" in errors[0].evalue
    source = named_cell(source_notebook(CHAPTER), "test_mul_backward").source
    line = judge_error_line(errors[0])      # the failing check's line, for Gradescope's visible/hidden split
    assert line and "check.backward(Mul()" in source.splitlines()[line - 1]


def named_cell(notebook, grade_id):
    """The notebook's cell that nbgrader knows as `grade_id`."""
    return next(c for c in notebook.cells if cell_marks.grade_id(c) == grade_id)


def autograded_cell(course, chapter_id, student, grade_id):
    """One grade cell of a student's autograded notebook."""
    notebook = nbformat.read(course.notebook("autograded", course.chapter(chapter_id), student), as_version=4)
    return named_cell(notebook, grade_id)


def cell_text(course, chapter_id, student, grade_id):
    """The stream text one grade cell of an autograded notebook printed."""
    cell = autograded_cell(course, chapter_id, student, grade_id)
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_a_cell_the_judge_decides_alone_never_reaches_the_kernel(judged):
    """While the judge grades, a test cell of judged checks alone is not run in the kernel (its checks' verdicts
    there would be ignored): it has no execution count, and its one output is what the judge found. Whether the
    cell passed is the judge's word (the attacks above)."""
    course, _ = judged
    cell = autograded_cell(course, CHAPTER, "perfect", "test_mul_backward")
    assert cell.execution_count is None, cell.execution_count
    assert cell_text(course, CHAPTER, "perfect", "test_mul_backward") == \
        "✔ the grader: all 5 checks passed, on inputs of its own\n"


def test_only_cells_of_checks_and_their_asserts_stay_out_of_the_kernel():
    """Judge.decides_alone: every test cell of chapter 3 (checks the kernel would skip, and asserts on their
    verdicts); not the CNN capstone (the judge probes the model its in-kernel run trains); not a cell that
    does anything else as well, whose run in the kernel might matter (it still runs, its judged checks deferred)."""
    ch03 = Judge.from_source(source_path(CHAPTER))
    assert ch03.judged_cells and all(ch03.decides_alone(g) for g in ch03.judged_cells)
    ch10 = Judge.from_source(source_path("ch10"))
    assert ch10.decides_alone("test_conv_backward") and not ch10.decides_alone("test_capstone_cnn")
    cell = "verdict = check.backward(Mul(), shapes=[(2, 3), (2, 3)])\nassert verdict.passed, verdict.message\n"
    assert plan_cell("g", cell, JUDGED_CHECKS).only_checks
    assert plan_cell("g", "helpers = ['Flip']\n" + cell, JUDGED_CHECKS).only_checks
    for extra in ("print(verdict.message)\n", "x = Tensor([1.0])\n", "assert verdict.passed or True\n",
                  "check.results = []\n", "verdict.passed = True\n"):
        assert not plan_cell("g", cell + extra, JUDGED_CHECKS).only_checks, extra


def test_feedback_shows_the_judges_message(judged):
    course, _ = judged
    run_nbgrader(course.root, "generate_feedback", CHAPTER, "--student=forged-checker", "--force")
    html = (course.root / "feedback" / "forged-checker" / CHAPTER / "autodiff.html").read_text(encoding="utf-8")
    assert JUDGE_ERROR_NAME in html and "Mul().backward" in html


def test_parallel_grading_workers_judge_too(judged, tmp_path):
    """`python -m autograder grade` (parallel workers, nbgrader in process) reads the same configuration."""
    from autograder.grading.parallel import grade_chapter
    shared, _ = judged
    shutil.copytree(shared.root, tmp_path / "course")        # the graded course is shared: change a copy
    course = Course(tmp_path / "course")
    chapter = course.chapter(CHAPTER)
    shutil.rmtree(course.root / "submitted")
    notebooks = attack_notebooks(course)
    submissions.write_submission(course, chapter, "forged-checker", notebooks["forged-checker"], "submitted")
    run = grade_chapter(course, chapter, jobs=1, force=True, progress=False)
    assert not run.problems, run.problems
    assert lost(grading.scores(course, chapter)["forged-checker"]) == {"test_mul_backward"}


def test_catalogue_scores_exactly_as_before_through_the_judge(graded):
    """catalogue/ch03_autodiff.py: each mistake loses exactly its cells, each alternative keeps full marks.
    The catalogue is the one tests/pipeline/test_pipeline.py grades (once per run), with the course's configuration."""
    course, scores, expected = graded(CHAPTER)
    assert CHAPTER in course.config.JUDGED_CHAPTERS
    assert "JudgedExecute" in (course.root / "course_config.py").read_text(encoding="utf-8")
    catalog = submissions.load_catalog(course, course.chapter(CHAPTER))
    assert len(catalog.MISTAKES) >= 51 and {s.split("-")[0] for s in expected} >= {"mistakes", "alternatives", "demo"}
    assert total(scores["perfect"]) == FULL_MARKS
    assert total(scores["untouched"]) == 0
    wrong = {s: (lost(scores[s]), cells) for s, cells in expected.items()
             if cells is not None and lost(scores[s]) != cells}
    assert wrong == {}


# ── the parts, without a kernel ──

def source_path(chapter_id):
    return Course(ROOT).notebook("source", Course(ROOT).chapter(chapter_id))


def source_notebook(chapter_id):
    return nbformat.read(source_path(chapter_id), as_version=4)


def test_every_chapter_3_grade_cell_is_judged_from_the_source():
    plans = plan_notebook(source_notebook(CHAPTER), JUDGED_CHECKS)
    assert len(plans) == 55 and all(not p.unjudged for p in plans.values()), \
        {g: p.unjudged for g, p in plans.items() if p.unjudged}
    hidden = plans["test_summation_backward"].calls
    assert [c.args[0] for c in hidden][3] == OpSpec("Summation", ((0, -1),))
    indexing = [c.args[0] for c in plans["test_getitem_backward"].calls]      # np.s_[...], read by the judge
    assert indexing[:2] == [OpSpec("GetItem", ((slice(1, None), slice(None, None, -2)),)), OpSpec("GetItem", ([0, 2, 0],))]
    from autograder.grading.judge.in_kernel.worker import (
        decode as decode_request,  # slices travel as data
    )
    assert decode_request(encode(indexing[0].request()))["args"] == ((slice(1, None), slice(None, None, -2)),)
    assert hidden[3].kwargs == {"shapes": [(2, 3, 4)], "seed": 21}


@pytest.mark.parametrize("chapter_id", [c.id for c in Course(ROOT).assignments])
def test_every_grade_cell_of_every_chapter_is_judged(chapter_id):
    """No point of the course rests on the kernel's word: every grade cell has a judge-side plan. The bonus
    assignments too."""
    notebook = source_notebook(chapter_id)
    plans = plan_notebook(notebook, JUDGED_CHECKS, KERNEL_DECIDES)
    assert {g: p.unjudged for g, p in plans.items() if p.unjudged} == {}
    graded = [c.metadata["nbgrader"] for c in notebook.cells
              if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"]
    assert set(plans) == {m["grade_id"] for m in graded}


def test_the_kernel_may_skip_exactly_the_checks_the_judge_decides_alone():
    """Judge.kernel_may_skip: every judged check of the notebook but the capstones' (the judge probes the model
    their in-kernel run trained: Judge.kernel_runs_for_judge), and nothing at all when one grade cell is
    unjudged."""
    ch03 = Judge.from_source(source_path(CHAPTER))
    assert ch03.kernel_may_skip == {"forward", "backward", "kink", "engine", "engine_rule", "operators", "indexing"}
    assert ch03.kernel_runs_for_judge == set()
    ch10 = Judge.from_source(source_path("ch10"))
    assert "capstone" in {call.name for plan in ch10.plans.values() for call in plan.calls}
    assert "capstone" not in ch10.kernel_may_skip and {"forward", "backward", "conv2d"} <= ch10.kernel_may_skip
    assert ch10.kernel_runs_for_judge == {"capstone"}
    ch10.plans["test_conv_forward"].unjudged = "a check the judge has no implementation of"
    assert ch10.kernel_may_skip == set() and ch10.kernel_runs_for_judge == set()


def test_a_capstone_run_for_the_judge_trains_and_leaves_the_counting_to_it(monkeypatch):
    """check.capstone in a grading kernel whose judge counts the accuracy: it trains the model and leaves it
    for the judge's probe, and its verdict says the grader counts; elsewhere (a student's run, or a judge
    that does not decide it) it counts the accuracy itself."""
    from helpers.solved_code import solved_namespace
    from autograder.student.checks import capstone
    from autograder.student.verdict import RUN_FOR_JUDGE_ENV
    namespace = solved_namespace("ch09")
    monkeypatch.setenv(RUN_FOR_JUDGE_ENV, "capstone")
    verdict = Checker(namespace, verbose=False).capstone("mlp", namespace["build_mlp"])
    assert verdict.passed and verdict.deferred and "the grader counts its test accuracy" in verdict.message
    assert capstone.TRAINED["mlp"]["model"] is not None
    monkeypatch.setenv(RUN_FOR_JUDGE_ENV, "my_capstone")
    verdict = Checker(namespace, verbose=False).capstone("mlp", namespace["build_mlp"])
    assert verdict.passed and not verdict.deferred and "of the 10,000 held-out test digits" in verdict.message


def test_a_deferred_check_does_not_run_and_the_others_still_do(monkeypatch):
    """In a kernel told that the judge decides check.backward, it returns a deferred pass without looking,
    `check.all` says the grader decides, and a check not on the list still fails a wrong op."""
    from helpers.solved_code import notebook_namespace
    ns = notebook_namespace(CHAPTER, {WRONG_MUL[0]: [WRONG_MUL[1:]]})
    check = Checker(ns)
    assert not check.backward(ns["Mul"](), shapes=[(2, 3), (2, 3)]).passed
    monkeypatch.setenv(JUDGED_OUTSIDE_ENV, "forward,backward")
    verdict = check.backward(ns["Mul"](), shapes=[(2, 3), (2, 3)])
    assert verdict.passed and verdict.deferred and "grader" in verdict.message
    both = check.all(verdict, check.forward(ns["Mul"](), lambda a, b: a * b, shapes=[(2,), (2,)]))
    assert both.passed and both.deferred and "✔" not in both.message
    assert not check.engine("diamond").deferred          # not on the list: computed in the kernel


def test_checks_the_judge_does_not_implement_leave_the_cell_to_the_kernel():
    notebook = source_notebook("ch04")
    cell = named_cell(notebook, "test_module_call")
    cell.source = cell.source.replace('check.module("call")', 'check.not_judged_anywhere("call")')
    plans = plan_notebook(notebook, JUDGED_CHECKS)
    assert "no judge-side implementation" in plans["test_module_call"].unjudged
    assert not plans["test_module_parameters"].unjudged


def test_inputs_come_from_a_secret_seed_not_the_cells_seed():
    plans = plan_notebook(source_notebook(CHAPTER), JUDGED_CHECKS)
    draws = {Judge(plans).rng_for("test_mul_backward", 0, 21).uniform() for _ in range(5)}
    assert len(draws) == 5
    assert Judge(plans, secret=7).rng_for("x", 0, 21).uniform() == Judge(plans, secret=7).rng_for("x", 0, 21).uniform()


@pytest.mark.parametrize("run_probe", [
    lambda code: (_ for _ in ()).throw(RuntimeError("Kernel died")),
    lambda code: [],
    lambda code: reply('{"replies": "no"}'),
    lambda code: reply('{"replies": [{"worker_error": "KeyError: Tensor"}]}'),
], ids=["dead kernel", "no reply", "malformed replies", "worker error"])
def test_a_kernel_that_does_not_answer_fails_the_cell_and_never_stops_grading(run_probe):
    judge = Judge(plan_notebook(source_notebook(CHAPTER), JUDGED_CHECKS))
    judgement = judge.judge_cell("test_mul_backward", run_probe)
    assert judgement.judged and not judgement.passed
    assert "could not read your kernel's answer" in judgement.message


def test_cells_judged_together_get_the_verdicts_they_get_one_by_one_in_fewer_probes():
    """The judge checks a run of grade cells in one probe per round: each cell's verdict and message are
    the ones it gets alone, a wrong op's cells still fail, and the kernel is asked fewer times."""
    from helpers.solved_code import solved_namespace
    namespace = solved_namespace(CHAPTER)
    wrong_mul = type("Mul", (namespace["Mul"],), {"backward": lambda self, out_grad, node: (out_grad, out_grad)})
    wrong_log = type("Log", (namespace["Log"],), {"forward": lambda self, a: np.log10(a)})
    namespace.update(Mul=wrong_mul, Log=wrong_log)
    cells = ["test_mul_forward", "test_mul_backward", "test_log_forward", "test_log_backward",
             "test_transpose_forward", "test_transpose_backward", "test_engine_product", "test_engine_diamond"]
    alone_judge, together_judge = (Judge(plan_notebook(source_notebook(CHAPTER), JUDGED_CHECKS), secret=3)
                                   for _ in range(2))
    alone = [alone_judge.judge_cell(grade_id, in_process(namespace)) for grade_id in cells]
    together = together_judge.judge_cells(cells, in_process(namespace))
    assert [(j.grade_id, j.passed, j.message) for j in together] == [(j.grade_id, j.passed, j.message) for j in alone]
    assert [j.grade_id for j in together if not j.passed] == ["test_mul_backward", "test_log_forward",
                                                              "test_log_backward"]
    assert sum(j.probes for j in together) < sum(j.probes for j in alone)


@pytest.mark.parametrize("run_probe", [
    lambda code: (_ for _ in ()).throw(RuntimeError("Kernel died")),
    lambda code: [],
    lambda code: reply('{"replies": "no"}'),
], ids=["dead kernel", "no reply", "malformed replies"])
def test_a_probe_of_several_cells_that_fails_as_a_whole_is_left_to_judging_them_one_by_one(run_probe):
    """Such a failure belongs to no one cell: judge_cells gives None, and JudgedExecute asks again cell by cell."""
    judge = Judge(plan_notebook(source_notebook(CHAPTER), JUDGED_CHECKS))
    assert judge.judge_cells(["test_mul_forward", "test_mul_backward"], run_probe) is None
    [alone] = judge.judge_cells(["test_mul_backward"], run_probe)
    assert alone.judged and not alone.passed and "could not read your kernel's answer" in alone.message


@pytest.mark.parametrize("killed", [False, True], ids=["interrupted", "killed"])
def test_a_probe_stopped_in_one_cells_checks_fails_that_cell_alone(killed):
    """The batch probe is stopped while test_mul_backward's checks run (the worker's progress mark names it).
    Interrupted, that cell fails with the stop's message and the others are asked again in the same kernel,
    with the verdicts they get alone; killed, judge_cells gives None and names the cell, for JudgedExecute to
    repair as its death."""
    from helpers.solved_code import solved_namespace
    cells = ["test_mul_forward", "test_mul_backward", "test_log_forward"]
    namespace, asked = solved_namespace(CHAPTER), []

    def run_probe(probe):
        asked.append(probe.marks)
        if len(asked) == 1:
            stopped_at = probe.marks[1]
            raise ProbeStopped("on the judge's inputs your code ran past the cell time limit (5 s) and was stopped",
                               started=stopped_at, killed=killed)
        return in_process(namespace)(probe)
    judge = Judge(plan_notebook(source_notebook(CHAPTER), JUDGED_CHECKS), secret=5)
    judgements = judge.judge_cells(cells, run_probe)
    if killed:
        assert judgements is None and judge.stopped_in == "test_mul_backward" and len(asked) == 1
        return
    assert judge.stopped_in is None and len(asked[0]) == 3 and len(asked[1]) == 2     # a mark per cell asked
    assert [(j.grade_id, j.passed) for j in judgements] == [(c, c != "test_mul_backward") for c in cells]
    assert "your kernel's answer: on the judge's inputs your code ran past the cell time limit" in judgements[1].message
    alone = Judge(plan_notebook(source_notebook(CHAPTER), JUDGED_CHECKS), secret=5)
    for together, grade_id in zip(judgements, cells):
        if grade_id != "test_mul_backward":
            assert together.message == alone.judge_cell(grade_id, in_process(namespace)).message


@pytest.mark.parametrize("stop", [ProbeStopped("no mark came"), ProbeStopped("past the budget", started=0, out_of_time=True)],
                         ids=["no mark", "out of time"])
def test_a_stopped_probe_that_names_no_cell_is_left_to_judging_them_one_by_one(stop):
    judge = Judge(plan_notebook(source_notebook(CHAPTER), JUDGED_CHECKS))
    assert judge.judge_cells(["test_mul_forward", "test_mul_backward"], lambda probe: (_ for _ in ()).throw(stop)) is None
    assert judge.stopped_in is None


def test_a_fresh_kernel_gets_the_worker_again():
    """After a kernel restart the worker's name is gone: the judge re-sends its definition once."""
    sent = []

    def run_probe(probe):
        sent.append(probe)
        return [{"output_type": "error", "ename": "NameError", "traceback": [],
                 "evalue": "name '__babygrad_serve__' is not defined"}] if len(sent) == 1 else []
    judge = Judge(plan_notebook(source_notebook(CHAPTER), JUDGED_CHECKS))
    judge.session["installed"] = True
    judge.judge_cell("test_engine_product", run_probe)
    assert ["def __babygrad_serve__" in probe.setup for probe in sent] == [False, True]


def reply(data):
    return [{"output_type": "display_data", "data": {PROBE_MIME: data}, "metadata": {}}]


@pytest.mark.parametrize("outputs, reason", [
    ([], "0 replies"),
    (reply('{"a": 1}') + reply('{"a": 2}'), "2 replies"),
    (reply("not json"), "not valid JSON"),
    (reply("[1, 2]"), "not a JSON object"),
    ([{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "x", "traceback": []}], "raised ZeroDivisionError"),
])
def test_malformed_replies_are_failed_probes(outputs, reason):
    with pytest.raises(ProbeFailure, match=reason):
        reply_from_outputs(outputs)


def test_replies_never_unpickle_and_refuse_non_numbers():
    import base64
    import io
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"evil": 1}], dtype=object), allow_pickle=True)
    pickled = {"kind": "array", "value": base64.b64encode(buffer.getvalue()).decode()}
    with pytest.raises(ProbeFailure, match="not a valid packed array"):
        returned(pickled)
    for dtype in ("|O8", "<U1", "|V16", "<M8"):
        with pytest.raises(ProbeFailure, match="not a number type"):
            returned({"kind": "array", "value": f"{dtype};1;" + base64.b64encode(bytes(16)).decode()})
    strings = {"kind": "array", "value": encode(np.array(["a"]))["__ndarray__"]}
    with pytest.raises(ProbeFailure, match="not a number type"):
        returned(strings)
    assert returned({"kind": "tensor", "value": encode(np.zeros(()))["__ndarray__"]}).value.shape == ()


@pytest.mark.parametrize("value, reason", [
    ("<f8;2,3;" + "A" * 8, "holds 6 bytes, not the 48"),              # fewer bytes than the shape needs
    ("<f8;1000001;", "1000001 elements"),                             # more than any judged check asks for
    ("<f8;2;***", "not valid base64"),
    ("<q9;2;AAAA", "not a NumPy dtype"),
    ("f8;2;AAAA", "not a valid packed array"),                         # no byte order: not what NumPy writes
    ("<f8;2,-1;AAAA", "not a valid packed array"),
])
def test_a_malformed_packed_array_is_a_failed_probe(value, reason):
    with pytest.raises(ProbeFailure, match=reason):
        returned({"kind": "array", "value": value})


def test_packed_arrays_come_back_exactly():
    """Every dtype and shape the judge sends or reads survives the round trip bit for bit, and writable."""
    from autograder.grading.judge.probes import decode_array, pack
    rng = np.random.default_rng(0)
    for array in (rng.standard_normal((2, 3)), rng.standard_normal(()), np.float32(rng.standard_normal((4, 1, 2))),
                  rng.integers(-5, 5, (3,)), np.array([True, False]), np.zeros((0, 3)), rng.standard_normal((3, 4)).T):
        back = decode_array(pack(np.asarray(array)))
        assert back.dtype == np.asarray(array).dtype and back.shape == np.shape(array)
        assert np.array_equal(back, array) and back.flags.writeable


@pytest.mark.parametrize("name", list(GRAPHS))
def test_the_judges_own_engine_agrees_with_finite_differences(name):
    """The expected gradients of each engine graph are right: a judge bug would fail right answers."""
    _, graph, _ = GRAPHS[name](np.random.default_rng(3))
    for node, want in zip(graph.report, expected_grads(graph)):
        if want is None:
            assert node in graph.constants
            continue
        if node >= len(graph.leaves):
            continue              # an inner node's gradient is checked through the leaf below it
        numeric = np.zeros_like(graph.leaves[node])
        for index in np.ndindex(numeric.shape):
            total_change = 0.0
            for sign in (1.0, -1.0):
                leaves = [v.copy() for v in graph.leaves]
                leaves[node][index] += sign * 1e-6
                total_change += sign * sum(np.sum(value_of(leaves, graph.ops, start) * (1 if g is None else g))
                                           for start, g in graph.calls)
            numeric[index] = total_change / 2e-6
        assert np.allclose(want, numeric, atol=1e-4), (name, want, numeric)


def value_of(leaves, ops, index):
    values = list(leaves)
    for kind, *args in ops:
        if kind == "scale":
            values.append(values[args[1]] * args[0])
        elif kind == "chain":
            values.append(values[args[1]] * float(np.prod(args[0])))
        elif kind == "total":
            values.append(np.asarray(values[args[0]].sum()))
        elif kind == "plus":
            values.append(values[args[0]] + values[args[1]])
        else:
            values.append(values[args[0]] * values[args[1]])
    return values[index]


# ── chapter 4: layers and losses ──

CH04_FULL_MARKS = Course(ROOT).autograded_points(Course(ROOT).chapter("ch04"))
# catalogued wrong answers: a Module method, Sequential and a layer; the first one's cell (the Module cell, the
# chapter's first exercise) also forges the checks, so every later check cell passes in the kernel


def test_chapter_4_forged_checker_loses_exactly_its_wrong_layer(graded):
    """Tied weights listed twice, a reversed Sequential and unscaled dropout, plus a forged Checker: the kernel
    says all pass, the judge takes exactly those cells (3 + 2 + 3 points), each with its own message."""
    course, scores, _ = graded("ch04")
    says = FORGED["ch04"][2]
    assert total(scores["perfect"]) == CH04_FULL_MARKS and lost(scores["perfect"]) == set()
    assert lost(scores["forged"]) == set(says)
    assert total(scores["forged"]) == CH04_FULL_MARKS - 8
    for grade_id, text in says.items():
        errors = judge_errors(course, "ch04", "forged", grade_id)
        assert [e.ename for e in errors] == [JUDGE_ERROR_NAME], errors
        assert text in errors[0].evalue, errors[0].evalue


CH04_JUDGED = {"test_module_parameters", "test_module_children", "test_module_train_eval", "test_module_zero_grad",
               "test_module_call", "test_linear_init", "test_linear", "test_activations", "test_sequential",
               "test_flatten", "test_dropout", "test_dropout_eval", "test_batchnorm", "test_batchnorm_running",
               "test_layernorm", "test_mse_loss", "test_logsumexp_forward", "test_logsumexp_backward",
               "test_softmax_loss", "test_softmax_forward", "test_softmax_backward", "test_bce_loss", "test_embedding",
               "test_embedding_backward", "test_affine_forward", "test_affine_backward",
               "test_softmax_cross_entropy_forward", "test_softmax_cross_entropy_backward"}


def test_chapter_4_layers_and_losses_are_judged_from_the_source():
    plans = plan_notebook(source_notebook("ch04"), JUDGED_CHECKS)
    assert set(plans) == CH04_JUDGED and all(not p.unjudged for p in plans.values()), \
        {g: p.unjudged for g, p in plans.items() if p.unjudged}
    # five hidden calls for MSE in 3-D and softmax and log-sum-exp on wide rows; 19 of section 4.10's fused ops;
    # MSE with a NumPy target, Softmax's backward after two forwards; Affine's forward and backward on Fortran-ordered
    # and reversed inputs
    assert sum(len(plans[g].calls) for g in CH04_JUDGED) == 127


def in_process_judgement(namespace, grade_id, secret=7):
    """Judge one chapter-4 cell against a namespace, without a kernel (see in_process)."""
    return Judge(plan_notebook(source_notebook("ch04"), JUDGED_CHECKS), secret=secret).judge_cell(
        grade_id, in_process(namespace))


@pytest.fixture(scope="module")
def solved_ch04():
    from helpers.solved_code import solved_namespace
    return solved_namespace("ch04")


@pytest.mark.parametrize("secret", [1, 2, 3])
def test_the_solution_passes_every_judged_chapter_4_cell(solved_ch04, secret):
    failures = {g: j.message for g in CH04_JUDGED if not (j := in_process_judgement(solved_ch04, g, secret)).passed}
    assert failures == {}


@pytest.mark.parametrize("exercise, cell, old, new, teaches", [
    ("linear", "test_linear", "out = out + self.bias.broadcast_to(out.shape)", "out = out + self.bias",
     "bias.grad has shape"),
    ("dropout", "test_dropout", "scale = keep / (1 - self.p) if self.p < 1 else np.zeros(x.shape)", "scale = keep",
     "x / (1 - p)"),
    ("batchnorm", "test_batchnorm_running", "if self.training:", "if True:", "in evaluation mode"),
    ("layernorm", "test_layernorm", "return normalized * self.weight.broadcast_to((n, d)) + self.bias.broadcast_to((n, d))",
     "return normalized", "the output is wrong"),
    ("softmax_loss", "test_softmax_loss", "return (logsumexp(logits, (1,)) - picked).sum() / n",
     "return (logsumexp(logits, (1,)) - picked).sum()", "the output is wrong"),
    ("layernorm", "test_layernorm", "normalized = centred / (var + self.eps) ** 0.5",
     "normalized = centred / (var ** 0.5 + self.eps)", "rows whose variance is near eps"),
    ("mse_loss", "test_mse_loss", "return (diff * diff).sum() / diff.size", "return (diff * diff).sum() / diff.shape[0]",
     "ALL elements"),
    ("batchnorm", "test_batchnorm_running", "self.running_mean = np.zeros(dim, dtype=np.float32)",
     "self.mean = np.zeros(dim, dtype=np.float32)", "the layer has no attribute .running_mean"),
    ("bce_loss", "test_bce_loss", "losses = relu(logits) - logits * targets + log(exp(-absolute(logits)) + 1)",
     "p = sigmoid(logits)\n        losses = -(targets * log(p) + (1 - targets) * log(1 - p))",
     "never take sigmoid(z) and then its log"),
    ("embedding", "test_embedding", "np.add.at(grad, self.indices, out_grad.data)", "grad[self.indices] += out_grad.data",
     "the gradient of weight is wrong"),
    ("embedding", "test_embedding_backward", "np.add.at(grad, self.indices, out_grad.data)",
     "grad[self.indices] += out_grad.data", "writes a repeated row again"),
    ("softmax", "test_softmax_backward", "grad = s * (g - (g * s).sum(axis=self.axis, keepdims=True))", "grad = s * g",
     "the diagonal term only"),
])
def test_a_wrong_layer_fails_its_judged_cell_with_the_course_message(exercise, cell, old, new, teaches):
    from helpers.solved_code import notebook_namespace
    judgement = in_process_judgement(notebook_namespace("ch04", {exercise: [(old, new)]}), cell)
    assert judgement.judged and not judgement.passed and teaches in judgement.message, judgement.message
@pytest.mark.parametrize("exercise, old, new, teaches", [
    ("transpose", "return out_grad.transpose(tuple(int(i) for i in np.argsort(self.axes)))",
     "return out_grad.transpose(self.axes)", "applies the same permutation again"),
    ("log", "return out_grad / node._inputs[0]", "return out_grad / node", "by the output log(a)"),
    ("log", "return out_grad / node._inputs[0]", "return out_grad / node * 2", "evaluated at the input a (node._inputs)"),
])
def test_the_judge_names_a_slip_from_the_same_evidence_as_the_kernel(exercise, old, new, teaches):
    from helpers.solved_code import notebook_namespace
    judgement = Judge(plan_notebook(source_notebook("ch03"), JUDGED_CHECKS), secret=7).judge_cell(
        f"test_{exercise}_backward", in_process(notebook_namespace("ch03", {exercise: [(old, new)]})))
    assert judgement.judged and not judgement.passed and teaches in judgement.message, judgement.message
    if "* 2" in new:
        assert "by the output" not in judgement.message


# ── chapters 1 and 5: the scalar Value and the optimizers ──

# chapter: (full marks, a wrong exercise from its catalogue, the forging line appended to that cell)
def judge_errors(course, chapter_id, student, grade_id):
    """The error outputs of one grade cell of an autograded notebook."""
    return [o for o in autograded_cell(course, chapter_id, student, grade_id).outputs if o.output_type == "error"]


@pytest.mark.parametrize("chapter_id", ["ch01", "ch05"])
def test_a_forged_wrong_exercise_loses_exactly_its_cells_in_chapters_1_and_5(graded, tmp_path, chapter_id):
    """Without the judge the forgery earns full marks; through it (graded beside the chapter's catalogue),
    only the wrong exercise's cells are lost."""
    names, forge, _ = FORGED[chapter_id]
    full = Course(ROOT).autograded_points(Course(ROOT).chapter(chapter_id))
    plain = committed_course(tmp_path / "plain", judged=False, chapter=chapter_id)
    notebook, mistakes = forged_notebook(plain, chapter_id, names, forge)
    assert total(grade(plain, {"forged": notebook}, chapter_id)["forged"]) == full
    _, scores, _ = graded(chapter_id)
    assert total(scores["perfect"]) == full and lost(scores["perfect"]) == set()
    assert lost(scores["forged"]) == {cell for m in mistakes for cell in m.loses}
    assert total(scores["forged"]) < full


@pytest.mark.parametrize("chapter_id, cells", [("ch01", 9), ("ch05", 7)])
def test_every_chapter_1_and_5_grade_cell_is_judged(chapter_id, cells):
    plans = plan_notebook(source_notebook(chapter_id), JUDGED_CHECKS)
    assert len(plans) == cells and all(not p.unjudged for p in plans.values()), \
        {g: p.unjudged for g, p in plans.items() if p.unjudged}


@pytest.mark.parametrize("name", ["order", "reuse", "twice", "long_chain"])
def test_the_judges_value_graphs_agree_with_finite_differences(name):
    """The judge's own reverse sweep over a chapter 1 graph: a judge bug would fail right answers."""
    from autograder.grading.judge.ch01_scalar import GRAPHS as VALUE_GRAPHS

    def output(graph, leaves):
        values = list(leaves)
        for kind, *args in graph.ops:
            values.append(args[0] * values[args[1]] if kind == "scale" else
                          values[args[0]] * values[args[1]] if kind == "times" else values[args[0]] + values[args[1]])
        return values[-1]

    _, graph, _, report, _ = VALUE_GRAPHS[name](np.random.default_rng(5))
    grads = graph.grads()
    assert grads[-1] == 1.0
    for i, leaf in enumerate(graph.leaves):
        moved = [list(graph.leaves), list(graph.leaves)]
        moved[0][i], moved[1][i] = leaf + 1e-6, leaf - 1e-6
        numeric = (output(graph, moved[0]) - output(graph, moved[1])) / 2e-6
        assert np.isclose(grads[i], numeric, rtol=1e-5, atol=1e-6), (name, i, grads[i], numeric)


@pytest.mark.parametrize("case", ["basic", "more"])
def test_the_judges_numerical_gradient_functions_have_their_exact_derivatives(case):
    import math

    from autograder.grading.judge.ch01_scalar import FUNCTIONS
    rng = np.random.default_rng(6)
    for text, params, body, draw, h, exact, _ in FUNCTIONS[case]:
        f = eval(f"lambda {params}: {body}", {"math": math})  # noqa: S307
        xs = draw(rng)
        step = h or 1e-6        # the central difference with the case's own step (x³'s depends on it)
        for i, want in enumerate(exact(*xs)):
            plus, minus = list(xs), list(xs)
            plus[i] += step
            minus[i] -= step
            assert math.isclose((f(*plus) - f(*minus)) / (2 * step), want, rel_tol=1e-6, abs_tol=1e-6), (text, i)


def judge_and_kernel_tell(chapter_id, mistake, grade_id, kernel_check, words):
    """The judge (secret 11) and the kernel's check both fail the catalogued `mistake`, both messages holding `words`."""
    from helpers.solved_code import notebook_namespace, recursion_limit_kept
    with recursion_limit_kept():            # two of these answers raise it in this process
        namespace = notebook_namespace(chapter_id, catalogue_edits(chapter_id, mistake), training=False)
        judgement = Judge(plan_notebook(source_notebook(chapter_id), JUDGED_CHECKS), secret=11).judge_cell(
            grade_id, in_process(namespace))
        kernel = kernel_check(Checker(namespace, verbose=False))
    assert judgement.judged and not judgement.passed and not kernel.passed
    assert all(w in kernel.message for w in words), (words, kernel.message)
    assert all(w in judgement.message for w in told_by_the_judge(words, kernel.message, judgement.message)), \
        (words, judgement.message)


def told_by_the_judge(words, kernel_message, judge_message):
    """The words the judge's message must hold too: all, unless the failing check is hidden; then those that show
    no hidden input (no shape or value, and not on a line of evidence such as the worst element)."""
    if "a hidden check, failed" not in judge_message:
        return words
    told = [without_inputs(line) for line in kernel_message.splitlines() if not line.strip().lower().startswith(EVIDENCE)]
    return [w for w in words if any(w in line for line in told)]


def judge_and_kernel_pass(chapter_id, answer, grade_id, kernel_check):
    """The judge (secret 12) and the kernel's check both pass `answer`, the solution or a catalogued alternative."""
    from helpers.soak import alternative_namespace
    namespace = alternative_namespace(chapter_id, answer)
    judgement = Judge(plan_notebook(source_notebook(chapter_id), JUDGED_CHECKS), secret=12).judge_cell(
        grade_id, in_process(namespace))
    kernel = kernel_check(Checker(namespace, verbose=False))
    assert judgement.judged and judgement.passed, judgement.message
    assert kernel.passed, kernel.message


# Mistakes the kernel's check and the judge's rule both catch and word alike, by chapter: (chapter, catalogued
# mistake, its cell, the check the kernel runs for that cell, words both messages hold).
NAMED_MISTAKES = [
    # chapter 1: Value's graph, backward and the numerical gradient
    ("ch01", "mul_divides_by_input", "test_mul_backward", lambda c: c.value_backward("mul"),
     ["ZeroDivisionError", "a = Value(0.0)", "a is 0 here", "need no division"]),
    ("ch01", "backward_recursive_raised_limit", "test_backward_long_chain", lambda c: c.value_engine("long_chain"),
     ["the gradient is right", "Python calls inside one another", "Section 1.4"]),
    ("ch01", "numeric_ignores_h", "test_numerical_gradient", lambda c: c.numerical_gradient(),
     ["h=0.1", "x * x * x", "much smaller step than the h = 0.1"]),
    ("ch01", "add_wraps_only_int", "test_add_graph", lambda c: c.value_graph("add"),
     ["'float' object has no attribute 'data'", "with an int worked, so only ints were wrapped"]),
    ("ch01", "mul_wraps_only_int", "test_mul_graph", lambda c: c.value_graph("mul"),
     ["'float' object has no attribute 'data'", "with an int worked, so only ints were wrapped"]),
    # chapter 2: the Tensor's constructor, factories and repr
    ("ch02", "constructor_tensor_keeps_dtype", "test_constructor", lambda c: c.constructor("copies"),
     ['dtype="float64"', "(float64)", "expected a float32 array", "kept the dtype of the tensor it was made from"]),
    ("ch02", "zeros_ignores_requires_grad", "test_constant_factories", lambda c: c.factories("constant", "more"),
     [", requires_grad=False) has requires_grad=True, expected False", "must reach the Tensor it makes"]),
    ("ch02", "constructor_keeps_requires_grad", "test_constructor", lambda c: c.constructor("copies"),
     ["requires_grad=False): b.requires_grad is False, expected True",
      "b took requires_grad from the tensor it was made from"]),
    ("ch02", "constructor_stores_dtype", "test_constructor", lambda c: c.constructor("list"),
     ["Tensor.__init__ raised AttributeError", "read-only properties of Tensor", "Store the five fields"]),
    ("ch02", "repr_dtype_only_float64", "test_repr", lambda c: c.tensor_repr("more"),
     ["dtype='float16'", "expected: Tensor([ 0.5 , -1.25,  3.  ], dtype=float16)", "compare the dtype with float32"]),
    # chapter 3: the ops, the operators and the engine
    ("ch03", "transpose_overwrites_axes", "test_transpose_backward",
     lambda c: c.backward(c.namespace["Transpose"]((1, 2, 0)), shapes=[(3, 2, 5)]),
     ["second call on the same op", "self.axes from (1, 2, 0) to (2, 0, 1)"]),
    ("ch03", "engine_non_scalar_first_axis", "test_engine_non_scalar_error",
     lambda c: c.engine_rule("non_scalar_error"), ["returned without an error", "though its first axis has length 1"]),
    ("ch03", "engine_recursive_raised_limit", "test_engine_long_chain", lambda c: c.engine("long_chain"),
     ["the gradient is right", "Python calls inside one another", "Section 3.8"]),
    ("ch03", "no_grad_flips_switch", "test_engine_no_grad", lambda c: c.engine_rule("no_grad"),
     ["inside a `with no_grad():` nested in an outer one", "recorded a graph", "flipping it turns"]),
    ("ch03", "power_scalar_divides_output", "test_power_scalar_backward",
     lambda c: c.backward(c.namespace["PowerScalar"](2), shapes=[(3, 4)], domains="with_zeros", seed=24),
     ["PowerScalar(", ".backward with inputs a(3, 4)", "your backward gives nan", "(input value 0)", "power rule"]),
    ("ch03", "rsub_number_as_tensor", "test_operators", lambda c: c.operators(),
     ["`2 - a` has the right values, but its graph holds a new tensor that requires a gradient",
      "a setting of a scalar op"]),
    ("ch03", "engine_non_scalar_check_first", "test_engine_constant_error", lambda c: c.engine_rule("constant_error"),
     ["c.backward() with c a constant of several elements and no grad raised ValueError", "the constant's comes first"]),
    ("ch03", "engine_refuses_leaves", "test_engine_constant_error", lambda c: c.engine_rule("constant_error"),
     ["w.backward() with w = Tensor(x, requires_grad=True), a leaf of one element raised RuntimeError",
      "Test requires_grad, not whether the tensor was made by an op"]),
    ("ch03", "matmul_shortcut_tests_b", "test_matmul_backward",
     lambda c: c.backward(c.namespace["MatMul"](), shapes=[(2, 3), (4, 3, 2)], constant=[1], seed=30),
     ["(b is a constant: requires_grad=False)", "the gradient for a is wrong", "your gradient for a is all zeros",
      "even when b is the constant"]),
    ("ch03", "mul_scalar_only_ints", "test_operators", lambda c: c.operators(),
     ["`a * 0.5` raised AttributeError", "`a * 2` worked, so only ints were taken for numbers"]),
    ("ch03", "mul_divides_output", "test_mul_backward",
     lambda c: c.backward(c.namespace["Mul"](), shapes=[(3, 4), (3, 4)], domains="with_zeros", seed=24),
     ["Mul().backward with inputs a(3, 4), b(3, 4)", "your backward gives nan", "(input value 0)",
      "only where an input is exactly 0", "without dividing by the input"]),
    ("ch03", "div_a_from_output", "test_div_backward",
     lambda c: c.backward(c.namespace["Div"](), shapes=[(3, 4), (3, 4)], domains=("with_zeros", "nonzero"), seed=23),
     ["the gradient for a is wrong", "your backward gives nan", "(input value 0)", "only where an input is exactly 0"]),
    ("ch03", "gelu_backward_half_from_output", "test_gelu_backward",
     lambda c: c.backward(c.namespace["GELU"](), shapes=[(3, 4)], domains="with_zeros", seed=23),
     ["your backward gives nan", "(input value 0)", "only where an input is exactly 0"]),
    ("ch03", "sigmoid_backward_from_input", "test_sigmoid_backward",
     lambda c: c.backward(c.namespace["Sigmoid"](), shapes=[(3,)], domains="very_negative", seed=23),
     ["your backward gives nan, finite differences give 0", "only at inputs beyond ±700",
      "s(1 − s), with s the output (node)"]),
    ("ch03", "tanh_forward_negative_exponent", "test_tanh_forward",
     lambda c: c.forward(c.namespace["Tanh"](), np.tanh, shapes=[(3,)], domains="very_negative", seed=13),
     ["Tanh().forward on inputs a(3,)", "= nan, expected -1", "no exponential of a large positive number"]),
    ("ch03", "mul_accumulates_into_grads", "test_mul_backward",
     lambda c: c.backward(c.namespace["Mul"](), shapes=[(2, 3), (2, 3)]),
     ["backward set the .grad of input a, which was None", "writing .grad is the engine's job",
      "counts that gradient twice"]),
    ("ch03", "exp_output_kept_on_op", "test_exp_backward", lambda c: c.backward(c.namespace["Exp"](), shapes=[(2, 3)]),
     ["Exp().backward raised AttributeError: 'Exp' object has no attribute 'out'",
      "with an op whose forward has not run (section 3.4)", "never from values forward kept on the op"]),
    # chapter 4: layers, losses and softmax
    ("ch04", "linear_two_generators", "test_linear_init", lambda c: c.linear_init(3, 4),
     ["repeats the weight's first row value for value", "two generators made with the same seed"]),
    ("ch04", "batchnorm_running_from_tensors", "test_batchnorm_running", lambda c: c.batchnorm_running(batch=6, dim=3),
     ["after 1 training batch(es), running_mean is a Tensor that requires a gradient", "not from Tensors"]),
    ("ch04", "mse_rows_times_columns", "test_mse_loss", lambda c: c.mse_loss((2, 3, 4), seed=4),
     ["MSELoss() on x of shape (2, 3, 4)", "over ALL elements"]),
    ("ch04", "softmax_shift_mean", "test_softmax_forward",
     lambda c: c.softmax_forward(-1, shape=(3, 5), domain="wide_rows", seed=45),
     ["forward on inputs a(3, 5)", "= nan", "Subtract the maximum"]),
    ("ch04", "logsumexp_shift_mean", "test_logsumexp_forward",
     lambda c: c.logsumexp_forward(-1, shape=(2, 4), domain="wide_rows", seed=16),
     ["forward on inputs a(2, 4)", "= inf", "Subtract the maximum"]),
    # chapter 5: SGD and Adam
    ("ch05", "sgd_skips_zero_grad", "test_sgd_momentum", lambda c: c.sgd(lr=0.1, momentum=0.9),
     ["after step 4 of 4, parameter 1", "gradient at step 4 0)", "Only a .grad of None means"]),
    ("ch05", "adam_skips_zero_grad", "test_adam", lambda c: c.adam(lr=0.01),
     ["after step 4 of 4, parameter 1", "gradient at step 4 0)", "Only a .grad of None means"]),
    ("ch05", "adam_t_counts_steps_with_grads", "test_adam", lambda c: c.adam(lr=0.01),
     ["after step 4 of 4, parameter 0", "your t did not count step 3", "t counts the calls to step()"]),
    # chapter 6: datasets, loaders and the IDX parser
    ("ch06", "loader_global_seed", "test_data_loader_shuffle", lambda c: c.data_loader("shuffle"),
     ["both made before either was read and then read in turns", "the second loader's epoch 1 came in the order",
      "one shared stream"]),
    ("ch06", "loader_seed_truthiness", "test_data_loader_shuffle", lambda c: c.data_loader("shuffle"),
     ["seed=0): two loaders with seed=0 gave different orders", "0 is a seed like any other"]),
    ("ch06", "loader_two_fields", "test_data_loader_batches", lambda c: c.data_loader("batches"),
     ["samples of one field each, (image,)", "expected 2, got 1", "unpacked into two fields", "(features,)"]),
    ("ch06", "array_dataset_first_two_lengths", "test_array_dataset", lambda c: c.array_dataset(),
     ["was accepted, though x and y of different lengths were refused", "not only the first two's"]),
    ("ch06", "array_dataset_two_fields", "test_array_dataset", lambda c: c.array_dataset(),
     ["ArrayDataset(x, y, z), three arrays of", "is a tuple of 2", "expected the 3-tuple", "any number of arrays"]),
    ("ch06", "idx_path_as_str", "test_parse_idx_bytes", lambda c: c.parse_idx("bytes"),
     ["'PosixPath' object has no attribute 'endswith'", "given as a pathlib.Path", "mnist_files gives Paths"]),
    ("ch06", "mnist_divides_by_max", "test_mnist_dataset", lambda c: c.mnist_dataset(),
     ["/ 255 =", "scaled by the file's own range, 0 to 240", "none reaches 255"]),
    ("ch06", "mnist_item_list", "test_mnist_dataset", lambda c: c.mnist_dataset(),
     ["is a list, expected a tuple (image, label)", "always a tuple"]),
    # chapter 7: the training epoch
    ("ch07", "train_epoch_update_to_index", "test_train_epoch", lambda c: c.train_epoch(),
     ["the progress bar was advanced", "expected one step per batch", "that is the sum of the batch numbers"]),
    ("ch07", "train_epoch_running_mean_of_all", "test_train_epoch", lambda c: c.train_epoch(),
     ["after the last batch the bar shows loss=", "the mean of the last 50 batch losses (batches ",
      "Hint: that is the mean of all ", "batch losses so far. The running loss averages only the last 50"]),
    ("ch07", "train_epoch_running_last_10", "test_train_epoch", lambda c: c.train_epoch(),
     ["after the last batch the bar shows loss=", "the mean of the last 50 batch losses (batches "]),
    # chapter 8: state dicts, optimizer state and checkpoints
    ("ch08", "optimizer_state_dict_order", "test_optimizer_state", lambda c: c.optimizer_state("adam"),
     ["holds the m of the parameter at position", "of self.params, not of position", "first got its state"]),
    ("ch08", "optimizer_state_named_numbers_only", "test_optimizer_state", lambda c: c.optimizer_state("adam"),
     ["into a new optimizer, its beta1 is [0.9], not the", "lr and the other settings"]),
    ("ch08", "optimizer_load_numbers_as_floats", "test_optimizer_state", lambda c: c.optimizer_state("adam"),
     ["the new optimizer's t is a float (", "not a Python int", "an int for t"]),
    ("ch08", "optimizer_load_numbers_as_arrays", "test_optimizer_state", lambda c: c.optimizer_state("adam"),
     ["the new optimizer's lr is a numpy.ndarray (array(", "not a Python float"]),
    ("ch08", "save_requires_optimizer", "test_checkpoint_round_trip", lambda c: c.checkpoint("round_trip"),
     ["save_checkpoint.call without an optimizer raised AttributeError", "the optimizer is optional"]),
    ("ch08", "load_compares_sizes", "test_load_state_dict_refuses", lambda c: c.load_state_dict("errors"),
     ["modules.3.bias of shape (", "1) for a (1, ", "the message should name", "whatever the sizes"]),
    ("ch08", "load_buffers_rebound", "test_load_state_dict", lambda c: c.load_state_dict("values"),
     ["after load_state_dict, modules.1.running_mean holds"]),
    ("ch08", "load_checkpoint_not_strict", "test_checkpoint_refuses", lambda c: c.checkpoint("refuses", "other_model"),
     ["accepted a checkpoint of another model", "half one network, half another", "load the model's entries strictly"]),
    # a setting put back as an array: named on every secret draw of the resume check, not by rounding's luck
    ("ch08", "optimizer_load_numbers_as_arrays", "test_resume_training", lambda c: c.resume_training("adam"),
     ["optimizer.lr is in the uninterrupted run's state dict only", "its settings, each put back as what it was"]),
    # chapter 9: the Trainer
    ("ch09", "evaluate_runs_backward", "test_evaluate", lambda c: c.evaluate(),
     ["left gradients in the model's parameters", "evaluate ran a backward pass"]),
    ("ch09", "evaluate_numpy_loss", "test_evaluate", lambda c: c.evaluate(),
     ["the values are right, but loss is a numpy.float32", "not a Python float", "item()"]),
    ("ch09", "keep_best_snapshot_only_with_file", "test_keep_best", lambda c: c.keep_best("checkpoint"),
     ["and no checkpoint_path: best_state is NoneType", "whether or not there is a checkpoint_path"]),
    ("ch09", "keep_best_min_delta", "test_keep_best", lambda c: c.keep_best("checkpoint"),
     ["expected epoch 5 with 0.699999", "by only 1e-06", "however small"]),
    ("ch09", "keep_best_state_holders", "test_keep_best", lambda c: c.keep_best("checkpoint"),
     ["best_state does not hold the weights of epoch 1"]),
    ("ch09", "fit_restores_every_epoch", "test_fit", lambda c: c.fit(),
     ["the training of epoch 3 did not start from the weights epoch 2 ended with, but from best_state's",
      "once, after the loop"]),
    ("ch09", "fit_without_progress_bar", "test_fit", lambda c: c.fit(), ["train_epoch did not get the progress bar"]),
    ("ch09", "fit_no_report", "test_fit", lambda c: c.fit(),
     ["report(...) printed the lines of epochs [], expected one line for each epoch that ran, [1, 2, 3]"]),
    # chapter 10: the convolution
    ("ch10", "conv_backward_zeros_when_filters_constant", "test_conv_backward",
     lambda c: c.backward(c.namespace["Conv"](2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 2)], seed=28, constant=[1]),
     ["(b is a constant: requires_grad=False)", "the gradient for a is wrong", "your backward gives 0",
      "your gradient for a, the images x, is all zeros", "only b is a constant"]),
    ("ch10", "conv_backward_images_grad_w_transposed", "test_conv_backward",
     lambda c: c.backward(c.namespace["Conv"](2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 2)], seed=27, constant=[0]),
     ["(a is a constant: requires_grad=False)", "the gradient for b is wrong"]),
]

# Right answers near those checks, by chapter: (chapter, solution or catalogued alternative, its cell, the check
# the kernel runs for that cell).
RIGHT_NEAR_NAMED_MISTAKES = [
    # chapter 1: Value's graph, backward and the numerical gradient
    ("ch01", "solution", "test_add_graph", lambda c: c.value_graph("add")),
    ("ch01", "add_wraps_numbers", "test_add_graph", lambda c: c.value_graph("add")),
    ("ch01", "solution", "test_mul_graph", lambda c: c.value_graph("mul")),
    # chapter 2: the Tensor's constructor, factories and repr
    ("ch02", "solution", "test_constructor", lambda c: c.constructor("copies")),
    ("ch02", "constructor_unwraps_with_numpy", "test_constructor", lambda c: c.constructor("copies")),
    ("ch02", "solution", "test_constant_factories", lambda c: c.factories("constant", "more")),
    ("ch02", "zeros_dtype_in_numpy", "test_constant_factories", lambda c: c.factories("constant", "more")),
    ("ch02", "solution", "test_repr", lambda c: c.tensor_repr("more")),
    ("ch02", "repr_dtype_name", "test_repr", lambda c: c.tensor_repr("more")),
    ("ch02", "repr_pieces", "test_repr", lambda c: c.tensor_repr("more")),
    # chapter 3: the ops, the operators and the engine
    ("ch03", "solution", "test_engine_no_grad", lambda c: c.engine_rule("no_grad")),
    ("ch03", "no_grad_class", "test_engine_no_grad", lambda c: c.engine_rule("no_grad")),
    ("ch03", "solution", "test_power_scalar_backward",
     lambda c: c.backward(c.namespace["PowerScalar"](2), shapes=[(3, 4)], domains="with_zeros", seed=24)),
    ("ch03", "power_scalar_numpy", "test_power_scalar_backward",
     lambda c: c.backward(c.namespace["PowerScalar"](3), shapes=[(3, 4)], domains="with_zeros", seed=25)),
    ("ch03", "solution", "test_operators", lambda c: c.operators()),
    ("ch03", "operators_number_as_constant", "test_operators", lambda c: c.operators()),
    ("ch03", "solution", "test_engine_constant_error", lambda c: c.engine_rule("constant_error")),
    ("ch03", "engine_kahn", "test_engine_constant_error", lambda c: c.engine_rule("constant_error")),
    ("ch03", "solution", "test_matmul_backward",
     lambda c: c.backward(c.namespace["MatMul"](), shapes=[(2, 3), (4, 3, 2)], constant=[1], seed=30)),
    ("ch03", "matmul_shortcut_both", "test_matmul_backward",
     lambda c: c.backward(c.namespace["MatMul"](), shapes=[(2, 3), (4, 3, 2)], constant=[1], seed=30)),
    ("ch03", "matmul_numpy", "test_matmul_backward",
     lambda c: c.backward(c.namespace["MatMul"](), shapes=[(2, 3), (4, 3, 2)], constant=[1], seed=30)),
    ("ch03", "operators_numbers_by_type", "test_operators", lambda c: c.operators()),
    ("ch03", "operators_other_forms", "test_operators", lambda c: c.operators()),
    ("ch03", "solution", "test_mul_backward",
     lambda c: c.backward(c.namespace["Mul"](), shapes=[(3, 4), (3, 4)], domains="with_zeros", seed=24)),
    ("ch03", "mul_returns_list", "test_mul_backward",
     lambda c: c.backward(c.namespace["Mul"](), shapes=[(3, 4), (3, 4)], domains="with_zeros", seed=25)),
    ("ch03", "div_via_output", "test_div_backward",
     lambda c: c.backward(c.namespace["Div"](), shapes=[(3, 4), (3, 4)], domains=("with_zeros", "nonzero"), seed=23)),
    ("ch03", "gelu_tensor_ops", "test_gelu_backward",
     lambda c: c.backward(c.namespace["GELU"](), shapes=[(3, 4)], domains="with_zeros", seed=23)),
    ("ch03", "sigmoid_numpy", "test_sigmoid_backward",
     lambda c: c.backward(c.namespace["Sigmoid"](), shapes=[(3,)], domains="very_negative", seed=23)),
    ("ch03", "sigmoid_backward_expanded", "test_sigmoid_backward",
     lambda c: c.backward(c.namespace["Sigmoid"](), shapes=[(4,)], domains="very_negative", seed=24)),
    ("ch03", "tanh_forward_from_sigmoid", "test_tanh_forward",
     lambda c: c.forward(c.namespace["Tanh"](), np.tanh, shapes=[(3,)], domains="very_negative", seed=13)),
    ("ch03", "exp_output_kept_read_from_node", "test_exp_backward",
     lambda c: c.backward(c.namespace["Exp"](), shapes=[(2, 3)])),
    ("ch03", "transpose_keeps_inverse", "test_transpose_backward",
     lambda c: c.backward(c.namespace["Transpose"]((1, 2, 0)), shapes=[(3, 2, 5)])),
    # chapter 4: layers, losses and softmax
    ("ch04", "solution", "test_linear_init", lambda c: c.linear_init(1, 7)),
    ("ch04", "solution", "test_mse_loss", lambda c: c.mse_loss((2, 3, 4), seed=4)),
    ("ch04", "solution", "test_batchnorm_running", lambda c: c.batchnorm_running(batch=8, dim=4, seed=1)),
    ("ch04", "mse_power", "test_mse_loss", lambda c: c.mse_loss((2, 3, 4), seed=4)),
    ("ch04", "solution", "test_softmax_forward", lambda c: c.softmax_forward(-1, shape=(3, 5), domain="wide_rows", seed=45)),
    ("ch04", "softmax_backward_recomputes", "test_softmax_backward",
     lambda c: c.backward(c.namespace["Softmax"](), shapes=[(3, 5)], domains="wide_rows", seed=55)),
    ("ch04", "logsumexp_backward_shifted_ratio", "test_logsumexp_backward",
     lambda c: c.backward(c.namespace["LogSumExp"](-1), shapes=[(2, 4)], domains="wide_rows", seed=26)),
    # chapter 5: SGD and Adam
    ("ch05", "solution", "test_adam", lambda c: c.adam(lr=0.1, beta1=0.5, beta2=0.9, seed=1)),
    ("ch05", "adam_corrected_arrays", "test_adam", lambda c: c.adam(lr=0.01)),
    ("ch05", "sgd_velocity_by_index", "test_sgd_momentum", lambda c: c.sgd(lr=0.1, momentum=0.9)),
    ("ch05", "sgd_filters_none_first", "test_sgd_weight_decay", lambda c: c.sgd(lr=0.1, momentum=0.9, weight_decay=0.1, seed=3)),
    # chapter 6: datasets, loaders and the IDX parser
    ("ch06", "solution", "test_data_loader_shuffle", lambda c: c.data_loader("shuffle")),
    ("ch06", "loader_shuffle_in_place", "test_data_loader_shuffle", lambda c: c.data_loader("shuffle")),
    ("ch06", "loader_without_shortcut", "test_data_loader_batches", lambda c: c.data_loader("batches")),
    ("ch06", "solution", "test_data_loader_batches", lambda c: c.data_loader("batches")),
    ("ch06", "array_dataset_any", "test_array_dataset", lambda c: c.array_dataset()),
    ("ch06", "idx_sniffs_gzip", "test_parse_idx_bytes", lambda c: c.parse_idx("bytes")),
    ("ch06", "mnist_multiply", "test_mnist_dataset", lambda c: c.mnist_dataset()),
    # chapter 7: the training epoch
    ("ch07", "solution", "test_train_epoch", lambda c: c.train_epoch()),
    ("ch07", "train_epoch_postfix_after_update", "test_train_epoch", lambda c: c.train_epoch()),
    # chapter 8: state dicts, optimizer state and checkpoints
    ("ch08", "solution", "test_optimizer_state", lambda c: c.optimizer_state("adam", "sgd", "adam_decay")),
    ("ch08", "optimizer_state_by_params", "test_optimizer_state", lambda c: c.optimizer_state("adam", "sgd")),
    ("ch08", "solution", "test_checkpoint_round_trip", lambda c: c.checkpoint("round_trip")),
    ("ch08", "load_checkpoint_optimizer_first", "test_checkpoint_round_trip", lambda c: c.checkpoint("round_trip")),
    ("ch08", "solution", "test_load_state_dict_refuses", lambda c: c.load_state_dict("errors")),
    ("ch08", "solution", "test_checkpoint_refuses", lambda c: c.checkpoint("refuses", "other_model")),
    ("ch08", "load_checkpoint_wraps_refusal", "test_checkpoint_refuses", lambda c: c.checkpoint("refuses", "other_model")),
    # chapter 9: the Trainer
    ("ch09", "solution", "test_evaluate", lambda c: c.evaluate()),
    ("ch09", "evaluate_no_grad", "test_evaluate", lambda c: c.evaluate(samples=7, batch_size=3, seed=1)),
    ("ch09", "solution", "test_keep_best", lambda c: c.keep_best("checkpoint")),
    ("ch09", "keep_best_early_return", "test_keep_best", lambda c: c.keep_best("checkpoint")),
    ("ch09", "solution", "test_fit", lambda c: c.fit()),
    ("ch09", "fit_while_loop", "test_fit", lambda c: c.fit(epochs=4, stop_after=None, seed=1)),
    # chapter 10: the convolution
    ("ch10", "solution", "test_conv_backward",
     lambda c: c.backward(c.namespace["Conv"](2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 2)], seed=27, constant=[0])),
    ("ch10", "conv_backward_full_convolution", "test_conv_backward",
     lambda c: c.backward(c.namespace["Conv"](2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 2)], seed=28, constant=[1])),
]


@pytest.mark.parametrize("chapter_id, mistake, grade_id, kernel_check, words", NAMED_MISTAKES,
                         ids=[m[1] for m in NAMED_MISTAKES])
def test_the_judge_words_each_named_mistake_as_the_kernel_does(chapter_id, mistake, grade_id, kernel_check, words):
    judge_and_kernel_tell(chapter_id, mistake, grade_id, kernel_check, words)


@pytest.mark.parametrize("chapter_id, answer, grade_id, kernel_check", RIGHT_NEAR_NAMED_MISTAKES,
                         ids=[f"{m[0]}-{m[1]}-{m[2]}" for m in RIGHT_NEAR_NAMED_MISTAKES])
def test_right_answers_near_named_mistakes_pass_judge_and_kernel(chapter_id, answer, grade_id, kernel_check):
    judge_and_kernel_pass(chapter_id, answer, grade_id, kernel_check)


# ── chapter 10: helpers isolated by stand-ins, the layers, and the checks only the kernel can make ──

CH10 = "ch10"
CH10_FULL_MARKS = Course(ROOT).autograded_points(Course(ROOT).chapter(CH10))


def test_chapter_10_capstone_trained_elsewhere_loses_it_to_the_judge(graded):
    """A Conv.backward with its weight gradient transposed, a Checker forged to pass every check but the
    capstone's, and a Trainer.fit that swaps in a mended backward while it trains (graded beside the chapter's
    catalogue): the CNN reaches its accuracy, but the judge asks the graded library for the trained model's
    gradients and finds the weight gradient of the Conv2d nearest the output wrong. Conv.backward's cell is lost too."""
    course, scores, _ = graded(CH10)
    assert lost(scores["forged"]) == {"test_conv_backward", "test_capstone_cnn"}
    assert total(scores["forged"]) == CH10_FULL_MARKS - 6 - 7
    errors = judge_errors(course, CH10, "forged", "test_conv_backward")
    assert [e.ename for e in errors] == [JUDGE_ERROR_NAME]          # the kernel's own checks were forged to pass
    assert "Conv(1, 1).backward" in errors[0].evalue and "the gradient for b is wrong" in errors[0].evalue
    errors = judge_errors(course, CH10, "forged", "test_capstone_cnn")
    assert [e.ename for e in errors] == [JUDGE_ERROR_NAME], errors
    message = errors[0].evalue
    assert "the CNN capstone: the model reaches the accuracy, but your library does not compute its gradients" \
        in message and "For layer 2 (Conv2d), weight of shape (16, 8, 3, 3)" in message, message


def test_chapter_10_right_submission_keeps_full_marks_through_the_judge(graded):
    """The capstone cell is judged (the plan) and the right CNN passes it: the judge's own forward. The kernel
    only trained it; the accuracy the feedback shows is the judge's count."""
    course, scores, _ = graded(CH10)
    assert total(scores["perfect"]) == CH10_FULL_MARKS and lost(scores["perfect"]) == set()
    assert not plan_notebook(source_notebook(CH10), JUDGED_CHECKS, KERNEL_DECIDES)["test_capstone_cnn"].unjudged
    assert judge_errors(course, CH10, "perfect", "test_capstone_cnn") == []
    printed = cell_text(course, CH10, "perfect", "test_capstone_cnn")     # a print may arrive in two messages
    assert "the grader counts its test accuracy" in printed, printed
    assert re.search(r"(^|\n)✔ the grader: the CNN capstone: 9[^\n]* of the 10,000 held-out test digits", printed), printed


def test_chapter_10_plan_reads_slow_literal_names_and_isolate():
    plans = plan_notebook(source_notebook(CH10), JUDGED_CHECKS, KERNEL_DECIDES)
    assert {g for g, p in plans.items() if p.unjudged} == set()
    calls = plans["test_conv_backward"].calls
    dilated = [c for c in calls if c.args[0] == OpSpec("Conv", (1, 2))]        # a hidden dilation case
    assert dilated and all(c.kwargs["isolate"] == ["Flip", "Dilate"] for c in dilated)
    filters_constant = [c for c in calls if c.kwargs.get("constant") == [1]]
    assert [c.args[0] for c in filters_constant] == [OpSpec("Conv", (2, 1))]
    assert [c.name for c in plans["test_max_pool_backward"].calls] == (
        ["backward"] * 2 + ["max_pool_ties"] + ["backward"] * 3 + ["max_pool_ties"] * 2 + ["backward"] * 2)
    expected = plans["test_flip_forward"].calls[0].args[1]
    assert expected(np.arange(4.0)).tolist() == [3, 2, 1, 0]


def test_a_name_bound_to_anything_but_a_literal_is_not_evaluated():
    source = "helpers = ['Flip']\nhelpers = make()\ncheck.backward(Flip((0,)), shapes=[(3,)], isolate=helpers)\n"
    from autograder.grading.judge.plan import plan_cell
    plan = plan_cell("cell", source, JUDGED_CHECKS)
    assert "helpers" in plan.unjudged and not plan.calls


def test_isolate_swaps_the_helpers_for_the_request_and_puts_them_back():
    """The worker, run in process on chapter 10 solved by the full-convolution route (a Conv.backward built
    from Flip and Dilate), with a broken Flip: Conv.backward is judged right with the stand-in, and the
    namespace holds the student's Flip again afterwards."""
    from helpers.soak import alternative_namespace
    namespace = alternative_namespace(CH10, "conv_backward_full_convolution")
    broken = type("Flip", (namespace["Function"],), {"__init__": lambda self, axes: None,
                                                     "forward": lambda self, a: a * 0})
    namespace["Flip"] = broken
    judge = Judge.from_source(ROOT / "source" / CH10 / "conv.ipynb", secret=3)
    judgement = judge.judge_cell("test_conv_backward", in_process(namespace))
    assert judgement.judged and judgement.passed, judgement.message
    assert namespace["Flip"] is broken and "Dilate" in namespace


def test_the_judge_grades_each_chapter_3_op_with_the_courses_other_ops():
    """The worker, in process on chapter 3's solved namespace with BroadcastTo not written, a wrong Log and a
    wrong `__rsub__`: Summation, Pow and Sigmoid keep their cells, as in the kernel's check; BroadcastTo's own
    cell says its skeleton is unwritten; and the notebook's ops and operators are back afterwards."""
    from helpers.solved_code import solved_namespace

    def skeleton(self, *args):
        raise NotImplementedError()

    namespace = solved_namespace(CHAPTER)
    Tensor = namespace["Tensor"]
    unwritten = type("BroadcastTo", (namespace["Function"],),
                     {"__init__": lambda self, shape: None, "forward": skeleton, "backward": skeleton})
    wrong_log = type("Log", (namespace["Log"],), {"forward": lambda self, a: np.log10(a)})
    namespace.update(BroadcastTo=unwritten, Log=wrong_log)
    rsub, wrong_rsub = Tensor.__dict__["__rsub__"], (lambda self, other: self - other)
    Tensor.__rsub__ = wrong_rsub
    try:
        judge = Judge.from_source(ROOT / "source" / CHAPTER / "autodiff.ipynb", secret=5)
        for grade_id in ("test_summation_backward", "test_pow_backward", "test_sigmoid_backward", "test_tanh_backward"):
            judgement = judge.judge_cell(grade_id, in_process(namespace))
            assert judgement.judged and judgement.passed, (grade_id, judgement.message)
        own = judge.judge_cell("test_broadcast_to_backward", in_process(namespace))
        assert not own.passed and "BroadcastTo((3, 4)).forward is not implemented yet: replace" in own.message
        assert not judge.judge_cell("test_log_backward", in_process(namespace)).passed
        assert namespace["BroadcastTo"] is unwritten and namespace["Log"] is wrong_log
        assert Tensor.__dict__["__rsub__"] is wrong_rsub
    finally:
        Tensor.__rsub__ = rsub


def test_the_judge_names_an_unwritten_helper_as_the_kernel_does():
    """A backward that calls a helper still raising NotImplementedError: both say `calls helper`, not the op."""
    from helpers.solved_code import solved_namespace
    namespace = solved_namespace(CHAPTER)

    def helper(x):
        raise NotImplementedError()

    namespace["helper"] = helper
    namespace["Exp"] = type("Exp", (namespace["Exp"],), {"backward": lambda self, out_grad, node: helper(out_grad)})
    judge = Judge.from_source(ROOT / "source" / CHAPTER / "autodiff.ipynb", secret=5)
    judgement = judge.judge_cell("test_exp_backward", in_process(namespace))
    kernel = Checker(namespace, verbose=False).backward(namespace["Exp"](), shapes=[(2, 3)])
    for message in (judgement.message, kernel.message):
        assert "Exp().backward calls `" in message and "helper" in message, message
        assert "backward is not implemented yet" not in message


@pytest.mark.parametrize("mistake, grade_id, says", [
    ("conv2d_unit_init", "test_conv2d", "Kaiming uniform with fan_in"),
    ("conv2d_bias_unshaped", "test_conv2d", "output"),
    ("max_pool2d_default_size", "test_max_pool2d", "output shape"),
])
def test_the_judge_fails_a_wrong_layer_with_the_checks_message(mistake, grade_id, says):
    """Conv2d and MaxPool2d judged in process: the judge's own slow.conv / slow.max_pool on its own input."""
    from helpers.solved_code import notebook_namespace
    replace = catalogue_edits(CH10, mistake)
    judge = Judge.from_source(ROOT / "source" / CH10 / "conv.ipynb")
    judgement = judge.judge_cell(grade_id, in_process(notebook_namespace(CH10, replace)))
    assert judgement.judged and not judgement.passed and says in judgement.message, judgement.message


# ── right code, under secrets the fixed-seed checks never drew ──

MISTAKE_SECRETS = 2    # per chapter and mistake in the suite (fixed: a regression check; the pipeline grades each under its own too); `tools/soak_judge.py --secrets 200` soaks more
SOAK_SECRETS = 1       # per chapter in the suite (the pipeline grades every catalogued right answer under its own secret too); `tools/soak_judge.py --secrets 200` after changing a judged check


@pytest.mark.parametrize("chapter_id", Course(ROOT).config.JUDGED_CHAPTERS)
def test_right_code_passes_every_judged_cell_under_secret_seeds(chapter_id):
    """The solution and every catalogued right alternative, judged in process: a secret seed must never
    fail a right answer (a flaky tolerance or statistic shows up here first)."""
    failures = soak(chapter_id, range(SOAK_SECRETS))
    assert failures == [], failures[:3]


# Some catalogued mistakes diverge (chapter 5's optimizers with a wrong update): NumPy's overflow warnings are
# their symptom, expected here, not a fault of the judge's.
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("chapter_id", Course(ROOT).config.JUDGED_CHAPTERS)
def test_every_catalogued_mistake_fails_the_judge_alone_under_secret_seeds(chapter_id):
    """Every catalogued mistake, judged in process on each cell it must lose: while grading, the kernel leaves
    the judged checks to the judge, so no secret draw may let a mistake through (chapter 6's shuffled loader
    once drew sizes with no partial batch, one secret in six)."""
    passes = passed_mistakes(chapter_id, range(MISTAKE_SECRETS))
    assert passes == [], passes[:5]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning", "ignore:invalid value encountered:RuntimeWarning")
def test_chapter_5s_mistakes_lose_no_cell_the_catalogue_keeps_under_secret_seeds():
    """A mistake that loses a cell under some secrets only fails the catalogue's grading at random: Adam's eps
    inside the root lost test_adam_weight_decay under one secret in four or five, until the scenario's gradients
    kept away from zero. `tools/soak_judge.py` checks every chapter so, by hand (all clean at 6 secrets)."""
    extras = extra_losses("ch05", range(MISTAKE_SECRETS * 2))
    assert extras == [], extras[:3]


# ── chapter 6: datasets, loaders, transforms and IDX files on the judge's secret data ──

CH06 = "ch06"


def test_every_chapter_6_grade_cell_is_judged_and_a_comprehension_is_one_call_per_seed():
    plans = plan_notebook(source_notebook(CH06), JUDGED_CHECKS, KERNEL_DECIDES)
    assert len(plans) == 12 and all(not p.unjudged for p in plans.values()), \
        {g: p.unjudged for g, p in plans.items() if p.unjudged}
    types = plans["test_parse_idx_types"].calls
    assert [(c.args, c.kwargs.get("seed")) for c in types] == [(("types",), None)] + [(("types",), s) for s in (11, 12, 13)]


@pytest.fixture
def ch06_judge():
    """A fresh judge per test: its session remembers the worker installed in one namespace only."""
    return Judge.from_source(ROOT / "source" / CH06 / "data.ipynb", secret=11)


@pytest.mark.parametrize("mistake, grade_id, says", [
    ("loader_reseeds_every_epoch", "test_data_loader_shuffle", "epoch 1 and epoch 2 came in the same order"),
    ("loader_float_labels", "test_data_loader_batches", "labels has dtype float32"),
    ("flip_global_random", "test_random_flip", "the seed must make the sequence of flips reproducible"),
    ("idx_native_byte_order", "test_parse_idx_types", "bytes in reverse order: IDX stores every number"),
    ("idx_error_without_file", "test_parse_idx_errors", "does not say which file"),
    ("mnist_transforms_at_load", "test_mnist_dataset", "while the dataset was built"),
    ("loader_shortcut_ignores_shuffle", "test_data_loader_shuffle", "over an ArrayDataset it went wrong"),
    ("idx_magic_both_nonzero", "test_parse_idx_errors", "first byte is zero but whose second is not"),
])
def test_the_judge_fails_a_wrong_chapter_6_answer_with_the_checks_message(ch06_judge, mistake, grade_id, says):
    """Judged in process on the judge's secret data: the message is the course check's."""
    from helpers.solved_code import notebook_namespace
    replace = catalogue_edits(CH06, mistake)
    judgement = ch06_judge.judge_cell(grade_id, in_process(notebook_namespace(CH06, replace)))
    assert judgement.judged and not judgement.passed and says in judgement.message, judgement.message


def test_a_broken_array_dataset_leaves_the_loaders_shortcut_unjudged(ch06_judge):
    """The loader runs over the student's ArrayDataset only when that holds the judge's samples: with one whose
    len() counts the arrays, a shortcut that ignores the shuffle keeps the loader's points (its own exercise
    loses them), as in the course's check."""
    from helpers.solved_code import notebook_namespace
    replace = {**catalogue_edits(CH06, "loader_shortcut_ignores_shuffle"),
               **catalogue_edits(CH06, "array_dataset_len_of_arrays")}
    run_probe = in_process(notebook_namespace(CH06, replace))
    assert ch06_judge.judge_cell("test_data_loader_shuffle", run_probe).passed
    assert not ch06_judge.judge_cell("test_array_dataset", run_probe).passed


def test_a_loader_that_answers_the_courses_probe_dataset_fails_on_the_judges_samples(ch06_judge):
    """A DataLoader that ignores its dataset's values and yields sample i as (an image filled with i, label i),
    which is all the in-kernel check's ProbeDataset holds, passes that check; the judge's samples are secret."""
    from helpers.solved_code import notebook_namespace

    from autograder.student.checks import ch06_data as data_checks
    namespace = notebook_namespace(CH06)
    Tensor, real = namespace["Tensor"], namespace["DataLoader"]

    class Imitation(real):
        def __iter__(self):
            start = 0
            for batch in super().__iter__():
                if len(batch) == 1:         # samples of one field: nothing to imitate
                    yield batch
                    continue
                index = np.arange(start, start + len(np.asarray(batch[1].data)))
                start += len(index)
                images = np.broadcast_to(index[:, None, None], (len(index), 2, 3)).astype(np.float32)
                yield (Tensor(images, dtype=np.float32, requires_grad=False),
                       Tensor(index, dtype=np.int64, requires_grad=False))
    namespace["DataLoader"] = Imitation
    assert data_checks.check_loader_batches(namespace).passed
    judgement = ch06_judge.judge_cell("test_data_loader_batches", in_process(namespace))
    assert judgement.judged and not judgement.passed, judgement.message
    assert "come from different samples" in judgement.message or "expected 0, 1, 2" in judgement.message


# ── chapter 2: the Tensor constructor, factories and repr ──

CH02 = "ch02"


def test_every_chapter_2_grade_cell_is_judged_from_the_source():
    plans = plan_notebook(source_notebook(CH02), JUDGED_CHECKS, KERNEL_DECIDES)
    assert len(plans) == 6 and {g for g, p in plans.items() if p.unjudged} == set()
    assert len(plans["test_constructor"].calls) == 8


@pytest.mark.parametrize("mistake, grade_id, says", [
    ("constructor_asarray", "test_constructor", "shares memory with the original"),
    ("constructor_ignores_requires_grad", "test_constructor", ".requires_grad is True, expected False"),
    ("zeros_unpacks_shape", "test_constant_factories", "the second one is read as a dtype"),
    ("rand_is_normal", "test_random_factories", "rand draws uniformly from [0, 1)"),
    ("repr_no_prefix", "test_repr", "only the indentation of the rows differs"),
    ("shape_as_list", "test_properties", "(list), expected"),
    ("numpy_no_copy", "test_conversions", "returned t.data itself"),
    ("detach_loses_dtype", "test_conversions", "expected float64"),
])
def test_the_judge_fails_a_wrong_chapter_2_answer_with_the_checks_message(mistake, grade_id, says):
    from helpers.solved_code import notebook_namespace
    replace = catalogue_edits(CH02, mistake)
    judge = Judge.from_source(ROOT / "source" / CH02 / "tensor.ipynb", secret=5)
    judgement = judge.judge_cell(grade_id, in_process(notebook_namespace(CH02, replace)))
    assert judgement.judged and not judgement.passed and says in judgement.message, judgement.message


# ── chapter 7: initializers by their statistics, train_epoch and accuracy on secret batches ──

CH07 = "ch07"


def test_every_chapter_7_grade_cell_is_judged_and_the_model_is_a_notebook_name():
    plans = plan_notebook(source_notebook(CH07), JUDGED_CHECKS, KERNEL_DECIDES)
    assert {g for g, p in plans.items() if p.unjudged} == set()
    call = plans["test_mnist_training"].calls[0]
    assert call.args == (NotebookName("model"), NotebookName("test_loader")) and call.kwargs == {"minimum": 0.9}


def test_the_judges_gains_are_the_notebooks():
    """The judge's copy of the provided GAINS table: a student who edits theirs cannot move the target."""
    from helpers.solved_code import solved_namespace

    from autograder.student.checks import ch07_init as init
    assert init.GAINS == pytest.approx(solved_namespace(CH07)["GAINS"])


@pytest.mark.parametrize("body, says", [
    ("return Tensor(np.random.default_rng(seed).uniform(0.0, a, (fan_in, fan_out)))", "mean"),
    ("return Tensor(np.random.default_rng(seed).uniform(-a, a, (fan_out, fan_in)))", "shape"),
    ("return Tensor(np.random.uniform(-a, a, (fan_in, fan_out)))", "same seed"),
    ("return Tensor(np.random.default_rng(seed).normal(0.0, a / np.sqrt(3.0), (fan_in, fan_out)))", "largest |weight|"),
])
def test_a_wrong_initializer_fails_the_judge_in_process(body, says):
    """Kaiming uniform rewritten wrong (off-centre, transposed, unseeded, normal instead of uniform)."""
    from helpers.solved_code import solved_namespace
    namespace = solved_namespace(CH07)
    exec("def kaiming_uniform(fan_in, fan_out, nonlinearity='relu', seed=None):\n"
         "    a = GAINS[nonlinearity] * np.sqrt(3.0 / fan_in)\n    " + body + "\n", namespace)
    judge = Judge.from_source(ROOT / "source" / CH07 / "init.ipynb")
    judgement = judge.judge_cell("test_kaiming_uniform", in_process(namespace))
    assert judgement.judged and not judgement.passed and says in judgement.message, judgement.message


# ── chapter 9: the Trainer's evaluate, keep_best and fit on secret weights and scripted numbers ──

CH09 = "ch09"


def test_every_chapter_9_grade_cell_is_judged():
    plans = plan_notebook(source_notebook(CH09), JUDGED_CHECKS, KERNEL_DECIDES)
    assert {g for g, p in plans.items() if p.unjudged} == set()


def solved_with(chapter_id, mistake_name):
    """The chapter's notebook namespace (without its training runs) with one catalogued mistake."""
    from helpers.solved_code import notebook_namespace
    return notebook_namespace(chapter_id, catalogue_edits(chapter_id, mistake_name), training=False)


@pytest.mark.parametrize("mistake, grade_id, says", [
    ("evaluate_train_mode", "test_evaluate", "evaluation mode"),
    ("keep_best_ties_improve", "test_keep_best", "strictly lower"),
    ("keep_best_no_snapshot", "test_keep_best", "best_state"),
    ("early_stop_no_reset", "test_early_stopping", "stale"),
    ("fit_last_batch_loss", "test_fit", "train_loss"),
    ("fit_no_restore", "test_fit", "best_state"),
])
def test_a_wrong_trainer_method_fails_the_judge_in_process(mistake, grade_id, says):
    judge = Judge.from_source(ROOT / "source" / CH09 / "trainer.ipynb")
    judgement = judge.judge_cell(grade_id, in_process(solved_with(CH09, mistake)))
    assert judgement.judged and not judgement.passed and says in judgement.message, judgement.message


# ── one forged wrong answer per chapter, graded beside the chapter's catalogue (tests/helpers/forgeries.py) ──

@pytest.mark.parametrize("chapter_id", ["ch02", "ch06", "ch07", "ch08", "ch09"])
def test_a_forged_wrong_answer_loses_exactly_its_cells_to_the_judge(graded, chapter_id):
    """The in-kernel checks are forged to pass, so each lost cell's only error is the judge's; the right
    submission graded beside it keeps full marks."""
    says = FORGED[chapter_id][2]
    course, scores, _ = graded(chapter_id)
    full = course.autograded_points(course.chapter(chapter_id))
    assert total(scores["perfect"]) == full and lost(scores["perfect"]) == set()
    assert lost(scores["forged"]) == set(says)
    for grade_id, text in says.items():
        errors = judge_errors(course, chapter_id, "forged", grade_id)
        assert [e.ename for e in errors] == [JUDGE_ERROR_NAME], errors
        assert text in errors[0].evalue, errors[0].evalue


ENGINE_MISTAKES = ["engine_preorder_topo", "engine_grads_to_constants", "engine_grad_aliases", "engine_overwrites",
                   "engine_grad_not_accumulated", "engine_grad_no_copy",
                   "engine_not_reversed"]


@pytest.mark.parametrize("name", ENGINE_MISTAKES)
def test_a_wrong_engine_loses_exactly_its_cells_under_every_secret_seed(name):
    """The engine's graphs come from the secret seed (random DAGs among them): a wrong order, gradients
    sent to constants, an aliased .grad or overwritten shares must lose their cells whatever is drawn."""
    from helpers.solved_code import notebook_namespace

    mistake = next(m for m in submissions.load_catalog(Course(ROOT), Course(ROOT).chapter("ch03")).MISTAKES
                   if m.name == name)
    run_probe = in_process(notebook_namespace("ch03", catalogue_edits("ch03", name), training=False))
    source = source_notebook("ch03")
    for secret in range(5):
        judge = Judge(plan_notebook(source, JUDGED_CHECKS, KERNEL_DECIDES), secret)
        engine_cells = [g for g in judge.judged_cells if g.startswith("test_engine")]
        lost = {g for g in engine_cells if not judge.judge_cell(g, run_probe).passed}
        assert lost == set(mistake.loses) & set(engine_cells), (secret, sorted(lost))

def test_a_gradient_stored_without_a_copy_is_named_as_shared_by_judge_and_kernel():
    """Section 3.8: each .grad is an array of the tensor's own. An engine that stores the arriving array itself
    gives r and s of M = (r + s).sum() one .grad; the values are right, so only the ownership fact tells."""
    from helpers.solved_code import notebook_namespace

    namespace = notebook_namespace("ch03", catalogue_edits("ch03", "engine_grad_no_copy"), training=False)
    judgement = Judge(plan_notebook(source_notebook("ch03"), JUDGED_CHECKS), secret=11).judge_cell(
        "test_engine_accumulation", in_process(namespace))
    kernel = Checker(namespace, verbose=False).engine("accumulation")
    assert judgement.judged and not judgement.passed and not kernel.passed
    for message in (judgement.message, kernel.message):
        assert "r.grad and s.grad are one array" in message and "not a copy of it" in message, message


def test_ownership_names_shared_and_read_only_arrays_only():
    from autograder.student.checks.ch03_autodiff_engine_graph import ownership

    a = np.ones(3)
    facts = ownership([a, a[1:], np.ones(3), np.broadcast_to(np.ones(1), (3,)), None])
    assert facts == {"shared": [[0, 1]], "readonly": [3]}
    assert ownership([np.ones(2), np.ones(2)]) == {"shared": [], "readonly": []}


# ── chapter 4's Module and Sequential: the course's stand-in tree, holding the judge's secret values ──

@pytest.mark.parametrize("mistake, grade_id, says", [
    ("members_skips_dicts", "test_module_children", "missing ['first'"),
    ("members_any_tensor", "test_module_parameters", "raised AttributeError: 'Tensor' object has no attribute"),
    ("parameters_not_recursive", "test_module_parameters", "of the 11 parameters; missing [layers[0].w"),
    ("parameters_duplicates", "test_module_parameters", "appear twice (13 items, 11 distinct)"),
    ("eval_not_recursive", "test_module_train_eval", "training is [False, True, True"),
    ("zero_grad_zeros", "test_module_zero_grad", "rather than filling it with zeros"),
    ("call_passes_tuple", "test_module_call", "forward saw [(('x',),), (('x', 'y'),)]"),
    ("sequential_drops_output", "test_sequential", "Affine1, then Affine2"),
])
def test_a_wrong_module_method_fails_the_judge_with_the_checks_message(mistake, grade_id, says):
    """Judged in process: the kernel side names nothing, the judge names each item by its secret values or tag."""
    from helpers.solved_code import notebook_namespace
    namespace = notebook_namespace("ch04", catalogue_edits("ch04", mistake), training=False)
    judgement = in_process_judgement(namespace, grade_id)
    assert judgement.judged and not judgement.passed and says in judgement.message, judgement.message


def test_the_module_tree_holds_the_judges_secret_values_not_the_courses():
    """The tree the kernel builds gets the judge's values of secret shapes and tags: no two runs alike, and
    nothing the public course's tree (default_rng(5), all 2x2 leaves) holds."""
    from autograder.grading.judge.ch04_nn_module_tree import SecretTree
    trees = [SecretTree(np.random.default_rng([secret, 1])) for secret in range(3)]
    assert len({tuple(t.tags) for t in trees}) == 3 and all(len(set(t.tags)) == 9 for t in trees)
    assert len({tuple(p.shape for p in t.params) for t in trees}) > 1
    public = np.random.default_rng(5).standard_normal((2, 2)).astype(np.float32)
    assert not any(p.shape == public.shape and np.array_equal(p, public) for t in trees for p in t.params)


def test_a_buffer_listed_as_a_parameter_is_named_by_its_secret_values(solved_ch04, monkeypatch):
    """A plain Tensor among the parameters: the kernel says only what came back, the judge recognizes the
    buffer's secret values and tells it as the course's check does."""
    Module, Tensor = solved_ch04["Module"], solved_ch04["Tensor"]
    right = Module.parameters
    monkeypatch.setattr(Module, "parameters",
                        lambda self: right(self) + [v for v in vars(self).values() if type(v) is Tensor])
    judgement = in_process_judgement(solved_ch04, "test_module_parameters")
    assert not judgement.passed and "the list holds a plain Tensor (a buffer)" in judgement.message, judgement.message
    in_kernel = Checker(solved_ch04, verbose=False).module("parameters")
    assert in_kernel.message.split(";")[0] == judgement.message.split(";")[0]

# ── chapter 8 in process: the catalogue's cells, and the judge's own training behind resume_training ──

CH08 = "ch08"
CH08_MISTAKES = submissions.load_catalog(Course(ROOT), Course(ROOT).chapter(CH08)).MISTAKES


@pytest.mark.parametrize("mistake", CH08_MISTAKES, ids=lambda m: m.name)
def test_a_wrong_persistence_answer_loses_exactly_its_cells_to_the_judge_in_process(mistake):
    judge = Judge.from_source(ROOT / "source" / CH08 / "persistence.ipynb", secret=2026)
    run_probe = in_process(solved_with(CH08, mistake.name))
    lost_cells = {g for g in judge.judged_cells if not judge.judge_cell(g, run_probe).passed}
    assert lost_cells == set(mistake.loses)


@pytest.fixture(scope="module")
def ch08_namespace():
    from helpers.solved_code import notebook_namespace
    return notebook_namespace(CH08, None, training=False)


def test_resume_training_checks_the_uninterrupted_run_against_the_judges_own_training(ch08_namespace):
    """A kernel whose Adam steps 5 % too far resumes bit for bit, and still fails: the judge trained it too."""
    namespace = ch08_namespace
    judge = Judge.from_source(ROOT / "source" / CH08 / "persistence.ipynb", secret=5)
    assert judge.judge_cell("test_resume_training", in_process(namespace)).passed
    adam_step = namespace["Adam"].step

    def longer_step(self):
        self.lr *= 1.05
        adam_step(self)
        self.lr /= 1.05

    namespace["Adam"].step = longer_step
    try:
        judgement = judge.judge_cell("test_resume_training", in_process(namespace))
    finally:
        namespace["Adam"].step = adam_step
    assert not judgement.passed and "the judge's own training" in judgement.message, judgement.message


# Each failed the solution before the judge left out what float32 rounding decides: a weight whose gradient
# cancels to within rounding at some Adam step (1 secret in about 3,000; found by tools/soak_judge.py).
FLOAT32_UNDETERMINED_SECRETS = [11809059084248476202, 14657906454680421339, 2774458604395181841, 1396434578164791715,
                                2925299899902097275, 1351167912341377525, 5363865500450375973, 5521532409363271977]


@pytest.mark.parametrize("secret", FLOAT32_UNDETERMINED_SECRETS)
def test_resume_training_passes_the_solution_where_float32_rounding_decides_a_weight(ch08_namespace, secret):
    judge = Judge.from_source(ROOT / "source" / CH08 / "persistence.ipynb", secret=secret)
    judgement = judge.judge_cell("test_resume_training", in_process(ch08_namespace))
    assert judgement.passed, judgement.message


@pytest.mark.parametrize("secret", [400018, 500790])
def test_resume_training_compares_the_optimizers_state_not_only_the_models(secret):
    """Numbers loaded back as 0-d arrays train on in float64 arithmetic, so the resumed weights usually differ in
    a last bit or two, and under these secrets in none: the resumed optimizer's own state_dict() tells it."""
    judge = Judge.from_source(ROOT / "source" / CH08 / "persistence.ipynb", secret=secret)
    judgement = judge.judge_cell("test_resume_training", in_process(solved_with(CH08, "optimizer_load_numbers_as_arrays")))
    assert not judgement.passed and "in the uninterrupted run's state dict only" in judgement.message, judgement.message


def test_the_judge_leaves_out_of_its_own_training_only_what_float32_rounding_decides():
    """Under Adam, BatchNorm leaves the first Linear's bias a gradient of pure rounding noise: every bias that
    moved is left out, and running_mean with it; SGD's steps are linear in the noise, so nothing is."""
    from autograder.grading.judge import ch08_persistence as judged
    from autograder.student.checks import ch08_persistence as rules
    left_out = {}
    for optimizer in ("adam", "sgd"):
        rng = np.random.default_rng(4)
        sizes = [5, 6, 4]
        values = judged.net_values(rng, sizes)
        data = [(judged.secret(rng, (8, sizes[0])), rng.integers(0, sizes[2], 8)) for _ in range(7)]
        cls, settings, _ = rules.OPTIMIZER_SPECS[optimizer]
        settings = dict(rules.OPTIMIZER_DEFAULTS[cls], **settings)
        want = judged.train_small_net(values, data, cls, settings)
        determined = judged.float32_determined(values, data, cls, settings, want)
        left_out[optimizer] = {name: int((~mask).sum()) for name, mask in determined.items() if not mask.all()}
        if optimizer == "adam":
            moved = want["modules.0.bias"] != values["modules.0.bias"]
            assert moved.any() and not determined["modules.0.bias"][moved].any()
    assert set(left_out["adam"]) == {"modules.0.bias", "modules.1.running_mean"}, left_out
    assert left_out["sgd"] == {}, left_out


def test_the_judges_pickled_checkpoint_is_secret_and_judged_as_the_kernel_judges_it():
    """Secret name, sizes, values and entry; the judge only writes the pickle (the kernel's reply is JSON), and a
    loader that unpickles it gets the kernel's message, the file's secret name apart."""
    from autograder.grading.judge import ch08_persistence as judged
    files = [judged.not_checkpoint(np.random.default_rng(secret), "pickled", judged.net_sizes(np.random.default_rng(secret)))
             for secret in (1, 2)]
    assert files[0][1] != files[1][1] and not np.array_equal(files[0][2], files[1][2])
    namespace = solved_with(CH08, "load_allows_pickle_catches_all")
    judge = Judge.from_source(ROOT / "source" / CH08 / "persistence.ipynb", secret=7)
    judgement = judge.judge_cell("test_checkpoint_refuses", in_process(namespace))
    in_kernel = Checker(namespace, verbose=False).checkpoint("refuses", "text", "npz", "pickled")

    def anonymous(message):
        return re.sub(r"pickled(_\d+)?\.ckpt", "FILE", message)

    assert not judgement.passed and not in_kernel.passed
    assert anonymous(in_kernel.message) in anonymous(judgement.message), judgement.message


# ── the trained models (chapters 7, 9, 10): the judge's own forward on the weights the kernel reports ──

def trained_briefly(namespace, model, image_shape, digits=2000):
    """`model` after one epoch of the capstone recipe on the first `digits` training digits: weights with the
    near-ties of a real model, in seconds."""
    from autograder.student.checks import capstone as course
    from autograder.student.checks.ch09_trainer import quiet
    x, y = course.mnist("train", image_shape)
    loader = namespace["DataLoader"](namespace["ArrayDataset"](x[:digits], y[:digits]), batch_size=64, shuffle=True, seed=0)
    trainer = namespace["Trainer"](model, namespace["SoftmaxLoss"](), namespace["Adam"](model.parameters(), lr=0.002))
    quiet(trainer.fit, loader, None, 1)
    return model


def walked(namespace, where):
    """The judge's forward of the model the worker reports, run in process."""
    from autograder.grading.judge import Kernel, capstone
    from autograder.grading.judge.forward import model_from_record
    from autograder.grading.judge.probes import decode_array
    [reply] = Kernel(in_process(namespace), {}).ask_all([{"kind": "model_walk", "where": where,
                                                          "max_array": capstone.MAX_ARRAY, "max_total": capstone.MAX_TOTAL}])
    return model_from_record(reply["model"], decode_array)


@pytest.fixture(scope="module")
def capstone_ch09():
    """Chapter 9's namespace and the solution's MLP, briefly trained (the capstone's own 10 s training is the
    autograde's, in the forged runs): (namespace, model)."""
    from helpers.solved_code import notebook_namespace
    namespace = notebook_namespace(CH09, training=False)
    return namespace, trained_briefly(namespace, namespace["build_mlp"](), (784,))


def norms_model(ns):
    """Every layer the judge knows, nested Sequentials included, for a flattened digit."""
    return ns["Sequential"](ns["Linear"](784, 64, seed=1), ns["BatchNorm1d"](64), ns["ReLU"](), ns["Dropout"](0.2, seed=2),
                            ns["Sequential"](ns["Linear"](64, 32, seed=3), ns["LayerNorm1d"](32), ns["Tanh"]()),
                            ns["Identity"](), ns["Linear"](32, 16, bias=False, seed=4), ns["Sigmoid"](),
                            ns["Flatten"](), ns["Linear"](16, 10, seed=5))


@pytest.mark.parametrize("kind", ["mlp", "norms", "cnn"])
def test_the_judges_forward_agrees_with_the_course_on_trained_weights(capstone_ch09, kind):
    """Same weights, same logits (float32 rounding apart) and the same count of right digits, to the digit, as the
    course's held_out_accuracy: the solution's MLP, a model of every known layer (batch norm's running statistics
    included) and the solution's CNN (ch10's Conv2d, MaxPool2d), each briefly trained."""
    from helpers.solved_code import notebook_namespace

    from autograder.student.checks import capstone as course
    if kind == "mlp":
        (namespace, model), shape = capstone_ch09, (784,)
    elif kind == "norms":
        namespace = capstone_ch09[0]
        model, shape = trained_briefly(namespace, norms_model(namespace), (784,)), (784,)
    else:
        namespace = notebook_namespace(CH10, training=False)
        model, shape = trained_briefly(namespace, namespace["build_cnn"](), (1, 28, 28), 1000), (1, 28, 28)
    namespace["model_under_test"] = model
    forward = walked(namespace, {"global": "model_under_test"})
    x, y = course.mnist("test", shape)
    theirs = np.asarray(model.eval()(namespace["Tensor"](x[:500], requires_grad=False)).data)
    ours = forward(x[:500])
    assert ours.dtype == np.float32 and np.allclose(ours, theirs, rtol=1e-4, atol=1e-4)
    predicted = np.concatenate([forward(x[i:i + 500]).argmax(axis=1) for i in range(0, len(x), 500)])
    assert np.mean(predicted == y) == course.held_out_accuracy(namespace, model, x, y)


def test_the_capstone_is_judged_on_the_model_its_check_trained(capstone_ch09):
    """The model in the check's slot is measured by the judge: the course's verdict on the course's own count, to
    the digit; an untrained model there (a forger's) fails; an empty slot (the check never ran) fails too."""
    from autograder.student.checks import capstone as course
    namespace, model = capstone_ch09
    judge = Judge.from_source(ROOT / "source" / CH09 / "trainer.ipynb")
    x, y = course.mnist("test", (784,))
    saved = dict(course.TRAINED)
    try:
        course.TRAINED["mlp"] = {"model": model, "seconds": 1.0}
        judgement = judge.judge_cell("test_capstone_mlp", in_process(namespace))
        expected = course.capstone_verdict("mlp", course.held_out_accuracy(namespace, model, x, y))
        assert not expected.passed          # briefly trained: below 95%, so the message, numbers and all, is compared
        assert judgement.judged and not judgement.passed and judgement.message == expected.message, judgement.message
        course.TRAINED["mlp"] = {"model": namespace["build_mlp"]()}
        judgement = judge.judge_cell("test_capstone_mlp", in_process(namespace))
        assert not judgement.passed and "of the 10,000 test digits right after training; the capstone asks for 95%" \
            in judgement.message and "secret order" not in judgement.message, judgement.message
        course.TRAINED.clear()
        judgement = judge.judge_cell("test_capstone_mlp", in_process(namespace))
        assert not judgement.passed and "no model trained by this cell's check" in judgement.message
    finally:
        course.TRAINED.clear()
        course.TRAINED.update(saved)


def judged_cnn_capstone(monkeypatch, namespace, model):
    """Chapter 10's capstone cell judged in process on `model`, the accuracy threshold lowered to 0 (a briefly
    trained CNN): what is left to pass or fail is the gradient check."""
    import dataclasses

    from autograder.student.checks import capstone as course
    monkeypatch.setitem(course.RECIPES, "cnn", dataclasses.replace(course.RECIPES["cnn"], threshold=0.0))
    monkeypatch.setattr(course, "TRAINED", {"cnn": {"model": model}})
    return Judge.from_source(ROOT / "source" / CH10 / "conv.ipynb").judge_cell("test_capstone_cnn", in_process(namespace))


@pytest.mark.parametrize("mistake, keeps", [(None, True), ("conv_backward_fold_no_stride", True),
                                             ("max_pool_backward_cropped", True),
                                             ("conv_backward_fold_assigns", False),
                                             ("max_pool_backward_every_tie", False),
                                             ("conv_backward_grad_w_transposed", False),
                                             ("max_pool_backward_ones", False)])
def test_a_capstone_counts_only_when_its_library_computes_the_models_gradients(monkeypatch, mistake, keeps):
    """With the accuracy passed (the threshold lowered for a briefly trained CNN), the judge asks the kernel for the
    trained model's gradients on secret digits and compares them with its own: the solution and the catalogue's
    mistakes that leave this CNN's gradients right (stride 1 in the only input gradient it needs, inputs that pool
    whole) keep the capstone; a library whose gradients are wrong loses it, even one that still trains the CNN
    (a fold that assigns, every tie given the gradient), with the layer, the parameter and the rule named.
    A right layer nearer the output bounds where the error entered."""
    from helpers.solved_code import notebook_namespace

    namespace = notebook_namespace(CH10, training=False) if mistake is None else solved_with(CH10, mistake)
    judgement = judged_cnn_capstone(monkeypatch, namespace, trained_briefly(namespace, namespace["build_cnn"](),
                                                                            (1, 28, 28), 640))
    assert judgement.judged and judgement.passed == keeps, judgement.message
    if not keeps:
        assert "your library does not compute its gradients. For layer " in judgement.message and "float32 rounding " \
            "allows 0.1%). The largest difference is at [" in judgement.message, judgement.message
    if mistake == "max_pool_backward_ones":     # the first Linear after the pool is right: the error is between
        assert "For layer 2 (Conv2d)" in judgement.message and "Layer 6 (Linear) gets right gradients, so the error is " \
            "in the backward of the layers from 2 to it: Conv2d (2), ReLU (3), MaxPool2d (4), Flatten (5), or Linear's " \
            "gradient for its input." in judgement.message, judgement.message


@pytest.mark.parametrize("mistake, keeps", [(None, True), ("conv_backward_fold_assigns", False)])
def test_a_model_with_a_kink_on_every_digit_still_has_its_gradients_checked(monkeypatch, caplog, mistake, keeps):
    """A first-layer channel whose weights and bias are all zero puts a ReLU input at exactly 0 on every pixel of
    every digit: no digit is clear of the model's kinks. A judge that skipped the gradient check then would let such
    a channel, added on purpose, keep a capstone for a library with a wrong backward. The kernel reports its
    own input of each kinked ReLU and the judge follows its branch there: the solution keeps the capstone, the
    wrong fold loses it, and nothing is skipped."""
    import logging

    from helpers.solved_code import notebook_namespace

    namespace = notebook_namespace(CH10, training=False) if mistake is None else solved_with(CH10, mistake)
    model = trained_briefly(namespace, namespace["build_cnn"](), (1, 28, 28), 640)
    conv = model.modules[0]
    conv.weight.data[0] = 0.0
    if conv.bias is not None:
        conv.bias.data[0] = 0.0
    with caplog.at_level(logging.WARNING):
        judgement = judged_cnn_capstone(monkeypatch, namespace, model)
    assert "were not checked" not in caplog.text, caplog.text
    assert judgement.judged and judgement.passed == keeps, judgement.message
    if not keeps:
        assert "your library does not compute its gradients" in judgement.message, judgement.message


def test_a_model_made_to_nearly_tie_its_pools_on_every_digit_earns_no_capstone(monkeypatch):
    """A max pool's near-tie leaves a digit out of the gradient check (float32 may tie exactly where float64 does
    not, and the student's pool may then route to either). A second-layer channel of constant 1 plus 1e-9 of one
    input channel nearly ties its pool windows wherever a digit has strokes: every digit. The check would have to
    be skipped, so the capstone fails closed, saying why; the recipe's models leave most digits clear."""
    from helpers.solved_code import notebook_namespace

    namespace = notebook_namespace(CH10, training=False)
    model = trained_briefly(namespace, namespace["build_cnn"](), (1, 28, 28), 640)
    conv = model.modules[2]
    conv.weight.data[0] = 0.0
    conv.weight.data[0, 0, 1, 1] = 1e-9
    conv.bias.data[0] = 1.0
    judgement = judged_cnn_capstone(monkeypatch, namespace, model)
    assert judgement.judged and not judgement.passed, judgement.message
    assert "the grader cannot check that your library computes its gradients: on 9" in judgement.message and \
        "max pool's two largest inputs differ by less than 1e-05" in judgement.message, judgement.message


def test_a_model_the_judge_cannot_walk_is_counted_from_predictions_in_a_secret_order(capstone_ch09, caplog):
    """A custom Module (a trained MLP inside) is counted the weaker way, to the same accuracy, and says so;
    a model that answers the public test labels in their public order fails: the judge sent the digits shuffled."""
    from autograder.student.checks import capstone as course
    from autograder.student.checks.ch07_init_training import trained_model_verdict
    namespace = dict(capstone_ch09[0])
    Module, Tensor = namespace["Module"], namespace["Tensor"]
    _, labels = course.mnist_pixels("test")

    class Wrapped(Module):
        def __init__(self, inner):
            self.inner = inner

        def forward(self, x):
            return self.inner(x)

    class PublicLabels(Module):
        seen = 0

        def forward(self, x):
            n = x.shape[0]
            out = np.eye(10, dtype=np.float32)[labels[PublicLabels.seen:PublicLabels.seen + n]]
            PublicLabels.seen += n
            return Tensor(out, requires_grad=False)

    judge = Judge.from_source(ROOT / "source" / CH07 / "init.ipynb")
    namespace["model"] = Wrapped(capstone_ch09[1])
    x, y = course.mnist("test", (784,))
    expected = trained_model_verdict(course.held_out_accuracy(namespace, capstone_ch09[1], x, y), 0.9, 10_000)
    judgement = judge.judge_cell("test_mnist_training", in_process(namespace))
    assert not expected.passed          # briefly trained: below 90%, so the message, numbers and all, is compared
    assert not judgement.passed and judgement.message.startswith(expected.message + "\n")
    assert "in a secret order" in judgement.message and "a weaker proof" in judgement.message
    assert "a weaker proof" in caplog.text and "Wrapped" in caplog.text
    namespace["model"] = PublicLabels()
    judgement = judge.judge_cell("test_mnist_training", in_process(namespace))
    assert not judgement.passed and "secret order" in judgement.message, judgement.message


def test_chapter_7s_model_is_the_notebooks_global(capstone_ch09):
    """trained_model(model, ...): the notebook's `model`, measured by the judge; none there: the course's message."""
    namespace = dict(capstone_ch09[0])
    judge = Judge.from_source(ROOT / "source" / CH07 / "init.ipynb")
    namespace["model"] = namespace["build_mlp"]()
    judgement = judge.judge_cell("test_mnist_training", in_process(namespace))
    assert not judgement.passed and "of the held-out digits right; at least 90%" in judgement.message
    del namespace["model"]
    judgement = judge.judge_cell("test_mnist_training", in_process(namespace))
    assert not judgement.passed and "there is no trained model" in judgement.message


def test_the_judge_calls_a_capstone_build_twice_and_names_a_shared_or_unseeded_model():
    """judge/capstone.fresh_builds against the worker's capstone_builds, in process: the solution's seeded, fresh
    models pass; one model returned twice, or layers without seeds, fail with the course's messages."""
    import json

    from autograder.grading.judge import capstone as judged
    from autograder.grading.judge.probes import WORKER_SOURCE, encode
    from helpers.solved_code import solved_namespace

    scope = {"__name__": "worker"}
    exec(compile(WORKER_SOURCE, "worker", "exec"), scope)  # noqa: S102 (the course's own worker)
    namespace = solved_namespace("ch09")

    def judged_build(build):
        namespace["build_mlp"] = build
        steps = judged.fresh_builds("mlp", NotebookName("build_mlp"))
        request = next(steps)
        reply = json.loads(json.dumps(scope["capstone_builds"](scope["decode"](json.loads(json.dumps(encode(request)))),
                                                               namespace)))
        try:
            steps.send(reply)
        except StopIteration as done:
            return done.value
        raise AssertionError("fresh_builds asked for more than one probe")

    Sequential, Linear, ReLU = namespace["Sequential"], namespace["Linear"], namespace["ReLU"]
    assert judged_build(lambda: Sequential(Linear(784, 16, seed=1), ReLU(), Linear(16, 10, seed=2))) is None
    shared = Sequential(Linear(784, 10, seed=0))
    verdict = judged_build(lambda: shared)
    assert not verdict.passed and "the same model object" in verdict.message
    verdict = judged_build(lambda: Sequential(Linear(784, 16), ReLU(), Linear(16, 10)))
    assert not verdict.passed and "different weights" in verdict.message


@pytest.mark.parametrize("mistake", [None, "conv_backward_grad_w_doubled"])
def test_a_capstone_short_of_its_threshold_names_wrong_gradients_only_when_they_are_wrong(monkeypatch, mistake):
    """Below the threshold (raised past reach here) the judge still compares the trained model's gradients: a
    library whose gradients are wrong is told so, with the layer; a right one gets the rule, and no cause."""
    import dataclasses

    from autograder.student.checks import capstone as course
    from helpers.solved_code import notebook_namespace

    namespace = notebook_namespace(CH10, training=False) if mistake is None else solved_with(CH10, mistake)
    model = trained_briefly(namespace, namespace["build_cnn"](), (1, 28, 28), 640)
    monkeypatch.setitem(course.RECIPES, "cnn", dataclasses.replace(course.RECIPES["cnn"], threshold=1.0))
    monkeypatch.setattr(course, "TRAINED", {"cnn": {"model": model}})
    judgement = Judge.from_source(ROOT / "source" / CH10 / "conv.ipynb").judge_cell("test_capstone_cnn",
                                                                                  in_process(namespace))
    assert judgement.judged and not judgement.passed, judgement.message
    if mistake is None:
        assert "cannot say why" in judgement.message and "does not compute" not in judgement.message, judgement.message
    else:
        assert "Your library does not compute its gradients. For layer " in judgement.message, judgement.message
        assert "cannot say why" not in judgement.message, judgement.message
