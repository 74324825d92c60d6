"""Chapter 10's catalog of typical mistakes, and of correct answers written another way (see ch03.py).

The capstone cell trains the whole network with the student's ops, so a mistake in an op the network
uses can cost the capstone too: the `loses` below say so wherever the network no longer reaches 97%
(or no longer runs). A Conv with Python loops over images or pixels is not in this catalog, only in
tests/unit/test_ch10_conv.py: its capstone would run for minutes in every test run.
"""
from autograder.build.submissions import right, wrong



FLIP_BACKWARD = "return Tensor(np.flip(out_grad.data, self.axes).copy())"
DILATE_BACKWARD = "return Tensor(Undilate(self.axes, self.dilation).forward(out_grad.data))"
DILATE_SHAPE = "            shape[axis] = (a.shape[axis] - 1) * step + 1"
UNDILATE_FORWARD = '''        index = [slice(None)] * a.ndim
        for axis in self.axes:
            index[axis] = slice(None, None, self.dilation + 1)
        return a[tuple(index)].copy()'''
UNDILATE_BACKWARD = '''        grad = np.zeros(a.shape, dtype=out_grad.data.dtype)
        grad[tuple(index)] = out_grad.data
        return Tensor(grad)'''
IM2COL_STRIDE = "windows = sliding_window_view(x, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]"
IM2COL_PAD = "np.pad(x.transpose(1, 2, 3, 0), ((0, 0), (p, p), (p, p), (0, 0)))"
CONV_GRAD_W = "grad_w = (g @ patches.T).reshape(w.shape)"
CONV_FOLD = "padded[:, i:i + s * out_h:s, j:j + s * out_w:s] += cols[:, i, j]"
CONV_CROP = "grad_x = padded[:, p:p + height, p:p + width].transpose(3, 0, 1, 2)"
POOL_GRAD = "np.multiply(is_max, g, out=grad[:, :, i:rows:k, j:cols:k])"
POOL_CLAIM = '''                is_max = a[:, :, i:rows:k, j:cols:k] == out
                is_max &= unclaimed
                np.multiply(is_max, g, out=grad[:, :, i:rows:k, j:cols:k])
                unclaimed ^= is_max'''
POOL_FORWARD = '''        out = np.copy(a[:, :, 0:rows:k, 0:cols:k])         # in a's memory order, unlike .copy()
        for i in range(k):
            for j in range(k):
                np.maximum(out, a[:, :, i:rows:k, j:cols:k], out=out)
        return out'''
POOL_BACKWARD = """        k = self.kernel_size
        a, out = node._inputs[0].data, node.data
        rows, cols = a.shape[2] // k * k, a.shape[3] // k * k
        grad = np.zeros_like(a, dtype=out_grad.data.dtype)
        unclaimed = np.ones_like(out, dtype=bool)          # tiles whose maximum has not had its gradient yet
        g = np.empty_like(out, dtype=out_grad.data.dtype)  # out_grad in out's memory order
        g[...] = out_grad.data
        for i in range(k):
            for j in range(k):
                is_max = a[:, :, i:rows:k, j:cols:k] == out
                is_max &= unclaimed
                np.multiply(is_max, g, out=grad[:, :, i:rows:k, j:cols:k])
                unclaimed ^= is_max                        # is_max is inside unclaimed: this removes it
        return Tensor(grad)"""
CONV2D_BIAS = "return out + self.bias.reshape((1, -1, 1, 1)).broadcast_to(out.shape)"
CONV2D_INIT = '''        fan_in = in_channels * kernel_size * kernel_size
        w = kaiming_uniform(fan_in, out_channels, seed=seed).data'''
CNN = '''    return Sequential(
        Conv2d(1, 8, 3, stride=2, padding=1, seed=1), ReLU(),
        Conv2d(8, 16, 3, padding=1, seed=2), ReLU(), MaxPool2d(2),
        Flatten(), Linear(16 * 7 * 7, 10, seed=3))'''

