# %% [markdown] locked
# # Chapter 10 · Convolutional networks
#
# The network of chapter 7 reads a digit as a row of 784 numbers. It has no idea that pixel
# $(3, 4)$ sits next to pixel $(3, 5)$, and a stroke it has learned to see in the top left corner
# means nothing to it in the bottom right: each of the first layer's units has its own weight for
# every pixel, and must learn every stroke at every place separately.
#
# A **convolution** builds the two facts about images into the layer instead:
#
# * **locality**: an output looks at a small patch of the input, say $3 \times 3$ pixels;
# * **weight sharing**: the same small set of weights, a *filter*, slides over every patch, so a
#   stroke detector learned in one corner works in every corner.
#
# A $3 \times 3$ filter over a one-channel image has 9 weights, whatever the image's size; the first
# layer of chapter 7 had $784 \times 128$. Stack a few convolutions with some downsampling between
# them and each output sees a larger and larger part of the image, built from the strokes below it.
# That is a **convolutional network**, and on MNIST it makes about half the mistakes of the MLP.
#
# You will write:
#
# 1. three small operations that show what a convolution's gradient is: `Flip`, `Dilate` and `Undilate`;
# 2. `Conv`, the convolution itself, with stride and padding: its forward as one matrix product,
#    its backward by folding the gradient of the patches back onto the image;
# 3. `MaxPool`, which halves an image by keeping the largest value of each $2 \times 2$ tile;
# 4. the layers `Conv2d` and `MaxPool2d`, and a small CNN that must reach the accuracy of the
#    course's capstone on the MNIST test set, trained by your own library.
#
# The checks work as in chapter 3: forwards are compared with slow loops that are obviously right,
# and every backward with central finite differences of your own forward, in float64, for an
# all-ones and a random `out_grad`. The hidden tests add strides, paddings and shapes.

# %% provided export
from numpy.lib.stride_tricks import sliding_window_view

# %% provided
import numpy as np

from earlier_chapters import *          # chapters 2 to 9: Tensor, Function, ops, nn, optimizers, data, Trainer
from autograder.student.checks import Checker, slow
from autograder.student.datasets import mnist_files

check = Checker(globals())

# %% [markdown] locked
# ## 10.1 Layout
#
# A batch of images is a 4-D array in **NCHW** order, as in PyTorch:
#
# | axis | name | MNIST |
# |---|---|---|
# | 0 | N, the images in the batch | 64 |
# | 1 | C, the channels of each image | 1 (grey); a colour image has 3, a hidden layer 8 or 16 |
# | 2 | H, the rows | 28 |
# | 3 | W, the columns | 28 |
#
# A convolution's weights are a 4-D array too, **(out_channels, in_channels, kh, kw)**: one filter of
# shape `(in_channels, kh, kw)` per output channel. Every operation below works on the last two axes,
# the image plane, and keeps the others.
#
# **The axes and the memory.** The order of the axes is what indexing sees; the order of the numbers
# in memory is another matter. `a.transpose(3, 0, 1, 2)` of an array shaped `(C, H, W, N)` is an NCHW
# array whose memory still runs batch-last: no number moves, only the strides change. That freedom
# matters for speed. A convolution copies and adds whole image planes at shifted offsets, and NumPy
# does that one contiguous run at a time: with NCHW memory a run is one image row, 14 numbers in the
# CNN's second layer; with the batch last in memory it is a row of all 64 images at once, 896 numbers,
# and the same work takes about half as long. So this chapter's `Conv` computes batch-last and hands
# its result on as an NCHW *view* of batch-last memory, and the operations after it keep that memory
# order: NumPy's element-wise functions, `np.copy` and `np.zeros_like` keep their input's order, while
# `array.copy()` and `np.zeros(shape)` make a new array in NCHW (C) order. Nothing of that changes a
# single value: the checks compare values only, and an op that ignores the memory order is right, just
# slower.

# %% [markdown] locked
# ## 10.2 `Flip`
#
# `Flip(axes)` reverses an array along some axes: along axis 0, $[1, 2, 3]$ becomes $[3, 2, 1]$; a
# $3 \times 3$ filter flipped along axes $(2, 3)$ is rotated by half a turn.
#
# **Backward.** Flipping moves every element to a new place and changes nothing else: output element
# $j$ *is* input element $n - 1 - j$. So the gradient of input element $n - 1 - j$ is the gradient of
# output element $j$, and the whole gradient is `out_grad` flipped back, along the same axes.
#
# *Example.* $a = [1, 2, 3]$, output $[3, 2, 1]$, `out_grad` $= [0.1, 0.2, 0.3]$: the gradient for $a$
# is $[0.3, 0.2, 0.1]$ (the $3$ went to position 0, so it gets $0.1$).
#
# As in chapter 3, `forward` works on NumPy arrays and `backward` returns Tensors. The backwards of
# this chapter are easiest to write on the arrays, `out_grad.data`, with the forwards you already have
# (`Flip(axes).forward(array)`), wrapping the result: `Tensor(grad)`. NumPy's `np.flip` returns a view;
# `.copy()` it so the output owns its memory.

# %% solution id=flip export
class Flip(Function):
    def __init__(self, axes):
        self.axes = tuple(axes)

    def forward(self, a):
        ### BEGIN SOLUTION
        return np.flip(a, self.axes).copy()
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return Tensor(np.flip(out_grad.data, self.axes).copy())
        ### END SOLUTION


def flip(a, axes):
    return Flip(axes)(a)

# %% test id=test_flip_forward points=1
verdict = check.all(check.forward(Flip((0,)), slow.flip((0,)), shapes=[(4,)], owns_memory=True),
                    check.forward(Flip((2, 3)), slow.flip((2, 3)), shapes=[(1, 2, 3, 3)], seed=1))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Flip((2, 3)), slow.flip((2, 3)), shapes=[(2, 3, 4, 5)], seed=11, owns_memory=True),
                    check.forward(Flip((0, 2)), slow.flip((0, 2)), shapes=[(3, 2, 4)], seed=12),
                    check.forward(Flip((-1,)), slow.flip((-1,)), shapes=[(2, 5)], seed=13))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_flip_backward points=2
