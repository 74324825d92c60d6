"""The judge: decides each grade cell's verdict in the grader's process, from data the kernel returns.

The student's code shares a kernel with the notebook's checks, so it can forge any verdict computed
there. The judge re-runs a grade cell's checks out of its reach: it reads them from the trusted
source notebook (`plan`), draws inputs from a per-run secret seed, sends the kernel probes that ask
for raw numbers (`probes`, `worker`), and compares them with its own computation (`ops`, `engine`,
`operators`). It does not care which Execute preprocessor runs the kernel: it only needs `run_probe`.
"""
import copy
import hashlib
import logging
import secrets
import zlib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import nbformat
import numpy as np

from autograder.grading.judge import (  # noqa: F401  (importing a module registers its judged checks)
    capstone,
    ch01_scalar,
    ch02_tensor,
    ch03_autodiff_engine,
    ch03_autodiff_engine_rules,
    ch03_autodiff_operators,
    ch03_autodiff_ops,
    ch04_nn,
    ch04_nn_module_tree,
    ch05_optimizer,
    ch06_data,
    ch07_init,
    ch08_persistence,
    ch09_trainer,
    ch10_conv,
)
from autograder.grading.judge.hidden import hidden_failure
from autograder.grading.judge.plan import plan_notebook
from autograder.grading.judge.probes import (
    ProbeFailure,
    ProbeStopped,
    probe_code,
    reply_from_outputs,
    worker_missing,
)
from autograder.grading.judge.registry import JUDGED
from autograder.student.verdict import failed

log = logging.getLogger(__name__)

# check.NAME in a test cell -> the judge-side check that `@judges("NAME")` registered where it is defined: a
# generator fn(rng, *args, **kwargs) that yields requests for the kernel, receives their replies, and returns a
# Verdict. Read-only; every module that registers one is imported above.
JUDGED_CHECKS = MappingProxyType(JUDGED)

# check.NAME calls the judge knowingly leaves to the kernel, and why; a cell's other checks are still judged.
# None is left: a test keeps every grade cell of every chapter judged.
KERNEL_DECIDES = {}

# Student checks the judge has no judge for, and why: no grade cell may call them (tests/unit/test_judge_registry.py).
NOT_JUDGED = {
    "vectorized": "a count of the Python lines the kernel runs, which only the kernel can report: chapter 10 "
                  "calls it in an ungraded cell, a lesson (docs/grading-correctness.md)",
}

# Judged checks whose in-kernel run the judge still needs: it probes what they leave in the kernel. Every
# other judged check is skipped in the kernel while grading (`Judge.kernel_may_skip`): its verdict there
# would be ignored, and it would cost as much as the judge's own probes.
KERNEL_RUNS_TOO = {
    "capstone": "the judge probes the model that the in-kernel check trained (checks.capstone.TRAINED)",
    "my_capstone": "the judge probes the model that the in-kernel check trained (checks.capstone.TRAINED)",
}

# Judged checks whose pass is a result the student wants to read: a trained model's held-out accuracy. A cell
# of one such check passes with the check's own message; other cells say only how many checks passed, since
# their messages would describe the judge's secret inputs.
TELLS_ITS_RESULT = {"trained_model", "capstone", "my_capstone"}


@dataclass
class CellJudgement:
    """The judge's word on one grade cell. Unjudged cells keep the kernel's outcome; `message` says why."""

    grade_id: str
    judged: bool
    passed: bool
    message: str
    probes: int = 0
    line: int = 0           # the failing check's line in the test cell (0: none, or unknown)


