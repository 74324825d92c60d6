"""The instructor's Jupyter server sends every page made from a student's work with a policy under which
none of the student's script can run with the instructor's origin, whatever the cleaning missed.

Enabled as a Jupyter server extension wherever the course's package is installed (pyproject.toml's
data files; `make setup` copies the same file into .venv; `jupyter server extension enable
autograder.grading.page_policy` or `c.ServerApp.jpserver_extensions` elsewhere), it sets the
Content-Security-Policy of three kinds of response:

* Files from a student's work: what formgrader serves from a submission (SubmissionFilesHandler,
  `formgrader/submissions/<id>/<path>`), and what the server itself serves or converts from a folder named
  like nbgrader's submitted, autograded or feedback folders (`/files/...`, `/nbconvert/...`), among them the
  feedback pages. None needs a script, so each gets `sandbox` without `allow-scripts` or
  `allow-same-origin`: no script runs, and the page has no origin of the server's to act with.
* Formgrader's submission view (`formgrader/submissions/<id>/`). It runs nbgrader's own grading scripts,
  which save scores through formgrader's API with the instructor's session, so a sandbox would end manual
  grading; rendering the notebook in a sandboxed frame instead would need nbgrader's template and scripts
  rewritten, because each score box sits inside the cell it grades. So the view gets a strict policy: a
  fresh nonce per response, given to the scripts and styles of the page's <head>, which nbgrader's template
  writes before any cell (the student's work is all in the body), and loaded only from formgrader's static
  folder; no 'unsafe-inline', no 'unsafe-eval', and only the two inline handlers of nbgrader's name toggle,
  by hash. A script, handler, `javascript:` URL, frame, plugin or `<base>` in the student's part of the
  page cannot run or load, a form can post only to this server (without the XSRF token Jupyter asks of a
  post), and only nbgrader's scripts can fetch. A `<meta http-equiv="refresh">`, which no policy stops, is
  renamed in the body. MathJax, which nbconvert loads from a CDN, gets no nonce: math shows as TeX.
* Every policy keeps `frame-ancestors 'self'`, so formgrader still opens in JupyterLab's panel.

The policies replace the server's own Content-Security-Policy on those responses (whose `report-uri`
would have the browser post each blocked script to the server) and leave every other page alone.
"""
import base64
import hashlib
import re
import secrets
from urllib.parse import unquote

from tornado.web import OutputTransform

# nbgrader's names for the folders of students' work (CourseDirectory's defaults), and the course's folder of
# what intake set aside from a submission (<LEDGER_DIR>/refused/, grading/set_aside.py); a course's own
# names for nbgrader's are read from formgrader's settings at each request.
STUDENT_WORK_FOLDERS = ("submitted", "autograded", "feedback", "refused")
# Inline handlers and styles nbgrader's formgrade template writes itself, allowed by their hashes.
NBGRADER_HANDLERS = ("toggle_name(true);", "toggle_name(false);")
NBGRADER_STYLES = ("width: 4em;", "width: 3em;", "margin-left: 1em;")

SANDBOXED = "; ".join([
    "sandbox", "default-src 'none'", "img-src data:", "style-src 'unsafe-inline'", "base-uri 'none'",
    "form-action 'none'", "frame-ancestors 'self'",
])


def source_hash(text):
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def view_policy(nonce):
    """The submission view's policy: nbgrader's head, by `nonce`, and nothing of the student's."""
    handlers = " ".join(source_hash(text) for text in NBGRADER_HANDLERS)
    styles = " ".join(source_hash(text) for text in NBGRADER_STYLES)
    return "; ".join([
        "default-src 'none'", f"script-src 'nonce-{nonce}' 'unsafe-hashes' {handlers}",
        f"style-src 'nonce-{nonce}' 'unsafe-hashes' {styles}", "img-src data:", "font-src 'self'",
        "connect-src 'self'", "object-src 'none'", "frame-src 'none'", "base-uri 'none'", "form-action 'self'",
        "frame-ancestors 'self'",
    ])


HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)
TAG = re.compile(rb"<(script|style|link)\b([^>]*)>", re.IGNORECASE)
SOURCE = re.compile(rb"""\b(?:src|href)\s*=\s*["']([^"']*)["']""", re.IGNORECASE)
# The one thing in a page's body that makes the browser load a URL by itself whatever the policy says:
# <meta http-equiv="refresh">. Renamed, the element is an unknown one, and inert.
META = re.compile(rb"<(meta)\b", re.IGNORECASE)


def with_nonces(page, nonce, static_prefix):
    """`page` with `nonce` on each <script>, <style> and stylesheet <link> of its <head> that is inline or
    comes from `static_prefix` (formgrader's static folder); in the body, nothing gets the nonce, and any
    <meta> is made an unknown element. A page without a head is left as it is (its scripts never run)."""
    end = HEAD_END.search(page)
    if end is None:
        return page

    def nonced(tag):
        source = SOURCE.search(tag.group(2))
        if source and not source.group(1).startswith(static_prefix):
            return tag.group(0)
        return b"<%s nonce=\"%s\"%s>" % (tag.group(1), nonce.encode(), tag.group(2))

    return TAG.sub(nonced, page[:end.start()]) + META.sub(b"<x-\\1", page[end.start():])


class PagePolicy(OutputTransform):
    """Sets the policy of each response to a request for a student's page, by the request's path."""

    def __init__(self, request, settings):
        super().__init__(request)
        self.request, self.settings = request, settings

    def student_work_folders(self):
        formgrader = self.settings.get("nbgrader_formgrader")
        coursedir = getattr(formgrader, "coursedir", None)
        names = [getattr(coursedir, f"{kind}_directory", None) for kind in STUDENT_WORK_FOLDERS]
        return {name.lower() for name in (*STUDENT_WORK_FOLDERS, *names) if isinstance(name, str)}

    def kind(self):
        """"view", "files" or None: which policy the requested path gets."""
        base = self.settings.get("base_url", "/").rstrip("/") + "/"
        path = unquote(self.request.path)
        if not path.startswith(base):
            return None
        parts = [part for part in path[len(base):].split("/")]
        if parts[:2] == ["formgrader", "submissions"] and len(parts) > 2:
            is_view = len(parts) == 3 or (len(parts) == 4 and parts[3] == "")
            return "view" if is_view and parts[2] != "components" else "files"
        if parts[0] in ("files", "nbconvert"):
            folders = self.student_work_folders()
            if any(part.lower() in folders for part in parts[1:]):
                return "files"
        return None

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        kind = self.kind()
        if kind == "files":
            headers["Content-Security-Policy"] = SANDBOXED
        elif kind == "view":
            nonce = secrets.token_urlsafe(18)
            headers["Content-Security-Policy"] = view_policy(nonce)
            headers["Cache-Control"] = "no-store"
            headers.pop("Etag", None)
            if finishing and status_code == 200 and headers.get("Content-Type", "").startswith("text/html"):
                static = self.settings.get("base_url", "/").rstrip("/") + "/formgrader/static/"
                chunk = with_nonces(chunk, nonce, static.encode())
                if "Content-Length" in headers:
                    headers["Content-Length"] = str(len(chunk))
        return status_code, headers, chunk


def _jupyter_server_extension_points():
    return [{"module": "autograder.grading.page_policy"}]


def _load_jupyter_server_extension(serverapp):
    """Sets the policies on every response the server sends, ahead of any compression of the body."""
    settings = serverapp.web_app.settings
    serverapp.web_app.transforms.insert(0, lambda request: PagePolicy(request, settings))
    serverapp.log.info("autograder.grading.page_policy: students' pages are served without their scripts")
