"""Chapter 10's checks: right answers always pass, loops and wrong gradients fail with messages that teach,
and the stand-ins put the notebook back as they found it."""
import numpy as np
import pytest

from autograder.student import gradcheck
from autograder.student.checks import Checker, ch10_conv as convolution, ch10_conv_pool_ties as pool_ties, slow

from helpers.soak import alternative_namespace
from helpers.solved_code import solved_namespace


@pytest.fixture(scope="module")
def ns():
    return solved_namespace("ch10")


@pytest.fixture(scope="module")
def convolution_route():
    """Chapter 10 solved by section 10.5's second route: Conv.backward builds the input gradient with Flip
    and Dilate (the course's solution folds, and uses neither)."""
    return alternative_namespace("ch10", "conv_backward_full_convolution")


@pytest.fixture
def check(ns):
    return Checker(ns, verbose=False)


def einsum_conv(x, w, stride, padding):
    """An independent convolution, for checking the slow reference: einsum over strided windows."""
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    windows = np.lib.stride_tricks.sliding_window_view(x, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    return np.einsum("ncyxij,ocij->noyx", windows, w)


@pytest.mark.parametrize("stride,padding", [(1, 0), (1, 1), (2, 0), (2, 1), (3, 2)])
def test_slow_conv_is_a_convolution(stride, padding):
    rng = np.random.default_rng(stride * 10 + padding)
    x, w = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 2))
    assert np.allclose(slow.conv(stride, padding)(x, w), einsum_conv(x, w, stride, padding))


def test_slow_helpers_on_small_examples():
    a = np.array([1.0, 2.0, 3.0])
    assert slow.dilate((0,), 1)(a).tolist() == [1, 0, 2, 0, 3]
    assert slow.undilate((0,), 1)(np.arange(6.0)).tolist() == [0, 2, 4]
    assert slow.flip((0,))(a).tolist() == [3, 2, 1]
    tile = np.array([[[[1, 5, 0, 2], [3, 2, 1, 1], [9, 0, 4, 3], [2, 7, 0, 1]]]], dtype=float)
    assert slow.max_pool(2)(tile).tolist() == [[[[5, 2], [9, 4]]]]


CASES = [        # (op, input shapes, sample domain): MaxPool's keep each window's values apart (gradcheck.sample)
    (lambda ns: ns["Flip"]((2, 3)), [(1, 2, 3, 3)], "real"),
    (lambda ns: ns["Dilate"]((0, 2), 2), [(2, 2, 3)], "real"),
    (lambda ns: ns["Undilate"]((1,), 2), [(2, 8, 3)], "real"),
    (lambda ns: ns["Conv"](2, 1), [(2, 2, 6, 5), (3, 2, 3, 3)], "real"),
    (lambda ns: ns["Conv"](3, 1), [(1, 2, 7, 6), (2, 2, 3, 2)], "real"),
    (lambda ns: ns["Conv"](1, 2), [(2, 1, 3, 4), (2, 1, 3, 3)], "real"),
    (lambda ns: ns["MaxPool"](2), [(2, 3, 5, 6)], "distinct"),
    (lambda ns: ns["MaxPool"](3), [(1, 2, 6, 7)], "distinct"),
]


@pytest.mark.parametrize("seed", range(8))
def test_correct_backwards_never_fail(ns, check, seed):
    for make, shapes, domains in CASES:
        verdict = check.backward(make(ns), shapes, domains, seed=seed, isolate=["Flip", "Dilate", "Undilate"])
        assert verdict.passed, verdict.message


@pytest.mark.parametrize("shape", [(1,), (1, 1, 4, 4), (2, 3, 5, 6), (1, 2, 6, 7), (3, 2, 10, 8)])
def test_distinct_inputs_keep_every_window_out_of_the_step(shape):
    """MaxPool's finite differences split the gradient between two values of a window closer than STEP
    (a right backward then fails, as a secret draw once did in CI): its checks draw values far apart."""
    for seed in range(50):
        x = gradcheck.sample(shape, "distinct", np.random.default_rng(seed))
        gaps = np.diff(np.sort(x.ravel()))
        assert x.shape == shape and x.min() >= -2 and x.max() <= 2
        assert gaps.size == 0 or gaps.min() >= max(2 / x.size - 1e-6, 10 * gradcheck.STEP), (seed, gaps.min())