MISTAKES = [
    # Flip
    wrong("flip_backward_identity", "passes out_grad through unflipped", "flip", FLIP_BACKWARD,
          "return out_grad", ["test_flip_backward"]),
    wrong("flip_backward_all_axes", "flips out_grad along every axis, not only `axes`", "flip", FLIP_BACKWARD,
          "return Tensor(np.flip(out_grad.data).copy())", ["test_flip_backward"]),
    wrong("flip_forward_last_axis", "flips only the last axis", "flip", "return np.flip(a, self.axes).copy()",
          "return np.flip(a, -1).copy()", ["test_flip_forward", "test_flip_backward"]),
    # Dilate
    wrong("dilate_trailing_zeros", "n · (d + 1) elements: zeros after the last one too", "dilate", DILATE_SHAPE,
          "            shape[axis] = a.shape[axis] * step", ["test_dilate_forward", "test_dilate_backward"]),
    wrong("dilate_backward_identity", "returns out_grad in the dilated shape", "dilate", DILATE_BACKWARD,
          "return out_grad", ["test_dilate_backward"]),
    wrong("dilate_backward_dilates", "dilates out_grad again instead of undilating it", "dilate", DILATE_BACKWARD,
          "return Tensor(Dilate(self.axes, self.dilation).forward(out_grad.data))", ["test_dilate_backward"]),
    # Undilate
    wrong("undilate_step_d", "keeps every d-th element instead of every (d + 1)-th", "undilate", UNDILATE_FORWARD,
          UNDILATE_FORWARD.replace("slice(None, None, self.dilation + 1)", "slice(None, None, self.dilation)"),
          ["test_undilate_forward", "test_undilate_backward"]),
    wrong("undilate_backward_dilate", "dilates out_grad: the right values, but in the wrong shape when the input's "
          "length is not (m - 1)(d + 1) + 1", "undilate", UNDILATE_BACKWARD,
          "        return Tensor(Dilate(self.axes, self.dilation).forward(out_grad.data))", ["test_undilate_backward"]),
    wrong("undilate_backward_ones", "puts ones at the kept positions, forgetting out_grad", "undilate", UNDILATE_BACKWARD,
          UNDILATE_BACKWARD.replace("grad[tuple(index)] = out_grad.data", "grad[tuple(index)] = 1.0"),
          ["test_undilate_backward"]),
    # Conv
    wrong("conv_ignores_stride", "im2col keeps every window position, whatever the stride", "conv", IM2COL_STRIDE,
          "windows = sliding_window_view(x, (kh, kw), axis=(1, 2))",
          ["test_conv_forward", "test_conv_backward", "test_capstone_cnn"]),
    wrong("conv_ignores_padding", "im2col forgets to pad", "conv", IM2COL_PAD, "x.transpose(1, 2, 3, 0)",
          ["test_conv_forward", "test_conv_backward", "test_capstone_cnn"]),
    wrong("conv_output_reshaped_batch_first", "reshapes the batch-last product as if it were (O, N, H_out, W_out): "
          "outputs land in other images", "conv",
          "return out.reshape(n_out, height, width, x.shape[0]).transpose(3, 0, 1, 2)",
          "return out.reshape(n_out, x.shape[0], height, width).transpose(1, 0, 2, 3)",
          ["test_conv_forward", "test_conv_backward", "test_capstone_cnn"]),
    wrong("conv_backward_g_batch_first", "arranges out_grad batch-first, against the patches' batch-last columns",
          "conv", "g = out_grad.data.transpose(1, 2, 3, 0).reshape(n_out, -1)",
          "g = out_grad.data.transpose(1, 0, 2, 3).reshape(n_out, -1)", ["test_conv_backward", "test_capstone_cnn"]),
    wrong("conv_backward_fold_assigns", "folds with = instead of +=: overlapping patches keep one share",
          "conv", CONV_FOLD, CONV_FOLD.replace("+=", "="),
          ["test_conv_backward", "test_capstone_cnn"]),     # the CNN still learns, but its gradients are not the model's
    wrong("conv_backward_fold_no_stride", "folds into unstrided slices: right for stride 1 only", "conv", CONV_FOLD,
          "padded[:, i:i + out_h, j:j + out_w] += cols[:, i, j]", ["test_conv_backward"]),
    wrong("conv_backward_keeps_padding", "returns the gradient of the padded input", "conv", CONV_CROP,
          "grad_x = padded.transpose(3, 0, 1, 2)", ["test_conv_backward", "test_capstone_cnn"]),
    wrong("conv_backward_grad_w_transposed", "patches @ g.T instead of g @ patches.T", "conv", CONV_GRAD_W,
          "grad_w = (patches @ g.T).reshape(w.shape)", ["test_conv_backward", "test_capstone_cnn"]),
    # a Conv whose images (a first layer) or whose filters are constants: the saving must keep the other gradient
    wrong("conv_backward_zeros_when_filters_constant", "tests the filters' requires_grad for the saving, not the "
          "images': zeros for x whenever w is a constant", "conv", "if not node._inputs[0].requires_grad:",
          "if not node._inputs[1].requires_grad:", ["test_conv_backward"]),
    wrong("conv_backward_images_grad_w_transposed", "in the branch for images that need no gradient, the weights' "
          "gradient as patches @ g.T", "conv", "return Tensor(np.zeros_like(x)), Tensor(grad_w)",
          "return Tensor(np.zeros_like(x)), Tensor((patches @ g.T).reshape(w.shape))",
          ["test_conv_backward", "test_capstone_cnn"]),
    # MaxPool
    wrong("max_pool_backward_cropped", "returns the gradient of the cropped input: the wrong shape when H or W is "
          "not a multiple of k", "max_pool", "grad = np.zeros_like(a, dtype=out_grad.data.dtype)",
          "grad = np.zeros_like(a[:, :, :rows, :cols], dtype=out_grad.data.dtype)", ["test_max_pool_backward"]),
    wrong("max_pool_backward_marks_input", "marks each claimed maximum by writing -inf into the input", "max_pool",
          POOL_CLAIM,
          "                window = a[:, :, i:rows:k, j:cols:k]\n"
          "                is_max = window == out\n"
          "                grad[:, :, i:rows:k, j:cols:k] = np.where(is_max, g, 0)\n"
          "                window[is_max] = -np.inf      # claimed: an equal value further on is not a maximum",
          ["test_max_pool_backward", "test_capstone_cnn"]),
    wrong("max_pool_backward_every_tie", "gives out_grad to every element equal to its tile's maximum: a tie "
          "counts the tile's output once per tied element", "max_pool", "                is_max &= unclaimed\n", "",
          ["test_max_pool_backward", "test_capstone_cnn"]),
    wrong("max_pool_backward_ones", "puts 1 at the maximum, forgetting out_grad", "max_pool", POOL_GRAD,
          "np.multiply(is_max, 1.0, out=grad[:, :, i:rows:k, j:cols:k])", ["test_max_pool_backward", "test_capstone_cnn"]),
    # Layers
    wrong("conv2d_bias_unshaped", "adds the bias without reshaping it to (1, out_channels, 1, 1)", "conv2d", CONV2D_BIAS,
          "return out + self.bias.broadcast_to(out.shape)", ["test_conv2d", "test_capstone_cnn"]),
    wrong("conv2d_bias_even_when_false", "tests `bias is not None`, so bias=False still makes a bias of zeros",
          "conv2d", "self.bias = Parameter(np.zeros(out_channels)) if bias else None",
          "self.bias = Parameter(np.zeros(out_channels)) if bias is not None else None", ["test_conv2d"]),
    wrong("conv2d_unit_init", "draws weights uniformly in [-1, 1] instead of Kaiming's bound", "conv2d", CONV2D_INIT,
          '''        fan_in = in_channels * kernel_size * kernel_size
        w = np.random.default_rng(seed).uniform(-1, 1, (fan_in, out_channels))''', ["test_conv2d"]),
    wrong("max_pool2d_default_size", "always pools 2 × 2, ignoring kernel_size", "conv2d",
          "return max_pool(x, self.kernel_size)", "return max_pool(x)", ["test_max_pool2d"]),
    # with more output than input channels, these bounds are within reach of the right one: the variance tells
    wrong("conv2d_fan_out", "Kaiming bound from the fan-out, out_channels · k², instead of the fan-in", "conv2d",
          CONV2D_INIT, '''        fan_in = in_channels * kernel_size * kernel_size
        bound = np.sqrt(6.0 / (out_channels * kernel_size * kernel_size))
        w = np.random.default_rng(seed).uniform(-bound, bound, (fan_in, out_channels)).astype(np.float32)''',
          ["test_conv2d"]),
    wrong("conv2d_xavier", "Xavier (Glorot) uniform instead of Kaiming", "conv2d", CONV2D_INIT,
          '''        fan_in = in_channels * kernel_size * kernel_size
        w = xavier_uniform(fan_in, out_channels, seed=seed).data''', ["test_conv2d"]),
    wrong("flip_backward_positive_axes_only", "backward reverses by slices, comparing axes without normalizing "
          "negative ones: Flip((-1,)) hands out_grad back unflipped", "flip", FLIP_BACKWARD,
          "return Tensor(out_grad.data[tuple(slice(None, None, -1) if i in self.axes else slice(None) "
          "for i in range(out_grad.ndim))].copy())", ["test_flip_backward"]),
    # Rules the text states, each with a visible case where the mistake shows
    wrong("flip_forward_view", "returns NumPy's view of the input, not the copy the text asks for", "flip",
          "return np.flip(a, self.axes).copy()", "return np.flip(a, self.axes)", ["test_flip_forward"]),
    wrong("conv_backward_fold_sized_from_output", "sizes the fold's buffer from the output, (H_out - 1)·s + kh: "
          "too short when the stride does not divide H + 2p - kh", "conv",
          "padded = np.zeros((channels, height + 2 * p, width + 2 * p, n), dtype=cols.dtype)",
          "padded = np.zeros((channels, s * (out_h - 1) + kh, s * (out_w - 1) + kw, n), dtype=cols.dtype)",
          ["test_conv_backward"]),       # the CNN's only such layer is the first, whose images need no gradient
    wrong("conv2d_weight_untransposed", "reshapes the (fan_in, out_channels) draw to the weight's shape without "
          "the transpose", "conv2d", "Parameter(w.T.reshape(out_channels, in_channels, kernel_size, kernel_size))",
          "Parameter(w.reshape(out_channels, in_channels, kernel_size, kernel_size))", ["test_conv2d"]),
    wrong("conv2d_bias_not_broadcast", "adds the bias shaped (1, out_channels, 1, 1) without broadcast_to: the "
          "forward is right, the bias's gradient has the output's shape", "conv2d", CONV2D_BIAS,
          "return out + self.bias.reshape((1, -1, 1, 1))", ["test_conv2d", "test_capstone_cnn"]),
    wrong("conv_forward_flipped_filters", "lays each filter over its patch rotated by half a turn (the textbook's "
          "true convolution)", "conv", "out = w.reshape(n_out, -1) @ patches",
          "out = w[:, :, ::-1, ::-1].reshape(n_out, -1) @ patches",
          ["test_conv_forward", "test_conv_backward", "test_capstone_cnn"]),
    wrong("conv_backward_unflipped_transposed", "folds each patch-gradient row into the mirrored offset: the "
          "transposed convolution without the flip", "conv", CONV_FOLD,
          "padded[:, i:i + s * out_h:s, j:j + s * out_w:s] += cols[:, kh - 1 - i, kw - 1 - j]",
          ["test_conv_backward", "test_capstone_cnn"]),
    wrong("conv_backward_grad_w_doubled", "the filters' gradient twice too large: the CNN still trains, the grader's "
          "gradient comparison does not pass it", "conv", CONV_GRAD_W, "grad_w = 2 * (g @ patches.T).reshape(w.shape)",
          ["test_conv_backward", "test_capstone_cnn"]),
    # State carried between calls: an op whose forward ran twice before one backward
    wrong("conv_backward_reuses_last_patches", "reuses the patches its last forward kept whenever there are some, "
          "not only when node's input is that forward's", "conv", "if seen is not x:",
          "if seen is None:", ["test_conv_backward"]),
    # Memory layout: inputs that are views of batch-last memory, as a Conv hands them on
    wrong("max_pool_backward_writes_through_planes", "writes the gradient through grad.reshape(N·C, H, W): a view "
          "of C-ordered memory, a copy (and the writes lost) when the input is batch-last in memory, as a Conv "
          "hands it on", "max_pool", POOL_BACKWARD,
          """        k = self.kernel_size
        a, out = node._inputs[0].data, node.data
        n, c, h, w = a.shape
        rows, cols = h // k * k, w // k * k
        grad = np.zeros_like(a, dtype=out_grad.data.dtype)
        planes = grad.reshape(n * c, h, w)                   # every channel of every image as one plane
        g = out_grad.data.reshape(n * c, rows // k, cols // k)
        maxima = out.reshape(n * c, rows // k, cols // k)
        unclaimed = np.ones_like(maxima, dtype=bool)
        for i in range(k):
            for j in range(k):
                is_max = (a.reshape(n * c, h, w)[:, i:rows:k, j:cols:k] == maxima) & unclaimed
                planes[:, i:rows:k, j:cols:k] = is_max * g
                unclaimed &= ~is_max
        return Tensor(grad)""", ["test_max_pool_backward", "test_capstone_cnn"]),
    # The capstone
    wrong("cnn_unseeded", "builds the layers without seeds: every call a different model", "build_cnn", CNN,
          CNN.replace(", seed=1)", ")").replace(", seed=2)", ")").replace(", seed=3)", ")"), ["test_capstone_cnn"]),
    wrong("cnn_shared_model", "builds the model once and returns that same object at every call", "build_cnn", CNN,
          """    global CNN_MODEL
    if "CNN_MODEL" not in globals():
        CNN_MODEL = Sequential(
            Conv2d(1, 8, 3, stride=2, padding=1, seed=1), ReLU(),
            Conv2d(8, 16, 3, padding=1, seed=2), ReLU(), MaxPool2d(2),
            Flatten(), Linear(16 * 7 * 7, 10, seed=3))
    return CNN_MODEL""", ["test_capstone_cnn"]),
    wrong("cnn_flatten_size", "a Linear sized for the image before pooling", "build_cnn", "Linear(16 * 7 * 7, 10, seed=3)",
          "Linear(16 * 14 * 14, 10, seed=3)", ["test_capstone_cnn"]),
    # the drawn bias shows only where the check leaves the bias as the layer made it
    wrong("conv2d_bias_drawn", "draws the bias as PyTorch does, uniform in ±1/sqrt(fan_in), instead of zeros",
          "conv2d", "self.bias = Parameter(np.zeros(out_channels)) if bias else None",
          "self.bias = Parameter(np.random.default_rng(seed).uniform(-1, 1, out_channels) / np.sqrt(fan_in)) "
          "if bias else None", ["test_conv2d"]),
]