verdict = check.backward(Flip((2, 3)), shapes=[(1, 2, 3, 3)])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Flip((0,)), shapes=[(5,)], seed=21),
                    check.backward(Flip((0, 2)), shapes=[(3, 2, 4)], seed=22),
                    check.backward(Flip((1,)), shapes=[(2, 3, 4)], seed=23),
                    check.backward(Flip((-1,)), shapes=[(2, 5)], seed=24))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 10.3 `Dilate` and `Undilate`
#
# `Dilate(axes, dilation)` spreads the elements apart along some axes, with `dilation` zeros between
# neighbours. A length $n$ becomes $(n - 1)(d + 1) + 1$:
#
# ```
#   a                        1 2 3
#   Dilate((0,), 1)(a)       1 0 2 0 3          (3 - 1) · 2 + 1 = 5
#   Dilate((0,), 2)(a)       1 0 0 2 0 0 3      (3 - 1) · 3 + 1 = 7
# ```
#
# In 2-D, along axes $(2, 3)$ of an NCHW batch, each row and each column get the zeros: a
# $2 \times 2$ image dilated by 1 is $3 \times 3$ with the four values in its corners. Section 10.5
# uses it to write the gradient of a strided convolution as a convolution.
#
# `Undilate(axes, dilation)` goes the other way: it keeps every $(d + 1)$-th element, starting with
# the first, `a[::d + 1]` along each axis. From $[1, 0, 2, 0, 3]$ with $d = 1$ it gives back $[1, 2, 3]$.
# The length it keeps from $n$ elements is $\lceil n / (d + 1) \rceil$.
#
# **Backward.** The zeros `Dilate` inserts are constants: only the output positions where the inputs
# landed depend on the input, one each. So the gradient of `Dilate` is `out_grad` read at those
# positions, every $(d + 1)$-th: exactly `Undilate`'s forward. And the gradient of `Undilate` is
# `out_grad` put back at the positions it was read from, with zeros for the elements it skipped.
# Careful: build it in the **input's** shape. `Undilate` accepts any length, say 6 elements with
# $d = 1$, whereas `Dilate` of its 3 outputs would have length 5.
#
# *Example.* `Undilate((0,), 1)` on $a = [a_0, \dots, a_5]$ returns $[a_0, a_2, a_4]$. With `out_grad`
# $= [1, 2, 3]$ the gradient for $a$ is $[1, 0, 2, 0, 3, 0]$.
#
# A tip for both: build one index per axis, `[slice(None)] * a.ndim`, put
# `slice(None, None, d + 1)` at each axis of `axes`, and use the tuple of them as an index: it works
# for reading (`a[index]`) and for writing (`out[index] = a`).

# %% solution id=dilate export
class Dilate(Function):
    def __init__(self, axes, dilation):
        self.axes, self.dilation = tuple(axes), dilation

    def forward(self, a):
        ### BEGIN SOLUTION
        step = self.dilation + 1
        shape, index = list(a.shape), [slice(None)] * a.ndim
        for axis in self.axes:
            shape[axis] = (a.shape[axis] - 1) * step + 1
            index[axis] = slice(None, None, step)
        out = np.zeros(shape, dtype=a.dtype)
        out[tuple(index)] = a
        return out
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        return Tensor(Undilate(self.axes, self.dilation).forward(out_grad.data))
        ### END SOLUTION


def dilate(a, axes, dilation):
    return Dilate(axes, dilation)(a)

# %% test id=test_dilate_forward points=1
verdict = check.all(check.forward(Dilate((0,), 1), slow.dilate((0,), 1), shapes=[(3,)]),
                    check.forward(Dilate((2, 3), 1), slow.dilate((2, 3), 1), shapes=[(1, 2, 3, 3)], seed=1))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Dilate((2, 3), 1), slow.dilate((2, 3), 1), shapes=[(2, 3, 3, 4)], seed=11),
                    check.forward(Dilate((1,), 2), slow.dilate((1,), 2), shapes=[(2, 4, 3)], seed=12),
                    check.forward(Dilate((0, 1), 0), slow.dilate((0, 1), 0), shapes=[(2, 3)], seed=13),
                    check.forward(Dilate((0,), 1), slow.dilate((0,), 1), shapes=[(1, 2)], seed=14))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_dilate_backward points=2
verdict = check.backward(Dilate((2, 3), 1), shapes=[(1, 2, 3, 3)], isolate=["Undilate"])
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Dilate((0,), 2), shapes=[(4,)], seed=21, isolate=["Undilate"]),
                    check.backward(Dilate((1,), 1), shapes=[(2, 3, 2)], seed=22, isolate=["Undilate"]),
                    check.backward(Dilate((0, 2), 3), shapes=[(2, 2, 3)], seed=23, isolate=["Undilate"]))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% solution id=undilate export
class Undilate(Function):
    def __init__(self, axes, dilation):
        self.axes, self.dilation = tuple(axes), dilation

    def forward(self, a):
        ### BEGIN SOLUTION
        index = [slice(None)] * a.ndim
        for axis in self.axes:
            index[axis] = slice(None, None, self.dilation + 1)
        return a[tuple(index)].copy()
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        a = node._inputs[0]
        index = [slice(None)] * a.ndim
        for axis in self.axes:
            index[axis] = slice(None, None, self.dilation + 1)
        grad = np.zeros(a.shape, dtype=out_grad.data.dtype)
        grad[tuple(index)] = out_grad.data
        return Tensor(grad)
        ### END SOLUTION


def undilate(a, axes, dilation):
    return Undilate(axes, dilation)(a)

# %% test id=test_undilate_forward points=1
verdict = check.all(check.forward(Undilate((0,), 1), slow.undilate((0,), 1), shapes=[(5,)]),
                    check.forward(Undilate((2, 3), 1), slow.undilate((2, 3), 1), shapes=[(1, 2, 5, 6)], seed=1))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Undilate((2, 3), 1), slow.undilate((2, 3), 1), shapes=[(2, 3, 5, 6)], seed=11),
                    check.forward(Undilate((1,), 2), slow.undilate((1,), 2), shapes=[(2, 8, 3)], seed=12),
                    check.forward(Undilate((0,), 3), slow.undilate((0,), 3), shapes=[(2, 3)], seed=13))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_undilate_backward points=2