def test_near_tied_window_splits_finite_differences():
    """Why the domain exists: a window whose two largest values are closer than STEP fails a right backward."""
    a = np.array([[[[1.0, 1.0 + gradcheck.STEP / 2], [-1.0, 0.0]]]])
    grad, = gradcheck.numerical_gradients(slow.max_pool(2), [a], np.ones((1, 1, 1, 1)))
    assert 0 < grad[0, 0, 0, 0] < 1 and 0 < grad[0, 0, 0, 1] < 1


def test_isolation_puts_the_notebook_back(ns, check):
    originals = {name: ns[name] for name in ("Flip", "Dilate")}
    check.backward(ns["Conv"](2, 1), [(1, 1, 5, 5), (1, 1, 3, 3)], isolate=["Flip", "Dilate"])
    assert {name: ns[name] for name in originals} == originals


def test_conv_backward_is_graded_with_the_course_flip(convolution_route):
    """A broken Flip costs the Flip exercise, not Conv.backward, when Conv.backward is built from Flip."""
    ns, check = convolution_route, Checker(convolution_route, verbose=False)
    broken = type("Flip", (ns["Flip"],), {"forward": lambda self, a: a.copy()})
    saved = ns["Flip"]
    ns["Flip"] = broken
    try:
        assert not check.backward(ns["Conv"](1, 1), [(1, 2, 4, 4), (2, 2, 3, 3)]).passed
        assert check.backward(ns["Conv"](1, 1), [(1, 2, 4, 4), (2, 2, 3, 3)], isolate=["Flip", "Dilate"]).passed
    finally:
        ns["Flip"] = saved


def test_both_routes_of_the_input_gradient_agree(ns, convolution_route):
    """The fold (the solution) and the full convolution (the alternative), on strides and paddings the
    capstone does not use, to float64 rounding."""
    rng = np.random.default_rng(5)
    for stride, padding, x_shape, w_shape in [(1, 0, (2, 3, 5, 5), (4, 3, 3, 3)), (2, 1, (2, 2, 7, 6), (3, 2, 3, 2)),
                                              (3, 2, (1, 2, 8, 7), (2, 2, 3, 3))]:
        x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
        grads = []
        for namespace in (ns, convolution_route):
            Tensor = namespace["Tensor"]
            xt, wt = Tensor(x, dtype=np.float64, requires_grad=True), Tensor(w, dtype=np.float64, requires_grad=True)
            op = namespace["Conv"](stride, padding)
            out = op(xt, wt)
            grads.append(op.backward(Tensor(np.ones(out.shape), dtype=np.float64), out)[0].data)
        assert np.allclose(*grads, rtol=1e-12, atol=1e-12), (stride, padding)


def loop_conv(ns, over):
    """A right Conv whose forward loops over `over`: "pixels" (every output element) or "images"."""
    Conv = ns["Conv"]

    def forward(self, x, w):
        if over == "images":
            return np.stack([Conv.forward(self, image[None], w)[0] for image in x])
        out = np.empty(Conv.forward(self, x, w).shape)
        for index in np.ndindex(out.shape):
            out[index] = Conv.forward(self, x, w)[index]
        return out

    return type("LoopConv", (Conv,), {"forward": forward})


@pytest.mark.parametrize("over", ["pixels", "images"])
def test_loops_fail_the_vectorization_check_with_a_hint(ns, check, over):
    verdict = check.vectorized(loop_conv(ns, over)(1, 1), [(1, 2, 6, 6), (3, 2, 3, 3)], [(4, 2, 12, 12), (3, 2, 3, 3)])
    assert not verdict.passed
    assert "grows with the batch or the image size" in verdict.message and "Hint:" in verdict.message


def test_vectorized_solutions_pass(ns, check):
    assert check.vectorized(ns["Conv"](2, 0), [(1, 1, 7, 7), (2, 1, 3, 3)], [(3, 1, 15, 11), (2, 1, 3, 3)]).passed
    assert check.vectorized(ns["MaxPool"](2), [(1, 2, 4, 4)], [(3, 2, 10, 8)]).passed


def test_the_line_counter_sees_only_student_code():
    assert convolution.is_student_code("/tmp/ipykernel_1234/567.py")
    assert not convolution.is_student_code(np.__file__)
    assert not convolution.is_student_code(convolution.__file__)


