"""Draw NumPy broadcasting for two small arrays, so students see which values get repeated.

The picture is plain SVG built here (no plotting library), so a notebook's output is the same on
every machine and every run.
"""
import html

import numpy as np

from autograder.student.graph import GraphDrawing

CELL, GAP, MARGIN, TITLE = 34, 40, 16, 40
FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
FILL = {"own": "#dbeafe", "copy": "#f1f5f9", "result": "#dcfce7"}
STROKE, TEXT, FADED = "#64748b", "#1e293b", "#94a3b8"


def _text(x, y, text, size=13, anchor="middle", color=TEXT, weight="normal"):
    return (f'<text x="{x:g}" y="{y:g}" font-family="{FONT}" font-size="{size}" fill="{color}" '
            f'font-weight="{weight}" text-anchor="{anchor}" dominant-baseline="middle">{html.escape(text)}</text>')


def _number(v):
    return f"{v:g}"


def _grid(x0, y0, values, own, fill_own, title):
    """A 2-D grid of cells; cells where `own` is true are the array's own values, the rest copies."""
    rows, cols = values.shape
    parts = [_text(x0 + cols * CELL / 2, y0 - TITLE / 2, title, weight="bold")]
    for i in range(rows):
        for j in range(cols):
            x, y = x0 + j * CELL, y0 + i * CELL
            mine = own[i, j]
            fill = FILL[fill_own] if mine else FILL["copy"]
            dashes = "" if mine else ' stroke-dasharray="3 2"'
            parts.append(f'<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" '
                         f'stroke="{STROKE}" stroke-width="1"{dashes}/>')
            parts.append(_text(x + CELL / 2, y + CELL / 2, _number(values[i, j]), color=TEXT if mine else FADED))
    return parts


def _as_2d(array):
    """The array seen as 2-D (rows, cols): missing axes are added on the left, as broadcasting does."""
    return np.asarray(array).reshape((1,) * (2 - np.ndim(array)) + np.shape(array))


def draw_broadcast(a, b):
    """An SVG of `a + b` for two arrays of at most 2 axes: each stretched to the common shape, then the sum.

    Solid cells are an array's own values; dashed, faded cells are the copies broadcasting makes.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim > 2 or b.ndim > 2:
        raise ValueError("draw_broadcast draws arrays of at most 2 axes")
    out_shape = np.broadcast_shapes(a.shape, b.shape)
    out_shape = (1,) * (2 - len(out_shape)) + tuple(out_shape)
    rows, cols = out_shape
    panels = []
    for name, array in (("a", a), ("b", b)):
        flat = _as_2d(array)
        own = np.zeros(out_shape, dtype=bool)
        own[:flat.shape[0], :flat.shape[1]] = True
        panels.append((f"{name} {array.shape} → {tuple(np.broadcast_shapes(a.shape, b.shape))}",
                       np.broadcast_to(flat, out_shape), own, "own"))
    total = a + b
    panels.append((f"a + b {total.shape}", total.reshape(out_shape), np.ones(out_shape, dtype=bool), "result"))

    width_panel = cols * CELL
    width = 2 * MARGIN + 3 * width_panel + 2 * GAP
    table_top = MARGIN + TITLE + rows * CELL + 24
    height = table_top + 4 * 20 + MARGIN
    parts = []
    for k, (title, values, own, fill) in enumerate(panels):
        x0 = MARGIN + k * (width_panel + GAP)
        parts += _grid(x0, MARGIN + TITLE, values, own, fill, title)
        if k < 2:
            parts.append(_text(x0 + width_panel + GAP / 2, MARGIN + TITLE + rows * CELL / 2, ("+", "=")[k], size=22))
    # the right-alignment rule, as a small table of shapes
    result = tuple(np.broadcast_shapes(a.shape, b.shape))
    length = len(result)
    lines = [("a", a.shape), ("b", b.shape), ("a + b", result)]
    for i, (name, shape) in enumerate(lines):
        y = table_top + i * 20
        parts.append(_text(MARGIN + 60, y, f"{name}:", anchor="end", weight="bold" if i == 2 else "normal"))
        padded = ("",) * (length - len(shape)) + tuple(str(n) for n in shape)
        for j, n in enumerate(padded):
            parts.append(_text(MARGIN + 80 + j * 28, y, n or "·", color=TEXT if n else FADED))
    parts.append(_text(MARGIN, table_top + 3 * 20 + 4, "shapes aligned on the right: a missing axis (·) "
                       "or an axis of length 1 is stretched", anchor="start", size=12, color=FADED))
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}">' + "".join(parts) + "</svg>")
    return GraphDrawing(svg)
