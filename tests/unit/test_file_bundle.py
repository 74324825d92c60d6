"""A folder as bytes and back (autograder/grading/file_bundle.py): only regular files and folders come
out, each inside the target, whatever the archive holds; on every Python the package admits."""
import io
import tarfile


from autograder.grading.file_bundle import pack, unpack



def test_a_folder_comes_back_as_it_was(tmp_path):
    source = tmp_path / "source"
    (source / "mybabygrad").mkdir(parents=True)
    (source / "autodiff.ipynb").write_text("{}")
    (source / "mybabygrad" / "__init__.py").write_bytes(b"x = 1\n")
    (source / "link").symlink_to(source / "autodiff.ipynb")
    target = unpack(pack(source), tmp_path / "target")
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == [
        "autodiff.ipynb", "mybabygrad", "mybabygrad/__init__.py"]
    assert (target / "mybabygrad" / "__init__.py").read_bytes() == b"x = 1\n"
    assert pack(source) == pack(source)


def hostile_archive():
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        def add(name, data=b"", **fields):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            for key, value in fields.items():
                setattr(info, key, value)
            archive.addfile(info, io.BytesIO(data))
        add("../escaped.txt", b"out")
        add("/tmp/absolute.txt", b"abs")
        add("link", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        add("fifo", type=tarfile.FIFOTYPE)
        add("setuid", b"#!/bin/sh\n", mode=0o4755)
        add("inside/ok.txt", b"kept")
    return buffer.getvalue()


def test_an_archive_gives_nothing_but_regular_files_inside_the_target(tmp_path):
    target = unpack(hostile_archive(), tmp_path / "target")
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == ["inside", "inside/ok.txt", "setuid"]
    assert (target / "setuid").stat().st_mode & 0o7777 == 0o644
    assert not (tmp_path / "escaped.txt").exists()
