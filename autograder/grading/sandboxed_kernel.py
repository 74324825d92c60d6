"""A Jupyter kernel manager whose kernels start in the sandbox (see sandbox.py).

The kernel talks over ipc sockets in a short private folder bound into the sandbox: filesystem
sockets cross the network namespace, TCP and abstract sockets do not, and AF_UNIX paths must stay
under 108 bytes. Signals do not cross bwrap's --new-session, so interrupts go by message.
"""
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, Instance, Int, Type, Unicode

from autograder.grading import font_cache
from autograder.grading.sandbox import (
    KERNEL_ARGUMENTS,
    NOBODY,
    SandboxLimits,
    compile_package,
    sandbox_launch,
)

SOCKET_FOLDER_PARENT = "/tmp"      # short: the kernel's socket paths are this + ~20 characters
# Files of the kernel's folder left out of its sandbox. When nbgrader grades, the notebook in that folder is
# the one being graded, its test cells already restored from source/ with their hidden tests: a kernel
# that could read it could print them, encoded past the feedback guard. No chapter's code reads a notebook.
NOT_FOR_THE_KERNEL = (".ipynb",)
IOPUB_RETRY_SECONDS = 0.02         # no idle status on IOPub yet: its subscription joined late, ask again
EXIT_POLL_SECONDS = 0.005          # a killed sandbox is gone within milliseconds; jupyter_client polls every 0.1 s


class PromptKernelClient(AsyncKernelClient):
    """jupyter_client's client, ready as soon as the kernel is.

    Its wait_for_ready ends by waiting for 0.2 s of silence on IOPub (a flush), paid by every graded
    submission. Here the kernel is ready when it has answered a kernel_info request on the shell channel
    and the IOPub `idle` status of one of our requests has arrived: that proves IOPub is connected (no
    cell's output can be lost). IOPub's subscription may join after the kernel's first statuses, so
    the request is repeated every IOPUB_RETRY_SECONDS until one arrives.
    """

    async def wait_for_ready(self, timeout=None):
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        asked = {self.kernel_info()}
        while not await self._received(self.shell_channel, asked, "kernel_info_reply", deadline, 1.0):
            await self._still_starting(deadline, timeout)
            asked.add(self.kernel_info())
        while not await self._received(self.iopub_channel, asked, "status", deadline, IOPUB_RETRY_SECONDS):
            await self._still_starting(deadline, timeout)
            asked.add(self.kernel_info())

    async def _received(self, channel, asked, msg_type, deadline, wait):
        """Did a `msg_type` message answering one of `asked` arrive on `channel` within `wait` seconds?
        (A status must say idle.)"""
        until = min(deadline, time.monotonic() + wait)
        while True:
            try:
                msg = await channel.get_msg(timeout=max(0.0, until - time.monotonic()))
            except Empty:
                return False
            if msg["parent_header"].get("msg_id") in asked and msg["msg_type"] == msg_type and (
                    msg_type != "status" or msg["content"].get("execution_state") == "idle"):
                return True

    async def _still_starting(self, deadline, timeout):
        if not await self._async_is_alive():
            raise RuntimeError("Kernel died before replying to kernel_info")
        if time.monotonic() > deadline:
            raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")


class SandboxedKernelManager(AsyncKernelManager):
    """AsyncKernelManager that wraps the kernel's command in bwrap; killing the kernel kills the sandbox."""

    client_factory = Type(PromptKernelClient, klass=AsyncKernelClient)
    limits = Instance(SandboxLimits, args=(), help="What the sandboxed kernel may use.")
    environment = Dict(value_trait=Unicode(), help=(
        "Variables the kernel starts with besides the sandbox's own (sandbox.sandbox_env): the course's "
        "KERNEL_ENVIRONMENT, from SandboxedExecute. Nothing of the grader's environment reaches the kernel."))
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
                                shared=[self._socket_folder], uid=self.sandbox_uid, environment=self.environment,
                                seeds=font_cache.seeds(), omit=NOT_FOR_THE_KERNEL)
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
