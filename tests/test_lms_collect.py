"""An LMS's zip of submissions (Canvas's file naming) becomes submitted/<student>/<chapter>/ through
nbgrader's own zip_collect, configured in course_config.py."""
import zipfile

import nbformat
import pytest

from autograder.course import Course
from autograder.lms import collect

from class_support import class_notebooks, course_copy
from conftest import ROOT

CHAPTERS = [c.id for c in Course(ROOT).chapters]


@pytest.mark.parametrize("chapter_id", CHAPTERS[:1])
def test_canvas_zip_becomes_one_submission_folder_per_student(built_course, tmp_path, chapter_id):
    """File names, not chapters, are what this tests: the first chapter stands for all."""
    course = course_copy(built_course, tmp_path / "course", chapter_id, gradebook=False)   # zip_collect needs release/ only
    chapter = course.chapter(chapter_id)
    notebooks = class_notebooks(course, chapter)
    name = chapter.notebook
    canvas_files = {   # <login name>[_LATE]_<user id>_<submission id>_<file>, re-uploads numbered
        f"lovelaceada_12345_900001_{name}.ipynb": nbformat.writes(notebooks["perfect"]),
        f"hoppergrace_LATE_23456_900002_{name}-1.ipynb": nbformat.writes(notebooks["partial"]),
        f"turingalan_34567_900003_{name}.ipynb": nbformat.writes(notebooks["untouched"]),
        "turingalan_34567_900004_notes.txt": "not a notebook: left out",
    }
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as archive:
        for filename, text in canvas_files.items():
            archive.writestr(filename, text)

    students = collect(course, chapter, download)

    assert students == ["hoppergrace", "lovelaceada", "turingalan"]
    submitted = course.root / course.config.SUBMITTED_DIR
    for student, source in [("lovelaceada", f"lovelaceada_12345_900001_{name}.ipynb"),
                            ("hoppergrace", f"hoppergrace_LATE_23456_900002_{name}-1.ipynb"),
                            ("turingalan", f"turingalan_34567_900003_{name}.ipynb")]:
        folder = submitted / student / chapter.id
        assert sorted(p.name for p in folder.iterdir()) == [f"{name}.ipynb"]
        assert (folder / f"{name}.ipynb").read_text(encoding="utf-8") == canvas_files[source]
