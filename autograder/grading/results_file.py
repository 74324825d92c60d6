"""Write Gradescope's results.json so that nothing planted at that path can change what it reads.

A student's code once put a FIFO at results/results.json with a background reader that wrote full
marks: the runner's write went into the pipe. Here the folder is root's (0755), the results are
written to a fresh file that refuses links, synced, and renamed over results.json: the rename
replaces whatever stood there (FIFO, symlink, file) instead of writing through it.
"""
import json
import os
import shutil
import stat
from pathlib import Path

RESULTS_NAME = "results.json"


def secure_results_folder(folder):
    """`folder` as a real directory owned by this process's user, mode 0755 (only its owner writes)."""
    folder = Path(folder)
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISDIR(info.st_mode):
        folder.unlink()                           # a symlink or file planted where the folder belongs
        info = None
    if info is None:
        folder.mkdir(mode=0o755, parents=True)
    if os.geteuid() == 0:
        os.chown(folder, 0, 0)
    os.chmod(folder, 0o755)
    return folder


def write_results(folder, results):
    """Atomically write `results` (a JSON-able dict) to folder/results.json; return its path."""
    folder = secure_results_folder(folder)
    temporary = folder / f".{RESULTS_NAME}.{os.getpid()}.{os.urandom(6).hex()}"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        target = folder / RESULTS_NAME
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)                 # os.replace cannot replace a directory planted there
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return folder / RESULTS_NAME