def test_conv2d_without_bias_broadcast_is_caught(ns, check):
    Conv2d = ns["Conv2d"]

    def forward(self, x):
        return ns["conv"](x, self.weight, self.stride, self.padding)          # forgets the bias

    saved = ns["Conv2d"]
    ns["Conv2d"] = type("Conv2d", (Conv2d,), {"forward": forward})
    try:
        verdict = check.conv2d()
    finally:
        ns["Conv2d"] = saved
    assert not verdict.passed and "bias" in verdict.message
    assert check.conv2d(in_channels=1, out_channels=2, kernel_size=5, stride=2, padding=2, size=(9, 8), seed=3).passed


def test_checks_write_nothing_to_stderr(ns, check, capfd):
    check.backward(ns["Conv"](2, 1), [(1, 1, 5, 5), (1, 1, 3, 3)], isolate=["Flip", "Dilate"])
    check.vectorized(loop_conv(ns, "images")(1, 1), [(1, 2, 6, 6), (3, 2, 3, 3)], [(2, 2, 8, 8), (3, 2, 3, 3)])
    assert capfd.readouterr().err == ""


def batch_last(array):
    """Whether an NCHW array lies in memory as (C, H, W, N), the layout chapter 10 computes in."""
    return array.transpose(1, 2, 3, 0).flags.c_contiguous


def test_the_solution_keeps_the_cnn_batch_last_in_memory(ns):
    """Section 10.1's layout, through one training step of the capstone's CNN: every activation from the
    first Conv to MaxPool, and every gradient the engine stores on them up to MaxPool's input, lies
    batch-last in memory (MaxPool's own output gets its gradient from Flatten, in C order: its backward
    converts it once). An op or an engine that makes C order instead (`.copy()`, `np.zeros(shape)`)
    computes the same values but costs the CNN a fifth of its speed, which no value check would notice."""
    Tensor = ns["Tensor"]
    images = Tensor(np.random.default_rng(0).standard_normal((6, 1, 28, 28)), requires_grad=False)
    loss = ns["SoftmaxLoss"]()(ns["build_cnn"]()(images), Tensor(np.arange(6) % 10, requires_grad=False))
    loss.backward()
    maps = [node for node in ns["topological_order"](loss)
            if node.data.ndim == 4 and type(node._op).__name__ in ("Conv", "Add", "ReLU", "MaxPool")]
    assert sorted(type(node._op).__name__ for node in maps) == ["Add", "Add", "Conv", "Conv", "MaxPool", "ReLU", "ReLU"]
    for node in maps:
        name = type(node._op).__name__
        layout_kept = batch_last(node.data)
        assert layout_kept, f"{name}'s output, strides {node.data.strides}"
        if name != "MaxPool":
            layout_kept = batch_last(node.grad)
            assert layout_kept, f"the gradient stored on {name}'s output, strides {node.grad.strides}"


# ── MaxPool's backward at ties (checks/ch10_conv_pool_ties.py) ──

def tied_case(k=2, shape=(2, 3, 5, 7), seed=3):
    return pool_ties.tied_case(shape, k, np.random.default_rng(seed))


