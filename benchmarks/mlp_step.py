"""Where one training step of the capstone MLP goes: babygrad's phases against the NumPy floor's.

    python benchmarks/mlp_step.py                  # 30,000 images, each library's fastest of 4 passes
    python benchmarks/mlp_step.py --images 60000 --repeats 3

`train_mnist.py` says how much slower babygrad's epoch is than the floor's; this says where. It times
the same steps as that benchmark (batches of 64 in the DataLoader's seeded order, Adam(lr=0.002), one
BLAS thread) with a stopwatch around each phase: babygrad's batch, forward, loss, backward and
optimizer step, and the floor's batch, forward-and-backward (one hand-written function) and step. Then
it times the step's five matrix products alone, on arrays of their shapes: both libraries compute
exactly those, so what is left of each library's forward, loss and backward is its own work around
them. The libraries take turns, and each one's fastest pass is reported (the least disturbed).
"""
import argparse
import json
import os
import sys
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=30_000, help="training images per pass (default 30,000)")
    parser.add_argument("--repeats", type=int, default=4, help="passes per library, the fastest reported")
    parser.add_argument("--json", type=Path, help="also write the phases to this file (benchmarks/scale.py reads it)")
    return parser.parse_args()


for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"                   # before NumPy loads its BLAS, as train_mnist.py
os.environ["BABYGRAD_HEADLESS"] = "1"
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from autograder.build import capstone_mine  # noqa: E402
from autograder.student.checks.capstone import RECIPES  # noqa: E402
from autograder.student.checks.capstone import mnist  # noqa: E402
from benchmarks import numpy_floor  # noqa: E402

RECIPE = RECIPES["mlp"]


def babygrad_phases(bg, images, labels):
    """Seconds spent in each phase of one pass of babygrad's training steps."""
    model = bg["build_mlp"]()
    loss_fn, optimizer = bg["SoftmaxLoss"](), bg["Adam"](model.parameters(), lr=RECIPE.lr)
    batches = iter(bg["DataLoader"](bg["ArrayDataset"](images, labels), batch_size=RECIPE.batch_size,
                                    shuffle=True, seed=0))
    phases = dict.fromkeys(("batch", "forward", "loss", "backward", "optimizer step"), 0.0)
    model.train()
    clock = time.perf_counter
    while True:
        t0 = clock()
        batch = next(batches, None)
        if batch is None:
            return phases
        t1 = clock()
        optimizer.zero_grad()
        logits = model(batch[0])
        t2 = clock()
        loss = loss_fn(logits, batch[1])
        t3 = clock()
        loss.backward()
        t4 = clock()
        optimizer.step()
        loss.item()
        t5 = clock()
        for name, seconds in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            phases[name] += seconds


def floor_phases(images, labels):
    """The same for the NumPy floor, whose forward, loss and backward are one hand-written function."""
    network = numpy_floor.MLP()
    optimizer = numpy_floor.Adam(network.params, RECIPE.lr)
    order = np.random.default_rng(0).permutation(len(images))
    phases = dict.fromkeys(("batch", "forward, loss and backward", "optimizer step"), 0.0)
    clock = time.perf_counter
    for first in range(0, len(images), RECIPE.batch_size):
        t0 = clock()
        rows = order[first:first + RECIPE.batch_size]
        x, y = images[rows], labels[rows]
        t1 = clock()
        _, grads = network.loss_and_grads(x, y)
        t2 = clock()
        optimizer.step(grads)
        t3 = clock()
        for name, seconds in zip(phases, (t1 - t0, t2 - t1, t3 - t2)):
            phases[name] += seconds
    return phases


def matrix_products():
    """Seconds of the step's five matrix products, as both libraries compute them (x·W1, h·W2, and
    the backward's hᵀ·G2, G2·W2ᵀ and xᵀ·G1; no gradient for the images), fastest of 5 × 200."""
    rng = np.random.default_rng(0)
    n = RECIPE.batch_size

    def array(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    x, w1, g1, h, w2, g2 = array(n, 784), array(784, 128), array(n, 128), array(n, 128), array(128, 10), array(n, 10)

    def products():
        return x @ w1, h @ w2, h.T @ g2, g2 @ w2.T, x.T @ g1

    return min(timeit.repeat(products, number=200, repeat=5)) / 200


def main():
    args = parse_args()
    bg = capstone_mine.library(ROOT)[0]
    images, labels = (array[:args.images] for array in mnist("train", RECIPE.image_shape))
    steps = -(-len(images) // RECIPE.batch_size)
    best = {}
    for _ in range(args.repeats):                       # taking turns; the fastest pass of each
        for library, timer in (("babygrad", lambda: babygrad_phases(bg, images, labels)),
                               ("NumPy floor", lambda: floor_phases(images, labels))):
            phases = timer()
            if library not in best or sum(phases.values()) < sum(best[library].values()):
                best[library] = phases
    products = matrix_products()
    print(f"the capstone MLP, {steps} steps of {RECIPE.batch_size} images; microseconds per step, "
          f"each library's fastest of {args.repeats} passes (taking turns); one BLAS thread")
    for library, phases in best.items():
        per_step = {name: seconds / steps * 1e6 for name, seconds in phases.items()}
        print(f"{library}: " + ", ".join(f"{name} {us:.0f}" for name, us in per_step.items())
              + f"; total {sum(per_step.values()):.0f}")
    bg_graph = sum(best["babygrad"][name] for name in ("forward", "loss", "backward")) / steps
    floor_graph = best["NumPy floor"]["forward, loss and backward"] / steps
    print(f"the five matrix products alone: {products * 1e6:.0f}")
    print(f"forward, loss and backward beyond the products: babygrad {(bg_graph - products) * 1e6:.0f}, "
          f"the floor {(floor_graph - products) * 1e6:.0f}")
    print(f"babygrad / floor: the whole step {sum(best['babygrad'].values()) / sum(best['NumPy floor'].values()):.2f}x")
    if args.json:
        graph = ("forward", "loss", "backward")
        babygrad = {"batch": best["babygrad"]["batch"], "forward, loss and backward": sum(best["babygrad"][n] for n in graph),
                    "optimizer step": best["babygrad"]["optimizer step"]}
        args.json.write_text(json.dumps({"steps": steps, "products_us": round(products * 1e6),
                                         "phases_us": {library: {name: round(seconds / steps * 1e6) for name, seconds in phases.items()}
                                                       for library, phases in (("babygrad", babygrad),
                                                                               ("NumPy floor", best["NumPy floor"]))}}))


if __name__ == "__main__":
    main()
