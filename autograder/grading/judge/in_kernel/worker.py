"""Kernel side of a probe: run the student's code on the judge's inputs and report what came back.

This file is sent as text and run in the student's kernel (see `probes.probe_code`), so it imports
nothing from the course and decides nothing: the student can patch anything it calls, and the judge
trusts only numbers it can verify against its own computation on inputs chosen in secret.
"""
import base64
import contextlib
import json
import warnings

import numpy as np

MIME = "application/vnd.babygrad.probe+json"
PROGRESS_MIME = "application/vnd.babygrad.probe-progress+json"
PROBE_FILE = "<babygrad probe>"
# What the student's code may raise, reported as its answer: every exception, and SystemExit. Not
# KeyboardInterrupt: that is the grader interrupting a probe at the cell timeout, which must end the whole
# probe, not only the request it reached (the next request would run the same endless code again).
STUDENT_FAILURES = (Exception, SystemExit, GeneratorExit)
# request kind -> the function that answers it, registered by `@handles(kind)` where it is defined. This file is
# the first of the scope the judge ships (probes.WORKER_FILES), so every later file's handlers register here.
HANDLERS = {}


def handles(kind):
    """Make the decorated function the answer to requests of `kind`: `function(request, namespace) -> reply`."""
    def add(function):
        if kind in HANDLERS:
            raise ValueError(f"two handlers answer requests of kind {kind!r}: {HANDLERS[kind].__name__} and "
                             f"{function.__name__}")
        HANDLERS[kind] = function
        return function
    return add


def serve(request_json, namespace):
    """Answer a batch of requests with one display_data output of MIME; before each request in `marks` (the
    first of a grade cell's), say so with a PROGRESS_MIME output."""
    from IPython.display import publish_display_data
    replies = []
    batch = decode(json.loads(request_json))
    marks = set(batch.get("marks") or ())
    for index, request in enumerate(batch["requests"]):
        if index in marks:
            publish_display_data({PROGRESS_MIME: json.dumps({"started": index})})
        handler = HANDLERS[request["kind"]]
        try:
            replies.append(handler(request, namespace))
        except STUDENT_FAILURES as error:  # one broken request must not silence the others
            replies.append({"worker_error": f"{type(error).__name__}: {error}"})
    publish_display_data({MIME: json.dumps({"replies": replies})})


def decode(value, arrays=None):
    """A request as the judge encoded it (probes.encode): each array a fresh one, also where it repeats."""
    arrays = [] if arrays is None else arrays
    if isinstance(value, dict):
        if "__ndarray__" in value:
            dtype, shape, data = value["__ndarray__"].split(";", 2)
            shape = tuple(int(n) for n in shape.split(",")) if shape else ()
            arrays.append(np.frombuffer(base64.b64decode(data), dtype=np.dtype(dtype)).reshape(shape))
            return arrays[-1].copy()
        if "__again__" in value:
            return arrays[value["__again__"]].copy()
        if "__tuple__" in value:
            return tuple(decode(v, arrays) for v in value["__tuple__"])
        if "__slice__" in value:
            return slice(*value["__slice__"])
        return {k: decode(v, arrays) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v, arrays) for v in value]
    return value


def packed(array):
    """An array as `dtype;shape;base64 bytes` (probes.pack, read by probes.decode_array): no pickle, no
    header for the reader to parse as Python."""
    array = np.asarray(array, order="C")
    return f"{array.dtype.str};{','.join(map(str, array.shape))};{base64.b64encode(array.tobytes()).decode('ascii')}"


