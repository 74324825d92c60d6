"""The judge's own gradients of a walked model (autograder/grading/judge/backward.py) are the derivatives of its
own forward (forward.py): central differences in float64 of sum(logits * upstream) agree with them for models of
every layer the judge walks, the capstone's CNN in small; they follow the course's rules where a derivative is a
choice (ReLU at 0, MaxPool2d's ties); and they are keyed by forward.flattened's leaves and the record's names."""
import copy

import numpy as np
import pytest

from autograder.grading.judge import forward
from autograder.grading.judge.backward import BACKWARDS, kinked_digits, parameter_gradients
from autograder.grading.judge.forward import Layer, NotWalkable, flattened, model_from_record
from autograder.student.gradcheck import numerical_gradients

STEP = 1e-6
PARAMETERS = ("weight", "bias")         # the other arrays (BatchNorm1d's running statistics) are not trained


def same(array):
    return array


def layer(name, config=None, **arrays):
    """A leaf record as in_kernel/capstone.layer_record makes it, the arrays passed through (`same` decodes them);
    an array given as None is in `none`, as bias=False is reported."""
    return {"name": name, "config": config or {}, "arrays": {k: v for k, v in arrays.items() if v is not None},
            "none": [k for k, v in arrays.items() if v is None], "skipped": {}}


def sequential(*children):
    return {"name": "Sequential", "config": {}, "arrays": {}, "none": [], "skipped": {}, "children": list(children)}


def linear(rng, n_in, n_out, bias=True):
    return layer("Linear", {"in_features": n_in, "out_features": n_out}, weight=rng.standard_normal((n_in, n_out)) / n_in ** 0.5,
                 bias=rng.standard_normal((1, n_out)) if bias else None)


def conv(rng, n_in, n_out, kernel, stride=1, padding=0, bias=True):
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    return layer("Conv2d", {"in_channels": n_in, "out_channels": n_out, "stride": stride, "padding": padding},
                 weight=rng.standard_normal((n_out, n_in, kh, kw)) / (n_in * kh * kw) ** 0.5,
                 bias=rng.standard_normal(n_out) if bias else None)


def norm(rng, name, dim):
    arrays = {"weight": 1 + rng.standard_normal(dim) / 4, "bias": rng.standard_normal(dim) / 4}
    if name == "BatchNorm1d":
        arrays |= {"running_mean": rng.standard_normal(dim), "running_var": rng.uniform(0.5, 2, dim)}
    return layer(name, {"dim": dim, "eps": 1e-5}, **arrays)


def simple(name):
    return layer(name)


def models():
    """name -> (model record, input shape): every layer the judge walks, in small models."""
    rng = np.random.default_rng(0)
    return {
        "linear": (sequential(linear(rng, 5, 4)), (6, 5)),
        "linear without bias": (sequential(linear(rng, 5, 4, bias=False), simple("Tanh"), linear(rng, 4, 3)), (6, 5)),
        "activations": (sequential(linear(rng, 5, 6), simple("ReLU"), linear(rng, 6, 6), simple("Sigmoid"),
                                   linear(rng, 6, 4), simple("Tanh"), simple("Identity"),
                                   layer("Dropout", {"p": 0.5}), linear(rng, 4, 3)), (7, 5)),
        "batch norm": (sequential(linear(rng, 5, 6), norm(rng, "BatchNorm1d", 6), simple("ReLU"), linear(rng, 6, 3)), (8, 5)),
        "layer norm": (sequential(linear(rng, 5, 6), norm(rng, "LayerNorm1d", 6), simple("Sigmoid"), linear(rng, 6, 3)), (8, 5)),
        "nested": (sequential(linear(rng, 5, 6), sequential(simple("ReLU"), sequential(linear(rng, 6, 4))),
                              simple("Flatten"), linear(rng, 4, 3)), (4, 5)),
        "capstone cnn": (sequential(conv(rng, 1, 2, 3, stride=2, padding=1), simple("ReLU"), conv(rng, 2, 3, 3, padding=1),
                                    simple("ReLU"), layer("MaxPool2d", {"kernel_size": 2}), simple("Flatten"),
                                    linear(rng, 3 * 2 * 2, 4)), (5, 1, 8, 8)),
        # a 5 × 5 map pooled by 2 (its last row and column dropped), and an oblong kernel, stride 2, padding 2:
        # 7 × 6 images padded to 11 × 10 give 5 × 5 maps; pooled by 3, two rows and two columns dropped
        "pooling drops": (sequential(conv(rng, 2, 3, 2, bias=False), simple("Tanh"), layer("MaxPool2d", {"kernel_size": 2}),
                                     simple("Flatten"), linear(rng, 3 * 2 * 2, 3)), (3, 2, 6, 6)),
        "oblong kernel": (sequential(conv(rng, 2, 3, (3, 2), stride=2, padding=2), simple("Sigmoid"),
                                     layer("MaxPool2d", {"kernel_size": 3}), simple("Flatten"), linear(rng, 3, 2)), (3, 2, 7, 6)),
    }


