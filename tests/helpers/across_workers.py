"""Expensive test material made once per test run, however many pytest-xdist workers ask for it.

Under pytest-xdist (`make test` runs two workers) each worker has its own session and module fixtures, so
a class graded in a fixture was graded once per worker that ran one of its tests. `once_per_run` makes it
once instead, through a lock in the folder the workers share (`xdist_group` marks would keep such tests on
one worker, but pytest-xdist 3.8 with pytest 9.2 does not honour them, not even a static mark)."""
import fcntl
import os
import pickle
import shutil
from contextlib import contextmanager


def once_per_run(tmp_path_factory, name, make):
    """(folder, make(folder)): made once per test run, whichever xdist worker asks first.

    The folder is in the run's temporary folder, which the workers share; a worker that asks while
    another is making it waits on the lock, then reads the result back (pickled: keep it plain data)."""
    result = shared_folder(tmp_path_factory) / f"{name}.pickle"
    with one_worker_at_a_time(tmp_path_factory, name) as folder:
        if not result.exists():         # a worker that failed while making it left its folder behind
            shutil.rmtree(folder)
            folder.mkdir()
            result.write_bytes(pickle.dumps(make(folder)))
    return folder, pickle.loads(result.read_bytes())


def shared_folder(tmp_path_factory):
    """The run's temporary folder that every xdist worker sees (each worker's own is inside it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def one_worker_at_a_time(tmp_path_factory, name):
    """The shared folder `name` (made on first use), held by one worker at a time: for material made in
    parts, each part the first time a test asks for it."""
    shared = shared_folder(tmp_path_factory)
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        (shared / name).mkdir(exist_ok=True)
        yield shared / name
