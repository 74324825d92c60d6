"""`python -m autograder permissions`: can other users of this machine read the answers or change grades?

On a shared machine (a JupyterHub, a department server) students are Linux users beside the instructor.
The course repository holds every solution and hidden test (source/, solutions/, chapters/, demo/, the
judge in autograder/), every submission and grade (submitted/, autograded/, feedback/, the gradebook, the
grading ledger), and the environment that grades them (.venv, whose editable install points back into the
repository). Each of these must be the instructor's alone, checked on its own mode bits: a parent folder
opened later (a home folder at Debian's 0755) then exposes nothing. What is inside them is not walked (a
closed folder closes it all): the submissions in submitted/ are checked when they are graded
(grading/submission_modes.py). Folders above the repository that its
owner owns and others can enter are reported too, up to the first one that closes the path; any folder
above it that others can write without the sticky bit lets them rename the course away and put their own
in its place.

nbgrader's exchange is shared on purpose, with the modes nbgrader's exchange code sets
(nbgrader/exchange/default/release_assignment.py, submit.py): the root 0777, the course folder and
outbound/ 0755, inbound/ 2733 (students write and enter, never list: the submission folders in it are
0777, kept apart only by their unguessable names). The root also wants the sticky bit (1777, like /tmp),
which nbgrader keeps: without it any user can rename the course's folder and release their own notebooks.
"""
import grp
import os
import pwd
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

# The course folders that hold answers, submissions or grades (names of course_config settings), besides
# the repository itself, its environment and its grading code.
PRIVATE_FOLDERS = ["SOURCE_DIR", "SOLUTIONS_DIR", "SUBMITTED_DIR", "AUTOGRADED_DIR", "FEEDBACK_DIR", "LEDGER_DIR",
                   "EXPORT_DIR", "GRADESCOPE_DIR", "DEMO_DIR"]
PRIVATE_NAMES = [".venv", "autograder", "chapters", "demo", ".build", "course_config.py", "nbgrader_config.py"]
DEFAULT_EXCHANGE = "/srv/nbgrader/exchange"     # nbgrader's Exchange.root default
ROOT_MODE, COURSE_MODE, OUTBOUND_MODE, INBOUND_MODE = 0o1777, 0o755, 0o755, 0o2733


@dataclass(frozen=True)
class Problem:
    """One path others can reach, what they can do there, and the command that stops it."""

    path: Path
    what: str
    mode: int
    fixed_mode: int | None       # the mode `--fix` sets (None: no chmod of ours fixes it)

    @property
    def fix(self):
        """The chmod that gives `fixed_mode`: a class closed whole (`o-rwx`), the sticky bit (`+t`), else in octal."""
        if self.fixed_mode is None:
            return "(ask the machine's administrator)"
        mode = stat.S_IMODE(self.mode)
        removed, added = mode & ~self.fixed_mode, self.fixed_mode & ~mode
        classes = "".join(who for who, mask in (("g", 0o070), ("o", 0o007)) if removed & mask)
        closed = mode & ~sum(mask for who, mask in (("g", 0o070), ("o", 0o007)) if who in classes)
        if not added and removed and closed == self.fixed_mode:
            change = f"{classes}-rwx"
        elif not removed and added == stat.S_ISVTX:
            change = "+t"
        else:
            change = f"{self.fixed_mode:04o}"
        return f"chmod {change} {shlex.quote(str(self.path))}"

    def line(self):
        return f"{self.path}: {self.what} (mode {stat.S_IMODE(self.mode):04o}, owner {owner_name(self.path)}). " \
               f"Fix: {self.fix}"


def owner_name(path):
    uid = path.lstat().st_uid
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def group_is_shared(gid, owner_uid):
    """Whether users other than the owner are in the group (Debian gives each user a group of their own)."""
    try:
        group = grp.getgrgid(gid)
    except KeyError:
        return True
    members = {pwd.getpwnam(name).pw_uid for name in group.gr_mem if name_exists(name)}
    members |= {user.pw_uid for user in pwd.getpwall() if user.pw_gid == gid}
    return bool(members - {owner_uid})


