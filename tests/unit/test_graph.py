"""Tests for autograder.student.graph: the drawing must be valid SVG and show the graph backward() walks."""
import re
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from autograder.student import graph
from autograder.student.graph import GraphDrawing, draw_graph

SVG = "{http://www.w3.org/2000/svg}"
FIND_PROGRAM = shutil.which           # as it is before `no_graphviz` replaces it for each test


class Tensor:
    """Just the attributes draw_graph duck-types on, like the course's Tensor."""

    def __init__(self, data, op=None, inputs=(), name=None):
        self.data = np.asarray(data, dtype=float)
        self.grad = None
        self.requires_grad = True
        self._op = op
        self._inputs = tuple(inputs)
        if name is not None:
            self.name = name

    def __mul__(self, other):
        return Tensor(self.data * other.data, Mul(), (self, other))

    def __add__(self, other):
        return Tensor(self.data + other.data, Add(), (self, other))

    def sum(self, axes=None):
        return Tensor(self.data.sum(axis=axes), Summation(axes), (self,))


class Mul:
    pass


class Add:
    pass


class Summation:
    def __init__(self, axes=None):
        self.axes = axes


class MulScalar:
    def __init__(self, scalar):
        self.scalar = scalar


@pytest.fixture(autouse=True)
def no_graphviz(monkeypatch):
    """Always test the built-in renderer, even on a machine that has Graphviz installed."""
    monkeypatch.setattr(graph.shutil, "which", lambda name: None)


def parse(drawing):
    return ET.fromstring(drawing.svg)


def texts(root):
    return [t.text for t in root.iter(SVG + "text")]


def boxes(root):
    return root.findall(SVG + "rect")


def ops(root):
    return root.findall(SVG + "ellipse")


def edges(root):
    return root.findall(SVG + "path")


def test_returns_svg_that_jupyter_can_display():
    a = Tensor([1.0, 2.0], name="a")
    drawing = draw_graph(a * a)
    assert isinstance(drawing, GraphDrawing)
    assert drawing._repr_svg_() == drawing.svg
    root = parse(drawing)
    assert root.tag == SVG + "svg"
    assert float(root.get("width")) > 0 and float(root.get("height")) > 0


def test_shared_input_is_drawn_once():
    a = Tensor([1.0, 2.0], name="a")
    two = Tensor([2.0, 2.0], name="two")
    b = a * two
    c = a + b                      # diamond: a feeds Mul and Add
    root = parse(draw_graph(c))
    assert texts(root).count("a") == 1
    assert len(boxes(root)) == 4   # a, two, b, c
    assert len(ops(root)) == 2     # Mul, Add
    # a->Mul, two->Mul, Mul->b, a->Add, b->Add, Add->c
    assert len(edges(root)) == 6
    fills = {r.get("fill") for r in boxes(root)}
    assert fills == {graph.FILL["leaf"], graph.FILL["mid"], graph.FILL["out"]}


def test_square_has_two_edges_from_one_node():
    a = Tensor([3.0], name="a")
    root = parse(draw_graph(a * a))
    assert len(boxes(root)) == 2
    assert len(edges(root)) == 3   # a->Mul twice, Mul->output
    a_to_mul = [p.get("d") for p in edges(root)][:2]
    assert a_to_mul[0] != a_to_mul[1], "the two edges of a*a should not sit on top of each other"


def test_labels_show_ops_shapes_values_and_gradients():
    x = Tensor(np.ones((2, 3)), name="x")
    w = Tensor(np.full((2, 3), 0.5), name="w")
    loss = (x * w).sum(axes=(0, -1))
    labels = texts(parse(draw_graph(loss)))
    assert "Mul" in labels
    assert "Summation(axes=(0, -1))" in labels
    assert "shape (2, 3)" in labels
    assert "shape ()" in labels and "data 3.0" in labels
    assert not any(t.startswith("grad") for t in labels)

    loss.grad = np.array(1.0)
    x.grad = np.full((2, 3), 0.5)
    w.grad = np.array([[1.0, 2.0], [3.0, 4.0]])   # small: values are shown
    labels = texts(parse(draw_graph(loss)))
    assert "grad 1.0" in labels
    assert "grad shape (2, 3)" in labels
    assert "grad [[1.0, 2.0], [3.0, 4.0]]" in labels
    assert not any(t.startswith("grad") for t in texts(parse(draw_graph(loss, show_grad=False))))


