"""The course's commands: `python -m autograder build | demo | grade CHAPTER | check NOTEBOOK`."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    parser.add_argument("--root", default=".", help="the course folder (default: here)")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("build", help="chapters/*.py → source/, release/, solutions/, demo submissions")
    p.add_argument("chapters", nargs="*", help="chapter ids (default: all)")
    p = commands.add_parser("demo", help="build, then autograde the shipped demo submissions and print the scores")
    p.add_argument("chapters", nargs="*", help="chapter ids (default: all)")
    p = commands.add_parser("grade", help="autograde every submission of a chapter in submitted/ and print the scores")
    p.add_argument("chapter")
    p = commands.add_parser("check", help="for students: run a notebook's visible checks and print where you stand "
                                          "(exit code 0 only when all pass)")
    p.add_argument("notebook")
    args = parser.parse_args(argv)

    if args.command == "check":                 # needs neither the course folder nor nbgrader
        from . import selfcheck
        sys.exit(selfcheck.main(args.notebook))

    from . import build, grading
    from .course import Course

    course = Course(args.root)
    if args.command == "build":
        build.build(course, args.chapters)
    elif args.command == "demo":
        build.build(course, args.chapters)
        for chapter in course.chapters:
            if not args.chapters or chapter.id in args.chapters:
                table = grading.grade_demo(course, chapter)
                print("\n" + grading.format_table(chapter, table, grading.graded_cells(course, chapter)))
    elif args.command == "grade":
        chapter = course.chapter(args.chapter)
        grading.autograde(course, chapter)
        print(grading.format_table(chapter, grading.scores(course, chapter), grading.graded_cells(course, chapter)))


if __name__ == "__main__":
    main()
