"""What chapter 5's student code did: an optimizer's steps on given parameters and gradients, what zero_grad
left, and the calls train_step made on a recording model, loss and optimizer.

NumPy and the standard library only, no course imports: the judge ships this file as text to the kernel
(`probes.SHIPPED`), so the course's checks and the judge's worker run the student's code the very same way.
`call` runs the student's code quietly (the checks' run_quietly, the worker's quietly).
"""
import numpy as np


def optimizer_steps(Parameter, make, values, grads_per_step, call):
    """The optimizer `make(params)` over float64 Parameters of `values`: each parameter's values after every step,
    and its .grad after every step (None, or the array step() left there: step() must leave it as it was given)."""
    params = [Parameter(v.copy(), dtype=np.float64) for v in values]
    optimizer = call(make, params)
    steps, grads_after = [], []
    for grads in grads_per_step:
        for p, g in zip(params, grads):
            p.grad = None if g is None else g.copy()
        call(optimizer.step)
        steps.append([np.array(p.data, dtype=np.float64) for p in params])
        grads_after.append([None if p.grad is None else np.array(p.grad, dtype=np.float64) for p in params])
    return steps, grads_after


def float32_steps(Parameter, make, value, grads, call):
    """A step per gradient of `grads` on a Parameter of `value` (its default dtype, float32): its .data after them,
    and whether that is the very array it had before them."""
    p = Parameter(value.copy())
    array = p.data
    optimizer = call(make, [p])
    for g in grads:
        p.grad = g.copy()
        call(optimizer.step)
    data = p.data
    return data, data is array


def zero_grad_run(Optimizer, Parameter, values, call):
    """Optimizer(params).zero_grad() after every parameter but the last got a gradient of ones: the parameters, and
    their values before the call."""
    params = [Parameter(v.copy()) for v in values]
    optimizer = call(Optimizer, iter(params))
    for p in params:
        p.grad = np.ones(p.shape, dtype=np.float32)
    params[-1].grad = None
    before = [np.array(p.data) for p in params]
    call(optimizer.zero_grad)
    return params, before


def train_step_calls(namespace, w, batches, lr, call):
    """train_step on each (x, y) of `batches` with a model x @ w (w a float64 Parameter of `w`), the sum of squares
    as its loss and an optimizer stepping w -= lr * grad, each writing down the calls it receives. Returns the
    Parameter w and a generator; the stand-ins are made now, the calls run as the generator is read: for each,
    {"events": the calls made, "seen": the gradient each step() so far found (None where there was none), "result":
    what it returned}. An exception of train_step stops it."""
    Tensor, Module, Parameter = namespace["Tensor"], namespace["Module"], namespace["Parameter"]
    events, seen, outputs = [], [], []
    w = Parameter(w.copy(), dtype=np.float64)

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
        """An optimizer that writes down when it is called and what gradient its step sees."""

        params = [w]

        def zero_grad(self):
            events.append("zero_grad")
            w.grad = None

        def step(self):
            events.append("step")
            seen.append(None if w.grad is None else np.array(w.grad, dtype=np.float64))
            if w.grad is not None:
                w.data -= lr * w.grad

    model, recorder = Model(), Recorder()

    def calls():
        for x, y in batches:
            events.clear()
            result = call(namespace["train_step"], model, loss_fn, recorder,
                          Tensor(x, dtype=np.float64, requires_grad=False), Tensor(y, dtype=np.float64, requires_grad=False))
            yield {"events": list(events), "seen": list(seen), "result": result}
    return w, calls()
