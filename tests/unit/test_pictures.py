"""The text's pictures: valid SVG that shows what the prose says."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from autograder.student.pictures import broadcast_picture, transpose_picture

SVG = "{http://www.w3.org/2000/svg}"


def texts(drawing):
    root = ET.fromstring(drawing.svg)
    assert root.tag == SVG + "svg" and float(root.get("width")) > 0
    return [t.text for t in root.iter(SVG + "text")]


def cells(drawing):
    """(text, is a copy) of every cell, in drawing order; a copy is drawn dashed."""
    root = ET.fromstring(drawing.svg)
    rects = root.findall(SVG + "rect")
    by_place = {(float(t.get("x")), float(t.get("y"))): t.text for t in root.findall(SVG + "text")}
    return [(by_place[(float(r.get("x")) + float(r.get("width")) / 2, float(r.get("y")) + float(r.get("height")) / 2 + 4)],
             bool(r.get("stroke-dasharray"))) for r in rects]


def test_broadcast_of_two_arrays_marks_own_values_and_copies_then_the_sum():
    a, b = np.array([[0.0], [10.0], [20.0]]), np.array([1.0, 2.0, 3.0, 4.0])
    drawn = cells(broadcast_picture(a, b))
    assert len(drawn) == 3 * 12                                    # a, b and a + b, each at (3, 4)
    a_cells, b_cells, sums = drawn[:12], drawn[12:24], drawn[24:]
    assert [text for text, copy in a_cells if not copy] == ["0", "10", "20"]
    assert [text for text, copy in b_cells if not copy] == ["1", "2", "3", "4"]
    assert [text for text, _ in b_cells] == ["1", "2", "3", "4"] * 3
    assert [text for text, _ in sums] == [f"{v:g}" for v in (a + b).ravel()] and not any(c for _, c in sums)
    labels = texts(broadcast_picture(a, b))
    assert {"a (3, 1) → (3, 4)", "b (4,) → (3, 4)", "a + b (3, 4)", "·"} <= set(labels)
    assert "b: prepend 1 axis of size 1, (4,) is read as (1, 4)" in labels
    assert "each value of b is used 3 times: its gradient is the sum over axis 0" in labels


def test_broadcast_to_a_shape_shows_every_copy_and_the_gradient_rule():
    picture = broadcast_picture(np.array([["a"], ["b"], ["c"]]), to=(2, 3, 4), names=["x"])
    drawn = cells(picture)
    assert [text for text, copy in drawn if not copy] == ["a", "b", "c"]   # page 0, column 0
    assert [text for text, _ in drawn].count("a") == 8                      # 1 own + 7 copies
    labels = texts(picture)
    assert "x (3, 1) → (2, 3, 4)" in labels and "[1]" in labels
    assert "x: prepend 1 axis of size 1, (3, 1) is read as (1, 3, 1); stretch axis 2 (size 1) by copying" in labels
    assert "each value of x is used 8 times: its gradient is the sum over axes 0 and 2" in labels


def test_broadcast_without_prepending_or_copying():
    labels = texts(broadcast_picture(np.ones((1, 3)), to=(2, 3)))
    assert "a: stretch axis 0 (size 1) by copying" in labels
    labels = texts(broadcast_picture(np.ones((2, 3)), to=(2, 3)))
    assert "a: already (2, 3), nothing to copy" in labels and "each value of a is used once" in labels


def test_pictures_are_the_same_svg_whatever_was_drawn_before():
    def broadcast():
        return broadcast_picture(np.arange(6.0).reshape(2, 3), np.array([0.5, -1.0, 2.0])).svg

    def transpose():
        return transpose_picture((2, 3), (1, 0)).svg
    first_broadcast, first_transpose = broadcast(), transpose()
    assert (transpose(), broadcast()) == (first_transpose, first_broadcast)
    assert transpose_picture((3, 2), (1, 0)).svg != first_transpose


def test_broadcast_refuses_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match="does not broadcast"):
        broadcast_picture(np.zeros((3, 2)), to=(2, 3, 4))
    with pytest.raises(ValueError, match="do not broadcast together"):
        broadcast_picture(np.zeros((2, 3)), np.zeros(2))
    with pytest.raises(ValueError, match="up to 3 axes"):
        broadcast_picture(np.zeros((2, 1, 1, 1)), np.zeros(3))


def test_transpose_shows_the_inverse_permutation():
    labels = texts(transpose_picture((3, 2, 5), (1, 2, 0)))
    assert ["axis 0: 3", "axis 1: 2", "axis 2: 5"] == labels[1:4]                 # the input row
    assert "output (2, 5, 3)" in labels and "gradient (3, 2, 5)" in labels
    assert "backward: axes=(2, 0, 1)" in labels


def test_transpose_refuses_a_non_permutation():
    with pytest.raises(ValueError):
        transpose_picture((3, 2), (0, 0))
