"""Kernel side of chapter 7's probes: draw with the student's initializers on the judge's shapes and seeds.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`npy`, `quietly`, `error_report`, `type_name`) and, like it, imports nothing from the course and
decides nothing: it reports the weights as they came back.
"""


def initializer(request, namespace):
    """fn(fan_in, fan_out, *setting, seed=s) for each of the judge's seeds: the weights' .data as they are."""
    Tensor, draws = namespace["Tensor"], []
    for seed in request["seeds"]:
        try:
            w = quietly(lambda: namespace[request["name"]](request["fan_in"], request["fan_out"],
                                                          *request["setting"], seed=seed))
            if isinstance(w, Tensor):
                draws.append({"is_tensor": True, "requires_grad": bool(w.requires_grad), "value": npy(w.data)})
            else:
                draws.append({"is_tensor": False, "type_name": type_name(w)})
        except Exception as error:  # noqa: BLE001
            draws.append(error_report(error))
    return {"draws": draws}
