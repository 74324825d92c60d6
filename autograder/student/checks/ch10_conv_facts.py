"""What chapter 10's Conv2d check gathers in the kernel: the backward from a layer's output to its bias.

NumPy and the standard library only, no course imports: the judge ships this file as text to the kernel
(probes.SHIPPED), so the course's check and the judge's worker gather with the very same code.
"""
import numpy as np


def bias_backward_facts(Tensor, layer, x, upstream, call, standing_in):
    """Run `layer` again on x with its weight held still (a constant: the stand-in Conv has no backward), then
    backward from the output with `upstream`, the stand-ins of `standing_in()` in place meanwhile: (what it raised,
    or None; .bias.grad as it is; the shapes of the inputs of the op that made the output, at most 8, as lists of
    ints). `call` runs the student's code (the checks' run_quietly, the worker's quietly)."""
    weight, bias = getattr(layer, "weight", None), getattr(layer, "bias", None)
    held, operands = getattr(weight, "requires_grad", None), []
    try:
        bias.grad = None
        weight.requires_grad = False
        with standing_in():
            out = call(layer, x)
            operands = [[int(n) for n in t.shape] for t in list(getattr(out, "_inputs", ()) or ())[:8]]
            call(out.backward, Tensor(upstream.astype(np.asarray(out.data).dtype), requires_grad=False))
        return None, bias.grad, operands
    except Exception as error:  # noqa: BLE001 (what the student's code raised is a fact of the check)
        return error, None, operands
    finally:
        if held is not None:
            weight.requires_grad = held
