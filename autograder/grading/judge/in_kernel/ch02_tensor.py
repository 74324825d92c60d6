"""Kernel side of chapter 2's probes: the Tensor constructor and the factories on the judge's values.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`packed`, `quietly`, `error_report`, `type_name`, and `shipped` for the course's stand-ins of
checks/ch02_tensor_facts.py) and, like it, imports nothing from the course and decides nothing: it reports a new tensor's fields (values as arrays; flags, None and () as facts only the kernel
can state) and whether a copy shares memory with its original.
"""
import numpy as np


def tensor_facts():
    """The course's stand-ins and field facts of chapter 2 (checks/ch02_tensor_facts.py), shipped as text."""
    return shipped("ch02_tensor_facts")


def tensor_data(data):
    if data is tensor_facts()["MISSING"]:
        return {"missing": True}
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return {"value": packed(data)}
    return {"type_name": type_name(data)}


@handles("tensor_constructor")
def tensor_constructor(request, namespace):
    """Tensor(data, **kwargs) for each case; `copy_of` cases build from a Tensor or an array of the values. The rest
    of the class is stood in meanwhile (its properties exist), as the course's check does."""
    with tensor_facts()["standins"](namespace["Tensor"], keep=("__init__",)):
        return constructed(request, namespace)


def constructed(request, namespace):
    Tensor, results, facts = namespace["Tensor"], [], tensor_facts()
    for case in request["cases"]:
        try:
            if case.get("copy_of") == "tensor":
                original = quietly(lambda: Tensor(case["data"], **case.get("original_kwargs", {})))
                made = quietly(Tensor, original)
                original = original.data
            elif case.get("copy_of") == "array":
                original = np.array(case["data"], dtype=np.float32)
                made = quietly(Tensor, original)
            else:
                made = quietly(lambda: Tensor(case["data"], **case["kwargs"]))
            fields = vars(made)
        except Exception as error:  # noqa: BLE001
            results.append({"error": error_report(error)})
            continue
        data = fields.get("data", facts["MISSING"])
        result = {"data": tensor_data(data),
                  "fields": {name: facts["field_facts"](fields.get(name, facts["MISSING"]))
                             for name in ("requires_grad", "grad", "_op", "_inputs")}}
        if case.get("copy_of"):
            result["shares"] = bool(isinstance(data, np.ndarray) and np.shares_memory(data, original))
        results.append(result)
    return {"results": results}


@handles("tensor_factories")
def tensor_factories(request, namespace):
    """Each factory call on the judge's shapes and seeds, with the Tensor class stood in: what it returned."""
    Tensor, results = namespace["Tensor"], []
    with tensor_facts()["standins"](Tensor):
        for name, shape, kwargs in request["calls"]:
            try:
                made = quietly(lambda: namespace[name](*shape, **kwargs))
            except Exception as error:  # noqa: BLE001
                results.append({"error": error_report(error)})
                continue
            if not isinstance(made, Tensor):
                results.append({"type_name": type_name(made), "is_tensor": False})
                continue
            flag = made.requires_grad
            results.append({"type_name": type_name(made), "is_tensor": True, "data": tensor_data(made.data),
                            "requires_grad": flag if isinstance(flag, bool) else repr(flag)[:60]})
    return {"results": results}


@handles("tensor_repr")
def tensor_repr(request, namespace):
    """repr(t) of the student's __repr__ (the rest of Tensor stood in) for each of the judge's tensors."""
    Tensor, results = namespace["Tensor"], []
    with tensor_facts()["standins"](Tensor, keep=("__repr__",)):
        for values, dtype, requires_grad, op in request["cases"]:
            try:
                t = Tensor(np.asarray(values), dtype=dtype, requires_grad=requires_grad)
                t._op = tensor_facts()["Mul"]() if op else None
                text = quietly(repr, t)
            except Exception as error:  # noqa: BLE001
                results.append({"error": error_report(error)})
                continue
            results.append({"text": str(text)[:2000]})
    return {"results": results}


def member_report(value):
    """A property's value as data: its type's name, and its value when it is an int, a dtype or a sequence of ints."""
    is_dtype = isinstance(value, np.dtype)
    reply = {"type_name": type_name(value), "repr": repr(value)[:100], "is_dtype": is_dtype,
             "method": callable(value) and not is_dtype}
    if is_dtype:
        reply["dtype"] = str(value)
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        reply["int"] = int(value)
    elif isinstance(value, (tuple, list)) and len(value) <= 32 and \
            all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        reply["ints"] = [int(v) for v in value]
    return reply


@handles("tensor_properties")
def tensor_properties(request, namespace):
    """shape, ndim, size and dtype of a tensor over the judge's array (the rest of Tensor stood in)."""
    Tensor = namespace["Tensor"]
    names = ("shape", "ndim", "size", "dtype")
    with tensor_facts()["standins"](Tensor, keep=names):
        t = Tensor(request["values"].copy(), dtype=request["dtype"])
        members = {}
        for name in names:
            try:
                members[name] = member_report(quietly(getattr, t, name))
            except Exception as error:  # noqa: BLE001
                return {"error": error_report(error), "name": name}
    return {"members": members}


@handles("tensor_conversions")
def tensor_conversions(request, namespace):
    """numpy(), item(), detach() and len() on the judge's tensors (the rest of Tensor stood in)."""
    Tensor, reply = namespace["Tensor"], {}
    with tensor_facts()["standins"](Tensor, keep=("numpy", "item", "detach", "__len__")):
        try:
            t = Tensor(request["numpy"].copy(), dtype=request["numpy_dtype"])
            got = quietly(t.numpy)
            before = {"value": packed(got)} if isinstance(got, np.ndarray) and got.dtype.kind in "biuf" else \
                {"type_name": type_name(got)}
            if isinstance(got, np.ndarray) and got.size and got.flags.writeable:
                got.flat[0] = request["sentinel"]
            reply["numpy"] = {"before": before, "after": packed(np.asarray(t.data))}
        except Exception as error:  # noqa: BLE001
            return dict(reply, numpy={"error": error_report(error)})
        reply["item"] = []
        for values in request["item"]:
            try:
                got = quietly(Tensor(np.asarray(values)).item)
            except Exception as error:  # noqa: BLE001
                return dict(reply, item=reply["item"] + [{"error": error_report(error)}])
            reply["item"].append({"type_name": type_name(got), "repr": repr(got)[:60],
                                  "value": got if type(got) is float else None})
        try:
            t = Tensor(request["detach"].copy(), dtype=request["detach_dtype"])
            t._op, t._inputs = object(), (Tensor(np.zeros(3)),)
            got = quietly(t.detach)
            if not isinstance(got, Tensor) or got is t:
                reply["detach"] = {"wrong": "t itself" if got is t else type_name(got)}
            else:
                reply["detach"] = {"data": tensor_data(got.data), "grad_off": got.requires_grad is False,
                                   "grad_repr": repr(got.requires_grad)[:60],
                                   "no_history": got._op is None and tuple(got._inputs) == ()}
        except Exception as error:  # noqa: BLE001
            return dict(reply, detach={"error": error_report(error)})
        try:
            count = quietly(len, Tensor(np.zeros(request["len"])))
            reply["len"] = count if isinstance(count, int) and not isinstance(count, bool) else repr(count)[:60]
        except Exception as error:  # noqa: BLE001
            reply["len"] = {"error": error_report(error)}
    return reply
