# The course's commands. `make setup` once; then `make demo`, `make test`, `make lab`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup build demo test test-fast lab clean

setup:                 ## a virtual environment with the pinned stack and the course package
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt

build:                 ## chapters/*.py → source/, release/, solutions/, demo submissions
	$(BIN)/python -m autograder build

demo:                  ## build, then autograde the demo submissions and print the score table
	$(BIN)/python -m autograder demo

test:                  ## the test suite (what CI runs; the browser test needs Debian's chromium)
	$(BIN)/python -m pytest

test-fast:             ## the suite without the slow tests (fresh environments, browser)
	$(BIN)/python -m pytest -m "not slow"

lab:                   ## JupyterLab on the student versions
	$(BIN)/jupyter lab release/

clean:                 ## nbgrader's working folders and gradebook
	rm -rf submitted autograded feedback gradebook.db
