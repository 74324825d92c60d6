"""Facts a check gathers in the kernel, gathered the same way by the course's checks and the judge's worker: how
deeply a call nests Python calls, and which leaves a result's graph holds.

Standard library only, no course imports: the judge ships this file as text to the kernel (as it ships
`engine_graph.py`), so both sides count with the very same code.
"""
import sys


def deepest_call(fn, *args):
    """How deep fn(*args) nested Python calls below itself: about one frame per node for a recursive search of a
    graph, a few for a loop. A profile hook counts them, so a recursion limit the code raises for itself does not
    hide them (the judge's worker counts the same way)."""
    depth = deepest = 0

    def profile(frame, event, arg):
        nonlocal depth, deepest
        if event == "call":
            depth += 1
            deepest = max(deepest, depth)
        elif event == "return":
            depth -= 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(previous)
    return deepest


def stray_leaves(result, given):
    """How many leaves of `result`'s recorded graph require a gradient and are none of the `given` tensors."""
    stack, seen, stray = [result], set(), 0
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        inputs = tuple(getattr(node, "_inputs", ()) or ())
        if not inputs and getattr(node, "requires_grad", False) is True and not any(node is g for g in given):
            stray += 1
        stack.extend(inputs)
    return stray
