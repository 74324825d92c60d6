"""The capstone MLP and CNN written directly in NumPy: the floor under any NumPy deep-learning library.

Forward and backward are written out by hand for these two networks only: no Tensor objects, no graph,
no per-op Python dispatch, activations cached for the backward pass, every array op in place where
NumPy allows it. A library built on NumPy (babygrad) runs the same array operations plus its own
bookkeeping, so its time per epoch divided by this one is the overhead of being a library.

The networks are the capstones' exactly: the same layers, the same initial weights (the same seeded
draws as `Linear`, `Conv2d` and `kaiming_uniform`), the same loss (mean softmax cross-entropy), the same
Adam, in the same dtype as the inputs. `tests/unit/test_numpy_floor.py` checks the gradients against
babygrad's on the same weights and batch.

The CNN keeps its activations batch-last, (C, H, W, N): there each of im2col's kh·kw strided copies
and col2im's kh·kw strided adds moves whole rows of W·N values, a convolution is one matrix product,
and the features it flattens are already in babygrad's (C, H, W) order. The input gradient is
col2im (folding the patches' gradient back), the cheapest route in NumPy.
"""
import time

import numpy as np


def uniform_linear(fan_in, fan_out, seed, dtype):
    """babygrad's `Linear(fan_in, fan_out, seed=seed)`: weight (fan_in, fan_out) and bias (fan_out,)."""
    rng = np.random.default_rng(seed)
    bound = 1 / np.sqrt(fan_in)
    weight = rng.uniform(-bound, bound, (fan_in, fan_out)).astype(dtype)
    bias = rng.uniform(-bound, bound, (1, fan_out)).astype(dtype).reshape(fan_out)
    return weight, bias


def kaiming_conv(in_channels, out_channels, k, seed, dtype):
    """babygrad's `Conv2d(...)` filters as kaiming_uniform draws them, (in_channels·k·k, out_channels),
    and a zero bias."""
    fan_in = in_channels * k * k
    bound = np.sqrt(2.0) * np.sqrt(3.0 / fan_in)       # kaiming_uniform, gain of relu
    weight = np.random.default_rng(seed).uniform(-bound, bound, (fan_in, out_channels)).astype(dtype)
    return weight, np.zeros(out_channels, dtype=dtype)


def softmax_cross_entropy(logits, labels):
    """Mean cross-entropy of `labels` under softmax(logits), and its gradient with respect to the logits."""
    n = len(labels)
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    total = exp.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = float(np.log(total).sum() - shifted[rows, labels].sum()) / n
    exp /= total
    exp[rows, labels] -= 1
    exp /= n
    return loss, exp


class Adam:
    """babygrad's Adam (no weight decay), updating the arrays of `params` in place. `step` uses up the
    gradient arrays it is given (they become scratch space)."""

    def __init__(self, params, lr, beta1=0.9, beta2=0.999, eps=1e-8):
        self.params, self.lr, self.beta1, self.beta2, self.eps = params, lr, beta1, beta2, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads):
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= b1
            m += (1 - b1) * g
            v *= b2
            g *= g
            g *= 1 - b2
            v += g
            denom = v / (1 - b2 ** self.t)
            np.sqrt(denom, out=denom)
            denom += self.eps
            step = m * (self.lr / (1 - b1 ** self.t))       # m̂'s correction folded into the step size
            step /= denom
            p -= step


class MLP:
    """Linear(784, 128) → ReLU → Linear(128, 10), seeds 1 and 2 as in `build_mlp`."""

    def __init__(self, dtype=np.float32):
        self.w1, self.b1 = uniform_linear(784, 128, 1, dtype)
        self.w2, self.b2 = uniform_linear(128, 10, 2, dtype)
        self.params = [self.w1, self.b1, self.w2, self.b2]

    def logits(self, x):
        hidden = x @ self.w1
        hidden += self.b1
        np.maximum(hidden, 0, out=hidden)
        out = hidden @ self.w2
        out += self.b2
        return out

    def loss_and_grads(self, x, labels):
        """The batch's loss and the gradient of every parameter, in the order of `params`."""
        hidden = x @ self.w1
        hidden += self.b1
        np.maximum(hidden, 0, out=hidden)
        logits = hidden @ self.w2
        logits += self.b2
        loss, d_logits = softmax_cross_entropy(logits, labels)
        d_hidden = d_logits @ self.w2.T
        d_hidden *= hidden > 0
        return loss, [x.T @ d_hidden, d_hidden.sum(axis=0), hidden.T @ d_logits, d_logits.sum(axis=0)]


def im2col(x, k, stride, padding):
    """Every k × k patch of batch-last images x (C, H, W, N) as one column: (C·k·k, H_out·W_out·N).

    k·k strided copies, each of whole (W_out · N) runs when stride is 1."""
    channels, height, width, n = x.shape
    s, p = stride, padding
    out_h, out_w = (height + 2 * p - k) // s + 1, (width + 2 * p - k) // s + 1
    padded = np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))
    cols = np.empty((channels, k, k, out_h, out_w, n), dtype=x.dtype)
    for i in range(k):
        for j in range(k):
            cols[:, i, j] = padded[:, i:i + s * out_h:s, j:j + s * out_w:s]
    return cols.reshape(channels * k * k, -1), (out_h, out_w)


