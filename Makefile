# gangsched developer commands. Everything runs from the project's own virtualenv (.venv),
# created and filled on first use, so `make run` and `make test` work on a fresh clone.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8000
NODES  ?= 16
# NODES=64: a demo fleet of 64 nodes; NODES=nodes.yaml: the nodes of that Node manifest (both
# only when the cluster has no nodes yet).
NODES_ARG = $(if $(shell echo '$(NODES)' | grep -Ex '[0-9]+'),--nodes $(NODES),--nodes-file $(NODES))

.PHONY: run test lint format help screenshot bytecode

help:
	@echo "make run   - start the web server, a Celery worker and beat on 127.0.0.1:$(PORT)"
	@echo "make test  - ruff, then the whole test suite (one worker per CPU) against the local PostgreSQL and Redis"
	@echo "make lint  - ruff only"
	@echo "make bytecode - write the bytecode caches the CLI starts from (make run does it)"
	@echo "make screenshot - regenerate the pictures of the pages in docs/img/ (Chromium, a database of its own, ~6 min: the demo runs 5 first)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Stamp files: reinstall only when a requirements file changed.
$(VENV)/.installed-runtime: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@ $(VENV)/.installed-runtime

# This checkout's own random SECRET_KEY, read by the settings when SECRET_KEY is unset
# (gangsched/settings/secret_key.py), so a local install needs no configuration.
.run/secret_key: | $(BIN)/python
	@mkdir -p .run
	@umask 077 && $(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(50))' > $@.tmp && mv $@.tmp $@

# The project's bytecode caches, written even where PYTHONDONTWRITEBYTECODE is set (as in many
# containers): without them every CLI command compiles the modules it imports, a fifth of its time.
# Quick when they are up to date (compileall compares each source's time and size).
bytecode: $(VENV)/.installed-runtime
	@$(BIN)/python -m compileall -q gangsched scheduler_core dashboard manage.py

run: $(VENV)/.installed-runtime .run/secret_key bytecode
	@$(BIN)/python manage.py check_services
	$(BIN)/python scripts/run.py --port $(PORT) $(NODES_ARG)

# One pytest-xdist worker per CPU, each on databases of its own (tests/settings.py); the tests
# that share something run on one worker (tests/conftest.py XDIST_GROUPS). The 20 slowest last.
PYTEST_ARGS ?= -n auto --dist loadgroup --durations=20

test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .

# The pictures of the dashboard's pages (the README's and docs/dashboard.md's), made with the browser
# tests' Chromium on a demo that has run for a while, in a database of its own (scripts/screenshot.py).
screenshot: $(VENV)/.installed-dev .run/secret_key
	$(BIN)/python scripts/screenshot.py
