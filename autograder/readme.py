"""The README's chapter table, generated from course_config.py so it never drifts from the course."""
import re

BEGIN, END = "<!-- chapters:begin -->", "<!-- chapters:end -->"
BADGE = "https://colab.research.google.com/assets/colab-badge.svg"


def chapter_table(course):
    cfg = course.config
    rows = ["| chapter | notebook | points | open in Colab |", "|---|---|---|---|"]
    for chapter in course.chapters:
        number = int(chapter.id[2:])
        notebook = f"{cfg.RELEASE_DIR}/{chapter.id}/{chapter.notebook}.ipynb"
        rows.append(f"| {number} · {chapter.title} | [`{notebook}`]({notebook}) | {chapter.points} | "
                    f"[![Open in Colab]({BADGE})]({cfg.colab_url(chapter)}) |")
    rows.append(f"| | **total** | **{sum(c.points for c in course.chapters)}** | |")
    return "\n".join(rows)


def with_chapter_table(readme, course):
    """`readme` with the text between the chapter markers replaced by the current table."""
    block = f"{BEGIN}\n{chapter_table(course)}\n{END}"
    return re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, readme, flags=re.S)


def update_readme(course):
    path = course.root / "README.md"
    if path.exists():
        path.write_text(with_chapter_table(path.read_text(encoding="utf-8"), course), encoding="utf-8")
