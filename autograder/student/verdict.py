"""What a check returns to a test cell: did it pass, and a message written for the learner."""
import os
from dataclasses import dataclass

# Set by the grader (JudgedExecute) in a kernel whose grade cells the judge re-checks outside the kernel:
# the comma-separated check names whose in-kernel verdicts it ignores. The kernel then skips their work.
JUDGED_OUTSIDE_ENV = "BABYGRAD_JUDGED_OUTSIDE"
# Set with it: the check names the kernel still runs for what they leave behind (a trained model), whose
# verdicts the judge decides all the same. The kernel then does the work the judge needs and skips the rest.
RUN_FOR_JUDGE_ENV = "BABYGRAD_RUN_FOR_JUDGE"


@dataclass
class Verdict:
    passed: bool
    message: str
    deferred: bool = False      # not computed here: the grader's judge decides it outside the kernel

    def __str__(self) -> str:
        return self.message


def passed(message: str) -> Verdict:
    return Verdict(True, message)


def failed(message: str) -> Verdict:
    return Verdict(False, message)


def graded_by_judge() -> bool:
    """Whether this kernel runs under the grader's judge, which decides some of its checks."""
    return bool(os.environ.get(JUDGED_OUTSIDE_ENV))


def _listed(variable: str, name: str) -> bool:
    return name in os.environ.get(variable, "").split(",")


def judged_outside(name: str) -> bool:
    """Whether the grader running this kernel decides check.NAME itself, so the kernel need not."""
    return _listed(JUDGED_OUTSIDE_ENV, name)


def run_for_judge(name: str) -> bool:
    """Whether check.NAME runs in this grading kernel only to leave the judge something to probe."""
    return _listed(RUN_FOR_JUDGE_ENV, name)


def deferred(name: str) -> Verdict:
    """check.NAME in a grading kernel whose judge decides it: the verdict comes from outside the kernel."""
    return Verdict(True, f"→ check.{name}: the grader checks this outside your notebook, on inputs of its own",
                   deferred=True)


def deferred_together(count: int) -> Verdict:
    """check.all(...) of checks none failed and some the grader decides: so does it, for the whole."""
    return Verdict(True, f"→ the grader checks these {count} outside your notebook, on inputs of its own",
                   deferred=True)