def col2im(d_cols, x_shape, k, stride, padding):
    """The gradient of im2col: each patch's gradient added back where the patch was read, k·k strided adds."""
    channels, height, width, n = x_shape
    s, p = stride, padding
    out_h, out_w = (height + 2 * p - k) // s + 1, (width + 2 * p - k) // s + 1
    d_padded = np.zeros((channels, height + 2 * p, width + 2 * p, n), dtype=d_cols.dtype)
    patches = d_cols.reshape(channels, k, k, out_h, out_w, n)
    for i in range(k):
        for j in range(k):
            d_padded[:, i:i + s * out_h:s, j:j + s * out_w:s] += patches[:, i, j]
    return d_padded[:, p:p + height, p:p + width]


def max_pool(x):
    """2 × 2 max pooling of batch-last images (C, H, W, N)."""
    channels, height, width, n = x.shape
    tiles = x.reshape(channels, height // 2, 2, width // 2, 2, n)
    out = np.maximum(tiles[:, :, 0, :, 0], tiles[:, :, 0, :, 1])
    np.maximum(out, tiles[:, :, 1, :, 0], out=out)
    np.maximum(out, tiles[:, :, 1, :, 1], out=out)
    return out


def max_pool_backward(d_out, x, out):
    """Each tile's gradient to its maximum, the first one in reading order when several tie (as babygrad)."""
    tiles = x.reshape(out.shape[0], out.shape[1], 2, out.shape[2], 2, out.shape[3])
    d_x = np.empty_like(x)
    d_tiles = d_x.reshape(tiles.shape)
    unclaimed = np.ones(out.shape, dtype=bool)
    for i in range(2):
        for j in range(2):
            is_max = tiles[:, :, i, :, j] == out
            is_max &= unclaimed
            np.multiply(is_max, d_out, out=d_tiles[:, :, i, :, j])
            unclaimed ^= is_max
    return d_x


class CNN:
    """Conv2d(1, 8, 3, stride 2, pad 1) → ReLU → Conv2d(8, 16, 3, pad 1) → ReLU → MaxPool2d(2) → Flatten
    → Linear(784, 10), seeds 1, 2 and 3 as in `build_cnn`. Takes images (N, 1, 28, 28) like babygrad,
    and computes batch-last, (C, H, W, N): there every im2col copy and col2im add runs over whole rows
    of W·N values, and the flattened (C·H·W, N) features are babygrad's (C, H, W) order as they lie."""

    def __init__(self, dtype=np.float32):
        w1, self.b1 = kaiming_conv(1, 8, 3, 1, dtype)
        w2, self.b2 = kaiming_conv(8, 16, 3, 2, dtype)
        self.w1, self.w2 = w1.T.copy(), w2.T.copy()          # (out, in·k·k): babygrad's weight.reshape(out, -1)
        self.w3, self.b3 = uniform_linear(16 * 7 * 7, 10, 3, dtype)
        self.params = [self.w1, self.b1, self.w2, self.b2, self.w3, self.b3]

    def forward(self, images):
        """The logits, and what the backward pass needs."""
        x = images.transpose(1, 2, 3, 0)                       # (C, H, W, N): batch last
        cols1, (h, w) = im2col(x, 3, 2, 1)
        h1 = self.w1 @ cols1
        h1 += self.b1[:, None]
        np.maximum(h1, 0, out=h1)
        h1 = h1.reshape(-1, h, w, len(images))
        cols2, (h, w) = im2col(h1, 3, 1, 1)
        h2 = self.w2 @ cols2
        h2 += self.b2[:, None]
        np.maximum(h2, 0, out=h2)
        h2 = h2.reshape(-1, h, w, len(images))
        pooled = max_pool(h2)
        flat = pooled.reshape(-1, len(images))                 # (C·H·W, N)
        logits = flat.T @ self.w3
        logits += self.b3
        return logits, (cols1, h1, cols2, h2, pooled, flat)

    def logits(self, images):
        return self.forward(images)[0]

    def loss_and_grads(self, images, labels):
        """The batch's loss and the gradient of every parameter, in the order of `params`."""
        logits, (cols1, h1, cols2, h2, pooled, flat) = self.forward(images)
        loss, d_logits = softmax_cross_entropy(logits, labels)
        d_pooled = (self.w3 @ d_logits.T).reshape(pooled.shape)
        d_h2 = max_pool_backward(d_pooled, h2, pooled)
        d_h2 *= h2 > 0
        d_h2 = d_h2.reshape(len(d_h2), -1)
        d_h1 = col2im(self.w2.T @ d_h2, h1.shape, 3, 1, 1)
        d_h1 = d_h1 * (h1 > 0)
        d_h1 = d_h1.reshape(len(d_h1), -1)
        return loss, [d_h1 @ cols1.T, d_h1.sum(axis=1), d_h2 @ cols2.T, d_h2.sum(axis=1),
                      flat @ d_logits, d_logits.sum(axis=0)]


NETWORKS = {"mlp": MLP, "cnn": CNN}


def train_epoch(kind, images, labels, batch_size, lr, seed=0, dtype=np.float32):
    """A fresh network trained for one epoch over `images` in babygrad's DataLoader order
    (default_rng(seed).permutation, the last batch short); returns the network and the seconds it took."""
    network = NETWORKS[kind](dtype)
    optimizer = Adam(network.params, lr)
    order = np.random.default_rng(seed).permutation(len(images))
    start = time.perf_counter()
    for first in range(0, len(images), batch_size):
        batch = order[first:first + batch_size]
        _, grads = network.loss_and_grads(images[batch], labels[batch])
        optimizer.step(grads)
    return network, time.perf_counter() - start


def accuracy(network, images, labels, batch_size=500):
    """The share of `images` whose largest logit is their label."""
    right = sum(int((network.logits(images[i:i + batch_size]).argmax(axis=1) == labels[i:i + batch_size]).sum())
                for i in range(0, len(images), batch_size))
    return right / len(images)
