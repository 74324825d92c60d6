"""The judge's own gradients of a walked model's parameters, in float64.

The capstone counts the accuracy of the model in its slot with the judge's forward (forward.py). An accuracy
proves only that good weights sit there, not that the student's library trained them: the judge also asks the
kernel's library for the gradients of that very model's parameters, and compares them with these
(capstone_gradients.py), so weights trained elsewhere cannot earn a capstone.

The model is the one forward.py walks, with its checks: each leaf layer runs forward.py's own forward, in float64
and eval mode, and each backward follows the course's conventions: ReLU's slope is 0 at 0; MaxPool2d gives each
window's gradient to its first maximum in reading order, and nothing to the rows and columns it drops.
"""
import numpy as np

from autograder.grading.judge.forward import LAYERS, Layer, NotWalkable, flattened, im2col, layer_forward
from autograder.student.checks.ch10_conv_pool_ties import tiles, untiled


def parameter_gradients(record, decode, images, upstream, overrides=None):
    """{(leaf_index, key): float64 array}: the gradient of sum(logits * upstream) with respect to every
    parameter array of every leaf layer, leaf_index being the position in forward.flattened(record).
    `overrides` {leaf_index: (mask, values)} puts the student's own values into that leaf's input where the
    mask is set: at a kink, the branch the student's float32 took (capstone_gradients.py)."""
    leaves = [leaf(r, decode) for r in flattened(record)]
    if not leaves:
        raise NotWalkable("the model has no layers")
    x, inputs = np.asarray(images, dtype=np.float64), []
    for index, (name, forward, _) in enumerate(leaves):
        if overrides and index in overrides:
            mask, values = overrides[index]
            x = x.copy()
            x[mask] = values
        inputs.append(x)
        try:
            x = forward(x)
        except NotWalkable:
            raise
        except Exception as error:  # noqa: BLE001 (shapes that do not chain, as model_from_record says)
            raise NotWalkable(f"{name} does not take an input of shape {x.shape} ({error})") from None
    grad = np.asarray(upstream, dtype=np.float64)
    if grad.shape != x.shape:
        raise ValueError(f"an upstream gradient of shape {grad.shape} for logits of shape {x.shape}")
    own = [None] * len(leaves)
    for index in reversed(range(len(leaves))):
        grad, own[index] = leaves[index][2](inputs[index], grad)
    return {(index, key): value for index, grads in enumerate(own) for key, value in grads.items()}


def kinked_digits(record, decode, images, margin):
    """(relu, pool), a boolean per image each: a ReLU input of it within `margin` of 0 that could receive a
    gradient; a MaxPool2d window whose two largest values lie within `margin` of each other but not equal (both
    relative to the layer's largest value). Near a kink, float32 (the student's library) and float64 (the judge)
    may take different branches, and the gradient jumps there: a digit near a pool's tie is left out, and at a
    ReLU's kink the replay follows the student's branch (relu_kinks)."""
    records = flattened(record)
    n = len(images)
    relu, pool = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    for index, name, x, tolerance, pool_k in walk_with_tolerances(records, decode, np.asarray(images, dtype=np.float64),
                                                                margin):
        if name == "ReLU":
            relu |= relu_ambiguous(x, tolerance, pool_k).reshape(n, -1).any(axis=1)
        elif name == "MaxPool2d":
            pool |= near_tie(x, kernel_size(records[index]), tolerance)
    return relu, pool


def relu_kinks(record, decode, images, margin):
    """{leaf_index: (mask, tolerance, the judge's values there)} for every ReLU whose input, on these images, lies
    within `margin` of 0 somewhere a gradient can reach (the mask: where). The replay asks the student's library
    for its own values there and follows its branch, so such a digit need not be left out."""
    kinks = {}
    for index, name, x, tolerance, pool_k in walk_with_tolerances(flattened(record), decode,
                                                                np.asarray(images, dtype=np.float64), margin):
        if name == "ReLU":
            mask = relu_ambiguous(x, tolerance, pool_k)
            if mask.any():
                kinks[index] = (mask, tolerance, x[mask])
    return kinks


