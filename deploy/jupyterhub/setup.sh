#!/usr/bin/env bash
# The course on a JupyterHub on this machine (docs/jupyterhub.md). Run as root:
#
#   deploy/jupyterhub/setup.sh INSTRUCTOR --chapters ch01 ch02 ch03 --solutions ch01 ch02
#
# INSTRUCTOR is the Linux user who owns this course folder; what follows it is `python -m autograder publish`'s
# choice of released chapters (and solutions), which the students' environment is built from. Run it again
# after releasing a chapter. It
#   - makes the instructor's home and course folder private (0700): students cannot read source/, solutions/,
#     the gradebook or the grading code;
#   - builds the instructor's environment in the course folder (.venv, `make setup` + the pinned jupyterhub)
#     and the students' (STUDENTS_ENV, root's, readable by all) from the published tree, not editable;
#   - writes each environment's etc/jupyter and the hub's jupyterhub_config.py (`python -m autograder hub`);
#   - creates the students' group, nbgrader's exchange (world-writable, sticky) and the hub's folder (root's).
# Settings (environment variables): PYTHON (a Python every user can read: Debian's), STUDENTS_ENV, HUB_DIR,
# EXCHANGE, HUB_IP, HUB_PORT.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "setup.sh: run as root (it creates users' environments and folders)" >&2; exit 1; }
[ $# -ge 2 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
instructor=$1; shift
COURSE=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3.11}
HUB_DIR=${HUB_DIR:-/srv/jupyterhub}
EXCHANGE=${EXCHANGE:-/srv/nbgrader/exchange}
HUB_IP=${HUB_IP:-127.0.0.1}
HUB_PORT=${HUB_PORT:-8000}
id "$instructor" >/dev/null
"$PYTHON" -c 'import ensurepip, venv' || { echo "setup.sh: $PYTHON cannot make environments (apt-get install python3-venv)" >&2; exit 1; }
command -v configurable-http-proxy >/dev/null ||
    { echo "setup.sh: no configurable-http-proxy (apt-get install nodejs npm; npm install -g configurable-http-proxy@5.3.0)" >&2; exit 1; }
as_instructor() { (cd "$COURSE" && runuser -u "$instructor" -- env -i HOME="$home" USER="$instructor" LANG=C.UTF-8 \
                    PATH="$COURSE/.venv/bin:/usr/bin:/bin" "$@"); }

# The instructor's home and course folder: private.
home=$(getent passwd "$instructor" | cut -d: -f6)
chown -R "$instructor": "$COURSE"
chmod 0700 "$home" "$COURSE"

# The instructor's environment, built by root (whose pip cache it uses), owned by the instructor. jupyterhub
# brings back rfc3987-syntax, which `make setup` removes (Makefile says why).
make -C "$COURSE" --quiet setup PYTHON="$PYTHON"
"$COURSE/.venv/bin/python" -m pip install --quiet -r "$COURSE/deploy/jupyterhub/requirements.txt"
"$COURSE/.venv/bin/python" -m pip uninstall --quiet --yes rfc3987-syntax
chown -R "$instructor": "$COURSE"

# The configuration files and the students' distribution, written by the instructor.
course_id=$(as_instructor python -c 'import course_config; print(course_config.COURSE_ID)')
STUDENTS_ENV=${STUDENTS_ENV:-/opt/$course_id/students}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
chown "$instructor": "$stage"
as_instructor python -m autograder hub "$stage/hub" --instructor "$instructor" --students-env "$STUDENTS_ENV" \
    --hub-dir "$HUB_DIR" --exchange "$EXCHANGE" --ip "$HUB_IP" --port "$HUB_PORT"
as_instructor python -m autograder publish "$stage/published" "$@"

# The students' environment: the published package installed from its tree (not editable), root's.
rm -rf "$STUDENTS_ENV"
"$PYTHON" -m venv "$STUDENTS_ENV"
"$STUDENTS_ENV/bin/python" -m pip install --quiet -r "$stage/hub/students/requirements.txt" "$stage/published"
"$STUDENTS_ENV/bin/python" -m pip uninstall --quiet --yes rfc3987-syntax
cp -r "$stage/hub/students/etc/." "$STUDENTS_ENV/etc/"
chmod -R a+rX,go-w "$STUDENTS_ENV"

cp -r "$stage/hub/instructor/etc/." "$COURSE/.venv/etc/"
chown -R "$instructor": "$COURSE/.venv/etc"

# The hub's own folder (its database, cookie secret and admin token): root's alone.
install -d -m 0700 "$HUB_DIR"
install -m 0600 "$stage/hub/jupyterhub_config.py" "$HUB_DIR/jupyterhub_config.py"
[ -s "$HUB_DIR/admin-token" ] || (umask 077 && "$PYTHON" -c 'import secrets; print(secrets.token_hex(32))' > "$HUB_DIR/admin-token")

# Who may log in besides the instructor; nbgrader's exchange, where every user writes (sticky: nobody removes
# what another made).
groupadd -f "$course_id-students"
install -d -m 0755 "$(dirname "$EXCHANGE")"
install -d -m 1777 "$EXCHANGE"

cat <<EOF
The hub is set up. Add each student:   useradd -m -K HOME_MODE=0700 -G $course_id-students NAME && passwd NAME
Start the hub (as root):              cd $HUB_DIR && $STUDENTS_ENV/bin/jupyterhub -f jupyterhub_config.py
Then open http://$HUB_IP:$HUB_PORT/ and log in as $instructor.
EOF
