"""Right code never fails the judge, and wrong code never passes it: the solution and every catalogued
right alternative of a judged chapter, and every catalogued mistake on each cell it must lose, judged in
process (no kernel, see solved_code.in_process) under many secret seeds, in the notebook's namespace
without its training runs (nothing judged needs them; chapter 7's takes 20 s an answer).

While grading, the kernel leaves the judged checks to the judge (verdict.JUDGED_OUTSIDE_ENV), so the
judge alone must catch every mistake, under every secret: a secret draw that happens to hide a mistake
(a loader's partial batch that never comes) would hand its points back.

tests/pipeline/test_judge.py soaks a few secrets per chapter; tools/soak_judge.py soaks many, by hand."""
from autograder.build import submissions
from autograder.course import Course
from autograder.grading.judge import Judge

from helpers.course_paths import ROOT
from helpers.solved_code import in_process, notebook_namespace, recursion_limit_kept

# The trained models' cells need the training runs, and their judgement draws nothing from the secret unless
# the model cannot be walked: tests/pipeline/test_judge.py judges them on trained models.
NEEDS_TRAINING = {"trained_model", "capstone"}


def replacements(entry):
    """{cell: [(old, new)]}: a catalogue entry's edits, as notebook_namespace takes them."""
    replace = {}
    for edit in entry.edits:
        replace.setdefault(edit.cell, []).append((edit.old, edit.new))
    return replace


def catalogue_edits(chapter_id, name):
    """{cell: [(old, new)]} of one catalogued mistake: a wrong answer for the in-process namespaces."""
    course = Course(ROOT)
    return replacements(next(m for m in submissions.load_catalog(course, course.chapter(chapter_id)).MISTAKES
                             if m.name == name))


def right_answers(chapter_id):
    """{name: replacements}: the solution (None), and each catalogued right alternative's edits."""
    course = Course(ROOT)
    answers = {"solution": None}
    for alternative in submissions.load_catalog(course, course.chapter(chapter_id)).ALTERNATIVES:
        answers[alternative.name] = replacements(alternative)
    return answers


def alternative_namespace(chapter_id, name):
    """The chapter's notebook namespace (no training runs) solved with the catalogued right alternative `name`."""
    return notebook_namespace(chapter_id, right_answers(chapter_id)[name], training=False)


def judged_cells(chapter_id, replace, secrets, cells=None):
    """(grade cell, secret, judgement) of every judged cell that needs no training run (or of `cells` only), the
    chapter's solution edited by `replace` ({cell: [(old, new)]}, or None), under each secret."""
    course = Course(ROOT)
    source = course.notebook(course.config.SOURCE_DIR, course.chapter(chapter_id))
    run_probe = in_process(notebook_namespace(chapter_id, replace, training=False))
    for secret in secrets:
        judge = Judge.from_source(source, secret=secret)
        for grade_id in judge.judged_cells:
            if (cells is None or grade_id in cells) and \
                    not any(call.name in NEEDS_TRAINING for call in judge.plans[grade_id].calls):
                yield grade_id, secret, judge.judge_cell(grade_id, run_probe)


def soak(chapter_id, secrets, answers=None, cells=None):
    """[(answer, grade cell, secret, message)] of every judged cell (or of `cells`) that a right answer (or one of
    `answers`, by name) failed."""
    return [(name, grade_id, secret, judgement.message)
            for name, replace in right_answers(chapter_id).items() if answers is None or name in answers
            for grade_id, secret, judgement in judged_cells(chapter_id, replace, secrets, cells)
            if not judgement.passed]


def judged_mistakes(chapter_id, secrets, cells, only=None, names=None):
    """(mistake, grade cell, secret, judgement) for every catalogued mistake (or each of `names`) and secret, on
    each judged cell of `cells(mistake, judge)` (and of `only`, when given) that needs no training run."""
    course = Course(ROOT)
    chapter = course.chapter(chapter_id)
    source = course.notebook(course.config.SOURCE_DIR, chapter)
    mistakes = submissions.load_catalog(course, chapter).MISTAKES
    unknown = set(names or ()) - {mistake.name for mistake in mistakes}
    if unknown:
        raise ValueError(f"{chapter_id} catalogues no mistake named {', '.join(sorted(unknown))}")
    for mistake in mistakes:
        if names is not None and mistake.name not in names:
            continue
        run_probe = in_process(notebook_namespace(chapter_id, replacements(mistake), training=False))
        for secret in secrets:
            # A judge per mistake: a judge installs its worker in the first namespace it probes and remembers
            # that it did, so the next mistake's probes would fail on a missing worker and pass for caught.
            judge = Judge.from_source(source, secret=secret)
            for grade_id in cells(mistake, judge):
                plan = judge.plans.get(grade_id)
                if plan is None or (only is not None and grade_id not in only) \
                        or any(call.name in NEEDS_TRAINING for call in plan.calls):
                    continue
                with recursion_limit_kept():
                    judgement = judge.judge_cell(grade_id, run_probe)
                yield mistake, grade_id, secret, judgement


def passed_mistakes(chapter_id, secrets, cells=None, names=None):
    """[(mistake, grade cell, secret)] of every cell (or of `cells`) a catalogued mistake (or one of `names`) must
    lose that the judge passed, or failed only because its probe could not be read (then with the judge's message)."""
    passes = []
    for mistake, grade_id, secret, judgement in judged_mistakes(chapter_id, secrets, lambda m, _: m.loses, cells,
                                                                names):
        if judgement.passed:
            passes.append((mistake.name, grade_id, secret))
        elif any(words in judgement.message for words in NOT_A_VERDICT):    # failed, but not for the mistake
            passes.append((mistake.name, grade_id, secret, judgement.message))
    return passes


def extra_losses(chapter_id, secrets, cells=None, names=None):
    """[(mistake, grade cell, secret, message)] of every cell (or of `cells`) a catalogued mistake (or one of
    `names`) must keep that the judge failed: the catalogue grades each mistake under one secret and expects exactly its cells lost, so a
    cell that a mistake loses under some secrets only would fail the suite at random."""
    return [(mistake.name, grade_id, secret, judgement.message)
            for mistake, grade_id, secret, judgement in judged_mistakes(
                chapter_id, secrets, lambda m, judge: [g for g in judge.judged_cells if g not in m.loses], cells, names)
            if not judgement.passed]


NOT_A_VERDICT = ("could not read your kernel's answer", "the judge met an internal error")
