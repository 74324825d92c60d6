"""Draw the computation graph behind a tensor, so students can *see* what backward() walks.

Chapter 1's scalar `Value` (or a student's own class with the same fields) is drawn too.

Uses Graphviz when both the `graphviz` package and its `dot` program are installed;
otherwise a small built-in layered layout renders the SVG, so it works on any laptop.
Setting the environment variable BABYGRAD_GRAPH_RENDERER=builtin always uses the built-in one
(the course build does, so executed notebooks are the same bytes on every machine).
"""
import hashlib
import html
import itertools
import math
import os
import shutil
import subprocess
from collections import deque
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path

import numpy as np

FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"
FILL = {"leaf": "#dbeafe", "mid": "#f1f5f9", "out": "#dcfce7", "op": "#fef9c3"}
STROKE, TEXT, EDGE = "#64748b", "#1e293b", "#94a3b8"
CHAR_W, LINE_H, PAD_X, PAD_Y = 7.0, 16, 10, 6   # text metrics guessed for 12px sans-serif
LAYER_GAP, NODE_GAP, MARGIN = 48, 16, 16
_drawing_ids = itertools.count()


class GraphDrawing:
    """An SVG string that Jupyter shows inline (via `_repr_svg_`) and that can be saved."""

    def __init__(self, svg):
        self.svg = svg

    def _repr_svg_(self):
        return self.svg

    def __repr__(self):
        # no memory address: executed notebooks keep this text, and must rebuild byte for byte
        return f"<{type(self).__name__}: SVG, {len(self.svg)} characters>"

    def save(self, path):
        """Write the SVG to `path` (e.g. to put it in a report); returns the path."""
        Path(path).write_text(self.svg, encoding="utf-8")
        return path


@dataclass
class _Node:
    key: str
    kind: str      # "tensor" (a Value too) or "op"
    lines: list
    role: str      # "leaf", "mid", "out" or "op"
    named: bool = False  # first line is the tensor's name: drawn bold
    cut: bool = False    # op whose inputs were not all drawn: drawn dashed


def draw_graph(tensor, *, show_grad=True, rankdir="LR", max_nodes=200):
    """Return a GraphDrawing of every tensor and op that produced `tensor`.

    `tensor` may also be a chapter-1 `Value`: any object with `_prev`, `_op` and a number in `data`.
    Shared inputs appear once (the graph is a DAG, like the one backward() traverses).
    Only the `max_nodes` tensors nearest the output are drawn, so huge graphs stay legible.
    `rankdir` is "LR" (leaves on the left) or "TB" (leaves on top).
    """
    if rankdir not in ("LR", "TB"):
        raise ValueError(f"rankdir must be 'LR' or 'TB', not {rankdir!r}")
    nodes, edges, hidden = _build(tensor, show_grad, max_nodes)
    svg = None if os.environ.get("BABYGRAD_GRAPH_RENDERER") == "builtin" else \
        _render_graphviz(nodes, edges, hidden, rankdir)
    svg = svg or _render_svg(nodes, edges, hidden, rankdir)
    return GraphDrawing(svg)


def _inputs(t):
    return tuple(getattr(t, "_inputs", None) or ())


def _is_value(t):
    """A chapter-1 scalar Value, the course's or a student's own: `_prev`, `_op`, a number in `data`."""
    return hasattr(t, "_prev") and hasattr(t, "_op") and isinstance(getattr(t, "data", None), Real)


def _value_inputs(root):
    """`_inputs` for Values: their `_prev` is a set, which iterates in an order set by memory
    addresses, so parents are sorted by what they show instead. Deeper parents come first (the
    chain runs along the top, fresh inputs join below it), then by name, op and data; a digest of
    everything below a parent breaks the remaining ties, so only parents that look the same all
    the way down keep the set's order.
    """
    height, digest, stack = {}, {}, [(root, False)]
    while stack:  # post-order without recursion: a parent's key is known before its child's
        v, parents_done = stack.pop()
        if parents_done:
            parents = list(v._prev)
            height[id(v)] = 1 + max((height[id(p)] for p in parents), default=-1)
            below = sorted(digest[id(p)] for p in parents)
            digest[id(v)] = hashlib.sha1("\0".join([_name(v) or "", str(v._op), repr(float(v.data))]
                                                    + below).encode()).hexdigest()
        elif id(v) not in height:
            height[id(v)] = None  # on the stack: visit once
            stack.append((v, True))
            stack.extend((p, False) for p in v._prev if id(p) not in height)

    def key(v):
        number = float(v.data)
        number = number if number == number else math.inf  # NaN would make the sort order-dependent
        return -height[id(v)], _name(v) or "", str(v._op), number, digest[id(v)]

    return lambda v: tuple(sorted(v._prev, key=key))


