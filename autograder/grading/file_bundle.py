"""A folder as bytes and back: how submissions go to a grading worker and results come back, so that
the workers of a cluster need no filesystem shared with the instructor's machine.

Unpacking keeps only regular files and folders inside the target, with tarfile's "data" filter
(no links, devices, absolute paths or setuid bits), because a result holds what a student's notebook
wrote.
"""
import io
import tarfile
from pathlib import Path


def pack(folder: str | Path) -> bytes:
    """The folder's regular files, in a gzip'd tar with sorted names and no owners or times, so the same
    files give the same bytes."""
    folder = Path(folder)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                info = tarfile.TarInfo(path.relative_to(folder).as_posix())
                info.size, info.mode = path.stat().st_size, 0o644
                with open(path, "rb") as handle:
                    archive.addfile(info, handle)
    return buffer.getvalue()


def unpack(data: bytes, folder: str | Path) -> Path:
    """Write what `pack` made into `folder` (created); return the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(folder, members=[m for m in archive.getmembers() if m.isfile() or m.isdir()],
                           filter="data")
    return folder
