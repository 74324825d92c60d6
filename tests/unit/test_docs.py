"""The README and docs/ as a reader meets them: every relative link and anchor leads somewhere, every doc a
file names exists, and no tracked text speaks of how the course was made (that is git's job) instead of
what it does."""
import fnmatch
import re
import subprocess

import pytest

from helpers.course_paths import ROOT, course_files

# Words that tell how the course came to be, each with what it names. Case is ignored unless a pattern says.
PROCESS_WORDS = {
    "a numbered step of work": re.compile(r"\bstops? \d+\b", re.I),
    "an audit as a round of work": re.compile(r"audit", re.I),
    "who wrote it": re.compile(r"\bhelpers?,? (?:wrote|found|soaked|ran|added|at the same time)\b", re.I),
    "when it was written": re.compile(r"\bthis (?:stop|round|session)\b|\b(?:that|the next|the last) stop\b"
                                      r"|\blater that day\b|\bday by day\b", re.I),
    "the ticket behind it": re.compile(r"\bissue #?\d+\b|\bthe issue'?s\b|\bthis issue\b", re.I),
    "what it did before": re.compile(r"\bused to\b", re.I),
    "who made it": re.compile(r"\bengineers?\b", re.I),
    "a list named for when it was written": re.compile(r"LEFTOVERS"),
}
# Commit hashes belong to git; in prose they date a text. Markdown prose only: code may name a hash, and a
# code span may hold a file's checksum or a command.
COMMIT_HASH = re.compile(r"(?<![\w/.#-])(?=[0-9a-f]{7,12}\b)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}\b")

# Real uses of those words: (files, the phrase on the line that makes the word a real use).
ALLOWED = [
    ("autograder/build/capstone_mine.py", r"audit"),         # `capstone --mine` audits each op of a training step
    ("tests/pipeline/test_capstone_mine.py", r"audit"),
    ("*", r"\baudit log\b"),
    ("*", r"never used to identify"),                        # "used to" meaning "employed to"
    ("*", r"data used to choose"),
]
# This module spells the words out to find them.
NOT_SCANNED = {"tests/unit/test_docs.py"}


def tracked_text_files():
    """(path, text) of every course text file; binary files (images, data) are left out."""
    for path in course_files():
        if path in NOT_SCANNED:
            continue
        data = (ROOT / path).read_bytes() if (ROOT / path).is_file() else b""
        if b"\0" in data:
            continue
        try:
            yield path, data.decode("utf-8")
        except UnicodeDecodeError:
            continue


def allowed(path, line):
    return any(fnmatch.fnmatch(path, files) and re.search(phrase, line, re.I) for files, phrase in ALLOWED)


