"""Kernel side of chapter 6's probes: datasets, loaders, transforms and IDX files on the judge's data.

Shipped after `worker.py` into the same scope (`probes.WORKER_FILES`), so it uses that file's helpers
(`packed`, `quietly`, `error_report`, `report`, `type_name`, `shipped`) and, like it, imports nothing from the course
and decides nothing: it reports what the student's classes returned (arrays, lengths, type names,
the errors raised). The judge's IDX files arrive as bytes and are written to a temporary folder of
the kernel's own sandbox for the length of the request.
"""
import contextlib
import itertools
import os
import pathlib
import tempfile

import numpy as np

MAX_CALLS = 2000            # outputs of one transform run; the judge asks for at most 1,500


class JudgeDataset:
    """Sample i is (images[i], labels[i]) of the judge's secret arrays, as ProbeDataset's types are."""

    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        if not 0 <= index < len(self.labels):
            raise IndexError(f"dataset index {index} out of range 0..{len(self.labels) - 1}")
        return self.images[index].copy(), np.int64(self.labels[index])


def length_report(value):
    """len() as JSON: an int, or a description of anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) else {"shown": repr(value)[:60]}


def item_values(value, Tensor, depth=0):
    """A dataset item as data: a tuple's values, and numbers (Python's too) as arrays, with their types' names."""
    if isinstance(value, tuple) and depth == 0:
        return {"kind": "sequence", "type_name": "tuple", "items": [item_values(v, Tensor, 1) for v in value[:16]]}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"kind": "array", "value": packed(np.asarray(value)), "type_name": type_name(value)}
    return report(value, Tensor, 1)


@handles("array_dataset")
def array_dataset(request, namespace):
    """ArrayDataset(x, y): len, [item], ArrayDataset(x)[single], and what ArrayDataset(x, y[:-1]) raised; then
    ArrayDataset(x, y, z)[item] and what ArrayDataset(x, y, z[:-1]) raised."""
    Tensor, ArrayDataset = namespace["Tensor"], namespace["ArrayDataset"]
    x, y = request["x"], request["y"]
    try:
        ds = quietly(ArrayDataset, x.copy(), y.copy())
        n = quietly(len, ds)
        sample = quietly(ds.__getitem__, request["item"])
        one = quietly(quietly(ArrayDataset, x.copy()).__getitem__, request["single"])
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}
    reply = {"n": length_report(n), "sample": item_values(sample, Tensor), "one": item_values(one, Tensor),
             "mismatch": refusal(ArrayDataset, x.copy(), y[:-1].copy())}
    z = request["z"]
    try:
        reply["triple"] = item_values(quietly(quietly(ArrayDataset, x.copy(), y.copy(), z.copy()).__getitem__,
                                              request["item"]), Tensor)
    except Exception as error:  # noqa: BLE001
        reply["triple_error"] = error_report(error)
        return reply
    reply["mismatch3"] = refusal(ArrayDataset, x.copy(), y.copy(), z[:-1].copy())
    return reply


def refusal(ArrayDataset, *arrays):
    """What ArrayDataset(*arrays) raised, as data; None when it was accepted."""
    try:
        quietly(ArrayDataset, *arrays)
    except Exception as error:  # noqa: BLE001
        return {"error_type": type(error).__name__, "value_error": isinstance(error, ValueError)}
    return None


def field_report(value, Tensor):
    if not isinstance(value, Tensor):
        return {"tensor": False, "type_name": type_name(value)}
    return {"tensor": True, "type_name": type_name(value), "requires_grad": bool(value.requires_grad),
            "data": packed(np.asarray(value.data))}


def batch_report(batch, Tensor):
    """A batch as data: its two fields, or the name of what came instead of a pair."""
    try:
        if not isinstance(batch, (tuple, list)) or len(batch) != 2:
            return {"type_name": type_name(batch)}
        return {"fields": [field_report(value, Tensor) for value in batch]}
    except Exception as error:  # noqa: BLE001
        return {"error": error_report(error)}


def epoch_report(loader, limit, Tensor):
    """One pass over the loader, at most `limit` batches (a loader that never stops shows as too many)."""
    return [batch_report(b, Tensor) for b in quietly(lambda: list(itertools.islice(iter(loader), limit)))]


