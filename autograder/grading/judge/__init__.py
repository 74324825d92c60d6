"""The judge: decides each grade cell's verdict in the grader's process, from data the kernel returns.

The student's code shares a kernel with the notebook's checks, so it can forge any verdict computed
there. The judge re-runs a grade cell's checks out of its reach: it reads them from the trusted
source notebook (`plan`), draws inputs from a per-run secret seed, sends the kernel probes that ask
for raw numbers (`probes`, `worker`), and compares them with its own computation (`ops`, `engine`,
`operators`). It does not care which Execute preprocessor runs the kernel: it only needs `run_probe`.
"""
import logging
import secrets
import zlib
from dataclasses import dataclass

import nbformat
import numpy as np

from ...verdict import failed
from . import engine, operators, ops
from .plan import plan_notebook
from .probes import ProbeFailure, probe_code, reply_from_outputs

log = logging.getLogger(__name__)

# check.NAME in a test cell -> the judge-side implementation, called as fn(kernel, rng, *args, **kwargs).
JUDGED_CHECKS = {
    "forward": ops.forward,
    "backward": ops.backward,
    "engine": engine.engine,
    "operators": operators.operators,
}


@dataclass
class CellJudgement:
    """The judge's word on one grade cell. Unjudged cells keep the kernel's outcome; `message` says why."""

    grade_id: str
    judged: bool
    passed: bool
    message: str
    probes: int = 0


class Kernel:
    """The judge's view of the student's kernel: send a request, get the reply's JSON or a ProbeFailure."""

    def __init__(self, run_probe):
        self.run_probe = run_probe
        self.probes = 0

    def ask(self, request):
        self.probes += 1
        try:
            outputs = self.run_probe(probe_code(request))
        except Exception as error:  # noqa: BLE001 (a dead or stuck kernel is a failed probe)
            raise ProbeFailure(f"the kernel did not answer ({type(error).__name__}: {error})") from None
        return reply_from_outputs(outputs)


class Judge:
    """The checks of one source notebook, and the secret seed of this run."""

    def __init__(self, plans, secret=None):
        self.plans = plans
        self.secret = secrets.randbits(64) if secret is None else secret

    @classmethod
    def from_source(cls, path, secret=None):
        """A judge for the trusted source notebook at `path` (the course's source/, never a submission)."""
        notebook = nbformat.read(str(path), as_version=4)
        return cls(plan_notebook(notebook, JUDGED_CHECKS), secret)

    @property
    def judged_cells(self):
        return [g for g, plan in self.plans.items() if not plan.unjudged]

    def rng_for(self, grade_id, position, seed):
        """Inputs for one check call: the run's secret, mixed with the cell, the call and the cell's own seed."""
        return np.random.default_rng([self.secret, zlib.crc32(grade_id.encode()), position, int(seed) & 0xFFFFFFFF])

    def judge_cell(self, grade_id, run_probe):
        """Run the cell's checks against the live kernel; None for a cell the source does not grade."""
        plan = self.plans.get(grade_id)
        if plan is None:
            return None
        if plan.unjudged:
            return CellJudgement(grade_id, False, True, plan.unjudged)
        kernel = Kernel(run_probe)
        for position, call in enumerate(plan.calls):
            rng = self.rng_for(grade_id, position, call.kwargs.get("seed", 0))
            try:
                verdict = JUDGED_CHECKS[call.name](kernel, rng, *call.args, **call.kwargs)
            except ProbeFailure as error:
                verdict = failed(f"check.{call.name} (line {call.line} of the test cell): the judge could not "
                                 f"read your kernel's answer: {error}.")
            except Exception as error:  # noqa: BLE001 (a judge bug must not pass a cell, nor stop grading)
                log.exception("judge: check.%s of %s failed inside the judge", call.name, grade_id)
                verdict = failed(f"check.{call.name} (line {call.line}): the judge met an internal error "
                                 f"({type(error).__name__}: {error}); tell your instructor.")
            if not verdict.passed:
                return CellJudgement(grade_id, True, False, verdict.message, kernel.probes)
        return CellJudgement(grade_id, True, True, f"all {len(plan.calls)} checks passed", kernel.probes)