verdict = check.all(check.backward(Undilate((0,), 1), shapes=[(5,)]),
                    check.backward(Undilate((0,), 1), shapes=[(6,)], seed=1))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(Undilate((0,), 1), shapes=[(6,)], seed=21),
                    check.backward(Undilate((2, 3), 1), shapes=[(1, 2, 5, 6)], seed=22),
                    check.backward(Undilate((1,), 2), shapes=[(2, 8, 3)], seed=23))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ## 10.4 `Conv`: the forward pass
#
# One output channel $o$ of a convolution at output position $(y, x)$ lays filter $o$ over a patch of
# the input and sums the products, over the patch and over all input channels:
#
# $$\text{out}[n, o, y, x] = \sum_{c}\sum_{i < k_h}\sum_{j < k_w} w[o, c, i, j]\;
#   x_{\text{pad}}[n, c,\; s\,y + i,\; s\,x + j] .$$
#
# * **Stride** $s$: the filter jumps $s$ pixels between positions. Stride 2 halves the output.
# * **Padding** $p$: $p$ rows and columns of zeros around the image first, so the filter can sit on
#   the border too. A $3 \times 3$ filter with $p = 1$ and $s = 1$ keeps the image's size.
#
# Along each axis the filter fits at $\lfloor (H + 2p - k) / s \rfloor + 1$ positions: that is the
# output's height (and the same with $W$ for its width). For MNIST, $H = 28$, $k = 3$, $p = 1$, $s = 1$:
# $(28 + 2 - 3) / 1 + 1 = 28$.
#
# *Example* (one image, one channel, one $2 \times 2$ filter, $s = 1$, $p = 0$):
#
# ```
#   x = 1 2 0        w =  1  0        out[0, 0] = 1·1 + 2·0 + 0·0 + 1·(−1) =  0
#       0 1 3             0 −1        out[0, 1] = 2·1 + 0·0 + 1·0 + 3·(−1) = −1
#       2 1 0                         out[1, 0] = 0·1 + 1·0 + 2·0 + 1·(−1) = −1
#                                     out[1, 1] = 1·1 + 3·0 + 1·0 + 0·(−1) =  1
# ```
#
# **One matrix product (im2col).** Four loops over $n, o, y, x$ would run $64 \cdot 16 \cdot 14 \cdot 14$
# Python steps per batch: far too slow. Instead, lay every patch out as a column of a matrix, and
# every filter as a row of another; then all the sums above are a single matrix product, which
# NumPy runs in compiled code:
#
# ```
#   patches (one column per output pixel)          filters (one row per output channel)
#   rows: C·kh·kw    columns: H_out·W_out·N        rows: O    columns: C·kh·kw
#
#   out = filters @ patches                        shape (O, H_out·W_out·N) → (N, O, H_out, W_out)
# ```
#
# Turning images into that matrix of patches is called **im2col** ("image to columns"). It works
# batch-last (section 10.1): the images as `(C, H, W, N)`, so that every copy below moves rows of
# all the images at once. NumPy hands you all the patches without copying anything:
# `sliding_window_view(x, (kh, kw), axis=(1, 2))` of the batch-last images has shape
# `(C, H', W', N, kh, kw)`: element `[c, y, x, n]` is the $k_h \times k_w$ patch of image $n$ whose top
# left corner is at $(y, x)$, for every stride-1 position. Keep every $s$-th position with
# `[:, ::s, ::s]`. So `im2col(x, kh, kw, stride, padding)`, for NCHW images `x`:
#
# 1. moves the batch last, `x.transpose(1, 2, 3, 0)` (a view), and pads it with
#    `np.pad(x, ((0, 0), (p, p), (p, p), (0, 0)))`;
# 2. takes the windows, keeps every $s$-th;
# 3. moves the axes to `(C, kh, kw, H_out, W_out, N)` with `.transpose(0, 4, 5, 1, 2, 3)` and reshapes to
#    `(C·kh·kw, H_out·W_out·N)` (this is where the copy happens, once); the row order `(C, kh, kw)` is
#    the order of `w.reshape(O, C·kh·kw)`'s columns, so the two line up;
# 4. returns the patches and `(H_out, W_out)`.
#
# `Conv.forward` is then `w.reshape(O, -1) @ patches`, reshaped to `(O, H_out, W_out, N)` and
# transposed to NCHW with `.transpose(3, 0, 1, 2)`: a view, whose memory stays batch-last.
#
# A cell after the forward's check counts the Python lines your forward and backward run: the count
# must not grow when the batch or the images grow. Loops over the kernel's few offsets are fine; loops
# over pixels are not. That count is a lesson, not points: it is taken inside your own kernel, where
# any code could change it, so the grader does not trust it. Where vectorized code pays is the
# capstone at the end of the chapter: a convolution that loops over the images and the pixels in Python
# runs millions of Python steps per epoch and cannot finish in the cell's time; one that loops over the
# output's pixels only, with each step vectorized over the batch and the channels, finishes, but about ten
# times slower than one matrix product (about 95 s of one core against under 10 s).

