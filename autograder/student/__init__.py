"""What runs on the student's side, in their notebook's kernel or on their laptop: the checks the notebooks
call, finite differences, hints, progress tables, pictures, `check`, `export` and the loader of their own
`mybabygrad/`. Published to students (`python -m autograder publish`); its modules import nothing from build/ or
grading/ (`check` uses the grading sandbox only when the instructor's install has it).
"""

from autograder.student.allocator import keep_freed_memory

# every kernel that imports the course's checks trains without page-fault storms
FREED_MEMORY_KEPT = keep_freed_memory()
