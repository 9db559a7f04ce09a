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
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -n auto --dist loadgroup -m 'not slow' -q
	$(BIN)/ruff check rgpu_fuzz generators oracles triage tests fuzz
	$(BIN)/lint-imports
	$(BIN)/mypy

test-all: $(STAMP)
	$(BIN)/python -m pytest -n auto -q

# A short campaign on the default pipelines; the summary is printed at the end.
fuzz: $(STAMP)
	$(BIN)/rgpu-fuzz campaign --time 2m --out runs/make-fuzz

# `bench reduce` compares with C-Vise (Debian package cvise), installed here when missing.
bench: $(STAMP)
	command -v cvise >/dev/null || (apt-get install -y cvise >/dev/null 2>&1 || sudo apt-get install -y cvise) || true
	$(BIN)/rgpu-fuzz bench --out bench.json

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