def _name(t):
    """The tensor's `name` or `label`, when it has a non-empty one: optional, never part of a graded API."""
    return next((v for v in (getattr(t, "name", None), getattr(t, "label", None))
                 if isinstance(v, str) and v), None)


def _build(root, show_grad, max_nodes):
    """Walk the graph breadth-first (no recursion: chains can be 10,000 deep) into nodes+edges."""
    scalar = _is_value(root)
    inputs = _value_inputs(root) if scalar else _inputs
    order, seen, queue = [root], {id(root)}, deque([root])
    while queue:
        for parent in inputs(queue.popleft()):
            if id(parent) not in seen:
                seen.add(id(parent))
                order.append(parent)
                queue.append(parent)
    kept = order[:max(max_nodes, 1)]  # breadth-first order: nearest the output first
    hidden = len(order) - len(kept)
    kept_ids = {id(t) for t in kept}
    nodes, edges = {}, []
    for t in reversed(kept):
        parents = inputs(t)
        # a Value's leaves have `_op == ""`: it is the parents that make an op node
        op = (t._op or "?" if parents else None) if scalar else getattr(t, "_op", None)
        role = "out" if t is root else "leaf" if op is None else "mid"
        name = _name(t)
        lines = ([name] if name else []) + (_value_lines if scalar else _tensor_lines)(t, show_grad)
        nodes[f"t{id(t)}"] = _Node(f"t{id(t)}", "tensor", lines, role, named=bool(name))
        if op is None:
            continue
        cut = any(id(p) not in kept_ids for p in parents)
        nodes[f"o{id(t)}"] = _Node(f"o{id(t)}", "op", [_op_label(op)], "op", cut=cut)
        for i, p in enumerate(parents):
            if id(p) in kept_ids:
                edges.append((f"t{id(p)}", f"o{id(t)}", i, len(parents)))
        edges.append((f"o{id(t)}", f"t{id(t)}", 0, 1))
    return nodes, edges, hidden


def _fmt(value):
    """Compact text for an op attribute or array: 4 significant digits, `2.0` vs `2` shows the dtype."""
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_fmt(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, np.ndarray):
        fmt = {"float_kind": lambda v: _fmt(float(v)), "int_kind": str}
        return np.array2string(value, separator=", ", formatter=fmt, max_line_width=10**6).replace("\n", "")
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        text = f"{float(value):.4g}"
        return text if any(c in text for c in ".eni") else text + ".0"  # 2.0, not 2
    return str(value)


def _tensor_lines(t, show_grad):
    """Label lines: shape, small values, and the gradient once backward() has run."""
    data = np.asarray(t.data)
    lines = [f"shape {_fmt(data.shape)}"]
    if data.size <= 4:
        lines.append(f"data {_fmt(data)}")
    grad = getattr(t, "grad", None)
    if show_grad and grad is not None:
        grad = np.asarray(getattr(grad, "data", grad))  # an ndarray, or a Tensor in some designs
        lines.append(f"grad {_fmt(grad)}" if grad.size <= 4 else f"grad shape {_fmt(grad.shape)}")
    return lines


def _value_lines(v, show_grad):
    """Label lines of a scalar Value: its number, and its gradient."""
    grad = getattr(v, "grad", None)
    return [f"data {_fmt(v.data)}"] + ([f"grad {_fmt(grad)}"] if show_grad and grad is not None else [])