# %% [markdown] locked
# ## 10.5 `Conv`: the backward pass
#
# The forward took two steps, `patches = im2col(x)` and then `out = filters @ patches`. The backward
# walks back through both, with rules you already have from chapter 3. Let `g` be `out_grad` arranged
# like the product's result, `(O, H_out·W_out·N)`: transpose it to `(O, H_out, W_out, N)`, then reshape
# (free when `out_grad` lies batch-last in memory, as the gradients of the ops after `Conv` do).
#
# **The weights.** For the left factor of a matrix product the gradient is $G\,B^\top$:
#
# $$\text{grad\_filters} = g \cdot \text{patches}^\top, \quad \text{shape } (O, C·k_h·k_w) \to (O, C, k_h, k_w) .$$
#
# **The patches.** For the right factor it is $A^\top G$: $\text{grad\_patches} = \text{filters}^\top g$,
# shape `(C·kh·kw, H_out·W_out·N)`, its rows and columns in im2col's order.
#
# **The input.** im2col only copies: the entry in row $(c, i, j)$ and column $(y, x, n)$ of the
# patches *is* pixel $x_{\text{pad}}[n, c,\; s\,y + i,\; s\,x + j]$. A copy's gradient goes back to where
# it was read from, and a pixel read by several patches adds up all of their gradients: chapter 3's
# rule for `x[index]`, whose gradient puts `out_grad` back at the indices, summing where an index
# repeats. Sending every column of the patches' gradient back to the place it came from is called
# **folding** (col2im, im2col run backwards).
#
# One kernel offset at a time, it is a strided slice. The rows $(c, i, j)$ of the patches' gradient,
# for all $c$, reshaped to `(C, H_out, W_out, N)`, were read at rows $i, i + s, \dots, i + s(H_\text{out} - 1)$
# and columns $j, j + s, \dots$ of the padded batch-last images: `[:, i:i + s·H_out:s, j:j + s·W_out:s]`. **Add**
# them there: neighbouring offsets overlap, and `=` would keep only the last one's share. That is
# $k_h \cdot k_w$ additions, whatever the size of the images. Padded rows that no filter position
# reached (when $H + 2p - k$ is not a multiple of $s$) receive nothing and keep their zero.
#
# *Example*, in one dimension: $\text{out}[y] = \sum_i w[i]\, x[y + i]$ (stride 1, no padding), with $x$
# of length 4 and $w = [1, 2]$: $\text{out}$ has 3 elements. With $g = [1, 1, 1]$, row $i$ of the patches'
# gradient is $w[i]\,g$. Offset 0 adds $[1, 1, 1]$ at $x[0..2]$, offset 1 adds $[2, 2, 2]$ at $x[1..3]$:
# $[1, 1, 1, 0] + [0, 2, 2, 2] = [1, 3, 3, 2]$. Check by hand: $x[0]$ is only in $\text{out}[0]$, with
# weight $1$; $x[1]$ is in $\text{out}[0]$ with weight $2$ and in $\text{out}[1]$ with weight $1$: $3$. ✓
#
# **Padding.** The fold gives the gradient of the *padded* input. Cut the padding off:
# `[:, p:p + H, p:p + W]`. The padding zeros are constants and get no gradient.
#
# Put together:
#
# 1. weights: `g @ patches.T` with the patches from `im2col`, reshaped to `w.shape`;
# 2. the patches: `w.reshape(O, -1).T @ g`, reshaped to `(C, kh, kw, H_out, W_out, N)`;
# 3. input: zeros of shape `(C, H + 2p, W + 2p, N)`; for each offset $(i, j)$ add row block `[:, i, j]`
#    of the patches' gradient into its strided slice; cut off the padding $p$, and transpose to NCHW
#    with `.transpose(3, 0, 1, 2)`.
#
# The course's solution saves a second im2col, which you may leave out: its forward keeps
# `(x, patches)` on the op (`self.saved`), and its backward reuses the patches when `node`'s input is
# that same array (`is`), building them again otherwise (the checks call backward on nodes of their own).
#
# Return both as Tensors. One saving is worth making: a network's first layer receives the images,
# whose gradient nobody uses (`requires_grad` is False), and its input gradient is the most expensive
# one of all. When `node._inputs[0].requires_grad` is False, return zeros for it instead.
#
# **The same gradient, as a convolution.** Read the example from $x[j]$'s side. Input $x[j]$ meets
# weight $w[j - y]$ in output $y$, so
#
# $$\frac{\partial L}{\partial x[j]} = \sum_y g[y]\; w[j - y] :$$
#
# the weights visited backwards. That is a convolution of $g$ with the **flipped** filter, over $g$
# **padded with $k - 1$ zeros** on both sides (a "full" convolution, so that $x[0]$, touched by one output
# only, still gets its term): padded $g = [0, 1, 1, 1, 0]$ and flipped $w = [2, 1]$ slide to
# $[0·2 + 1·1,\; 1·2 + 1·1,\; 1·2 + 1·1,\; 1·2 + 0·1] = [1, 3, 3, 2]$, the fold's answer. With channels, the
# filters swap their in and out channels (`Flip((2, 3))` of `w`, transposed to `(C, O, kh, kw)`). A stride
# $s$ convolution is a stride-1 one of which only every $s$-th output is kept, so $g$ is first
# **dilated** by $s - 1$, zeros for the outputs that were skipped. So the gradient of a convolution
# is itself a convolution, of the dilated `out_grad` with the flipped filters: libraries call it a
# *transposed convolution*, and it is what `Flip` and `Dilate` are for. The cell after the check
# computes your input gradient both ways, with your ops. You may write the backward this way too;
# the checks accept either, and they use the course's `Flip` and `Dilate` for it, so a slip in yours
# above does not cost you these points twice. In NumPy the fold is the cheaper route: the convolution
# builds the patches of the padded gradient first, $k_h k_w$ times its size, where the fold adds in
# place.

