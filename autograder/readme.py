"""The README's chapter table, generated from course_config.py and the source notebooks so it never
drifts from the course."""
import re

import nbformat

from .questions import written_points

BEGIN, END = "<!-- chapters:begin -->", "<!-- chapters:end -->"
BADGE = "https://colab.research.google.com/assets/colab-badge.svg"


def chapter_table(course):
    """One row per chapter: its autograded points, and apart from them the points of its written
    questions, which people grade in formgrader (read from the built source notebook)."""
    cfg = course.config
    rows = ["| chapter | notebook | autograded points | written questions (graded by hand) | open in Colab |",
            "|---|---|---|---|---|"]
    written_total = 0
    for chapter in course.chapters:
        number = int(chapter.id[2:])
        notebook = f"{cfg.RELEASE_DIR}/{chapter.id}/{chapter.notebook}.ipynb"
        written = written_points_of(course, chapter)
        written_total += written
        rows.append(f"| {number} · {chapter.title} | [`{notebook}`]({notebook}) | {chapter.points} | {written} | "
                    f"[![Open in Colab]({BADGE})]({cfg.colab_url(chapter)}) |")
    rows.append(f"| | **total** | **{sum(c.points for c in course.chapters)}** | **{written_total}** | |")
    return "\n".join(rows)


def written_points_of(course, chapter):
    path = course.notebook(course.config.SOURCE_DIR, chapter)
    return written_points(nbformat.read(path, as_version=4)) if path.exists() else 0


def with_chapter_table(readme, course):
    """`readme` with the text between the chapter markers replaced by the current table."""
    block = f"{BEGIN}\n{chapter_table(course)}\n{END}"
    return re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, readme, flags=re.S)


def update_readme(course):
    path = course.root / "README.md"
    if path.exists():
        path.write_text(with_chapter_table(path.read_text(encoding="utf-8"), course), encoding="utf-8")
