"""Run the real `nbgrader` command line in a course folder, so its own config file applies."""
import os
import subprocess
import sys
from pathlib import Path


def nbgrader_env():
    """nbgrader shells out to `alembic` by name: put this interpreter's scripts first on PATH,
    so a virtual environment works without being activated."""
    return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


class NbgraderError(RuntimeError):
    pass


def run_nbgrader(root, *args, check=True, env=None):
    """`nbgrader ARGS` in `root` (extra environment variables in `env`); on failure, raise with nbgrader's log."""
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root,
                          env=dict(os.environ, **(env or {}), **nbgrader_env()), capture_output=True, text=True)
    if check and done.returncode != 0:
        raise NbgraderError(f"nbgrader {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done
