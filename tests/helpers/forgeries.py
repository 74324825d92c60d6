"""Wrong answers that also forge the in-kernel checks: one "forged" student per chapter, graded beside the
chapter's catalogue in conftest's `graded` (one autograde run for both). The kernel says every check
passed, so each cell the forged student loses is lost to the judge alone, with the judge's message."""
import nbformat

from autograder.build import submissions

# Code appended to a wrong exercise cell: every check of the kernel's Checker (but those named) says "passed" ...
FORGE_CHECKER_BUT = '''
from autograder.student.checks import Checker as _Checker
from autograder.student.verdict import passed as _passed
_Checker.__getattribute__ = lambda self, name: (
    object.__getattribute__(self, name) if name in ("namespace", "verbose", "_report"{kept})
    else (lambda *args, **kwargs: _passed("✔ all good")))
'''
FORGE_CHECKER = FORGE_CHECKER_BUT.format(kept="")
# ... or every verdict is a pass, whatever the check found.
FORGE_VERDICT = '''
from autograder.student.verdict import Verdict as _Verdict
_Verdict.passed = property(lambda self: True, lambda self, value: None)
'''
# ... and every cell from then on shows a result first, which nbgrader would read as full credit for a test
# cell that still runs in the kernel (a capstone's) ahead of the judge's error.
FORGE_RESULT = '''
get_ipython().events.register("pre_run_cell", lambda *_: get_ipython().displayhook("full marks please"))
'''
# ... or the capstone's CNN is trained elsewhere: here by a mended Conv backward that Trainer.fit swaps in
# while it trains, so the graded Conv (its weight gradient transposed) never learns anything itself.
FORGE_TRAINED_ELSEWHERE = '''
_wrong_backward, _fit = Conv.backward, Trainer.fit

def _mended_backward(self, out_grad, node):
    grad_x, grad_w = _wrong_backward(self, out_grad, node)
    w = node._inputs[1].data
    return grad_x, Tensor(grad_w.data.reshape(-1, w.shape[0]).T.reshape(w.shape))

def _fit_elsewhere(self, *args, **kwargs):
    Conv.backward = _mended_backward
    try:
        return _fit(self, *args, **kwargs)
    finally:
        Conv.backward = _wrong_backward

Trainer.fit = _fit_elsewhere
'''

# chapter: (catalogued wrong answers, the forgery, {each cell the forged student must lose: what the judge's
# message there says}). Chapters 1 and 5 lose what their mistake's catalogue entry says (None).
FORGED = {
    "ch01": (["mul_own_data"], FORGE_CHECKER, None),
    "ch02": (["constructor_fixed_float32"], FORGE_VERDICT, {"test_constructor": "expected float64"}),
    "ch04": (["parameters_duplicates", "sequential_reversed", "dropout_no_scaling"], FORGE_CHECKER,
             {"test_module_parameters": "appear twice", "test_sequential": "Affine1, then Affine2",
              "test_dropout": "x / (1 - p)"}),
    "ch05": (["adam_no_bias_correction"], FORGE_VERDICT, None),
    "ch06": (["crop_off_by_one"], FORGE_CHECKER, {"test_random_crop": "never came up"}),
    # the last one breaks training (train_epoch returns after one batch): the judge measures the model itself
    "ch07": (["kaiming_uniform_fan_out", "accuracy_batch_average", "train_epoch_returns_early"], FORGE_CHECKER,
             {"test_kaiming_uniform": "times too small", "test_accuracy": "per-batch accuracies",
              "test_train_epoch": "expected once per batch",
              "test_mnist_training": "of the held-out digits right; at least 90%"}),
    "ch08": (["state_dict_aliases", "load_no_mark"], FORGE_CHECKER,
             {"test_state_dict": "is not a snapshot", "test_checkpoint_refuses": "raised KeyError"}),
    # the forged check.capstone trains nothing: the judge finds no trained model in the kernel, and the
    # capstone's cell shows a result ahead of the judge's error
    "ch09": (["evaluate_mean_of_means", "keep_best_no_file"], FORGE_CHECKER + FORGE_RESULT,
             {"test_evaluate": "(the mean loss per sample)", "test_keep_best": "no checkpoint file",
              "test_capstone_mlp": "no model trained by this cell's check"}),
    # the capstone's CNN reaches its accuracy, trained by a Conv backward that is not the graded one: the judge
    # asks the trained model's gradients of the student's library
    "ch10": (["conv_backward_grad_w_transposed"], FORGE_CHECKER_BUT.format(kept=', "capstone"') + FORGE_TRAINED_ELSEWHERE,
             {"test_conv_backward": "the gradient for b is wrong",
              "test_capstone_cnn": "your library does not compute its gradients"}),
}
STUDENT = "forged"


def forged_notebook(course, chapter_id, mistake_names, forge):
    """(the release notebook with the catalogue's wrong exercises, the first one's cell also forging the
    in-kernel checks; the catalogue's mistakes)."""
    chapter = course.chapter(chapter_id)
    release = nbformat.read(course.notebook(course.config.RELEASE_DIR, chapter), as_version=4)
    answers = submissions.solved_answers(nbformat.read(course.notebook(course.config.SOURCE_DIR, chapter), as_version=4))
    catalog = {m.name: m for m in submissions.load_catalog(course, chapter).MISTAKES}
    mistakes = [catalog[name] for name in mistake_names]
    wrong = submissions.with_mistakes(answers, mistakes)
    cell = mistakes[0].edits[0].cell
    wrong[cell] = wrong[cell] + "\n" + forge
    return submissions.filled(release, wrong), mistakes


def students(course, chapter):
    """{"forged": (notebook, the cells it must lose)} for a chapter with a forgery, else {}."""
    if chapter.id not in FORGED:
        return {}
    names, forge, says = FORGED[chapter.id]
    notebook, mistakes = forged_notebook(course, chapter.id, names, forge)
    losses = set(says) if says is not None else {cell for m in mistakes for cell in m.loses}
    return {STUDENT: (notebook, losses)}