def finite_differences(record, images, upstream):
    """Central differences of sum(logits * upstream) for every parameter (the course's numerical_gradients), with
    the judge's forward in float64 on a copy of the record holding the nudged parameters."""
    record = copy.deepcopy(record)
    leaves = flattened(record)
    keys = [(index, key) for index, leaf in enumerate(leaves) for key in PARAMETERS if key in leaf["arrays"]]

    def logits(*params):
        for (index, key), value in zip(keys, params):
            leaves[index]["arrays"][key] = value
        out = model_from_record(record, same)(images)
        assert out.dtype == np.float64
        return out
    grads = numerical_gradients(logits, [leaves[index]["arrays"][key] for index, key in keys], upstream, step=STEP)
    return dict(zip(keys, grads))


@pytest.mark.parametrize("name", list(models()))
def test_the_gradients_are_the_forwards_derivatives(name):
    record, shape = models()[name]
    rng = np.random.default_rng(1)
    images = rng.standard_normal(shape)
    upstream = rng.standard_normal(model_from_record(record, same)(images).shape)
    ours = parameter_gradients(record, same, images, upstream)
    theirs = finite_differences(record, images, upstream)
    assert list(ours) == list(theirs)
    for key, grad in theirs.items():
        assert ours[key].dtype == np.float64 and ours[key].shape == grad.shape
        np.testing.assert_allclose(ours[key], grad, rtol=1e-6, atol=1e-6 * np.abs(grad).max(), err_msg=f"{name} {key}")


def test_the_course_rules_where_a_derivative_is_a_choice():
    """ReLU's slope at 0 is 0; MaxPool2d's window gradient goes to its first maximum in reading order, and the
    rows and columns it drops get nothing."""
    x = np.array([-1.0, 0.0, 2.0])
    grad_x, grads = BACKWARDS["ReLU"](Layer("ReLU", {}, {}, set()))(x, np.ones(3))
    assert grad_x.tolist() == [0, 0, 1] and grads == {}
    x = np.array([[[[1, 3, 3, 7, 0], [2, 3, 7, 7, 9], [5, 5, 4, 4, 0], [5, 5, 4, 6, 0], [9, 9, 9, 9, 9]]]], dtype=np.float64)
    pool = BACKWARDS["MaxPool2d"](Layer("MaxPool2d", {"kernel_size": 2}, {}, set()))
    grad_x, grads = pool(x, np.array([[[[10.0, 20.0], [30.0, 40.0]]]]))
    assert grads == {}
    assert grad_x[0, 0].tolist() == [[0, 10, 0, 20, 0], [0, 0, 0, 0, 0], [30, 0, 0, 0, 0], [0, 0, 0, 40, 0], [0, 0, 0, 0, 0]]


