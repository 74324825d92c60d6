"""A Jupyter kernel manager whose kernels start in the sandbox (see sandbox.py).

The kernel talks over ipc sockets in a short private folder bound into the sandbox: filesystem
sockets cross the network namespace, TCP and abstract sockets do not, and AF_UNIX paths must stay
under 108 bytes. Signals do not cross bwrap's --new-session, so interrupts go by message.
"""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Instance, Int

from .sandbox import KERNEL_ARGUMENTS, NOBODY, SandboxLimits, sandbox_launch

SOCKET_FOLDER_PARENT = "/tmp"      # short: the kernel's socket paths are this + ~20 characters


class SandboxedKernelManager(AsyncKernelManager):
    """AsyncKernelManager that wraps the kernel's command in bwrap; killing the kernel kills the sandbox."""

    limits = Instance(SandboxLimits, args=(), help="What the sandboxed kernel may use.")
    sandbox_uid = Int(NOBODY, help="uid and gid of the kernel when the grader runs as root.").tag(config=True)

    _socket_folder = None

    @property
    def kernel_spec(self):
        spec = super().kernel_spec
        if spec is not None:
            spec.interrupt_mode = "message"     # SIGINT cannot reach a kernel in its own session
        return spec

    async def _async_pre_start_kernel(self, **kw):
        if self._socket_folder is None:
            self._socket_folder = tempfile.mkdtemp(prefix="bg-", dir=SOCKET_FOLDER_PARENT)
            self.transport = "ipc"
            self.ip = f"{self._socket_folder}/k"
            self.connection_file = f"{self._socket_folder}/kernel.json"
        return await super()._async_pre_start_kernel(**kw)

    async def _async_launch_kernel(self, kernel_cmd, **kw):
        launch = sandbox_launch(kernel_cmd + KERNEL_ARGUMENTS, Path(kw.get("cwd") or os.getcwd()), self.limits,
                                shared=[self._socket_folder], uid=self.sandbox_uid)
        for skipped in launch.skipped:
            self.log.warning("sandbox: not copied into the kernel's folder: %s", skipped)
        if os.geteuid() == 0:       # the kernel runs as sandbox_uid: it creates the sockets, reads the file
            os.chown(self._socket_folder, self.sandbox_uid, self.sandbox_uid)
            os.chown(self.connection_file, self.sandbox_uid, self.sandbox_uid)
        # The kernel's own stdout only says how to connect to it; its stderr (crash reports) is kept.
        kw.setdefault("stdout", subprocess.DEVNULL)
        try:
            await super()._async_launch_kernel(launch.argv, **dict(kw, pass_fds=tuple(launch.fds)))
        finally:
            launch.close()

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart=restart)
        if not restart and self._socket_folder:
            shutil.rmtree(self._socket_folder, ignore_errors=True)
            self._socket_folder = None

    cleanup_resources = _async_cleanup_resources
