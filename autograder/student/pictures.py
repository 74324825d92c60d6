"""Pictures for the text, where a picture is clearer than a paragraph: broadcasting (one picture, for
chapter 2's values and chapter 3's gradients) and the transpose permutation. Plain SVG built here (no
plotting library), so the notebooks render them inline anywhere and the executed notebooks are the
same bytes on every build.
"""
import hashlib
import html
import itertools

import numpy as np

from autograder.student.graph import EDGE as FADED
from autograder.student.graph import FILL, FONT, STROKE, TEXT, GraphDrawing

PALETTE = ["#bfdbfe", "#fde68a", "#bbf7d0", "#fecaca", "#ddd6fe", "#fed7aa", "#a5f3fc", "#f5d0fe"]
MARGIN = 16
BROADCAST_CELL, PAGE_GAP, PANEL_GAP = 34, 20, 44    # room for "-1.5" in a cell, "+" between panels
_ARROW = "ARROW-ID"                                  # stands for the marker id until drawing()


class _Canvas:
    """Just enough SVG: boxes, text, lines and arrows, collected in drawing order."""

    def __init__(self):
        self.parts, self.width, self.height = [], 0.0, 0.0

    def _grow(self, x, y):
        self.width, self.height = max(self.width, x), max(self.height, y)

    def box(self, x, y, w, h, fill, label="", rx=3, dashed=False, label_colour=TEXT):
        dash = ' stroke-dasharray="4 3"' if dashed else ""
        self.parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" '
                          f'fill="{fill}" stroke="{STROKE}"{dash}/>')
        if label:
            self.text(x + w / 2, y + h / 2 + 4, label, anchor="middle", colour=label_colour)
        self._grow(x + w, y + h)

    def text(self, x, y, content, anchor="start", size=12, bold=False, colour=TEXT):
        weight = ' font-weight="bold"' if bold else ""
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
                          f'fill="{colour}"{weight}>{html.escape(content)}</text>')
        self._grow(x + (len(content) * 7 if anchor == "start" else len(content) * 3.5), y + 4)

    def line(self, x1, y1, x2, y2, colour=STROKE, arrow=True, width=1.4):
        end = f' marker-end="url(#{_ARROW})"' if arrow else ""
        self.parts.append(f'<path d="M{x1:.1f},{y1:.1f} L{x2:.1f},{y2:.1f}" stroke="{colour}" '
                          f'stroke-width="{width}" fill="none"{end}/>')
        self._grow(max(x1, x2), max(y1, y2))

    def drawing(self):
        """The SVG. The arrow marker's id comes from the content, so a picture is the same bytes whatever
        was drawn before it, and two different pictures in one notebook don't share a marker."""
        w, h = self.width + MARGIN, self.height + MARGIN
        body = "\n".join(self.parts)
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
                f'viewBox="0 0 {w:.0f} {h:.0f}" font-family="{html.escape(FONT)}" font-size="12">')
        if _ARROW in body:
            arrow = "pic-arrow-" + hashlib.sha1(body.encode()).hexdigest()[:12]
            body = body.replace(_ARROW, arrow)
            head += (f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                     f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{STROKE}"/></marker></defs>')
        return GraphDrawing("\n".join([head, body, "</svg>"]))


def _as_3d(shape):
    if len(shape) > 3:
        raise ValueError(f"pictures draw up to 3 axes, not {shape}")
    return (1,) * (3 - len(shape)) + tuple(shape)


def _cell_text(value):
    """Numbers short (`1`, `0.5`, `1e+06`); anything else, like a name `"x0"`, as it is."""
    return f"{float(value):g}" if isinstance(value, (float, np.floating)) else str(value)


def _axes(axes):
    return f"axis {axes[0]}" if len(axes) == 1 else "axes " + ", ".join(map(str, axes[:-1])) + f" and {axes[-1]}"


def _stretched(array, out_shape):
    """`array` broadcast to `out_shape`, and where its own values are (the rest are copies); both 3-D."""
    padded = (1,) * (len(out_shape) - array.ndim) + array.shape
    own = np.zeros(out_shape, dtype=bool)
    own[tuple(slice(None) if n == m else slice(0, 1) for n, m in zip(padded, out_shape))] = True
    values = np.broadcast_to(array.reshape(padded), out_shape)
    return values.reshape(_as_3d(out_shape)), own.reshape(_as_3d(out_shape))


def _panel(canvas, x, top, title, values, own, role):
    """One array at the broadcast shape, pages of a 3-D block side by side; returns the panel's width."""
    depth, rows, cols = values.shape
    canvas.text(x, MARGIN + 12, title, size=13, bold=True)
    for page in range(depth):
        px = x + page * (cols * BROADCAST_CELL + PAGE_GAP)
        if depth > 1:
            canvas.text(px + cols * BROADCAST_CELL / 2, top - 6, f"[{page}]", anchor="middle", size=11,
                        colour=FADED)
        for r, c in itertools.product(range(rows), range(cols)):
            mine = bool(own[page, r, c])
            canvas.box(px + c * BROADCAST_CELL, top + r * BROADCAST_CELL, BROADCAST_CELL, BROADCAST_CELL,
                       FILL[role] if mine else FILL["mid"], _cell_text(values[page, r, c]), rx=2,
                       dashed=not mine, label_colour=TEXT if mine else FADED)
    grid = depth * cols * BROADCAST_CELL + (depth - 1) * PAGE_GAP
    return max(grid, len(title) * 7.5)


def _how_it_stretches(name, shape, out_shape):
    """The two lines under the picture for one array: what broadcasting does to it, what its gradient sums."""
    prepended = len(out_shape) - len(shape)
    padded = (1,) * prepended + tuple(shape)
    stretched = [i for i in range(prepended, len(out_shape)) if padded[i] == 1 and out_shape[i] != 1]
    steps = []
    if prepended:
        steps.append(f"prepend {prepended} axis{'es' if prepended > 1 else ''} of size 1, "
                     f"{tuple(shape)} is read as {padded}")
    if stretched:
        steps.append(f"stretch {_axes(stretched)} (size 1) by copying")
    uses = int(np.prod(out_shape)) // max(int(np.prod(shape)), 1)
    summed = list(range(prepended)) + stretched
    if uses > 1:
        usage = f"each value of {name} is used {uses} times: its gradient is the sum over {_axes(summed)}"
    else:
        usage = f"each value of {name} is used once"
    return [f"{name}: " + ("; ".join(steps) or f"already {tuple(out_shape)}, nothing to copy"), usage]


def broadcast_picture(*arrays, to=None, names=None):
    """Draw `arrays` stretched to the shape broadcasting gives them, so the copies it makes show.

    Each array is drawn at the broadcast shape (their common one, or `to`): its own values solid, the
    copies dashed and faded. Two or more arrays are followed by their sum. Below: the shapes aligned on
    the right, and how often each value is used, which is why its gradient is a sum over the broadcast
    axes. Values may be numbers or names (`np.array([["a"], ["b"]])`); up to 3 axes.
    """
    if not arrays:
        raise ValueError("broadcast_picture needs at least one array")
    arrays = [np.asarray(a) for a in arrays]
    names = list(names or "abcdefghijklmnopqrstuvwxyz"[:len(arrays)])
    if len(names) != len(arrays):
        raise ValueError(f"{len(arrays)} arrays but {len(names)} names")
    shapes = [a.shape for a in arrays]
    if to is None:
        try:
            to = np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(f"shapes {', '.join(map(str, shapes))} do not broadcast together: aligned on "
                             "the right, some axis has two lengths and neither is 1") from None
    out_shape = tuple(int(n) for n in to)
    for name, shape in zip(names, shapes):
        try:
            fits = np.broadcast_shapes(shape, out_shape) == out_shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"{name} of shape {shape} does not broadcast to {out_shape}")
    _as_3d(out_shape)                                     # refuses more than 3 axes
    panels = [(f"{name} {shape} → {out_shape}" if shape != out_shape else f"{name} {shape}",
               *_stretched(array, out_shape), "leaf") for name, shape, array in zip(names, shapes, arrays)]
    total = " + ".join(names)
    if len(arrays) > 1:
        values = np.broadcast_to(sum(arrays[1:], arrays[0]), out_shape).reshape(_as_3d(out_shape))
        panels.append((f"{total} {out_shape}", values, np.ones(values.shape, dtype=bool), "out"))

    canvas = _Canvas()
    depth, rows, _ = _as_3d(out_shape)
    top = MARGIN + 26 + (14 if depth > 1 else 0)
    x = MARGIN
    for k, (title, values, own, role) in enumerate(panels):
        x += _panel(canvas, x, top, title, values, own, role)
        if k < len(panels) - 1:
            sign = "=" if len(arrays) > 1 and k == len(panels) - 2 else "+"
            canvas.text(x + PANEL_GAP / 2, top + rows * BROADCAST_CELL / 2 + 7, sign, anchor="middle", size=20)
        x += PANEL_GAP

    # the right-alignment rule, as a small table of shapes
    y = top + rows * BROADCAST_CELL + 30
    table = [*zip(names, shapes), (total if len(arrays) > 1 else "result", out_shape)]
    label_width = max(len(label) for label, _ in table) * 7 + 8
    for i, (label, shape) in enumerate(table):
        last = i == len(table) - 1
        canvas.text(MARGIN + label_width, y, f"{label}:", anchor="end", bold=last)
        padded = ("",) * (len(out_shape) - len(shape)) + tuple(str(n) for n in shape)
        for j, n in enumerate(padded):
            canvas.text(MARGIN + label_width + 20 + j * 28, y, n or "·", anchor="middle", bold=last,
                        colour=TEXT if n else FADED)
        y += 18
    canvas.text(MARGIN, y, "shapes aligned on the right: a missing axis (·) or an axis of size 1 is stretched",
                size=11, colour=FADED)
    y += 26
    for name, shape in zip(names, shapes):
        what, usage = _how_it_stretches(name, shape, out_shape)
        canvas.text(MARGIN, y, what)
        canvas.text(MARGIN + 14, y + 18, usage, colour=STROKE)
        y += 40
    return canvas.drawing()