def walk_with_tolerances(records, decode, x, margin):
    """(leaf_index, name, the leaf's input, margin · its largest value, k of a MaxPool2d right after it or None)
    for each leaf, running the judge's float64 forward."""
    leaves = [leaf(r, decode) for r in records]
    for index, (name, forward, _) in enumerate(leaves):
        pooled_next = index + 1 < len(leaves) and leaves[index + 1][0] == "MaxPool2d"
        pool_k = kernel_size(records[index + 1]) if pooled_next else None
        yield index, name, x, margin * (float(np.abs(x).max()) or 1.0), pool_k
        x = forward(x)


def kernel_size(record):
    """A MaxPool2d record's window side (forward.py has checked it)."""
    return int((record.get("config") or {})["kernel_size"])


def relu_ambiguous(x, tolerance, pool_k=None):
    """Where a ReLU input lies within `tolerance` of 0 and a gradient can reach it. When a k × k max pool
    follows, an input whose window holds an output above 2 · tolerance gets none in either branch (its own
    output is at most tolerance), nor does one in the rows and columns the pool drops. A digit's blank corner,
    whose receptive field is the same in every image, can sit that close to 0 in every image."""
    near = np.abs(x) <= tolerance
    if pool_k is not None:
        reachable = np.zeros(x.shape, dtype=bool)          # rows and columns the pool drops stay False
        windows = tiles(np.maximum(x, 0), pool_k)
        outvoted = np.broadcast_to((windows.max(axis=-1) > 2 * tolerance)[..., None], windows.shape)
        rows, cols = windows.shape[2] * pool_k, windows.shape[3] * pool_k
        reachable[:, :, :rows, :cols] = ~untiled(outvoted, pool_k)
        near &= reachable
    return near


def near_tie(x, k, tolerance):
    """Per image: a k × k window whose largest two values are within `tolerance` of each other but not equal.
    Exact ties are no kink: they come from identical receptive fields (the digits' blank background), whose
    parameter gradients are the same whichever tied element gets out_grad, as the chapter lets it choose."""
    windows = np.sort(tiles(x, k), axis=-1)
    gap = windows[..., -1] - windows[..., -2]
    return ((gap <= tolerance) & (gap != 0)).reshape(len(x), -1).any(axis=1)


def leaf(record, decode):
    """(name, forward, backward) of one leaf layer in float64, once forward.py has checked it. `forward` is
    forward.py's; `backward(x, grad_out)` gives (grad_x, {key: grad of that parameter})."""
    arrays = {key: np.asarray(decode(value), dtype=np.float64) for key, value in (record.get("arrays") or {}).items()}
    name, forward = layer_forward({**record, "arrays": arrays}, lambda array: array)   # float64 stays float64
    if name not in BACKWARDS:
        raise NotWalkable(f"the judge has no backward for {name}")
    layer = Layer(name, record.get("config") or {}, arrays, set(record.get("none") or ()))
    return name, forward, BACKWARDS[name](layer)


def shaped(layer, key, grad):
    """A parameter's gradient in the shape of its array in the record (Linear's bias is (1, out))."""
    return grad.reshape(layer.arrays[key].shape)


def linear(layer):
    weight = layer.array("weight", 2)
    n_in, n_out = weight.shape
    has_bias = layer.optional("bias", n_out) is not None

    def backward(x, grad):
        rows, grad_rows = x.reshape(-1, n_in), grad.reshape(-1, n_out)
        grads = {"weight": rows.T @ grad_rows}
        if has_bias:
            grads["bias"] = shaped(layer, "bias", grad_rows.sum(axis=0))
        return grad @ weight.T, grads
    return backward


