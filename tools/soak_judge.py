"""Right code never fails the judge, and each catalogued mistake loses exactly its cells: soak judged chapters under many secrets.

What a soak judges, and why in process, is in tests/helpers/soak.py.

The suite soaks a few secrets per chapter (tests/pipeline/test_judge.py); after changing a judged check, soak more:

    .venv/bin/python tools/soak_judge.py --secrets 200 [ch04 ch10 ...]

A rare failure of one right answer in one cell needs tens of thousands of secrets; soak just those:

    .venv/bin/python tools/soak_judge.py ch08 --cell test_resume_training --answer solution --secrets 40000

and a rare pass of a wrong answer, the catalogued mistakes alone:

    .venv/bin/python tools/soak_judge.py ch05 --mistakes-only --secrets 1000 --first 500000
    .venv/bin/python tools/soak_judge.py ch08 --mistake optimizer_load_numbers_as_floats --secrets 5000
"""
import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(HERE), str(HERE / "tests")]     # autograder/ and the tests' helpers, when run from anywhere

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
    parser.add_argument("--mistakes-only", action="store_true", help="leave the right answers out")
    parser.add_argument("--mistake", action="append",
                        help="judge only this catalogued mistake, by name (repeatable); the right answers are then left out")
    args = parser.parse_args()
    secrets = range(args.first, args.first + args.secrets)
    for chapter_id in args.chapters:
        if not (args.mistakes_only or args.mistake):
            answers = args.answer or right_answers(chapter_id)
            failures = soak(chapter_id, secrets, answers, args.cell)
            print(f"{chapter_id}: {len(answers)} right answers x {args.secrets} secrets "
                  f"({'cells ' + ', '.join(args.cell) if args.cell else 'every judged cell'}): "
                  f"{len(failures)} failed judgements", flush=True)
            for name, grade_id, secret, message in failures[:20]:
                print(f"  {name} {grade_id} secret={secret}: {message.splitlines()[0]}")
        if args.answer or args.right_only:
            continue
        mistakes = ", ".join(args.mistake) if args.mistake else "catalogued mistakes"
        passes = passed_mistakes(chapter_id, secrets, args.cell, args.mistake)
        print(f"{chapter_id}: {mistakes} x {args.secrets} secrets: {len(passes)} cells the judge passed",
              flush=True)
        for name, grade_id, secret, *unread in passes[:20]:      # a probe that could not be read comes with why
            print(f"  {name} {grade_id} secret={secret}" + (f": {unread[0].splitlines()[0]}" if unread else ""))
        extras = extra_losses(chapter_id, secrets, args.cell, args.mistake)
        print(f"{chapter_id}: {mistakes} x {args.secrets} secrets: {len(extras)} cells lost that they keep "
              "in the catalogue", flush=True)
        for name, grade_id, secret, message in extras[:20]:
            print(f"  {name} {grade_id} secret={secret}: {message.splitlines()[0]}")


if __name__ == "__main__":
    main()
