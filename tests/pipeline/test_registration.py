"""Registering a chapter (nbgrader's generate_assignment) runs again only when what it reads changed or the
gradebook no longer holds what it wrote; otherwise every grading run would pay about 3 s for nothing."""
import nbformat
from nbgrader.api import Gradebook

from autograder import cell_marks
from autograder.grading import registration

from helpers.class_support import course_copy

CHAPTER = "ch01"


def counting(monkeypatch):
    """The nbgrader commands registering runs from now on, still run for real."""
    runs = []
    real = registration.run_nbgrader

    def run_nbgrader(root, *args, **kwargs):
        runs.append(args[0])
        return real(root, *args, **kwargs)
    monkeypatch.setattr(registration, "run_nbgrader", run_nbgrader)
    return runs


def first_test_cell_points(course, chapter):
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        notebook = gradebook.find_notebook(chapter.notebook, chapter.id)
        return {c.name: c.max_score for c in notebook.grade_cells}


def test_a_chapter_is_registered_again_only_when_its_sources_or_the_gradebook_change(repo_course, tmp_path, monkeypatch):
    course = course_copy(repo_course, tmp_path / "course", CHAPTER)     # registered (and its marker kept)
    chapter = course.chapter(CHAPTER)
    counted = counting(monkeypatch)
    registration.register(course, chapter)
    assert counted == [], "nothing changed: registering again runs no nbgrader"

    path = course.notebook(course.config.SOURCE_DIR, chapter)
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if cell_marks.is_test_cell(c))
    cell.metadata.nbgrader.points += 1
    nbformat.write(notebook, path)
    registration.register(course, chapter)
    assert counted == ["generate_assignment"], "a source notebook edited: registered again"
    assert first_test_cell_points(course, chapter)[cell.metadata.nbgrader.grade_id] == cell.metadata.nbgrader.points
    registration.register(course, chapter)
    assert counted == ["generate_assignment"]

    (course.root / "gradebook.db").unlink()                            # a gradebook replaced: a new one
    registration.register(course, chapter)
    assert counted == ["generate_assignment"] * 2
    assert cell.metadata.nbgrader.grade_id in first_test_cell_points(course, chapter)

    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:   # cells edited in it
        grade_cell = gradebook.find_grade_cell(cell.metadata.nbgrader.grade_id, chapter.notebook, chapter.id)
        grade_cell.max_score = 100
        gradebook.db.commit()
    registration.register(course, chapter)
    assert counted == ["generate_assignment"] * 3
    assert first_test_cell_points(course, chapter)[cell.metadata.nbgrader.grade_id] == cell.metadata.nbgrader.points
