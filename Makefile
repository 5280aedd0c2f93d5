# The two commands: `make demo` (install + main job on built-in data) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-all gpu-test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[plot]'
	touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/python examples/convergence.py --demo

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest

test-all: $(VENV)/.installed-test
	$(BIN)/python -m pytest -m ""

# On a machine with a GPU and the packages preinstalled (no venv, no network needed).
gpu-test:
	PYTHONPATH=. $(PYTHON) -m pytest -m gpu

clean:
	rm -rf $(VENV) bench_results .pytest_cache
