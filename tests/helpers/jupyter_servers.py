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


PORT_TAKEN = "no available port could be found"     # the server's last words when its port was taken meanwhile
STARTS = 5                                           # ports tried


@contextlib.contextmanager
def serving(root, tmp_path, env, app="server"):
    """(base URL, token) of `jupyter <app>` started in `root` and serving it, with `env`; stopped on leaving.
    Its log is tmp_path/<app>.log, quoted when it fails to start.

    The port is free when chosen, but another process (another test run on the machine) may take it before
    the server binds it: the server then exits rather than move to another port (`port_retries=0`, else this
    would wait on a port where another run's server answers), and starts again on a new one."""
    token, log_path = secrets.token_hex(16), tmp_path / f"{app}.log"
    for _ in range(STARTS):
        port = free_port()
        with log_path.open("w") as log:
            server = subprocess.Popen([sys.executable, "-m", "jupyter", app, "--no-browser", f"--port={port}",
                                       "--ServerApp.port_retries=0", "--ServerApp.ip=127.0.0.1",
                                       f"--ServerApp.token={token}", "--allow-root", f"--ServerApp.root_dir={root}"],
                                      cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            if started(server, base, token, log_path, app):
                yield base, token
                return
        finally:
            stop(server)
    raise RuntimeError(f"jupyter {app} found no free port in {STARTS} tries:\n" + log_path.read_text())


def started(server, base, token, log_path, app):
    """Whether the server answers (within minutes: JupyterLab starts slowly on a busy machine); False when it
    exited because its port was taken."""
    for _ in range(600):
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            return True
        except OSError:
            if server.poll() is not None:
                if PORT_TAKEN in log_path.read_text():
                    return False
                raise RuntimeError(f"jupyter {app} exited:\n" + log_path.read_text()) from None
            time.sleep(0.5)
    raise RuntimeError(f"jupyter {app} did not start:\n" + log_path.read_text())


def stop(server):
    server.terminate()
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
