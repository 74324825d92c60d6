"""Checks of chapter 6's transforms, each on its own probe images (a transform never uses another)."""
import numpy as np

from autograder.student.checks.describe import type_name
from autograder.student.checks.registry import register
from autograder.student.checks.running import describe_exception, run_quietly
from autograder.student.verdict import failed, passed


def image(shape, seed=0):
    return np.random.default_rng(seed).random(shape).astype(np.float32)


def call(label, transform, x):
    """(output, None) or (None, failure message); an output that is no array is told by its type's name."""
    try:
        return shown(run_quietly(transform, x.copy())), None
    except Exception as error:  # noqa: BLE001
        return None, describe_exception(label, "__call__", error)


def shown(value):
    """An output as a verdict reads it: an ndarray, or the name of the type returned instead."""
    return value if isinstance(value, np.ndarray) else type_name(value)


def same(label, got, want, hint):
    if not isinstance(got, np.ndarray):
        return failed(f"{label} returned a {got}, expected a numpy array.")
    if got.shape != want.shape:
        return failed(f"{label}: output shape {got.shape}, expected {want.shape}.\n  Hint: {hint}")
    if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        worst = np.unravel_index(np.argmax(np.abs(got - want)), want.shape)
        return failed(f"{label}: output{[int(i) for i in worst]} = {float(got[worst]):.5g}, expected {float(want[worst]):.5g}.\n  Hint: {hint}")
    return None


NORMALIZE_CASES = [((5, 5), 0.1307, 0.3081), ((4, 4, 3), np.array([0.5, 0.4, 0.3]), np.array([0.2, 0.25, 0.3]))]


def normalize_label(shape, mean, std):
    return f"Normalize(mean={mean}, std={std}) on an image of shape {shape}"


def check_normalize(namespace):
    Normalize = namespace["Normalize"]
    for shape, mean, std in NORMALIZE_CASES:
        x = image(shape)
        label = normalize_label(shape, mean, std)
        got, error = call(label, Normalize(mean, std), x)
        problem = failed(error) if error else normalize_problem(label, x, mean, std, got)
        if problem:
            return problem
    return passed("✔ Normalize computes (x - mean) / std and keeps float32")


def normalize_problem(label, x, mean, std, got):
    """What is wrong with Normalize(mean, std)(x) = `got`, as a failed Verdict, or None."""
    problem = same(label, got, (x - mean) / std, "subtract the mean, then divide by the standard deviation; with one "
                   "mean and std per channel, each channel (the last axis) uses its own.")
    if problem:
        return problem
    if got.dtype != np.float32:
        return failed(f"{label}: output dtype {got.dtype}, expected float32: a transform keeps the image's float32, "
                      "so the result is converted back to it.")
    return None


FLATTEN_HINT = ("one flat vector of H·W·C values, row by row (NumPy's default C order); "
                "no batch axis: the loader adds it.")


def flatten_label(shape):
    return f"FlattenImage() on an image of shape {shape}"


def check_flatten_image(namespace):
    FlattenImage = namespace["FlattenImage"]
    for shape in [(28, 28), (4, 5, 3)]:
        x = image(shape)
        label = flatten_label(shape)
        got, error = call(label, FlattenImage(), x)
        problem = failed(error) if error else same(label, got, x.reshape(-1), FLATTEN_HINT)
        if problem:
            return problem
    return passed("✔ FlattenImage turns an image into one flat vector, row by row")


SEEDED_RULE = ("draw from one generator made from the seed, once, in __init__ (NumPy's default_rng): a generator "
               "made without the seed, or the global np.random functions, draws differently every run.")


def flipped(x, outputs):
    """For each output: is it x mirrored left to right (and not x itself)?"""
    return [bool(np.array_equal(o, x[:, ::-1])) and not np.array_equal(o, x) for o in outputs]


def outputs_of(transform, x, count):
    """`count` calls of transform on copies of x, each `shown`."""
    return [shown(run_quietly(transform, x.copy())) for _ in range(count)]


FLIP_COUNTS = {"always": 5, "never": 5, "half": 400, "seeded": 60, "colour": 1}


