"""nbgrader's release_assignment for the course: a chapter released while earlier ones are open carries
none of their solutions into the exchange.

Each chapter folder's earlier_chapters.py holds the solved code of every earlier chapter. Releasing chapter
N+1 through nbgrader's exchange (JupyterHub's Assignments panel) before chapter N is due would hand out
chapter N's solution, as publishing it would (autograder/build/publish.py, which takes open chapters from
its --solutions list). Here the gradebook's due dates say which chapters are open: an earlier chapter whose
due date is not yet past, or that has none, has its section withheld in the exchange's copy, and the
notebook runs on the student's own export of it (student/my_library.py). Release again with --force once
it is past due, and later fetches get the course's code. Grading is unchanged: it uses source/'s copy.
"""
from datetime import datetime, timezone
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment

from autograder.build.pipeline import PROVIDED_MODULE
from autograder.build.publish import withhold_open_chapters
from autograder.course import Course


def open_chapters(course, chapter_id, due_dates, now):
    """The module names (`ch03_autodiff`) of the chapters before `chapter_id` not yet past their due date
    (`due_dates`: {chapter id: naive UTC datetime or None}, as nbgrader's gradebook keeps them)."""
    order = [c.id for c in course.chapters]
    if chapter_id not in order:
        return set()
    earlier = course.chapters[:order.index(chapter_id)]
    return {f"{c.id}_{c.notebook}" for c in earlier if due_dates.get(c.id) is None or due_dates[c.id] > now}


def due_dates(db_url, course_id, chapter_ids):
    """{chapter id: due date or None} from nbgrader's gradebook (None also for a chapter it does not know)."""
    found = {}
    with Gradebook(db_url, course_id=course_id) as gradebook:
        for chapter_id in chapter_ids:
            try:
                found[chapter_id] = gradebook.find_assignment(chapter_id).duedate
            except MissingEntry:
                found[chapter_id] = None
    return found


class CourseReleaseAssignment(ExchangeReleaseAssignment):
    """nbgrader's release_assignment, then open earlier chapters withheld from the released earlier_chapters.py."""

    def copy_files(self):
        super().copy_files()
        provided = Path(self.dest_path) / PROVIDED_MODULE
        if not provided.is_file():
            return
        course = Course(self.coursedir.root)
        chapter_id = self.coursedir.assignment_id
        dates = due_dates(self.coursedir.db_url, self.coursedir.course_id, [c.id for c in course.chapters])
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        withheld = open_chapters(course, chapter_id, dates, now)
        if withheld:
            provided.write_text(withhold_open_chapters(provided.read_text(encoding="utf-8"), withheld),
                                encoding="utf-8")
            names = ", ".join(sorted(name.split("_")[0] for name in withheld))
            self.log.warning(f"{chapter_id}: {names} not past their due date (or without one) in the gradebook: "
                             f"their code is withheld from the released {PROVIDED_MODULE}, and students' notebooks "
                             f"run on their own export of it. Release {chapter_id} again with --force once they "
                             f"are past due.")
