"""A Jupyter server (or JupyterLab) on localhost, for tests that talk to it as a browser or an extension does."""
import contextlib
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request


def fresh_jupyter_env(tmp_path):
    """This process's environment without the tester's own Jupyter config (~/.jupyter, JUPYTER_CONFIG_PATH):
    only what the course and its virtual environment configure."""
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    return dict(env, JUPYTER_CONFIG_DIR=str(tmp_path / "jupyter-config"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(root, tmp_path, env, app="server"):
    """(base URL, token) of `jupyter <app>` started in `root` and serving it, with `env`; stopped on leaving.
    Its log is tmp_path/<app>.log, quoted when it fails to start."""
    token, port = secrets.token_hex(16), free_port()
    log_path = tmp_path / f"{app}.log"
    with log_path.open("w") as log:
        server = subprocess.Popen([sys.executable, "-m", "jupyter", app, "--no-browser", f"--port={port}",
                                   "--ServerApp.ip=127.0.0.1", f"--ServerApp.token={token}", "--allow-root",
                                   f"--ServerApp.root_dir={root}"],
                                  cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(120):
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                    break
                except OSError:
                    if server.poll() is not None:
                        raise RuntimeError(f"jupyter {app} exited:\n" + log_path.read_text()) from None
                    time.sleep(0.5)
            else:
                raise RuntimeError(f"jupyter {app} did not start:\n" + log_path.read_text())
            yield base, token
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
