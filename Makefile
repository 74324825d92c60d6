# The course's commands. On a fresh clone `make demo` and `make test` set up .venv first when it is
# missing (or when requirements.txt changed); `make setup` does only that.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# pytest-xdist workers for `make test`, which share the tests out by work stealing (see tests/conftest.py)
JOBS   ?= 2
# pytest's temporary folders: this checkout's own, one per target. pytest's default, /tmp/pytest-of-USER, is shared
# by every run on the machine and each run prunes the older ones, so a suite in another checkout could remove this
# one's fixtures. Outside the checkout, named by its path: a test's folder inside it would find the checkout's git
# and pyproject.toml. pytest empties the folder when a run starts; xdist's workers get theirs inside it.
TESTS_TMP := $(or $(TMPDIR),/tmp)/babygrad-tests-$(shell printf '%s' '$(CURDIR)' | cksum | cut -d' ' -f1)

.PHONY: setup build demo test test-fast lint lab clean

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	# jupyter-events pulls in rfc3987-syntax, whose import compiles 38 Earley grammars: 1.3 s more for every
	# process that imports jsonschema (each nbgrader command, each grading process). It only checks the
	# JSON-schema format "iri", which no schema of this stack uses; jsonschema skips that format without it.
	$(BIN)/python -m pip uninstall --quiet --yes rfc3987-syntax
	# The Jupyter server extension that serves students' pages without their scripts
	# (autograder/grading/page_policy.py): an editable install leaves out pyproject.toml's data files.
	mkdir -p $(VENV)/etc/jupyter/jupyter_server_config.d
	cp jupyter-config/jupyter_server_config.d/autograder.grading.page_policy.json $(VENV)/etc/jupyter/jupyter_server_config.d/
	touch $@

# solutions/<id>/earlier_chapters.py, which a solution notebook imports, is release/<id>/'s byte for byte (nbgrader's
# generate_solution and generate_assignment both copy source/<id>/'s): not committed, it is copied here from the
# committed one. A rule on the file (not a step of the install) keeps it current after every pull that changes
# release/'s, and costs a `cp` per chapter; the build writes it too.
SOLVED_PROVIDED := $(patsubst release/%,solutions/%,$(wildcard release/*/earlier_chapters.py))

solutions/%/earlier_chapters.py: release/%/earlier_chapters.py
	cp $< $@

setup: $(VENV)/.installed $(SOLVED_PROVIDED)   ## a virtual environment with the pinned stack and the course package; solutions/'s earlier_chapters.py

build: $(VENV)/.installed   ## every generated file: the chapters (source/, release/, solutions/), demo/submitted/ (not committed), README.md's table
	$(BIN)/python -m autograder build
	$(BIN)/python -m autograder demo-submissions
	$(BIN)/python -m autograder readme

demo: setup                 ## build, then autograde the demo submissions and print the score table
	$(BIN)/python -m autograder demo
	$(BIN)/python -m autograder readme

test: setup                 ## the test suite, what CI runs (the browser test needs Debian's chromium, grading needs bwrap)
	mkdir -p -m 0700 $(TESTS_TMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal --durations=15 --basetemp=$(TESTS_TMP)/test

test-fast: setup            ## tests/unit/: checks, judges' rules, build pieces, in process (well under a minute)
	mkdir -p -m 0700 $(TESTS_TMP)
	$(BIN)/python -m pytest -n $(JOBS) -m unit --basetemp=$(TESTS_TMP)/test-fast

lint: $(VENV)/.installed    ## ruff, and mypy on the judge's protocol and the registries, as configured in pyproject.toml
	$(BIN)/ruff check .
	$(BIN)/mypy

lab: setup                  ## JupyterLab on the student versions
	$(BIN)/jupyter lab release/

clean:                      ## nbgrader's working folders and gradebook, and the tests' temporary folders
	rm -rf submitted autograded feedback gradebook.db $(TESTS_TMP)