def process_words(path, text):
    """Each (path:line, what it names, the words) of `text` that speaks of how the course was made."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        patterns = list(PROCESS_WORDS.items())
        if path.endswith(".md"):
            patterns.append(("a commit hash", COMMIT_HASH))
        for name, pattern in patterns:
            for match in pattern.finditer(CODE_SPAN.sub("", line) if pattern is COMMIT_HASH else line):
                if not allowed(path, line):
                    found.append(f"{path}:{number}: {name}: {match.group(0)!r} in {line.strip()[:120]!r}")
    return found


def test_a_copy_without_git_lists_what_git_tracks(tmp_path):
    """What the scan reads in a `git archive` copy is what `git ls-tree` lists, without what grading, `make demo`
    and `make setup` leave (a submission, the demo students, solutions/'s copy of earlier_chapters.py)."""
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True).returncode:
        pytest.skip("this copy of the course is no git checkout: there is no git list to compare with")
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp_path)], input=archive, check=True)
    tracked = subprocess.run(["git", "ls-tree", "-r", "-z", "--name-only", "HEAD"], cwd=ROOT, capture_output=True,
                             check=True).stdout.decode().split("\0")
    (tmp_path / "gradebook.db").write_bytes(b"")
    (tmp_path / "submitted" / "ada").mkdir(parents=True)
    (tmp_path / "submitted" / "ada" / "notes.txt").write_text("what she wrote", encoding="utf-8")
    (tmp_path / "tests" / "__pycache__").mkdir(exist_ok=True)
    (tmp_path / "tests" / "__pycache__" / "x.pyc").write_bytes(b"")
    (tmp_path / "demo" / "submitted" / "ada" / "ch03").mkdir(parents=True)
    (tmp_path / "demo" / "submitted" / "ada" / "ch03" / "autodiff.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "solutions" / "ch03" / "earlier_chapters.py").write_text("# release/'s copy", encoding="utf-8")
    assert course_files(tmp_path) == sorted(p for p in tracked if p)


@pytest.mark.parametrize("sentence", [
    "Stop 38 took up what that audit had left", "a sixth audit, of chapters 2 and 3", "SECOND_AUDIT = [",
    "SIXTH_AUDIT_OPS_RIGHT = [", "LEFTOVERS = [", "def test_the_judge_tells_each_audits_mistake_as_the_kernel_does",
    "# stop 40: section 8.4's fourth detail", "Four helpers wrote the first catalogue",
    "A second helper, at the same time, soaked", "at this stop", "later that day it read 1.38x",
    "The issue's goal, 10,000 submissions", "The judge used to skip the gradient check", "## Runs, day by day",
    "a class graded in a fixture used to be graded once per worker",
])
def test_the_scan_finds_each_way_of_telling_history(sentence):
    assert process_words("docs/any.md", sentence + " at bbe724e") or process_words("tests/any.py", sentence)


@pytest.mark.parametrize("sentence", [
    "capstone --mine's `audit` compares each op", "the gradebook is never used to identify a student",
    "Dask's scheduler stops a task", "tests/helpers/ holds what the tests share", "a Binder session ends",
    "the MD5 d41d8cd98f00b204e9800998ecf8427e of the file", "an IDX file of 60000 images",
])
def test_the_scan_leaves_real_uses_alone(sentence):
    path = "autograder/build/capstone_mine.py" if "audit" in sentence else "docs/any.md"
    assert process_words(path, sentence) == []


def test_no_tracked_text_tells_how_the_course_was_made():
    found = [hit for path, text in tracked_text_files() for hit in process_words(path, text)]
    assert not found, (f"{len(found)} places speak of how the course was made, not of what it does "
                       "(say what it does, or add a real use to ALLOWED):\n" + "\n".join(found[:60]))


# ── links ──

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+).+?\1")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)


def prose_lines(text):
    """The lines of markdown `text` outside fenced code blocks, with their numbers."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def github_slug(heading):
    """The anchor GitHub gives a heading: the rendered text lowercased, every character but letters, digits,
    spaces, hyphens and underscores dropped, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())     # a link's text, not its address
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(text):
    """Every anchor a markdown file offers: its headings' slugs (a repeated one gets -1, -2, ...) and HTML anchors."""
    seen, found = {}, set()
    for _, line in prose_lines(text):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            slug = github_slug(heading.group(1))
            found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
        found.update(HTML_ANCHOR.findall(line))
    return found


def links(text):
    """(line number, target) of every link and image in markdown `text`, outside code."""
    for number, line in prose_lines(text):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            yield number, target


