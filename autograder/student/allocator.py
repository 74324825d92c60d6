"""Let the C allocator keep freed memory for the next array, instead of handing it back to the system.

A training step of babygrad allocates a few dozen arrays of 0.1 to 8 MB (every op's output, the
Tensor's copy of it, every gradient) and frees them all before the next step allocates the same
sizes again. With glibc's defaults, blocks that large are given back to the operating system when
freed, so each new array starts on fresh pages, and the first touch of each page costs a page
fault and a zeroing. On the capstone CNN that was more than half of a training step (the README's
"Benchmark" section gives the figures of `benchmarks/train_mnist.py`).

Setting the thresholds once per process keeps up to 128 MB of freed memory for reuse, far below the
grading sandbox's limit. Only glibc has `mallopt` with these parameters; elsewhere (macOS, Windows,
musl) nothing changes. BABYGRAD_KEEP_FREED_MEMORY=0 keeps the defaults, for measuring.
"""
import ctypes
import os
import sys

M_TRIM_THRESHOLD = -1           # glibc's malloc.h: free memory at the heap's top kept before trimming
M_MMAP_THRESHOLD = -3           # blocks at least this large get pages of their own, returned on free
MMAP_THRESHOLD_BYTES = 32 << 20   # glibc's own ceiling for the threshold it adapts by itself
TRIM_THRESHOLD_BYTES = 128 << 20


def keep_freed_memory() -> bool:
    """Raise glibc's trim and mmap thresholds; True when they were set."""
    if not sys.platform.startswith("linux") or os.environ.get("BABYGRAD_KEEP_FREED_MEMORY") == "0":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # mallopt returns 1 on success; musl's stub returns 0 and changes nothing
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