def check_flip(namespace):
    Flip = namespace["RandomFlipHorizontal"]
    x = image((3, 4))
    try:
        runs = {"always": outputs_of(Flip(p=1.0, seed=0), x, 5), "never": outputs_of(Flip(p=0.0, seed=0), x, 5),
                "half": outputs_of(Flip(p=0.5, seed=0), x, 400),
                "seeded": [outputs_of(Flip(p=0.5, seed=seed), x, 60) for seed in (5, 5, 6)],
                "colour": outputs_of(Flip(p=1.0, seed=0), image((3, 4, 2)), 1)}
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("RandomFlipHorizontal", "__call__", error))
    return flip_verdict(x, image((3, 4, 2)), runs, (5, 6))


def flip_verdict(x, colour_x, runs, seeds):
    """The verdict on RandomFlipHorizontal from its outputs on x (`runs`, as FLIP_COUNTS: p=1, p=0, p=0.5,
    three runs of p=0.5 with seeds[0], seeds[0] and seeds[1]) and on the colour image (p=1)."""
    always, never, half = flipped(x, runs["always"]), runs["never"], flipped(x, runs["half"])
    run_a, run_b, run_c = (flipped(x, run) for run in runs["seeded"])
    if not all(always):
        upside = np.array_equal(runs["always"][0], x[::-1])
        return failed("RandomFlipHorizontal(p=1.0) must mirror every image left to right (the width axis, axis 1, "
                      f"reversed); it did so {sum(always)} times in {len(always)}."
                      + ("\n  Hint: you flipped upside down (axis 0); horizontal means along the width, axis 1."
                         if upside else "\n  Hint: an image flips with probability p: a uniform draw from [0, 1) "
                         "falls below p that often, so with p = 1 every image flips."))
    if any(not np.array_equal(o, x) for o in never):
        return failed("RandomFlipHorizontal(p=0.0) changed an image: with p = 0 it must never flip.")
    low, high = int(0.35 * len(half)), int(0.65 * len(half))
    if not low <= sum(half) <= high:
        return failed(f"RandomFlipHorizontal(p=0.5) flipped {sum(half)} of {len(half)} images; about {len(half) // 2} "
                      f"expected (anything outside {low}..{high} is more than 6 standard deviations away).")
    if run_a != run_b:
        return failed(f"two RandomFlipHorizontal(p=0.5, seed={seeds[0]}) flipped different images: the seed must make the "
                      "sequence of flips reproducible.\n"
                      f"  Hint: {SEEDED_RULE}")
    if run_a == run_c:
        return failed(f"seeds {seeds[0]} and {seeds[1]} gave the same {len(run_a)} flips: the seed must drive the random generator.")
    if not flipped(colour_x, runs["colour"])[0]:
        return failed("RandomFlipHorizontal(p=1.0) on an image of shape (3, 4, 2) (height, width, channels) did not "
                      "mirror the width axis: reverse axis 1 only and keep the channels as they are.")
    return passed("✔ RandomFlipHorizontal mirrors left-right with probability p, reproducibly from its seed")


def windows(x, size, padding):
    """{(top, left): window} of every crop of the zero-padded image."""
    pad = [(padding, padding), (padding, padding)] + [(0, 0)] * (x.ndim - 2)
    padded = np.pad(x, pad)
    span = padded.shape[0] - size + 1, padded.shape[1] - size + 1
    return {(i, j): padded[i:i + size, j:j + size] for i in range(span[0]) for j in range(span[1])}


def crop_offsets(outputs, x, size, padding):
    """The offsets of the crops `outputs`, or (None, message) when a crop is no window of the padded image."""
    options = windows(x, size, padding)
    by_bytes = {w.astype(np.float32).tobytes(): k for k, w in options.items()}
    seen = []
    for out in outputs:
        if not isinstance(out, np.ndarray) or out.shape != (size, size) + x.shape[2:]:
            return None, (f"returned a {out if isinstance(out, str) else 'numpy.ndarray'} of shape {np.shape(out)}, "
                          f"expected an array of shape {(size, size) + x.shape[2:]}")
        match = by_bytes.get(out.astype(np.float32).tobytes()) if out.dtype.kind == "f" else None
        if match is None:
            match = next((k for k, w in options.items() if np.array_equal(out, w)), None)
        if match is None:
            return None, ("returned an array that is no size×size window of the image padded with `padding` zeros "
                          "on every side.\n  Hint: pad height and width with `padding` zeros on both sides, then cut "
                          "the size×size window whose top-left corner is (top, left)")
        seen.append(match)
    return seen, None