# %% solution id=conv export
def im2col(x, kh, kw, stride=1, padding=0):
    """Every kh × kw patch of the padded images as a column: (C·kh·kw, H_out·W_out·N), and (H_out, W_out)."""
    ### BEGIN SOLUTION
    p = padding
    x = np.pad(x.transpose(1, 2, 3, 0), ((0, 0), (p, p), (p, p), (0, 0)))      # batch-last: (C, H, W, N)
    windows = sliding_window_view(x, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
    channels, height, width, n = windows.shape[:4]
    patches = windows.transpose(0, 4, 5, 1, 2, 3).reshape(channels * kh * kw, height * width * n)
    return patches, (height, width)
    ### END SOLUTION


class Conv(Function):
    def __init__(self, stride=1, padding=0):
        self.stride, self.padding = stride, padding

    def forward(self, x, w):
        ### BEGIN SOLUTION
        n_out, _, kh, kw = w.shape
        patches, (height, width) = im2col(x, kh, kw, self.stride, self.padding)
        self.saved = (x, patches)                   # for backward, which needs the same patches
        out = w.reshape(n_out, -1) @ patches
        return out.reshape(n_out, height, width, x.shape[0]).transpose(3, 0, 1, 2)   # NCHW, batch-last memory
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        x, w = node._inputs[0].data, node._inputs[1].data
        s, p = self.stride, self.padding
        n_out, channels, kh, kw = w.shape
        n, _, height, width = x.shape
        out_h, out_w = out_grad.shape[2:]
        # weights: out = filters @ patches, so grad_filters = g @ patches^T (chapter 3's MatMul rule)
        seen, patches = getattr(self, "saved", (None, None))
        if seen is not x:                            # not the x this op's forward ran on: build them again
            patches, _ = im2col(x, kh, kw, s, p)
        g = out_grad.data.transpose(1, 2, 3, 0).reshape(n_out, -1)
        grad_w = (g @ patches.T).reshape(w.shape)
        if not node._inputs[0].requires_grad:        # the images of the first layer: no one needs their gradient
            return Tensor(np.zeros_like(x)), Tensor(grad_w)
        # input: the patches' gradient (the MatMul rule again), each block added back where im2col read it
        cols = (w.reshape(n_out, -1).T @ g).reshape(channels, kh, kw, out_h, out_w, n)
        padded = np.zeros((channels, height + 2 * p, width + 2 * p, n), dtype=cols.dtype)
        for i in range(kh):
            for j in range(kw):
                padded[:, i:i + s * out_h:s, j:j + s * out_w:s] += cols[:, i, j]
        grad_x = padded[:, p:p + height, p:p + width].transpose(3, 0, 1, 2)
        return Tensor(grad_x), Tensor(grad_w)
        ### END SOLUTION


def conv(x, w, stride=1, padding=0):
    return Conv(stride, padding)(x, w)

# %% test id=test_conv_forward points=3
verdict = check.all(check.forward(Conv(), slow.conv(), shapes=[(1, 1, 3, 3), (1, 1, 2, 2)]),
                    check.forward(Conv(stride=1, padding=1), slow.conv(1, 1), shapes=[(2, 3, 5, 5), (4, 3, 3, 3)]),
                    check.forward(Conv(stride=2), slow.conv(2), shapes=[(1, 2, 5, 5), (3, 2, 3, 3)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(Conv(2, 0), slow.conv(2, 0), shapes=[(2, 3, 7, 6), (4, 3, 3, 3)], seed=11),
                    check.forward(Conv(2, 1), slow.conv(2, 1), shapes=[(1, 2, 6, 5), (3, 2, 2, 3)], seed=12),
                    check.forward(Conv(3, 2), slow.conv(3, 2), shapes=[(2, 1, 8, 8), (2, 1, 3, 3)], seed=13),
                    check.forward(Conv(1, 0), slow.conv(1, 0), shapes=[(3, 2, 4, 4), (5, 2, 1, 1)], seed=14),
                    check.forward(Conv(1, 1), slow.conv(1, 1), shapes=[(2, 3, 5, 6), (4, 3, 3, 3)], seed=15, layout="batch_last"),
                    check.forward(Conv(2, 0), slow.conv(2, 0), shapes=[(3, 2, 7, 6), (2, 2, 3, 3)], seed=16, layout="batch_last"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% provided
# How vectorized is your Conv? A lesson, not points (see above): it prints what it finds.
verdict = check.vectorized(Conv(stride=1, padding=1), shapes=[(1, 2, 6, 6), (3, 2, 3, 3)],
                           larger=[(4, 2, 12, 12), (3, 2, 3, 3)])
if not verdict.passed:
    print(verdict.message)

# %% test id=test_conv_backward points=6
verdict = check.all(check.backward(Conv(), shapes=[(1, 1, 4, 4), (1, 1, 2, 2)], isolate=["Flip", "Dilate"]),
                    check.backward(Conv(1, 1), shapes=[(2, 3, 5, 5), (4, 3, 3, 3)], isolate=["Flip", "Dilate"]),
                    check.backward(Conv(2), shapes=[(1, 2, 5, 5), (2, 2, 3, 3)], isolate=["Flip", "Dilate"]),
                    check.backward(Conv(2), shapes=[(1, 1, 6, 6), (2, 1, 3, 3)], isolate=["Flip", "Dilate"]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
helpers = ["Flip", "Dilate"]
verdict = check.all(check.backward(Conv(2, 0), shapes=[(2, 3, 5, 5), (4, 3, 3, 3)], seed=21, isolate=helpers),
                    check.backward(Conv(2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 3)], seed=22, isolate=helpers),
                    check.backward(Conv(2, 0), shapes=[(1, 2, 6, 7), (3, 2, 2, 3)], seed=23, isolate=helpers),
                    check.backward(Conv(2, 0), shapes=[(2, 1, 4, 4), (2, 1, 1, 1)], seed=24, isolate=helpers),
                    check.backward(Conv(3, 1), shapes=[(1, 2, 7, 6), (2, 2, 3, 2)], seed=25, isolate=helpers),
                    check.backward(Conv(1, 2), shapes=[(2, 1, 3, 4), (2, 1, 3, 3)], seed=26, isolate=helpers),
                    check.backward(Conv(2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 2)], seed=27, isolate=helpers, constant=[0]),
                    check.backward(Conv(2, 1), shapes=[(2, 2, 6, 5), (3, 2, 3, 2)], seed=28, isolate=helpers, constant=[1]),
                    check.backward(Conv(1, 1), shapes=[(2, 3, 5, 6), (4, 3, 3, 3)], seed=29, isolate=helpers, layout="batch_last"),
                    check.backward(Conv(1, 1), shapes=[(2, 2, 5, 5), (3, 2, 3, 3)], seed=30, isolate=helpers, other_forward=True),
                    check.backward(Conv(2, 0), shapes=[(2, 2, 6, 5), (3, 2, 2, 2)], seed=31, isolate=helpers, other_forward=True,
                                   layout="batch_last"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% provided
# Section 10.5's identity, with your ops: the input gradient of a convolution with stride 2 and padding 1,
# by your Conv's backward, and as the full convolution of the dilated out_grad with the flipped,
# channel-swapped filters (your Dilate, Flip and Conv.forward).
def input_grad_as_convolution(g, w, x_shape, stride, padding):
    kh, kw = w.shape[2:]
    height, width = x_shape[2:]
    g = Dilate((2, 3), stride - 1).forward(g)
    rest_h = height + 2 * padding - kh - (g.shape[2] - 1)      # padded rows no filter position reached
    rest_w = width + 2 * padding - kw - (g.shape[3] - 1)
    g_full = np.pad(g, ((0, 0), (0, 0), (kh - 1, kh - 1 + rest_h), (kw - 1, kw - 1 + rest_w)))
    w_flipped = Flip((2, 3)).forward(w).transpose(1, 0, 2, 3)
    return Conv().forward(g_full, w_flipped)[:, :, padding:padding + height, padding:padding + width]


def compare_input_gradients(stride=2, padding=1, seed=0):
    rng = np.random.default_rng(seed)
    x = Tensor(rng.standard_normal((2, 3, 7, 6)), requires_grad=True)
    w = Tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    op = Conv(stride, padding)
    out = op(x, w)
    g = rng.standard_normal(out.shape).astype(out.dtype)
    by_backward = op.backward(Tensor(g), out)[0].data
    by_convolution = input_grad_as_convolution(g, w.data, x.shape, stride, padding)
    print(f"the input gradient {by_backward.shape}, by your backward and as a convolution: largest difference "
          f"{np.abs(by_backward - by_convolution).max():.1e} (float32 rounding)")


try:
    compare_input_gradients()
except NotImplementedError:
    print("Flip, Dilate and Conv are not all written yet")

# %% [markdown] locked
# ## 10.6 `MaxPool`
#
# After a convolution, neighbouring outputs say nearly the same thing. **Max pooling** summarizes each
# $k \times k$ tile of every channel by its largest value: the image shrinks $k$-fold along each side,
# the next convolution sees a $k$ times wider area for the same cost, and a stroke moved by a pixel
# still lands in the same tile. The tiles do not overlap (the stride is $k$); rows or columns left
# over at the bottom or right, when $H$ or $W$ is not a multiple of $k$, are dropped.
#
# ```
#   one channel, k = 2                 out = 5 2            out_grad = 0.7 0.1
#   1 5 │ 0 2                                9 4                       0.2 0.4
#   3 2 │ 1 1
#   ────┼────                          gradient for the input:  0   0.7 │ 0   0.1
#   9 0 │ 4 3                                                   0   0   │ 0   0
#   2 7 │ 0 1                                                   ────────┼────────
#                                                               0.2 0   │ 0.4 0
#                                                               0   0   │ 0   0
# ```
#
# **Backward.** Inside a tile the output *is* its largest element: the gradient goes to that element,
# and the other three, which could move a little without changing the output, get 0. (When two
# elements tie, give it to the first one, as PyTorch does. Finite differences cannot judge a tie, nor
# two values closer than their nudge, so `check.backward` draws `domains="distinct"` inputs, whose
# values are all far apart, and `check.max_pool_ties` judges your backward on inputs tied in every tile.)
#
# **Vectorized.** `a[:, :, i::k, j::k]` (cut to `H_out·k` rows and `W_out·k` columns) is a view of the
# element at offset $(i, j)$ in every tile at once. So a loop over the $k^2$ offsets, with
# `np.maximum` in the forward and a comparison with the output in the backward, handles every tile
# of every image at each step.
#
# **Memory order** (section 10.1; speed only, the checks compare values). The input comes from a
# `Conv`, batch-last in memory; keep it that way. Make the forward's output with `np.copy` of the first
# offset's view (`.copy()` would make it C order), and the backward's arrays with `np.zeros_like(a)` and
# `np.ones_like(out)`. `out_grad` is another matter: after a `Flatten`, it arrives in C order, and every
# operation that mixes it with batch-last arrays walks one of them against its grain. Bring it into
# `out`'s memory order once, before the loop: `g = np.empty_like(out)` and `g[...] = out_grad.data`. In
# the capstone's CNN, that makes the backward close to four times faster than mixing the orders, or
# than making every array in C order.

# %% solution id=max_pool export
class MaxPool(Function):
    def __init__(self, kernel_size=2):
        self.kernel_size = kernel_size

    def forward(self, a):
        ### BEGIN SOLUTION
        k = self.kernel_size
        rows, cols = a.shape[2] // k * k, a.shape[3] // k * k
        out = np.copy(a[:, :, 0:rows:k, 0:cols:k])         # in a's memory order, unlike .copy()
        for i in range(k):
            for j in range(k):
                np.maximum(out, a[:, :, i:rows:k, j:cols:k], out=out)
        return out
        ### END SOLUTION

    def backward(self, out_grad, node):
        ### BEGIN SOLUTION
        k = self.kernel_size
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
        return Tensor(grad)
        ### END SOLUTION


def max_pool(a, kernel_size=2):
    return MaxPool(kernel_size)(a)

# %% test id=test_max_pool_forward points=1
verdict = check.all(check.forward(MaxPool(2), slow.max_pool(2), shapes=[(1, 1, 4, 4)]),
                    check.forward(MaxPool(2), slow.max_pool(2), shapes=[(1, 1, 5, 5)], seed=1))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.forward(MaxPool(2), slow.max_pool(2), shapes=[(2, 3, 5, 6)], seed=11),
                    check.forward(MaxPool(3), slow.max_pool(3), shapes=[(1, 2, 6, 7)], seed=12),
                    check.forward(MaxPool(1), slow.max_pool(1), shapes=[(2, 1, 3, 3)], seed=13),
                    check.forward(MaxPool(2), slow.max_pool(2), shapes=[(3, 2, 6, 6)], seed=14, layout="batch_last"))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_max_pool_backward points=2
verdict = check.all(check.backward(MaxPool(2), shapes=[(1, 1, 4, 4)], domains="distinct"),
                    check.backward(MaxPool(2), shapes=[(1, 1, 5, 5)], domains="distinct", seed=1),
                    check.max_pool_ties(MaxPool(2), shapes=[(1, 1, 4, 4)]))
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.backward(MaxPool(2), shapes=[(2, 3, 5, 6)], domains="distinct", seed=21),
                    check.backward(MaxPool(3), shapes=[(1, 2, 6, 7)], domains="distinct", seed=22),
                    check.backward(MaxPool(2), shapes=[(2, 2, 4, 4)], domains="distinct", seed=23),
                    check.max_pool_ties(MaxPool(2), shapes=[(2, 3, 5, 6)], seed=24),
                    check.max_pool_ties(MaxPool(3), shapes=[(1, 2, 6, 7)], seed=25),
                    check.backward(MaxPool(2), shapes=[(3, 2, 6, 6)], domains="distinct", seed=26, layout="batch_last"),
                    check.backward(MaxPool(2), shapes=[(2, 2, 5, 4)], domains="distinct", seed=27, other_forward=True))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% provided
# How vectorized is your MaxPool? A lesson, not points, as for Conv.
verdict = check.vectorized(MaxPool(2), shapes=[(1, 2, 4, 4)], larger=[(3, 2, 10, 8)])
if not verdict.passed:
    print(verdict.message)

# %% [markdown] locked
# ### Question 10.A · Where the pooling gradient goes (1 point, graded by your instructor)
#
# 1. In one backward pass, at most what fraction of the inputs of `MaxPool2d(2)` receive a non-zero
#    gradient?
# 2. A tile holds four equal values (say four zeros after a ReLU). Your `MaxPool` gives the whole
#    gradient to the first of them. Why is that a valid choice, and would giving a quarter to each also
#    be valid?
#
# ### BEGIN MARK SCHEME
# **1 point.** (1) At most one in four: one per tile. (2) With a tie, max has no derivative at that
# point: raising any one of the tied values raises the output, lowering it does not. Any split of the
# upstream gradient among the tied elements that adds up to it (one-hot, or a quarter each) is a valid
# subgradient; frameworks pick a convention (PyTorch: the first), so both are valid. Finite differences
# disagree with any choice there, which is why the finite-difference checks avoid ties (and
# `check.max_pool_ties` accepts any split that adds up to the tile's gradient).
#
# **0.5 points.** Only (1), or only (2).
#
# **0 points.** Neither.
# ### END MARK SCHEME

# %% answer id=q_pool_gradient points=1
# 1. One element per $2 \times 2$ tile gets the tile's gradient, so at most a quarter of the inputs
#    get a non-zero gradient (fewer if some of `out_grad` is zero).
# 2. With four equal values, max is not differentiable: nudging any one of them up raises the output
#    by the nudge, nudging it down changes nothing. There is no single right gradient, only a set of
#    valid ones (subgradients): any way of sharing the upstream gradient among the tied elements that
#    adds up to it. All of it to the first is one of them, a quarter each is another, and both lead to
#    the same training in practice. The first one is a convention, shared with PyTorch, so results
#    can be compared.

# %% [markdown] locked
# ## 10.7 The layers
#
# The operations become layers the way `MatMul` became `Linear` in chapter 4.
#
# **`Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True, *, seed=None)`**
# holds
#
# * `weight`, a `Parameter` of shape `(out_channels, in_channels, kernel_size, kernel_size)`,
#   initialized with chapter 7's Kaiming uniform. A convolution output sums over
#   `in_channels · kernel_size²` inputs: that is its fan-in. `kaiming_uniform(fan_in, fan_out, seed=seed)`
#   returns a `(fan_in, fan_out)` Tensor; ask it for `(in_channels · k², out_channels)`, then transpose
#   and reshape its array to the weight's shape;
# * `bias`, a `Parameter` of shape `(out_channels,)`, zeros (or `None` with `bias=False`).
#
# Its forward is `conv(x, weight, stride, padding)`, plus the bias, one number per output channel:
# reshape it to `(1, out_channels, 1, 1)` and `broadcast_to` the output's shape (babygrad's `+` does not
# broadcast, as in chapter 4's `Linear`).
#
# **`MaxPool2d(kernel_size=2)`** has no parameters; its forward is `max_pool(x, kernel_size)`.
#
# Chapter 4's `Flatten` turns the last feature maps `(N, C, H, W)` into `(N, C·H·W)` for a final `Linear`.
# The checks run your layers with the course's own `Conv` and `MaxPool`, so they grade the layers alone.

# %% solution id=conv2d export
class Conv2d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True, *, seed=None):
        super().__init__()
        self.stride, self.padding = stride, padding
        ### BEGIN SOLUTION
        fan_in = in_channels * kernel_size * kernel_size
        w = kaiming_uniform(fan_in, out_channels, seed=seed).data
        self.weight = Parameter(w.T.reshape(out_channels, in_channels, kernel_size, kernel_size))
        self.bias = Parameter(np.zeros(out_channels)) if bias else None
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        out = conv(x, self.weight, self.stride, self.padding)
        if self.bias is None:
            return out
        return out + self.bias.reshape((1, -1, 1, 1)).broadcast_to(out.shape)
        ### END SOLUTION


class MaxPool2d(Module):
    def __init__(self, kernel_size=2):
        super().__init__()
        self.kernel_size = kernel_size

    def forward(self, x):
        ### BEGIN SOLUTION
        return max_pool(x, self.kernel_size)
        ### END SOLUTION

# %% test id=test_conv2d points=2
verdict = check.conv2d()
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.all(check.conv2d(in_channels=1, out_channels=2, kernel_size=5, stride=2, padding=2, size=(9, 8), seed=3),
                    check.conv2d(in_channels=2, out_channels=3, kernel_size=1, seed=4),
                    check.conv2d(in_channels=16, out_channels=32, kernel_size=3, seed=5))
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% test id=test_max_pool2d points=1
verdict = check.max_pool2d()
assert verdict.passed, verdict.message
### BEGIN HIDDEN TESTS
verdict = check.max_pool2d(kernel_size=3, shape=(1, 2, 7, 9), seed=1)
assert verdict.passed, verdict.message
### END HIDDEN TESTS

# %% [markdown] locked
# ### Question 10.B · What sharing weights buys (2 points, graded by your instructor)
#
# The capstone's first layer, `Conv2d(1, 8, 3, stride=2, padding=1)`, turns a $(1, 28, 28)$ image into
# $(8, 14, 14)$.
#
# 1. How many parameters does it have? How many would a `Linear` layer need to map the 784 pixels to
#    the same $8 \cdot 14 \cdot 14 = 1568$ outputs?
# 2. How many multiply-adds does each of the two do for one image?
# 3. Weight sharing makes the layer far smaller. What does it assume about the inputs? Give a kind of
#    input for which that assumption is wrong.
#
# ### BEGIN MARK SCHEME
# **2 points.** All three (off-by-the-bias counts are fine):
# 1. $8 \cdot 1 \cdot 3 \cdot 3 + 8 = 80$; `Linear`: $784 \cdot 1568 + 1568 = 1{,}230{,}880$,
#    about 1.2 million;
# 2. convolution: $1568$ outputs × 9 = 14,112; `Linear`: $784 \cdot 1568 \approx 1.23$ million.
#    (A strong answer notes that locality, each output reading 9 pixels, saves the computation, and
#    sharing saves the parameters.)
# 3. the same local pattern means the same thing anywhere in the image (translation equivariance),
#    and what matters is local. Wrong when position carries meaning that differs from place to place
#    or neighbours are unrelated: a table whose columns are different measurements, a form whose
#    fields are at fixed places, the frequency axis of a spectrogram (arguably).
#
# **1 point.** The numbers right without a sound assumption, or the assumption well argued with wrong
# numbers.
#
# **0 points.** Neither.
# ### END MARK SCHEME

# %% answer id=q_weight_sharing points=2
# 1. The convolution has 8 filters of $1 \cdot 3 \cdot 3$ weights plus 8 biases: 80 parameters. A
#    `Linear(784, 1568)` has $784 \cdot 1568 + 1568 = 1{,}230{,}880$, about fifteen thousand times more.
# 2. Each of the 1,568 outputs of the convolution is a sum over 9 pixels: 14,112 multiply-adds per
#    image. Each output of the `Linear` layer sums over all 784 pixels: $784 \cdot 1568 \approx 1.23$
#    million. The computation shrinks because each output reads only a 3×3 patch (locality); the
#    parameters shrink because every position uses the same 8 filters (sharing).
# 3. Sharing assumes that a pattern means the same wherever it appears, so that a detector for a
#    stroke or an edge that is useful in one corner is useful everywhere, and that what matters is
#    local. For a row of a table, say age, income and height in adjacent columns, it is wrong: the same
#    "pattern" in different columns means different things, and neighbouring columns are not related
#    the way neighbouring pixels are. A `Linear` layer is the right tool there.

# %% [markdown] locked
# ## 10.8 Capstone: a CNN with at least 97% on the test set
#
# A small convolutional network for MNIST. It halves the image twice, in the two ways of this
# chapter: a first convolution with **stride 2**, then **max pooling** after the second convolution.
# Meanwhile the channels grow from 1 to 8 to 16, and one `Linear` layer reads the last feature maps.
#
# ```
#   image                                            (N, 1, 28, 28)
#   Conv2d 3×3, stride 2, padding 1, 1 → 8 channels  (N, 8, 14, 14)     80 weights
#   ReLU
#   Conv2d 3×3, padding 1, 8 → 16 channels           (N, 16, 14, 14)    1,168 weights
#   ReLU, MaxPool2d(2)                               (N, 16, 7, 7)
#   Flatten                                          (N, 784)
#   Linear 784 → 10                                  (N, 10)            7,850 weights
# ```
#
# About 9,000 weights, a tenth of chapter 9's MLP, and it does better: each filter is used at every
# position of the image. Write `build_cnn()`, returning a fresh model for batches of shape
# `(N, 1, 28, 28)`, with a fixed `seed` for every layer that has weights: the check builds it twice and
# compares the two models, which must be separate and equal in every weight. The cell below prints the
# shape after each layer of your model on two test digits.
#
# The graded cell then trains it with chapter 9's `Trainer`, with the same recipe as the MLP capstone
# (one epoch over the 60,000 training digits, batches of 64, `Adam(lr=0.002)`), and counts the right
# answers on the 10,000 test digits: **97%** is needed (`CNN_ACCURACY` in
# `autograder/student/checks/capstone.py`). The network above gets about 97.8%. Since the accuracy
# must be your library's, the grader then backpropagates a few test digits of its choosing through
# the trained model with your library and compares each parameter's gradient with its own. A `Conv`
# or `MaxPool` backward that is a little wrong can still train this network to 97%, but it does not
# earn the capstone: the capstone counts a model trained by a library that computes its gradients.
# The cell has two
# minutes on one processor core, and the network above, with this chapter's `Conv`, trains in under
# 10 seconds on the course's test machine. A `Conv` that loops in Python over the output's pixels (each
# step vectorized over the batch and the channels) took about 95 seconds there: it still passes, with
# little time to spare on a busy grader; one that also loops over the images or the channels does not
# finish. A first layer without the stride (8 channels at 28 × 28) costs more than four times as long.
# The cell prints the training time when you run it. The check in your notebook counts the accuracy
# only; the grader's gradient comparison above runs only while grading.

# %% solution id=build_cnn export
def build_cnn():
    """A fresh CNN: (N, 1, 28, 28) normalized images → (N, 10) logits."""
    ### BEGIN SOLUTION
    return Sequential(
        Conv2d(1, 8, 3, stride=2, padding=1, seed=1), ReLU(),
        Conv2d(8, 16, 3, padding=1, seed=2), ReLU(), MaxPool2d(2),
        Flatten(), Linear(16 * 7 * 7, 10, seed=3))
    ### END SOLUTION

# %% provided
def describe_shapes(model, x):
    """The output shape after each layer of a Sequential model, for the batch x."""
    print(f"{'input':28} {x.shape}")
    for layer in getattr(model, "modules", [model]):
        x = layer(x)
        print(f"{type(layer).__name__:28} {x.shape}")


try:
    cnn = build_cnn()
    digits = Tensor((parse_idx(mnist_files("test")[0])[:2, None].astype(np.float32) / 255 - 0.1307) / 0.3081,
                    requires_grad=False)
    describe_shapes(cnn, digits)
    print("weights:", int(np.sum([p.size for p in cnn.parameters()])))
except NotImplementedError:
    print("build_cnn is not written yet")

# %% test id=test_capstone_cnn points=7 numeric
verdict = check.capstone("cnn", build_cnn)
assert verdict.passed, verdict.message

# %% [markdown] locked
# That is the whole library: tensors that remember their history, a backward engine, layers and
# losses, optimizers, data loading, initialization, checkpoints, a trainer, and convolutions, all in
# NumPy, all yours, and good enough to read handwritten digits with about 98% accuracy.
