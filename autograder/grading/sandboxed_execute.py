"""nbgrader's Execute, with every kernel in the sandbox, output capped in bytes as it arrives (whatever
the channel: output_budget.py), and a dead kernel repaired rather than scored 0
(course_config.configure_nbgrader puts it in the autograde pipeline in place of Execute).

A cell that kills the kernel (os._exit, a segfault, the CPU limit) gets a `KernelDied` error; a fresh
kernel then re-runs the notebook from the top without it, so the student keeps the points of the
cells that do not depend on it. The instructor finds each death in nbgrader's log and in
resources["babygrad"]["kernel_deaths"].

A notebook has a time budget as well as each cell (`notebook_timeout`): cells, the judge's probes and the
re-runs after deaths together. Without it, a notebook of many cells each just under the cell timeout holds
up every student graded after it by hours. The cells it leaves unreached score 0 and say why.
"""
import asyncio
import math
import time
from dataclasses import dataclass
from queue import Empty

from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
import nbformat
from nbformat import NotebookNode
from nbformat.v4 import output_from_msg
from traitlets import Bool, Instance, Integer, default

from autograder import cell_marks
from autograder.grading import sandbox
from autograder.grading.judge.probes import ProbeStopped, progress_mark
from autograder.grading.output_budget import OutputBudget, bound_notebook, output_bytes
from autograder.grading.preprocessors import EnvironmentExecute
from autograder.grading.sandboxed_kernel import SandboxedKernelManager

OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")
PROBE_OUTPUT_BYTES = 64_000_000  # data a probe's reply may hold (probes.MAX_REPLY_CHARS is half): a flood is dropped
DEFAULT_PROBE_SECONDS = 120     # a probe's time when Execute.timeout is None
ALIVE_POLL_SECONDS = 1          # a probe waiting on a quiet kernel checks this often that it is still alive
STOP_SECONDS = 5                # after a timeout's interrupt, the kernel must answer again within this, or it is killed
                                # (an interrupted cell stops within milliseconds; a kill costs only a re-run)


class SandboxUnavailable(RuntimeError):
    """Grading refused: student code would run unsandboxed, and nobody said --unsafe."""


@dataclass(frozen=True)
class KernelDeath:
    """A cell during which the kernel died, for the instructor's review."""

    index: int          # position in the notebook
    cell: str           # its nbgrader grade_id, or "cell <index>"
    cause: str          # how the kernel ended, e.g. "SIGSEGV: a segmentation fault"


def cell_label(cell, index):
    return cell_marks.grade_id(cell) or f"cell {index}"