ALTERNATIVES = [
    right("flip_slices", "reverse with a tuple of slices", "flip", "return np.flip(a, self.axes).copy()",
          "return a[tuple(slice(None, None, -1) if i in [x % a.ndim for x in self.axes] else slice(None) "
          "for i in range(a.ndim))].copy()"),
    right("dilate_backward_slices", "undilate by slicing, without the Undilate op", "dilate", DILATE_BACKWARD,
          "return Tensor(out_grad.data[tuple(slice(None, None, self.dilation + 1) if i in self.axes else slice(None) "
          "for i in range(out_grad.ndim))])"),
    right("undilate_backward_zeros_like", "np.zeros_like on the input's array", "undilate", UNDILATE_BACKWARD,
          '''        grad = np.zeros_like(a.data, dtype=out_grad.data.dtype)
        grad[tuple(index)] = out_grad.data
        return Tensor(grad)'''),
    right("conv_backward_full_convolution", "the input gradient as a full convolution of the dilated out_grad with "
          "the flipped, channel-swapped filters (section 10.5's second route)", "conv",
          '''        cols = (w.reshape(n_out, -1).T @ g).reshape(channels, kh, kw, out_h, out_w, n)
        padded = np.zeros((channels, height + 2 * p, width + 2 * p, n), dtype=cols.dtype)
        for i in range(kh):
            for j in range(kw):
                padded[:, i:i + s * out_h:s, j:j + s * out_w:s] += cols[:, i, j]
        grad_x = padded[:, p:p + height, p:p + width].transpose(3, 0, 1, 2)''',
          '''        g = Dilate((2, 3), s - 1).forward(out_grad.data)
        rest_h = height + 2 * p - kh - (g.shape[2] - 1)       # padded rows no filter position reached
        rest_w = width + 2 * p - kw - (g.shape[3] - 1)
        g_full = np.pad(g, ((0, 0), (0, 0), (kh - 1, kh - 1 + rest_h), (kw - 1, kw - 1 + rest_w)))
        w_flipped = Flip((2, 3)).forward(w).transpose(1, 0, 2, 3)
        grad_x = Conv().forward(g_full, w_flipped)[:, :, p:p + height, p:p + width]'''),
    right("max_pool_reshape", "forward by reshaping into tiles", "max_pool", POOL_FORWARD,
          "        n, c = a.shape[:2]\n"
          "        return a[:, :, :rows, :cols].reshape(n, c, rows // k, k, cols // k, k).max(axis=(3, 5))"),
    right("max_pool_backward_shares_ties", "shares a tie's out_grad equally among the tied maxima", "max_pool",
          POOL_CLAIM, "                is_max = a[:, :, i:rows:k, j:cols:k] == out\n"
                      "                ties = sum(a[:, :, p:rows:k, q:cols:k] == out for p in range(k) for q in range(k))\n"
                      "                grad[:, :, i:rows:k, j:cols:k] = is_max * g / ties"),
    right("max_pool_backward_tile_view", "writes the gradient through a reshape that only splits axes into tiles: "
          "a view in any memory order", "max_pool", POOL_BACKWARD,
          """        k = self.kernel_size
        a, out = node._inputs[0].data, node.data
        n, c = a.shape[:2]
        rows, cols = a.shape[2] // k * k, a.shape[3] // k * k
        region = np.zeros_like(a[:, :, :rows, :cols], dtype=out_grad.data.dtype)   # in a's memory order
        tiles = region.reshape(n, c, rows // k, k, cols // k, k)                     # tile (y, x), offset (i, j)
        unclaimed = np.ones_like(out, dtype=bool)
        for i in range(k):
            for j in range(k):
                is_max = (a[:, :, i:rows:k, j:cols:k] == out) & unclaimed
                tiles[:, :, :, i, :, j] = is_max * out_grad.data
                unclaimed &= ~is_max
        grad = np.zeros_like(a, dtype=out_grad.data.dtype)
        grad[:, :, :rows, :cols] = region
        return Tensor(grad)"""),
    right("cnn_bias_free_first_layer", "a first convolution without bias", "build_cnn", CNN,
          CNN.replace("Conv2d(1, 8, 3, stride=2, padding=1, seed=1)", "Conv2d(1, 8, 3, stride=2, padding=1, bias=False, seed=1)")),
]

DEMO_PARTIAL = ["flip_backward_all_axes", "dilate_trailing_zeros", "undilate_backward_dilate", "conv_backward_fold_no_stride",
                "max_pool_backward_cropped"]
