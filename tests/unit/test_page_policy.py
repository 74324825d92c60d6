"""grading/page_policy.py in process: which of the server's responses get which policy, and which tags of
formgrader's submission view get the response's nonce. (tests/system/test_formgrader_safety.py opens the real
pages in Chromium.)"""
from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

from autograder.grading import page_policy

NONCE = "n0nce"
VIEW = b"""<!DOCTYPE html><html><head><title>autodiff</title>
<script src="/formgrader/static/node_modules/jquery/dist/jquery.min.js"></script>
<script type="text/javascript">var submission_id = "1";</script>
<script src="https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js"></script>
<style type="text/css">body {}</style>
<link rel="stylesheet" href="/formgrader/static/css/formgrade.css" />
</head><body><div id="notebook"><script>steal()</script><style>p {}</style><META http-equiv="refresh" content="0;url=/api">
<link rel="stylesheet" href="/formgrader/static/css/formgrade.css"><script src="/formgrader/static/js/formgrade.js"></script>
</div></body></html>"""


def policy_of(path, base_url="/", settings=None, body=b"", content_type="text/html; charset=UTF-8"):
    """(headers, body) of a response to GET `path` after the page policy."""
    transform = page_policy.PagePolicy(HTTPServerRequest(start_line=RequestStartLine("GET", path, "HTTP/1.1"),
                                                       headers=HTTPHeaders({"Host": "127.0.0.1"})), {"base_url": base_url, **(settings or {})})
    headers = HTTPHeaders({"Content-Security-Policy": "frame-ancestors 'self'; report-uri /api/security/csp-report",
                           "Content-Type": content_type, "Content-Length": str(len(body)), "Etag": '"x"'})
    _, headers, body = transform.transform_first_chunk(200, headers, body, True)
    return headers, body


def test_nbgraders_head_gets_the_nonce_and_the_students_body_never_does():
    page = page_policy.with_nonces(VIEW, NONCE, b"/formgrader/static/")
    head, body = page.split(b"</head>")
    assert head.count(b'nonce="n0nce"') == 4, head       # jquery, the inline settings, the style, the stylesheet
    assert b'<script nonce="n0nce" src="https://cdnjs' not in head, "MathJax from a CDN should get no nonce"
    assert b"nonce" not in body, f"a tag in the notebook's body got the nonce: {body}"
    assert b'<x-META http-equiv="refresh"' in body, "a refresh in the body should be made inert"


def test_the_submission_view_gets_a_fresh_nonce_each_response_and_no_inline_script():
    (first, page), (second, _) = (policy_of("/formgrader/submissions/abc123/", body=VIEW) for _ in range(2))
    policy = first["Content-Security-Policy"]
    nonce = policy.split("'nonce-")[1].split("'")[0]
    assert nonce != second["Content-Security-Policy"].split("'nonce-")[1].split("'")[0]
    assert f'<script nonce="{nonce}" src="/formgrader/static/'.encode() in page
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy and "report-uri" not in policy
    for directive in ("object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'self'"):
        assert directive in policy, (directive, policy)
    assert first["Content-Length"] == str(len(page)) and "Etag" not in first and first["Cache-Control"] == "no-store"


def test_files_from_students_work_are_sandboxed_without_scripts():
    sandboxed = ["/formgrader/submissions/abc123/notes.HTML", "/formgrader/submissions/abc123/sub/page.xht",
                 "/files/course/feedback/mallory/ch03/autodiff.html", "/files/autograded/mallory/ch03/diagram.SVG",
                 "/files/course/Submitted/mallory/ch03/notes.Htm", "/files/course/%66eedback/x.html",
                 "/nbconvert/html/course/autograded/mallory/ch03/autodiff.ipynb",
                 "/user/instructor/files/marks/feedback/a.html"]
    policies = {path: policy_of(path, base_url="/user/instructor/" if path.startswith("/user/") else "/")[0]
                ["Content-Security-Policy"] for path in sandboxed}
    wrong = {path: policy for path, policy in policies.items()
             if not policy.startswith("sandbox;") or "allow-" in policy or "frame-ancestors 'self'" not in policy}
    assert not wrong, wrong


def test_a_course_that_names_its_folders_otherwise_is_followed():
    class Coursedir:
        submitted_directory, autograded_directory, feedback_directory = "handed_in", "graded", "returned"

    class Formgrader:
        coursedir = Coursedir()

    headers, _ = policy_of("/files/course/returned/mallory/ch03/autodiff.html", settings={"nbgrader_formgrader": Formgrader()})
    assert headers["Content-Security-Policy"] == page_policy.SANDBOXED


def test_every_other_page_keeps_the_servers_policy():
    for path in ("/lab", "/formgrader/manage_assignments", "/formgrader/api/grade/1", "/files/notes/lecture.html",
                 "/formgrader/static/js/formgrade.js", "/tree/feedback"):
        headers, body = policy_of(path, body=VIEW)
        assert headers["Content-Security-Policy"].startswith("frame-ancestors 'self'; report-uri"), path
        assert body == VIEW, path
