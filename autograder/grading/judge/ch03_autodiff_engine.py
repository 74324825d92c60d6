"""Judge-side checks of Tensor.backward: the judge draws one of the course's graphs (`checks/ch03_autodiff_engine.py`)
from the secret seed, the kernel builds it from private ops and runs the student's engine, and the judge
compares the reported gradients with the course's own reverse sweep over the same description."""
from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, reported_depth, reported_ownership, returned, returned_list
from autograder.student.checks.ch03_autodiff_engine import (
    GRAPHS,
    RECURSION_MESSAGE,
    Grad,
    depth_verdict,
    grads_verdict,
    handed_verdict,
)
from autograder.student.verdict import failed
from autograder.grading.judge.registry import judges


def reported_grad(name, g):
    """A reported .grad as the verdict reads it; a value the kernel could not even report is a failed probe."""
    if g.failed:
        raise ProbeFailure(f"reading {name}.grad raised {g.error_type}")
    if g.kind == "none":
        return Grad(True)
    return Grad(False, g.type_name or g.kind, g.value if g.kind == "array" else None)


# The judge's chain: three times Python's default recursion limit, so a recursive search still fails, at a
# third of the kernel check's cost (building the chain through the student's Function dominates a probe).
JUDGE_CHAIN = {"long_chain": {"length": 3_000}}


@judges("engine")
def engine(rng, name):
    """One property of the student's Tensor.backward, on a secret graph of private ops."""
    title, graph, hint = GRAPHS[name](rng, **JUDGE_CHAIN.get(name, {}))
    reply = yield {"kind": "engine", "graph": graph.request()}
    if "error" in reply:
        outcome = returned(reply["error"])
        if not reply.get("built"):
            return failed(f"{title}: the course's graph could not be built with your Tensor and Function: "
                          f"{outcome.error_type}: {outcome.message}")
        if outcome.error_type == "RecursionError":
            return failed(f"{title}: {RECURSION_MESSAGE}")
        return failed(describe_error("Tensor", "backward", outcome) + f"\n  while checking: {title}")
    got = returned_list(reply, "grads", len(graph.report))
    verdict = grads_verdict(title, graph, hint, [reported_grad(n, g) for n, g in zip(graph.names, got)],
                            reported_ownership(reply, len(graph.report)) if graph.own else None)
    handed = reply.get("handed")
    if not isinstance(handed, list) or len(handed) > 64 or not all(
            isinstance(h, list) and len(h) == 4 and isinstance(h[0], str) and isinstance(h[1], bool)
            and isinstance(h[2], str) and isinstance(h[3], bool) for h in handed):
        raise ProbeFailure("the reply does not say what the ops' backwards were handed")
    return depth_verdict(title, graph, reported_depth(reply), handed_verdict(title, verdict, handed))