class Kernel:
    """The judge's view of the student's kernel: one probe carries a batch of requests, and each
    request gets its reply's JSON or a ProbeFailure."""

    def __init__(self, run_probe, session):
        self.run_probe = run_probe
        self.session = session          # shared by a notebook's cells: is the worker installed?
        self.probes = 0
        self.failed_whole = False       # a probe failed as a whole: no answer belongs to one request
        self.stopped = None             # the ProbeStopped that failed it, when the grader stopped it

    def ask_all(self, requests, marks=(0,)):
        """The replies to `requests`; `marks`: the requests that start a grade cell's checks."""
        request = {"kind": "batch", "requests": requests, "marks": list(marks)}
        try:
            self.probes += 1
            outputs = self.run_probe(probe_code(request, install=not self.session.get("installed"), marks=marks))
            if worker_missing(outputs):
                self.probes += 1
                outputs = self.run_probe(probe_code(request, install=True, marks=marks))
            self.session["installed"] = True
        except Exception as error:  # noqa: BLE001 (a dead or stuck kernel is a failed probe)
            self.failed_whole = True
            self.stopped = error if isinstance(error, ProbeStopped) else None
            failure = ProbeFailure(str(error) if isinstance(error, ProbeStopped)     # says why, for the student
                                   else f"the kernel did not answer ({type(error).__name__}: {error})")
            return [failure] * len(requests)
        try:
            replies = reply_from_outputs(outputs).get("replies")
            if not isinstance(replies, list) or len(replies) != len(requests):
                raise ProbeFailure(f"the reply does not hold one answer per request ({len(requests)})")
        except ProbeFailure as failure:
            self.failed_whole = True
            return [failure] * len(requests)
        return [r if isinstance(r, dict) and "worker_error" not in r
                else ProbeFailure(f"the probe failed in the kernel: {str(r.get('worker_error'))[:300]}"
                                  if isinstance(r, dict) else "an answer is not a JSON object")
                for r in replies]


_PLANS = {}         # sha256 of a source notebook's bytes -> its plans, as Judge.from_source made them


class Judge:
    """The checks of one source notebook, and the secret seed of this run."""

    def __init__(self, plans, secret=None):
        self.plans = plans
        self.secret = secrets.randbits(64) if secret is None else secret
        self.session = {}
        self.stopped_in = None      # the grade cell a probe of several was stopped in, after judge_cells gave None

    @classmethod
    def from_source(cls, path, secret=None):
        """A judge for the trusted source notebook at `path` (the course's source/, never a submission).
        A grading process plans each source once (tens of ms) and gives every judge its own copy."""
        text = Path(path).read_bytes()
        key = hashlib.sha256(text).hexdigest()
        if key not in _PLANS:
            _PLANS[key] = plan_notebook(nbformat.reads(text.decode("utf-8"), as_version=4), JUDGED_CHECKS, KERNEL_DECIDES)
        return cls(copy.deepcopy(_PLANS[key]), secret)

    @property
    def judged_cells(self):
        return [g for g, plan in self.plans.items() if not plan.unjudged]

    @property
    def decided_checks(self):
        """The check names whose every call in a grade cell is judged here; empty when any grade cell is
        unjudged: that cell's calls are not in its plan, and the kernel's verdicts must stand for them."""
        if any(plan.unjudged for plan in self.plans.values()):
            return set()
        return {call.name for plan in self.plans.values() for call in plan.calls}

    @property
    def kernel_may_skip(self):
        """The check names the kernel may skip while this judge grades: decided here, and the judge needs
        nothing the in-kernel run leaves behind."""
        return self.decided_checks - set(KERNEL_RUNS_TOO)

    @property
    def kernel_runs_for_judge(self):
        """The checks of KERNEL_RUNS_TOO this judge decides: the kernel runs them for what they leave behind,
        and may skip what they would measure there."""
        return self.decided_checks & set(KERNEL_RUNS_TOO)

    def decides_alone(self, grade_id):
        """Whether the grade cell need not run in the kernel at all: it only calls checks that the kernel
        would skip (`kernel_may_skip`) and asserts their verdicts, so its run there would print that the
        grader checks it and leave nothing behind; the judge's probes are its whole verdict."""
        plan = self.plans.get(grade_id)
        if plan is None or plan.unjudged or not plan.only_checks:
            return False
        return {call.name for call in plan.calls} <= self.kernel_may_skip

    def rng_for(self, grade_id, position, seed):
        """Inputs for one check call: the run's secret, mixed with the cell, the call and the cell's own seed."""
        return np.random.default_rng([self.secret, zlib.crc32(grade_id.encode()), position, int(seed) & 0xFFFFFFFF])

    def judge_cell(self, grade_id, run_probe):
        """Run the cell's checks against the live kernel; None for a cell the source does not grade.

        The checks are generators; their requests go out together, one probe per round (a forward
        check takes one round, a backward two), and the first failing check in source order decides.
        """
        return self.judge_cells([grade_id], run_probe)[0]

    def judge_cells(self, grade_ids, run_probe):
        """judge_cell for several grade cells at once, their requests sharing one probe per round:
        consecutive grade cells cost one kernel round trip instead of one each.

        A probe of several cells that fails as a whole (the kernel died, the reply was malformed) belongs to
        no one cell: then None, and the caller judges the cells one by one. A probe the grader stopped (past
        the time limit, a flood) names the cell whose checks were running (`stopped_cell`): that cell fails
        as it would alone, and the others are asked again in the same kernel; if the kernel had to be killed,
        None, with the cell in `stopped_in`, for the caller to repair as that cell's death.
        """
        kernel = Kernel(run_probe, self.session)
        self.stopped_in = None
        judgements, verdicts, pending = {}, {}, {}
        for grade_id in grade_ids:
            plan = self.plans.get(grade_id)
            if plan is None:
                judgements[grade_id] = None
                continue
            if plan.unjudged:
                judgements[grade_id] = CellJudgement(grade_id, False, True, plan.unjudged)
                continue
            for position, call in enumerate(plan.calls):
                rng = self.rng_for(grade_id, position, call.kwargs.get("seed", 0))
                check = JUDGED_CHECKS[call.name](rng, *call.args, **call.kwargs)
                advance(call, (grade_id, position), check, None, pending, verdicts)
        while pending:
            keys = list(pending)
            marks = [i for i, key in enumerate(keys) if i == 0 or key[0] != keys[i - 1][0]]
            replies = kernel.ask_all([pending[key][1] for key in keys], marks)
            if kernel.failed_whole and len(grade_ids) > 1:
                stopped = stopped_cell(kernel.stopped, keys, marks)
                if stopped is None or kernel.stopped.killed:
                    self.stopped_in = stopped
                    return None
                kernel.failed_whole, kernel.stopped = False, None
                replies = [reply if key[0] == stopped else UNANSWERED for key, reply in zip(keys, replies)]
            for key, reply in zip(keys, replies):
                if reply is UNANSWERED:         # asked again in the next round
                    continue
                check, _ = pending.pop(key)
                advance(self.plans[key[0]].calls[key[1]], key, check, reply, pending, verdicts)
        probes = kernel.probes          # counted once, on the first judged cell
        for grade_id in grade_ids:
            if grade_id in judgements:
                continue
            calls = self.plans[grade_id].calls
            failing = [p for p in range(len(calls)) if not verdicts[(grade_id, p)].passed]
            judgements[grade_id] = (
                CellJudgement(grade_id, True, False, failure_message(calls[failing[0]], verdicts[(grade_id, failing[0])]),
                              probes, calls[failing[0]].line) if failing else
                CellJudgement(grade_id, True, True, pass_message(calls, verdicts, grade_id), probes))
            probes = 0
        return [judgements[grade_id] for grade_id in grade_ids]


