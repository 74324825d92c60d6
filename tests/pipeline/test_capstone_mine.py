"""`python -m autograder capstone mlp --mine`: the capstone recipe on a student's own exported library.

The library is every chapter's solved student notebook exported to mybabygrad/, as a student who
finished the course would have it; one copy has chapter 4's Affine.backward wrong (the op the MLP's layers
run on since section 4.10).
"""
import subprocess
import sys

import pytest

from autograder.build.submissions import Edit
from autograder.build import capstone_mine
from autograder.student.checks.capstone import MLP_ACCURACY

from helpers.course_paths import ROOT
from helpers.my_library import WRONG_AFFINE, exported_library


def batch(kind="mlp", size=64):
    from autograder.student.checks.capstone import RECIPES, mnist
    images, labels = mnist("train", RECIPES[kind].image_shape)
    return images[:size], labels[:size]


@pytest.fixture(scope="module")
def course_library():
    return capstone_mine.library(ROOT)[0]


def test_the_whole_library_comes_from_the_package(repo_course, tmp_path):
    package = exported_library(repo_course, tmp_path)
    _, mine, course = capstone_mine.library(ROOT, package)
    assert mine == tuple(sorted(p.stem for p in package.glob("ch*.py"))) and course == ("ch10_conv",)


def test_a_wrong_affine_is_named_as_the_op_to_look_at(repo_course, tmp_path, course_library):
    package = exported_library(repo_course, tmp_path, {"ch04": [WRONG_AFFINE]})
    mine, _, _ = capstone_mine.library(ROOT, package)
    found, failure = capstone_mine.audit(mine, course_library, "mlp", *batch())
    assert failure and "ValueError" in failure      # the backward runs; the optimizer's step cannot apply it
    reports = {r.name: r for r in found}
    wrong = [name for name, r in reports.items() if r.problem]
    assert wrong == ["Affine"], reports
    assert reports["Affine"].problem.startswith("backward, gradient of input 1: shape (128, 784), the course's (784, 128)"), reports["Affine"]
    lines = []
    capstone_mine.run(ROOT, "mlp", package, images=640, out=lines.append)
    assert any(line.startswith("  look at Affine:") for line in lines), lines


def test_a_subtly_wrong_affine_that_still_trains_is_named_with_its_worst_element(repo_course, tmp_path):
    """A weight gradient 1% too large: no error anywhere, only the op-by-op comparison can tell (a short epoch
    of 640 images, through the command a student runs)."""
    scaled = Edit("affine", "x.data.T @ g", "1.01 * (x.data.T @ g)")
    package = exported_library(repo_course, tmp_path, {"ch04": [scaled]})
    done = subprocess.run([sys.executable, "-m", "autograder", "capstone", "mlp", "--mine", "--from",
                           str(package.parent), "--images", "640"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    look = [line for line in done.stdout.splitlines() if line.startswith("  look at")]
    assert len(look) == 1 and look[0].startswith("  look at Affine: on the same inputs it differs"), done.stdout
    assert "backward, gradient of input 1: worst element" in look[0] and "relative error 0.01" in look[0]
    assert "of the 10,000 test digits" in done.stdout


def test_the_solved_library_agrees_op_by_op_and_reaches_the_mlp_threshold(repo_course, tmp_path, course_library):
    """The full recipe: one epoch of 60,000 images (a few seconds for the MLP on one core)."""
    package = exported_library(repo_course, tmp_path)
    lines = []
    accuracy, per_epoch, reports = capstone_mine.run(ROOT, "mlp", package, out=lines.append)
    assert accuracy >= MLP_ACCURACY, lines
    assert reports and not any(r.problem for r in reports), lines
    assert {"Affine", "ReLU", "SoftmaxCrossEntropy"} <= {r.name for r in reports}
    assert "every op agrees with the course's" in lines[-1] or any("is slow" in line for line in lines)
