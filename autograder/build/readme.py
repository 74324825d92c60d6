"""The READMEs' chapter tables, generated from course_config.py and the source notebooks' cells so they
never drift from the course, and the whole README of the student distribution (autograder/build/publish.py)."""
import re

BEGIN, END = "<!-- chapters:begin -->", "<!-- chapters:end -->"
BADGE = "https://colab.research.google.com/assets/colab-badge.svg"


def chapter_table(course, chapters=None, catalogue=False):
    """One row per chapter: its autograded points, and apart from them the points of its written
    questions, which people grade in formgrader (both read from the built source notebook's cells). With
    `catalogue`, the instructors' table also counts the answers each chapter's checks are tested against
    (catalogue/), so adding one changes no sentence by hand."""
    cfg = course.config
    chapters = course.chapters if chapters is None else chapters
    extra = " catalogue: wrong / right answers |" if catalogue else ""
    rows = [f"| chapter | notebook | autograded points | written questions (graded by hand) |{extra} open in Colab |",
            "|---|---|---|---|---|" + ("---|" if catalogue else "")]
    autograded_total = written_total = wrong_total = right_total = 0
    for chapter in chapters:
        number = int(chapter.id[2:])
        notebook = f"{cfg.RELEASE_DIR}/{chapter.id}/{chapter.notebook}.ipynb"
        autograded, written = course.autograded_points(chapter), course.written_points(chapter)
        autograded_total += autograded
        written_total += written
        counts = ""
        if catalogue:
            wrong, right = catalogue_counts(course, chapter)
            wrong_total, right_total = wrong_total + wrong, right_total + right
            counts = f" {wrong} / {right} |"
        rows.append(f"| {number} · {chapter.title} | [`{notebook}`]({notebook}) | {autograded} | {written} |{counts} "
                    f"[![Open in Colab]({BADGE})]({cfg.colab_url(chapter)}) |")
    totals = f" **{wrong_total} / {right_total}** |" if catalogue else ""
    rows.append(f"| | **total** | **{autograded_total}** | **{written_total}** |{totals} |")
    return "\n".join(rows)


def catalogue_counts(course, chapter):
    """(wrong answers, right answers) in the chapter's catalogue."""
    from autograder.build.submissions import load_catalog
    module = load_catalog(course, chapter)
    return len(module.MISTAKES), len(getattr(module, "ALTERNATIVES", []))


def with_chapter_table(readme, course):
    """`readme` with the text between the chapter markers replaced by the current table."""
    block = f"{BEGIN}\n{chapter_table(course, catalogue=True)}\n{END}"
    return re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, readme, flags=re.S)


def update_readme(course):
    """`python -m autograder readme`: README.md's chapter table made current. True when it was rewritten, False
    when it was current already (the file is left untouched, its time too), None without a README."""
    path = course.root / "README.md"
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8")
    current = with_chapter_table(text, course)
    if current == text:
        return False
    path.write_text(current, encoding="utf-8")
    return True


def student_readme(course, released, solved, bonus=()):
    """The published repository's README: how to open the released chapters (and the bonus assignments,
    once every chapter is out), and nothing it lacks."""
    cfg = course.config
    name = cfg.github_path().split("/")[-1]
    example = f"{cfg.RELEASE_DIR}/{released[-1].id}/{released[-1].notebook}.ipynb"
    paths = [f"{cfg.SOLUTIONS_DIR}/{c.id}/{c.notebook}.ipynb" for c in solved]
    solutions = "".join(f"* [`{path}`]({path})\n" for path in paths)
    extras = "".join(f"* [`{cfg.RELEASE_DIR}/{b.id}/{b.notebook}.ipynb`]({cfg.RELEASE_DIR}/{b.id}/{b.notebook}.ipynb): "
                     f"{b.title} ({course.autograded_points(b)} bonus points; hand in the notebook with your `mybabygrad/` folder beside it)\n"
                     for b in bonus)
    return STUDENT_README.format(
        binder=cfg.binder_url(), table=chapter_table(course, released), repository=cfg.PUBLISHED_REPOSITORY,
        name=name, tag=cfg.TAG, release=cfg.RELEASE_DIR, example=example,
        bonus=f"\n## Bonus\n\nOptional, counted apart from the chapters:\n\n{extras}" if bonus else "",
        solutions=f"\n## Solutions\n\nChapters whose deadline has passed, solved and executed:\n\n{solutions}"
        if solved else "")


STUDENT_README = """# babygrad: build a deep-learning library, graded

[![Binder](https://mybinder.org/badge_logo.svg)]({binder})

A Jupyter course in which you build **babygrad**, a small deep-learning library on NumPy, one chapter
at a time. Every chapter is a notebook in `{release}/<chapter>/` with skeleton code to complete and
checks that tell you what is wrong and why. New chapters appear here as they are released.

{table}
{bonus}
## Open a notebook

The notebooks, checks and results are the same in all three places.

* **Your own machine** (Python 3.11):

  ```bash
  git clone {repository} && cd {name}
  python3 -m venv .venv
  .venv/bin/python -m pip install -r requirements.txt    # JupyterLab, nbgrader and the course's checks
  .venv/bin/jupyter lab {release}/
  ```

  The toolbar's **Validate** button runs the whole notebook the way the grader will.
* **Binder**: click the Binder badge. It builds the environment from `requirements.txt` and
  `runtime.txt` (a few minutes the first time) and opens JupyterLab on `{release}/`. Binder forgets
  your work when the session ends: download your notebook (File ▸ Download).
* **Google Colab**: click the chapter's badge above or at the top of the notebook. Its set-up cell
  installs the course's checks from this repository ({tag}) and downloads the chapter's files. Save
  a copy to your Drive (File ▸ Save a copy in Drive) before you start.

## Knowing where you stand

Every check cell starts with `# Check <name> · <n> points`, and the last cell of each notebook prints
a table of every check and your points so far. From a terminal, the same table, every check run even
after a failure (save the notebook first):

```bash
.venv/bin/python -m autograder check {example}
```

It exits with 0 only when every visible check passes. Grading adds hidden tests: more shapes, seeds
and edge cases, so code that passes the visible checks for the right reason passes them too.

From chapter 2 on, `python -m autograder export {example}` (or the notebook's "Keep your
library" cell) copies your `export` cells into your own package, `mybabygrad/`, next to the chapter
folders.

Each chapter's folder holds `earlier_chapters.py`, the finished code of the chapters before it, so a
mistake in one chapter never costs points in the next.
{solutions}"""
