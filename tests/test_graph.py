"""Tests for autograder.graph: the drawing must be valid SVG and show the graph backward() walks."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from autograder import graph
from autograder.graph import GraphDrawing, draw_graph

SVG = "{http://www.w3.org/2000/svg}"


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


def test_graphviz_is_used_when_dot_works(monkeypatch):
    graphviz = pytest.importorskip("graphviz")
    monkeypatch.setattr(graph.shutil, "which", lambda name: "/usr/bin/dot")
    sources = []

    def fake_pipe(self, format):
        sources.append(self.source)
        return b"<svg xmlns='http://www.w3.org/2000/svg'><text>from dot</text></svg>"

    monkeypatch.setattr(graphviz.Digraph, "pipe", fake_pipe)
    a = Tensor([1.0], name="a")
    assert "from dot" in draw_graph(a * a).svg
    assert "Mul" in sources[0] and sources[0].count("->") == 3


def test_broadcast_drawing_marks_own_values_and_copies():
    from autograder.broadcasting import draw_broadcast

    root = ET.fromstring(draw_broadcast(np.array([[0.0], [10.0], [20.0]]), np.array([1.0, 2.0, 3.0, 4.0])).svg)
    cells = root.findall(SVG + "rect")
    copies = [r for r in cells if r.get("stroke-dasharray")]
    assert len(cells) == 3 * 12 and len(copies) == 9 + 8      # a: 3 own of 12, b: 4 own of 12, sum: all own
    labels = texts(root)
    assert {"a (3, 1) → (3, 4)", "b (4,) → (3, 4)", "a + b (3, 4)", "24", "·"} <= set(labels)
    with pytest.raises(ValueError):
        draw_broadcast(np.zeros((2, 2, 2)), np.zeros(2))
