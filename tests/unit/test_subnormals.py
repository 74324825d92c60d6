"""benchmarks/subnormals.py switches flush-to-zero on for its block only: inside, a subnormal float32
reads as zero and no result becomes one; afterwards the thread computes with subnormals again, so
nothing timed or tested later inherits the mode."""
import numpy as np
import pytest

from benchmarks import subnormals

pytestmark = pytest.mark.skipif(not subnormals.available(), reason="flushing subnormals needs x86-64 Linux with glibc")

SUBNORMAL = np.float32(1e-39)            # below float32's smallest normal number, 1.18e-38


def test_the_block_flushes_subnormals_and_restores_the_mode():
    tiny, smallest_normal = np.array([SUBNORMAL]), np.array([np.finfo(np.float32).tiny])
    assert (tiny + 0)[0] == SUBNORMAL and (smallest_normal / 2)[0] > 0
    with subnormals.flushed_to_zero():
        assert (tiny + 0)[0] == 0                       # denormals-are-zero: the input reads as zero
        assert (smallest_normal / 2)[0] == 0            # flush-to-zero: no subnormal result
    assert (tiny + 0)[0] == SUBNORMAL and (smallest_normal / 2)[0] > 0


def test_the_mode_is_restored_when_the_block_raises():
    with pytest.raises(ZeroDivisionError), subnormals.flushed_to_zero():
        raise ZeroDivisionError
    assert (np.array([SUBNORMAL]) * 1)[0] == SUBNORMAL