class SandboxedExecute(EnvironmentExecute):
    """Execute, sandboxed (see the module's docstring); its kernels' environment is the sandbox's own
    and `kernel_environment`, nothing of the grader's."""

    unsafe = Bool(False, help="Run student code without a sandbox when bwrap is unusable "
                              "(python -m autograder grade --unsafe). Never on submissions you do not trust."
                  ).tag(config=True)
    limits = Instance(sandbox.SandboxLimits, args=(), help="Limits of the sandbox and the output.").tag(config=True)
    flood_chars = Integer(20_000_000, help=(
        "Output a cell may send beyond what is kept (bytes; characters printed, for a judge's probe) before it is "
        "interrupted (a thousand times what a cell keeps): an endless print loop stops within a second instead of "
        "at the cell timeout.")
    ).tag(config=True)
    max_kernel_deaths = Integer(3, help="Kernel deaths repaired per notebook; after that, the cells not "
                                        "run score 0.").tag(config=True)
    notebook_timeout = Integer(None, allow_none=True, help=(
        "Seconds one notebook's grading may take in all: its cells, the judge's probes and the re-runs after "
        "kernel deaths (course_config.NOTEBOOK_TIMEOUT_SECONDS). A cell runs for at most what is left; the cells "
        "not reached score 0 and say why. None: no limit.")).tag(config=True)

    @default("shutdown_kernel")
    def _kill_at_the_end(self):
        # The sandbox ends every process of the kernel with it: a graceful shutdown would only wait,
        # and run the student's atexit hooks.
        return "immediate"

    def __init__(self, *args, **kwargs):
        # nbgrader's Execute.__init__ sets kernel_manager_class itself, so configuration cannot.
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    # -- the judge's hooks ------------------------------------------------------------------------

    def after_graded_cell(self, cell, index):
        """Called after each executed graded cell, with the kernel alive: a judge overrides this."""

    def after_graded_run(self):
        """Called once the graded cells run one after another are done (before the next code cell that
        is not graded runs, and after the last cell), with the kernel alive: a judge may override this
        to check such a run of cells together."""

    async def async_run_probe(self, probe) -> list:
        """Run a judge's `probe` (judge.probes.Probe) in the live kernel and return its outputs
        (NotebookNodes), adding no cell to the notebook and no entry to the kernel's history: how a judge
        asks the student's kernel for data. Its setup runs as code, its call as a user expression (an error
        there is returned as an error output, as the code's own would be).

        The student's code runs inside, so a probe is bounded like a cell: what it prints is dropped
        (the judge reads data, never text), the data it displays is kept up to PROBE_OUTPUT_BYTES, and
        after the cell timeout, or `flood_chars` printed, it is interrupted (the kernel killed if it ignores
        that) and ProbeStopped raised.
        A probe of several grade cells' checks (`probe.marks`) gives each cell the whole timeout, as a probe of
        that cell alone would have: the worker marks where each cell's requests start, and the clock starts
        again there (each mark once, in order, so a forged mark cannot stretch it), and a stopped probe names
        the last mark it saw.
        A kernel that dies meanwhile raises DeadKernelError within ALIVE_POLL_SECONDS, its exit the death's cause.
        """
        msg_id = await ensure_async(self.kc.execute(probe.setup, store_history=False, allow_stdin=False,
                                                    stop_on_error=False, user_expressions={"probe": probe.call}))
        loop = asyncio.get_running_loop()
        seconds = self._get_timeout(None) or DEFAULT_PROBE_SECONDS
        deadline = loop.time() + seconds
        outputs, kept, printed = [], 0, 0
        marks, started = sorted(probe.marks), None
        while True:
            left = deadline - loop.time()
            if left <= 0:
                out_of_time = self.out_of_time()
                raise ProbeStopped(self._out_of_time_message() if out_of_time else
                                   f"on the judge's inputs your code ran past the cell time limit ({seconds} s) "
                                   "and was stopped", started, await self._stop_probe(msg_id), out_of_time)
            if printed > self.flood_chars:
                raise ProbeStopped(f"on the judge's inputs your code printed more than {self.flood_chars:,} "
                                   "characters and was stopped", started, await self._stop_probe(msg_id))
            try:
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=min(left, ALIVE_POLL_SECONDS)))
            except Empty:
                if not await ensure_async(self.km.is_alive()):
                    # The student's code exited the kernel while answering: say how, at once, rather than
                    # wait out the timeout and blame an interrupt the dead kernel could not answer.
                    self._death_cause = self._exit_description()
                    raise DeadKernelError(f"the kernel died during a probe ({self._death_cause})") from None
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
            if msg["msg_type"] == "stream":
                printed += len(msg["content"].get("text", ""))
            elif (mark := progress_mark(msg)) is not None:
                if mark in marks:                   # a grade cell's checks begin: its own whole timeout
                    marks = [m for m in marks if m > mark]
                    started, seconds = mark, self._get_timeout(None) or DEFAULT_PROBE_SECONDS
                    deadline = loop.time() + seconds
            elif msg["msg_type"] in OUTPUT_TYPES:
                output = output_from_msg(msg)
                kept += output_bytes(output)
                if kept <= PROBE_OUTPUT_BYTES:
                    outputs.append(output)
        reply = await self.async_wait_for_reply(msg_id)
        result = ((reply or {}).get("content", {}).get("user_expressions") or {}).get("probe", {})
        if isinstance(result, dict) and result.get("status") == "error":
            outputs.append(self._error(str(result.get("ename", "Error")), str(result.get("evalue", ""))[:2000]))
        return outputs

    async def _stop_probe(self, msg_id) -> bool:
        """Interrupt a probe that outran its time or flooded; kill the kernel if it does not stop (a death,
        repaired). True when it was killed."""
        await ensure_async(self.km.interrupt_kernel())
        if await self._replied_within_stop_seconds(msg_id):
            return False
        self._death_cause = "a judge's probe of this cell ran past the timeout and ignored the interrupt"
        await ensure_async(self.km.shutdown_kernel(now=True))
        return True

    run_probe = run_sync(async_run_probe)

    async def _async_handle_timeout(self, timeout, cell=None):
        """nbclient's: interrupt the cell and answer for it with `error_on_timeout`. Then the cell has
        STOP_SECONDS to stop; one that ignores the interrupt (it catches KeyboardInterrupt) has its kernel
        killed at once, a death repaired by a re-run, instead of after nbclient's wait for the rest of its
        output (`iopub_timeout`) and a second wait for an empty cell."""
        reply = await super()._async_handle_timeout(timeout, cell)
        if reply is not None and not await self._replied_within_stop_seconds(None):
            self._death_cause = ("it ran past the notebook's time budget and did not stop when interrupted"
                                 if self.out_of_time() else
                                 f"it ran longer than {timeout} s and did not stop when interrupted")
            await ensure_async(self.km.shutdown_kernel(now=True))
            raise DeadKernelError(self._death_cause)
        return reply

    async def _async_answers(self) -> bool:
        """Does the kernel finish an empty cell within STOP_SECONDS? Not if it ignores interrupts."""
        msg_id = await ensure_async(self.kc.execute("", store_history=False, silent=True))
        return await self._replied_within_stop_seconds(msg_id)

    async def _replied_within_stop_seconds(self, msg_id) -> bool:
        """Does the reply to `msg_id` (None: the cell running, the only request then) reach the shell
        channel within STOP_SECONDS?"""
        deadline = asyncio.get_running_loop().time() + STOP_SECONDS
        while (left := deadline - asyncio.get_running_loop().time()) > 0:
            try:
                reply = await ensure_async(self.kc.shell_channel.get_msg(timeout=left))
            except Empty:
                return False
            if msg_id is None and reply.get("msg_type") == "execute_reply" or \
                    reply["parent_header"].get("msg_id") == msg_id:
                return True
        return False

    # -- the sandbox -----------------------------------------------------------------------------

    def _choose_kernel_manager(self):
        if not issubclass(self.kernel_manager_class, SandboxedKernelManager):
            return
        reason = sandbox.unavailable_reason()
        if reason is None:
            return
        if not self.unsafe:
            raise SandboxUnavailable(
                f"refusing to run student code without a sandbox: {reason}. Install bubblewrap, or, only "
                f"for submissions you trust, pass --unsafe (python -m autograder grade --unsafe, or "
                f"nbgrader autograde --SandboxedExecute.unsafe=True).")
        self.log.warning("UNSAFE: student code runs without a sandbox (%s), as --unsafe asked", reason)
        self.kernel_manager_class = AsyncKernelManager

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        if isinstance(km, SandboxedKernelManager):
            km.limits = self.limits
            km.environment = self.kernel_variables()
        return km

    # -- running the notebook, repairing deaths --------------------------------------------------

    def preprocess(self, nb, resources=None, km=None):
        self._choose_kernel_manager()
        NotebookClient.__init__(self, nb, km)      # as nbconvert's ExecutePreprocessor.preprocess does
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self._deadline = None if self.notebook_timeout is None else time.monotonic() + self.notebook_timeout
        deaths = []
        while True:                 # each attempt runs the whole notebook in a fresh kernel
            self._start_attempt()
            try:
                self._run_cells(resources, skip={d.index for d in deaths})
                break
            except DeadKernelError:
                if self._running is None:
                    raise                       # the kernel did not start: nothing to repair
                index = self._running
                death = KernelDeath(index, cell_label(self.nb.cells[index], index),
                                    self._death_cause or "exit status unknown")
                deaths.append(death)
                self.log.warning("The kernel died in %s (%s); re-running %s in a fresh kernel without that cell.",
                                 death.cell, death.cause, self.submission_name())
                self.nb.cells[index].outputs = [self._error("KernelDied", (
                    f"the kernel died while running this cell ({death.cause}); the other cells were "
                    f"re-run in a fresh kernel without it"))]
                if len(deaths) > self.max_kernel_deaths:
                    self._give_up(deaths)
                    break
                if self.out_of_time():        # no time left to re-run: the cells before the death stand
                    self._stop_for_time(index + 1)
                    break
        self._bound_outputs()
        self._results_shown_not_scored()
        self.resources.setdefault("babygrad", {})["kernel_deaths"] = deaths
        return self.nb, self.resources

    def _results_shown_not_scored(self):
        """Every test cell's `execute_result` becomes a plain display. nbgrader scores a test cell by its first
        error or execute_result, and reads a result that is not a number as full credit, so a student's
        code could print one ahead of the check's (or the judge's) error: `get_ipython().displayhook("x")`
        in a capstone's build function earned its 7 points. The course's test cells end in an assert, so
        an error alone decides their score."""
        for cell in self.nb.cells:
            if cell_marks.is_test_cell(cell):
                cell.outputs = [nbformat.from_dict({"output_type": "display_data", "data": output.get("data", {}),
                                                    "metadata": output.get("metadata", {})})
                                if output.output_type == "execute_result" else output for output in cell.outputs]

    def submission_name(self):
        """Whose notebook this is, for the log: nbgrader's unique_key names only the notebook, and one
        autograde run logs the whole class."""
        info = self.resources.get("nbgrader", {})
        if "student" in info:
            return f"{info['student']}'s {info.get('notebook', 'notebook')}"
        return self.resources.get("unique_key", "the notebook")

    def _start_attempt(self):
        self._running, self._death_cause = None, None
        self._budget = OutputBudget(self.limits.output_bytes_per_cell, self.limits.output_bytes_per_notebook)
        self._interrupted = set()

    def _run_cells(self, resources, skip):
        with self.setup_kernel():
            info = self.wait_for_reply(self.kc.kernel_info())
            self.nb.metadata["language_info"] = info["content"]["language_info"]
            for index, cell in enumerate(self.nb.cells):
                if index in skip:
                    continue
                if cell.cell_type == "code" and self.out_of_time():
                    self._stop_for_time(index)
                    break
                if cell.cell_type == "code" and not cell_marks.is_test_cell(cell):
                    self.after_graded_run()     # still attributed to the last cell run, a graded one
                self._running = index
                self.preprocess_cell(cell, resources, index)
                if cell_marks.is_test_cell(cell):
                    self.after_graded_cell(cell, index)
            self.after_graded_run()
            self._running = None

    def _give_up(self, deaths):
        """Too many deaths: every code cell not run says so, and scores 0 (no output would read as passed)."""
        done = {d.index for d in deaths}
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type == "code" and index not in done and index >= deaths[-1].index:
                cell.outputs = [self._error("KernelDied", f"not run: the kernel died {len(deaths)} times "
                                                          f"(last in {deaths[-1].cell})")]
        self.log.warning("Gave up after %d kernel deaths; the cells after %s score 0.", len(deaths), deaths[-1].cell)

    def preprocess_cell(self, cell, resources, index):
        self._budget.cleared(index)             # a cell run again (after a death) starts empty
        try:
            self._execute(cell, resources, index)
        except DeadKernelError:
            self._death_cause = self._death_cause or self._exit_description()
            raise
        return cell, self.resources

    def _execute(self, cell, resources, index):
        """Execute's cell, with its two ways of going wrong that a kernel can survive handled."""
        try:
            super().preprocess_cell(cell, resources, index)
            stuck = self._timed_out(cell)
        except CellTimeoutError:
            # The reply came, the cell's output did not finish arriving (a flood still queued, or dropped
            # by the sockets' queue limit). What is missing might be a test's error: the cell fails.
            self.log.warning("The output of %s did not all arrive; the cell is marked failed.", cell_label(cell, index))
            cell.outputs.append(self._error("OutputLost", (
                "this cell's output did not all arrive: it printed more than grading keeps, too fast")))
            stuck = True
        except ValueError as error:
            if "Signature" not in str(error):
                raise
            # A kernel that ran out of memory while flooding its output can send a message cut short,
            # whose signature no longer matches: it is repaired as a death, never dropping the notebook.
            self._kill_as_death("it sent a damaged message (out of memory while printing?)")
        if stuck and self.out_of_time():
            cell.outputs = [self._error("NotebookTimeout", self._out_of_time_message())
                            if o.output_type == "error" and o.ename == "CellTimeoutError" else o for o in cell.outputs]
        if stuck and not run_sync(self._async_answers)():
            # The cell ignores interrupts (it catches KeyboardInterrupt): every later cell would wait the
            # whole timeout behind it. Kill the kernel; it is repaired as a death.
            self._kill_as_death(f"it ran longer than {self.timeout} s and did not stop when interrupted")

    # -- the notebook's time budget -----------------------------------------------------------------

    def seconds_left(self):
        """What is left of the notebook's time budget; None without one."""
        deadline = getattr(self, "_deadline", None)
        return None if deadline is None else deadline - time.monotonic()

    def out_of_time(self):
        left = self.seconds_left()
        return left is not None and left <= 0

    def _get_timeout(self, cell):
        """nbclient's timeout for a cell (or, with None, a probe), cut to what is left of the notebook's."""
        timeout = super()._get_timeout(cell)
        left = self.seconds_left()
        if left is None:
            return timeout
        left = max(1, math.ceil(left))
        return left if timeout is None else min(timeout, left)

    def _out_of_time_message(self):
        return (f"not graded: grading this notebook took longer than {self.notebook_timeout} s in all (the course's "
                "NOTEBOOK_TIMEOUT_SECONDS, for its cells, the grader's checks and any re-runs together); the "
                "cells above this one were graded")

    def _stop_for_time(self, first):
        """Out of time: every code cell from `first` on scores 0 and says why (a kernel death's keeps its own)."""
        where = (f"the cells from {cell_label(self.nb.cells[first], first)} on" if first < len(self.nb.cells)
                 else "the cells the judge had yet to check")
        self.log.warning("%s ran out of its %s s; %s score 0.", self.submission_name(), self.notebook_timeout, where)
        for cell in self.nb.cells[first:]:
            if cell.cell_type == "code" and not any(o.get("ename") == "KernelDied" for o in cell.get("outputs", [])):
                cell.outputs = [self._error("NotebookTimeout", self._out_of_time_message())]

    def _kill_as_death(self, cause):
        """Kill a kernel that cannot be trusted to go on, so that preprocess repairs it as a death of this cell."""
        self._death_cause = cause
        run_sync(self.km.shutdown_kernel)(now=True)
        raise DeadKernelError(cause) from None

    def _timed_out(self, cell):
        name = (self.error_on_timeout or {}).get("ename", "CellTimeoutError")
        return any(o.get("ename") == name for o in cell.get("outputs", []))

    def _exit_description(self):
        try:
            return sandbox.describe_exit(self.km.provisioner.process.wait(timeout=5))
        except Exception:  # noqa: BLE001 (the manager may be half torn down: the cause is then unknown)
            return "exit status unknown"

    @staticmethod
    def _error(name, message):
        return NotebookNode(output_type="error", ename=name, evalue=message, traceback=[f"{name}: {message}"])

    # -- output, capped while it arrives ---------------------------------------------------------

    def _bound_outputs(self):
        """Every cell's outputs, the kernel's and the grader's own (the judge's verdicts, deaths, timeouts), put
        through the caps once more, and a note in each cell that lost some: what the notebook holds is bounded
        whichever way its outputs came."""
        budget = getattr(self, "_budget", None)
        bound_notebook(self.nb.cells, self.limits, budget.cut if budget else {}, cell_marks.is_test_cell)

    def process_message(self, msg, cell, cell_index):
        """nbclient's, with what a kernel sends that is not an output kept within bounds: an execution count
        that is not a number is ignored (it would make the notebook invalid)."""
        count = msg.get("content", {}).get("execution_count")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
            msg = {**msg, "content": {k: v for k, v in msg["content"].items() if k != "execution_count"}}
        self._sending_cell = cell_index
        return super().process_message(msg, cell, cell_index)

    def handle_comm_msg(self, outs, msg, cell_index):
        """Comm messages (Jupyter widgets) are ignored: grading has no front end to show a widget, and nbclient
        would keep their state in the notebook's metadata, and an Output widget's outputs, past every cap."""

    def clear_output(self, outs, msg, cell_index):
        super().clear_output(outs, msg, cell_index)
        if not outs:
            self._budget.cleared(cell_index)

    def _update_display_id(self, display_id, msg):
        """nbclient's update of every output shown under `display_id` (display_handle.update), each within the
        caps: an update that does not fit empties that display, and the cell that sent it says so."""
        if display_id not in self._display_id_map:
            return
        try:
            new = output_from_msg({**msg, "header": {**msg["header"], "msg_type": "display_data"},
                                   "msg_type": "display_data"})
        except ValueError:
            return
        sender = getattr(self, "_sending_cell", None)
        for cell_index, output_indices in self._display_id_map[display_id].items():
            outputs = self.nb.cells[cell_index].outputs
            for output_index in output_indices:
                if output_index < len(self._budget.sizes.get(cell_index, [])) and output_index < len(outputs):
                    self._budget.update(cell_index, output_index, outputs[output_index], new.get("data", {}),
                                        new.get("metadata", {}), sender if sender is not None else cell_index)
        self._interrupt_a_flood(sender)

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's, each output admitted by the budget: cut, dropped or (a test cell's error) shortened."""
        had = len(outs)
        out = super().output(outs, msg, display_id, cell_index)
        if out is None:
            return out
        if len(outs) != had + 1:
            self._budget.cleared(cell_index)    # a clear_output(wait=True) emptied the cell before this output
        outs.pop()
        kept = self._budget.admit(cell_index, out, cell_marks.is_test_cell(self.nb.cells[cell_index]))
        if kept is not None:
            outs.append(kept)
        elif display_id:        # nbclient filed this output's place under its display id: it has none now
            self._display_id_map[display_id][cell_index].pop()
        self._interrupt_a_flood(cell_index)
        return kept

    def _interrupt_a_flood(self, cell_index):
        if cell_index is None or self._budget.cut_bytes(cell_index) <= self.flood_chars:
            return
        if cell_index not in self._interrupted:
            self._interrupted.add(cell_index)
            self.log.warning("%s floods its output; interrupting it.", cell_label(self.nb.cells[cell_index], cell_index))
            asyncio.ensure_future(ensure_async(self.km.interrupt_kernel()))
