"""BLAS threads fitted to the CPUs a kernel may use: the cgroup's quota and the affinity mask, never more
threads than before."""
import os

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from autograder.student import cpus


def blas_threads():
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


@pytest.mark.parametrize("text, allowed", [("max 100000", None), ("200000 100000", 2), ("150000 100000", 2),
                                           ("50000 100000", 1), ("", None), ("junk", None), ("0 100000", None)])
def test_a_cgroup_quota_reads_as_whole_cpus(text, allowed):
    assert cpus.quota_cpus(text) == allowed


def test_usable_cpus_are_the_affinity_mask_capped_by_the_quota(tmp_path):
    quota = tmp_path / "cpu.max"
    quota.write_text("100000 100000\n")
    assert cpus.usable_cpus(quota) == 1
    quota.write_text("max 100000\n")
    assert cpus.usable_cpus(quota) == len(os.sched_getaffinity(0))
    assert cpus.usable_cpus(tmp_path / "missing") == len(os.sched_getaffinity(0))


def test_blas_threads_are_lowered_to_the_quota_and_never_raised(tmp_path):
    import numpy  # noqa: F401  (loads the BLAS library threadpoolctl looks for)
    quota = tmp_path / "cpu.max"
    quota.write_text("100000 100000\n")
    with threadpool_limits(limits=2, user_api="blas"):       # put back as it was afterwards
        assert cpus.fit_blas_threads(quota) is None
        assert blas_threads() == {1}
    with threadpool_limits(limits=1, user_api="blas"):
        quota.write_text("max 100000\n")
        cpus.fit_blas_threads(quota)
        assert blas_threads() == {1}
