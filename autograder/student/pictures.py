"""Pictures for the text, where a picture is clearer than a paragraph: broadcasting and the transpose
permutation. Plain SVG built here (no plotting library), so the notebooks render them inline anywhere
and the executed notebooks are the same bytes on every build.
"""
import html
import itertools

import numpy as np

from autograder.student.graph import FONT, STROKE, TEXT, GraphDrawing

PALETTE = ["#bfdbfe", "#fde68a", "#bbf7d0", "#fecaca", "#ddd6fe", "#fed7aa", "#a5f3fc", "#f5d0fe"]
CELL, GAP, MARGIN = 26, 10, 16
_ids = itertools.count()


class _Canvas:
    """Just enough SVG: boxes, text, lines and arrows, collected in drawing order."""

    def __init__(self):
        self.parts, self.width, self.height = [], 0.0, 0.0
        self.arrow = f"pic-arrow-{next(_ids)}"

    def _grow(self, x, y):
        self.width, self.height = max(self.width, x), max(self.height, y)

    def box(self, x, y, w, h, fill, label="", rx=3, dashed=False):
        dash = ' stroke-dasharray="4 3"' if dashed else ""
        self.parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" '
                          f'fill="{fill}" stroke="{STROKE}"{dash}/>')
        if label:
            self.text(x + w / 2, y + h / 2 + 4, label, anchor="middle")
        self._grow(x + w, y + h)

    def text(self, x, y, content, anchor="start", size=12, bold=False, colour=TEXT):
        weight = ' font-weight="bold"' if bold else ""
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
                          f'fill="{colour}"{weight}>{html.escape(content)}</text>')
        self._grow(x + (len(content) * 7 if anchor == "start" else len(content) * 3.5), y + 4)

    def line(self, x1, y1, x2, y2, colour=STROKE, arrow=True, width=1.4):
        end = f' marker-end="url(#{self.arrow})"' if arrow else ""
        self.parts.append(f'<path d="M{x1:.1f},{y1:.1f} L{x2:.1f},{y2:.1f}" stroke="{colour}" '
                          f'stroke-width="{width}" fill="none"{end}/>')
        self._grow(max(x1, x2), max(y1, y2))

    def drawing(self):
        w, h = self.width + MARGIN, self.height + MARGIN
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
                f'viewBox="0 0 {w:.0f} {h:.0f}" font-family="{html.escape(FONT)}" font-size="12">'
                f'<defs><marker id="{self.arrow}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{STROKE}"/></marker></defs>')
        return GraphDrawing("\n".join([head, *self.parts, "</svg>"]))


def _as_3d(shape):
    if len(shape) > 3:
        raise ValueError(f"pictures draw up to 3 axes, not {shape}")
    return (1,) * (3 - len(shape)) + tuple(shape)


def _grid(canvas, x, y, shape3, label_of):
    """Draw a (depth, rows, cols) block as `depth` matrices side by side; returns its bottom-right corner."""
    depth, rows, cols = shape3
    for page in range(depth):
        px = x + page * (cols * CELL + 2 * GAP)
        if depth > 1:
            canvas.text(px + cols * CELL / 2, y - 4, f"[{page}]", anchor="middle", size=11, colour=STROKE)
        for r, c in itertools.product(range(rows), range(cols)):
            label, colour = label_of((page, r, c))
            canvas.box(px + c * CELL, y + r * CELL, CELL, CELL, PALETTE[colour % len(PALETTE)], label, rx=2)
    return x + depth * cols * CELL + (depth - 1) * 2 * GAP, y + rows * CELL


def broadcast_picture(in_shape, out_shape):
    """How `BroadcastTo(out_shape)` copies an `in_shape` input, and where each copy's gradient goes back."""
    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    np.broadcast_shapes(in_shape, out_shape)              # raises a clear error for shapes that don't fit
    padded = (1,) * (len(out_shape) - len(in_shape)) + in_shape
    in3, out3, pad3 = _as_3d(in_shape), _as_3d(out_shape), _as_3d(padded)
    letters = "abcdefghijklmnopqrstuvwxyz"

    def source(index):                                    # the input element an output element copies
        flat = int(np.ravel_multi_index(tuple(i if n > 1 else 0 for i, n in zip(index, pad3)), pad3))
        return letters[flat % 26], flat

    canvas = _Canvas()
    prepended = len(out_shape) - len(in_shape)
    stretched = [i for i, (a, b) in enumerate(zip(padded, out_shape)) if a == 1 and b != 1 and i >= prepended]
    top = MARGIN + 30
    canvas.text(MARGIN, MARGIN + 4, f"input {in_shape}", bold=True)
    in_right, in_bottom = _grid(canvas, MARGIN, top, in3, lambda index: source(index))
    out_x = max(in_right, MARGIN + 90) + 90
    canvas.line(in_right + 12, top + 14, out_x - 12, top + 14)
    canvas.text((in_right + out_x) / 2, top + 6, "forward: copy", anchor="middle", size=11)
    canvas.line(out_x - 12, top + 34, in_right + 12, top + 34)
    canvas.text((in_right + out_x) / 2, top + 50, "backward: add up", anchor="middle", size=11)
    canvas.text(out_x, MARGIN + 4, f"output {out_shape}", bold=True)
    _, out_bottom = _grid(canvas, out_x, top, out3, source)
    steps = []
    if prepended:
        steps.append(f"1. prepend {prepended} axis{'es' if prepended > 1 else ''} of size 1: "
                     f"{in_shape} is read as {padded}")
    if stretched:
        steps.append(f"{len(steps) + 1}. stretch axis {', '.join(map(str, stretched))} (size 1) by copying")
    copies = int(np.prod(out_shape)) // max(int(np.prod(in_shape)), 1)
    steps.append(f"Each input element has {copies} copies: its gradient is the sum of out_grad over them.")
    y = max(in_bottom, out_bottom) + 24
    for step in steps:
        canvas.text(MARGIN, y, step)
        y += 18
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
