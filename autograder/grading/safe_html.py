"""A student's notebook made inert before an instructor's browser shows it.

Formgrader renders each autograded notebook into a page of the Jupyter server itself, where the
instructor is logged in. A `<script>`, an `onerror=` or a JavaScript output that a student put in a
written answer, or made a cell display, would run there with the instructor's session: it could set any
student's grade through formgrader's API, or run commands through the server's. nbconvert's
`sanitize_html` drops JavaScript outputs and cleans HTML outputs, but formgrader's template renders
markdown cells (the written answers) without it, and nbconvert's cleaner escapes even the `<p>` and
`<h2>` that markdown makes.

So the course configures every HTML export it runs (formgrader's pages and the feedback) to sanitize,
with these two filters in place of nbconvert's (course_config.configure_nbgrader): markdown rendered as
nbconvert renders it, then cleaned; outputs' HTML cleaned. Cleaning is nh3 (the Rust `ammonia`
sanitizer) with an allowlist of the tags and attributes markdown and plain HTML tables need. Images stay
when they are inline data (a figure pasted into an answer), links when they go to the web, a mail
address or a heading of the page; nothing else the page could fetch or run survives. Outputs reach these
filters already reduced to the mimetypes and metadata a page may show (grading/safe_outputs.py), and the
instructor's server runs none of what cleaning might miss (grading/page_policy.py).
"""
import re

import nh3
from jinja2 import pass_context
from nbconvert.filters.markdown_mistune import IPythonRenderer, InvalidNotebook, MarkdownWithMath

# nh3's defaults, minus image maps and the `cite` attributes: every URL a page keeps is one this module chose
TAGS = nh3.ALLOWED_TAGS - {"area", "map"}
ATTRIBUTES = {tag: names - {"cite"} for tag, names in nh3.ALLOWED_ATTRIBUTES.items()} | {"*": {"class", "title"}}
INLINE_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.IGNORECASE)
LINK = re.compile(r"(https?:|mailto:|#)", re.IGNORECASE)


def kept_url(tag, attribute, value):
    """An image's source only as inline data, a link only to the web, mail or the page itself: never a
    URL of the server the page is on, which the browser would fetch with the instructor's session."""
    if (tag, attribute) == ("img", "src"):
        return value if INLINE_IMAGE.match(value.strip()) else None
    if attribute == "href":
        return value if LINK.match(value.strip()) else None
    return value


def clean_html(html):
    """`html` with only inert content left: no scripts, event handlers, styles, frames, forms or
    server URLs (the `clean_html` filter of nbconvert's templates)."""
    html = html.decode() if isinstance(html, bytes) else str(html)
    return nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, attribute_filter=kept_url,
                     url_schemes={"http", "https", "mailto", "data"}, link_rel="noopener noreferrer nofollow")


class CellRenderer(IPythonRenderer):
    """nbconvert's renderer, except that an image of a missing attachment (one a student named but never
    attached, or one grading/safe_outputs.py left out) shows nothing instead of failing the whole page."""

    def image(self, text, url, title=None):
        try:
            return super().image(text, url, title)
        except InvalidNotebook:
            return ""


@pass_context
def markdown2html(context, source):
    """A markdown cell rendered as nbconvert's HTMLExporter renders it (math kept for MathJax, pasted
    images inline), then cleaned."""
    cell = context.get("cell", {})
    path = context.get("resources", {}).get("metadata", {}).get("path", "")
    renderer = CellRenderer(escape=False, attachments=cell.get("attachments", {}), path=path)
    return clean_html(MarkdownWithMath(renderer=renderer).render(source))


# c.HTMLExporter.filters: the names nbconvert's and nbgrader's templates call, mapped to this module's
FILTERS = {"markdown2html": f"{__name__}.markdown2html", "clean_html": f"{__name__}.clean_html"}
