"""Chapter 4's layers and losses as plain NumPy formulas in float64: the yardstick of the nn checks.

Written from the definitions, independently of any notebook code; their gradients are taken by
central differences (`gradcheck.numerical_gradients`), so no backward is trusted here either.
"""
import numpy as np

from autograder.student.checks.ch04_nn_facts import logsumexp  # noqa: F401 (the yardstick's, and LogSumExp's stand-in's)


def linear(x, weight, bias=None):
    return x @ weight if bias is None else x @ weight + bias


def relu(x):
    return np.maximum(x, 0.0)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def identity(x):
    return x


def flatten(x):
    return x.reshape(x.shape[0], -1)


def batchnorm_train(x, weight, bias, eps):
    """Normalize each feature with the batch's mean and biased variance, then scale and shift."""
    mean, var = x.mean(axis=0), x.var(axis=0)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def batchnorm_eval(x, weight, bias, running_mean, running_var, eps):
    return (x - running_mean) / np.sqrt(running_var + eps) * weight + bias


def running_average(old, new, momentum):
    return (1 - momentum) * old + momentum * new


def layernorm(x, weight, bias, eps):
    """Normalize each sample over its features (the last axis), then scale and shift."""
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def mse(pred, target):
    return np.mean((pred - target) ** 2)


def softmax(logits, axis=1):
    e = np.exp(logits - logits.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_loss(logits, labels):
    """Mean cross-entropy of integer `labels` under softmax(`logits`)."""
    picked = logits[np.arange(len(labels)), labels]
    return np.mean(logsumexp(logits, axes=1) - picked)


def bce_with_logits(logits, targets):
    """Mean binary cross-entropy of 0/1 `targets` under sigmoid(`logits`), in the form that never overflows."""
    return np.mean(np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits))))


def embedding(weight, indices):
    """The rows of `weight` picked by `indices`: shape indices.shape + (dim,)."""
    return weight[np.asarray(indices, dtype=np.int64)]
