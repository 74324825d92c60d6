"""Kernel side of chapter 5's probes: run the student's optimizer and train_step on the judge's arrays.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`packed`, `quietly`, `error_report`, `type_name`, `shipped`) and, like it, imports nothing from the course and
decides nothing: it reports values, type names and the order of calls. The student's code runs as the course's
check runs it, through `checks/ch05_optimizer_facts.py` (shipped as text).
"""
import numbers

import numpy as np


@handles("optimizer")
def optimizer(request, namespace):
    """The optimizer over float64 Parameters, each parameter's values and .grad after every step; then two
    steps on a float32 Parameter, whose .data is reported as it is (its dtype is the point), and whether it
    is still the array it had before them."""
    facts = shipped("ch05_optimizer_facts")

    def make(params):
        return namespace[request["optimizer"]](params, **request["settings"])

    try:
        steps, grads_after = facts["optimizer_steps"](namespace["Parameter"], make, request["values"],
                                                      request["grads"], quietly)
    except Exception as error:  # noqa: BLE001
        return {"steps": error_report(error)}
    try:
        data, same_array = facts["float32_steps"](namespace["Parameter"], make, request["float32"],
                                                  request["float32_grads"], quietly)
        float32 = {"type_name": type_name(data), "dtype": str(getattr(data, "dtype", ""))[:40],
                   "value": packed(data) if isinstance(data, np.ndarray) else None, "same_array": same_array}
    except Exception as error:  # noqa: BLE001
        float32 = error_report(error)
    return {"steps": [[packed(a) for a in step] for step in steps],
            "grads_after": [[None if a is None else packed(a) for a in step] for step in grads_after],
            "float32": float32}


@handles("zero_grad")
def zero_grad(request, namespace):
    """Optimizer(params).zero_grad() after every parameter but the last got a gradient."""
    try:
        params, before = shipped("ch05_optimizer_facts")["zero_grad_run"](namespace["Optimizer"], namespace["Parameter"],
                                                                          request["values"], quietly)
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    return {"grad_types": [type_name(p.grad) for p in params], "before": [packed(b) for b in before],
            "after": [packed(np.array(p.data)) for p in params]}


@handles("train_step")
def train_step(request, namespace):
    """train_step with a model, a loss and an optimizer that write down each call they receive, and the
    gradient step() finds; the model is x @ w, the loss the sum of squares, the step w -= lr * grad."""
    _, runs = shipped("ch05_optimizer_facts")["train_step_calls"](namespace, request["w"], request["batches"],
                                                                 request["lr"], quietly)
    calls = []
    for _ in request["batches"]:
        try:
            ran = next(runs)
        except Exception as error:  # noqa: BLE001
            calls.append({"error": error_report(error)})
            break
        result, seen = ran["result"], ran["seen"]
        real = isinstance(result, numbers.Real) and not isinstance(result, bool)
        calls.append({"events": ran["events"][:100], "seen": packed(seen[-1]) if seen and seen[-1] is not None else None,
                      "real": real, "result": float(result) if real else None, "shown": repr(result)[:60]})
    return {"calls": calls}
