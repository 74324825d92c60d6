"""Chapter 2's catalog of typical mistakes, and of correct answers written another way.

Each entry is an answer a student might really write, given as edits to the solved exercise cell,
with the test cells it must lose (`loses`; empty for a correct alternative). The tests grade them
with the real `nbgrader autograde` and require exactly those cells to lose their points.
"""
from autograder.build.submissions import right, wrong



STORE = "self.data = np.array(data, dtype=dtype)"
UNWRAP = "        if isinstance(data, Tensor):\n            data = data.data\n"
DETACH = "return Tensor(self.data, dtype=self.data.dtype, requires_grad=False)"
EXTRAS = 'extras = [f"dtype={self.dtype}"] if self.dtype != np.dtype(DEFAULT_DTYPE) else []'
RANDN = "return Tensor(np.random.default_rng(seed).standard_normal(shape), dtype=dtype, requires_grad=requires_grad)"
RAND = "return Tensor(np.random.default_rng(seed).random(shape), dtype=dtype, requires_grad=requires_grad)"

MISTAKES = [
    # Constructor
    wrong("constructor_no_dtype", "lets NumPy pick the dtype: integers stay int64, floats float64",
          "constructor", STORE, "self.data = np.array(data)", ["test_constructor"]),
    wrong("constructor_fixed_float32", "always float32, ignoring the dtype argument",
          "constructor", STORE, "self.data = np.array(data, dtype=np.float32)", ["test_constructor"]),
    wrong("constructor_asarray", "np.asarray: a tensor made from a tensor shares its memory",
          "constructor", STORE, "self.data = np.asarray(data, dtype=dtype)", ["test_constructor"]),
    wrong("constructor_tensor_keeps_dtype", "a Tensor given as data keeps its own dtype: Tensor(a) of a float64 a stays float64",
          "constructor", "            data = data.data\n", "            data = data.data\n            dtype = data.dtype\n",
          ["test_constructor"]),
    wrong("constructor_ignores_requires_grad", "requires_grad always True",
          "constructor", "self.requires_grad = requires_grad", "self.requires_grad = True", ["test_constructor"]),
    # Properties
    wrong("size_is_len", "size as the length of the first axis", "properties",
          "return self.data.size", "return len(self.data)", ["test_properties"]),
    wrong("shape_as_list", "shape as a list instead of NumPy's tuple", "properties",
          "return self.data.shape", "return list(self.data.shape)", ["test_properties"]),
    wrong("dtype_default", "dtype returns the default instead of the data's", "properties",
          "return self.data.dtype", "return np.dtype(DEFAULT_DTYPE)", ["test_properties"]),
    # Conversions
    wrong("numpy_no_copy", "numpy() hands out the tensor's own array", "conversions",
          "return self.data.copy()", "return self.data", ["test_conversions"]),
    wrong("item_indexes", "item() as data[0]: a NumPy scalar, and an error for shape ()", "conversions",
          "return self.data.item()", "return self.data.flat[0]", ["test_conversions"]),
    wrong("detach_loses_dtype", "detach() rebuilds with the default dtype, turning float64 into float32",
          "conversions", DETACH, "return Tensor(self.data, requires_grad=False)", ["test_conversions"]),
    wrong("detach_keeps_grad", "detach() keeps requires_grad", "conversions", DETACH,
          "return Tensor(self.data, dtype=self.data.dtype, requires_grad=self.requires_grad)", ["test_conversions"]),
    # Repr
    wrong("repr_always_dtype", "always shows dtype", "repr", EXTRAS, 'extras = [f"dtype={self.dtype}"]',
          ["test_repr"]),
    wrong("repr_no_prefix", "no prefix: the rows of a matrix do not line up", "repr",
          'body = np.array2string(self.data, precision=4, separator=", ", prefix="Tensor(")',
          'body = np.array2string(self.data, precision=4, separator=", ")', ["test_repr"]),
    wrong("repr_op_object", "shows the op object instead of its class name", "repr",
          'extras.append(f"op={type(self._op).__name__}")', 'extras.append(f"op={self._op}")', ["test_repr"]),
    # Factories
    wrong("zeros_unpacks_shape", "np.zeros(*shape): the second number is read as a dtype", "factories",
          "return Tensor(np.zeros(shape), dtype=dtype, requires_grad=requires_grad)",
          "return Tensor(np.zeros(*shape), dtype=dtype, requires_grad=requires_grad)", ["test_constant_factories"]),
    wrong("ones_ignores_dtype", "ones() forgets to pass dtype on", "factories",
          "return Tensor(np.ones(shape), dtype=dtype, requires_grad=requires_grad)",
          "return Tensor(np.ones(shape), requires_grad=requires_grad)", ["test_constant_factories"]),
    wrong("randn_seed_truthiness", "tests `if seed:`, so seed=0 draws unseeded numbers", "factories", RANDN,
          "return Tensor((np.random.default_rng(seed) if seed else np.random.default_rng()).standard_normal(shape), "
          "dtype=dtype, requires_grad=requires_grad)", ["test_random_factories"]),
    wrong("randn_ignores_seed", "randn() draws from a fresh generator, ignoring the seed", "factories", RANDN,
          "return Tensor(np.random.default_rng().standard_normal(shape), dtype=dtype, requires_grad=requires_grad)",
          ["test_random_factories"]),
    wrong("rand_is_normal", "rand() copied from randn: normal instead of uniform", "factories", RAND,
          RANDN, ["test_random_factories"]),
    # what a factory passes on, and the constructor's and repr's fields
    wrong("zeros_ignores_requires_grad", "zeros() forgets to pass requires_grad on", "factories",
          "return Tensor(np.zeros(shape), dtype=dtype, requires_grad=requires_grad)",
          "return Tensor(np.zeros(shape), dtype=dtype)", ["test_constant_factories"]),
    wrong("constructor_keeps_requires_grad", "a Tensor given as data passes its requires_grad on: Tensor(c) of a "
          "constant c is a constant", "constructor", UNWRAP,
          "        if isinstance(data, Tensor):\n            requires_grad = data.requires_grad\n            data = data.data\n",
          ["test_constructor"]),
    wrong("constructor_stores_dtype", "also stores self.dtype: once the dtype property exists, every Tensor(...) "
          "raises AttributeError", "constructor", "self.requires_grad = requires_grad",
          "self.requires_grad = requires_grad\n        self.dtype = self.data.dtype", ["test_constructor"]),
    wrong("repr_dtype_only_float64", "shows dtype only for float64, not for every dtype but float32", "repr", EXTRAS,
          'extras = [f"dtype={self.dtype}"] if self.dtype == np.float64 else []', ["test_repr"]),
]

