"""grading/safe_html.py: what a student can write in HTML or markdown comes out inert, and what markdown
and the course's pages need comes out intact. (tests/system/test_formgrader_safety.py opens the real pages.)"""
import base64
from html.parser import HTMLParser

import nbformat
import pytest
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from traitlets.config import Config

from autograder.grading import safe_html, safe_outputs

INERT = {
    "script": "<script>steal()</script>",
    "event handler": '<img src="x" onerror="steal()">',
    "svg onload": '<svg onload="steal()"><circle r="1"/></svg>',
    "iframe": '<iframe src="/api/terminals"></iframe>',
    "javascript link": '<a href="javascript:steal()">click</a>',
    "data link": '<a href="data:text/html,<script>steal()</script>">click</a>',
    "server link": '<a href="/formgrader/api/grade/1">click</a>',
    "server image": '<img src="/api/contents/gradebook.db">',
    "web image": '<img src="https://tracker.example/pixel.png">',
    "style": '<p style="background:url(/api/contents)">x</p><style>p{}</style>',
    "form": '<form action="/api/contents" method="post"><button formaction="/api">go</button></form>',
    "meta refresh": '<meta http-equiv="refresh" content="0;url=/api/shutdown">',
    "base": '<base href="https://evil.example/">',
    "object": '<object data="/files/x.svg"></object><embed src="/files/x.svg">',
    "quote cite": '<blockquote cite="/api/contents">x</blockquote>',
    "markdown link": "[click](javascript:steal())",
    "markdown image": "![x](/api/contents/gradebook.db)",
}
ACTIVE_TAGS = {"script", "style", "iframe", "frame", "object", "embed", "form", "button", "input", "meta", "base",
               "link", "svg", "math"}
SAFE_URL = {"href": ("https:", "http:", "mailto:", "#"), "src": ("data:image/",)}


class ActiveParts(HTMLParser):
    """Everything in a page fragment that could run, fetch or submit: tags, handlers, styles, URLs."""

    def __init__(self, html):
        super().__init__()
        self.found = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag in ACTIVE_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name in ("style", "action", "formaction", "data", "cite", "srcset"):
                self.found.append(f"{tag} {name}={value!r}")
            elif name in SAFE_URL and not (value or "").lower().startswith(SAFE_URL[name]):
                self.found.append(f"{tag} {name}={value!r}")


@pytest.mark.parametrize("hostile", INERT.values(), ids=list(INERT))
def test_active_content_is_removed(hostile):
    for cleaned in (safe_html.clean_html(hostile), safe_html.markdown2html({}, hostile)):
        assert not ActiveParts(cleaned).found, f"{ActiveParts(cleaned).found} left in {cleaned!r}"


def test_the_check_itself_sees_each_hostile_fragment():
    """ActiveParts catches every fragment above as nbconvert renders it without the course's filters."""
    plain = MarkdownWithMath(renderer=IPythonRenderer(escape=False))
    missed = [name for name, hostile in INERT.items() if not ActiveParts(plain.render(hostile)).found]
    assert not missed, missed


KEPT = {
    "## A heading": "<h2>A heading",
    "Some *emphasis*, **strength** and `code`.": "<p>Some <em>emphasis</em>, <strong>strength</strong> and <code>code</code>.</p>",
    "| a | b |\n|---|---|\n| 1 | 2 |": "<td>1</td>",
    "1. one\n2. two": "<li>two</li>",
    "$\\frac{\\partial L}{\\partial x} < 1$": "\\frac{\\partial L}{\\partial x}",
    "![pasted](data:image/png;base64,iVBORw0KGgo=)": 'src="data:image/png;base64,iVBORw0KGgo="',
    "[the docs](https://numpy.org/doc/)": 'href="https://numpy.org/doc/"',
    "```python\nx = 1\n```": '<span class="n">x</span>',
    "<sub>2</sub> and <details><summary>more</summary>text</details>": "<details><summary>more</summary>",
}


@pytest.mark.parametrize("markdown, html", KEPT.items(), ids=list(KEPT))
def test_what_markdown_makes_is_kept(markdown, html):
    assert html in safe_html.markdown2html({}, markdown)


def test_a_chapter_renders_through_the_course_configuration_with_every_heading_and_no_escaped_tags(repo_course):
    """nbconvert's own cleaner would show `<p>` as text; the course's keeps every heading of chapter 3."""
    config = Config()
    repo_course.config.configure_nbgrader(config)
    source = repo_course.notebook(repo_course.config.SOURCE_DIR, repo_course.chapter("ch03"))
    notebook = nbformat.read(source, as_version=4)
    html, _ = HTMLExporter(config=config).from_notebook_node(notebook)
    headings = [line.lstrip("#").strip() for cell in notebook.cells if cell.cell_type == "markdown"
                for line in cell.source.splitlines() if line.startswith("## ")]
    assert headings and all(f">{heading.split('`')[0]}" in html for heading in headings), "a heading is missing"
    assert "&lt;p&gt;" not in html and "&lt;h2&gt;" not in html, "markdown's tags were escaped into text"


