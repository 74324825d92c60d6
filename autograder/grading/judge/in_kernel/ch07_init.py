"""Kernel side of chapter 7's probes: draw with the student's initializers on the judge's shapes and seeds.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`packed`, `quietly`, `error_report`, `type_name`) and, like it, imports nothing from the course and
decides nothing: it reports the weights as they came back.
"""


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


def recording_module(Module):
    class Probe(Module):
        """Records the mode it was in at each forward call."""

        def __init__(self):
            self.modes = []

        def forward(self, x):
            self.modes.append(self.training)
            return x

    return Probe


class RecordingBar:
    """Stands in for a tqdm bar: counts updates, keeps the last postfix."""

    def __init__(self):
        self.updates = 0
        self.postfix = {}

    def update(self, n=1):
        self.updates += n

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        self.postfix = dict(ordered_dict or {}, **kwargs)


def as_float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


@handles("train_epoch")
def train_epoch(request, namespace):
    """train_epoch with train_step swapped for a recorder returning the judge's losses, with and without a bar:
    the calls counted, whether each got the batch's very objects in training mode, the result, the bar."""
    Tensor = namespace["Tensor"]
    batches = [(Tensor(x.copy(), requires_grad=False), Tensor(y.copy(), dtype=np.int64, requires_grad=False))
               for x, y in zip(request["images"], request["labels"])]
    losses, calls = list(request["losses"]), []
    model, loss_fn, optimizer = recording_module(namespace["Module"])(), object(), object()

    def recording_train_step(m, lf, opt, x, y):
        calls.append((m, lf, opt, x, y, m.training))
        return losses[len(calls) - 1] if len(calls) <= len(losses) else float("nan")

    saved, bar = namespace.get("train_step"), RecordingBar()
    namespace["train_step"] = recording_train_step
    try:
        quietly(model.eval)
        result = quietly(namespace["train_epoch"], model, batches, loss_fn, optimizer, bar)
        counted = [len(calls)]
        right_arguments = all(m is model and lf is loss_fn and opt is optimizer and x is bx and y is by
                              for (m, lf, opt, x, y, _), (bx, by) in zip(calls, batches))
        training = all(mode for *_, mode in calls)
        calls.clear()
        quietly(namespace["train_epoch"], model, batches, loss_fn, optimizer)
        counted.append(len(calls))
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    finally:
        namespace["train_step"] = saved
    values = [as_float(r) for r in result] if isinstance(result, list) else None
    return {"calls": counted, "right_arguments": right_arguments, "training": training,
            "result": packed(np.array(values, dtype=np.float64)) if values is not None and None not in values else None,
            "result_text": repr(result)[:200] if values is None or None in values else "",
            "updates": bar.updates, "shown": as_float(bar.postfix.get("loss"))}


@handles("accuracy")
def accuracy(request, namespace):
    """accuracy() of a model whose predictions the judge knows (class 0 for a positive first input, else 1;
    noise in training mode) on the judge's batches: the value returned and whether it ran in training mode."""
    Tensor = namespace["Tensor"]

    class Scorer(recording_module(namespace["Module"])):
        def forward(self, x):
            super().forward(x)
            if self.training:
                return Tensor(np.random.default_rng(len(self.modes)).standard_normal((x.shape[0], 4)), requires_grad=False)
            first = x.data[:, 0]
            logits = np.zeros((x.shape[0], 4))
            logits[np.arange(len(first)), np.where(first > 0, 0, 1)] = 1.0
            return Tensor(logits, requires_grad=False)

    loader = [(Tensor(x.copy(), requires_grad=False), Tensor(y.copy(), dtype=np.int64, requires_grad=False))
              for x, y in zip(request["images"], request["labels"])]
    model = Scorer()
    try:
        result = quietly(namespace["accuracy"], model, loader)
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    is_float = isinstance(result, (float, np.floating))
    return {"trained": bool(model.modes and any(model.modes)), "type_name": type_name(result),
            "result": packed(np.float64(result)) if is_float else None}
