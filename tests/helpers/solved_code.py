"""The solved code of a chapter and the chapters before it, run in a fresh namespace, as a notebook would."""
import contextlib
import functools
import gzip
import io
import os
import sys
from unittest import mock

import IPython.display
import matplotlib.pyplot as plt
import numpy as np

from autograder.build.generated_files import NUMERIC_TAG
from autograder import cell_marks
from autograder.build import authoring

from helpers.course_paths import ROOT


@contextlib.contextmanager
def recursion_limit_kept():
    """Put the recursion limit back afterwards: catalogued answers run in process raise it (a recursive search
    that gets the long chain through), and left raised, a later runaway recursion overflows the C stack and
    kills the process instead of raising RecursionError."""
    limit = sys.getrecursionlimit()
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)

def solved_namespace(chapter_id, before=False):
    """Exports of every chapter script up to and including `chapter_id` (only before it, with
    `before`), executed in order."""
    namespace = {"__name__": "solved"}
    for script in sorted((ROOT / "chapters").glob("ch*.py")):
        if script.name.split("_")[0] < chapter_id or (not before and script.name.split("_")[0] == chapter_id):
            exec(compiled_exports(script), namespace)
    return namespace


@functools.cache
def compiled_exports(script):
    """A chapter script's exports, compiled: parsed once per test process, however many namespaces run them."""
    return compile("import numpy as np\n" + "\n".join(authoring.exported_code(script.read_text())), str(script), "exec")


@functools.cache
def code_cells(chapter_id, whole=False):
    """(grade_id, tags, solved source) of each code cell of a chapter's notebook that is not a test cell, up to
    its last test cell unless `whole`, parsed once per test process. Judging needs no more: nothing graded runs
    after the last test cell, and what runs after it may rebind what the checks read (chapter 4's last provided
    cell makes `Linear` and `SoftmaxLoss` the fused versions, which the checks of sections 4.2 and 4.8, run in
    notebook order when grading, never see)."""
    script = next((ROOT / "chapters").glob(f"{chapter_id}_*.py"))
    cells = [cell for cell in authoring.notebook_from_script(script.read_text()).cells if cell.cell_type == "code"]
    end = len(cells) if whole else max(i for i, cell in enumerate(cells) if cell_marks.is_test_cell(cell))
    return tuple((cell_marks.grade_id(cell), tuple(cell.metadata.get("tags", [])),
                  cell_marks.without_solution_markers(cell.source))
                 for cell in cells[:end] if not cell_marks.is_test_cell(cell))


def solved_cells(chapter_id, replace=None, training=True, whole=False):
    """The solved code of a chapter's provided and exercise cells (up to its last check, unless `whole`), with
    `replace` = {cell id: (old, new)} applied to the exercise cells: a student's answer, right or wrong. Without
    `training`, the cells tagged numeric-output (the MNIST training runs and what they plot) are left out."""
    parts = []
    for grade_id, tags, source in code_cells(chapter_id, whole):
        if not training and NUMERIC_TAG in tags:
            continue
        for old, new in (replace or {}).get(grade_id, []):
            assert old in source, f"{old!r} is not in cell {grade_id!r}"
            source = source.replace(old, new, 1)
        parts.append(source)
    return parts


def notebook_namespace(chapter_id, replace=None, training=True, whole=False):
    """A chapter's notebook run up to its last check cell (to its end with `whole`: the closing examples), check
    cells left out (their output is swallowed), and its training runs too unless told not to."""
    namespace = solved_namespace(chapter_id, before=True)
    namespace["display"] = IPython.display.display     # a notebook's builtin
    release = str(ROOT / "release" / chapter_id)       # where the notebook's `import earlier_chapters` looks
    sys.path.insert(0, release)
    sys.modules.pop("earlier_chapters", None)
    try:
        with contextlib.redirect_stdout(io.StringIO()), figures_not_drawn(), gzip_files_inflated_once():
            for source in solved_cells(chapter_id, replace, training, whole):
                try:
                    exec(compiled_cell(source, chapter_id), namespace)
                except Exception:  # noqa: BLE001
                    if not replace:
                        raise            # the solution runs cleanly; a wrong answer may break an example cell
    finally:
        sys.path.remove(release)
        sys.modules.pop("earlier_chapters", None)
        plt.close("all")                               # the notebook's figures, never shown here
    return namespace


@functools.lru_cache(maxsize=1024)
def compiled_cell(source, chapter_id):
    """A cell's code, compiled once per test process: the catalogue's answers share all cells but one."""
    return compile(source, chapter_id, "exec")


class Inert:
    """A stand-in figure or axes: every attribute is another stand-in, every call returns one, and it
    iterates as empty (a MagicMock did the same, at a hundred times the cost per attribute)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __getitem__(self, key):
        return self

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def figures_not_drawn():
    """While a notebook runs here, `plt.subplots` hands out stand-in axes and `plt.tight_layout` does nothing:
    its figures are never shown or judged, and laying out their hundreds of real axes and ticks was most of
    the time chapter 6's and 7's namespaces took. Code that runs later (a probe) draws for real."""
    def subplots(nrows=1, ncols=1, **_):
        axes = np.empty(nrows * ncols, dtype=object)        # filled one by one: a stand-in looks like a sequence
        axes[:] = [Inert() for _ in range(axes.size)]
        return Inert(), (axes[0] if axes.size == 1 else axes.reshape(
            [n for n in (nrows, ncols) if n > 1]))
    return mock.patch.multiple(plt, subplots=subplots, tight_layout=lambda *_, **__: None)


@functools.lru_cache(maxsize=8)
def inflated(path, stamp):
    """A gzip file's contents, decompressed once per test process (`stamp`: its size and mtime)."""
    with gzip.GzipFile(path, "rb") as f:
        return f.read()


def gzip_files_inflated_once():
    """While a notebook runs here, `gzip.open(path, "rb")` hands out the file's contents from memory:
    decompressing MNIST again for every catalogued answer was most of the time chapter 6's soak took.
    Any other use of gzip.open goes to gzip itself."""
    real_open = gzip.open

    def cached_open(filename, mode="rb", *args, **kwargs):
        if mode == "rb" and not args and not kwargs and isinstance(filename, (str, os.PathLike)):
            info = os.stat(filename)
            return io.BytesIO(inflated(os.fspath(filename), (info.st_size, info.st_mtime_ns)))
        return real_open(filename, mode, *args, **kwargs)
    return mock.patch.object(gzip, "open", cached_open)


def in_process(namespace):
    """run_probe without a kernel: the probe (judge.probes.Probe) run as code in `namespace`, its display_data
    collected."""
    def run_probe(probe):
        outputs = []
        publish = IPython.display.publish_display_data
        IPython.display.publish_display_data = lambda data, *args, **kwargs: outputs.append(
            {"output_type": "display_data", "data": data, "metadata": {}})
        try:
            exec(compile(probe.as_code(), "<probe>", "exec"), namespace)  # noqa: S102 (the course's own worker)
        finally:
            IPython.display.publish_display_data = publish
        return outputs
    return run_probe


def assert_fails(verdict, *parts):
    """A wrong answer fails, and its message says each of `parts`."""
    assert not verdict.passed, "a wrong answer passed"
    for part in parts:
        assert part in verdict.message, f"{part!r} not in:\n{verdict.message}"
