"""Slow, obviously right forwards of chapter 10's ops: one Python loop step per output element.

They are the expected values of the forward checks, and the stand-ins that keep exercises apart
(a Conv.backward is graded with these Flip and Dilate, not the student's). Too slow to train with,
which is the point: nothing here is the exercise's answer in vectorized form.

Layouts: images are NCHW (batch, channels, height, width); convolution weights are
(out_channels, in_channels, kernel_height, kernel_width), as in PyTorch.
"""
import numpy as np


def _axes(axes, ndim):
    return {ax % ndim for ax in axes}


def flip(axes):
    """a reversed along `axes` (negative axes count from the end)."""
    def forward(a):
        chosen = _axes(axes, a.ndim)
        out = np.empty_like(a)
        for index in np.ndindex(a.shape):
            out[index] = a[tuple(n - 1 - i if ax in chosen else i for ax, (i, n) in enumerate(zip(index, a.shape)))]
        return out
    return forward


def dilate(axes, dilation):
    """`dilation` zeros between neighbours along `axes`: a length n becomes (n - 1) * (dilation + 1) + 1."""
    def forward(a):
        chosen, step = _axes(axes, a.ndim), dilation + 1
        shape = tuple((n - 1) * step + 1 if ax in chosen else n for ax, n in enumerate(a.shape))
        out = np.zeros_like(a, shape=shape)
        for index in np.ndindex(a.shape):
            out[tuple(i * step if ax in chosen else i for ax, i in enumerate(index))] = a[index]
        return out
    return forward


def undilate(axes, dilation):
    """Every (dilation + 1)-th element along `axes`, starting with the first: the inverse of dilate."""
    def forward(a):
        chosen, step = _axes(axes, a.ndim), dilation + 1
        shape = tuple((n - 1) // step + 1 if ax in chosen else n for ax, n in enumerate(a.shape))
        out = np.zeros_like(a, shape=shape)
        for index in np.ndindex(shape):
            out[index] = a[tuple(i * step if ax in chosen else i for ax, i in enumerate(index))]
        return out
    return forward


def conv(stride=1, padding=0):
    """out[n, o, y, x] = sum over c, i, j of w[o, c, i, j] * padded[n, c, y*stride + i, x*stride + j]."""
    def forward(x, w):
        p = padding
        padded = np.zeros((x.shape[0], x.shape[1], x.shape[2] + 2 * p, x.shape[3] + 2 * p), dtype=np.float64)
        padded[:, :, p:p + x.shape[2], p:p + x.shape[3]] = x
        n_out, kh, kw = w.shape[0], w.shape[-2], w.shape[-1]
        height = (padded.shape[2] - kh) // stride + 1
        width = (padded.shape[3] - kw) // stride + 1
        out = np.zeros((x.shape[0], n_out, height, width))
        for n, o, y, x_ in np.ndindex(out.shape):
            window = padded[n, :, y * stride:y * stride + kh, x_ * stride:x_ * stride + kw]
            out[n, o, y, x_] = np.sum(window * w[o])
        return out
    return forward


def max_pool(kernel_size):
    """The largest value of each kernel_size × kernel_size tile; rows and columns left over are dropped."""
    def forward(a):
        k = kernel_size
        out = np.zeros(a.shape[:2] + (a.shape[2] // k, a.shape[3] // k), dtype=a.dtype)
        for n, c, y, x in np.ndindex(out.shape):
            out[n, c, y, x] = a[n, c, y * k:(y + 1) * k, x * k:(x + 1) * k].max()
        return out
    return forward