def name_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def others_access(info, owner_uid):
    """The access bits users other than `owner_uid` have: the other class's, and the group's when shared."""
    bits = info.st_mode & 0o007
    if group_is_shared(info.st_gid, owner_uid):
        bits |= info.st_mode >> 3 & 0o007
    return bits


def can_do(bits, is_folder):
    """What rwx bits let a user do, in words."""
    if is_folder:
        words = [word for word, bit in (("list", 4), ("enter", 1)) if bits & bit]
        if bits & 2 and bits & 1:
            words.append("create, rename and delete files in")
    else:
        words = [word for word, bit in (("read", 4), ("change", 2)) if bits & bit]
    return words


def private_problem(path, owner_uid):
    """A problem when users other than `owner_uid` may read, enter or write `path` (a file or folder)."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return None
    bits = others_access(info, owner_uid)
    words = can_do(bits, stat.S_ISDIR(info.st_mode))
    if not words:
        return None
    shared = group_is_shared(info.st_gid, owner_uid)
    who = "others" + (f" and group {info.st_gid} (shared)" if shared and info.st_mode & 0o070 else "")
    closed = stat.S_IMODE(info.st_mode) & ~(0o077 if shared else 0o007)
    return Problem(path, f"{who} can {' and '.join(words)} it", info.st_mode, closed)


def course_paths(course):
    """The repository, then each path in it that holds answers, submissions, grades or grading code."""
    cfg = course.config
    paths = [course.root] + [course.root / getattr(cfg, name) for name in PRIVATE_FOLDERS if hasattr(cfg, name)]
    paths += [course.root / name for name in PRIVATE_NAMES]
    gradebook = gradebook_file(course)
    if gradebook is not None:
        paths += [gradebook.parent, gradebook]
    seen, kept = set(), []
    for path in paths:
        if path not in seen and (path.exists() or path.is_symlink()):
            seen.add(path)
            kept.append(path)
    return kept


def gradebook_file(course):
    """The SQLite gradebook's file, or None for a database server (its own access rules apply)."""
    url = course.gradebook_url
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None


def ancestor_problems(root, owner_uid):
    """Folders above the repository: the owner's that others can enter, up to the first that others cannot
    enter (it closes the path) or that is not the owner's own (/home, /srv: the system's; /tmp: everyone's),
    and any that others can write without the sticky bit."""
    problems, path_open = [], True
    for folder in root.parents:
        info = folder.stat()
        shared = info.st_mode & stat.S_ISVTX and info.st_mode & 0o002       # /tmp: everyone's by design
        path_open = path_open and info.st_uid == owner_uid and not shared and folder != Path(folder.anchor)
        problem = private_problem(folder, owner_uid) if path_open else None
        if problem is None and info.st_mode & 0o002 and not info.st_mode & stat.S_ISVTX:
            problem = Problem(folder, "others can rename or replace what is in it, the course's folders too",
                              info.st_mode, stat.S_IMODE(info.st_mode) & ~0o022)
        if problem:
            problems.append(problem)
        path_open = path_open and bool(others_access(info, owner_uid) & 1)
    return problems


