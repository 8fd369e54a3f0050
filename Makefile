# Everything runs from the project venv; `make test` is the README's test command.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Stamp: reinstall only when pyproject.toml changes, not on every `make test`.
STAMP := $(VENV)/.graphrun-installed

.PHONY: venv demo test bench lint typecheck clean docs docs-serve

venv: $(STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

demo: venv
	$(PY) -m examples.demo

test: venv
	$(PY) -m pytest -q -n 3 --tb=line

bench: venv
	$(PY) -m bench

lint: venv
	$(VENV)/bin/ruff check .

typecheck: venv
	$(VENV)/bin/mypy

clean:
	rm -rf build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache

# The documentation site (mkdocs.yml, docs/): a strict build fails on broken links.
docs: venv
	$(VENV)/bin/mkdocs build --strict

docs-serve: venv
	$(VENV)/bin/mkdocs serve
