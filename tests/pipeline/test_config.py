"""Plain `nbgrader` in the course root uses course_config.py, and refuses to run without it."""
import os
import shutil
import subprocess
import sys

from helpers.course_paths import ROOT
from traitlets.config.loader import PyFileConfigLoader


def configuration(folder=ROOT):
    """The traitlets configuration plain `nbgrader` would load in `folder` (the course root by default)."""
    return PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()


def test_nbgrader_fails_loudly_without_course_config(tmp_path):
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    done = subprocess.run([sys.executable, "-m", "nbgrader", "db", "assignment", "list"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0
    assert "course_config.py" in done.stdout + done.stderr and "missing" in done.stdout + done.stderr


def test_nbgrader_config_hands_nbgrader_the_course_settings(repo_course):
    code = ("from traitlets.config import Config\nimport runpy\n"
            "c = Config()\nns = runpy.run_path('nbgrader_config.py', init_globals={'get_config': lambda: c})\n"
            "print(c.Execute.timeout, c.CourseDirectory.solution_directory, c.Execute.kernel_name, "
            "c.OverwriteCells.add_missing_cells)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    cfg = repo_course.config
    assert done.stdout.split() == [str(cfg.CELL_TIMEOUT_SECONDS), cfg.SOLUTIONS_DIR, cfg.KERNEL_NAME,
                                   str(cfg.ADD_MISSING_CELLS)], done.stderr


def test_loading_the_configuration_leaves_the_process_environment_alone(repo_course, monkeypatch):
    """The kernels' variables (KERNEL_ENVIRONMENT) go into the configuration, for the Execute steps to hand
    to each kernel; the process that loads it (nbgrader, a grading worker, the build) keeps its environment."""
    wanted = repo_course.config.KERNEL_ENVIRONMENT
    for name in wanted:
        monkeypatch.delenv(name, raising=False)
    before = dict(os.environ)
    config = configuration()
    assert dict(os.environ) == before
    assert config.EnvironmentExecute.kernel_environment == wanted


def test_each_integrity_benchmark_configuration_runs_a_notebook_once(tmp_path):
    """benchmarks/integrity_overhead.py compares three autograde configurations. Each must execute the
    notebook exactly once, with the step it is named after: its baseline once put nbgrader's Execute in
    the wrong place and ran every notebook twice, which read as the sandbox and judge being 31-40% faster."""
    from nbgrader.preprocessors import Execute

    from autograder.grading.judged_execute import JudgedExecute
    from benchmarks.integrity_overhead import CONFIGURATIONS

    expected = {"nbgrader Execute": (Execute, None), "sandbox": (JudgedExecute, []),
                "sandbox + judge": (JudgedExecute, configuration().JudgedExecute.judged_assignments)}
    assert set(CONFIGURATIONS) == set(expected)
    for number, (name, extra) in enumerate(CONFIGURATIONS.items()):
        folder = tmp_path / str(number)
        folder.mkdir()
        for file in ("course_config.py", "nbgrader_config.py"):
            shutil.copy(ROOT / file, folder / file)
        with open(folder / "nbgrader_config.py", "a", encoding="utf-8") as config_file:
            config_file.write(extra)
        config = configuration(folder)
        executing = [step for step in config.Autograde.autograde_preprocessors if issubclass(step, Execute)]
        step, judged = expected[name]
        assert executing == [step], (name, executing)
        if judged is not None:
            assert config.JudgedExecute.judged_assignments == judged, name


def test_a_grading_export_validates_the_notebook_once_after_its_last_step(monkeypatch):
    """nbconvert validates after every preprocessor unless told to be optimistic; the course's exporter
    validates once, after the last one (course_config: c.Exporter.optimistic_validation)."""
    import nbformat
    from nbconvert.preprocessors import Preprocessor

    from autograder.grading.repair import SubmissionExporter

    class Step(Preprocessor):
        def preprocess(self, nb, resources):
            return nb, resources

    exporter = SubmissionExporter(config=configuration())
    for _ in range(3):
        exporter.register_preprocessor(Step(), enabled=True)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    validated = []
    original = nbformat.validate

    def counting(nb, *args, **kwargs):
        validated.append(nb)
        return original(nb, *args, **kwargs)

    monkeypatch.setattr(nbformat, "validate", counting)
    exporter.from_notebook_node(notebook)
    after_steps = len(validated) - 1                 # nbformat.writes validates the result once more
    assert after_steps == 1, f"the notebook was validated {after_steps} times after its steps"