def exchange_problems(exchange, course_id, owner_uid):
    """nbgrader's exchange against the modes nbgrader sets, and the sticky root. None when there is none yet."""
    if not exchange.is_dir():
        return []
    problems = []
    root = exchange.stat()
    if stat.S_IMODE(root.st_mode) & 0o777 != 0o777:
        problems.append(Problem(exchange, "not 0777, as nbgrader's release_assignment wants it (it resets the mode, "
                                          "dropping the sticky bit)", root.st_mode, ROOT_MODE))
    elif not root.st_mode & stat.S_ISVTX:
        problems.append(Problem(exchange, f"others can rename {course_id}/ in it and put a course folder of their "
                                          f"own in its place (no sticky bit)", root.st_mode, ROOT_MODE))
    course = exchange / course_id
    if not course.is_dir():
        return problems
    for folder, mode in ((course, COURSE_MODE), (course / "outbound", OUTBOUND_MODE)):
        if folder.is_dir():
            problems += expected_mode_problems(folder, mode, owner_uid)
    outbound = course / "outbound"
    for assignment in sorted(outbound.iterdir()) if outbound.is_dir() else []:
        if assignment.is_dir() and assignment.stat().st_mode & 0o022:
            info = assignment.stat()
            problems.append(Problem(assignment, "others can change the released files in it", info.st_mode,
                                    stat.S_IMODE(info.st_mode) & ~0o022))
    inbound = course / "inbound"
    if inbound.is_dir():
        problems += expected_mode_problems(inbound, INBOUND_MODE, owner_uid)
    return problems


def expected_mode_problems(folder, expected, owner_uid):
    info = folder.stat()
    mode = stat.S_IMODE(info.st_mode)
    problems = []
    if info.st_uid != owner_uid:
        problems.append(Problem(folder, f"owned by {owner_name(folder)}, not by the course's owner, who must "
                                        f"release and collect there", info.st_mode, None))
    if mode == expected:
        return problems
    missing, extra = expected & ~mode, mode & ~expected
    said = []
    if extra & 0o004 and expected == INBOUND_MODE:
        said.append("others can list every submission in it, and the submission folders are 0777: "
                    "they can change each other's work")
    elif extra & 0o022:
        said.append("others can create, rename and delete files in it")
    if missing & 0o003:
        said.append("students cannot " + ("submit into it" if expected == INBOUND_MODE else "fetch from it"))
    said = said or [f"nbgrader sets {expected:04o}"]
    problems.append(Problem(folder, "; ".join(said), info.st_mode, expected))
    return problems


def configured_exchange(course):
    """Exchange.root as nbgrader would read it: Jupyter's config folders (the environment's etc/jupyter,
    /etc/jupyter, ~/.jupyter), then the course's nbgrader_config.py; nbgrader's default otherwise."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config import Config
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader

    config = Config()
    folders = list(reversed(jupyter_config_path())) + [str(course.root)]
    for folder in folders:
        for loader in (JSONFileConfigLoader("nbgrader_config.json", path=folder),
                       PyFileConfigLoader("nbgrader_config.py", path=folder)):
            try:
                config.merge(loader.load_config())
            except Exception:        # noqa: BLE001 (a missing or foreign file: nbgrader skips it too)
                continue
    root = config.get("Exchange", {}).get("root")
    return Path(root if isinstance(root, str) else DEFAULT_EXCHANGE)


def check(course, exchange=None):
    """Every problem, the course's paths first, then the folders above it, then the exchange."""
    owner_uid = course.root.stat().st_uid
    problems = [p for p in (private_problem(path, owner_uid) for path in course_paths(course)) if p]
    problems += ancestor_problems(course.root, owner_uid)
    exchange = Path(exchange) if exchange is not None else configured_exchange(course)
    problems += exchange_problems(exchange, course.config.COURSE_ID, owner_uid)
    return problems, exchange


def fix(problems):
    """chmod each path to its fixed mode (those a chmod can fix); returns the problems left."""
    left = []
    for problem in problems:
        if problem.fixed_mode is None:
            left.append(problem)
            continue
        try:
            os.chmod(problem.path, problem.fixed_mode)
        except PermissionError:
            left.append(problem)
    return left


def report(problems, exchange):
    lines = [problem.line() for problem in problems]
    if not exchange.is_dir():
        lines.append(f"(no nbgrader exchange at {exchange}: nbgrader's release_assignment creates it)")
    if problems:
        lines.append(f"{len(problems)} path(s) to fix; `python -m autograder permissions --fix` runs each chmod above.")
    else:
        lines.insert(0, "No other user can read or change the course's answers, submissions or grades.")
    return "\n".join(lines)