def norm(layer, rows):
    """BatchNorm1d in eval (its running statistics, constants here) or LayerNorm1d (each row's own statistics)."""
    weight, eps = layer.array("weight", 1), layer.number("eps", at_least=0)
    dim = weight.size

    def parameters(normalized, grad):
        normalized, grad = normalized.reshape(-1, dim), grad.reshape(-1, dim)
        return {"weight": shaped(layer, "weight", (grad * normalized).sum(axis=0)),
                "bias": shaped(layer, "bias", grad.sum(axis=0))}

    if rows:
        def backward(x, grad):
            if x.ndim != 2:
                raise NotWalkable(f"{layer.name} gets an input of shape {x.shape}, not (N, {dim})")
            centred = x - x.sum(axis=1, keepdims=True) / dim
            std = ((centred * centred).sum(axis=1, keepdims=True) / dim + eps) ** 0.5
            normalized = centred / std
            d_normalized = grad * weight
            grad_x = (d_normalized - d_normalized.mean(axis=1, keepdims=True)
                      - normalized * (d_normalized * normalized).mean(axis=1, keepdims=True)) / std
            return grad_x, parameters(normalized, grad)
        return backward
    mean, std = layer.array("running_mean", 1), (layer.array("running_var", 1) + eps) ** 0.5

    def backward(x, grad):
        return grad * weight / std, parameters((x - mean) / std, grad)
    return backward


def conv2d(layer):
    weight = layer.array("weight", 4)
    n_out, _, kh, kw = weight.shape
    stride, padding = int(layer.number("stride", 1)), int(layer.number("padding", 0))
    has_bias = layer.optional("bias", n_out) is not None
    filters = weight.reshape(n_out, -1)

    def backward(x, grad):
        patches, out = im2col(x, kh, kw, stride, padding)
        grad_cols = grad.transpose(1, 2, 3, 0).reshape(n_out, -1)     # the columns of im2col: batch last
        grads = {"weight": (grad_cols @ patches.T).reshape(weight.shape)}
        if has_bias:
            grads["bias"] = shaped(layer, "bias", grad_cols.sum(axis=1))
        return col2im(filters.T @ grad_cols, x.shape, (kh, kw), stride, padding, out), grads
    return backward


def col2im(grad_patches, shape, kernel, stride, padding, out):
    """The gradient of forward.im2col for images of `shape` (N, C, H, W): each patch's gradient added back
    where the patch was read, the padding then cut off."""
    n, channels, height, width = shape
    (kh, kw), (out_h, out_w), s, p = kernel, out, stride, padding
    grad_padded = np.zeros((channels, height + 2 * p, width + 2 * p, n))
    grad_patches = grad_patches.reshape(channels, kh, kw, out_h, out_w, n)
    for i in range(kh):
        for j in range(kw):
            grad_padded[:, i:i + s * out_h:s, j:j + s * out_w:s] += grad_patches[:, i, j]
    return grad_padded[:, p:p + height, p:p + width].transpose(3, 0, 1, 2)


def max_pool2d(layer):
    k, pool = int(layer.number("kernel_size", at_least=1)), LAYERS["MaxPool2d"](layer)

    def backward(x, grad):
        out = pool(x)                                   # forward.py's maxima: a window's maximum equals one of its own
        rows, cols = x.shape[2] // k * k, x.shape[3] // k * k
        grad_x = np.zeros_like(x)                       # the rows and columns dropped get nothing
        unclaimed = np.ones(out.shape, dtype=bool)
        for i in range(k):
            for j in range(k):
                first = (x[:, :, i:rows:k, j:cols:k] == out) & unclaimed
                grad_x[:, :, i:rows:k, j:cols:k] = first * grad
                unclaimed &= ~first
        return grad_x, {}
    return backward


def sigmoid(layer):
    def backward(x, grad):
        s = 1 / (1 + np.exp(-x))
        return grad * s * (1 - s), {}
    return backward


def passing(layer):
    return lambda x, grad: (grad, {})


BACKWARDS = {
    "Linear": linear,
    "ReLU": lambda layer: lambda x, grad: (grad * (x > 0), {}),
    "Sigmoid": sigmoid,
    "Tanh": lambda layer: lambda x, grad: (grad * (1 - np.tanh(x) ** 2), {}),
    "Flatten": lambda layer: lambda x, grad: (grad.reshape(x.shape), {}),
    "Identity": passing,
    "Dropout": passing,                           # eval mode: the identity
    "BatchNorm1d": lambda layer: norm(layer, rows=False),
    "LayerNorm1d": lambda layer: norm(layer, rows=True),
    "Conv2d": conv2d,
    "MaxPool2d": max_pool2d,
}