def broken_links(path, root=ROOT):
    """Each relative link or anchor of the markdown file at `path` (in the course at `root`) that leads nowhere."""
    broken = []
    for number, target in links(path.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):           # https:, mailto:, ...: the web's, not ours
            continue
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(root)}:{number}: {target}"
        if not destination.exists():
            broken.append(f"{where}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination.read_text(encoding="utf-8")):
            broken.append(f"{where}: {destination.name} has no heading with the anchor #{anchor}")
    return broken


MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("heading, slug", [
    ("How grading stays fair", "how-grading-stays-fair"),
    ("The bonus assignment, `capstone_mine`", "the-bonus-assignment-capstone_mine"),
    ("Subnormals late in the MLP's epoch", "subnormals-late-in-the-mlps-epoch"),
    ("Grade: one machine, Dask, Slurm", "grade-one-machine-dask-slurm"),
    ("Chapters 1 to 7 · what each teaches", "chapters-1-to-7--what-each-teaches"),
    ("[Gradescope](https://www.gradescope.com) zips", "gradescope-zips"),
])
def test_anchors_follow_githubs_rules(heading, slug):
    assert github_slug(heading) == slug


def test_a_repeated_heading_gets_a_numbered_anchor():
    assert {"setup", "setup-1", "setup-2"} <= anchors("# Setup\n## Setup\n```\n# not a heading\n```\n### Setup\n")


def test_a_broken_link_or_anchor_is_found(tmp_path):
    (tmp_path / "a.md").write_text("# Here\n[ok](a.md#here) [gone](b.md) [bad](#there) `[code](c.md)`\n"
                                   "```\n[fenced](d.md)\n```\n[web](https://example.org/x.md)\n", encoding="utf-8")
    found = broken_links(tmp_path / "a.md", root=tmp_path)
    assert [f.split(": ", 1)[1] for f in found] == ["b.md: no such file", "#there: a.md has no heading with the anchor #there"]


@pytest.mark.parametrize("path", MARKDOWN, ids=[p.name for p in MARKDOWN])
def test_every_relative_link_and_anchor_leads_somewhere(path):
    broken = broken_links(path)
    assert not broken, "\n".join(broken)


def test_every_doc_a_tracked_file_names_exists():
    """Code and docs point readers at docs/<name>.md; a renamed doc leaves none of them pointing nowhere."""
    named = {(path, doc) for path, text in tracked_text_files() for doc in re.findall(r"\bdocs/[\w-]+\.md\b", text)}
    missing = sorted(f"{path}: {doc}" for path, doc in named if not (ROOT / doc).exists())
    assert not missing, "\n".join(missing)


# ── the performance tables ──

def scale_module():
    """benchmarks/scale.py, which writes docs/performance.md's tables (benchmarks/ is no package)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("scale", ROOT / "benchmarks" / "scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_performance_figures_are_the_recorded_runs():
    """docs/performance.md's tables and the README's figures are one run's, as
    `scale.py --results benchmarks/latest_run.json` writes them."""
    import json
    scale = scale_module()
    recorded = json.loads((ROOT / "benchmarks" / "latest_run.json").read_text(encoding="utf-8"))
    tables, readme = ((ROOT / name).read_text(encoding="utf-8") for name in ("docs/performance.md", "README.md"))
    again = "run `benchmarks/scale.py --results benchmarks/latest_run.json --markdown docs/performance.md --summary README.md`"
    assert scale.rewrite_region(tables, scale.render(recorded)) == tables, \
        f"docs/performance.md's tables differ from benchmarks/latest_run.json: {again}"
    assert scale.rewrite_region(readme, scale.summary(recorded), scale.SUMMARY) == readme, \
        f"README.md's figures differ from benchmarks/latest_run.json: {again}"


def test_scale_rewrites_only_its_region():
    scale = scale_module()
    text = f"# Title\n\nreading\n\n{scale.BEGIN}\nold tables\n{scale.END}\n\nmore reading\n"
    assert scale.rewrite_region(text, "new") == f"# Title\n\nreading\n\n{scale.BEGIN}\nnew\n{scale.END}\n\nmore reading\n"
    with pytest.raises(ValueError, match="no <!-- scale:begin -->"):
        scale.rewrite_region("# no marks\n", "new")


def test_the_catalogue_is_counted_as_it_is():
    """The figures a reader is given for the catalogue are its size: the README's chapter table (which
    `python -m autograder readme` writes, and tests/pipeline/test_generated_files.py holds current) counts each
    chapter's mistakes and right answers, and no other text restates a total that a new entry would leave wrong."""
    from autograder.build.readme import chapter_table
    from autograder.build.submissions import load_catalog
    from autograder.course import Course

    course = Course(ROOT)
    catalogues = [load_catalog(course, chapter) for chapter in course.chapters]
    counted = (sum(len(c.MISTAKES) for c in catalogues), sum(len(getattr(c, "ALTERNATIVES", [])) for c in catalogues))
    total = chapter_table(course, catalogue=True).splitlines()[-1]
    assert f"**{counted[0]} / {counted[1]}**" in total, total
    stated = [f"{path}: {m.group(0)}" for path in ("README.md", "CHANGELOG.md", *(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")))
              for m in re.finditer(r"\b\d{3} (realistic )?wrong (answers )?and \d+ right", (ROOT / path).read_text(encoding="utf-8"))]
    assert stated == [], f"a total of the catalogue written by hand goes stale with the next entry: {stated}"
