"""Kernel side of chapter 1's probes: build the judge's `Value` expressions and report them as data.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`quietly`, `error_report`, `type_name`, `STUDENT_FAILURES`, `deepest_call`) and, like it, imports nothing from
the course and decides nothing: it reports numbers, type names, reprs, which of the judge's objects a `_prev`
holds, and how deep backward() nested its calls.
"""
import math
import operator


def scalar(value):
    """A number as JSON, or None: .data and .grad of a Value are Python numbers when right."""
    return value if isinstance(value, (int, float)) else None


@handles("value_graph")
def value_graph(request, namespace):
    """Each case (`a op b`, `a op k`, `k op a`, `c op c`, `a op f`) on fresh Values of the judge's numbers."""
    Value, fn = namespace["Value"], {"+": operator.add, "*": operator.mul}[request["symbol"]]
    results = []
    for left, right, inputs in request["cases"]:
        values = [Value(x) for x in inputs]
        before = [repr((v.data, v.grad)) for v in values]
        pick = {"a": values[0], "c": values[0], "b": values[-1]}
        try:
            out = quietly(fn, pick.get(left, left), pick.get(right, right))
        except STUDENT_FAILURES as error:
            results.append({"error": error_report(error)})
            continue
        if not isinstance(out, Value):
            results.append({"is_value": False, "type_name": type_name(out)})
            continue
        try:
            members = list(out._prev)
        except TypeError:
            members = None
        results.append({
            "is_value": True, "type_name": type_name(out), "is_input": any(out is v for v in values),
            "inputs_changed": [repr((v.data, v.grad)) for v in values] != before,
            "data": out.data if isinstance(out.data, float) else None, "data_repr": repr(out.data)[:100],
            "op": out._op[:100] if isinstance(out._op, str) else None, "op_repr": repr(out._op)[:100],
            "members": None if members is None else [member(m, Value, values) for m in members[:16]],
            "distinct": 0 if members is None else len(set(map(id, members))), "prev_repr": repr(out._prev)[:200]})
    return {"results": results}


def member(node, Value, values):
    for i, v in enumerate(values):
        if node is v:
            return ["input", i]
    if isinstance(node, Value):
        return ["value", node.data if isinstance(node.data, float) else None]
    return ["other", repr(node)[:100]]


@handles("value_closure")
def value_closure(request, namespace):
    """out = a op b (or a op a); a.grad, b.grad and out.grad set by the judge; out._backward() once."""
    Value, fn = namespace["Value"], {"+": operator.add, "*": operator.mul}[request["symbol"]]
    results = []
    for x, y, g, grad_a, grad_b in request["cases"]:
        a = Value(x)
        b = a if y is None else Value(y)
        try:
            out = quietly(fn, a, b)
        except Exception as error:  # noqa: BLE001
            results.append({"stage": "build", "error": error_report(error)})
            continue
        if not isinstance(out, Value):
            results.append({"stage": "type", "type_name": type_name(out)})
            continue
        if not callable(getattr(out, "_backward", None)):
            results.append({"stage": "closure", "shown": repr(getattr(out, "_backward", None))[:100]})
            continue
        a.grad, b.grad = grad_a, (grad_a if y is None else grad_b)
        out.grad = g
        try:
            quietly(out._backward)
        except Exception as error:  # noqa: BLE001
            results.append({"stage": "run", "error": error_report(error)})
            continue
        results.append({"stage": "done", "grads": [scalar(a.grad), scalar(b.grad)],
                        "shown": [repr(a.grad)[:60], repr(b.grad)[:60]]})
    return {"results": results}


@handles("value_engine")
def value_engine(request, namespace):
    """The judge's graph of Values whose _backward closures this file writes, then the student's backward()."""
    Value = namespace["Value"]
    nodes = [Value(x) for x in request["leaves"]]

    def wired(parents, local_grads, data, label):
        out = Value(data, tuple(parents), label)

        def _backward():
            for parent, local in zip(parents, local_grads):
                parent.grad += local * out.grad

        out._backward = _backward
        return out

    for kind, *args in request["ops"]:
        if kind == "scale":
            k, x = args[0], nodes[args[1]]
            nodes.append(wired([x], [k], x.data * k, f"×{k}"))
        elif kind == "times":
            x, y = nodes[args[0]], nodes[args[1]]
            nodes.append(wired([x, y], [y.data, x.data], x.data * y.data, "*"))
        else:
            x, y = nodes[args[0]], nodes[args[1]]
            nodes.append(wired([x, y], [1.0, 1.0], x.data + y.data, "+"))
    depth = 0
    for _ in range(request["calls"]):
        try:
            if request.get("depth"):
                depth = max(depth, deepest_call(quietly, nodes[-1].backward))
            else:
                quietly(nodes[-1].backward)
        except STUDENT_FAILURES as error:
            return {"error": error_report(error)}
    return {"grads": [scalar(nodes[i].grad) for i in request["report"]],
            "shown": [repr(nodes[i].grad)[:60] for i in request["report"]], "depth": depth}


@handles("numerical_gradient")
def numerical_gradient(request, namespace):
    """The student's numerical_gradient on the judge's functions (its own trusted expressions)."""
    results = []
    for case in request["cases"]:
        f = eval(f"lambda {case['params']}: {case['body']}", {"math": math})  # noqa: S307 (the judge's text)
        args, h = list(case["xs"]), case["h"]
        try:
            got = quietly(lambda: namespace["numerical_gradient"](f, args) if h is None
                          else namespace["numerical_gradient"](f, args, h=h))
        except Exception as error:  # noqa: BLE001
            results.append({"error": error_report(error)})
            continue
        try:
            values = [float(v) for v in got]
        except TypeError:
            values = type_name(got)
        results.append({"returned": values[:64] if isinstance(values, list) else values,
                        "count": len(values) if isinstance(values, list) else 0,
                        "args_after": [scalar(v) for v in args][:64], "args_count": len(args)})
    return {"results": results}
