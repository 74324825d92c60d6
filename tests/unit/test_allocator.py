"""Importing the course's student package (every notebook's set-up cell does) makes glibc keep freed
arrays for reuse: measured through glibc's own statistics, in fresh interpreters, with and without."""
import os
import subprocess
import sys

import pytest

from helpers.course_paths import ROOT

# Allocate and free one 8 MB array, then print how many freed bytes the heap kept (mallinfo2). glibc's
# defaults give a block that large pages of its own and return them on free (and only then adapt).
PROBE = """
import ctypes
import autograder.student
import numpy as np

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Mallinfo2
block = np.ones(8 << 20, dtype=np.uint8)
del block
print(libc.mallinfo2().fordblks)
"""


def kept_after_freeing(keep):
    env = dict(os.environ, BABYGRAD_KEEP_FREED_MEMORY=keep)
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt's thresholds are glibc's (Linux)")
def test_importing_the_student_package_keeps_freed_arrays_for_reuse():
    assert kept_after_freeing("1") >= 8 << 20, "the freed 8 MB array was handed back to the system"
    assert kept_after_freeing("0") < 8 << 20, "glibc's defaults kept the array anyway: this test proves nothing here"
