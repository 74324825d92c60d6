"""The solved code of a chapter and the chapters before it, run in a fresh namespace, as a notebook would."""
import contextlib
import io
import sys

import IPython.display
import matplotlib.pyplot as plt

from autograder.build.generated_files import NUMERIC_TAG
from autograder.build import authoring

from helpers.course_paths import ROOT


def solved_namespace(chapter_id, before=False):
    """Exports of every chapter script up to and including `chapter_id` (only before it, with
    `before`), executed in order."""
    namespace = {"__name__": "solved"}
    for script in sorted((ROOT / "chapters").glob("ch*.py")):
        if script.name.split("_")[0] < chapter_id or (not before and script.name.split("_")[0] == chapter_id):
            exec(compile("import numpy as np\n" + "\n".join(authoring.exported_code(script.read_text())),
                         str(script), "exec"), namespace)
    return namespace


def solved_cells(chapter_id, replace=None, training=True):
    """The solved code of a chapter's provided and exercise cells, with `replace` = {cell id: (old, new)}
    applied to the exercise cells: a student's answer, right or wrong. Without `training`, the cells
    tagged numeric-output (the MNIST training runs and what they plot) are left out."""
    script = next((ROOT / "chapters").glob(f"{chapter_id}_*.py"))
    parts = []
    for cell in authoring.notebook_from_script(script.read_text()).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or meta.get("grade"):
            continue
        if not training and NUMERIC_TAG in cell.metadata.get("tags", []):
            continue
        source = "\n".join(line for line in cell.source.splitlines()
                           if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line)
        for old, new in (replace or {}).get(meta.get("grade_id"), []):
            assert old in source, f"{old!r} is not in cell {meta.get('grade_id')!r}"
            source = source.replace(old, new, 1)
        parts.append(source)
    return parts


def notebook_namespace(chapter_id, replace=None, training=True):
    """A chapter's notebook run up to its end, check cells left out (their output is swallowed), and
    its training runs too unless told not to."""
    namespace = solved_namespace(chapter_id, before=True)
    namespace["display"] = IPython.display.display     # a notebook's builtin
    release = str(ROOT / "release" / chapter_id)       # where the notebook's `import earlier_chapters` looks
    sys.path.insert(0, release)
    sys.modules.pop("earlier_chapters", None)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for source in solved_cells(chapter_id, replace, training):
                try:
                    exec(compile(source, chapter_id, "exec"), namespace)
                except Exception:  # noqa: BLE001
                    if not replace:
                        raise            # the solution runs cleanly; a wrong answer may break an example cell
    finally:
        sys.path.remove(release)
        sys.modules.pop("earlier_chapters", None)
        plt.close("all")                               # the notebook's figures, never shown here
    return namespace


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