BROKEN = "AAAA"    # base64 that is no picture: an <img> of it fires onerror
HANDLER = "1 onerror=steal()"


def output(data, metadata=None, kind="display_data"):
    return nbformat.v4.new_output(kind, data=data, metadata=metadata or {}, **({"execution_count": 1} if kind == "execute_result" else {}))


def shown(*outputs, attachments=None):
    """The notebook of one code cell with `outputs` (and a markdown cell with `attachments`), after ShownOutputsOnly."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=list(outputs)),
                                               nbformat.v4.new_markdown_cell("![a](attachment:a.png)")])
    if attachments is not None:
        notebook.cells[1].attachments = attachments
    notebook, _ = safe_outputs.ShownOutputsOnly().preprocess(notebook, {})
    return notebook


def test_outputs_keep_only_the_shown_mimetypes_named_in_any_case():
    notebook = shown(output({"Text/HTML": "<b>x</b>", "application/javascript": "steal()", "application/json": {"a": 1},
                             "application/vnd.jupyter.widget-view+json": {"model_id": "m"}, "application/x-page": "<script>"}),
                     output({"Application/JavaScript": "steal()"}),
                     output({"IMAGE/PNG": BROKEN, "text/plain": "p", "text/PLAIN": "other"}, kind="execute_result"),
                     output({"image/png": '" onerror="steal()'}))
    assert [dict(o.data) for o in notebook.cells[0].outputs] == [{"text/html": "<b>x</b>"}, {"image/png": BROKEN, "text/plain": "p"}]
    assert notebook.cells[0].outputs[1].execution_count == 1


def test_image_metadata_is_reduced_to_validated_values():
    # nbconvert reads a key for the image's own mimetype before the top level: a bad own width hides the 3
    hostile = {"image/png": {"width": HANDLER, "height": "7", "alt": "a picture", "unconfined": "x onerror=steal()",
                             "needs_background": "light"},
               "filenames": {"image/png": "/api/contents/gradebook.db"}, "width": 3, "text/html": {"isolated": True}}
    notebook = shown(output({"image/png": BROKEN}, hostile), output({"text/html": "<b>x</b>"}, hostile),
                     output({"image/jpeg": BROKEN}, {"image/jpeg": {"width": True, "height": -2, "unconfined": True}}))
    assert [dict(o.metadata) for o in notebook.cells[0].outputs] == [
        {"image/png": {"height": 7, "alt": "a picture"}}, {}, {"image/jpeg": {"unconfined": True}}]


def test_attachments_keep_only_pictures_and_a_missing_one_shows_nothing():
    attachments = {"a.png": {"image/png": BROKEN, "text/html": "<script>steal()</script>"},
                   "b.html": {"text/html": base64.b64encode(b"<script>steal()</script>").decode()}}
    notebook = shown(attachments=attachments)
    assert notebook.cells[1].attachments == {"a.png": {"image/png": BROKEN}}
    cell = nbformat.v4.new_markdown_cell("![gone](attachment:b.html) text", attachments={})
    assert "text" in safe_html.markdown2html({"cell": cell}, cell.source), "a missing attachment should not fail the page"


def test_hostile_outputs_render_inert_through_the_course_configuration(repo_course):
    """Every output, rendered as formgrader and the feedback render it, with nothing left that runs or fetches."""
    config = Config()
    repo_course.config.configure_nbgrader(config)
    config.HTMLExporter.template_name = "classic"      # what nbgrader's formgrade and feedback templates extend
    bitmap = {"width": HANDLER, "height": HANDLER, "alt": 'x" onerror="steal()', "unconfined": HANDLER}
    outputs = [output({"image/png": BROKEN}, {"image/png": bitmap, "filenames": {"image/png": "/api/contents/x"}}),
               output({"image/jpeg": BROKEN}, {"image/jpeg": bitmap, "width": HANDLER}),
               output({"Text/HTML": '<img src="x" onerror="steal()">'}, {"Text/HTML": {"isolated": True}}),
               output({"text/html": "<script>steal()</script>"}, {"text/html": {"isolated": True}}),
               output({"text/markdown": "[x](javascript:steal())", "Application/JavaScript": "steal()"}),
               output({"text/latex": "<script>steal()</script>", "image/svg+xml": '<svg onload="steal()"/>'})]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=outputs)])
    html, _ = HTMLExporter(config=config).from_notebook_node(notebook)
    body = html[html.index('<div class="output_wrapper">'):]
    assert not ActiveParts(body).found, f"{ActiveParts(body).found} left in the outputs"
