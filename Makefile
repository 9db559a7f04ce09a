# Quick start: `make fuzz` and `make test`. Both build .venv in the repo first (a no-op when
# pyproject.toml has not changed since the last install).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
BIN := $(VENV)/bin

SKIPS := .pytest_cache/skip-summary.txt

.PHONY: venv tools test test-all fuzz lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# The external tools the tests use (Debian llvm-22, llvm-19, chromium, cvise; the ptxas wheel),
# installed once before pytest starts, by one process under a lock: pytest-xdist workers that
# each installed on first use raced for dpkg's lock. A no-op when all are there; exit 1 when
# apt answered and an install failed; a tool that cannot be had here is reported, and its
# tests skip with the reason (tests/install_tools.py).
tools: $(STAMP)
	$(BIN)/python -m tests.install_tools test

# The test command CI runs (.ci/run). Exit 5 (no tests collected) is a failure like any other.
# RGPU_TOOLS_STEP: the tools step ran, so the tests do not ask apt again (tests/toolchain.py).
# The last line is what was skipped and why (tests/conftest.py).
test: tools
	rm -f $(SKIPS)
	HYPOTHESIS_PROFILE=ci RGPU_TOOLS_STEP=1 RGPU_SKIP_SUMMARY=$(SKIPS) \
	  $(BIN)/python -m pytest -n auto --dist loadgroup -m 'not slow' -q
	$(BIN)/ruff check rgpu_fuzz generators oracles triage campaigns tests fuzz ci
	$(BIN)/lint-imports
	$(BIN)/mypy
	@cat $(SKIPS)

test-all: tools
	rm -f $(SKIPS)
	RGPU_TOOLS_STEP=1 RGPU_SKIP_SUMMARY=$(SKIPS) $(BIN)/python -m pytest -n auto -q
	@cat $(SKIPS)

# A short campaign on the default pipelines; the summary is printed at the end. Debian
# llvm-22's llc is installed first: the campaign rechecks known LLVM bugs with it.
fuzz: $(STAMP)
	$(BIN)/python -m tests.install_tools fuzz
	$(BIN)/rgpu-fuzz campaign --time 2m --out runs/make-fuzz

# `bench reduce` compares with C-Vise (Debian package cvise), installed here when missing.
bench: $(STAMP)
	command -v cvise >/dev/null || (apt-get install -y cvise >/dev/null 2>&1 || sudo apt-get install -y cvise) || true
	$(BIN)/rgpu-fuzz bench --out bench.json

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
