"""Judge-side checks of the engine's rules (zero_grad, no_grad, backward's two errors): the judge draws the
inputs from the secret seed, the kernel runs the student's code on them and reports what happened as data
(`checks/ch03_autodiff_engine_graph.rule_facts`, shipped as text), and the verdict is the course check's own
(`checks/ch03_autodiff_engine_rules.rule_verdict`). Which exception class was raised, and whether an output recorded a
graph, only the kernel can say: the judge takes those as reported; every value it checks itself."""
from autograder.grading.judge.probes import ProbeFailure, returned
from autograder.student.checks.ch03_autodiff_engine_rules import (
    RULE_TITLES,
    rule_inputs,
    rule_verdict,
)
from autograder.grading.judge.registry import judges

SCALARS = (bool, int, float, type(None))


def neutral(data, depth=0):
    """The reply's facts in the form the verdicts read: each reported value (a dict with "kind") parsed as
    untrusted data, everything else only dicts, lists and plain scalars."""
    if depth > 6:
        raise ProbeFailure("the reply's facts are nested too deeply")
    if isinstance(data, dict) and "kind" in data:
        r = returned(data)
        return {"kind": r.kind, "value": r.value, "type_name": r.type_name, "error_type": r.error_type,
                "message": r.message, "line": r.line, "helper": r.helper}
    if isinstance(data, dict):
        return {str(k): neutral(v, depth + 1) for k, v in data.items()}
    if isinstance(data, list):
        return [neutral(v, depth + 1) for v in data[:16]]
    if isinstance(data, SCALARS):
        return data
    raise ProbeFailure("the reply's facts hold a value of an unexpected type")


@judges("engine_rule")
def engine_rule(rng, name):
    """One rule around Tensor.backward, on the judge's secret inputs."""
    if name not in RULE_TITLES:
        raise ValueError(f"no engine rule {name!r}")
    inputs = rule_inputs(name, rng)
    reply = yield {"kind": "engine_rule", "rule": name, "inputs": inputs}
    facts = neutral(reply.get("facts"))
    try:
        return rule_verdict(name, inputs, facts)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        raise ProbeFailure(f"the reply's facts are malformed ({type(error).__name__}: {error})") from None