def spread(a, k, upstream, share):
    """A gradient that gives each tile's out_grad to its tied maxima by `share(is_max)` (rows of k*k)."""
    values = pool_ties.tiles(a, k)
    is_max = values == values.max(axis=-1, keepdims=True)
    grad = np.zeros_like(a)
    grad[:, :, :a.shape[2] // k * k, :a.shape[3] // k * k] = pool_ties.untiled(share(is_max) * upstream[..., None], k)
    return grad


def first_only(is_max):
    return (np.cumsum(is_max, axis=-1) == 1) & is_max


@pytest.mark.parametrize("k", [2, 3])
def test_a_tied_input_ties_every_window_and_leaves_leftovers_below_the_maxima(k):
    a, out, upstream = tied_case(k)
    values = pool_ties.tiles(a, k)
    assert ((values == values.max(axis=-1, keepdims=True)).sum(axis=-1) >= 2).all()
    assert np.all(np.abs(upstream) >= 0.5)


@pytest.mark.parametrize("k", [2, 3])
def test_every_split_of_a_tie_that_adds_up_is_a_valid_gradient(k):
    a, out, upstream = tied_case(k)
    for share in (first_only, lambda m: m / m.sum(axis=-1, keepdims=True)):
        assert pool_ties.tie_split_problem("MaxPool", a, k, upstream, spread(a, k, upstream, share)) is None


def test_gradient_on_every_tied_maximum_fails_and_says_it_counts_the_tile_once_per_tie():
    a, out, upstream = tied_case()
    message = pool_ties.tie_split_problem("MaxPool", a, 2, upstream, spread(a, 2, upstream, lambda m: m * 1.0))
    assert "do not add up to out_grad" in message and "every tied maximum got all of it" in message


def test_off_maximum_opposite_sign_and_leftover_gradients_fail_each_with_its_own_message():
    a, out, upstream = tied_case()
    half = spread(a, 2, upstream, lambda m: m / m.sum(axis=-1, keepdims=True))
    moved = half.copy()
    values = pool_ties.tiles(a, 2)
    n, c, y, x = np.argwhere((values < values.max(axis=-1, keepdims=True)).any(axis=-1))[0]   # a tile not all tied
    low = np.argwhere(values[n, c, y, x] < values[n, c, y, x].max())[0][0]
    moved[n, c, 2 * y + low // 2, 2 * x + low % 2] = upstream[n, c, y, x]
    assert "not its window's maximum" in pool_ties.tie_split_problem("MaxPool", a, 2, upstream, moved)
    ties = int((values[0, 0, 0, 0] == values[0, 0, 0, 0].max()).sum())
    signs = spread(a, 2, upstream, first_only)             # the first tile's shares: 2 and -1 times out_grad
    signs[0, 0, :2, :2] = 0
    first, second = np.argwhere(values[0, 0, 0, 0] == values[0, 0, 0, 0].max())[:2, 0]
    signs[0, 0, first // 2, first % 2] = 2 * upstream[0, 0, 0, 0]
    signs[0, 0, second // 2, second % 2] = -upstream[0, 0, 0, 0]
    assert ties >= 2 and "opposite sign" in pool_ties.tie_split_problem("MaxPool", a, 2, upstream, signs)
    leftover = half.copy()
    leftover[0, 0, 0, -1] = 0.5                                    # the 7th column: no 2 × 2 window covers it
    assert "rows or columns pooling drops" in pool_ties.tie_split_problem("MaxPool", a, 2, upstream, leftover)


def test_conv2d_with_a_drawn_bias_is_caught(ns, check):
    """The check sets its own bias before running forward, so the layer's starting bias is read first: zeros."""
    Conv2d, Parameter = ns["Conv2d"], ns["Parameter"]

    class DrawnBias(Conv2d):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True, *, seed=None):
            super().__init__(in_channels, out_channels, kernel_size, stride, padding, bias, seed=seed)
            if bias:
                bound = 1 / np.sqrt(in_channels * kernel_size ** 2)
                self.bias = Parameter(np.random.default_rng(seed).uniform(-bound, bound, out_channels))

    saved = ns["Conv2d"]
    ns["Conv2d"] = DrawnBias
    try:
        verdict = check.conv2d()
    finally:
        ns["Conv2d"] = saved
    assert not verdict.passed
    for words in (".bias should be 4 zeros", "nonzero values, the largest bias[", "starts at zero"):
        assert words in verdict.message, verdict.message
    assert convolution.bias_init_problem("Conv2d(...)", np.zeros(3)) is None
    assert check.conv2d().passed


@pytest.mark.parametrize("stride,padding,shapes", [(1, 0, [(1, 1, 4, 4), (1, 1, 2, 2)]), (2, 1, [(2, 2, 6, 5), (3, 2, 3, 2)]),
                                                   (3, 2, [(1, 2, 7, 6), (2, 2, 3, 2)])])
def test_the_conv_slip_predicts_the_weight_gradient(stride, padding, shapes):
    """The slip behind the hint for zeros given to images that need a gradient predicts w's gradient exactly:
    that of finite differences of the slow convolution."""
    from autograder.student.checks import slips
    rng = np.random.default_rng(stride + padding)
    x, w = (rng.standard_normal(s) for s in shapes)
    out = slow.conv(stride, padding)(x, w)
    upstream = rng.standard_normal(out.shape)
    numeric = gradcheck.central_differences([x, w], gradcheck.perturbed_outputs(slow.conv(stride, padding), [x, w]),
                                            upstream)
    case = slips.Case("Conv", {"stride": stride, "padding": padding}, [x, w], out, upstream)
    zeros, grad_w = slips.SLIPS["Conv"][0].gradients(case)
    assert not zeros.any() and zeros.shape == x.shape
    assert np.allclose(grad_w, numeric[1], rtol=1e-6, atol=1e-7)


def test_zeros_for_images_that_need_a_gradient_are_caught(ns):
    """A backward testing w's requires_grad for the saving: right when both inputs need a gradient, caught (with
    the hint) when only the filters are a constant."""
    namespace, conv = dict(ns), ns["Conv"]

    class FiltersTested(conv):
        def backward(self, out_grad, node):
            grads = conv.backward(self, out_grad, node)
            if not node._inputs[1].requires_grad:
                return ns["Tensor"](np.zeros(node._inputs[0].shape)), grads[1]
            return grads

    namespace["Conv"] = FiltersTested
    check = Checker(namespace, verbose=False)
    assert check.backward(FiltersTested(2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 2)], seed=27).passed
    verdict = check.backward(FiltersTested(2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 2)], seed=28, constant=[1])
    assert not verdict.passed
    assert "(b is a constant: requires_grad=False)" in verdict.message
    assert "your gradient for a, the images x, is all zeros" in verdict.message


def swapped_class(ns, name, **methods):
    """The notebook's class `name` with `methods` replaced: a student's variant, for one check."""
    namespace = dict(ns)
    namespace[name] = type(name, (ns[name],), methods)
    return namespace, namespace[name]


def test_a_flip_that_returns_numpys_view_fails_only_where_the_text_asks_for_a_copy(ns, check):
    namespace, Flip = swapped_class(ns, "Flip", forward=lambda self, a: np.flip(a, self.axes))
    student = Checker(namespace, verbose=False)
    assert student.forward(Flip((0,)), slow.flip((0,)), shapes=[(4,)]).passed
    verdict = student.forward(Flip((0,)), slow.flip((0,)), shapes=[(4,)], owns_memory=True)
    assert not verdict.passed and "shares its memory with input a" in verdict.message, verdict.message
    assert check.forward(ns["Flip"]((0,)), slow.flip((0,)), shapes=[(4,)], owns_memory=True).passed


def test_conv2d_names_an_untransposed_draw_and_a_bias_added_without_broadcast(ns, check):
    Parameter, kaiming_uniform = ns["Parameter"], ns["kaiming_uniform"]

    def untransposed(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True, *, seed=None):
        ns["Conv2d"].__init__(self, in_channels, out_channels, kernel_size, stride, padding, bias, seed=seed)
        draw = kaiming_uniform(in_channels * kernel_size ** 2, out_channels, seed=seed).data
        self.weight = Parameter(draw.reshape(out_channels, in_channels, kernel_size, kernel_size))

    namespace, _ = swapped_class(ns, "Conv2d", __init__=untransposed)
    verdict = Checker(namespace, verbose=False).conv2d()
    assert not verdict.passed and "without the transpose" in verdict.message, verdict.message

    def unbroadcast(self, x):
        return ns["conv"](x, self.weight, self.stride, self.padding) + self.bias.reshape((1, -1, 1, 1))

    namespace, _ = swapped_class(ns, "Conv2d", forward=unbroadcast)
    verdict = Checker(namespace, verbose=False).conv2d()
    assert not verdict.passed and "backward from the output to .bias raised" in verdict.message, verdict.message
    assert "made from an operand of shape (1, 4, 1, 1)" in verdict.message, verdict.message
    assert check.conv2d().passed


def conv_with(ns, forward=None, backward=None):
    methods = {k: v for k, v in (("forward", forward), ("backward", backward)) if v is not None}
    namespace, Conv = swapped_class(ns, "Conv", **methods)
    return Checker(namespace, verbose=False), Conv


def test_a_flipped_filter_and_a_batch_first_reshape_get_their_own_hints(ns):
    conv = ns["Conv"]
    flipped, Flipped = conv_with(ns, forward=lambda self, x, w: conv.forward(self, x, w[:, :, ::-1, ::-1]))

    def batch_first(self, x, w):
        out = conv.forward(self, x, w)                   # NCHW over batch-last memory: its product, read wrongly
        n_out = w.shape[0]
        product = out.transpose(1, 2, 3, 0).reshape(n_out, -1)
        return product.reshape(n_out, x.shape[0], *out.shape[2:]).transpose(1, 0, 2, 3)

    mixed, Mixed = conv_with(ns, forward=batch_first)
    shapes = [(2, 3, 5, 5), (4, 3, 3, 3)]
    one = flipped.forward(Flipped(1, 1), slow.conv(1, 1), shapes=shapes).message
    two = mixed.forward(Mixed(1, 1), slow.conv(1, 1), shapes=shapes).message
    assert "rotated by half a turn" in one and "in the wrong place" in two and one != two


def test_an_unflipped_transposed_convolution_is_named(ns):
    conv = ns["Conv"]

    def unflipped(self, out_grad, node):
        x, w = node._inputs
        mirrored = ns["Tensor"](w.data[:, :, ::-1, ::-1].copy(), dtype=np.float64)
        mirror = ns["Tensor"](node.data, dtype=np.float64)
        mirror._op, mirror._inputs = self, (x, mirrored)
        grad_x, _ = conv.backward(self, out_grad, mirror)
        return grad_x, conv.backward(self, out_grad, node)[1]

    student, Conv = conv_with(ns, backward=unflipped)
    verdict = student.backward(Conv(2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 3)])
    assert not verdict.passed and "filters that were not flipped" in verdict.message, verdict.message


