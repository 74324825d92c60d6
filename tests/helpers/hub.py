"""A real JupyterHub for the course on this machine, set up by deploy/jupyterhub/setup.sh as an instructor
would: Linux users (an instructor, three students), the two environments on Debian's own Python, PAM,
the LocalProcessSpawner and configurable-http-proxy on loopback. Driven through the hub's REST API, each
user's own Jupyter server, and commands run as the user (`runuser`) where a person would use a terminal."""
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from helpers.course_paths import ROOT, course_files

DEBIAN_PYTHON = "/usr/bin/python3.11"
PREFIX = "bghub"                 # every Linux user the hub test makes starts with it (one hub test at a time:
                                 # tests/system/test_jupyterhub.py's fixture holds a machine-wide lock)
INSTRUCTOR = f"{PREFIX}-teacher"
STUDENTS = {kind: f"{PREFIX}-{kind}" for kind in ("perfect", "partial", "untouched")}
PASSWORD = "a-passphrase-for-the-hub-test"
RELEASED = ["--chapters", "ch01", "ch02", "ch03", "--solutions", "ch01", "ch02"]


def missing_machinery():
    """Why the hub cannot be set up here, or None."""
    if os.geteuid() != 0:
        return "the hub needs root (it creates Linux users and starts their servers)"
    if not shutil.which("useradd"):
        return "no useradd on this machine: the hub needs Linux users"
    return None


def free_port():
    """A port p with p, p+1 (the proxy's API) and p+81 (the hub) all free on loopback."""
    for port in range(18000, 19000, 100):
        try:
            for p in (port, port + 1, port + 81):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port for the hub between 18000 and 19000")


def run(*args, check=True, **kwargs):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kwargs)
    if check and done.returncode:
        raise AssertionError(f"{' '.join(map(str, args))} failed ({done.returncode}):\n{done.stdout[-4000:]}\n"
                             f"{done.stderr[-4000:]}")
    return done


def remove_users():
    for name in [INSTRUCTOR, *STUDENTS.values()]:
        if run("id", name, check=False).returncode == 0:
            run("userdel", "--force", name, check=False)


@dataclass
class Hub:
    base: Path                           # root's folder holding the students' env, the exchange, the hub's state
    port: int
    course: Path                         # the instructor's private course folder
    process: subprocess.Popen | None = None
    tokens: dict = field(default_factory=dict)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def hub_dir(self):
        return self.base / "hub"

    @property
    def students_env(self):
        return self.base / "students"

    @property
    def exchange(self):
        return self.base / "exchange"

    def admin(self, method, path, **kwargs):
        token = (self.hub_dir / "admin-token").read_text().strip()
        reply = requests.request(method, f"{self.url}/hub/api{path}", headers={"Authorization": f"token {token}"},
                                 timeout=60, **kwargs)
        reply.raise_for_status()
        return reply.json() if reply.content else None

    def start_server(self, user):
        self.admin("POST", f"/users/{user}/server")
        for _ in range(600):
            model = self.admin("GET", f"/users/{user}")
            if model["servers"].get("", {}).get("ready"):
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"{user}'s server did not start; the hub's log:\n{self.log()[-4000:]}")
        self.tokens[user] = self.admin("POST", f"/users/{user}/tokens", json={"note": "hub test"})["token"]

    def as_user(self, user, method, path, owner=None, **kwargs):
        """A request to `owner`'s server (default: the user's own) with `user`'s token."""
        return requests.request(method, f"{self.url}/user/{owner or user}{path}", allow_redirects=False,
                                headers={"Authorization": f"token {self.tokens[user]}"}, timeout=600, **kwargs)

    def command(self, user, *args, cwd=None, check=True, env=None):
        """Run a command as `user` in a clean environment, as their terminal on the hub would."""
        home = Path(pwd.getpwnam(user).pw_dir)
        venv = self.course / ".venv" if user == INSTRUCTOR else self.students_env
        variables = {"HOME": str(home), "USER": user, "LANG": "C.UTF-8", "PATH": f"{venv}/bin:/usr/bin:/bin",
                     **(env or {})}
        return run("runuser", "-u", user, "--", "env", "-i", *[f"{k}={v}" for k, v in variables.items()], *args,
                   cwd=cwd or home, check=check)

    def log(self):
        return (self.base / "hub.log").read_text(errors="replace")


def set_up(base):
    """Users, the course folder in the instructor's home, deploy/jupyterhub/setup.sh, the hub started."""
    remove_users()
    homes = base / "home"
    homes.mkdir(mode=0o755)
    run("useradd", "-m", "-d", homes / INSTRUCTOR, "-s", "/bin/bash", INSTRUCTOR)
    course = homes / INSTRUCTOR / "babygrad-course"
    for name in course_files(untracked=True):
        (course / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, course / name)
    hub = Hub(base, free_port(), course)
    settings = {"PYTHON": DEBIAN_PYTHON, "STUDENTS_ENV": hub.students_env, "HUB_DIR": hub.hub_dir,
                "EXCHANGE": hub.exchange, "HUB_PORT": hub.port}
    run("bash", course / "deploy/jupyterhub/setup.sh", INSTRUCTOR, *RELEASED,
        env={**os.environ, **{k: str(v) for k, v in settings.items()}})
    for student in STUDENTS.values():
        run("useradd", "-m", "-d", homes / student, "-K", "HOME_MODE=0700", "-s", "/bin/bash", "-G",
            "babygrad-students", student)
    for user in [INSTRUCTOR, *STUDENTS.values()]:
        run("chpasswd", input=f"{user}:{PASSWORD}\n")
    # The hub as root would start it: nothing of this test's environment (its BLAS settings) passed on.
    clean = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/root"}
    log = open(base / "hub.log", "w")
    hub.process = subprocess.Popen([hub.students_env / "bin" / "jupyterhub", "-f", "jupyterhub_config.py"],
                                   cwd=hub.hub_dir, env=clean, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(240):
        try:
            if requests.get(f"{hub.url}/hub/api", timeout=5).ok:
                return hub
        except requests.ConnectionError:
            pass
        if hub.process.poll() is not None:
            break
        time.sleep(0.5)
    raise AssertionError(f"the hub did not start:\n{hub.log()[-4000:]}")


def make_base():
    """Root's folder for everything the hub test makes (homes, environments, exchange, the hub's state): a
    tmpfs of its own where the machine allows, so that removing a gigabyte of environments costs nothing."""
    base = Path(tempfile.mkdtemp(prefix="babygrad-hub-", dir="/srv"))
    run("mount", "-t", "tmpfs", "-o", "size=6g,mode=0755", "tmpfs", base, check=False)
    base.chmod(0o755)
    return base


def remove_base(base):
    if run("mountpoint", "-q", base, check=False).returncode == 0:
        run("umount", "--lazy", base, check=False)
    shutil.rmtree(base, ignore_errors=True)


def tear_down(hub):
    """Stop the hub (it stops the users' servers and its proxy), then remove the users and the groups."""
    if hub and hub.process:
        hub.process.terminate()
        try:
            hub.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            hub.process.kill()
    remove_users()
    run("groupdel", "babygrad-students", check=False)