ALTERNATIVES = [
    right("constructor_astype", "np.asarray(...).astype(dtype): astype copies", "constructor", STORE,
          "self.data = np.asarray(data).astype(dtype)"),
    right("constructor_one_line", "unwrap and convert in one expression", "constructor", UNWRAP + "        " + STORE,
          "        self.data = np.array(data.data if isinstance(data, Tensor) else data, dtype=dtype)"),
    right("size_from_shape", "size as the product of the shape", "properties", "return self.data.size",
          "return int(np.prod(self.data.shape))"),
    right("ndim_from_shape", "ndim as len(shape)", "properties", "return self.data.ndim", "return len(self.data.shape)"),
    right("numpy_array_copy", "np.array copies", "conversions", "return self.data.copy()", "return np.array(self.data)"),
    right("detach_via_numpy", "detach through numpy()", "conversions", DETACH,
          "return Tensor(self.numpy(), dtype=self.dtype, requires_grad=False)"),
    right("item_float", "float() of the only element", "conversions", "return self.data.item()",
          "return float(self.data.reshape(-1)[0])"),
    right("repr_pieces", "the string built piece by piece", "repr",
          EXTRAS + "\n    if self.requires_grad:\n        extras.append(\"requires_grad=True\")\n"
          "    if self._op is not None:\n        extras.append(f\"op={type(self._op).__name__}\")\n"
          "    return f\"Tensor({body}{''.join(', ' + e for e in extras)})\"",
          "text = \"Tensor(\" + body\n    if self.dtype != np.float32:\n        text += \", dtype=\" + self.dtype.name\n"
          "    if self.requires_grad:\n        text += \", requires_grad=True\"\n"
          "    if self._op is not None:\n        text += \", op=\" + self._op.__class__.__name__\n    return text + \")\""),
    right("factories_full", "np.full for the constants, a named generator for the random ones", "factories",
          "return Tensor(np.zeros(shape), dtype=dtype, requires_grad=requires_grad)",
          "return Tensor(np.full(shape, 0.0), dtype=dtype, requires_grad=requires_grad)"),
    right("randn_generator", "the generator in a variable", "factories", RANDN,
          "rng = np.random.default_rng(seed)\n    values = rng.standard_normal(size=shape)\n"
          "    return Tensor(values, dtype=dtype, requires_grad=requires_grad)"),
    # right answers near those checks
    right("constructor_unwraps_with_numpy", "a Tensor given as data is unwrapped with its numpy() method", "constructor",
          UNWRAP, "        if isinstance(data, Tensor):\n            data = data.numpy()\n"),
    right("repr_dtype_name", "dtype compared and shown by its name", "repr", EXTRAS,
          'extras = [f"dtype={self.dtype.name}"] if self.dtype.name != "float32" else []'),
    right("zeros_dtype_in_numpy", "the constant arrays made in the requested dtype already", "factories",
          "return Tensor(np.zeros(shape), dtype=dtype, requires_grad=requires_grad)",
          "return Tensor(np.zeros(shape, dtype=dtype), dtype=dtype, requires_grad=requires_grad)"),
]

DEMO_PARTIAL = ["constructor_no_dtype", "numpy_no_copy", "randn_ignores_seed"]
