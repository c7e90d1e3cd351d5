# Quick start: `make demo` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# torch for tileir.ops and its tests: the CPU build this machine kind keeps on disk (CI's too);
# `make TORCH='torch>=2.4' test` elsewhere
TORCH ?= torch==2.13.0
DOCS_STAMP := $(VENV)/.docs-installed

.PHONY: demo test lint docs clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cuda,test]'
	$(PY) -m pip install -q '$(TORCH)'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m tileir demo

test: $(STAMP)
	$(VENV)/bin/ruff check src tests bench examples
	$(PY) -m pytest -q -n 2
	$(PY) -m tileir ledger --quiet

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench examples

# the documentation site (mkdocs.yml), built strictly: a broken link or reference fails it
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) build site src/*.egg-info .pytest_cache
