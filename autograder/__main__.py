"""The course's commands: `python -m autograder build | demo-submissions | readme | demo | grade | collect
| gradescope | report | flags | permissions | check | export | capstone | publish | hub`."""
import argparse
import importlib.util
import sys
from pathlib import Path


STUDENT_DESCRIPTION = "The course's commands for students: `python -m autograder check | export`."


def instructor_package():
    """Whether this copy of the course has the instructor's side (build/, grading/): the published student
    distribution has only the student's commands, and lists only those."""
    return importlib.util.find_spec(f"{__package__}.build") is not None


def main(argv=None):
    instructor = instructor_package()
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__ if instructor else STUDENT_DESCRIPTION)
    if instructor:
        parser.add_argument("--root", default=".", help="the course folder (default: here)")
    commands = parser.add_subparsers(dest="command", required=True)
    if instructor:
        instructor_commands(commands)
    student_commands(commands)
    args = parser.parse_args(argv)

    if args.command == "export":                # a student's command, like check
        from autograder.student.export import export_notebook
        if not Path(args.notebook).is_file():
            sys.exit(f"export: {args.notebook}: no such notebook")
        try:
            print(export_notebook(args.notebook, args.to).summary())
        except ValueError as error:             # not in a chapter folder: a sentence, not a traceback
            sys.exit(f"export: {error}")
        return

    if args.command == "check":                 # needs neither the course folder nor nbgrader
        from autograder.student import selfcheck
        sys.exit(selfcheck.main(args.notebook, short=args.short))

    from autograder import grading
    from autograder.build import pipeline, submissions
    from autograder.course import Course

    course = Course(args.root)
    named = list(getattr(args, "chapters", None) or []) + ([args.chapter] if getattr(args, "chapter", None) else [])
    known = [c.id for c in course.assignments]
    unknown = [c for c in named if c not in known]
    if unknown and args.command != "publish":        # publish names its own (chapters only, no bonus)
        sys.exit(f"{args.command}: no chapter {', '.join(unknown)} in course_config.py; known: {', '.join(known)}")
    if args.command == "capstone":
        from autograder.build.capstone_mine import run
        from autograder.student.export import PACKAGE
        package = Path(args.source or course.root / course.config.RELEASE_DIR) / PACKAGE
        if not (package / "__init__.py").is_file():
            sys.exit(f"capstone: no {package}/: export your notebooks first (python -m autograder export NOTEBOOK)")
        run(course.root, args.kind, package, images=args.images)
        return
    if args.command == "permissions":
        from autograder.grading import permissions
        problems, exchange = permissions.check(course, args.exchange)
        if args.fix and problems:
            left = permissions.fix(problems)
            print(f"fixed {len(problems) - len(left)} of {len(problems)}")
            problems, exchange = permissions.check(course, args.exchange)
        print(permissions.report(problems, exchange))
        sys.exit(1 if problems else 0)
    if args.command == "publish":
        from autograder.build.publish import PublishError, publish
        try:
            print(publish(course, args.dest, args.chapters, args.solutions, replace=args.replace))
        except PublishError as error:
            sys.exit(f"publish: {error}")
        return
    if args.command == "hub":
        from autograder.build import hub
        layout = hub.HubLayout(args.instructor, course.root.resolve(), Path(args.students_env).resolve(),
                               Path(args.hub_dir), Path(args.exchange), args.ip, args.port)
        try:
            for path in hub.write(course, args.dest, layout):
                print(path)
        except ValueError as error:
            sys.exit(f"hub: {error}")
        return
    if args.command == "build":
        pipeline.build(course, args.chapters)
    elif args.command == "demo-submissions":
        submissions.write_all_demo_submissions(course, args.chapters)
    elif args.command == "readme":
        from autograder.build import readme
        updated = readme.update_readme(course)
        print({True: "README.md: chapter table updated", False: "README.md: chapter table already current",
               None: "no README.md here: nothing to update"}[updated])
    elif args.command == "demo":
        pipeline.build(course, args.chapters)
        submissions.write_all_demo_submissions(course, args.chapters)
        for chapter in course.chapters:
            if not args.chapters or chapter.id in args.chapters:
                table = grading.grade_demo(course, chapter)
                print("\n" + grading.format_table(chapter, table, grading.graded_cells(course, chapter)))
    elif args.command == "grade":
        grade(course, course.chapter(args.chapter), args)
    elif args.command == "collect":
        from autograder.grading import lms
        try:
            run = lms.collect(course, course.chapter(args.chapter), args.zip, args.roster)
        except lms.CollectError as error:
            sys.exit(f"collect: {error}")
        print(f"{len(run.students)} submissions in {course.config.SUBMITTED_DIR}/: {', '.join(run.students)}")
        for row in run.problems:
            print(f"  {row.file}: {row.problem}")
        print(f"  (every member of the zip: {run.report})")
    elif args.command == "gradescope":
        from autograder.grading import gradescope
        for chapter in course.chapters:
            if not args.chapters or chapter.id in args.chapters:
                print(gradescope.build_autograder_zip(course, chapter))
    elif args.command == "report":
        from autograder.grading import class_report
        report = class_report.write_report(course, course.chapter(args.chapter))
        print(report.table)
        print(f"\ngrades: {report.grades_csv}\npass shares: {report.shares_csv}\nchart: {report.chart}"
              f"\nflags: {report.flags_csv}")
    elif args.command == "flags":
        from autograder.grading import flags
        chapter = course.chapter(args.chapter)
        path, found, unreadable = flags.write_flags(course, chapter)
        print(flags.format_flags(chapter, found))
        for student in unreadable:
            print(f"  {student}: the notebook is not readable JSON, nothing scanned")
        print(f"\n{path}")


