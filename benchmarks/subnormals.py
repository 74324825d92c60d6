"""Flush float32 subnormals to zero for a block of code, as `torch.set_flush_denormal(True)` does.

Why a benchmark needs it: late in the MLP's first epoch, Adam's running mean of every weight whose
gradient stays zero (the weights into a hidden unit that never fires) decays by beta1 = 0.9 per step
into float32's subnormal range, below 1.2e-38, after about 700 steps. On x86, arithmetic on subnormals
is done in microcode, about fifty times slower per element. Every library that runs Adam in float32
pays for it (the NumPy floor's optimizer steps take four to five times as long from then on), so it
hides each library's own cost behind a shared one. With the CPU's flush-to-zero and
denormals-are-zero modes set, subnormal results become zero and subnormal inputs read as zero; the
training's numbers change by less than 1.2e-38 per value.

The modes live in the calling thread's MXCSR register. NumPy's loops and a one-thread PyTorch run in
that thread, so one switch covers both. glibc's `fegetenv`/`fesetenv` read and write it: on x86-64
`fenv_t` is 32 bytes, the MXCSR its last four.
"""
import contextlib
import ctypes
import ctypes.util
import platform

FLUSH_TO_ZERO, DENORMALS_ARE_ZERO = 0x8000, 0x0040
_MXCSR_WORD = 7                      # fenv_t as eight uint32 words on x86-64 glibc: MXCSR is the last


def _libm():
    if platform.machine() not in ("x86_64", "AMD64") or platform.system() != "Linux":
        return None
    name = ctypes.util.find_library("m")
    return ctypes.CDLL(name) if name else None


LIBM = _libm()


def available():
    """Whether this machine can switch the modes (x86-64 Linux with glibc)."""
    return LIBM is not None


@contextlib.contextmanager
def flushed_to_zero():
    """Inside the block, this thread's float arithmetic treats subnormals as zero; afterwards, as before."""
    if LIBM is None:
        raise RuntimeError("flushing subnormals needs x86-64 Linux with glibc")
    saved = (ctypes.c_uint32 * 8)()
    if LIBM.fegetenv(saved) != 0:
        raise OSError("fegetenv failed")
    flushing = (ctypes.c_uint32 * 8)(*saved)
    flushing[_MXCSR_WORD] |= FLUSH_TO_ZERO | DENORMALS_ARE_ZERO
    if LIBM.fesetenv(flushing) != 0:
        raise OSError("fesetenv failed")
    try:
        yield
    finally:
        LIBM.fesetenv(saved)