def test_the_keys_are_the_walked_leaves_and_the_records_names():
    """One key per parameter array of each leaf, in forward.flattened's order: a bias that is None has none,
    running statistics are not parameters; each gradient has its array's shape, computed in float64 from float32
    arrays, images and upstream gradient (float64 copies of the same numbers give the same gradients)."""
    rng = np.random.default_rng(2)
    record = sequential(conv(rng, 1, 2, 3, padding=1, bias=False), simple("ReLU"), simple("Flatten"),
                        sequential(linear(rng, 2 * 4 * 4, 6), norm(rng, "BatchNorm1d", 6)),
                        simple("Dropout"), norm(rng, "LayerNorm1d", 6), linear(rng, 6, 3, bias=False), linear(rng, 3, 2))
    images, upstream = rng.standard_normal((3, 1, 4, 4)), rng.standard_normal((3, 2))
    leaves = flattened(record)
    assert [leaf["name"] for leaf in leaves] == ["Conv2d", "ReLU", "Flatten", "Linear", "BatchNorm1d", "Dropout",
                                                 "LayerNorm1d", "Linear", "Linear"]
    as_float32 = {id(leaf): {k: v.astype(np.float32) for k, v in leaf["arrays"].items()} for leaf in leaves}
    for leaf in leaves:
        leaf["arrays"] = as_float32[id(leaf)]
    grads = parameter_gradients(record, np.asarray, images.astype(np.float32), upstream.astype(np.float32))
    assert list(grads) == [(0, "weight"), (3, "weight"), (3, "bias"), (4, "weight"), (4, "bias"),
                           (6, "weight"), (6, "bias"), (7, "weight"), (8, "weight"), (8, "bias")]
    for (index, key), grad in grads.items():
        assert grad.dtype == np.float64 and grad.shape == leaves[index]["arrays"][key].shape
    assert grads[3, "bias"].shape == (1, 6) and grads[0, "weight"].shape == (2, 1, 3, 3)
    for leaf in leaves:
        leaf["arrays"] = {k: v.astype(np.float64) for k, v in leaf["arrays"].items()}
    exact = parameter_gradients(record, same, images.astype(np.float32).astype(np.float64),
                                upstream.astype(np.float32).astype(np.float64))
    assert all(np.array_equal(grads[key], exact[key]) for key in exact)
    with pytest.raises(ValueError, match="upstream"):
        parameter_gradients(record, same, images, upstream[:, :1])


def test_a_layer_without_a_backward_is_not_walkable(monkeypatch):
    rng = np.random.default_rng(3)
    images, upstream = rng.standard_normal((2, 5)), rng.standard_normal((2, 3))
    with pytest.raises(NotWalkable, match="does not know: Softmax"):
        parameter_gradients(sequential(linear(rng, 5, 3), simple("Softmax")), same, images, upstream)
    monkeypatch.setitem(forward.LAYERS, "Swish", lambda layer: lambda x: x / (1 + np.exp(-x)))
    model = sequential(linear(rng, 5, 3), simple("Swish"))
    assert model_from_record(model, same)(images).shape == (2, 3)          # forward.py walks it; the judge cannot
    with pytest.raises(NotWalkable, match="no backward for Swish"):
        parameter_gradients(model, same, images, upstream)
    with pytest.raises(NotWalkable, match="no layers"):
        parameter_gradients(sequential(), same, images, upstream)
    with pytest.raises(NotWalkable, match="Linear.weight is not a 2-D array"):
        parameter_gradients(sequential(layer("Linear", weight=np.ones(5))), same, images, upstream)


@pytest.mark.parametrize("setting", [{"stride": float("nan")}, {"padding": float("inf")}])
def test_a_configuration_number_that_is_not_finite_is_not_walkable(setting):
    """JSON carries NaN and Infinity: a reported stride or padding that is not a finite number is the kernel's
    model the judge cannot rebuild, never an error in the judge."""
    rng = np.random.default_rng(4)
    record = conv(rng, 1, 2, 3)
    record["config"].update(setting)
    with pytest.raises(NotWalkable, match="is not a number"):
        model_from_record(sequential(record), same)


def kink_free(record, decode, images, margin):
    """Per image: clear of every kink the judge knows, a ReLU's and a max pool's (backward.kinked_digits)."""
    relu, pool = kinked_digits(record, decode, images, margin)
    return ~(relu | pool)


def test_digits_near_a_kink_are_left_out():
    """kinked_digits: an image with a ReLU input within the margin of 0, or a pool window whose two largest values are
    within it but not equal, is near a kink, where float32 and float64 may branch apart; exact ties (a blank
    background's identical receptive fields) are not."""
    identity = layer("Linear", {}, weight=np.eye(4), bias=np.zeros((1, 4)))
    images = np.array([[1.0, -2.0, 3.0, -4.0], [1.0, 1e-7, 3.0, -4.0], [1.0, -2.0, 3.0, 4.0]])
    clear = kink_free(sequential(identity, simple("ReLU")), same, images, 1e-5)
    assert clear.tolist() == [True, False, True]
    pool = sequential(layer("MaxPool2d", {"kernel_size": 2}))
    windows = np.array([[[[1.0, 2.0], [3.0, 4.0]]], [[[1.0, 4.0], [3.0, 4.0 - 1e-9]]], [[[1.0, 4.0], [3.0, 4.0]]]])
    assert kink_free(pool, same, windows, 1e-5).tolist() == [True, False, True]