def _op_label(op):
    """`Summation(axes=(0,))`, `MulScalar(2.0)`: class name plus the attributes that matter;
    a Value's `_op` is already its label (`'+'`)."""
    if isinstance(op, str):
        return op
    args = []
    if getattr(op, "scalar", None) is not None:
        args.append(_fmt(op.scalar))
    args += [f"{a}={_fmt(getattr(op, a))}" for a in ("axes", "shape") if getattr(op, a, None) is not None]
    name = type(op).__name__
    return f"{name}({', '.join(args)})" if args else name


def _render_graphviz(nodes, edges, hidden, rankdir):
    """SVG from Graphviz, or None when the package or its `dot` program is missing."""
    try:
        import graphviz
    except ImportError:
        return None
    if shutil.which("dot") is None:
        return None
    g = graphviz.Digraph(graph_attr={"rankdir": rankdir},
                         node_attr={"fontname": "Helvetica", "fontsize": "12", "style": "filled",
                                    "color": STROKE, "fontcolor": TEXT},
                         edge_attr={"color": EDGE, "arrowsize": "0.7"})
    for n in nodes.values():
        label = graphviz.nohtml("\\n".join(line.replace("\\", "\\\\") for line in n.lines))
        shape = "ellipse" if n.kind == "op" else "box"
        style = "filled,dashed" if n.cut else "filled" if n.kind == "op" else "filled,rounded"
        g.node(n.key, label, shape=shape, style=style, fillcolor=FILL[n.role])
    for src, dst, *_ in edges:
        g.edge(src, dst)
    if hidden:
        g.node("more", f"… {hidden} more nodes not drawn", shape="plaintext", style="")
    try:
        return g.pipe(format="svg", quiet=True).decode("utf-8")     # quiet: dot's warnings never reach stderr
    except (OSError, RuntimeError, subprocess.CalledProcessError):
        return None  # broken Graphviz install: use the built-in renderer instead


def _layers(nodes, edges):
    """Longest-path layers, waypoints for edges that skip layers, barycenter order within layers.

    Returns the layers (lists of keys, leaves first) and, per edge, the keys it passes through.
    """
    preds, succs = {k: [] for k in nodes}, {k: [] for k in nodes}
    for src, dst, *_ in edges:
        preds[dst].append(src)
        succs[src].append(dst)
    layer, indeg = dict.fromkeys(nodes, 0), {k: len(preds[k]) for k in nodes}
    ready = deque(k for k in nodes if not indeg[k])
    while ready:  # Kahn's algorithm: a node is placed once all its inputs are
        k = ready.popleft()
        for dst in succs[k]:
            layer[dst] = max(layer[dst], layer[k] + 1)
            indeg[dst] -= 1
            if not indeg[dst]:
                ready.append(dst)
    for k in nodes:  # pull leaves right, next to their first use, to shorten edges
        if not preds[k] and succs[k]:
            layer[k] = min(layer[d] for d in succs[k]) - 1
    # An edge that skips layers gets a waypoint in each, so it bends around boxes instead
    # of crossing them; a budget keeps a leaf reused 200 times from adding thousands.
    budget, routes = 3 * len(nodes), [None] * len(edges)
    near = {k: [] for k in nodes}  # (neighbour, +1 if it comes later, argument offset)
    for n in sorted(range(len(edges)), key=lambda n: layer[edges[n][1]] - layer[edges[n][0]]):
        src, dst, port, ports = edges[n]
        skipped = range(layer[src] + 1, layer[dst]) if layer[dst] - layer[src] - 1 <= budget else ()
        budget -= len(skipped)
        routes[n] = [src] + [f"w{n}_{i}" for i in skipped] + [dst]
        for i, k in zip(skipped, routes[n][1:-1]):
            layer[k], near[k] = i, []
        for a, b in zip(routes[n], routes[n][1:]):
            near[a].append((b, 1, 0.1 * (port - (ports - 1) / 2)))
            near[b].append((a, -1, 0.0))
    rows = [[] for _ in range(max(layer.values(), default=0) + 1)]
    for k in layer:
        rows[layer[k]].append(k)
    pos = {k: i for row in rows for i, k in enumerate(row)}
    # sweep from the output (keeps inputs in argument order), then from the leaves
    for direction, sweep in ((1, rows[-2::-1]), (-1, rows[1:])):
        for row in sweep:
            def centre(k):
                ps = [pos[b] + off for b, d, off in near[k] if d == direction]
                return sum(ps) / len(ps) if ps else pos[k]
            row.sort(key=centre)
            pos.update((k, i) for i, k in enumerate(row))
    return rows, routes


