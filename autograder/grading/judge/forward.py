"""The judge's own forward of a model the kernel described as data: the course's layers, in NumPy, in eval mode.

A layer is recognized by its class name AND by arrays whose shapes fit its configuration (the attribute
names and layouts of chapters 4 and 10: Linear's weight (in, out) and bias (1, out); Conv2d's weight
(out, in, k, k), bias (out,), zero padding on every side; MaxPool2d dropping the rows and columns left
over). Anything else raises NotWalkable, and the judge measures the model the weaker way. The arithmetic
follows the course's in float32, as the student's Tensors compute, so the same weights give the same argmax.
"""
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


class NotWalkable(Exception):
    """The judge cannot rebuild this model from its description; the message says which layer and why."""


def model_from_record(record, decode):
    """fn(images) -> logits for a model record of in_kernel/capstone.layer_record; `decode` reads its arrays."""
    layers = [layer_forward(r, decode) for r in flattened(record)]
    if not layers:
        raise NotWalkable("the model has no layers")

    def forward(x):
        for name, step in layers:
            try:
                x = step(x)
            except NotWalkable:
                raise
            except Exception as error:  # noqa: BLE001 (shapes that do not chain: not the model that ran)
                raise NotWalkable(f"{name} does not take an input of shape {x.shape} ({error})") from None
        return x
    return forward


def flattened(record, depth=0):
    """The leaf layers of a record in call order: a Sequential's `modules`, looked through."""
    if not isinstance(record, dict) or not isinstance(record.get("name"), str) or depth > 8:
        raise NotWalkable("the model's description is malformed")
    if record["name"] != "Sequential":
        return [record]
    children = record.get("children")
    if not isinstance(children, list):
        raise NotWalkable("a Sequential without a `modules` list")
    return [leaf for child in children for leaf in flattened(child, depth + 1)]


def layer_forward(record, decode):
    """(name, fn(x)) of one leaf layer, after checking its arrays against its configuration."""
    name = record["name"]
    if name not in LAYERS:
        raise NotWalkable(f"a layer the judge does not know: {name}")
    if record.get("skipped"):
        raise NotWalkable(f"{name}'s arrays {sorted(record['skipped'])} are too large to send")
    arrays = {k: decode(v) for k, v in (record.get("arrays") or {}).items()}
    for key, value in arrays.items():
        if value.dtype.kind != "f":
            arrays[key] = value.astype(np.float32)
    config = record.get("config") or {}
    nones = set(record.get("none") or ())
    return name, LAYERS[name](Layer(name, config, arrays, nones))


class Layer:
    """One layer's reported configuration and arrays, with the checks that it is the course's layer."""

    def __init__(self, name, config, arrays, nones):
        self.name, self.config, self.arrays, self.nones = name, config, arrays, nones

    def array(self, key, ndim):
        value = self.arrays.get(key)
        if value is None or value.ndim != ndim:
            raise NotWalkable(f"{self.name}.{key} is not a {ndim}-D array")
        return value

    def optional(self, key, size):
        """An array of `size` numbers that may be None (bias=False), as a flat array or None."""
        if key in self.nones:
            return None
        value = self.arrays.get(key)
        if value is None or value.size != size:
            raise NotWalkable(f"{self.name}.{key} is neither None nor {size} numbers")
        return value.reshape(-1)

    def number(self, key, default=None, at_least=None):
        value = self.config.get(key, default)
        if not isinstance(value, (int, float)) or not math.isfinite(value) or (at_least is not None and value < at_least):
            raise NotWalkable(f"{self.name}.{key} is not a number (at least {at_least})")
        return value

    def expect(self, key, actual):
        """A configuration number, when reported, must be what the arrays say."""
        if key in self.config and self.config[key] != actual:
            raise NotWalkable(f"{self.name}.{key} = {self.config[key]} but its arrays say {actual}")


def linear(layer):
    weight = layer.array("weight", 2)
    layer.expect("in_features", weight.shape[0])
    layer.expect("out_features", weight.shape[1])
    bias = layer.optional("bias", weight.shape[1])

    def forward(x):
        out = x @ weight
        return out if bias is None else out + np.broadcast_to(bias.reshape(1, -1), out.shape)
    return forward


