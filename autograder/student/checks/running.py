"""How every check runs a student's code: quietly (nothing reaches stderr, which would zero an nbgrader
cell), and what it says when that code raises: the method, the exception, and the student's own line.

NumPy and the standard library only, no course imports: the judge ships this file as text to the kernel
(probes.SHIPPED), so its worker runs the student's code and finds the student's line as the checks do.
"""
import linecache
import re
import traceback
import warnings

import numpy as np


def run_quietly(fn, *args):
    """Call student code with NumPy warnings silenced: nbgrader zeroes any cell that writes to stderr."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def recursion_problem(title, depth, length, hint):
    """The message for a backward() that walked a long chain right but nested about one Python call per node (a
    recursive search under a raised recursion limit), or None. Shared by chapters 1 and 3, and with the judge."""
    if depth <= length // 2:
        return None
    return (f"{title}: the gradient is right, but backward() nested {depth:,} Python calls inside one another, about "
            "one per node: a recursive search, which ran only because the recursion limit was above its default of "
            f"1000.\n  Hint: a raised limit only moves the wall: a deeper graph (a recurrent network unrolled over a "
            f"long sequence) hits it again, or crashes the interpreter when its own stack runs out. {hint}")


def not_implemented(label, method, helper=""):
    """`label.method` raised NotImplementedError: its own skeleton, or (`helper`, the function that raised
    it) code it calls. Shared with the judge, so a helper's unwritten skeleton is never blamed on the op."""
    if helper:
        return (f"{method_of(label, method)} calls `{helper}`, which is not implemented yet (it still raises "
                f"NotImplementedError).\n  That is another exercise: write it, or compute this one without it.")
    context = LABEL_WITH_CONTEXT.match(label)
    if context:
        return (f"{context['name']}.{method} is not implemented yet (checked on {label}): "
                "replace `raise NotImplementedError()` with your code.")
    return f"{label}.{method} is not implemented yet: replace `raise NotImplementedError()` with your code."


def raised_elsewhere(error, own):
    """The name of the function that raised `error`, when it is not `own` (the method under test); "" when it is."""
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    code, own_code = (tb.tb_frame.f_code if tb is not None else None), getattr(own, "__code__", None)
    if own_code is None or code is None or code is own_code:
        return ""
    return getattr(code, "co_qualname", code.co_name)


def describe_exception(label, method, error, own=None):
    """A student's exception, told with the line of their code that raised it. `own`: the function under
    test, so that a NotImplementedError raised by something it calls is told as that."""
    if isinstance(error, NotImplementedError):
        return not_implemented(label, method, raised_elsewhere(error, own))
    line = student_line(error.__traceback__, own)
    where = f"\n  at: {line}" if line else ""
    return f"{method_of(label, method)} raised {type(error).__name__}: {error}{where}"


# A label that says more than the call that built the object: `Dropout(p=0.25, seed=0) in training mode`.
LABEL_WITH_CONTEXT = re.compile(r"^(?P<name>[A-Za-z_]\w*)\(.*\)\s+\S")


def method_of(label, method):
    """`Mul().forward`, or for a label with context `Dropout.__init__ (checked on Dropout(p=0.25, seed=0) in
    training mode)`, which reads as a sentence. Shared with the judge's describe_error."""
    context = LABEL_WITH_CONTEXT.match(label)
    if context:
        return f"{context['name']}.{method} (checked on {label})"
    return f"{label}.{method}"


# The file names IPython gives notebook cells: `/tmp/ipykernel_NNN/NNNN.py` (ipykernel 6, also under nbgrader's
# nbclient) or `<ipython-input-N-...>` (older kernels).
NOTEBOOK_CELL = re.compile(r"ipykernel_\d+[/\\][^/\\]+\.py$|^<ipython-input-")


def in_autograder(filename):
    """Whether a frame's file is the course's own code, as the checks run it (an installed `autograder` package)."""
    return "autograder" in filename


def student_line(tb, own=None, graders=in_autograder):
    """The source line to show for a traceback: the line of `own` (the method under test) that was running,
    when it is in the traceback: deeper notebook frames may be the chapter's provided code (`Function.__call__`
    running an op the method called). Else the deepest frame in a notebook cell (the student's own code),
    else the deepest frame whose file `graders` does not claim (the judge's worker: its probe's file); ""
    when there is none."""
    own_code = getattr(own, "__code__", None)
    own_lines = [lineno for frame, lineno in traceback.walk_tb(tb) if frame.f_code is own_code]
    if own_lines:
        return linecache.getline(own_code.co_filename, own_lines[-1]).strip()
    frames = [f for f in traceback.extract_tb(tb) if not graders(f.filename)]
    in_cells = [f for f in frames if NOTEBOOK_CELL.search(f.filename)]
    chosen = (in_cells or frames)[-1:]
    return chosen[0].line if chosen and chosen[0].line else ""
