"""Checks of chapter 6's transforms, each on its own probe images (a transform never uses another)."""
import numpy as np

from ..verdict import failed, passed
from .describe import type_name
from .ops import describe_exception, run_quietly


def image(shape, seed=0):
    return np.random.default_rng(seed).random(shape).astype(np.float32)


def call(label, transform, x):
    """(output, None) or (None, failure message)."""
    try:
        return run_quietly(transform, x.copy()), None
    except Exception as error:  # noqa: BLE001
        return None, describe_exception(label, "__call__", error)


def same(label, got, want, hint):
    if not isinstance(got, np.ndarray):
        return failed(f"{label} returned a {type_name(got)}, expected a numpy array.")
    if got.shape != want.shape:
        return failed(f"{label}: output shape {got.shape}, expected {want.shape}.\n  Hint: {hint}")
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        worst = np.unravel_index(np.argmax(np.abs(got - want)), want.shape)
        return failed(f"{label}: output{list(worst)} = {float(got[worst]):.5g}, expected {float(want[worst]):.5g}.\n  Hint: {hint}")
    return None


def check_normalize(namespace):
    Normalize = namespace["Normalize"]
    for shape, mean, std in [((5, 5), 0.1307, 0.3081), ((4, 4, 3), np.array([0.5, 0.4, 0.3]), np.array([0.2, 0.25, 0.3]))]:
        x = image(shape)
        label = f"Normalize(mean={mean}, std={std}) on an image of shape {shape}"
        got, error = call(label, Normalize(mean, std), x)
        problem = error and failed(error) or same(label, got, (x - mean) / std,
                                                  "subtract the mean, then divide by the standard deviation: (x - mean) / std.")
        if problem:
            return problem
        if got.dtype != np.float32:
            return failed(f"{label}: output dtype {got.dtype}, expected float32 (cast the result back: .astype(np.float32)).")
    return passed("✔ Normalize computes (x - mean) / std and keeps float32")


def check_flatten_image(namespace):
    FlattenImage = namespace["FlattenImage"]
    for shape in [(28, 28), (4, 5, 3)]:
        x = image(shape)
        label = f"FlattenImage() on an image of shape {shape}"
        got, error = call(label, FlattenImage(), x)
        problem = error and failed(error) or same(label, got, x.reshape(-1),
                                                  "one flat vector of H·W·C values, row by row (NumPy's default C order); "
                                                  "no batch axis: the loader adds it.")
        if problem:
            return problem
    return passed("✔ FlattenImage turns an image into one flat vector, row by row")


def flips(transform, x, count):
    out = [run_quietly(transform, x.copy()) for _ in range(count)]
    return [bool(np.array_equal(o, x[:, ::-1])) and not np.array_equal(o, x) for o in out], out


def check_flip(namespace):
    Flip = namespace["RandomFlipHorizontal"]
    x = image((3, 4))
    try:
        always, out1 = flips(Flip(p=1.0, seed=0), x, 5)
        never, out0 = flips(Flip(p=0.0, seed=0), x, 5)
        half, _ = flips(Flip(p=0.5, seed=0), x, 400)
        run_a, _ = flips(Flip(p=0.5, seed=5), x, 60)
        run_b, _ = flips(Flip(p=0.5, seed=5), x, 60)
        run_c, _ = flips(Flip(p=0.5, seed=6), x, 60)
        colour, _ = flips(Flip(p=1.0, seed=0), image((3, 4, 2)), 1)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("RandomFlipHorizontal", "__call__", error))
    if not all(always):
        upside = np.array_equal(out1[0], x[::-1])
        return failed("RandomFlipHorizontal(p=1.0) must mirror every image left to right (x[:, ::-1]); "
                      f"it did so {sum(always)} times in 5." + ("\n  Hint: you flipped upside down (axis 0); "
                                                                "horizontal means along the width, axis 1." if upside else
                                                                "\n  Hint: flip when rng.random() < p."))
    if any(not np.array_equal(o, x) for o in out0):
        return failed("RandomFlipHorizontal(p=0.0) changed an image: with p = 0 it must never flip.")
    if not 140 <= sum(half) <= 260:
        return failed(f"RandomFlipHorizontal(p=0.5) flipped {sum(half)} of 400 images; about 200 expected "
                      "(anything outside 140..260 is more than 6 standard deviations away).")
    if run_a != run_b:
        return failed("two RandomFlipHorizontal(p=0.5, seed=5) flipped different images: the seed must make the "
                      "sequence of flips reproducible.\n  Hint: self.rng = np.random.default_rng(seed) in __init__.")
    if run_a == run_c:
        return failed("seeds 5 and 6 gave the same 60 flips: the seed must drive the random generator.")
    if not colour[0]:
        return failed("RandomFlipHorizontal(p=1.0) on an image of shape (3, 4, 2) (height, width, channels) did not "
                      "mirror the width axis: use x[:, ::-1], which keeps the channels as they are.")
    return passed("✔ RandomFlipHorizontal mirrors left-right with probability p, reproducibly from its seed")