def norm(layer, rows):
    """BatchNorm1d in eval (running statistics) or LayerNorm1d (each row's own), as chapter 4 computes them."""
    weight, bias = layer.array("weight", 1), layer.array("bias", 1)
    dim = weight.size
    layer.expect("dim", dim)
    eps = layer.number("eps", at_least=0)
    if bias.size != dim:
        raise NotWalkable(f"{layer.name}.bias has {bias.size} numbers, weight {dim}")
    if rows:
        def forward(x):
            mean = x.sum(axis=1, keepdims=True) / dim
            centred = x - mean
            var = (centred * centred).sum(axis=1, keepdims=True) / dim
            return centred / (var + eps) ** 0.5 * weight + bias
        return forward
    mean, var = layer.array("running_mean", 1), layer.array("running_var", 1)
    if mean.size != dim or var.size != dim:
        raise NotWalkable(f"{layer.name}'s running statistics do not have {dim} numbers")

    def forward(x):
        return (x - mean) / ((var + eps) ** 0.5) * weight + bias
    return forward


def im2col(x, kh, kw, stride, padding):
    """Every kh × kw patch of the zero-padded images as a column: (C·kh·kw, H_out·W_out·N), batch-last
    as chapter 10's (its copies move rows of all the images at once)."""
    p = padding
    x = np.pad(x.transpose(1, 2, 3, 0), ((0, 0), (p, p), (p, p), (0, 0)))
    windows = sliding_window_view(x, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
    channels, height, width, n = windows.shape[:4]
    return windows.transpose(0, 4, 5, 1, 2, 3).reshape(channels * kh * kw, height * width * n), (height, width)


def conv2d(layer):
    weight = layer.array("weight", 4)
    n_out, channels, kh, kw = weight.shape
    stride, padding = layer.number("stride", 1, at_least=1), layer.number("padding", 0, at_least=0)
    if stride != int(stride) or padding != int(padding):
        raise NotWalkable(f"{layer.name}'s stride and padding are not whole numbers")
    stride, padding = int(stride), int(padding)
    layer.expect("in_channels", channels)
    layer.expect("out_channels", n_out)
    layer.expect("kernel_size", kh if kh == kw else (kh, kw))
    bias = layer.optional("bias", n_out)
    filters = weight.reshape(n_out, -1)

    def forward(x):
        if x.ndim != 4 or x.shape[1] != channels:
            raise NotWalkable(f"{layer.name} with {channels} input channels gets an input of shape {x.shape}")
        patches, (height, width) = im2col(x, kh, kw, stride, padding)
        out = (filters @ patches).reshape(n_out, height, width, x.shape[0]).transpose(3, 0, 1, 2)
        return out if bias is None else out + np.broadcast_to(bias.reshape(1, -1, 1, 1), out.shape)
    return forward


def max_pool2d(layer):
    k = layer.number("kernel_size", at_least=1)
    if k != int(k):
        raise NotWalkable(f"{layer.name}.kernel_size is not a whole number")
    k = int(k)

    def forward(x):
        # the maximum of k·k strided views: a reduction over reshaped axes of a transposed array is ~20x slower
        rows, cols = x.shape[2] // k * k, x.shape[3] // k * k
        out = np.copy(x[:, :, 0:rows:k, 0:cols:k])        # in x's memory order (batch-last)
        for i in range(k):
            for j in range(k):
                np.maximum(out, x[:, :, i:rows:k, j:cols:k], out=out)
        return out
    return forward


def flatten(layer):
    return lambda x: x.reshape(x.shape[0], -1)


def identity(layer):
    return lambda x: x


LAYERS = {
    "Linear": linear,
    "ReLU": lambda layer: lambda x: np.maximum(x, 0).astype(x.dtype, copy=False),
    "Sigmoid": lambda layer: lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False),
    "Tanh": lambda layer: np.tanh,
    "Flatten": flatten,
    "Identity": identity,
    "Dropout": identity,                          # eval mode: the identity
    "BatchNorm1d": lambda layer: norm(layer, rows=False),
    "LayerNorm1d": lambda layer: norm(layer, rows=True),
    "Conv2d": conv2d,
    "MaxPool2d": max_pool2d,
}