def transpose_picture(shape, axes):
    """Where each axis goes under `Transpose(axes)`, and the inverse permutation that brings it back."""
    shape, axes = tuple(shape), tuple(int(a) for a in axes)
    if sorted(axes) != list(range(len(shape))):
        raise ValueError(f"axes {axes} is not a permutation of the {len(shape)} axes of shape {shape}")
    inverse = tuple(int(i) for i in np.argsort(axes))
    out_shape = tuple(shape[a] for a in axes)
    canvas = _Canvas()
    width, step, left = 70, 96, MARGIN + 150
    rows = [("input", shape, list(range(len(shape)))),
            ("output", out_shape, list(axes)),
            ("gradient", tuple(out_shape[i] for i in inverse), [axes[i] for i in inverse])]
    ys = [MARGIN + 10, MARGIN + 100, MARGIN + 190]
    for (name, sizes, origin), y in zip(rows, ys):
        canvas.text(MARGIN, y + 20, f"{name} {sizes}", bold=True)
        for position, (size, source) in enumerate(zip(sizes, origin)):
            canvas.box(left + position * step, y, width, 30, PALETTE[source % len(PALETTE)],
                       f"axis {position}: {size}")
    for (upper, lower), label in zip([(ys[0], ys[1]), (ys[1], ys[2])], [axes, inverse]):
        for position, came_from in enumerate(label):
            canvas.line(left + came_from * step + width / 2, upper + 32, left + position * step + width / 2, lower - 3)
    canvas.text(MARGIN, (ys[0] + ys[1]) / 2 + 20, f"forward: axes={axes}", colour=STROKE)
    canvas.text(MARGIN, (ys[1] + ys[2]) / 2 + 20, f"backward: axes={inverse}", colour=STROKE)
    canvas.text(MARGIN, ys[2] + 54, f"Output axis i is input axis axes[i]. To undo it, np.argsort({axes}) = {inverse}.")
    return canvas.drawing()