def shortcut_dataset(images, labels, namespace):
    """`(images, labels) -> the student's ArrayDataset` over them, the labels a list as in the chapter's example;
    None when it does not hold exactly the judge's samples (then the loader's shortcut for it is not probed)."""
    ArrayDataset = namespace.get("ArrayDataset")

    def made(images, labels):
        return ArrayDataset(images.copy(), [int(label) for label in labels])
    try:
        usable = shipped("kernel_facts")["holds_samples"](quietly(made, images, labels), images, labels, quietly)
    except Exception:  # noqa: BLE001
        usable = False
    return made if usable else None


@handles("data_loader")
def data_loader(request, namespace):
    """DataLoader over the judge's dataset: each case's batches and len(); `shuffle` runs several epochs
    of loaders seeded by the judge. With `shortcut`, over the student's ArrayDataset instead, or
    {"unusable": true} when there is none that holds the judge's samples."""
    Tensor, DataLoader = namespace["Tensor"], namespace["DataLoader"]
    images, labels = request["images"], request["labels"]
    dataset = JudgeDataset
    if request.get("shortcut"):
        dataset = shortcut_dataset(images, labels, namespace)
        if dataset is None:
            return {"unusable": True}
    if request["shuffle"]:
        n, size, (seed, other) = len(labels), request["size"], request["seeds"]

        def loader(seed, drop_last=False):
            return quietly(lambda: DataLoader(dataset(images, labels), batch_size=size, shuffle=True,
                                              seed=seed, drop_last=drop_last))

        def epochs(seed, count, drop_last=False):
            made = loader(seed, drop_last)
            return [epoch_report(made, n + 2, Tensor) for _ in range(count)]

        def in_turns(seed):         # two loaders of one seed, both made first, then read in turns: A1, B1, A2, B2
            made = [loader(seed), loader(seed)]
            return [epoch_report(one, n + 2, Tensor) for _ in range(2) for one in made]
        try:
            return {"epochs": [*epochs(seed, 3), *epochs(seed, 2), *epochs(other, 1), *epochs(seed, 1, True),
                               *in_turns(seed), *epochs(0, 1), *epochs(0, 1)]}
        except Exception as error:  # noqa: BLE001
            return {"error": error_report(error)}
    runs = []
    for n, size, drop_last in request["cases"]:
        try:
            made = quietly(lambda: DataLoader(dataset(images[:n], labels[:n]), batch_size=size, drop_last=drop_last))
            batches = epoch_report(made, n + 2, Tensor)
            runs.append({"batches": batches, "count": length_report(quietly(len, made))})
        except Exception as error:  # noqa: BLE001
            runs.append({"error": error_report(error)})
            break
    reply = {"runs": runs}
    if request.get("one_field") and not request.get("shortcut"):
        n, size = request["one_field"]
        try:
            made = quietly(lambda: DataLoader(OneFieldDataset(images[:n]), batch_size=size))
            reply["one_field"] = {"batches": [fields_report(b, Tensor) for b in
                                              quietly(lambda: list(itertools.islice(iter(made), n + 2)))]}
        except Exception as error:  # noqa: BLE001
            reply["one_field"] = {"error": error_report(error)}
    return reply


class OneFieldDataset:
    """Sample i is (images[i],): unlabelled data, one field per sample."""

    def __init__(self, images):
        self.images = images

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        if not 0 <= index < len(self.images):
            raise IndexError(f"dataset index {index} out of range 0..{len(self.images) - 1}")
        return (self.images[index].copy(),)


def fields_report(batch, Tensor):
    """A batch of any number of fields as data: its fields, or the name of what came instead of a tuple."""
    try:
        if not isinstance(batch, (tuple, list)):
            return {"type_name": type_name(batch)}
        return {"fields": [field_report(value, Tensor) for value in batch[:4]]}
    except Exception as error:  # noqa: BLE001
        return {"type_name": f"batch that could not be read ({type(error).__name__})"}


COMPOSE_STEPS = {"add": lambda k: lambda a: a + k, "mul": lambda k: lambda a: a * k,
                 "sub": lambda k: lambda a: a - k, "pow": lambda k: lambda a: a ** k}


def build_transform(spec, namespace):
    name, args, kwargs = spec["name"], spec["args"], spec["kwargs"]
    if name == "Compose":
        args = [[COMPOSE_STEPS[step](k) for step, k in args[0]]]
    return namespace[name](*args, **kwargs)


def outputs_report(outputs, Tensor):
    """A run's outputs as data: one stacked array when they are ndarrays of one shape, else each one."""
    arrays = all(type(o) is np.ndarray and o.dtype.kind in "biuf" for o in outputs)
    if outputs and arrays and len({(o.shape, o.dtype.str) for o in outputs}) == 1:
        return {"stacked": packed(np.stack(outputs))}
    return {"items": [report(o, Tensor, 1) for o in outputs]}


