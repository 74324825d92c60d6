# %% [markdown]
# # Chapter 2 · The Tensor
#
# *This chapter is being written; today it holds the `Tensor` class that chapter 3 builds on.*

# %% solution id=tensor export
import numpy as np

NDArray = np.ndarray
DEFAULT_DTYPE = "float32"


class Tensor:
    """An n-dimensional array that remembers how it was computed."""

    def __init__(self, data, *, dtype=DEFAULT_DTYPE, requires_grad=True):
        ### BEGIN SOLUTION
        if isinstance(data, Tensor):
            data = data.data
        self.data = np.array(data, dtype=dtype)
        self.requires_grad = requires_grad
        self.grad = None
        self._op = None
        self._inputs = ()
        ### END SOLUTION

    @property
    def shape(self):
        return self.data.shape

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def size(self):
        return self.data.size

    @property
    def dtype(self):
        return self.data.dtype

    def numpy(self):
        """The values as a NumPy array (a copy: changing it leaves the tensor alone)."""
        return self.data.copy()

    def item(self):
        """The single value of a one-element tensor, as a Python number."""
        return self.data.item()

    def detach(self):
        """The same values, cut from the graph: no gradient flows through the result."""
        return Tensor(self.data, dtype=self.data.dtype, requires_grad=False)

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        body = np.array2string(self.data, precision=4, separator=", ", prefix="Tensor(")
        extras = [f"dtype={self.dtype}"] if self.dtype != np.dtype(DEFAULT_DTYPE) else []
        if self.requires_grad:
            extras.append("requires_grad=True")
        if self._op is not None:
            extras.append(f"op={type(self._op).__name__}")
        return f"Tensor({body}{''.join(', ' + e for e in extras)})"


def tensor_method(fn):
    """Attach `fn` to the Tensor class as a method: lets a notebook grow Tensor chapter by chapter."""
    setattr(Tensor, fn.__name__, fn)
    return fn


def zeros(*shape, dtype=DEFAULT_DTYPE, requires_grad=True):
    return Tensor(np.zeros(shape), dtype=dtype, requires_grad=requires_grad)


def ones(*shape, dtype=DEFAULT_DTYPE, requires_grad=True):
    return Tensor(np.ones(shape), dtype=dtype, requires_grad=requires_grad)


def randn(*shape, seed=None, dtype=DEFAULT_DTYPE, requires_grad=True):
    return Tensor(np.random.default_rng(seed).standard_normal(shape), dtype=dtype, requires_grad=requires_grad)


def rand(*shape, seed=None, dtype=DEFAULT_DTYPE, requires_grad=True):
    return Tensor(np.random.default_rng(seed).random(shape), dtype=dtype, requires_grad=requires_grad)

# %% test id=test_tensor points=2
t = Tensor([[1, 2, 3], [4, 5, 6]])
assert t.shape == (2, 3) and t.dtype == np.float32, "Tensor([[1, 2, 3], [4, 5, 6]]) should hold float32 values of shape (2, 3)"
assert t.grad is None and t._op is None and t._inputs == (), "a new Tensor has no gradient and no history"
### BEGIN HIDDEN TESTS
assert Tensor(t).shape == (2, 3) and Tensor(3.0).shape == (), "Tensor(Tensor) and Tensor(scalar) must work"
assert Tensor([1, 2], dtype="float64").dtype == np.float64, "dtype= must be honoured"
### END HIDDEN TESTS
