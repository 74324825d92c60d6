"""The sandbox every kernel that runs student code starts in: Debian's bubblewrap (`bwrap`).

Inside, the system and the Python installation are read-only, the notebook's folder is a private
size-capped copy (nothing the kernel writes is kept), the network is off, and memory, processes,
file size and CPU time are limited. The sandbox is a PID namespace: every process in it dies with it.

Two ways in, by who grades:
* as root (a grading server, Docker): bwrap runs privileged, so it can bind a Python installed under
  a private folder (pyenv in /root, mode 0700). Inside, `setpriv` drops to an unprivileged uid and
  `unshare --user` gives it a user namespace of its own; `prlimit` then sets the limits in that
  namespace, where RLIMIT_NPROC counts this sandbox's processes only (it never binds uid 0).
* as anyone else: bwrap makes the user namespace itself, and `prlimit` runs in it the same way.
"""
import compileall
import functools
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import autograder

NOBODY = 65534            # the sandbox's uid and gid when the grader is root: owns nothing on the machine
SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]
SANDBOX_TOOLS = ["bwrap", "prlimit"]        # bubblewrap's and util-linux's; as root also:
ROOT_TOOLS = ["setpriv", "unshare"]         # to drop to NOBODY in a user namespace of its own
MAX_COPIED_FILES = 2000   # a submission folder holds a notebook and a few support files
MPLCONFIGDIR = "/tmp/matplotlib"    # matplotlib's cache in every sandbox (font_cache.py seeds its font list)


@dataclass(frozen=True)
class SandboxLimits:
    """What one sandboxed kernel may use. The defaults are course_config.py's values, for a notebook
    checked outside the course (`python -m autograder check`), where course_config.py is absent."""

    memory_bytes: int = 4 << 30
    processes: int = 64
    file_bytes: int = 64 << 20
    cpu_seconds: int = 900
    scratch_bytes: int = 256 << 20
    output_bytes_per_cell: int = 20_000
    output_bytes_per_notebook: int = 200_000

    @classmethod
    def from_config(cls, cfg):
        """The limits named SANDBOX_* and OUTPUT_BYTES_* in course_config (a module, or its globals())."""
        values = cfg if isinstance(cfg, Mapping) else vars(cfg)
        return cls(memory_bytes=values["SANDBOX_MEMORY_BYTES"], processes=values["SANDBOX_PROCESSES"],
                   file_bytes=values["SANDBOX_FILE_BYTES"], cpu_seconds=values["SANDBOX_CPU_SECONDS"],
                   scratch_bytes=values["SANDBOX_SCRATCH_BYTES"],
                   output_bytes_per_cell=values["OUTPUT_BYTES_PER_CELL"],
                   output_bytes_per_notebook=values["OUTPUT_BYTES_PER_NOTEBOOK"])


@dataclass
class SandboxLaunch:
    """A command line for bwrap, and the files it copies into the sandbox: they are passed to bwrap
    as open descriptors (inherited), and must be closed once bwrap has started."""

    argv: list[str]
    fds: list[int] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)    # files of the folder not copied, and why

    def close(self):
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()


def package_dir() -> Path:
    """The installed `autograder` package: the only part of the course a kernel may see."""
    return Path(autograder.__file__).resolve().parent


@functools.cache
def compile_package():
    """Compile the course package's modules to bytecode, once per grading process, beside them.

    A sandboxed kernel cannot write bytecode (the package is read-only inside), so without it every
    kernel compiles the checks it imports from source: ~60 ms per submission. The grader compiles
    them from the same trusted files the kernel would read; Python recompiles any file changed since.
    """
    try:
        compileall.compile_dir(package_dir(), quiet=2, workers=1)
    except OSError:
        pass        # a read-only installation: pip compiled it already, or the kernel compiles


def python_roots() -> list[Path]:
    """The Python installation(s) the kernel runs from: the venv and the interpreter it was made from."""
    roots = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    roots.add(Path(sys.executable).resolve().parent.parent)
    return sorted(roots)


