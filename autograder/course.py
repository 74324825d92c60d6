"""Where a course lives: load its `course_config.py` and name its folders and notebooks."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import nbformat

from autograder import cell_marks, questions

if TYPE_CHECKING:
    from course_config import Chapter


class Course:
    def __init__(self, root: str | Path = "."):
        self.root = Path(root).resolve()
        path = self.root / "course_config.py"
        if not path.exists():
            raise SystemExit(f"{path} is missing: run this from the course's root folder.")
        spec = importlib.util.spec_from_file_location("course_config", path)
        self.config: ModuleType = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.config)

    @property
    def chapters(self) -> list[Chapter]:
        return self.config.CHAPTERS

    @property
    def gradebook_url(self) -> str:
        """course_config's GRADEBOOK_URL, or nbgrader's default SQLite file in the course root."""
        return self.config.GRADEBOOK_URL or f"sqlite:///{self.root / 'gradebook.db'}"

    @property
    def bonus(self) -> list[Chapter]:
        """Optional assignments (course_config.BONUS): built and graded like chapters, counted in no total."""
        return getattr(self.config, "BONUS", [])

    @property
    def assignments(self) -> list[Chapter]:
        """Every assignment the build makes: the chapters, then the bonus ones."""
        return self.chapters + self.bonus

    def chapter(self, chapter_id: str) -> Chapter:
        return self.config.chapter(chapter_id)

    def autograded_points(self, chapter: Chapter) -> int:
        """The points of the chapter's test cells, read from its built source notebook. They are set in one
        place, the `test ... points=N` lines of its script; the README, the notebook's own totals and the
        tests all read them from the cells, so they cannot disagree."""
        path = self.notebook(self.config.SOURCE_DIR, chapter)
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: build it with `python -m autograder build {chapter.id}`")
        return cell_marks.autograded_points(nbformat.read(path, as_version=4))

    def written_points(self, chapter: Chapter) -> int:
        """The points of the chapter's written questions, which people grade: apart from the autograded
        ones, and 0 before the chapter is built."""
        return questions.written_points_in(self.notebook(self.config.SOURCE_DIR, chapter))

    def script(self, chapter: Chapter) -> Path:
        return self.root / "chapters" / f"{chapter.id}_{chapter.notebook}.py"

    def catalogue(self, chapter: Chapter) -> Path:
        """The chapter's catalogue of realistic wrong and right answers, named as its script is."""
        return self.root / "catalogue" / f"{chapter.id}_{chapter.notebook}.py"

    def notebook(self, folder: str, chapter: Chapter, student: str | None = None) -> Path:
        """`source/ch03/autodiff.ipynb`, or `submitted/ada/ch03/autodiff.ipynb` with a student."""
        base = self.root / folder
        if student is not None:
            base = base / student
        return base / chapter.id / f"{chapter.notebook}.ipynb"

    def earlier_scripts(self, chapter: Chapter) -> list[Path]:
        """Chapter scripts before `chapter`, in course order (their exports are provided code)."""
        return sorted(p for p in (self.root / "chapters").glob("ch*.py") if p.name.split("_")[0] < chapter.id)

    def support_files(self, chapter: Chapter) -> list[str]:
        """The files next to the chapter's source notebook that students get too (relative paths, sorted):
        what the build lists in the set-up cell, and what a grading kit carries."""
        folder = self.notebook(self.config.SOURCE_DIR, chapter).parent
        return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()
                      and p.suffix != ".ipynb" and "__pycache__" not in p.parts
                      and not any(part.startswith(".") for part in p.relative_to(folder).parts))