def test_op_attributes_and_compact_numbers():
    a = Tensor([1 / 3, 2.0, 3.0, 4.0], name="a")
    doubled = Tensor(a.data * 2, MulScalar(2.0), (a,))
    labels = texts(parse(draw_graph(doubled)))
    assert "MulScalar(2.0)" in labels
    assert "data [0.3333, 2.0, 3.0, 4.0]" in labels
    big = Tensor(np.zeros(5), name="big")
    assert not any(t.startswith("data") for t in texts(parse(draw_graph(big))))
    ints = Tensor([0, 0])
    ints.data, ints.label = np.array([1, 2]), "counts"   # `.label` works like `.name`
    assert {"counts", "data [1, 2]"} <= set(texts(parse(draw_graph(ints))))


def test_deep_chain_is_iterative_and_truncated():
    t = Tensor([1.0], name="x0")
    for _ in range(10_000):
        t = t * t
    root = parse(draw_graph(t, max_nodes=50))
    assert len(boxes(root)) == 50
    assert "… 9951 more nodes not drawn" in texts(root)  # 10,001 tensors in all
    assert len(parse(draw_graph(t)).findall(SVG + "rect")) == 200  # the default cap


def test_text_is_escaped():
    a = Tensor([1.0], name="a < b & c")
    svg = draw_graph(a * a).svg
    assert "a &lt; b &amp; c" in svg
    assert "a < b & c" in texts(ET.fromstring(svg))


def test_rankdir_top_to_bottom_and_bad_value():
    a = Tensor([1.0], name="a")
    wide = parse(draw_graph(a * a * a))
    tall = parse(draw_graph(a * a * a, rankdir="TB"))
    assert float(wide.get("width")) > float(wide.get("height"))
    assert float(tall.get("height")) > float(tall.get("width"))
    with pytest.raises(ValueError):
        draw_graph(a, rankdir="sideways")


def test_save_writes_the_svg(tmp_path):
    a = Tensor([1.0], name="a")
    drawing = draw_graph(a * a)
    path = tmp_path / "graph.svg"
    drawing.save(path)
    assert path.read_text(encoding="utf-8") == drawing.svg
    ET.parse(path)


@pytest.mark.skipif(FIND_PROGRAM("dot") is None, reason="Graphviz's dot is not installed (.ci/run installs "
                    "Debian's graphviz); the built-in renderer is tested above")
def test_graphviz_lays_the_graph_out_when_dot_is_installed(monkeypatch, capfd):
    """The real `dot`, through the pinned graphviz package: its SVG, with every node's label, and nothing on stderr
    (a graded cell with stderr output scores 0)."""
    monkeypatch.setattr(graph.shutil, "which", FIND_PROGRAM)
    a, b = Tensor([1.0], name="a"), Tensor([2.0], name="b")
    drawing = draw_graph(a * b + a)
    assert "Generated by graphviz" in drawing.svg
    labels = " ".join(texts(parse(drawing)))
    assert all(word in labels for word in ("Mul", "Add", "a", "b")), labels
    root = parse(drawing)                  # a, b, a*b, the sum and the two ops; a feeds both ops
    assert [len(root.findall(f".//{SVG}g[@class='{kind}']")) for kind in ("node", "edge")] == [6, 6]
    assert capfd.readouterr().err == ""
    monkeypatch.setenv("BABYGRAD_GRAPH_RENDERER", "builtin")          # the course build's setting
    assert "Generated by graphviz" not in draw_graph(a * b + a).svg


# ── chapter 1's scalar Value ────────────────────────────────────────────────────────────────

class Value:
    """Chapter 1's Value, solved: `_prev` is a set, leaves have `_op == ""`, `grad` starts at 0.0."""

    def __init__(self, data, _children=(), _op=""):
        self.data = float(data)
        self.grad = 0.0
        self._prev = set(_children)
        self._op = _op
        self._backward = lambda: None

    def __add__(self, other):
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def backward(self):
        order, visited, stack = [], set(), [(self, False)]
        while stack:
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
            elif node not in visited:
                visited.add(node)
                stack.append((node, True))
                stack.extend((p, False) for p in node._prev)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


