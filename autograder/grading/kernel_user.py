"""Run a notebook's kernel as an unprivileged user, for a grader that runs as root without user
namespaces (Gradescope's Docker container), where the bubblewrap sandbox cannot start.

Why this design: nbgrader itself stays root, because it must read the gradebook and the autograde
source, which hold the hidden tests; only the kernel, the one process that runs student code, drops
to `uid`. It gets its own working folder (a copy of the chapter's support files), its own connection
file, writable caches, and rlimits (`prlimit`). Files it must not touch are root's and not world
readable or writable (the runner sees to that), so the kernel can neither read hidden tests nor
write results; and since every process it starts keeps its uid, `kill_user_processes` ends them all.

In an nbgrader_config.py, after the course's settings:

    from autograder.grading.kernel_user import run_kernels_unprivileged
    run_kernels_unprivileged(get_config(), uid=64000, home_parent="/tmp/babygrad-kernels")
"""
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
from jupyter_client.manager import AsyncKernelManager
from nbgrader.preprocessors import Execute
from traitlets import Int, Unicode

from autograder.grading.sandbox import KERNEL_ARGUMENTS

# Files of the notebook's folder that the kernel may need (provided modules, data); never notebooks.
NOT_COPIED = shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__")


@dataclass(frozen=True)
class KernelLimits:
    """rlimits for the kernel and every process it starts (`prlimit` options). RLIMIT_NPROC counts
    the processes of the user, so it binds here, where the kernel is not root."""

    memory_bytes: int = 4 * 2**30        # address space: NumPy and one BLAS thread fit in well under this
    processes: int = 256                 # the kernel's threads count too
    file_bytes: int = 256 * 2**20        # largest file it may write
    cpu_seconds: int = 3600              # whole-run CPU time: far above chapter 10's training

    @classmethod
    def from_config(cls, cfg):
        """The course's sandbox limits (course_config.SANDBOX_*), where it sets them; else the defaults."""
        return cls(getattr(cfg, "SANDBOX_MEMORY_BYTES", cls.memory_bytes),
                   getattr(cfg, "SANDBOX_PROCESSES", cls.processes),
                   getattr(cfg, "SANDBOX_FILE_BYTES", cls.file_bytes),
                   getattr(cfg, "SANDBOX_CPU_SECONDS", cls.cpu_seconds))

    def prlimit_argv(self):
        return ["prlimit", f"--as={self.memory_bytes}", f"--nproc={self.processes}",
                f"--fsize={self.file_bytes}", f"--cpu={self.cpu_seconds}", "--core=0", "--"]


class UnprivilegedKernelManager(AsyncKernelManager):
    """nbclient's kernel manager, with the kernel started as `uid`:`gid` in a folder of its own."""

    uid = Int(64000, help="user id the kernel runs as (no account needed)").tag(config=True)
    gid = Int(-1, help="group id the kernel runs as (default: same number as uid)").tag(config=True)
    home_parent = Unicode("", help="folder for the kernels' working folders (default: the system's temp)"
                          ).tag(config=True)
    memory_bytes = Int(KernelLimits.memory_bytes).tag(config=True)
    processes = Int(KernelLimits.processes).tag(config=True)
    file_bytes = Int(KernelLimits.file_bytes).tag(config=True)
    cpu_seconds = Int(KernelLimits.cpu_seconds).tag(config=True)

    @property
    def group(self):
        return self.uid if self.gid < 0 else self.gid

    async def _async_pre_start_kernel(self, **kw):
        home = Path(tempfile.mkdtemp(prefix="kernel-", dir=self.home_parent or None))
        if kw.get("cwd"):
            shutil.copytree(kw["cwd"], home, ignore=NOT_COPIED, dirs_exist_ok=True)
        _give(home, self.uid, self.group)
        self._home = home
        record_start(self.home_parent, self.uid)
        self.connection_file = str(home / f"connection-{os.urandom(6).hex()}.json")
        kw["cwd"] = str(home)
        kw["env"] = dict(kw.get("env") or os.environ, **_private_environment(home))
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        limits = KernelLimits(self.memory_bytes, self.processes, self.file_bytes, self.cpu_seconds)
        # limits first, as root; setpriv last, so the kernel itself is the process that exec()s python
        return limits.prlimit_argv() + drop_privileges_argv(self.uid, self.group) + kernel_cmd + KERNEL_ARGUMENTS, kw

    def write_connection_file(self, **kwargs):
        """The connection file is written by root, mode 0600: the kernel must be able to read it."""
        super().write_connection_file(**kwargs)
        os.chown(self.connection_file, self.uid, self.group)

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart=restart)
        if not restart and getattr(self, "_home", None):
            shutil.rmtree(self._home, ignore_errors=True)


def unprivileged(step):
    """The Execute step `step` (nbgrader's, or a course subclass such as the judge's) with its kernels
    started by UnprivilegedKernelManager; whatever else the step does is kept. Execute passes its
    kernel manager class as an argument, which outranks `--Execute.kernel_manager_class`, so the
    subclass sets it there. Its settings stay under the step's own config section."""
    if getattr(step, "runs_unprivileged", False):
        return step

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = UnprivilegedKernelManager
        step.__init__(self, *args, **kwargs)

    return type(f"Unprivileged{step.__name__}", (step,),
                {"__init__": __init__, "runs_unprivileged": True, "__module__": __name__,
                 "__doc__": f"{step.__name__}, its kernel run by UnprivilegedKernelManager."})


