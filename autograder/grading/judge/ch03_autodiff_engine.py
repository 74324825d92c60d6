"""Judge-side checks of Tensor.backward: the judge draws one of the course's graphs (`checks/ch03_autodiff_engine.py`)
from the secret seed, the kernel builds it from private ops and runs the student's engine, and the judge
compares the reported gradients with the course's own reverse sweep over the same description."""
from dataclasses import dataclass
from typing import ClassVar

from autograder.grading.judge.ch03_autodiff_ops import describe_error
from autograder.grading.judge.probes import ProbeFailure, Returned
from autograder.grading.judge.replies import (Bool, Flag, Int, ListOf, Nested, Optional, Pair, Raised, Row, Tag, Text,
                                              read, wire)
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

GRAD = Int(low=0, below="grads")        # the index of a reported .grad


@dataclass(frozen=True)
class EngineFailed:
    """Building the graph (`built` false) or backward() raised."""

    TAG: ClassVar[Tag] = Tag("error")
    error: Returned = wire(Raised())
    built: bool = wire(Flag())


@dataclass(frozen=True)
class Ownership:
    """Which reported .grad arrays are one array (pairs of indices) and which are read-only (engine_graph.ownership)."""

    shared: list[tuple[int, int]] = wire(ListOf(Pair(GRAD, GRAD)))
    readonly: list[int] = wire(ListOf(GRAD))


@dataclass(frozen=True)
class Engine:
    """Each reported node's .grad; who owns the arrays (when the graph asks); what each private op's backward was
    handed ([out_grad's dtype, whether it requires a gradient, its output's dtype, engines]); backward()'s depth."""

    grads: list[Returned] = wire(ListOf(Raised(), length="grads"))
    own: Ownership | None = wire(Optional(Nested(Ownership)))
    handed: list[tuple[str, bool, str, bool]] = wire(ListOf(Row((Text(None), Bool(), Text(None), Bool())), most=64))
    depth: int = wire(Int(low=0))


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
    reply = read((yield {"kind": "engine", "graph": graph.request()}), EngineFailed | Engine, grads=len(graph.report))
    if isinstance(reply, EngineFailed):
        outcome = reply.error
        if not reply.built:
            return failed(f"{title}: the course's graph could not be built with your Tensor and Function: "
                          f"{outcome.error_type}: {outcome.message}")
        if outcome.error_type == "RecursionError":
            return failed(f"{title}: {RECURSION_MESSAGE}")
        return failed(describe_error("Tensor", "backward", outcome) + f"\n  while checking: {title}")
    if graph.own and reply.own is None:
        raise ProbeFailure("the reply's 'own' is missing")
    verdict = grads_verdict(title, graph, hint, [reported_grad(n, g) for n, g in zip(graph.names, reply.grads)],
                            vars(reply.own) if graph.own else None)
    return depth_verdict(title, graph, reply.depth, handed_verdict(title, verdict, reply.handed))
