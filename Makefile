# skillbench: `make weekly` runs the weekly job on the simulated default, `make test` runs the tests,
# `make lint` checks style and the import layers, `make docs` builds the documentation site strictly (into site/).
# All start with `make setup`, which installs and starts everything they need.

# the pin lives in one place: skillbench/generation/_toolchain.py
CLAUDE_CODE_VERSION := $(shell sed -n 's/^CLAUDE_CODE_VERSION = "\([^"]*\)".*/\1/p' skillbench/generation/_toolchain.py)
VENV := .venv
PY := $(VENV)/bin/python
# the CI machine has two cores; tests that share state name an xdist_group (see tests/conftest.py)
TEST_WORKERS ?= 2
export CLAUDE_CODE_VERSION

.PHONY: setup test lint docs weekly demo lab clean-reports

setup:
	@bash scripts/setup.sh

test: setup
	$(VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder --durations=20

# ruff, then the layer contracts in pyproject.toml's [tool.importlinter]
lint: setup
	$(VENV)/bin/ruff check skillbench tests benchmarks
	$(VENV)/bin/lint-imports

# --strict: a broken link or a missing page fails the build
docs: setup
	$(VENV)/bin/mkdocs build --strict --site-dir site

weekly: setup
	$(VENV)/bin/skillbench weekly --backend sim --suite evals

# Eight simulated weeks of the bundled suite with a scripted story (about 50 minutes on 2 cores): reports/demo-history/
demo: setup
	$(VENV)/bin/skillbench demo-history --weeks 8 --suite evals --models haiku sonnet --reps 1

# JupyterLab refuses to run as root without --allow-root; the machines here run as root.
lab: setup
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --ip=127.0.0.1 $(if $(filter 0,$(shell id -u)),--allow-root)

clean-reports:
	rm -rf reports/*/ reports/index.html