def instructor_commands(commands):
    """The instructor's commands: building, grading, publishing."""
    p = commands.add_parser("build", help="chapters/*.py → source/, release/, solutions/ (needs no demo/)")
    p.add_argument("chapters", nargs="*", help="chapter ids (default: all)")
    p = commands.add_parser("demo-submissions", help="the built release notebooks and catalogue/ → "
                                                     "demo/submitted/ (perfect, partial, untouched)")
    p.add_argument("chapters", nargs="*", help="chapter ids (default: all)")
    commands.add_parser("readme", help="README.md's chapter table, from course_config.py and the built source notebooks")
    p = commands.add_parser("demo", help="build, write the demo submissions, then autograde them and print the scores")
    p.add_argument("chapters", nargs="*", help="chapter ids (default: all)")
    p = commands.add_parser("grade", help="autograde every submission of a chapter in submitted/, on a Dask cluster "
                                           "(default: this machine's cores)")
    p.add_argument("chapter")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help="submissions graded at once on this machine (default: one per core)")
    p.add_argument("--scheduler", metavar="tcp://HOST:8786", default=None,
                   help="grade on the Dask cluster of this scheduler instead of this machine")
    p.add_argument("--force", action="store_true", help="regrade students whose submission was graded already")
    p.add_argument("--serial", action="store_true", help="plain `nbgrader autograde --force`, one after another")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    p.add_argument("--unsafe", action="store_true", help="where bwrap is unusable, run student code without "
                                                         "the sandbox (only for submissions you trust)")
    p = commands.add_parser("collect", help="an LMS zip of submissions (Canvas naming) → submitted/<student>/<chapter>/")
    p.add_argument("chapter")
    p.add_argument("zip", help="the zip file downloaded from the LMS")
    p.add_argument("--roster", default=None, help="CSV lms_user_id,student_id,name (default: course_config LMS_ROSTER)")
    p = commands.add_parser("gradescope", help="build a Gradescope autograder zip per chapter in gradescope/")
    p.add_argument("chapters", nargs="*", help="chapter ids (default: all)")
    p = commands.add_parser("report", help="grades CSV (nbgrader export) and the class's pass share per exercise")
    p.add_argument("chapter")
    p = commands.add_parser("flags", help="list code in submitted/ that touches the checker, builtins, files, "
                                          "sockets, ... in exports/<chapter>_flags.csv (a report, not a penalty)")
    p.add_argument("chapter")
    p = commands.add_parser("permissions", help="warn where other users of this machine can read or change the "
                                                "course's answers, submissions or grades, and check nbgrader's "
                                                "exchange (exit code 0 only when nothing is found)")
    p.add_argument("--exchange", default=None, metavar="DIR",
                   help="nbgrader's exchange folder (default: Exchange.root from nbgrader's configuration)")
    p.add_argument("--fix", action="store_true", help="apply each fix (chmod) that a path's owner can apply")
    p = commands.add_parser("capstone", help="train a capstone recipe on your own mybabygrad/ and compare each of "
                                             "your ops with the course's")
    p.add_argument("kind", choices=["mlp", "cnn"])
    p.add_argument("--mine", action="store_true", required=True, help="on your mybabygrad/ (the only mode so far)")
    p.add_argument("--from", dest="source", default=None, metavar="DIR",
                   help="the folder holding mybabygrad/ (default: release/ of the course)")
    p.add_argument("--images", type=int, default=None, help="train on the first N images only (a shorter epoch)")
    p = commands.add_parser("publish", help="write the student distribution (released chapters, solutions past "
                                            "their deadline, the checks) into DEST, to push as the public repository")
    p.add_argument("dest", metavar="DEST")
    p.add_argument("--chapters", nargs="+", required=True, help="the chapters released so far")
    p.add_argument("--solutions", nargs="*", default=[], help="released chapters whose deadline has passed")
    p.add_argument("--replace", action="store_true", help="empty DEST first (keeping its .git): an earlier publish")
    p = commands.add_parser("hub", help="the configuration files of a JupyterHub for this course on one machine "
                                        "(deploy/jupyterhub/setup.sh installs them; docs/jupyterhub.md)")
    p.add_argument("dest", metavar="DEST")
    p.add_argument("--instructor", required=True, help="the Linux user who owns the course folder: the hub's admin")
    p.add_argument("--students-env", required=True, help="the students' Python environment (readable by all)")
    p.add_argument("--hub-dir", default="/srv/jupyterhub", help="the hub's own state, root's (default: %(default)s)")
    p.add_argument("--exchange", default="/srv/nbgrader/exchange", help="nbgrader's exchange (default: %(default)s)")
    p.add_argument("--ip", default="127.0.0.1", help="where the hub listens (default: %(default)s)")
    p.add_argument("--port", type=int, default=8000, help="the hub's public port (default: %(default)s)")


