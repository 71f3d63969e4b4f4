# The README's commands. Each works on a fresh machine with only Python 3.11 and pip.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
FIXTURE ?= fixtures/synthetic-bilingual-v1
# Fixtures `make versions` checks against their recorded releases (fixtures/releases.json).
RELEASED ?= fixtures/synthetic-bilingual-v1 fixtures/synthetic-bilingual-dev-v1

.PHONY: report test lint unit fuzz gate probes versions bench lab clean docs docs-serve dist

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m evalkit.systems.fts5_writer  # compiles the bulk FTS5 writer once, cached
	touch $(STAMP)

report: $(STAMP)
	$(BIN)/evalkit validate $(FIXTURE)
	$(BIN)/evalkit report $(FIXTURE) -p probes fixtures/probes --output reports/retrieval-report.html
	@echo
	@echo "The report: reports/retrieval-report.html (open it in a browser)."
	@echo "Next: source .venv/bin/activate, then evalkit --help (or call .venv/bin/evalkit)."
	@echo "Your own data: README.md, 'Your own data'."

lint: $(STAMP)
	$(BIN)/ruff check evalkit tests benchmarks
	$(BIN)/ruff format --check evalkit tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

unit: $(STAMP)
	$(BIN)/python -m pytest -q -n 2

fuzz: $(STAMP)  # the property tests on new random examples (make test repeats the same ones)
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q -n 2 -p no:cacheprovider tests

gate: $(STAMP)
	$(BIN)/evalkit gate $(FIXTURE)
	$(BIN)/evalkit gate fixtures/synthetic-bilingual-dev-v1

probes: $(STAMP)
	$(BIN)/evalkit probes fixtures/probes --target stdlib --baseline fixtures/probes/baseline.json

versions: $(STAMP)  # each released fixture's version rule against its recorded releases
	for f in $(RELEASED); do $(BIN)/evalkit validate $$f --since fixtures/releases.json || exit 1; done

test: lint gate probes versions unit  # pytest last, so its summary closes the output

docs: $(STAMP)  # the documentation site, strict: a broken link or reference fails -> site/index.html
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "documentation site: site/index.html (opens from disk; or make docs-serve)"

docs-serve: $(STAMP)  # the same site over HTTP with live reload: http://127.0.0.1:8000/
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict

dist: $(STAMP)  # what a release uploads: sdist and wheel in dist/, their metadata checked
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*

# JupyterLab at the repository root, so relative paths (fixtures/...) read as written; the report
# notebook to open is a copy of the installed package's (evalkit notebook), made once.
lab: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,lab]'
	test -f my-report.ipynb || $(BIN)/evalkit notebook --output my-report.ipynb
	$(BIN)/jupyter lab my-report.ipynb

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_measures.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis site

.PHONY: bench-report
bench-report: $(STAMP)  # where the time of `evalkit report` goes, against its 8 s target
	$(BIN)/python benchmarks/bench_report.py
