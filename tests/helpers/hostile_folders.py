"""Submission folders that attack grading with what they hold rather than with code: links to the
instructor's files, FIFOs, pages under upper-case extensions, and many files. Each is a solved notebook
(full marks when graded as it should be) with the attack beside it, or in its place."""
import os
from pathlib import Path

import nbformat

from helpers.class_support import solved_notebook_maker

MANY_FILES = 20_000
# Printed by the first answer cell of every solved notebook here: each entry of the kernel's folder, and
# what reading it gave. What a link beside the notebook leads to must never appear.
SNOOP = """import os as _os
for _name in sorted(_os.listdir('.')):
    try:
        with open(_name, 'rb') as _handle:
            print('READ', _name, _handle.read(400))
    except Exception as _error:
        print('UNREAD', _name, type(_error).__name__)
"""
OWN_NOTES = "MY OWN NOTES, A REGULAR FILE"
PAGES = ["notes.HTML", "notes.Htm", "page.XHTML", "page.xht", "diagram.SVG"]
PAGE = "<html><body><script>fetch('/api/contents/pwned', {method: 'PUT'})</script></body></html>"
# The bytes that show a linked file was read: a source notebook's solution markers, a password file's
# first field, a SQLite gradebook's header.
LINKED_MARKERS = ["BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "root:", "SQLite format 3"]


def password_file():
    """/etc/shadow where it exists, else /etc/passwd: a file of the machine's no student may read."""
    return "/etc/shadow" if Path("/etc/shadow").exists() else "/etc/passwd"


def lay_out(course, chapter, students_folder):
    """Write the hostile class (STUDENTS) into `students_folder`/<student>/<chapter>/."""
    name = f"{chapter.notebook}.ipynb"
    source_notebook = course.notebook(course.config.SOURCE_DIR, chapter)
    solved = solved_notebook_maker(course, chapter)(SNOOP)

    def folder(student):
        path = Path(students_folder) / student / chapter.id
        path.mkdir(parents=True)
        return path

    def with_notebook(student):
        path = folder(student)
        nbformat.write(solved, path / name)
        (path / "notes.txt").write_text(OWN_NOTES, encoding="utf-8")
        return path

    os.symlink(source_notebook, folder("linked-notebook") / name)
    (Path(students_folder) / "linked-folder").mkdir(parents=True)
    os.symlink(source_notebook.parent, Path(students_folder) / "linked-folder" / chapter.id)
    os.mkfifo(folder("fifo-notebook") / name)
    fifos = with_notebook("fifo-beside")
    os.mkfifo(fifos / "data.csv")
    os.mkfifo(fifos / "timestamp.txt")          # nbgrader's, and parallel grading's, record of the hand-in time
    beside = with_notebook("links-beside")
    os.symlink(source_notebook, beside / "answers.txt")
    os.symlink(password_file(), beside / "passwords.txt")
    os.symlink(course.root / "gradebook.db", beside / "gradebook.txt")
    os.symlink(source_notebook.parent, beside / "course")
    pages = with_notebook("pages")
    for page in PAGES:
        (pages / page).write_text(PAGE, encoding="utf-8")
    (pages / "mybabygrad").mkdir()
    (pages / "mybabygrad" / "__init__.py").write_text("# the bonus's package\n", encoding="utf-8")
    many = with_notebook("many-files")
    for i in range(MANY_FILES):
        (many / f"f{i:05}.txt").touch()
    honest = folder("zz-honest")
    nbformat.write(solved, honest / name)


# In the order nbgrader grades them: the honest student comes after every attack.
STUDENTS = ["fifo-beside", "fifo-notebook", "linked-folder", "linked-notebook", "links-beside", "many-files",
            "pages", "zz-honest"]
FULL_MARKS = ["fifo-beside", "links-beside", "many-files", "pages", "zz-honest"]
NO_NOTEBOOK = ["fifo-notebook", "linked-folder", "linked-notebook"]


def hand_in(course, chapter):
    lay_out(course, chapter, course.root / course.config.SUBMITTED_DIR)


def files_under(folder):
    """Every entry below `folder`, relative, with / (links and FIFOs included, never followed)."""
    found = []
    for here, dirs, files in os.walk(folder):
        for name in dirs + files:
            found.append(Path(here, name).relative_to(folder).as_posix())
    return sorted(found)
