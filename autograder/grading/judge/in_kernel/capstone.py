# ── chapters 7, 9 and 10: the trained models, reported as data ──
# Shipped after worker.py (probes.WORKER_FILES), in the same scope: it uses packed, quietly, report, error_report.
# The kernel only says what the model is made of, or what it predicts for the judge's images; the judge
# computes the accuracy from the weights itself (judge/capstone.py).
import sys
import zlib

CAPSTONE_MODULE = "autograder.student.checks.capstone"     # its TRAINED slot holds the model check_capstone trained
MAX_DEPTH = 8                                       # Sequential inside Sequential, this deep at most
MAX_LAYERS = 200


def find_trained_model(where, namespace):
    """(found, model): a notebook global (chapter 7's `model`), or the model the capstone check trained."""
    if "global" in where:
        return where["global"] in namespace, namespace.get(where["global"])
    module = sys.modules.get(CAPSTONE_MODULE)           # already loaded by the notebook's checks, if they ran
    slot = getattr(module, "TRAINED", None)
    entry = slot.get(where["capstone"]) if isinstance(slot, dict) else None
    if not isinstance(entry, dict) or "model" not in entry:
        return False, None
    return True, entry["model"]


def layer_record(module, Tensor, budget, depth=0):
    """One module as data: its class name, its numbers (config), its arrays, and a Sequential's `modules`."""
    record = {"name": type(module).__name__, "config": {}, "arrays": {}, "skipped": {}, "none": []}
    for key, value in list(vars(module).items())[:64]:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating, type(None), Tensor,
                                                             np.ndarray, list, tuple)):
            continue
        if value is None:
            record["none"].append(key)
        elif isinstance(value, (int, float, np.integer, np.floating)):
            record["config"][key] = float(value) if isinstance(value, (float, np.floating)) else int(value)
        elif isinstance(value, (Tensor, np.ndarray)):
            array = np.asarray(value.data if isinstance(value, Tensor) else value)
            if array.dtype.kind not in "biuf" or array.size > budget["array"] or array.size > budget["left"]:
                record["skipped"][key] = [int(n) for n in array.shape]
            else:
                budget["left"] -= array.size
                record["arrays"][key] = packed(array)
        elif key == "modules" and depth < MAX_DEPTH:
            record["children"] = [layer_record(m, Tensor, budget, depth + 1) for m in list(value)[:MAX_LAYERS]]
    return record


@handles("model_walk")
def model_walk(request, namespace):
    """The trained model's layers, in call order, as data; {"found": False} when there is none."""
    found, model = find_trained_model(request["where"], namespace)
    if not found or model is None:
        return {"found": False}
    budget = {"array": request["max_array"], "left": request["max_total"]}
    try:
        return {"found": True, "model": quietly(layer_record, model, namespace["Tensor"], budget)}
    except Exception as error:  # noqa: BLE001
        return {"found": True, "error": error_report(error)}


@handles("model_predict")
def model_predict(request, namespace):
    """The model's predicted class for each of the judge's images, normalized here as the course does."""
    found, model = find_trained_model(request["where"], namespace)
    if not found or model is None:
        return {"found": False}
    Tensor = namespace["Tensor"]
    pixels = np.frombuffer(zlib.decompress(base64.b64decode(request["pixels"])), dtype=np.uint8)
    images = pixels.astype(np.float32)
    images *= np.float32(request["scale"])
    images -= np.float32(request["shift"])
    images = images.reshape([-1] + list(request["shape"]))
    predicted = []
    try:
        quietly(model.eval)
        for start in range(0, len(images), request["batch_size"]):
            logits = np.asarray(quietly(model, Tensor(images[start:start + request["batch_size"]], requires_grad=False)).data)
            if logits.ndim != 2 or logits.shape[0] != min(request["batch_size"], len(images) - start):
                return {"found": True, "logits_shape": [int(n) for n in logits.shape]}
            predicted.append(logits.argmax(axis=1))
    except Exception as error:  # noqa: BLE001
        return {"found": True, "error": error_report(error)}
    return {"found": True, "predicted": packed(np.concatenate(predicted).astype(np.int64))}


def leaf_modules(module, depth=0):
    """The model's leaf layers in call order, as layer_record lists them: a Sequential's `modules` looked through."""
    if type(module).__name__ != "Sequential" or depth >= MAX_DEPTH:
        return [module]
    return [leaf for child in list(getattr(module, "modules", []))[:MAX_LAYERS] for leaf in leaf_modules(child, depth + 1)]


@handles("model_gradient")
def model_gradient(request, namespace):
    """The gradients the student's library computes for the trained model's own parameters, at its trained
    weights, in eval mode, for the judge's images and upstream gradient of the logits; and the input of each
    leaf the judge asks for (`inputs_at`: ReLUs with an input near 0, whose branch the judge takes from here).
    The leaves run one after another, as the judge's forward walks them."""
    found, model = find_trained_model(request["where"], namespace)
    if not found or model is None:
        return {"found": False}
    Tensor = namespace["Tensor"]
    wanted, inputs = set(request.get("inputs_at", ())), {}
    try:
        leaves = quietly(leaf_modules, model)
        params = [getattr(leaves[index], key) for index, key in request["parameters"]]
        for p in params:
            p.grad = None
        quietly(model.eval)
        x = Tensor(request["images"], requires_grad=False)
        for index, layer in enumerate(leaves):
            if index in wanted:
                inputs[index] = np.array(x.data)
            x = quietly(layer, x)
        quietly(x.backward, Tensor(request["upstream"].astype(np.asarray(x.data).dtype), requires_grad=False))
    except Exception as error:  # noqa: BLE001
        return {"found": True, "error": error_report(error)}
    return {"found": True, "grads": [report(p.grad, Tensor) for p in params],
            "inputs": [report(inputs.get(index), Tensor) for index in sorted(wanted)]}


@handles("capstone_builds")
def capstone_builds(request, namespace):
    """The notebook's build function called twice, as data (as checks/capstone.model_pair_facts): whether the
    two calls returned one object, how many parameters they share, and which parameters' values differ."""
    build = namespace.get(request["build"])
    if not callable(build):
        return {"found": False}
    try:
        first, second = quietly(build), quietly(build)
        one = list(quietly(first.parameters))
        two = list(quietly(second.parameters)) if hasattr(second, "parameters") else []
    except Exception as error:  # noqa: BLE001
        return {"found": True, "error": error_report(error)}
    shared = len({id(p) for p in one} & {id(p) for p in two})
    if len(one) != len(two) or any(tuple(p.shape) != tuple(q.shape) for p, q in zip(one, two)):
        return {"found": True, "same": first is second, "shared": shared, "differ": None}
    differ = [[i, [int(n) for n in p.shape]] for i, (p, q) in enumerate(zip(one, two))
              if not np.array_equal(np.asarray(p.data), np.asarray(q.data))]
    return {"found": True, "same": first is second, "shared": shared, "differ": differ[:64]}
