# Quick start: `make fuzz` and `make test`. Both build .venv in the repo first (a no-op when
# pyproject.toml has not changed since the last install).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
BIN := $(VENV)/bin

.PHONY: venv test test-all fuzz lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# The test command CI runs (.ci/run). Exit 5 (no tests collected) is a failure like any other.
test: $(STAMP)
	$(BIN)/python -m pytest -n auto -m 'not slow' -q
	$(BIN)/ruff check rgpu_fuzz generators oracles triage tests fuzz
	$(BIN)/lint-imports

test-all: $(STAMP)
	$(BIN)/python -m pytest -n auto -q

fuzz: $(STAMP)
	$(BIN)/rgpu-fuzz run corpus/*.toml

bench: $(STAMP)
	$(BIN)/rgpu-fuzz bench interp

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
