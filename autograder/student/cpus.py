"""BLAS threads fitted to the CPUs a kernel may really use.

NumPy's BLAS starts one thread per CPU it sees, but Binder, shared hubs and containers give a kernel fewer
CPUs than the machine has: a cgroup quota (`/sys/fs/cgroup/cpu.max`) or an affinity mask. Threads beyond
that share the same slices of time and spin while they wait: on a busy two-core machine chapter 10's CNN
capstone took 5 minutes with NumPy's default threads and 7 s with one. The set-up cell of every notebook
calls `fit_blas_threads()`, so the notebook, Validate and `python -m autograder check` (which run the
notebook, set-up cell included) all use at most as many threads as there are usable CPUs. It never raises
a limit set before (grading kernels start with one thread, course_config.KERNEL_ENVIRONMENT).
"""
import math
import os
from pathlib import Path

CGROUP_QUOTA = Path("/sys/fs/cgroup/cpu.max")      # cgroup v2: "<quota> <period>" in microseconds, or "max ..."


def quota_cpus(text):
    """The CPUs a cgroup v2 `cpu.max` line allows, rounded up (a quota of 1.5 CPUs keeps 2 threads busy
    part of the time), or None when it sets no quota or cannot be read."""
    parts = text.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    return max(1, math.ceil(quota / period)) if quota > 0 and period > 0 else None


def usable_cpus(quota_file=CGROUP_QUOTA):
    """The CPUs this process may run on: its affinity mask, capped by its cgroup's CPU quota."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:                       # macOS and Windows have no affinity mask
        cpus = os.cpu_count() or 1
    try:
        quota = quota_cpus(Path(quota_file).read_text())
    except OSError:
        quota = None
    return min(cpus, quota) if quota else cpus


def fit_blas_threads(quota_file=CGROUP_QUOTA):
    """Lower every BLAS thread pool NumPy loaded to the usable CPUs; never raise one. Returns nothing, so the
    set-up cell shows nothing."""
    import numpy  # noqa: F401  (threadpoolctl finds the BLAS libraries among the libraries loaded)
    from threadpoolctl import threadpool_info, threadpool_limits

    usable = usable_cpus(quota_file)
    pools = [pool for pool in threadpool_info() if pool["user_api"] == "blas" and pool["num_threads"] > usable]
    if pools:
        threadpool_limits(limits={pool["prefix"]: usable for pool in pools})
