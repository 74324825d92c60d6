"""matplotlib's font list for grading kernels, built once per grading process rather than once per kernel.

On its first import under a new MPLCONFIGDIR, matplotlib scans the system's fonts and writes the list it
found there (`fontlist-vNNN.json`): about 0.2 s here. Every sandbox starts with an empty /tmp, so every
grading kernel whose notebook imports matplotlib (chapters 6, 7 and 9, in their set-up cells) paid it
again. The list is built once, in a sandbox like the kernels' (the same fonts, the same HOME), and each
sandbox then starts with a copy of it in its MPLCONFIGDIR (`sandbox_launch`'s `seeds`).
"""
import atexit
import functools
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.grading.sandbox import MPLCONFIGDIR, SandboxLimits, sandbox_launch

BUILD = "import matplotlib.font_manager"


@functools.cache
def font_list() -> Path | None:
    """The font list, built on first use and kept for the process's life; None where matplotlib is
    absent or the build failed (each kernel then builds its own, as it would anyway)."""
    if importlib.util.find_spec("matplotlib") is None:
        return None
    built = Path(tempfile.mkdtemp(prefix="bg-fonts-"))
    atexit.register(shutil.rmtree, built, ignore_errors=True)
    built.chmod(0o777)          # the sandbox's user (NOBODY, when the grader is root) writes the list there
    with tempfile.TemporaryDirectory(prefix="bg-fonts-work-") as workdir:
        launch = sandbox_launch([sys.executable, "-c", BUILD], workdir, SandboxLimits(), shared=[built],
                                environment={"MPLCONFIGDIR": str(built)})
        try:
            subprocess.run(launch.argv, capture_output=True, timeout=120, pass_fds=launch.fds, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        finally:
            launch.close()
    lists = sorted(built.glob("fontlist-v*.json"))
    return lists[0] if len(lists) == 1 else None


def seeds() -> list[tuple[Path, str]]:
    """(file here, its path in the sandbox) for sandbox_launch: the font list, where there is one."""
    found = font_list()
    return [(found, f"{MPLCONFIGDIR}/{found.name}")] if found else []
