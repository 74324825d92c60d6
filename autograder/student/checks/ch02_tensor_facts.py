"""What chapter 2's checks gather in the kernel: the Tensor members stood in while another member is checked, and
a new tensor's fields as facts.

NumPy and the standard library only, no course imports: the judge ships this file as text to the kernel
(probes.SHIPPED), so the course's checks and the judge's worker stand in and report with the very same code.
"""
import contextlib

import numpy as np

MISSING = object()


# The stand-ins are written another way than the chapter asks (fields set in turn from a table), so that reading
# them teaches nothing beyond the text's description.
NEW_TENSOR_FIELDS = {"grad": None, "_op": None, "_inputs": ()}


def _init(self, data, *, dtype="float32", requires_grad=True):
    fields = {"data": np.array(data.data if isinstance(data, type(self)) else data, dtype=dtype),
              "requires_grad": requires_grad, **NEW_TENSOR_FIELDS}
    for name, value in fields.items():
        setattr(self, name, value)


# Every member of the chapter's Tensor, known to be right: a check puts all of them but the one under test in place.
STANDINS = {
    "__init__": _init,
    "shape": property(lambda self: self.data.shape),
    "ndim": property(lambda self: self.data.ndim),
    "size": property(lambda self: self.data.size),
    "dtype": property(lambda self: self.data.dtype),
    "numpy": lambda self: self.data.copy(),
    "item": lambda self: self.data.item(),
    "detach": lambda self: type(self)(self.data, dtype=self.data.dtype, requires_grad=False),
    "__len__": lambda self: len(self.data),
    "__repr__": lambda self: f"Tensor({self.data!r}, requires_grad={self.requires_grad})",
}


@contextlib.contextmanager
def standins(Tensor, keep=()):
    """Every member of Tensor but those in `keep` swapped for its stand-in for the block, then restored."""
    saved = {name: Tensor.__dict__.get(name, MISSING) for name in STANDINS if name not in keep}
    for name in saved:
        setattr(Tensor, name, STANDINS[name])
    try:
        yield
    finally:
        for name, member in saved.items():
            if member is MISSING:
                delattr(Tensor, name)
            else:
                setattr(Tensor, name, member)


def field_facts(got):
    """One field of a new tensor (MISSING when it has none) as a verdict reads it: its repr, and whether it is
    None, True, False or the empty tuple."""
    if got is MISSING:
        return {"missing": True}
    return {"repr": repr(got)[:60], "is_none": got is None, "is_true": got is True, "is_false": got is False,
            "empty_tuple": isinstance(got, tuple) and got == ()}


class Mul:
    """Stands for the op that made a tensor: its repr shows the class name."""
