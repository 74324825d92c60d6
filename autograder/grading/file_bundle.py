"""A folder as bytes and back: how submissions go to a grading worker and results come back, so that
the workers of a cluster need no filesystem shared with the instructor's machine.

Unpacking writes only regular files and folders, each inside the target, with plain modes (no links,
devices, absolute paths or setuid bits), because a result holds what a student's notebook wrote. It
writes them itself rather than through tarfile's "data" filter, which Python 3.11 has only from 3.11.4
on (Debian 12's is 3.11.2).
"""
import io
import os
import tarfile
from collections.abc import Iterable
from pathlib import Path

from autograder.grading.intake import open_regular


def pack(folder: str | Path, files: Iterable[str] | None = None) -> bytes:
    """The folder's regular files (or those of `files`, paths relative to it, that are regular: a
    submission's, as intake.survey admitted them), in a gzip'd tar with sorted names and no owners or
    times, so the same files give the same bytes. No link is followed and no FIFO opened."""
    folder = Path(folder)
    if files is None:
        files = [p.relative_to(folder).as_posix() for p in folder.rglob("*")]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for relative in sorted(files):
            try:
                handle = os.fdopen(open_regular(folder / relative), "rb")
            except OSError:
                continue
            with handle:
                info = tarfile.TarInfo(relative)
                info.size, info.mode = os.fstat(handle.fileno()).st_size, 0o644
                archive.addfile(info, handle)
    return buffer.getvalue()


def unpack(data: bytes, folder: str | Path) -> Path:
    """Write what `pack` made into `folder` (created); return the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    root = folder.resolve()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive:
            target = (root / member.name).resolve()
            if not (member.isfile() or member.isdir()) or not target.is_relative_to(root) or target == root:
                continue
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.extractfile(member) as source, open(target, "wb") as handle:
                handle.write(source.read())
            target.chmod(0o644)
    return folder
