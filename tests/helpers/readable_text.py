"""Files as a reader sees them, for the tests that prove no solution or hidden test leaks into what
students get: every string of a notebook (attachments decoded), and a feedback page without its tags."""
import base64
import html
import json
import re

from autograder.grading.feedback_guard import strings_in


def file_text(path):
    """The file's text; for a notebook, every string in it (cell sources joined, text attachments decoded)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        notebook = json.loads(text)
        for cell in notebook["cells"]:           # a cell's source is a list of line pieces: join them
            cell["source"] = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for attachment in (a for c in notebook["cells"] for a in c.get("attachments", {}).values()):
            for mime, data in attachment.items():
                if not mime.startswith("text/"):
                    attachment[mime] = base64.b64decode(data).decode("utf-8", "replace")
        text = "\n".join(strings_in(notebook))
    return text


def visible_text(path):
    """The feedback page as a reader sees it: tags removed (code is split into highlighted spans)."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))