# (image shape, size, padding, crops); the wide image tells the height's range from the width's.
# One of the 25 windows of (6, 2) missed in 500 crops 1 time in ~3·10^7, one of the 18 of (4, 7) in 400 1 in ~5·10^8.
CROP_RUNS = [((6, 6), 6, 2, 500), ((6, 6), 4, 0, 300), ((4, 7), 4, 1, 400)]


def check_crop(namespace):
    Crop = namespace["RandomCrop"]
    x = image((6, 6)) + 1.0             # no pixel is 0, so the zero padding shows
    runs = []
    for shape, size, padding, count in CROP_RUNS:
        on = image(shape) + 1.0
        try:
            runs.append((on, size, padding, 0, outputs_of(Crop(size, padding=padding, seed=0), on, count)))
        except Exception as error:  # noqa: BLE001
            return failed(describe_exception("RandomCrop", "__call__", error)
                          + f"\n  in {crop_label(shape, size, padding, 0)}.")
    try:
        seeded = [outputs_of(Crop(6, padding=2, seed=seed), x, 40) for seed in (7, 7, 8)]
        colour = outputs_of(Crop(5, padding=1, seed=0), image((6, 6, 3)) + 1.0, 20)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("RandomCrop", "__call__", error))
    return crop_verdict(x, image((6, 6, 3)) + 1.0, runs, (7, 8), seeded, colour)


def crop_label(shape, size, padding, seed):
    return f"RandomCrop({size}, padding={padding}, seed={seed}) on a {shape[0]}×{shape[1]} image"


CROP_RANGE_RULE = ("every top edge from 0 to H + 2p - size and every left edge from 0 to W + 2p - size is possible "
                   "(H and W the image's height and width, p the padding), each drawn uniformly")


def missing_windows_hint(seen, last_top, last_left):
    """The rule behind windows that never came up; one edge drawn from the other's range is named only when
    every such edge seen stayed within that range and its own axis had more room, and an edge that stops one
    short of its last position only when the positions before it came up."""
    if seen and last_top != last_left:
        axis = 1 if last_top < last_left else 0          # the longer axis, whose edges can go further
        narrow, wide = sorted((last_top, last_left))
        if max(offset[axis] for offset in seen) <= narrow:
            edge, other, size_of, side = ("left", "top", "W", "width") if axis else ("top", "left", "H", "height")
            return (f"{edge} edges only came from 0..{narrow}, the range of the {other} edges, though they go up to "
                    f"{wide} on this image: each edge has its own range, {edge} from 0 to {size_of} + 2p - size "
                    f"with {size_of} the image's {side}.")
    short = [(edge, last) for axis, (edge, last) in enumerate((("top", last_top), ("left", last_left)))
             if seen and last > 0 and max(offset[axis] for offset in seen) == last - 1]
    if short:
        stops = "; ".join(f"{edge} edges stopped at {last - 1}, one short of {last}" for edge, last in short)
        return (f"{stops}: the last position is possible too, and NumPy's integers leaves out its upper bound, "
                "so that bound is one past the last position.")
    return f"{CROP_RANGE_RULE}."


def crop_verdict(x, colour_x, runs, seeds, seeded, colour):
    """The verdict on RandomCrop from its outputs: `runs` are (image, size, padding, seed, crops of it), every
    window must come up; `seeded` holds 40 crops RandomCrop(6, padding=2) of x, seeds[0], seeds[0], seeds[1];
    `colour` the crops RandomCrop(5, padding=1) of colour_x."""
    for on, size, padding, seed, outputs in runs:
        label = crop_label(on.shape, size, padding, seed)
        seen, problem = crop_offsets(outputs, on, size, padding)
        if problem:
            return failed(f"{label} {problem}.")
        every = set(windows(on, size, padding))
        missing = sorted(every - set(seen))
        if missing:
            last_top, last_left = max(every)[0], max(left for _, left in every)
            return failed(f"{label}: in {len(outputs)} crops, the windows at (top, left) = {missing[:4]} never came up; "
                          f"all {len(every)} positions, top 0..{last_top} and left 0..{last_left}, should.\n"
                          f"  Hint: {missing_windows_hint(seen, last_top, last_left)}")
    a, b, c = (crop_offsets(outputs, x, 6, 2)[0] for outputs in seeded)
    if a != b:
        return failed(f"two RandomCrop(6, padding=2, seed={seeds[0]}) cropped different windows: the seed must make them "
                      "reproducible.\n"
                      f"  Hint: {SEEDED_RULE}")
    if a == c:
        return failed(f"seeds {seeds[0]} and {seeds[1]} gave the same {len(seeded[0])} crops: the seed must drive the random generator.")
    _, problem = crop_offsets(colour, colour_x, 5, 1)
    if problem:
        return failed(f"RandomCrop(5, padding=1) on an image of shape {colour_x.shape} {problem}; pad and crop only height "
                      "and width, never the channels.")
    return passed("✔ RandomCrop takes every size×size window of the zero-padded image, reproducibly from its seed")