@handles("data_transform")
def data_transform(request, namespace):
    """Each run: build the transform the judge names, call it `count` times on copies of the judge's image;
    `changed`: whether a call wrote into the copy it was given."""
    Tensor, runs = namespace["Tensor"], []
    for run in request["runs"]:
        try:
            made = quietly(build_transform, run["build"], namespace)
            outputs, changed = [], False
            for _ in range(min(run["count"], MAX_CALLS)):
                given = run["x"].copy()
                outputs.append(quietly(made, given))
                changed = changed or not untouched(given, run["x"])
        except Exception as error:  # noqa: BLE001
            runs.append({"error": error_report(error)})
            break
        runs.append(dict(outputs_report(outputs, Tensor), changed=changed))
    return {"runs": runs}


@contextlib.contextmanager
def judge_files(files):
    """The judge's files {name: uint8 array of their bytes}, written to a fresh temporary folder: {name: path}."""
    with tempfile.TemporaryDirectory(prefix="babygrad-judge-") as folder:
        paths = {}
        for name, payload in files:
            path = os.path.join(folder, os.path.basename(name))
            with open(path, "wb") as f:
                f.write(payload.tobytes())
            paths[name] = path
        yield paths


@handles("parse_idx")
def idx_parse(request, namespace):
    """parse_idx on each of the judge's files: the array returned, or the error raised. The files named in
    `as_path` are given as a pathlib.Path, the others as a str."""
    Tensor, results = namespace["Tensor"], []
    with judge_files(request["files"]) as paths:
        for name, _ in request["files"]:
            path = pathlib.Path(paths[name]) if name in request.get("as_path", ()) else paths[name]
            try:
                results.append({"returned": report(quietly(namespace["parse_idx"], path), Tensor)})
            except Exception as error:  # noqa: BLE001
                results.append({"returned": error_report(error), "value_error": isinstance(error, ValueError)})
    return {"results": results}


def label_report(label):
    return {"type_name": type_name(label), "repr": repr(label)[:60],
            "value": packed(np.asarray(label)) if isinstance(label, (int, float, np.generic, np.ndarray)) else None}


def item_report(ds, index, Tensor):
    sample = quietly(ds.__getitem__, index)
    image, label = sample
    return {"image": report(image, Tensor), "label": label_report(label), "type_name": "tuple" if isinstance(sample, tuple) else type_name(sample)}


def stored_report(ds):
    """The arrays `.images` and `.labels` a dataset keeps (checks/ch06_data_facts.stored_facts): type name, dtype and
    shape, or None when missing."""
    facts = shipped("ch06_data_facts")["stored_facts"](ds, type_name)
    return {name: None if fact is None else {"type_name": fact[0], "dtype": fact[1], "shape": list(fact[2])[:8]}
            for name, fact in facts.items()}


@handles("mnist_dataset")
def mnist_dataset(request, namespace):
    """MNISTDataset on the judge's IDX files, with the stand-in parser; then on a real split when asked."""
    Tensor, MNISTDataset, facts = namespace["Tensor"], namespace["MNISTDataset"], shipped("ch06_data_facts")
    saved = namespace.get("parse_idx")
    namespace["parse_idx"] = facts["parse_idx"]
    try:
        with judge_files(request["files"]) as paths:
            images_path, labels_path = (paths[name] for name, _ in request["files"])
            try:
                ds = quietly(MNISTDataset, images_path, labels_path)
                reply = {"n": length_report(quietly(len, ds)), "item": item_report(ds, request["item"], Tensor),
                         "stored": stored_report(ds)}
                counter = facts["CountingTransform"]()
                augmented = quietly(MNISTDataset, images_path, labels_path, counter)
                reply["calls_after_init"] = counter.calls
                reply["other"] = item_report(augmented, request["other"], Tensor)
                reply["calls"] = counter.calls
            except Exception as error:  # noqa: BLE001
                return {"error": error_report(error)}
        if request.get("real") is None:
            return reply
        try:
            files = quietly(namespace["mnist_files"], request["real"])
            real = quietly(MNISTDataset, *[str(p) for p in files])
            reply["real"] = {"n": length_report(quietly(len, real)), "item": item_report(real, request["real_item"], Tensor)}
        except Exception as error:  # noqa: BLE001
            reply["real"] = {"error": error_report(error)}
        return reply
    finally:
        if saved is None:
            namespace.pop("parse_idx", None)
        else:
            namespace["parse_idx"] = saved
