"""A Jupyter kernel manager whose kernels start in the sandbox (see sandbox.py).

The kernel talks over ipc sockets in a short private folder bound into the sandbox: filesystem
sockets cross the network namespace, TCP and abstract sockets do not, and AF_UNIX paths must stay
under 108 bytes. Signals do not cross bwrap's --new-session, so interrupts go by message.
"""
import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import Instance, Int, Type

from .sandbox import KERNEL_ARGUMENTS, NOBODY, SandboxLimits, compile_package, sandbox_launch

SOCKET_FOLDER_PARENT = "/tmp"      # short: the kernel's socket paths are this + ~20 characters
IOPUB_JOIN_SECONDS = 0.25          # a kernel_info's idle status missing this long: IOPub joined late, ask again
EXIT_POLL_SECONDS = 0.005          # a killed sandbox is gone within milliseconds; jupyter_client polls every 0.1 s


class PromptKernelClient(AsyncKernelClient):
    """jupyter_client's client, ready as soon as the kernel is.

    Its wait_for_ready ends by waiting for 0.2 s of silence on IOPub (a flush), paid by every graded
    submission. Here the kernel is ready when the IOPub `idle` status of our own kernel_info request
    arrives: that proves IOPub is connected (no cell's output can be lost) and leaves nothing to flush.
    """

    async def wait_for_ready(self, timeout=None):
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            if await self._answered(self.kernel_info(), deadline):
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    async def _answered(self, msg_id, deadline):
        """Did the kernel reply to `msg_id` and report idle for it on IOPub (before the deadline)?"""
        while True:
            try:
                reply = await self.shell_channel.get_msg(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
            except Empty:
                return False
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        joined = min(deadline, time.monotonic() + IOPUB_JOIN_SECONDS)
        while True:
            try:
                status = await self.iopub_channel.get_msg(timeout=max(0.0, joined - time.monotonic()))
            except Empty:
                return False
            if (status["parent_header"].get("msg_id") == msg_id and status["msg_type"] == "status"
                    and status["content"].get("execution_state") == "idle"):
                return True


class SandboxedKernelManager(AsyncKernelManager):
    """AsyncKernelManager that wraps the kernel's command in bwrap; killing the kernel kills the sandbox."""

    client_factory = Type(PromptKernelClient, klass=AsyncKernelClient)
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
        compile_package()
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

    async def _async_wait(self, pollinterval=0.1):
        await super()._async_wait(pollinterval=EXIT_POLL_SECONDS)

    async def _async_cleanup_resources(self, restart=False):
        await super()._async_cleanup_resources(restart=restart)
        if not restart and self._socket_folder:
            shutil.rmtree(self._socket_folder, ignore_errors=True)
            self._socket_folder = None

    cleanup_resources = _async_cleanup_resources
