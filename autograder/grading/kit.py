"""What a machine outside the course needs to grade one chapter, and nothing more: a Gradescope image
or a Dask worker.

The chapter's notebook is its *autograde source* (solutions replaced by the students' stubs, hidden
tests kept: nbgrader grades with them), course_config.py is rewritten without secrets
(grading.runner_config), and nbgrader_config.py and the chapter's support files come as they are.
"""
import shutil
import tempfile
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from nbgrader.preprocessors import ClearSolutions
from traitlets.config.loader import PyFileConfigLoader

from autograder import __version__
from autograder.grading import file_bundle
from autograder.grading.gradebook_merge import copy_assignment, create_like
from autograder.grading.protocol import GradingKit, GradingSettings
from autograder.grading.runner_config import runner_config

KIT_GRADEBOOK = "gradebook.db"      # a kit's gradebook, which knows the chapter, under this name


def write_grading_course(course, chapter, folder):
    """folder/: the runner's course_config.py (no secrets), nbgrader_config.py, and the chapter's
    autograde source with its support files. The gradebook is added by the caller."""
    cfg = course.config
    folder.mkdir(parents=True)
    config = runner_config((course.root / "course_config.py").read_text(encoding="utf-8"), cfg)
    (folder / "course_config.py").write_text(config.text, encoding="utf-8")
    shutil.copy2(course.root / "nbgrader_config.py", folder / "nbgrader_config.py")
    source = course.notebook(cfg.SOURCE_DIR, chapter)
    target = folder / cfg.SOURCE_DIR / chapter.id
    target.mkdir(parents=True)
    nbformat.write(autograde_source(course, chapter), target / source.name)
    for name in course.support_files(chapter):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source.parent / name, target / name)


def autograde_source(course, chapter):
    """The source notebook with every solution region replaced by the release stub, by nbgrader's own
    ClearSolutions with the course's settings; hidden tests and cell metadata stay as they are."""
    notebook = nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4)
    settings = PyFileConfigLoader("nbgrader_config.py", path=str(course.root)).load_config()
    notebook, _ = ClearSolutions(config=settings).preprocess(notebook, {})
    return notebook


def chapter_kit(course, chapter, gradebook, unsafe=False) -> GradingKit:
    """What every grading task needs besides the submission, as bytes: the chapter's autograde source
    and support files, nbgrader_config.py, course_config.py without its secrets (a remote worker never
    sees solutions or the gradebook's password), a gradebook that knows the chapter, and the settings
    of the grading process."""
    cfg = course.config
    with tempfile.TemporaryDirectory(prefix=f"babygrad-kit-{chapter.id}-") as scratch:
        folder = Path(scratch) / "kit"
        write_grading_course(course, chapter, folder)
        url = f"sqlite:///{folder / KIT_GRADEBOOK}"
        create_like(gradebook, url)
        with Gradebook(url, course_id=cfg.COURSE_ID) as kit_gradebook:
            copy_assignment(gradebook, kit_gradebook, chapter.id)
        files = file_bundle.pack(folder)
    settings = GradingSettings(chapter=chapter.id, source=cfg.SOURCE_DIR, submitted=cfg.SUBMITTED_DIR,
                               autograded=cfg.AUTOGRADED_DIR, ledger=cfg.LEDGER_DIR, unsafe=unsafe)
    return GradingKit(version=__version__, settings=settings, files=files)