def quietly(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def error_report(error, own=None):
    """A student's exception as data: `line` is the line of `own` (the function under test) that was running,
    else the deepest line in a notebook cell (the student's own code), else the deepest line outside the
    probe, by the course's own student_line (checks/running.py); `own` also lets a NotImplementedError raised by
    code it calls name that code (`helper`), as the course's describe_exception does."""
    running = shipped("running")
    line = running["student_line"](error.__traceback__, own, lambda filename: filename == PROBE_FILE)
    report = {"kind": "error", "error_type": type(error).__name__, "message": str(error)[:1000], "line": line}
    if isinstance(error, NotImplementedError):
        report["helper"] = running["raised_elsewhere"](error, own)
    return report


def own_method(namespace, spec, name):
    """The function behind `name` (forward, backward) of the op class the request names, or None."""
    return getattr(namespace.get(spec["name"]), name, None)


def type_name(value):
    """How a message names a value's type, by the course's own describe.type_name (`numpy.ndarray`, `Tensor (from
    earlier_chapters)`)."""
    return shipped("describe")["type_name"](value)


def report(value, Tensor, depth=0):
    """A returned value as data: arrays and Tensors by value, anything else by its type's name."""
    try:
        if value is None:
            return {"kind": "none"}
        if isinstance(value, Tensor) and np.asarray(value.data).dtype.kind == "O":
            return {"kind": "other", "type_name": f"{type_name(value)} of objects"}
        if isinstance(value, Tensor):
            return {"kind": "tensor", "value": packed(np.asarray(value.data)), "type_name": type_name(value)}
        if isinstance(value, (np.ndarray, np.generic)) and np.asarray(value).dtype.kind == "O":
            return {"kind": "other", "type_name": f"{type_name(value)} of objects"}     # no numbers to send
        if isinstance(value, (np.ndarray, np.generic)):
            return {"kind": "array", "value": packed(np.asarray(value)), "type_name": type_name(value)}
        if isinstance(value, (tuple, list)) and depth == 0:
            return {"kind": "sequence", "items": [report(v, Tensor, 1) for v in list(value)[:16]],
                    "type_name": type_name(value)}
        return {"kind": "other", "type_name": type_name(value)}
    except Exception as error:  # noqa: BLE001 (a value that cannot be reported is the student's error)
        return error_report(error)


def deepest_call(fn, *args):
    """How deep fn(*args) nested Python calls, counted as the course's checks count it (checks/kernel_facts.py)."""
    return shipped("kernel_facts")["deepest_call"](fn, *args)


def laid_out(array, layout):
    """A copy of `array` in the memory order `layout`, by the course's own checks/kernel_facts.laid_out."""
    return shipped("kernel_facts")["laid_out"](array, layout)


def make_op(namespace, spec):
    return namespace[spec["name"]](*spec["args"], **spec["kwargs"])


@handles("forward")
def forward(request, namespace):
    """op.forward on each of the judge's inputs, with the course's chapter-3 ops but `keep` meanwhile; `after`:
    for each call, each input array as forward left it, or None where it is untouched; `shares`: for each call,
    whether the output shares memory with each input (a view of it)."""
    results, after, shares = [], [], []
    with course_ops(namespace, request.get("keep") or ()):
        own = own_method(namespace, request["op"], "forward")
        for arrays in request["inputs"]:
            given, result = [laid_out(a, request.get("layout")) for a in arrays], None
            try:
                op = make_op(namespace, request["op"])
                result = quietly(op.forward, *given)
                results.append(report(result, namespace["Tensor"]))
            except Exception as error:  # noqa: BLE001
                results.append(error_report(error, own))
            after.append([None if untouched(g, a) else report(g, namespace["Tensor"]) for g, a in zip(given, arrays)])
            shares.append([bool(isinstance(result, np.ndarray) and np.may_share_memory(result, g)) for g in given])
    return {"results": results, "after": after, "shares": shares}


@handles("backward")
def backward(request, namespace):
    """`backward_of`, with the course's chapter-3 ops and operators (all but `keep`, the op under test) and the
    stand-ins the request names (`isolated`) in the notebook's place meanwhile, as the course's check does."""
    with course_ops(namespace, request.get("keep") or ()), isolated(namespace, request.get("isolate") or {}):
        return backward_of(request, namespace)


def untouched(data, sent):
    """True when backward left this argument's data as the judge sent it: only a changed one is reported."""
    return isinstance(data, np.ndarray) and data.shape == np.shape(sent) and bool(np.all(data == sent))


def backward_of(request, namespace):
    """op.forward on the judge's inputs, then op.backward on a node built by hand (as the course's check
    builds it) for an all-ones and a random out_grad, then op.forward on the perturbed inputs (unless the
    request sends no `step`).

    The random out_grad is the start of the judge's `pool`, or `upstreams` when the judge sends them.
    """
    Tensor, arrays, layout = namespace["Tensor"], request["arrays"], request.get("layout")
    own_forward, own_backward = (own_method(namespace, request["op"], name) for name in ("forward", "backward"))
    out = request.get("out")
    if out is None:
        try:
            first = quietly(make_op(namespace, request["op"]).forward, *[laid_out(a, layout) for a in arrays])
        except Exception as error:  # noqa: BLE001
            return {"forward": error_report(error, own_forward)}
        reply = {"forward": report(first, Tensor)}
        if not isinstance(first, (np.ndarray, np.generic)):
            return reply
        out = np.asarray(first, dtype=np.float64)
        pool = request["pool"]
        if not np.all(np.isfinite(out)) or out.size > pool.size:
            return reply
        upstreams = [np.ones(out.shape), pool[:out.size].reshape(out.shape)]
    else:
        reply, upstreams = {}, request["upstreams"]
    grads, after, changed, grads_set = [], [], [], []
    try:
        op = make_op(namespace, request["op"])      # one op for every call, as a graph walked twice calls it
        if request.get("others") is not None:       # its forward on these inputs, then on others, before backward
            for inputs in (arrays, request["others"]):
                quietly(op.forward, *[laid_out(a, layout) for a in inputs])
    except Exception as error:  # noqa: BLE001
        return dict(reply, grads=[error_report(error, own_backward)] * len(upstreams), after=[[]] * len(upstreams),
                    changed=[[]] * len(upstreams), grads_set=[[]] * len(upstreams))
    settings = op_attributes(op)
    for upstream in upstreams:
        try:
            constant = request.get("constant") or ()          # inputs that require no gradient (a batch of data)
            inputs = tuple(Tensor(a.copy(), dtype=np.float64, requires_grad=i not in constant)
                           for i, a in enumerate(arrays))
            for tensor, a in zip(inputs, arrays):
                tensor.data = laid_out(a, layout)
            node = Tensor(out.copy(), dtype=np.float64, requires_grad=True)
            node._op, node._inputs = op, inputs
            out_grad = Tensor(upstream.copy(), dtype=np.float64, requires_grad=False)
            grads.append(report(quietly(op.backward, out_grad, node), Tensor))
            grads_set.append([getattr(t, "grad", None) is not None for t in (*inputs, node)])
            sent = (upstream, *arrays, out)
            after.append([None if untouched(t.data, a) else report(t.data, Tensor)
                          for t, a in zip((out_grad, *inputs, node), sent)])
        except Exception as error:  # noqa: BLE001
            grads.append(error_report(error, own_backward))
            after.append([])
            grads_set.append([])
        changed.append(changed_attributes(settings, op_attributes(op)))
    if request.get("step") is None:             # the judge takes no finite differences (MaxPool's ties)
        return dict(reply, grads=grads, after=after, changed=changed, grads_set=grads_set)
    try:
        op = make_op(namespace, request["op"])
        step, values = request["step"], []
        for i, x in enumerate(arrays):
            for index in np.ndindex(x.shape):
                for sign in (1.0, -1.0):
                    moved = [a.copy() for a in arrays]
                    moved[i][index] = x[index] + sign * step
                    values.append(np.asarray(quietly(op.forward, *moved), dtype=np.float64))
        perturbed = {"kind": "array", "value": packed(np.stack(values) if values else np.zeros((0,) + out.shape))}
    except Exception as error:  # noqa: BLE001
        perturbed = error_report(error, own_forward)
    return dict(reply, grads=grads, after=after, changed=changed, grads_set=grads_set, perturbed=perturbed)


def op_attributes(op):
    """{attribute: its repr} of an op instance, as the course's check takes them (checks/kernel_facts.py)."""
    return shipped("kernel_facts")["op_attributes"](op)


def changed_attributes(before, after):
    """[(attribute, repr before, repr after)] a backward call changed (checks/kernel_facts.py)."""
    return shipped("kernel_facts")["changed_attributes"](before, after)


@handles("engine")
def engine(request, namespace):
    """Build the judge's graph from private ops, run the student's Tensor.backward, report the grads."""
    Tensor = namespace["Tensor"]
    graph = request["graph"]
    try:
        handed = []                             # what each private op's backward was given (engine_graph.probe_ops)
        nodes = shipped("engine_graph")["build"](graph["leaves"], graph.get("constants", []), graph["ops"],
                                                 Tensor, namespace["Function"], handed)
    except Exception as error:  # noqa: BLE001
        return {"built": False, "error": error_report(error)}
    plain = set(graph.get("plain", []))         # calls whose gradient is passed as a NumPy array
    depth = 0                                   # how deep backward() nests its calls, when the graph asks
    for index, (node_index, grad) in enumerate(graph["calls"]):
        args = () if grad is None else (np.array(grad, dtype=np.float64),) if index in plain else \
            (Tensor(grad, dtype=nodes[node_index].data.dtype, requires_grad=False),)   # a Tensor: the output's dtype
        try:
            if graph.get("depth"):
                depth = max(depth, deepest_call(quietly, nodes[node_index].backward, *args))
            else:
                quietly(nodes[node_index].backward, *args)
        except STUDENT_FAILURES as error:
            return {"built": True, "error": error_report(error)}
    grads = [nodes[i].grad for i in graph["report"]]
    own = shipped("engine_graph")["ownership"](grads) if graph.get("own") else None
    return {"built": True, "grads": [report(g, Tensor) for g in grads], "depth": depth, "own": own, "handed": handed}


@handles("engine_rule")
def engine_rule(request, namespace):
    """Run one of the engine's rules (zero_grad, no_grad, backward's errors) on the judge's inputs: the shipped
    engine_graph.rule_facts reports what the student's code did, as data."""
    Tensor = namespace["Tensor"]
    facts = quietly(shipped("engine_graph")["rule_facts"], request["rule"], request["inputs"], Tensor,
                    namespace["Function"], namespace.get("no_grad"), lambda value: report(value, Tensor), error_report)
    return {"facts": facts}


def reaches(result, leaf):
    """Whether `leaf` is among the ancestors of `result`'s graph (checks/kernel_facts.py)."""
    return shipped("kernel_facts")["reaches"](result, leaf)


def stray_leaves(result, given):
    """How many leaves of result's graph require a gradient and are none of `given` (checks/kernel_facts.py)."""
    return shipped("kernel_facts")["stray_leaves"](result, given)


@handles("operators")
def operators(request, namespace):
    """Each operator expression on the judge's arrays, with the op classes swapped for the course's own: the facts of
    the course's operators check (checks/ch03_autodiff_course_ops.operator_results), as data."""
    Tensor = namespace["Tensor"]

    def told(facts):
        result, tensors = facts["result"], facts["tensors"]
        if facts["error"] is not None:
            return {"returned": error_report(facts["error"]), "standin": False, "reaches": False}
        return {"returned": report(result, Tensor), "standin": facts["standin"],
                "reaches": reaches(result, tensors[0]), "stray": stray_leaves(result, tensors)}

    return {"results": shipped("course_ops")["operator_results"](
        namespace, request["cases"], [request[k] for k in ("a", "b", "m")], quietly, told)}


@handles("indexing")
def indexing(request, namespace):
    """x[index] on the judge's array through the notebook's Tensor.__getitem__ and GetItem, the other ops and
    operators the course's meanwhile (checks/ch03_autodiff_indexing.py)."""
    Tensor = namespace["Tensor"]
    with course_ops(namespace, ["GetItem", "__getitem__"]):
        x = Tensor(request["x"].copy(), dtype=np.float64, requires_grad=True)
        try:
            result = quietly(lambda: x[request["index"]])
        except Exception as error:  # noqa: BLE001
            return {"returned": error_report(error), "getitem": False, "reaches": False}
    GetItem = namespace.get("GetItem")
    return {"returned": report(result, Tensor),
            "getitem": isinstance(GetItem, type) and isinstance(getattr(result, "_op", None), GetItem),
            "reaches": reaches(result, x)}


MISSING = object()


def attribute(module, name, namespace):
    """One attribute of a module as data; `parameter` says whether it is a Parameter (for messages only)."""
    value = getattr(module, name, MISSING)
    if value is MISSING:
        return {"missing": True}
    Parameter = namespace.get("Parameter")
    return {"value": report(value, namespace["Tensor"]),
            "parameter": isinstance(Parameter, type) and isinstance(value, Parameter),
            "requires_grad": isinstance(value, namespace["Tensor"]) and getattr(value, "requires_grad", False) is True}


def argument(extra, Tensor):
    """An extra forward argument (a target, labels): a float64 constant Tensor, a default Tensor, or the array."""
    value = extra["value"].copy()
    if extra["as"] == "tensor64":
        return Tensor(value, dtype=np.float64, requires_grad=False)
    return Tensor(value, requires_grad=False) if extra["as"] == "tensor" else value


def run_forward(module, call, namespace):
    """module.forward on a fresh float64 Tensor x, then backward with the judge's out_grad if any."""
    Tensor = namespace["Tensor"]
    indices = bool(call.get("indices"))     # Embedding: x is an integer array, passed as it is and given no gradient
    try:
        x = call["x"].copy() if indices else Tensor(call["x"].copy(), dtype=np.float64, requires_grad=True)
        params = [getattr(module, name) for name in call.get("params", ())]
        for p in params:
            p.grad = None
        out = quietly(module.forward, x, *[argument(e, Tensor) for e in call.get("extras", ())])
    except Exception as error:  # noqa: BLE001
        return {"output": error_report(error)}
    reply = {"output": report(out, Tensor)}
    if isinstance(out, Tensor):
        reply["stray"] = stray_leaves(out, ([] if indices else [x]) + params)
    if call.get("upstream") is None or not isinstance(out, Tensor):
        return reply
    try:
        quietly(out.backward, Tensor(call["upstream"].copy(), dtype=np.float64, requires_grad=False))
    except Exception as error:  # noqa: BLE001
        return dict(reply, backward=error_report(error))
    return dict(reply, grads=[report(t.grad, Tensor) for t in ([] if indices else [x]) + params])


@handles("layer")
def layer(request, namespace):
    """Build modules from class names, then run the judge's steps in order: set `training`, give parameters
    the judge's values, run forward (and backward) on the judge's arrays, report attributes after the step."""
    Tensor, modules, replies = namespace["Tensor"], [], []
    for spec in request["modules"]:
        try:
            modules.append(quietly(make_op, namespace, spec))
        except Exception as error:  # noqa: BLE001
            modules.append(error_report(error))
    saved = {name: namespace.get(name) for name in ("LogSumExp", "logsumexp")}
    if request.get("standin_logsumexp"):
        namespace.update(shipped("ch04_nn_facts")["logsumexp_standin"](namespace["Function"], Tensor))
    try:
        for step in request["steps"]:
            module = modules[step["module"]]
            if isinstance(module, dict):
                replies.append({"built": module})
                continue
            reply = {}
            try:
                if step.get("training") is not None:
                    module.training = step["training"]
                for name, value in step.get("set", {}).items():
                    p = getattr(module, name)
                    p.data = np.asarray(value, dtype=p.data.dtype)
            except Exception as error:  # noqa: BLE001
                reply["set"] = error_report(error)
            if step.get("forward") and "set" not in reply:
                reply.update(run_forward(module, step["forward"], namespace))
            reply["attributes"] = {name: attribute(module, name, namespace) for name in step.get("report", ())}
            replies.append(reply)
    finally:
        for name, value in saved.items():
            if value is None:
                namespace.pop(name, None)
            else:
                namespace[name] = value
    return {"steps": replies}


# ── chapter 10: stand-ins built from the course's slow loops, and the layers ──

SHIPPED_SOURCES = {}   # name -> the text of a NumPy-only course file (probes.SHIPPED), set after these files
_SHIPPED = {}


def shipped(name):
    """A course file shipped as text (probes.SHIPPED: slow.py's forwards, ch03_autodiff_course_ops.py, running.py,
    ...), compiled once per kernel."""
    if name not in _SHIPPED:
        scope = {}
        exec(compile(SHIPPED_SOURCES[name], PROBE_FILE, "exec"), scope)
        _SHIPPED[name] = scope
    return _SHIPPED[name]


@contextlib.contextmanager
def course_ops(namespace, keep):
    """The notebook's chapter-3 ops but `keep`, and the Tensor operators, as the course's (course_ops.swapped)."""
    with shipped("course_ops")["swapped"](namespace, keep):
        yield


@contextlib.contextmanager
def isolated(namespace, standins):
    """The notebook's ops {class name: slow forward's name} replaced by forward-only stand-ins, then restored
    (checks/ch03_autodiff_course_ops.stood_in, as chapter 10's check swaps them)."""
    slow = shipped("slow") if standins else {}
    with shipped("course_ops")["stood_in"](namespace, {name: slow[fn] for name, fn in standins.items()}):
        yield


def parameter_report(value, Parameter, Tensor):
    return {"type_name": type(value).__name__, "is_parameter": isinstance(value, Parameter),
            "value": report(value, Tensor)}


@handles("conv2d")
def conv2d(request, namespace):
    """Build Conv2d twice with the same seed, set the bias to the judge's, run it on the judge's x with a
    stand-in Conv; report both weights, the bias, the output, and whether the graph reaches the parameters."""
    Tensor, Parameter = namespace["Tensor"], namespace["Parameter"]
    layers = []
    for _ in range(2):
        try:
            layers.append(quietly(lambda: namespace["Conv2d"](*request["args"], **request["kwargs"])))
        except Exception as error:  # noqa: BLE001
            layers.append(error)
    layer, again = layers
    if isinstance(layer, Exception):
        return {"built": error_report(layer)}
    weight, bias = getattr(layer, "weight", None), getattr(layer, "bias", None)
    reply = {"built": {"kind": "none"}, "weight": parameter_report(weight, Parameter, Tensor),
             "bias": parameter_report(bias, Parameter, Tensor),
             "again": error_report(again) if isinstance(again, Exception)
             else report(getattr(getattr(again, "weight", None), "data", None), Tensor)}
    try:
        bias.data = np.asarray(request["bias"], dtype=bias.data.dtype)
        x = Tensor(request["x"].copy(), dtype=np.float64, requires_grad=False)
        with isolated(namespace, request["standins"]):
            out = quietly(layer, x)
    except Exception as error:  # noqa: BLE001
        return dict(reply, out=error_report(error))
    try:
        plain = quietly(lambda: namespace["Conv2d"](*request["args"], **dict(request["kwargs"], bias=False)))
        no_bias = {"type_name": "None" if getattr(plain, "bias", "missing") is None
                   else type(getattr(plain, "bias", None)).__name__}
    except Exception as error:  # noqa: BLE001
        no_bias = {"error": error_report(error)}
    draw = None
    try:
        fan_in = request["args"][0] * request["args"][2] ** 2
        drawn = quietly(lambda: namespace["kaiming_uniform"](fan_in, request["args"][1], seed=request["kwargs"]["seed"]))
        draw = report(getattr(drawn, "data", drawn), Tensor)
    except Exception:  # noqa: BLE001 (no draw to compare with: the judge judges the weights by their scale)
        pass
    return dict(reply, out=report(out, Tensor), reaches=[reaches(out, weight), reaches(out, bias)], no_bias=no_bias,
                draw=draw, bias_backward=conv2d_bias_backward(layer, x, request, namespace))


def conv2d_bias_backward(layer, x, request, namespace):
    """The layer on x again with its weight held still, then backward from the output with the judge's upstream:
    what it raised, .bias.grad, the shapes of the output's operands (checks/ch10_conv_facts.bias_backward_facts)."""
    Tensor = namespace["Tensor"]
    error, grad, operands = shipped("ch10_conv_facts")["bias_backward_facts"](
        Tensor, layer, x, request["upstream"], quietly, lambda: isolated(namespace, request["standins"]))
    if error is not None:
        return {"error": f"{type(error).__name__}: {str(error)[:300]}", "operands": operands}
    return {"error": "", "grad": report(grad, Tensor), "operands": operands}


@handles("max_pool2d")
def max_pool2d(request, namespace):
    """Build MaxPool2d, count its parameters, run it on the judge's x with a stand-in MaxPool."""
    Tensor = namespace["Tensor"]
    try:
        layer = quietly(namespace["MaxPool2d"], request["kernel_size"])
    except Exception as error:  # noqa: BLE001
        return {"built": error_report(error)}
    try:
        parameters = len(list(quietly(layer.parameters)))
        x = Tensor(request["x"].copy(), dtype=np.float64, requires_grad=True)
        with isolated(namespace, request["standins"]):
            out = quietly(layer, x)
    except Exception as error:  # noqa: BLE001
        return {"built": {"kind": "none"}, "out": error_report(error)}
    return {"built": {"kind": "none"}, "parameters": parameters, "out": report(out, Tensor), "reaches": reaches(out, x)}
