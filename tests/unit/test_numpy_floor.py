"""The NumPy floor of benchmarks/train_mnist.py computes what babygrad computes: the same initial
weights, the same gradients on the same batch, the same Adam steps. Both run in float64 here (babygrad
with its DEFAULT_DTYPE set to float64), so the only differences left are rounding, and the tolerance
can be tight: a floor that skipped or changed part of the work would show at once."""
import numpy as np
import pytest

from autograder.build import authoring
from autograder.student.checks.capstone import RECIPES, mnist
from benchmarks import numpy_floor

from helpers.course_paths import ROOT

BATCHES = 3          # Adam steps compared, each on a new batch
TOLERANCE = 1e-9     # relative to each gradient's largest element; float64 rounding is ~1e-15


def babygrad_float64():
    """The solved library, every chapter's exported code, with float64 as the default dtype."""
    namespace = {"__name__": "babygrad"}
    for script in sorted((ROOT / "chapters").glob("ch*.py")):
        code = "import numpy as np\n" + "\n".join(authoring.exported_code(script.read_text(encoding="utf-8")))
        code = code.replace('DEFAULT_DTYPE = "float32"', 'DEFAULT_DTYPE = "float64"')
        exec(compile(code, str(script), "exec"), namespace)  # noqa: S102 (the course's own code)
    assert namespace["DEFAULT_DTYPE"] == "float64"
    return namespace


@pytest.fixture(scope="module")
def bg():
    return babygrad_float64()


def as_floor(kind, parameters):
    """babygrad's parameter arrays in the floor's layout: biases as vectors, conv filters as (O, C·k·k)."""
    arrays = [p if isinstance(p, np.ndarray) else p.data for p in parameters]
    if kind == "mlp":
        return [a.reshape(a.shape[-1]) if a.shape[0] == 1 else a for a in arrays]
    w1, b1, w2, b2, w3, b3 = arrays
    return [w1.reshape(len(w1), -1), b1, w2.reshape(len(w2), -1), b2, w3, b3.reshape(-1)]


def assert_close(name, floor, library):
    assert floor.shape == library.shape, f"{name}: shape {floor.shape} in NumPy, {library.shape} in babygrad"
    scale = max(float(np.abs(library).max()), 1e-12)
    worst = float(np.abs(floor - library).max()) / scale
    assert worst <= TOLERANCE, f"{name}: NumPy and babygrad differ by {worst:.2e} of the largest element"


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_floor_matches_babygrad(bg, kind):
    recipe = RECIPES[kind]
    images, labels = mnist("train", recipe.image_shape)
    order = np.random.default_rng(0).permutation(len(images))[:BATCHES * recipe.batch_size]
    images, labels = images[order].astype(np.float64), labels[order]

    model = bg[f"build_{kind}"]()
    params = model.parameters()
    optimizer = bg["Adam"](params, lr=recipe.lr)
    network = numpy_floor.NETWORKS[kind](np.float64)
    floor_optimizer = numpy_floor.Adam(network.params, recipe.lr)
    assert len(network.params) == len(params), f"{kind}: {len(network.params)} parameters in NumPy, {len(params)} in babygrad"
    for i, (ours, theirs) in enumerate(zip(network.params, as_floor(kind, params))):
        assert ours.dtype == theirs.dtype == np.float64
        np.testing.assert_array_equal(ours, theirs, err_msg=f"{kind}: initial values of parameter {i} differ")

    for first in range(0, len(images), recipe.batch_size):
        x, y = images[first:first + recipe.batch_size], labels[first:first + recipe.batch_size]
        optimizer.zero_grad()
        loss = bg["SoftmaxLoss"]()(model(bg["Tensor"](x, dtype="float64", requires_grad=False)), y)
        loss.backward()
        floor_loss, grads = network.loss_and_grads(x, y)
        step = f"{kind}, batch {first // recipe.batch_size}"
        assert abs(floor_loss - loss.item()) <= TOLERANCE * abs(loss.item()), f"{step}: the losses differ"
        for i, (ours, theirs) in enumerate(zip(grads, as_floor(kind, [p.grad for p in params]))):
            assert_close(f"{step}, gradient of parameter {i}", ours, theirs)
        optimizer.step()
        floor_optimizer.step(grads)
        for i, (ours, theirs) in enumerate(zip(network.params, as_floor(kind, params))):
            assert_close(f"{step}, parameter {i} after Adam's step", ours, theirs)


def test_floor_learns():
    """A floor that computed nothing would be fast: one short epoch must beat chance by far."""
    images, labels = mnist("train", RECIPES["mlp"].image_shape)
    network, _ = numpy_floor.train_epoch("mlp", images[:2000], labels[:2000], 64, RECIPES["mlp"].lr)
    test_images, test_labels = mnist("test", RECIPES["mlp"].image_shape)
    assert numpy_floor.accuracy(network, test_images[:1000], test_labels[:1000]) > 0.8
