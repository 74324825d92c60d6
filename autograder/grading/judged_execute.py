"""The autograde step of the course: the sandboxed Execute, with the judge deciding each grade cell.

After a grade cell runs in the sandboxed kernel, the judge re-checks it from the trusted source
notebook with probes into the live kernel (`SandboxedExecute.after_graded_cell` and `run_probe`);
grade cells that run one after another are checked together once the last has run (`after_graded_run`),
sharing each probe's round trip. A cell the judge fails gets an error output (`JudgeVerdict`), so
nbgrader's SaveAutoGrades scores it 0 and the feedback says why.
"""
import re
from pathlib import Path

import nbformat
from nbclient.exceptions import DeadKernelError
from nbclient.util import run_sync
from nbgrader.coursedir import CourseDirectory
from traitlets import Bool, List, Unicode

from autograder import cell_marks
from autograder.grading.judge import Judge
from autograder.grading.sandboxed_execute import SandboxedExecute
from autograder.student.verdict import JUDGED_OUTSIDE_ENV, RUN_FOR_JUDGE_ENV

JUDGE_ERROR_NAME = "JudgeVerdict"


class _BatchFailed(Exception):
    """A probe failed as a whole, or the kernel died, while the judge checked several grade cells together."""

    def __init__(self, queued):
        super().__init__(", ".join(grade_id(cell) for cell, _ in queued))
        self.first = min(index for _, index in queued)


def grade_id(cell):
    return cell.metadata["nbgrader"].get("grade_id", "")


def judge_error(message, line=0):
    """The error output that makes nbgrader score a cell 0, carrying the judge's teaching message, and the
    line of the test cell whose check failed (Gradescope's runner keeps a hidden check's failure hidden)."""
    where = f" (the check on line {line} of this cell)" if line else ""
    return nbformat.from_dict({"output_type": "error", "ename": JUDGE_ERROR_NAME, "evalue": message,
                               "traceback": [f"\x1b[0;31m{JUDGE_ERROR_NAME}\x1b[0m{where}: {message}"]})


def judge_pass(message):
    """The output under a cell the judge passed: what it found. Built as a plain node, as judge_error is:
    nbformat's new_output validates each output against the schema (half a millisecond, for ~50 cells a
    notebook), and these two are the course's own, valid by construction (tests/pipeline/test_judge.py)."""
    return nbformat.from_dict({"output_type": "stream", "name": "stdout",
                               "text": f"✔ the grader: {message}, on inputs of its own\n"})


def judge_error_line(output):
    """The test cell's line that a JudgeVerdict error names, or None."""
    match = re.search(r"the check on line (\d+) of this cell", "\n".join(output.get("traceback", [])))
    return int(match.group(1)) if match else None


def source_notebook(config, resources):
    """The trusted source notebook of the submission being graded: source/<assignment>/<notebook>.ipynb."""
    info = resources["nbgrader"]
    coursedir = CourseDirectory(config=config)
    folder = coursedir.format_path(coursedir.source_directory, ".", info["assignment"])
    return Path(folder) / f"{info['notebook']}.ipynb"


