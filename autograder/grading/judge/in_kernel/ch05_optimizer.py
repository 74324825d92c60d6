"""Kernel side of chapter 5's probes: run the student's optimizer and train_step on the judge's arrays.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`packed`, `quietly`, `error_report`, `type_name`) and, like it, imports nothing from the course and
decides nothing: it reports values, type names and the order of calls.
"""
import numbers

import numpy as np


@handles("optimizer")
def optimizer(request, namespace):
    """The optimizer over float64 Parameters, each parameter's values and .grad after every step; then two
    steps on a float32 Parameter, whose .data is reported as it is (its dtype is the point), and whether it
    is still the array it had before them."""
    Parameter = namespace["Parameter"]

    def make(params):
        return namespace[request["optimizer"]](params, **request["settings"])

    try:
        params = [Parameter(v.copy(), dtype=np.float64) for v in request["values"]]
        stepper = quietly(make, params)
        steps, grads_after = [], []
        for grads in request["grads"]:
            for p, g in zip(params, grads):
                p.grad = None if g is None else g.copy()
            quietly(stepper.step)
            steps.append([packed(np.array(p.data, dtype=np.float64)) for p in params])
            grads_after.append([None if p.grad is None else packed(np.array(p.grad, dtype=np.float64))
                                for p in params])
    except Exception as error:  # noqa: BLE001
        return {"steps": error_report(error)}
    try:
        p = Parameter(request["float32"].copy())
        array = p.data
        stepper = quietly(make, [p])
        for g in request["float32_grads"]:
            p.grad = g.copy()
            quietly(stepper.step)
        data = p.data
        float32 = {"type_name": type_name(data), "dtype": str(getattr(data, "dtype", ""))[:40],
                   "value": packed(data) if isinstance(data, np.ndarray) else None, "same_array": data is array}
    except Exception as error:  # noqa: BLE001
        float32 = error_report(error)
    return {"steps": steps, "grads_after": grads_after, "float32": float32}


@handles("zero_grad")
def zero_grad(request, namespace):
    """Optimizer(params).zero_grad() after every parameter but the last got a gradient."""
    Parameter = namespace["Parameter"]
    try:
        params = [Parameter(v.copy()) for v in request["values"]]
        stepper = quietly(namespace["Optimizer"], iter(params))
        for p in params:
            p.grad = np.ones(p.shape, dtype=np.float32)
        params[-1].grad = None
        before = [packed(np.array(p.data)) for p in params]
        quietly(stepper.zero_grad)
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    return {"grad_types": [type_name(p.grad) for p in params], "before": before,
            "after": [packed(np.array(p.data)) for p in params]}


@handles("train_step")
def train_step(request, namespace):
    """train_step with a model, a loss and an optimizer that write down each call they receive, and the
    gradient step() finds; the model is x @ w, the loss the sum of squares, the step w -= lr * grad."""
    Tensor, Module, Parameter = namespace["Tensor"], namespace["Module"], namespace["Parameter"]
    events, seen, lr, outputs = [], [], request["lr"], []
    w = Parameter(request["w"].copy(), dtype=np.float64)

    class Model(Module):
        def __init__(self):
            self.w = w

        def forward(self, x):
            events.append("forward")
            outputs.append(x @ self.w)
            return outputs[-1]

        __call__ = forward

    def loss_fn(pred, y):
        # "loss_swapped": the model's output came second (a loss takes the prediction, then the target)
        swapped = not any(pred is out for out in outputs) and any(y is out for out in outputs)
        events.append("loss_swapped" if swapped else "loss")
        loss = ((pred - y) ** 2).sum()
        plain_backward = loss.backward

        def backward(*args):
            events.append("backward")
            return plain_backward(*args)
        loss.backward = backward
        return loss

    class Recorder:
        params = [w]

        def zero_grad(self):
            events.append("zero_grad")
            w.grad = None

        def step(self):
            events.append("step")
            seen.append(None if w.grad is None else np.array(w.grad, dtype=np.float64))
            if w.grad is not None:
                w.data -= lr * w.grad

    model, recorder, calls = Model(), Recorder(), []
    for x, y in request["batches"]:
        events.clear()
        try:
            result = quietly(namespace["train_step"], model, loss_fn, recorder,
                             Tensor(x, dtype=np.float64, requires_grad=False),
                             Tensor(y, dtype=np.float64, requires_grad=False))
        except Exception as error:  # noqa: BLE001
            calls.append({"error": error_report(error)})
            break
        real = isinstance(result, numbers.Real) and not isinstance(result, bool)
        calls.append({"events": list(events)[:100], "seen": packed(seen[-1]) if seen and seen[-1] is not None else None,
                      "real": real, "result": float(result) if real else None, "shown": repr(result)[:60]})
    return {"calls": calls}
