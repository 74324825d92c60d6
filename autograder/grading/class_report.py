"""The class report of a chapter: nbgrader's grades CSV, and for each graded exercise the share of
students who passed it, as a table and a bar chart, so an instructor sees at a glance which ops
the class struggles with; for each written question (graded by people in formgrader), how many answers
still wait for a grade and the mean score of the others; then each student's count of flags
(grading/flags.py), code to review."""
import csv
from dataclasses import dataclass
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from nbgrader.api import Gradebook

from autograder.grading import graded_cells, written_questions
from autograder.grading.flags import NOTICE, counts_by_student, write_flags
from autograder.grading.gradebook_merge import find_chapter
from autograder.grading.nbgrader_cli import run_nbgrader

STRUGGLE_BELOW = 0.5     # exercises fewer than half the class passed are drawn in red


@dataclass
class PassShare:
    exercise: str
    points: float
    passed: int
    students: int

    @property
    def share(self):
        return self.passed / self.students if self.students else 0.0


@dataclass
class WrittenScore:
    """A written question over the class: answers graded (by a person, or 0 for no answer) and waiting."""

    question: str
    points: float
    scores: list            # the score of every graded answer
    waiting: int            # answers no one has graded yet

    @property
    def mean(self):
        return sum(self.scores) / len(self.scores) if self.scores else None


@dataclass
class Report:
    shares: list
    written: list            # [WrittenScore], in notebook order
    table: str
    grades_csv: Path
    shares_csv: Path
    chart: Path
    flag_counts: dict        # {student: flags} for every student with a submission, zeros included
    flags_csv: Path


def pass_shares(course, chapter):
    """One PassShare per graded cell, in notebook order, over every student who submitted the chapter.

    Passing a cell means its full points; a submission that could not be graded passes nothing.
    """
    cells = graded_cells(course, chapter)
    passed, points = {c: 0 for c in cells}, {}
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        submissions = find_chapter(gradebook, chapter.id).submissions
        for submission in submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.name in passed:
                        points[grade.name] = grade.max_score
                        passed[grade.name] += (grade.score or 0) >= grade.max_score
        students = len(submissions)
    return [PassShare(c, points.get(c, 0), passed[c], students) for c in cells]


def written_scores(course, chapter):
    """One WrittenScore per written question of the chapter, over every student who submitted it."""
    questions = written_questions(course, chapter)
    scores, waiting = {q: [] for q in questions}, {q: 0 for q in questions}
    with Gradebook(course.gradebook_url, course_id=course.config.COURSE_ID) as gradebook:
        for submission in find_chapter(gradebook, chapter.id).submissions:
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.name not in questions:
                        continue
                    if grade.needs_manual_grade and grade.manual_score is None:
                        waiting[grade.name] += 1
                    else:
                        scores[grade.name].append(grade.score or 0)
    return [WrittenScore(q, points, scores[q], waiting[q]) for q, points in questions.items()]


def format_written(chapter, written):
    width = max([len(w.question) for w in written] + [len("question")])
    lines = [f"{chapter.id}: written questions, graded in formgrader",
             f"{'question':<{width}}  points  graded  waiting  mean"]
    for w in written:
        mean = "-" if w.mean is None else f"{w.mean:.2g}"
        lines.append(f"{w.question:<{width}}  {w.points:>6g}  {len(w.scores):>6}  {w.waiting:>7}  {mean:>4}")
    return "\n".join(lines)


def format_shares(chapter, shares):
    width = max([len(s.exercise) for s in shares] + [len("exercise")])
    students = shares[0].students if shares else 0
    lines = [f"{chapter.id} · {chapter.title}: who passed each exercise ({students} students)",
             f"{'exercise':<{width}}  points  passed  share"]
    for s in shares:
        flag = "  ← struggling" if s.students and s.share < STRUGGLE_BELOW else ""
        lines.append(f"{s.exercise:<{width}}  {s.points:>6g}  {s.passed:>6}  {s.share:>5.0%}{flag}")
    return "\n".join(lines)


def format_flag_counts(chapter, counts, flags_csv):
    """One line per student with their flag count, flagged students first."""
    lines = [f"{chapter.id}: flags per student (code to review, in {flags_csv.name}). {NOTICE}"]
    width = max([len(s) for s in counts] + [len("student")])
    lines.append(f"{'student':<{width}}  flags")
    for student, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"{student:<{width}}  {count:>5}")
    return "\n".join(lines)


def draw_shares(chapter, shares, path):
    """A horizontal bar per exercise, top to bottom in notebook order; red where most of the class failed."""
    figure = Figure(figsize=(8, 0.28 * len(shares) + 1.4), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = range(len(shares))
    colors = ["#c0392b" if s.share < STRUGGLE_BELOW else "#2e86c1" for s in shares]
    axes.barh(list(positions), [100 * s.share for s in shares], color=colors)
    axes.set_yticks(list(positions), [s.exercise for s in shares], fontsize=8)
    axes.set_ylim(len(shares) - 0.5, -0.5)
    axes.set_xlim(0, 100)
    axes.set_xlabel("students who passed (%)")
    axes.axvline(100 * STRUGGLE_BELOW, color="grey", linewidth=0.8, linestyle="--")
    students = shares[0].students if shares else 0
    axes.set_title(f"{chapter.id} · {chapter.title}: {students} students", fontsize=10)
    figure.tight_layout()
    figure.savefig(path)
    return path


def write_report(course, chapter):
    """exports/<chapter>_grades.csv (nbgrader export), <chapter>_pass_shares.csv and .png, <chapter>_flags.csv."""
    folder = course.root / course.config.EXPORT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    shares = pass_shares(course, chapter)
    grades_csv = folder / f"{chapter.id}_grades.csv"
    run_nbgrader(course.root, "export", f"--to={grades_csv}", f"--assignment={chapter.id}")
    shares_csv = folder / f"{chapter.id}_pass_shares.csv"
    with open(shares_csv, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["exercise", "points", "passed", "students", "share"])
        for s in shares:
            writer.writerow([s.exercise, f"{s.points:g}", s.passed, s.students, f"{s.share:.4f}"])
    chart = draw_shares(chapter, shares, folder / f"{chapter.id}_pass_shares.png")
    flags_csv, flags, _ = write_flags(course, chapter)
    submitted = course.root / course.config.SUBMITTED_DIR
    counts = {p.parts[-3]: 0 for p in submitted.glob(f"*/{chapter.id}/{chapter.notebook}.ipynb")}
    counts.update(counts_by_student(flags))
    written = written_scores(course, chapter)
    table = format_shares(chapter, shares) + "\n\n"
    if written:
        table += format_written(chapter, written) + "\n\n"
    table += format_flag_counts(chapter, counts, flags_csv)
    return Report(shares, written, table, grades_csv, shares_csv, chart, counts, flags_csv)
