"""The text's pictures: valid SVG that shows what the prose says."""
import xml.etree.ElementTree as ET

import pytest

from autograder.student.pictures import broadcast_picture, transpose_picture

SVG = "{http://www.w3.org/2000/svg}"


def texts(drawing):
    root = ET.fromstring(drawing.svg)
    assert root.tag == SVG + "svg" and float(root.get("width")) > 0
    return [t.text for t in root.iter(SVG + "text")]


def test_broadcast_shows_every_copy_and_the_gradient_rule():
    labels = texts(broadcast_picture((3, 1), (2, 3, 4)))
    assert [labels.count(letter) for letter in "abc"] == [1 + 8, 1 + 8, 1 + 8]   # the input, then 8 copies each
    assert "1. prepend 1 axis of size 1: (3, 1) is read as (1, 3, 1)" in labels
    assert "2. stretch axis 2 (size 1) by copying" in labels
    assert any("8 copies" in t and "sum" in t for t in labels)


def test_broadcast_without_prepending():
    labels = texts(broadcast_picture((1, 3), (2, 3)))
    assert [labels.count(letter) for letter in "abc"] == [3, 3, 3]
    assert not any(t.startswith("1. prepend") for t in labels)
    assert "1. stretch axis 0 (size 1) by copying" in labels


def test_broadcast_refuses_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError):
        broadcast_picture((3, 2), (2, 3, 4))


def test_transpose_shows_the_inverse_permutation():
    labels = texts(transpose_picture((3, 2, 5), (1, 2, 0)))
    assert ["axis 0: 3", "axis 1: 2", "axis 2: 5"] == labels[1:4]                 # the input row
    assert "output (2, 5, 3)" in labels and "gradient (3, 2, 5)" in labels
    assert "backward: axes=(2, 0, 1)" in labels


def test_transpose_refuses_a_non_permutation():
    with pytest.raises(ValueError):
        transpose_picture((3, 2), (0, 0))
