"""Judge one ad-hoc edit of a chapter's solution in process, as the grader's judge would: which cells it loses.

For an author hunting for wrong answers the hidden tests miss (docs/grading-correctness.md, "Known gaps"), before
writing one into catalogue/:

    .venv/bin/python tools/judge_edit.py ch03 relu "a.data > 0" "a.data >= 0"
    .venv/bin/python tools/judge_edit.py ch03 relu "a.data > 0" "a.data >= 0" --secrets 20

`cell` is the exercise cell's id (`# %% solution id=...` in chapters/), `old` must occur in its solved code.
No cell lost means the judge passes the edit under every secret tried: either the edit is right, or a gap.
Cells that need a training run (the capstones, chapter 7's trained model) are not judged here.
"""
import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(HERE), str(HERE / "tests")]     # autograder/ and the tests' helpers, when run from anywhere

from helpers.soak import judged_cells  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter")
    parser.add_argument("cell", help="the exercise cell's id")
    parser.add_argument("old", help="text of the solved cell to replace")
    parser.add_argument("new", help="what to put instead")
    parser.add_argument("--secrets", type=int, default=5)
    args = parser.parse_args()
    lost = {}
    for grade_id, secret, judgement in judged_cells(args.chapter, {args.cell: [(args.old, args.new)]},
                                                    range(1000, 1000 + args.secrets)):
        if not judgement.passed:
            lost.setdefault(grade_id, (secret, judgement.message))
    if not lost:
        print(f"{args.chapter}: no judged cell lost under {args.secrets} secrets")
    for grade_id, (secret, message) in lost.items():
        print(f"{grade_id} (first lost under secret {secret}):\n  " + message.replace("\n", "\n  "))


if __name__ == "__main__":
    main()