def windows(x, size, padding):
    """{(top, left): window} of every crop of the zero-padded image."""
    pad = [(padding, padding), (padding, padding)] + [(0, 0)] * (x.ndim - 2)
    padded = np.pad(x, pad)
    span = padded.shape[0] - size + 1, padded.shape[1] - size + 1
    return {(i, j): padded[i:i + size, j:j + size] for i in range(span[0]) for j in range(span[1])}


def crop_offsets(transform, x, size, padding, count):
    """The offsets of `count` crops, or (None, message) when a crop is no window of the padded image."""
    options = windows(x, size, padding)
    seen = []
    for _ in range(count):
        out = run_quietly(transform, x.copy())
        if not isinstance(out, np.ndarray) or out.shape != (size, size) + x.shape[2:]:
            return None, (f"returned a {type_name(out)} of shape {np.shape(out)}, expected an array of shape "
                          f"{(size, size) + x.shape[2:]}")
        match = [k for k, w in options.items() if np.array_equal(out, w)]
        if not match:
            return None, ("returned an array that is no size×size window of the image padded with `padding` zeros "
                          "on every side.\n  Hint: np.pad(x, ((p, p), (p, p))), then take [top:top+size, left:left+size]")
        seen.append(match[0])
    return seen, None


def check_crop(namespace):
    Crop = namespace["RandomCrop"]
    x = image((6, 6)) + 1.0             # no pixel is 0, so the zero padding shows
    for size, padding, count in [(6, 2, 500), (4, 0, 300)]:
        label = f"RandomCrop({size}, padding={padding}, seed=0) on a 6×6 image"
        try:
            seen, problem = crop_offsets(Crop(size, padding=padding, seed=0), x, size, padding, count)
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("RandomCrop", "__call__", error) + f"\n  in {label}.")
        if problem:
            return failed(f"{label} {problem}.")
        every = set(windows(x, size, padding))
        missing = sorted(every - set(seen))
        if missing:
            return failed(f"{label}: in {count} crops, the windows at (top, left) = {missing[:4]} never came up; "
                          f"all {len(every)} positions 0..{6 + 2 * padding - size} should.\n"
                          "  Hint: rng.integers(low, high) excludes high: draw top from integers(0, H + 2p - size + 1).")
    try:
        a, _ = crop_offsets(Crop(6, padding=2, seed=7), x, 6, 2, 40)
        b, _ = crop_offsets(Crop(6, padding=2, seed=7), x, 6, 2, 40)
        c, _ = crop_offsets(Crop(6, padding=2, seed=8), x, 6, 2, 40)
        colour, problem = crop_offsets(Crop(5, padding=1, seed=0), image((6, 6, 3)) + 1.0, 5, 1, 20)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("RandomCrop", "__call__", error))
    if a != b:
        return failed("two RandomCrop(6, padding=2, seed=7) cropped different windows: the seed must make them reproducible.\n"
                      "  Hint: self.rng = np.random.default_rng(seed) in __init__.")
    if a == c:
        return failed("seeds 7 and 8 gave the same 40 crops: the seed must drive the random generator.")
    if problem:
        return failed(f"RandomCrop(5, padding=1) on an image of shape (6, 6, 3) {problem}; pad and crop only height "
                      "and width, never the channels.")
    return passed("✔ RandomCrop takes every size×size window of the zero-padded image, reproducibly from its seed")


def check_compose(namespace):
    Compose = namespace["Compose"]
    x = image((2, 3))
    try:
        both = run_quietly(Compose([lambda a: a + 1, lambda a: a * 10]), x.copy())
        empty = run_quietly(Compose([]), x.copy())
        three = run_quietly(Compose([lambda a: a * 2, lambda a: a - 1, lambda a: a ** 2]), x.copy())
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Compose", "__call__", error))
    if not isinstance(both, np.ndarray) or not np.allclose(both, (x + 1) * 10):
        reverse = isinstance(both, np.ndarray) and np.allclose(both, x * 10 + 1)
        return failed("Compose([add 1, times 10]) must give (x + 1) * 10."
                      + ("\n  Hint: you applied them last to first: apply the list in order." if reverse else
                         "\n  Hint: feed each transform the output of the one before it."))
    if not isinstance(empty, np.ndarray) or not np.allclose(empty, x):
        return failed("Compose([]) must return its input unchanged.")
    if not np.allclose(three, (2 * x - 1) ** 2):
        return failed("Compose([times 2, minus 1, squared]) must give (2x - 1)²: feed each transform the output of the one before.")
    return passed("✔ Compose applies its transforms in order")
