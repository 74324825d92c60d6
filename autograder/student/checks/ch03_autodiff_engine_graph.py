"""The engine checks' private ops and graph builder: Scale, Plus, Times and Total with NumPy backwards, so
only the student's Tensor.backward is exercised; and the kernel side of the engine's rules (`rule_facts`:
zero_grad, no_grad, and the errors of backward), which only gathers what happened, as data.

NumPy only, no course imports: the judge ships this file as text to the kernel (as it ships `slow.py`),
so the course's check and the judge's probe build the very same graphs.
"""
import numpy as np


def probe_ops(Function, Tensor, handed=None):
    """Scale, Plus and Times: tiny ops with NumPy backwards, subclassing the notebook's Function. Plus
    hands both inputs the very same out_grad, as the course's Add does. `handed`, a list: each backward
    appends what it was given, [out_grad's dtype name, requires_grad, its output's dtype name, whether out_grad is
    the engine's (not a gradient one of these ops returned)] (the first 64)."""
    returned = set()                     # ids of the gradients these ops returned, kept alive in `kept`
    kept = []

    def tensor(x):
        t = Tensor(x, dtype=np.float64, requires_grad=False)
        returned.add(id(t))
        kept.append(t)
        return t

    def given(op, out_grad, node=None):
        """`out_grad` itself, once it is known to be a Tensor: the contract every op's backward relies on."""
        if not isinstance(out_grad, Tensor):
            kind = type(out_grad)
            kind = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
            raise TypeError(f"{op}.backward, one of the checker's ops, was given out_grad as a {kind}, not a "
                            "Tensor. Every backward "
                            "receives the gradient of its output as a Tensor, the very first one included: the "
                            "engine must hand Tensors along, whatever form .grad is stored in")
        if handed is not None and len(handed) < 64:
            handed.append([str(np.asarray(out_grad.data).dtype), getattr(out_grad, "requires_grad", None) is True,
                           str(np.asarray(getattr(node, "data", out_grad.data)).dtype), id(out_grad) not in returned])
        return out_grad

    class Scale(Function):
        def __init__(self, k):
            self.k = k

        def forward(self, a):
            return a * self.k

        def backward(self, out_grad, node):
            return tensor(given("Scale", out_grad, node).data * self.k)

    class Plus(Function):
        def forward(self, a, b):
            return a + b

        def backward(self, out_grad, node):
            return given("Plus", out_grad, node), out_grad

    class Times(Function):
        def forward(self, a, b):
            return a * b

        def backward(self, out_grad, node):
            a, b = node._inputs
            out_grad = given("Times", out_grad, node)
            return tensor(out_grad.data * b.data), tensor(out_grad.data * a.data)

    class Total(Function):
        """The sum of every element: the one-number loss a graph is reduced to before backward()."""

        def forward(self, a):
            return np.asarray(np.sum(a))

        def backward(self, out_grad, node):
            return tensor(np.ones(node._inputs[0].data.shape) * given("Total", out_grad, node).data)

    return Scale, Plus, Times, Total


class recording:
    """Function.grad_enabled on for the length of the block, then as it was: a `no_grad` that a student's
    cell left switched off must not cost the engine's other checks their graphs."""

    def __init__(self, Function):
        self.Function, self.saved = Function, Function.__dict__.get("grad_enabled", MISSING)

    def __enter__(self):
        if self.saved is not MISSING:
            self.Function.grad_enabled = True

    def __exit__(self, *exc):
        if self.saved is not MISSING:
            self.Function.grad_enabled = self.saved


MISSING = object()


def build(leaves, constants, ops, Tensor, Function, handed=None):
    """The tensors of a graph described as data (checks/ch03_autodiff_engine.Graph: leaves, constants, ops), made with
    the notebook's Tensor and the private ops (`handed`: see probe_ops)."""
    Scale, Plus, Times, Total = probe_ops(Function, Tensor, handed)
    constants = set(constants)
    nodes = [Tensor(np.asarray(v, dtype=np.float64), dtype=np.float64, requires_grad=i not in constants)
             for i, v in enumerate(leaves)]
    with recording(Function):
        for kind, *args in ops:
            if kind == "scale":
                nodes.append(Scale(args[0])(nodes[args[1]]))
            elif kind == "chain":
                y = nodes[args[1]]
                for k in args[0]:
                    y = Scale(float(k))(y)
                nodes.append(y)
            elif kind == "total":
                nodes.append(Total()(nodes[args[0]]))
            else:
                nodes.append({"plus": Plus, "times": Times}[kind]()(nodes[args[0]], nodes[args[1]]))
    return nodes


def ownership(grads):
    """Which of these .grad arrays are not a tensor's own: pairs (i, j) that share memory, and the indices of
    arrays nobody may write into (a broadcast's read-only view). Arrays only; anything else is the values' check."""
    arrays = [(i, g) for i, g in enumerate(grads) if isinstance(g, np.ndarray)]
    shared = [[i, j] for n, (i, a) in enumerate(arrays) for j, b in arrays[n + 1:] if np.shares_memory(a, b)]
    return {"shared": shared, "readonly": [i for i, g in arrays if not g.flags.writeable]}


# ── the engine's rules: what happened, as data (checks/ch03_autodiff_engine_rules.py decides) ──────────────────

def constant(Tensor, x):
    return Tensor(np.array(x, dtype=np.float64), dtype=np.float64, requires_grad=False)


def variable(Tensor, x):
    return Tensor(np.array(x, dtype=np.float64), dtype=np.float64, requires_grad=True)