UNANSWERED = object()       # a request of a stopped probe that was not the stopped cell's: it is asked again


def stopped_cell(stopped, keys, marks):
    """The grade cell whose checks a stopped probe was running: the one its last progress mark started. None
    when the probe was not stopped, or no mark came, or the notebook's budget ran out (nothing is asked again)."""
    if stopped is None or stopped.out_of_time or stopped.started not in marks:
        return None
    return keys[stopped.started][0]


def failure_message(call, verdict):
    """What a failed cell's feedback says: the failing check's message, told without its inputs if it is hidden."""
    return hidden_failure(call.name, call.line, verdict.message) if call.hidden else verdict.message


def pass_message(calls, verdicts, grade_id):
    """What a passed cell's feedback line says: the result of a check that TELLS_ITS_RESULT, else a count."""
    if len(calls) == 1 and calls[0].name in TELLS_ITS_RESULT:
        return verdicts[(grade_id, 0)].message.removeprefix("✔ ")
    return f"all {len(calls)} checks passed"


def advance(call, key, check, reply, pending, verdicts):
    """Give one check its reply; file its next request in `pending`, or its verdict in `verdicts`, under `key`."""
    try:
        if isinstance(reply, ProbeFailure):
            raise reply
        pending[key] = (check, check.send(reply))
    except StopIteration as done:
        verdicts[key] = done.value
    except ProbeFailure as error:
        verdicts[key] = failed(f"check.{call.name} (line {call.line} of the test cell): the judge could not "
                               f"read your kernel's answer: {error}.")
    except Exception as error:  # noqa: BLE001 (a judge bug must not pass a cell, nor stop grading)
        log.exception("judge: check.%s on line %d failed inside the judge", call.name, call.line)
        verdicts[key] = failed(f"check.{call.name} (line {call.line}): the judge met an internal error "
                               f"({type(error).__name__}: {error}); tell your instructor.")