def student_commands(commands):
    """The commands a student's copy of the course has: `check` and `export`."""
    p = commands.add_parser("check", help="for students: run a notebook's visible checks and print where you stand "
                                          "(exit code 0 only when all pass)")
    p.add_argument("notebook")
    p.add_argument("--short", action="store_true", help="one line per check instead of each failure's whole message")
    p = commands.add_parser("export", help="for students: copy a chapter notebook's `export` cells, as you wrote "
                                           "them, into your own package mybabygrad/")
    p.add_argument("notebook")
    p.add_argument("--to", default=None, metavar="DIR",
                   help="where mybabygrad/ goes (default: the folder holding the chapter folders)")


def grade(course, chapter, args):
    from autograder import grading
    if args.serial:
        done = grading.autograde(course, chapter, check=False, unsafe=args.unsafe)
        if done.returncode:
            print("nbgrader reported submissions it could not grade; see its log above.", file=sys.stderr)
            print(done.stderr[-4000:], file=sys.stderr)
    else:
        from autograder.grading.parallel import grade_chapter
        try:
            run = grade_chapter(course, chapter, jobs=args.jobs, force=args.force, progress=not args.quiet,
                                unsafe=args.unsafe, scheduler=args.scheduler)
        except KeyboardInterrupt:
            sys.exit("interrupted: the students graded so far are kept; run the same command again to resume")
        print(f"{chapter.id}: graded {len(run.graded)}, already graded {len(run.skipped)}, "
              f"with problems {len(run.problems)}")
        for student, (kind, reason) in run.problems.items():
            print(f"  {student}: {kind}: {reason}")
        if run.problems:
            print(f"  (also in {run.problems_csv})")
    if not args.quiet:
        print(grading.format_table(chapter, grading.scores(course, chapter), grading.graded_cells(course, chapter)))


if __name__ == "__main__":
    main()

