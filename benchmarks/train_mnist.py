"""Seconds per epoch: the capstone MLP and CNN trained with babygrad, in plain NumPy, and in PyTorch.

    python benchmarks/train_mnist.py                 # one epoch of each, one thread
    python benchmarks/train_mnist.py --images 20000  # a shorter epoch, timed and reported per 60,000 images
    python benchmarks/train_mnist.py --repeats 3     # each library's fastest of 3 epochs (a shared machine)
    python benchmarks/train_mnist.py --against HEAD  # also the reference as committed: did a change speed it up?
    python benchmarks/train_mnist.py --subnormals kept  # only as the CPU does by default (no 'flushed' rows)

babygrad is the course's reference solution: the exported cells of chapters/*.py, solved, as the
notebooks receive them in earlier_chapters.py. Both libraries train the same architectures with the same
recipe as the capstones (batches of 64, Adam with lr 0.002, the same normalization), on the embedded
MNIST digits, and both are held to `--threads` threads (BLAS and PyTorch's own). PyTorch is optional:
without it, only babygrad and NumPy are timed. The NumPy column is the floor (benchmarks/numpy_floor.py):
the same networks, initial weights, batches in the same order and Adam, with the backward pass written
out by hand; babygrad / NumPy is what the library's bookkeeping costs. The times cover the training loop only (data already in memory);
the accuracy is measured afterwards on the 10,000 test digits. With --repeats, the libraries take turns,
each epoch from fresh weights, and each one's fastest epoch is reported: on a machine shared with other
work, the fastest run is the one least disturbed, and taking turns exposes all of them to the same load.
Importing the course's student package sets the C allocator to keep freed arrays for reuse
(autograder.student.allocator), as in every notebook; all libraries here run with it, and the header
says so. BABYGRAD_KEEP_FREED_MEMORY=0 measures the C library's defaults instead.
Each model is timed twice (`--subnormals both`, where the CPU allows it): as the CPU computes by default,
and with float32 subnormals flushed to zero (benchmarks/subnormals.py). Late in the MLP's epoch, Adam's
moments of dead units decay into subnormals, which x86 computes some fifty times slower; every library
pays that alike, so the 'flushed' rows show each library's own cost more plainly.
"""
import argparse
import contextlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=60_000, help="training images per timed epoch (default: all)")
    parser.add_argument("--threads", type=int, default=1, help="threads for BLAS and PyTorch (default: 1)")
    parser.add_argument("--models", nargs="+", default=["mlp", "cnn"], choices=["mlp", "cnn"])
    parser.add_argument("--repeats", type=int, default=1, help="epochs per library, the fastest reported (default: 1)")
    parser.add_argument("--subnormals", choices=["kept", "flushed", "both"], default="both",
                        help="time with float32 subnormals as the CPU computes them, flushed to zero, or both "
                        "(default: both; 'kept' only where the CPU cannot flush)")
    parser.add_argument("--against", metavar="REV", help="also time the reference solution of this git revision "
                        "(its chapters/), taking turns with the others, and print this checkout's time over its time")
    return parser.parse_args()


ARGS = parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)       # before NumPy loads its BLAS
os.environ["BABYGRAD_HEADLESS"] = "1"        # no progress bars inside the timed loop
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from autograder.build import capstone_mine  # noqa: E402
from autograder.student import FREED_MEMORY_KEPT  # noqa: E402
from autograder.student.checks.capstone import RECIPES, held_out_accuracy, mnist  # noqa: E402
from benchmarks import numpy_floor, subnormals  # noqa: E402


def babygrad(root=ROOT):
    """The solved library: every chapter's exported code, run in order in one namespace."""
    return capstone_mine.library(root)[0]