def check_compose(namespace):
    Compose = namespace["Compose"]
    x = image((2, 3))
    try:
        outputs = [shown(run_quietly(Compose(steps), x.copy())) for steps in COMPOSE_CASES]
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception("Compose", "__call__", error))
    return compose_verdict(x, *outputs)


# Compose([add 1, times 10]), Compose([]), Compose([times 2, minus 1, squared]): the kernel side builds the same
COMPOSE_CASES = [[lambda a: a + 1, lambda a: a * 10], [], [lambda a: a * 2, lambda a: a - 1, lambda a: a ** 2]]


def compose_verdict(x, both, empty, three):
    """The verdict on the outputs of COMPOSE_CASES on x."""
    def close(got, want):
        return isinstance(got, np.ndarray) and got.shape == want.shape and np.allclose(got, want)

    if not close(both, (x + 1) * 10):
        reverse = close(both, x * 10 + 1)
        return failed("Compose([add 1, times 10]) must give (x + 1) * 10."
                      + ("\n  Hint: you applied them last to first: apply the list in order." if reverse else
                         "\n  Hint: feed each transform the output of the one before it."))
    if not close(empty, x):
        return failed("Compose([]) must return its input unchanged.")
    if not close(three, (2 * x - 1) ** 2):
        return failed("Compose([times 2, minus 1, squared]) must give (2x - 1)²: feed each transform the output of the one before.")
    return passed("✔ Compose applies its transforms in order")


def changed_input(label):
    """A transform that wrote into the image it was given (shared with the judge)."""
    return failed(f"{label} changed the image it was given.\n  Hint: a transform returns a new image and leaves "
                  "its input as it was: a dataset hands it the stored image itself (often a view into the array of "
                  "all images), so a write into it (-=, /=, an assignment into it) changes the dataset, a little "
                  "more every time the sample is read.")


# One call of each transform on a copy of an image, after its check passed: did it write into the copy?
INPUT_PROBES = {"normalize": ("Normalize", (0.1307, 0.3081), {}), "flatten_image": ("FlattenImage", (), {}),
                "flip": ("RandomFlipHorizontal", (), {"p": 1.0, "seed": 0}),
                "crop": ("RandomCrop", (4,), {"padding": 1, "seed": 0})}


def input_problem(namespace, name):
    if name not in INPUT_PROBES:
        return None
    class_name, args, kwargs = INPUT_PROBES[name]
    label = f"{class_name}({', '.join([*map(repr, args), *(f'{k}={v!r}' for k, v in kwargs.items())])}) on a 6×6 image"
    x = image((6, 6))
    given = x.copy()
    try:
        run_quietly(namespace[class_name](*args, **kwargs), given)
    except Exception as error:  # noqa: BLE001
        return failed(describe_exception(class_name, "__call__", error) + f"\n  in {label}.")
    return None if given.shape == x.shape and np.array_equal(given, x) else changed_input(label)


# ── the checks a notebook calls as `check.<name>(...)`: registry.py, one calling convention ──

TRANSFORM_CHECKS = {
    "normalize": check_normalize,
    "flatten_image": check_flatten_image,
    "flip": check_flip,
    "crop": check_crop,
    "compose": check_compose,
}


@register("transform")
def transform_check(namespace, name):
    """One transform: normalize, flatten_image, flip, crop or compose."""
    verdict = TRANSFORM_CHECKS[name](namespace)
    return (verdict.passed and input_problem(namespace, name)) or verdict
