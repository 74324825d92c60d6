"""The student's own library: release notebooks solved as a student would solve them, and the library
exported from them into mybabygrad/, right or with a chosen mistake."""
import shutil

import nbformat

from autograder.build import submissions
from autograder.build.frame import SWITCH_ID
from autograder.student.export import PACKAGE, export_notebook

from helpers.course_paths import ROOT

# catalogue/ch03_autodiff.py: "summation_no_reshape", a backward that loses the summed axes' places.
WRONG_SUMMATION = submissions.Edit("summation", "return out_grad.reshape(kept).broadcast_to(shape)",
                                   "return out_grad.broadcast_to(shape)")

# catalogue/ch04_nn.py: "affine_weight_grad_transposed", the weight's gradient as Gᵀ X. Since section 4.10 the
# capstone MLP's step goes through Affine, not chapter 3's MatMul and Summation; the optimizer's step cannot apply
# a gradient of the transposed shape.
WRONG_AFFINE = submissions.Edit("affine", "x.data.T @ g", "g.T @ x.data")

MLP_CHAPTERS = ["ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09"]     # what the capstone MLP needs


def student_notebook(course, chapter_id, edits=(), use_mine=None):
    """The release notebook of a chapter with its exercises solved (with `edits`), switch set if given."""
    chapter = course.chapter(chapter_id)
    release = nbformat.read(course.notebook("release", chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook("source", chapter), as_version=4))
    for edit in edits:
        assert edit.old in answers[edit.cell]
        answers[edit.cell] = answers[edit.cell].replace(edit.old, edit.new, 1)
    notebook = submissions.filled(release, answers)
    if use_mine is not None:
        switch = next(cell for cell in notebook.cells if cell.get("id") == SWITCH_ID)
        switch.source = switch.source.replace("USE_MY_LIBRARY = False", f"USE_MY_LIBRARY = {use_mine}")
        assert f"USE_MY_LIBRARY = {use_mine}" in switch.source
    return notebook


def exported_library(course, folder, edits=None):
    """folder/release/mybabygrad/ from the solved notebooks of MLP_CHAPTERS (`edits`: {chapter: [Edit]})."""
    release = folder / "release"
    for chapter_id in MLP_CHAPTERS:
        chapter = course.chapter(chapter_id)
        shutil.copytree(ROOT / "release" / chapter_id, release / chapter_id)
        path = release / chapter_id / f"{chapter.notebook}.ipynb"
        nbformat.write(student_notebook(course, chapter_id, (edits or {}).get(chapter_id, ())), path)
        assert export_notebook(path).unfinished == ()
    return release / PACKAGE
