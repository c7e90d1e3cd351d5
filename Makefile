# Quick start: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cuda,test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m tileir demo

test: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(PY) -m pytest -q -n 2
	$(PY) -m tileir ledger --quiet

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