def test_a_backward_that_reuses_its_last_forward_fails_when_two_forwards_ran(ns, check):
    conv = ns["Conv"]

    def reusing(self, out_grad, node):
        seen, patches = getattr(self, "saved", (None, None))
        if seen is not None:                              # whatever forward ran last
            node = ns["Tensor"](node.data, dtype=np.float64)
            node._op, node._inputs = self, (ns["Tensor"](seen, dtype=np.float64), self.weights_seen)
        return conv.backward(self, out_grad, node)

    def remembering(self, x, w):
        self.weights_seen = ns["Tensor"](w, dtype=np.float64)
        return conv.forward(self, x, w)

    student, Conv = conv_with(ns, forward=remembering, backward=reusing)
    shapes = [(2, 2, 5, 5), (3, 2, 3, 3)]
    assert student.backward(Conv(1, 1), shapes=shapes).passed
    verdict = student.backward(Conv(1, 1), shapes=shapes, other_forward=True)
    assert not verdict.passed and "forward ran on these inputs and then on others" in verdict.message
    assert check.backward(ns["Conv"](1, 1), shapes=shapes, other_forward=True, layout="batch_last").passed


def test_a_max_pool_writing_through_a_merged_reshape_fails_on_batch_last_inputs(ns, check):
    def planes(self, out_grad, node):
        k, (a, out) = self.kernel_size, (node._inputs[0].data, node.data)
        n, c, h, w = a.shape
        rows, cols = h // k * k, w // k * k
        grad = np.zeros_like(a)
        flat = grad.reshape(n * c, h, w)                  # a view of C-ordered memory only
        maxima, g = out.reshape(n * c, rows // k, cols // k), out_grad.data.reshape(n * c, rows // k, cols // k)
        left = np.ones_like(maxima, dtype=bool)
        for i in range(k):
            for j in range(k):
                is_max = (a.reshape(n * c, h, w)[:, i:rows:k, j:cols:k] == maxima) & left
                flat[:, i:rows:k, j:cols:k] = is_max * g
                left &= ~is_max
        return ns["Tensor"](grad)

    namespace, MaxPool = swapped_class(ns, "MaxPool", backward=planes)
    student = Checker(namespace, verbose=False)
    assert student.backward(MaxPool(2), shapes=[(3, 2, 6, 6)], domains="distinct").passed
    verdict = student.backward(MaxPool(2), shapes=[(3, 2, 6, 6)], domains="distinct", layout="batch_last")
    assert not verdict.passed and "batch-last in memory" in verdict.message, verdict.message
    assert check.backward(ns["MaxPool"](2), shapes=[(3, 2, 6, 6)], domains="distinct", layout="batch_last").passed
    assert check.forward(ns["MaxPool"](2), slow.max_pool(2), shapes=[(3, 2, 6, 6)], layout="batch_last").passed
