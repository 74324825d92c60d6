"""The students' nbgrader_config.py survives plain nbgrader: `nbgrader generate_assignment --force`
empties release/<chapter>/ and writes the file back through GenerateAssignment's post-convert hook."""
import shutil

from helpers.course_paths import BUILD_INPUTS, ROOT, copy_course_inputs

from autograder.build import student_config
from autograder.grading.nbgrader_cli import run_nbgrader

CHAPTER = "ch03"


def test_plain_generate_assignment_force_keeps_the_students_settings(tmp_path):
    course = copy_course_inputs(tmp_path, BUILD_INPUTS)
    cfg = course.config
    shutil.copytree(ROOT / cfg.SOURCE_DIR / CHAPTER, tmp_path / cfg.SOURCE_DIR / CHAPTER)
    shutil.copytree(ROOT / cfg.RELEASE_DIR / CHAPTER, tmp_path / cfg.RELEASE_DIR / CHAPTER)
    settings = tmp_path / cfg.RELEASE_DIR / CHAPTER / student_config.FILE_NAME
    settings.write_text("# an older copy, which nbgrader removes with the folder\n", encoding="utf-8")

    run_nbgrader(tmp_path, "generate_assignment", CHAPTER, "--force",
                 f"--CourseDirectory.db_url=sqlite:///{tmp_path / 'build.db'}")

    assert (tmp_path / cfg.RELEASE_DIR / CHAPTER / f"{course.chapter(CHAPTER).notebook}.ipynb").is_file()
    assert settings.is_file(), "generate_assignment --force left release/ch03/ without the students' settings"
    assert settings.read_text(encoding="utf-8") == student_config.text(cfg)
    assert f"c.Execute.timeout = {cfg.CELL_TIMEOUT_SECONDS}\n" in settings.read_text(encoding="utf-8")
