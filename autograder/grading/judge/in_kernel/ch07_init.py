"""Kernel side of chapter 7's probes: draw with the student's initializers on the judge's shapes and seeds.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`packed`, `quietly`, `error_report`, `type_name`, `shipped`) and, like it, imports nothing from the course and
decides nothing: it reports the weights as they came back. The training loop and accuracy run on the course's
stand-ins, as its checks run them, through `checks/ch07_init_facts.py` (shipped as text).
"""
import numpy as np


@handles("initializer")
def initializer(request, namespace):
    """fn(fan_in, fan_out, *setting, seed=s) for each of the judge's seeds: the weights' .data as they are."""
    Tensor, draws = namespace["Tensor"], []
    for seed in request["seeds"]:
        try:
            w = quietly(lambda: namespace[request["name"]](request["fan_in"], request["fan_out"],
                                                          *request["setting"], seed=seed))
            if isinstance(w, Tensor):
                draws.append({"is_tensor": True, "requires_grad": bool(w.requires_grad), "value": packed(w.data)})
            else:
                draws.append({"is_tensor": False, "type_name": type_name(w)})
        except Exception as error:  # noqa: BLE001
            draws.append(error_report(error))
    return {"draws": draws}


@handles("train_epoch")
def train_epoch(request, namespace):
    """train_epoch with train_step swapped for a recorder returning the judge's losses, with and without a bar:
    the calls counted, whether each got the batch's very objects in training mode, the result, the bar."""
    Tensor = namespace["Tensor"]
    batches = [(Tensor(x.copy(), requires_grad=False), Tensor(y.copy(), dtype=np.int64, requires_grad=False))
               for x, y in zip(request["images"], request["labels"])]
    facts = shipped("ch07_init_facts")
    try:
        ran = facts["train_epoch_run"](namespace, batches, list(request["losses"]), quietly)
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    result = ran["result"]
    values = [facts["as_float"](r) for r in result] if isinstance(result, list) else None
    return {"calls": ran["calls"], "right_arguments": ran["right_arguments"], "training": ran["training"],
            "result": packed(np.array(values, dtype=np.float64)) if values is not None and None not in values else None,
            "result_text": repr(result)[:200] if values is None or None in values else "",
            "updates": ran["updates"], "shown": ran["shown"]}


@handles("accuracy")
def accuracy(request, namespace):
    """accuracy() of a model whose predictions the judge knows (class 0 for a positive first input, else 1;
    noise in training mode) on the judge's batches: the value returned and whether it ran in training mode."""
    Tensor = namespace["Tensor"]
    loader = [(Tensor(x.copy(), requires_grad=False), Tensor(y.copy(), dtype=np.int64, requires_grad=False))
              for x, y in zip(request["images"], request["labels"])]
    try:
        result, trained = shipped("ch07_init_facts")["accuracy_run"](namespace, loader, quietly)
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    is_float = isinstance(result, (float, np.floating))
    return {"trained": trained, "type_name": type_name(result),
            "result": packed(np.float64(result)) if is_float else None}
