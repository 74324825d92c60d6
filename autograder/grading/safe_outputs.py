"""A student's outputs reduced to what an instructor's page may show, before nbconvert's templates see them.

nbconvert's HTML templates write some output metadata into attributes without quotes or checks: an
`image/png` or `image/jpeg` output's `width` and `height` go in bare (`width={{ width }}`, so
`"1 onerror=..."` adds an event handler), its `filenames` become the image's URL on the server, and
`text/html`'s `isolated` puts the HTML into a frame. Every output mimetype the templates know has its own
path into the page (JavaScript as a `<script>`, widget state, ...), and a mimetype spelled in another case
escapes every check that compares names exactly.

So every page made from a student's notebook (formgrader's and the feedback, through
`c.HTMLExporter.preprocessors` in course_config.configure_nbgrader) keeps only the mimetypes in
SHOWN_MIMETYPES, named without regard to case and kept under their usual name, each value a string
(images: base64 text), and of the metadata only an image's `width` and `height` as positive integers, its
`unconfined` flag and its `alt` text (which the templates quote and escape). A markdown cell keeps only
image attachments, as base64. The notebook in autograded/ is left as the kernel made it.
"""
import re

import nbformat
from nbconvert.preprocessors import Preprocessor

# What formgrader and the feedback show of an output: text, cleaned HTML and markdown (grading/safe_html.py),
# LaTeX (escaped), and pictures. Never JavaScript, widgets, or JSON the templates would hand to a script.
SHOWN_MIMETYPES = ("text/plain", "text/html", "text/markdown", "text/latex", "image/svg+xml", "image/png", "image/jpeg")
BITMAPS = ("image/png", "image/jpeg")
# A markdown cell's attachments, which nbconvert inlines as data: URLs of an <img> (where SVG runs nothing)
ATTACHMENT_MIMETYPES = ("image/svg+xml", "image/png", "image/jpeg", "image/gif", "image/webp")
BASE64_ATTACHMENTS = ATTACHMENT_MIMETYPES     # an attachment is stored as base64, whatever its type
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")


def text(value):
    """A string as nbformat stores it (one string or a list of lines), or None for anything else."""
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "".join(value)
    return value if isinstance(value, str) else None


def shown_data(data, mimetypes=SHOWN_MIMETYPES, base64_types=BITMAPS):
    """{usual mimetype: string} of the entries of `data` whose mimetype, in any case, is one of `mimetypes`;
    those of `base64_types` only as base64 text. The usual spelling wins over another case of the same name."""
    kept = {}
    for name, value in sorted(data.items(), key=lambda item: item[0] not in mimetypes):
        mimetype, value = str(name).lower(), text(value)
        if mimetype in mimetypes and mimetype not in kept and value is not None:
            if mimetype not in base64_types or BASE64.fullmatch(value):
                kept[mimetype] = value
    return kept


def positive_integer(value):
    """`value` as a positive integer (an int, or digits), else None: never text that could leave an attribute."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value > 0 else None


def shown_metadata(metadata, data):
    """Of an output's metadata, only each kept bitmap's size, `unconfined` flag and alt text, validated."""
    metadata = metadata if isinstance(metadata, dict) else {}
    shown = {}
    for mimetype in BITMAPS:
        if mimetype not in data:
            continue
        own = next((v for k, v in metadata.items() if str(k).lower() == mimetype and isinstance(v, dict)), {})
        kept = {key: positive_integer(own.get(key, metadata.get(key))) for key in ("width", "height")}
        if own.get("unconfined", metadata.get("unconfined")) is True:
            kept["unconfined"] = True
        alt = own.get("alt", metadata.get("alt"))
        if isinstance(alt, str):
            kept["alt"] = alt
        kept = {key: value for key, value in kept.items() if value is not None}
        if kept:
            shown[mimetype] = kept
    return shown


def shown_output(output):
    """The output as the page may show it, or None when nothing of it may be shown."""
    kind = output.get("output_type")
    if kind == "stream":
        body = text(output.get("text"))
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return None if body is None else {"output_type": kind, "name": name, "text": body}
    if kind == "error":
        traceback = output.get("traceback")
        return {"output_type": kind, "ename": text(output.get("ename")) or "", "evalue": text(output.get("evalue")) or "",
                "traceback": [line for line in traceback if isinstance(line, str)] if isinstance(traceback, list) else []}
    if kind in ("display_data", "execute_result"):
        data = shown_data(output.get("data") if isinstance(output.get("data"), dict) else {})
        if not data:
            return None
        shown = {"output_type": kind, "data": data, "metadata": shown_metadata(output.get("metadata"), data)}
        if kind == "execute_result":
            count = output.get("execution_count")
            shown["execution_count"] = count if isinstance(count, int) and not isinstance(count, bool) else None
        return shown
    return None


class ShownOutputsOnly(Preprocessor):
    """Every output reduced to its shown mimetypes and validated metadata; markdown attachments to images."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            kept = (shown_output(output) for output in cell.get("outputs", []) if isinstance(output, dict))
            cell.outputs = [nbformat.from_dict(output) for output in kept if output is not None]
        if "attachments" in cell:
            attachments = cell.attachments if isinstance(cell.attachments, dict) else {}
            cell.attachments = {name: nbformat.from_dict(kept) for name, bundle in attachments.items() if isinstance(bundle, dict)
                                for kept in [shown_data(bundle, ATTACHMENT_MIMETYPES, BASE64_ATTACHMENTS)] if kept}
        return cell, resources