UnprivilegedExecute = unprivileged(Execute)


def run_kernels_unprivileged(c, uid, gid=None, home_parent="", limits=None):
    """Configure nbgrader (config object `c`) so autograde runs every kernel as uid:gid with `limits`
    (KernelLimits): each Execute step of the course's autograde preprocessors becomes unprivileged()."""
    steps = _execute_steps(c)
    if not any(_is_execute(s) for s in steps):
        raise ValueError(f"no Execute step among the autograde preprocessors {steps}: nothing to run unprivileged")
    c.Autograde.autograde_preprocessors = [unprivileged(s) if _is_execute(s) else s for s in steps]
    c.UnprivilegedKernelManager.uid = uid
    c.UnprivilegedKernelManager.gid = uid if gid is None else gid
    c.UnprivilegedKernelManager.home_parent = str(home_parent)
    limits = limits or KernelLimits()
    c.UnprivilegedKernelManager.memory_bytes = limits.memory_bytes
    c.UnprivilegedKernelManager.processes = limits.processes
    c.UnprivilegedKernelManager.file_bytes = limits.file_bytes
    c.UnprivilegedKernelManager.cpu_seconds = limits.cpu_seconds


def runs_kernels_unprivileged(config_folder):
    """Whether the nbgrader_config.py in `config_folder` loads and makes every Execute step of
    autograde unprivileged. nbgrader only logs a config file that fails to load, and then grades with
    its defaults (a kernel as root): so a grader checks this before it starts nbgrader."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(config_folder)).load_config()
    if "autograde_preprocessors" not in config.Autograde:
        return False
    executes = [s for s in _execute_steps(config) if _is_execute(s)]
    return bool(executes) and all(getattr(s, "runs_unprivileged", False) for s in executes)


def _execute_steps(c):
    from nbgrader.converters import Autograde
    from traitlets.utils.importstring import import_item

    if "autograde_preprocessors" in c.Autograde:
        steps = list(c.Autograde.autograde_preprocessors)
    else:
        steps = list(Autograde.class_traits()["autograde_preprocessors"].default())
    return [import_item(s) if isinstance(s, str) else s for s in steps]


def _is_execute(step):
    return isinstance(step, type) and issubclass(step, Execute)


STARTED_LOG = "kernels-started.log"


def record_start(home_parent, uid):
    """Append a line to home_parent/kernels-started.log: the grader can tell that its kernels really
    went through this manager (a configuration that silently failed would leave no line)."""
    if home_parent:
        with open(Path(home_parent) / STARTED_LOG, "a", encoding="utf-8") as log:
            log.write(f"uid {uid}\n")


def kernels_started(home_parent):
    """How many kernels UnprivilegedKernelManager started under `home_parent`."""
    path = Path(home_parent) / STARTED_LOG
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def drop_privileges_argv(uid, gid):
    """`setpriv` options that make the rest of the command line run as uid:gid with no capability,
    no supplementary group, and no way back (no_new_privs)."""
    return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]


def _private_environment(home):
    """Caches in the kernel's own folder: matplotlib, fontconfig and IPython warn on stderr when they
    cannot write their caches, and stderr output zeroes a test cell."""
    home = str(home)
    return {"HOME": home, "USER": "student", "LOGNAME": "student", "MPLCONFIGDIR": f"{home}/.matplotlib",
            "XDG_CACHE_HOME": f"{home}/.cache", "XDG_CONFIG_HOME": f"{home}/.config",
            "IPYTHONDIR": f"{home}/.ipython", "JUPYTER_RUNTIME_DIR": f"{home}/.runtime", "TMPDIR": home}


def _give(folder, uid, gid):
    """Make `folder` and everything in it belong to uid:gid, readable by it alone."""
    os.chmod(folder, 0o700)
    for path in [folder, *folder.rglob("*")]:
        os.lchown(path, uid, gid)


def user_processes(uid):
    """Processes whose real, effective or saved user id is `uid`."""
    found = []
    for process in psutil.process_iter(["uids"]):
        uids = process.info["uids"]
        if uids is not None and uid in (uids.real, uids.effective, uids.saved):
            found.append(process)
    return found


def kill_user_processes(uid, gid=None, attempts=50):
    """SIGKILL every process of `uid`; return the ones still alive after `attempts` rounds.

    Each round forks a child that becomes `uid` and calls kill(-1, SIGKILL): the kernel then signals
    every process of that user at once, so a fork bomb cannot outrun a scan-and-kill loop.
    """
    gid = uid if gid is None else gid
    for _ in range(attempts):
        if not user_processes(uid):
            return []
        child = os.fork()
        if child == 0:                                # pragma: no cover (the child exits at once)
            try:
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(child, 0)
        time.sleep(0.05)
    return user_processes(uid)