class JudgedExecute(SandboxedExecute):
    judged_assignments = List(
        Unicode(), default_value=[], help="Assignments whose grade cells the judge decides; in the others "
                                          "the kernel's own checks decide (sandboxed all the same).").tag(config=True)
    require_source = Bool(
        True, help="Refuse to grade when the source notebook the judge reads its checks from is missing, "
                   "rather than let the kernel's own (forgeable) checks decide.").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        path = source_notebook(self.config, resources)
        if resources["nbgrader"]["assignment"] not in self.judged_assignments:
            self.judge = None
        elif path.exists():
            self.judge = Judge.from_source(path)
        elif self.require_source:
            raise FileNotFoundError(f"the judge reads each grade cell's checks from {path}, which is missing; "
                                    "set JudgedExecute.require_source=False to grade by the kernel's checks alone")
        else:
            self.judge = None
        self.judgements = []
        self._batching = self.batch_cells
        nb, resources = super().preprocess(nb, resources, km)
        self._log_summary(resources)
        return nb, resources

    def kernel_variables(self):
        """KERNEL_ENVIRONMENT, the checks the kernel may skip because the judge decides them here, and those
        it runs only for what they leave the judge."""
        variables = super().kernel_variables()
        if getattr(self, "judge", None) is not None:
            variables[JUDGED_OUTSIDE_ENV] = ",".join(sorted(self.judge.kernel_may_skip))
            variables[RUN_FOR_JUDGE_ENV] = ",".join(sorted(self.judge.kernel_runs_for_judge))
        return variables

    batch_cells = Bool(True, help=(
        "Judge grade cells that run one after another together, one probe per round for all of them (chapter 3: "
        "22 probes instead of 47). Each cell's checks get the whole probe timeout; a probe stopped in one cell's "
        "checks (past the time limit, or a flood) fails that cell as it would alone. A probe of several cells that "
        "fails as a whole, or a kernel that dies in one, makes the notebook run again in a fresh kernel, judged "
        "cell by cell.")).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        """A test cell the judge decides alone is not sent to the kernel: there it would only print that the
        grader checks it (a round trip of a few ms for each of chapter 3's 55 test cells). Its outputs are
        the judge's verdict, written once its run of graded cells is judged."""
        if self.judge is not None and cell_marks.is_test_cell(cell) and self.judge.decides_alone(grade_id(cell)):
            cell.outputs, cell.execution_count = [], None
            self._unheard.add(index)
            return cell, self.resources
        return super().preprocess_cell(cell, resources, index)

    def after_graded_cell(self, cell, index):
        """Queue a grade cell the kernel ran without error for the judge (judged now, unless batching)."""
        if any(output.output_type == "error" for output in cell.outputs):
            return                              # the kernel already failed it: no probe can raise the score
        if self.judge is None or cell.cell_type != "code":
            return
        self._queued.append((cell, index))
        if not self._batching:
            self.after_graded_run()

    def after_graded_run(self):
        """Let the judge decide the queued grade cells; record what it said."""
        if self._queued and self.out_of_time():
            self._stop_for_time(len(self.nb.cells))
            return
        queued, self._queued = self._queued, []
        if len(queued) > 1:
            judgements = self.judge.judge_cells([grade_id(cell) for cell, _ in queued], self.run_probe)
            alive = run_sync(self.km.is_alive)()
            if judgements is None and self.judge.stopped_in is not None and not alive:
                # One cell's checks outran the time limit and ignored the interrupt: that cell's death, repaired
                # as it would be alone, without judging it a second time for another timeout.
                self._running = next(index for cell, index in queued if grade_id(cell) == self.judge.stopped_in)
                self._death_cause = self._death_cause or "the kernel was killed while the judge checked this cell"
                raise DeadKernelError(self._death_cause)
            if judgements is None or not alive:
                raise _BatchFailed(queued)
            for (cell, index), judgement in zip(queued, judgements):
                self._record(cell, index, judgement)
            return
        for cell, index in queued:              # alone: a death is this cell's
            self._running = index
            judgement = self.judge.judge_cell(grade_id(cell), self.run_probe)
            if judgement is not None and judgement.probes and not run_sync(self.km.is_alive)():
                # A probe killed the kernel (or the student's code did, answering it): a death of this cell,
                # repaired like any other, rather than of the next cell to run.
                self._death_cause = self._death_cause or "the kernel died while the judge checked this cell"
                raise DeadKernelError(self._death_cause)
            self._record(cell, index, judgement)

    def _record(self, cell, index, judgement):
        if judgement is None:
            return
        self._unheard.discard(index)
        self.judgements.append(judgement)
        if judgement.judged and not judgement.passed:
            cell.outputs.append(judge_error(judgement.message, judgement.line))
        elif judgement.judged:          # the kernel's checks said they were the grader's: say what it found
            cell.outputs.append(judge_pass(judgement.message))

    def _run_cells(self, resources, skip):
        self._queued, self._unheard = [], set()
        try:
            super()._run_cells(resources, skip)
        except _BatchFailed as failed:
            if self.out_of_time():          # no time to judge them one by one: they score 0 and say why
                self._stop_for_time(failed.first)
                return
            # Which cell's checks failed the probe or killed the kernel is unknown, and a kernel that ran
            # past a probe's timeout may still be busy: run the notebook again in a fresh kernel, judging each
            # cell alone, so that each cell is judged, and a death repaired, exactly as without batching.
            self.log.warning("A probe failed or the kernel died while the judge checked %s together; running %s "
                             "again, judging each cell alone.", failed, self.submission_name())
            self._batching = False
            self._start_attempt()
            self._queued, self._unheard = [], set()
            super()._run_cells(resources, skip)
        for index in sorted(self._unheard):     # never expected: a cell left out of the kernel is the judge's to grade
            self.nb.cells[index].outputs = [judge_error("the grader did not reach a verdict on this cell; tell your instructor")]

    def _stop_for_time(self, first):
        """Out of time: as SandboxedExecute's, and the grade cells still waiting for the judge score 0 too."""
        for index in {index for _, index in self._queued} | self._unheard:
            self.nb.cells[index].outputs = [self._error("NotebookTimeout", self._out_of_time_message())]
        self._queued, self._unheard = [], set()
        super()._stop_for_time(first)

    def _log_summary(self, resources):
        info = resources.get("nbgrader", {})
        who = f"{info.get('student', '?')}/{info.get('assignment', '?')}/{info.get('notebook', '?')}"
        if self.judge is None:
            self.log.info("judge: %s: not judged (not in JudgedExecute.judged_assignments): the kernel's "
                          "checks decide", who)
            return
        failed = [j.grade_id for j in self.judgements if j.judged and not j.passed]
        unjudged = sorted({j.grade_id for j in self.judgements if not j.judged})
        probes = sum(j.probes for j in self.judgements)
        self.log.info("judge: %s: %d cells judged with %d probes, failed %s; unjudged (kernel decides): %s",
                      who, sum(j.judged for j in self.judgements), probes, failed or "none", unjudged or "none")
