"""Right code never fails the judge, and each catalogued mistake loses exactly its cells: soak judged chapters under many secrets.

What a soak judges, and why in process, is in tests/helpers/soak.py.

The suite soaks a few secrets per chapter (tests/test_judge.py); after changing a judged check, soak more:

    .venv/bin/python tests/soak_judge.py --secrets 200 [ch04 ch10 ...]

A rare failure of one right answer in one cell needs tens of thousands of secrets; soak just those:

    .venv/bin/python tests/soak_judge.py ch08 --cell test_resume_training --answer solution --secrets 40000
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # autograder/, when run from anywhere

from autograder.course import Course  # noqa: E402

from helpers.course_paths import ROOT  # noqa: E402
from helpers.soak import extra_losses, passed_mistakes, right_answers, soak  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", default=Course(ROOT).config.JUDGED_CHAPTERS)
    parser.add_argument("--secrets", type=int, default=50)
    parser.add_argument("--first", type=int, default=1000, help="the first secret (to soak secrets not tried yet)")
    parser.add_argument("--cell", action="append", help="judge only this grade cell (repeatable)")
    parser.add_argument("--answer", action="append",
                        help="judge only this right answer, by catalogue name or 'solution' (repeatable); "
                             "the catalogued mistakes are then left out")
    parser.add_argument("--right-only", action="store_true", help="leave the catalogued mistakes out")
    args = parser.parse_args()
    secrets = range(args.first, args.first + args.secrets)
    for chapter_id in args.chapters:
        answers = args.answer or right_answers(chapter_id)
        failures = soak(chapter_id, secrets, answers, args.cell)
        print(f"{chapter_id}: {len(answers)} right answers x {args.secrets} secrets "
              f"({'cells ' + ', '.join(args.cell) if args.cell else 'every judged cell'}): "
              f"{len(failures)} failed judgements")
        for name, grade_id, secret, message in failures[:20]:
            print(f"  {name} {grade_id} secret={secret}: {message.splitlines()[0]}")
        if args.answer or args.right_only:
            continue
        passes = passed_mistakes(chapter_id, secrets, args.cell)
        print(f"{chapter_id}: catalogued mistakes x {args.secrets} secrets: {len(passes)} cells the judge passed")
        for name, grade_id, secret in passes[:20]:
            print(f"  {name} {grade_id} secret={secret}")
        extras = extra_losses(chapter_id, secrets, args.cell)
        print(f"{chapter_id}: catalogued mistakes x {args.secrets} secrets: {len(extras)} cells lost that they keep "
              "in the catalogue")
        for name, grade_id, secret, message in extras[:20]:
            print(f"  {name} {grade_id} secret={secret}: {message.splitlines()[0]}")


if __name__ == "__main__":
    main()