def chapter_example(creation_order="abcf"):
    """Chapter 1's L = (a*b + c)*f, a=2, b=-3, c=10, f=-2; leaves made in `creation_order`."""
    numbers = {"a": 2.0, "b": -3.0, "c": 10.0, "f": -2.0}
    v = {}
    for name in creation_order:
        v[name] = Value(numbers[name])
    v["e"] = v["a"] * v["b"]
    v["d"] = v["e"] + v["c"]
    v["L"] = v["d"] * v["f"]
    for name, value in v.items():
        value.name = name
    return v


def same_svg(first, second):
    """The two drawings' SVG, apart from the arrow marker's id (numbered per drawing, by design)."""
    return re.sub(r"bg-arrow-\d+", "bg-arrow", first.svg) == re.sub(r"bg-arrow-\d+", "bg-arrow", second.svg)


def test_value_graph_shows_every_value_op_and_gradient():
    v = chapter_example()
    before = parse(draw_graph(v["L"], show_grad=False))
    labels = texts(before)
    assert sorted(labels) == sorted(["a", "b", "c", "d", "e", "f", "L", "*", "*", "+",
                                     "data 2.0", "data -3.0", "data 10.0", "data -2.0",
                                     "data -6.0", "data 4.0", "data -8.0"])
    assert len(boxes(before)) == 7 and len(ops(before)) == 3
    assert len(edges(before)) == 9     # two into each op, one out of each
    fills = [r.get("fill") for r in boxes(before)]
    assert fills.count(graph.FILL["leaf"]) == 4 and fills.count(graph.FILL["mid"]) == 2
    assert fills.count(graph.FILL["out"]) == 1

    v["L"].backward()
    after = texts(parse(draw_graph(v["L"])))
    grads = {"a": 6.0, "b": -4.0, "c": -2.0, "d": -2.0, "e": -2.0, "f": 4.0, "L": 1.0}
    for name, grad in grads.items():
        assert after[after.index(name) + 2] == f"grad {grad}", f"{name}'s box should show its gradient"


def test_value_parents_in_chain_then_name_order():
    """Deeper parents first, then by name: the chapter's ASCII layout (a over b, e over c, d over f)."""
    v = chapter_example()
    root = parse(draw_graph(v["L"], show_grad=False))
    y = {t.text: float(t.get("y")) for t in root.iter(SVG + "text")}
    assert y["a"] < y["b"] and y["e"] < y["c"] and y["d"] < y["f"]


def test_value_drawing_does_not_depend_on_set_order_or_addresses():
    """Same graph, Values made in another order (other addresses), and every `_prev` iterating
    forwards in one build and backwards in the other: the SVG must be the same bytes."""
    first, second = chapter_example("abcf"), chapter_example("fcba")
    for v, reverse in ((first, False), (second, True)):
        for value in v.values():
            value._prev = sorted(value._prev, key=lambda p: p.name, reverse=reverse)
    assert [p.name for p in first["e"]._prev] != [p.name for p in second["e"]._prev]  # the orders do differ
    assert same_svg(draw_graph(first["L"]), draw_graph(second["L"]))
    for v in (first, second):
        v["L"].backward()
    assert same_svg(draw_graph(first["L"]), draw_graph(second["L"]))

    def unnamed(reverse):   # no names to sort by: data and what lies below must decide
        v = chapter_example()
        for value in v.values():
            del value.name
            value._prev = sorted(value._prev, key=lambda p: p.data, reverse=reverse)
        return draw_graph(v["L"])

    assert same_svg(unnamed(False), unnamed(True))


class Scalar:
    """A student's own minimal Value: `_prev` a tuple, ints allowed, no grad, no `_backward`."""

    def __init__(self, data, _prev=(), _op=""):
        self.data, self._prev, self._op = data, _prev, _op

    def __mul__(self, other):
        return Scalar(self.data * other.data, (self, other), "*")


def test_a_students_own_value_class_is_drawn():
    x = Scalar(3)
    y = x * x
    z = Scalar(y.data + 1, (y,), "")   # made by an op the student forgot to label
    root = parse(draw_graph(z))
    assert sorted(texts(root)) == ["*", "?", "data 10", "data 3", "data 9"]
    assert len(boxes(root)) == 3 and len(ops(root)) == 2
    assert len(edges(root)) == 5       # x->* twice, *->y, y->?, ?->z


def test_deep_value_chain_is_iterative_and_truncated():
    t = Value(1.0)
    for _ in range(10_000):
        t = t * t
    root = parse(draw_graph(t, max_nodes=50))
    assert len(boxes(root)) == 50
    assert "… 9951 more nodes not drawn" in texts(root)