def babygrad_at(revision):
    """The solved library as `revision` had it: its chapters/ from git, in a temporary folder."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "chapters"], check=True,
                             capture_output=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        return babygrad(folder)


def time_babygrad(bg, kind, train_x, train_y, test_x, test_y):
    recipe = RECIPES[kind]
    model = bg[f"build_{kind}"]()
    loader = bg["DataLoader"](bg["ArrayDataset"](train_x, train_y), batch_size=recipe.batch_size, shuffle=True, seed=0)
    trainer = bg["Trainer"](model, bg["SoftmaxLoss"](), bg["Adam"](model.parameters(), lr=recipe.lr))
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):         # fit prints one line per epoch
        trainer.fit(loader, None, 1)
    seconds = time.perf_counter() - start
    return seconds, held_out_accuracy(bg, model, test_x, test_y)


def time_numpy(kind, train_x, train_y, test_x, test_y):
    recipe = RECIPES[kind]
    network, seconds = numpy_floor.train_epoch(kind, train_x, train_y, recipe.batch_size, recipe.lr, seed=0)
    return seconds, numpy_floor.accuracy(network, test_x, test_y)


def torch_model(torch, kind):
    nn = torch.nn
    if kind == "mlp":
        return nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    return nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


def time_torch(torch, kind, train_x, train_y, test_x, test_y):
    recipe = RECIPES[kind]
    torch.manual_seed(0)
    model = torch_model(torch, kind)
    optimizer = torch.optim.Adam(model.parameters(), lr=recipe.lr)
    loss_fn = torch.nn.CrossEntropyLoss()
    x, y = torch.from_numpy(train_x), torch.from_numpy(train_y)
    order = torch.from_numpy(np.random.default_rng(0).permutation(len(x)))
    start = time.perf_counter()
    model.train()
    for first in range(0, len(x), recipe.batch_size):
        batch = order[first:first + recipe.batch_size]
        optimizer.zero_grad()
        loss = loss_fn(model(x[batch]), y[batch])
        loss.backward()
        optimizer.step()
    seconds = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        predicted = model(torch.from_numpy(test_x)).argmax(dim=1).numpy()
    return seconds, float((predicted == test_y).mean())


def regimes():
    """The subnormal regimes to time: {row label suffix: context manager factory}."""
    wanted = ARGS.subnormals if subnormals.available() else "kept"
    kept, flushed = {"": contextlib.nullcontext}, {" flushed": subnormals.flushed_to_zero}
    return {"kept": kept, "flushed": flushed, "both": {**kept, **flushed}}[wanted]


def main():
    try:
        import torch
        torch.set_num_threads(ARGS.threads)
    except ImportError:
        torch = None
    bg = babygrad()
    bg_against = babygrad_at(ARGS.against) if ARGS.against else None
    scale = 60_000 / ARGS.images
    print(f"one epoch = 60,000 MNIST images, batches of 64, Adam(lr=0.002); {ARGS.threads} thread(s); "
          f"NumPy {np.__version__}" + (f", PyTorch {torch.__version__}" if torch else ", PyTorch not installed"))
    print("malloc: " + ("freed memory kept for reuse (autograder.student.allocator), for every library timed" if FREED_MEMORY_KEPT
                        else "the C library's defaults (BABYGRAD_KEEP_FREED_MEMORY=0, or not glibc)"))
    if ARGS.subnormals != "kept" and not subnormals.available():
        print("(this CPU or C library cannot flush subnormals: timed as the CPU computes by default only)")
    if " flushed" in regimes():
        print("rows 'flushed': float32 subnormals flushed to zero for every library (benchmarks/subnormals.py)")
    if ARGS.images != 60_000:
        print(f"(timed on {ARGS.images:,} images and scaled to a full epoch)")
    if ARGS.repeats > 1:
        print(f"(each library's fastest of {ARGS.repeats} epochs, the libraries taking turns)")
    print(f"{'model':12} {'babygrad s/epoch':>17} {'test acc':>9} {'NumPy s/epoch':>14} {'test acc':>9} "
          f"{'bg/NumPy':>9}" + (f" {'PyTorch s/epoch':>16} {'test acc':>9} {'bg/PyTorch':>11}" if torch else ""))
    for kind in ARGS.models:
        train_x, train_y = mnist("train", RECIPES[kind].image_shape)
        test_x, test_y = mnist("test", RECIPES[kind].image_shape)
        train_x, train_y = train_x[:ARGS.images], train_y[:ARGS.images]
        timers = {"babygrad": lambda: time_babygrad(bg, kind, train_x, train_y, test_x, test_y),
                  "numpy": lambda: time_numpy(kind, train_x, train_y, test_x, test_y)}
        if torch is not None:
            timers["torch"] = lambda: time_torch(torch, kind, train_x, train_y, test_x, test_y)
        if bg_against is not None:
            timers["against"] = lambda: time_babygrad(bg_against, kind, train_x, train_y, test_x, test_y)
        best = {}
        for _ in range(ARGS.repeats):                           # taking turns, see the docstring
            for regime, arithmetic in regimes().items():
                for library, timer in timers.items():
                    with arithmetic():
                        seconds, acc = timer()
                    best[regime, library] = min(best.get((regime, library), (seconds, acc)), (seconds, acc))
        for regime in regimes():
            print_row(kind + regime, {library: best[regime, library] for library in timers}, scale)


def print_row(label, best, scale):
    """One model's line of the table (and, with --against, the comparison with the older reference)."""
    (bg_seconds, bg_acc), (np_seconds, np_acc) = best["babygrad"], best["numpy"]
    line = (f"{label:12} {bg_seconds * scale:17.2f} {bg_acc:9.2%} {np_seconds * scale:14.2f} {np_acc:9.2%} "
            f"{bg_seconds / np_seconds:8.2f}x")
    if "torch" in best:
        pt_seconds, pt_acc = best["torch"]
        line += f" {pt_seconds * scale:16.2f} {pt_acc:9.2%} {bg_seconds / pt_seconds:10.2f}x"
    print(line, flush=True)
    if "against" in best:
        old_seconds, old_acc = best["against"]
        print(f"{'':12} babygrad at {ARGS.against}: {old_seconds * scale:.2f} s/epoch, test acc {old_acc:.2%}; "
              f"this checkout / {ARGS.against}: {bg_seconds / old_seconds:.3f}", flush=True)


if __name__ == "__main__":
    main()