def sandbox_env(environment: Mapping[str, str] | None = None) -> dict[str, str]:
    """The kernel's whole environment: what Python needs here, and `environment`, the course's kernel
    variables (course_config.KERNEL_ENVIRONMENT, handed over by the kernel manager). Nothing of the
    grader's (no credentials, no course paths)."""
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
        # matplotlib and fontconfig warn on stderr (which zeroes a test cell) without writable caches
        "MPLCONFIGDIR": MPLCONFIGDIR, "XDG_CACHE_HOME": "/tmp/cache",
        **(environment or {}),
    }
    # PYTHONPATH is kept only where it leads to the package (a course run from its own folder).
    package = package_dir()
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and Path(p).resolve() in (package, package.parent)]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    return env


class _Mounts:
    """bwrap mount options in order, creating parent folders world-readable (privileged bwrap
    would make them 0700) and never mounting inside a read-only bind."""

    def __init__(self):
        self.args: list[str] = []
        self.made: set[str] = {"/"}
        self.binds: list[Path] = []

    def covered(self, path: Path) -> bool:
        return any(path == b or b in path.parents for b in self.binds)

    def parents(self, path: Path, perms="0755"):
        for parent in reversed(path.parents):
            if str(parent) not in self.made and not self.covered(parent):
                self.args += ["--perms", perms, "--dir", str(parent)]
                self.made.add(str(parent))

    def bind(self, path: Path, writable=False):
        if self.covered(path):
            return
        self.parents(path)
        self.args += ["--bind" if writable else "--ro-bind", str(path), str(path)]
        self.binds.append(path)
        self.made.add(str(path))

    def tmpfs(self, path: Path, size: int, perms: str):
        self.parents(path)
        self.args += ["--perms", perms, "--size", str(size), "--tmpfs", str(path)]
        self.made.add(str(path))


def _copy_folder(mounts: _Mounts, folder: Path, budget: int, launch: SandboxLaunch, omit=()):
    """Put the folder's regular files into the sandbox's scratch copy of it (bwrap copies each from an
    open descriptor), all but those whose names end with one of `omit`. Links are never followed: a
    submission's symlink could point anywhere."""
    for here, dirs, files in os.walk(folder, followlinks=False):
        here = Path(here)
        for name in sorted(dirs):
            if not (here / name).is_symlink():
                mounts.args += ["--perms", "0777", "--dir", str(here / name)]
        for name in sorted(files):
            if name.endswith(tuple(omit)):
                continue
            path = here / name
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError as e:
                launch.skipped.append(f"{path}: {e.strerror}")
                continue
            info = os.fstat(fd)
            size = info.st_size
            if not stat.S_ISREG(info.st_mode) or size > budget or len(launch.fds) >= MAX_COPIED_FILES:
                os.close(fd)
                launch.skipped.append(f"{path}: not a regular file, too large ({size} bytes) or too many files")
                continue
            budget -= size
            _copy_in(mounts, fd, path, launch)


def _copy_in(mounts: _Mounts, fd: int, target: Path, launch: SandboxLaunch):
    """bwrap copies the open file `fd` to `target`; the descriptor is inherited, and closed after launch."""
    os.set_inheritable(fd, True)
    launch.fds.append(fd)
    mounts.args += ["--perms", "0666", "--file", str(fd), str(target)]


def _seed(mounts: _Mounts, source: Path, target: Path, launch: SandboxLaunch):
    """Copy one of the grader's files to `target`, under the sandbox's fresh /tmp, its folders made writable."""
    if Path("/tmp") not in target.parents:
        raise ValueError(f"a seed goes under the sandbox's /tmp, not to {target}")
    mounts.parents(target, perms="0777")
    _copy_in(mounts, os.open(source, os.O_RDONLY), target, launch)


# Arguments every grading kernel gets. The kernel copies each message into zmq instead of handing
# large ones over zero-copy: zero-copy sends start a pyzmq thread on first use, and a kernel whose
# student already spent its process limit (a fork bomb) cannot start it, so a large reply to the judge
# went out torn ("Invalid Signature") and the student lost cells that had nothing to do with the bomb.
# Nor does it keep an input history on disk: nobody reads a grading kernel's history.sqlite, and its
# writing thread cost about 0.45 ms of every cell's 4 ms round trip (`In`, `Out` and `_` still work).
KERNEL_ARGUMENTS = [f"--Session.copy_threshold={2**62}", "--HistoryManager.enabled=False"]


