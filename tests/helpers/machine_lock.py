"""Machine-wide locks, for what two test runs in two checkouts cannot each have for themselves: fixed Linux
users and groups, a user id whose processes a run ends by killing them all. A run that asks for a lock another
run holds waits its turn. `fcntl.flock` locks go with the process, so a run that dies leaves no stale lock."""
import contextlib
import fcntl
from pathlib import Path

# Fixed, not tempfile.gettempdir(): a run started with its own TMPDIR (.ci/reproduce-elsewhere) must meet the others.
LOCKS = Path("/tmp")


@contextlib.contextmanager
def machine_wide(name):
    """Hold the machine-wide lock `name` (/tmp/babygrad-NAME.lock) for the `with` block."""
    with open(LOCKS / f"babygrad-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