def test_a_relu_input_near_zero_that_its_pool_window_outvotes_is_no_kink():
    """A ReLU input within the margin of 0 followed by a max pool gets a gradient in neither branch when its window
    holds a clearly larger output, nor when it lies in a row the pool drops: no kink. It is one when every output
    of its window is that close to 0, where float32 could make it the window's maximum. (A digit's blank corner
    sits that close to 0 in every image on some machines' trained weights, which left no digit to replay.)"""
    relu_pool = sequential(simple("ReLU"), layer("MaxPool2d", {"kernel_size": 2}))
    near = -1e-7
    images = np.array([[[[near, 0.5, 0.0], [0.2, -1.0, 0.0], [9.0, 9.0, 9.0]]],         # outvoted by 0.5 (and 9 sets the scale)
                       [[[near, -0.5, 0.0], [-0.2, -1.0, 0.0], [9.0, 9.0, 9.0]]],       # its window all at or below 0
                       [[[1.0, 0.5, 0.0], [0.2, -1.0, 0.0], [near, 9.0, 9.0]]],         # in the row the pool drops
                       [[[1.0, 0.5, near], [0.2, -1.0, 0.0], [9.0, 9.0, 9.0]]],         # in the column the pool drops
                       [[[near, 1e-4, 0.0], [-0.2, -1.0, 0.0], [9.0, 9.0, 9.0]]]])      # its window's largest within 2 margins
    assert kink_free(relu_pool, same, images, 1e-5).tolist() == [True, False, True, True, False]
    assert not kink_free(sequential(simple("ReLU")), same, images, 1e-5).any()


def test_the_students_value_at_a_kink_decides_the_branch():
    """parameter_gradients' overrides put the student's own value into a leaf's input where the mask is set: a ReLU
    input of exactly 0 (slope 0, the course's rule) reported as 1e-9 by the student's float32 takes the other
    branch, and the gradient into that unit appears; elsewhere nothing moves."""
    relu_model = sequential(layer("Linear", {}, weight=np.eye(2), bias=np.zeros((1, 2))), simple("ReLU"),
                            layer("Linear", {}, weight=np.array([[2.0], [3.0]]), bias=np.zeros((1, 1))))
    images, upstream = np.array([[0.0, 1.0]]), np.array([[1.0]])
    judged = parameter_gradients(relu_model, same, images, upstream)
    assert judged[0, "weight"].tolist() == [[0.0, 0.0], [0.0, 3.0]]
    mask = np.array([[True, False]])
    followed = parameter_gradients(relu_model, same, images, upstream, {1: (mask, np.array([1e-9]))})
    assert followed[0, "weight"].tolist() == [[0.0, 0.0], [2.0, 3.0]]
    assert followed[2, "weight"].ravel().tolist() == pytest.approx([1e-9, 1.0])


def test_a_kinked_relus_reported_input_is_used_only_within_its_margin():
    """capstone_gradients.students_branches: the kernel's input of a kinked ReLU is taken where it lies near 0, and
    refused, as a forward that is not the model's, when it differs from the judge's there by more than the margin."""
    from autograder.grading.judge.capstone_gradients import KINK_MARGIN, students_branches
    from autograder.grading.judge.probes import pack, returned
    from autograder.grading.judge.backward import relu_kinks

    model = sequential(layer("Linear", {}, weight=np.eye(3), bias=np.zeros((1, 3))), simple("ReLU"))
    images = np.array([[0.0, 1.0, -2.0], [0.5, 0.0, 2.0]])
    kinks = relu_kinks(model, same, images, KINK_MARGIN)
    assert list(kinks) == [1] and kinks[1][0].tolist() == [[True, False, False], [False, True, False]]

    def reply(values):      # the reply's 'inputs', as capstone_gradients.Gradients reads them
        return [returned({"kind": "array", "value": pack(np.array(values, dtype=np.float32))})]

    overrides, problem = students_branches(model, kinks, reply([[1e-8, 1.0, -2.0], [0.5, -1e-8, 2.0]]))
    assert problem is None and overrides[1][1] == pytest.approx([1e-8, -1e-8])
    overrides, problem = students_branches(model, kinks, reply([[0.5, 1.0, -2.0], [0.5, 0.0, 2.0]]))
    assert overrides is None and "does not compute the model: the input of layer 1 (ReLU)" in problem
    _, problem = students_branches(model, kinks, reply([[0.0, 1.0]]))
    assert "is not an array of shape (2, 3)" in problem