def sandbox_launch(command: list[str], workdir, limits: SandboxLimits, shared=(), uid=NOBODY,
                   environment: Mapping[str, str] | None = None, seeds=(), omit=()) -> SandboxLaunch:
    """The bwrap command that runs `command` in a sandbox whose working folder is a private copy of
    `workdir` (at the same path), without the files whose names end with one of `omit`, with
    `environment` added to sandbox_env's variables; `shared` folders (the kernel's socket folder) are
    bound writable; `seeds`, (file, path under /tmp) pairs of the grader's own files, are copied into
    the sandbox's /tmp (font_cache.seeds)."""
    workdir = Path(workdir).resolve()
    privileged = os.geteuid() == 0
    mounts = _Mounts()
    for system in SYSTEM_PATHS:
        path = Path(system)
        if path.is_symlink():
            mounts.args += ["--symlink", os.readlink(path), system]
        elif path.is_dir():
            mounts.bind(path)
    mounts.args += ["--proc", "/proc", "--dev", "/dev"]
    mounts.made |= {"/proc", "/dev"}
    mounts.tmpfs(Path("/tmp"), limits.scratch_bytes, "1777")
    launch = SandboxLaunch(argv=[])
    for source, target in seeds:
        _seed(mounts, Path(source), Path(target), launch)
    mounts.tmpfs(workdir, limits.scratch_bytes, "0777")
    _copy_folder(mounts, workdir, limits.scratch_bytes, launch, omit)
    for root in [*python_roots(), package_dir()]:
        mounts.bind(root)
    for folder in shared:
        mounts.bind(Path(folder).resolve(), writable=True)

    argv = ["bwrap", "--die-with-parent", "--new-session", "--unshare-ipc", "--unshare-pid", "--unshare-net",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox", "--clearenv"]
    if not privileged:
        argv.append("--unshare-user")
    for name, value in sandbox_env(environment).items():
        argv += ["--setenv", name, value]
    argv += mounts.args + ["--chdir", str(workdir)]
    if privileged:
        argv += ["--cap-add", "CAP_SETUID,CAP_SETGID",
                 "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                 "--bounding-set=-all", "--no-new-privs",
                 "unshare", "--user", f"--map-user={uid}", f"--map-group={uid}"]
    argv += ["prlimit", f"--as={limits.memory_bytes}", f"--nproc={limits.processes}",
             f"--fsize={limits.file_bytes}", f"--cpu={limits.cpu_seconds}", "--core=0", "--", *command]
    launch.argv = argv
    return launch


@functools.cache
def unavailable_reason() -> str | None:
    """None when a sandbox starts here; otherwise why not (bwrap missing, user namespaces refused...).
    It starts a real one: only that proves the kernel would."""
    tools = SANDBOX_TOOLS + (ROOT_TOOLS if os.geteuid() == 0 else [])
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not found (Debian packages bubblewrap and util-linux)"
    with tempfile.TemporaryDirectory(prefix="bg-probe-") as folder:
        launch = sandbox_launch([sys.executable, "-c", "import numpy"], folder, SandboxLimits())
        try:
            done = subprocess.run(launch.argv, capture_output=True, text=True, timeout=60, close_fds=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"bwrap could not start a sandbox: {e}"
        finally:
            launch.close()
    if done.returncode != 0:
        return f"bwrap could not start a sandbox (exit status {done.returncode}): {done.stderr.strip()[-500:]}"
    return None


def describe_exit(status) -> str:
    """A sandbox's exit status in words. bwrap reports a child killed by signal N as 128 + N."""
    if status is None:
        return "exit status unknown"
    number = -status if status < 0 else status - 128 if status > 128 else 0
    if number:
        try:
            name = signal.Signals(number).name
        except ValueError:
            return f"exit status {status}"
        why = {"SIGSEGV": "a segmentation fault", "SIGKILL": "killed, often for memory",
               "SIGXCPU": "CPU time limit reached", "SIGXFSZ": "file size limit reached",
               "SIGABRT": "aborted"}.get(name, "a signal")
        return f"{name}: {why}"
    return f"exit status {status}"
