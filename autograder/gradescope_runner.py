"""Inside Gradescope: grade the one submission in /autograder/submission with the real
`nbgrader autograde`, and write /autograder/results/results.json in Gradescope's format.

One test per graded cell, carrying its points. A cell with hidden tests is reported twice: its
visible checks at once (no points: the student sees what the notebook showed them), and the cell
itself, points and full message, with visibility `after_due_date`, so hidden inputs stay hidden
until the deadline. A submission that cannot be graded still gets a results.json: zero points and
the reason.

    python -m autograder.gradescope_runner CHAPTER --root /autograder
"""
import argparse
import json
import re
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

import nbformat

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
STUDENT = "gradescope"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder.gradescope_runner")
    parser.add_argument("chapter")
    parser.add_argument("--root", default="/autograder")
    args = parser.parse_args(argv)
    root = Path(args.root)
    started = time.monotonic()
    try:
        results = grade(root, args.chapter)
    except Exception:                         # a results.json in every case: Gradescope shows nothing otherwise
        traceback.print_exc()
        results = {"score": 0.0, "output": "The autograder itself failed on this submission; your instructor has "
                                           "the log. Please tell them.", "tests": []}
    results["execution_time"] = round(time.monotonic() - started)
    (root / "results").mkdir(parents=True, exist_ok=True)
    (root / "results" / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(json.dumps({k: v for k, v in results.items() if k != "tests"}, indent=2))


def grade(root, chapter_id):
    from nbgrader.api import Gradebook

    from .course import Course
    from .grading_worker import diagnose
    from .nbgrader_cli import run_nbgrader

    with tempfile.TemporaryDirectory(prefix="babygrad-gradescope-") as scratch:
        work = Path(scratch) / "course"
        shutil.copytree(root / "source" / "course", work)
        course = Course(work)
        chapter = course.chapter(chapter_id)
        cfg = course.config
        notebook = find_notebook(root / "submission", chapter.notebook)
        target = course.notebook(cfg.SUBMITTED_DIR, chapter, STUDENT)
        target.parent.mkdir(parents=True)
        if notebook is not None:
            shutil.copy(notebook, target)
        done = run_nbgrader(work, "autograde", chapter.id, "--force", check=False)
        autograded = course.notebook(cfg.AUTOGRADED_DIR, chapter, STUDENT)
        problem = diagnose(done.stdout + done.stderr, autograded.parent, chapter.notebook, cfg.CELL_TIMEOUT_SECONDS)
        with Gradebook(course.gradebook_url, course_id=cfg.COURSE_ID) as gradebook:
            submitted = gradebook.find_submission_notebook(chapter.notebook, chapter.id, STUDENT)
            scores = {g.name: (g.score, g.max_score) for g in submitted.grades}
        source = nbformat.read(course.notebook(cfg.SOURCE_DIR, chapter), as_version=4)
        graded = nbformat.read(autograded, as_version=4) if autograded.exists() else None
        return results_json(chapter, source, graded, scores, problem, found=notebook)


def find_notebook(submission, name):
    """The submitted notebook: `<name>.ipynb` anywhere in the upload, else its only notebook."""
    notebooks = sorted(p for p in submission.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    named = [p for p in notebooks if p.name == f"{name}.ipynb"]
    if named:
        return named[0]
    return notebooks[0] if len(notebooks) == 1 else None


def results_json(chapter, source, graded, scores, problem, found):
    outputs = {cell_id(c): c for c in graded.cells} if graded is not None else {}
    tests = []
    for cell in source.cells:
        name = cell_id(cell)
        if name not in scores or not cell.metadata.get("nbgrader", {}).get("grade"):
            continue
        score, max_score = scores[name]
        score = float(score or 0)
        hidden = hidden_lines(cell.source)
        ran = outputs.get(name)
        message = cell_message(ran) if ran is not None else None
        if message is None:
            message = not_run_message(problem, found, chapter)
        status = "passed" if score >= max_score else "failed"
        if hidden:
            failed_line = error_line(ran) if ran is not None else None
            visible_failed = status == "failed" and (failed_line is None or failed_line < hidden[0])
            tests.append({"name": f"{name} · visible checks", "score": 0.0, "max_score": 0.0,
                          "status": "failed" if visible_failed else "passed",
                          "output": message if visible_failed or ran is None else
                          "The visible checks of this cell pass. Hidden checks run too; their result "
                          "and this cell's points are shown after the due date.",
                          "visibility": "visible"})
            tests.append({"name": f"{name} · all checks, hidden ones included", "score": score,
                          "max_score": float(max_score), "status": status, "output": message,
                          "visibility": "after_due_date"})
        else:
            tests.append({"name": name, "score": score, "max_score": float(max_score), "status": status,
                          "output": message, "visibility": "visible"})
    total = sum(t["score"] for t in tests)
    summary = f"{chapter.title}: graded with nbgrader, one cell at a time, exactly as in the course."
    if found is None:
        summary = f"No {chapter.notebook}.ipynb found in the submission: upload the notebook itself."
    elif problem:
        summary = f"This submission could not be fully graded: {problem[1]}."
    return {"score": total, "output": summary, "stdout_visibility": "hidden", "visibility": "visible",
            "tests": tests}


def cell_id(cell):
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def hidden_lines(source):
    """1-based line numbers of the cell's hidden region (empty if it has none)."""
    lines, inside, found = source.splitlines(), False, []
    for number, line in enumerate(lines, 1):
        if HIDDEN_BEGIN in line:
            inside = True
        elif HIDDEN_END in line:
            inside = False
        elif inside:
            found.append(number)
    return found


def cell_message(cell):
    """What the cell told the student: its check's message when it failed, its output when it passed."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            if output.get("ename") == "AssertionError" and output.get("evalue"):
                return output["evalue"]
            return f"{output.get('ename')}: {output.get('evalue')}".strip()
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    return ANSI.sub("", text).strip() or "passed"


def error_line(cell):
    """The line of the cell where its error was raised, read from the traceback (None if unknown)."""
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            match = re.search(r"Cell In\[\d+\], line (\d+)", ANSI.sub("", "\n".join(output.get("traceback", []))))
            return int(match.group(1)) if match else None
    return None


def not_run_message(problem, found, chapter):
    if found is None:
        return f"Not graded: no {chapter.notebook}.ipynb in the submission."
    if problem:
        return f"Not graded: {problem[1]}."
    return "Not graded."


if __name__ == "__main__":
    sys.exit(main())
