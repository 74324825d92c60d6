"""Collect submissions downloaded from an LMS with nbgrader's own `zip_collect`.

The instructor downloads all submissions of a chapter as one zip (Canvas: "Download Submissions").
nbgrader extracts it into `downloaded/<chapter>/extracted/`, reads each file name with the course's
LMS_FILE_REGEXP (course_config.py, set for Canvas's naming) and copies the notebooks to
`submitted/<student>/<chapter>/`, ready for `python -m autograder grade`.
"""
import shutil

from .nbgrader_cli import run_nbgrader


def collect(course, chapter, zip_path):
    """Unpack the LMS's zip into submitted/; return the students who now have a submission."""
    archive = course.root / course.config.LMS_DOWNLOAD_DIR / chapter.id / "archive"
    shutil.rmtree(archive, ignore_errors=True)
    archive.mkdir(parents=True)
    shutil.copy(zip_path, archive)
    run_nbgrader(course.root, "zip_collect", chapter.id, "--force")
    submitted = course.root / course.config.SUBMITTED_DIR
    return sorted(p.name for p in submitted.iterdir() if (p / chapter.id / f"{chapter.notebook}.ipynb").exists())