def zero_grad_facts(inputs, Tensor, Function, no_grad, report, error):
    """x.grad set to an old gradient, then x.zero_grad(); and zero_grad() on a tensor with no gradient yet; and
    on a result y = Scale(k)(x), whether its graph (_op, _inputs) is still there after y.zero_grad().
    (backward() is not called: a broken engine costs the engine's own checks, not this one.)"""
    x, facts = variable(Tensor, inputs["x"]), {}
    Scale = probe_ops(Function, Tensor)[0]
    try:
        with recording(Function):
            y = Scale(inputs["k"])(variable(Tensor, inputs["x"]))
        y.grad = np.array(inputs["old"], dtype=np.float64)
        y.zero_grad()
        facts["graph"] = {"op": getattr(y, "_op", None) is not None,
                          "inputs": len(tuple(getattr(y, "_inputs", ()) or ()))}
        x.grad = np.array(inputs["old"], dtype=np.float64)
        x.zero_grad()
        facts["cleared"], facts["data"] = report(x.grad), report(x.data)
        fresh = variable(Tensor, inputs["x"])
        fresh.zero_grad()
        facts["fresh"] = report(fresh.grad)
    except Exception as raised:  # noqa: BLE001 (the student's error, reported)
        facts["error"] = error(raised)
    return facts


def no_grad_facts(inputs, Tensor, Function, no_grad, report, error):
    """Scale(k)(x) before, inside, after, inside a block nested in another, inside the outer block after the
    inner one ended, after both, and after an exception in a block:
    whether each output recorded a graph. Function.grad_enabled is put back as it was, whatever happens."""
    Scale = probe_ops(Function, Tensor)[0]
    x, facts = variable(Tensor, inputs["x"]), {}

    def made(stage):
        y = Scale(inputs["k"])(x)
        facts[stage] = {"requires_grad": bool(getattr(y, "requires_grad", False)),
                        "op": getattr(y, "_op", None) is not None,
                        "inputs": len(tuple(getattr(y, "_inputs", ()) or ())), "value": report(y.data)}

    class Raised(Exception):
        pass

    saved = Function.__dict__.get("grad_enabled", MISSING)
    try:
        made("before")
        with no_grad():
            made("inside")
        made("after")
        with no_grad():
            with no_grad():
                made("nested_inner")
            made("nested_inside")
        made("nested_after")
        try:
            with no_grad():
                raise Raised()
            facts["propagated"] = False
        except Raised:
            facts["propagated"] = True
        made("after_error")
    except Exception as raised:  # noqa: BLE001
        facts["error"] = error(raised)
    finally:
        if saved is not MISSING:
            Function.grad_enabled = saved
    return facts


def outcome(call, report, error, reported):
    """Run `call` (a backward() that should raise); report what it raised, and the tensors' .grad after."""
    facts = {}
    try:
        call()
        facts["raised"] = None
    except Exception as raised:  # noqa: BLE001
        facts["raised"] = error(raised)
        facts["runtime"] = isinstance(raised, RuntimeError) and not isinstance(raised, (NotImplementedError, RecursionError))
        facts["value"] = isinstance(raised, ValueError)
    facts["grads"] = [report(t.grad) for t in reported]
    return facts


def constant_facts(inputs, Tensor, Function, no_grad, report, error):
    """backward() on a constant leaf, on a constant with an explicit gradient, on a result of constants, and on a
    constant of several elements without a gradient (both errors' conditions hold: the constant's comes first);
    then on a one-element leaf that requires a gradient, which is no constant: it must get .grad = 1."""
    Scale = probe_ops(Function, Tensor)[0]
    c, wide, source, plain = (constant(Tensor, inputs[name]) for name in ("c", "wide", "c", "wide"))
    own = variable(Tensor, inputs["c"])
    with recording(Function):
        y = Scale(inputs["k"])(source)
    return {"leaf": outcome(lambda: c.backward(), report, error, [c]),
            "explicit": outcome(lambda: wide.backward(constant(Tensor, inputs["g"])), report, error, [wide]),
            "derived": outcome(lambda: y.backward(), report, error, [y, source]),
            "wide": outcome(lambda: plain.backward(), report, error, [plain]),
            "own_leaf": outcome(lambda: own.backward(), report, error, [own])}


def non_scalar_facts(inputs, Tensor, Function, no_grad, report, error):
    """backward() without a gradient on a result of several elements, on results of several elements along one
    axis only (shapes (1, n) and (n, 1)), and on one-element ones of shapes (), (1,) and (1, 1). (An explicit
    gradient is the explicit_grad check's: a mistake there costs that check only.)"""
    Scale = probe_ops(Function, Tensor)[0]
    x, ones = variable(Tensor, inputs["x"]), [variable(Tensor, s) for s in inputs["ones"]]
    lines = [variable(Tensor, v) for v in inputs["lines"]]
    with recording(Function):
        y, results = Scale(inputs["k"])(x), [Scale(inputs["k"])(s) for s in ones]
        along = [Scale(inputs["k"])(v) for v in lines]
    facts = {"implicit": outcome(lambda: y.backward(), report, error, [x]), "scalar": [],
             "lines": [outcome(z.backward, report, error, [v]) for v, z in zip(lines, along)]}
    for s, z in zip(ones, results):
        try:
            z.backward()
            facts["scalar"].append({"grad": report(s.grad)})
        except Exception as raised:  # noqa: BLE001
            facts["scalar"].append({"error": error(raised)})
    return facts


RULE_FACTS = {"zero_grad": zero_grad_facts, "no_grad": no_grad_facts, "constant_error": constant_facts,
              "non_scalar_error": non_scalar_facts}


def rule_facts(name, inputs, Tensor, Function, no_grad, report, error):
    """What the student's Tensor did under the rule `name`, as data: `report(value)` and `error(exception)`
    turn values and exceptions into the caller's form (the worker's JSON, or the course check's dicts)."""
    return RULE_FACTS[name](inputs, Tensor, Function, no_grad, report, error)