def _dims(n, lr):
    """(extent along the flow, extent across it): text width guessed from character count."""
    width = max(len(line) for line in n.lines) * CHAR_W
    w, h = (width + 28, 28) if n.kind == "op" else (width + 2 * PAD_X, len(n.lines) * LINE_H + 2 * PAD_Y)
    return (w, h) if lr else (h, w)


def _render_svg(nodes, edges, hidden, rankdir):
    """Built-in renderer: layers become columns (LR) or rows (TB); edges are cubic curves."""
    lr = rankdir == "LR"
    xy = (lambda a, b: (a, b)) if lr else (lambda a, b: (b, a))  # (along, across) -> (x, y)
    rows, routes = _layers(nodes, edges)
    dims = {k: _dims(nodes[k], lr) if k in nodes else (0, 6) for row in rows for k in row}
    totals = [sum(dims[k][1] for k in row) + NODE_GAP * (len(row) - 1) for row in rows]
    span = max(totals, default=0)
    centre, along = {}, MARGIN
    for row, total in zip(rows, totals):
        depth, across = max(dims[k][0] for k in row), MARGIN + (span - total) / 2
        for k in row:
            centre[k] = (along + depth / 2, across + dims[k][1] / 2)
            across += dims[k][1] + NODE_GAP
        along += depth + LAYER_GAP
    width, height = xy(along - LAYER_GAP + MARGIN, span + 2 * MARGIN)
    height += 24 if hidden else 0
    arrow = f"bg-arrow-{next(_drawing_ids)}"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{html.escape(FONT)}" font-size="12">',
           f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
           f'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{EDGE}"/></marker></defs>']
    for (_, dst, port, ports), route in zip(edges, routes):
        # each stop as (where the edge enters it, where it leaves it, its position across)
        stops = [(centre[k][0] - dims[k][0] / 2, centre[k][0] + dims[k][0] / 2, centre[k][1]) for k in route]
        shift = (port - (ports - 1) / 2) * min(8, dims[dst][1] / (ports + 1))  # a*a: two visible edges
        stops[-1] = (stops[-1][0], None, stops[-1][2] + shift)
        d = "M{:.1f},{:.1f}".format(*xy(stops[0][1], stops[0][2]))
        for (_, a1, c1), (a2, _, c2) in zip(stops, stops[1:]):
            bend = (a2 - a1) / 2
            d += " C" + " ".join("{:.1f},{:.1f}".format(*xy(a, c))
                                 for a, c in ((a1 + bend, c1), (a2 - bend, c2), (a2, c2)))
        out.append(f'<path d="{d}" fill="none" stroke="{EDGE}" stroke-width="1.2" '
                   f'marker-end="url(#{arrow})"/>')
    for k, n in nodes.items():
        (w, h), (x, y) = xy(*dims[k]), xy(*centre[k])
        style = f'fill="{FILL[n.role]}" stroke="{STROKE}"' + (' stroke-dasharray="4 3"' if n.cut else "")
        if n.kind == "op":
            out.append(f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{w / 2:.1f}" ry="{h / 2:.1f}" {style}/>')
        else:
            out.append(f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w:.1f}" height="{h:.1f}" '
                       f'rx="5" {style}/>')
        for i, line in enumerate(n.lines):
            ty = y - len(n.lines) * LINE_H / 2 + (i + 0.5) * LINE_H + 4  # +4: baseline vs middle
            weight = ' font-weight="bold"' if n.named and i == 0 else ""
            out.append(f'<text x="{x:.1f}" y="{ty:.1f}" text-anchor="middle" fill="{TEXT}"{weight}>'
                       f'{html.escape(line)}</text>')
    if hidden:
        out.append(f'<text x="{MARGIN}" y="{height - MARGIN + 4:.0f}" fill="{STROKE}" font-style="italic">'
                   f'… {hidden} more nodes not drawn</text>')
    out.append("</svg>")
    return "\n".join(out)
