"""Fresh virtual environments, as a student's machine, Binder or Colab would have them, and a way to
execute notebooks inside one. Nothing from the test's own environment leaks in: no PYTHONPATH, the
environment's own `bin/` first on PATH, and a private Jupyter data folder (no stray kernelspecs)."""
import functools
import glob
import http.server
import os
import shutil
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

EXECUTE = """
import sys, nbformat
from nbclient import NotebookClient
source, target, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
nb = nbformat.read(source, as_version=4)
client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                        resources={"metadata": {"path": str(__import__("pathlib").Path(source).parent)}})
try:
    client.execute()
finally:
    nbformat.write(nb, target)
"""


class FreshEnv:
    def __init__(self, root):
        self.root = Path(root)
        self.bin = self.root / "bin"
        self.python = self.bin / "python"

    def env(self, **extra):
        # PYTHONDONTWRITEBYTECODE goes too: installed with --no-compile, an environment that may not write
        # its bytecode compiles jupyter's modules again in every process (about 3.5 s a notebook)
        dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")
        env = {k: v for k, v in os.environ.items() if k not in dropped}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["JUPYTER_DATA_DIR"] = str(self.root / "jupyter-data")
        env["JUPYTER_CONFIG_DIR"] = str(self.root / "jupyter-config")
        env.update(extra)
        return env

    def run(self, *args, cwd=None, timeout=900, **extra):
        done = subprocess.run([str(a) for a in args], cwd=cwd, env=self.env(**extra),
                              capture_output=True, text=True, timeout=timeout)
        if done.returncode:
            raise AssertionError(f"{' '.join(map(str, args))} failed ({done.returncode}):\n"
                                 f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done

    def pip_install(self, *args, cwd=None):
        """pip install, leaving bytecode to be compiled as modules are first imported: compiling every
        installed module up front (pip's default) took a fifth of installing requirements.txt."""
        return self.run(self.python, "-m", "pip", "install", "--quiet", "--no-compile", *args, cwd=cwd)

    def execute(self, notebook, timeout=120, **extra):
        """Run every cell of `notebook` (errors allowed) in its folder; return the executed copy."""
        import nbformat
        target = Path(notebook).with_suffix(".executed.ipynb")
        self.run(self.python, "-c", EXECUTE, notebook, target, timeout, cwd=Path(notebook).parent, **extra)
        executed = nbformat.read(target, as_version=4)
        target.unlink()
        return executed


def create(path, python=sys.executable):
    subprocess.run([str(python), "-m", "venv", str(path)], check=True, capture_output=True)
    return FreshEnv(path)


def interpreter(version):
    """A Python of this minor version ("3.12") on this machine, or None: on PATH, or one of pyenv's."""
    candidates = [shutil.which(f"python{version}"),
                  *sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))]
    for candidate in filter(None, candidates):
        done = subprocess.run([candidate, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip() == version:
            return candidate
    return None


def errors(notebook):
    """(cell id, error name, first line of its message) of every cell that raised."""
    return [(c.id, o.ename, (o.evalue.strip().splitlines() or [""])[0])
            for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


# What a student's release notebook may legitimately raise: exercises not written yet, checks that fail.
STUDENT_ERRORS = {"NotImplementedError", "AssertionError"}


def environment_errors(notebook):
    """Errors that say the environment is incomplete rather than that exercises are unwritten.

    An import error counts wherever it stands. Any other error counts only before the first student
    error: after an unwritten exercise, a later cell may well find a name it would have defined
    (`NameError: name 'train_set' is not defined`), which is the exercise's cascade, not set-up's.
    """
    found, student_error_seen = [], False
    for cell_id, name, message in errors(notebook):
        if name in STUDENT_ERRORS:
            student_error_seen = True
        elif name in ("ImportError", "ModuleNotFoundError") or not student_error_seen:
            found.append((cell_id, name, message))
    return found


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):        # the test's stderr stays clean
        pass


@contextmanager
def serve(folder):
    """Serve `folder` over HTTP on localhost; yields the base URL."""
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
