"""A folder as bytes and back: how submissions go to a grading worker and results come back, so that
the workers of a cluster need no filesystem shared with the instructor's machine.

Unpacking writes only regular files and folders, each inside the target, with plain modes (no links,
devices, absolute paths or setuid bits), because a result holds what a student's notebook wrote. It
writes them itself rather than through tarfile's "data" filter, which Python 3.11 has only from 3.11.4
on (Debian 12's is 3.11.2).
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
