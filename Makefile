# One entry point per task. `make install` is idempotent; every other target installs first.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install plan lint typecheck test check test-payloads engine e2e bench clean

install: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

plan: install
	$(BIN)/aksray plan --stack dev

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

# pytest exits 5 when it collects no tests: that is a failure here, never a pass.
test: install
	@$(BIN)/python -m pytest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; \
	exit $$rc

check: lint typecheck test

# Whole-process `aksray plan` time and peak memory on generated stacks of 1-1000 teams and the
# project's prod and dev stacks (about 2 minutes; see docs/development.md, "Benchmark").
bench: install
	$(BIN)/python scripts/bench_plan.py --stack prod --stack dev

# Tier T4: the real Pulumi engine, built from source into .cache/engine (cold: ~30 min on 2 cores,
# then cached), runs the local stack: up, provider YAML == aksray render, no-op second up, destroy.
engine: install
	scripts/engine/bootstrap.sh

e2e: engine
	scripts/engine/e2e.sh

# Payload tests against the libraries the payloads run with (LLaMA-Factory's argument parser,
# Ray LLM's config models, one Aurora LoRA step on CPU), in their own virtualenv: installing it
# takes about 8 minutes and 7 GB once (torch and friends); the tests take about 30 seconds.
PAYLOAD_VENV := .venv-payloads
PAYLOAD_STAMP := $(PAYLOAD_VENV)/.installed

$(PAYLOAD_STAMP): workloads/requirements-test.txt
	test -x $(PAYLOAD_VENV)/bin/python || $(PYTHON) -m venv $(PAYLOAD_VENV)
	$(PAYLOAD_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r workloads/requirements-test.txt
	touch $(PAYLOAD_STAMP)

test-payloads: $(PAYLOAD_STAMP)
	PYTHONPATH=. $(PAYLOAD_VENV)/bin/python -m pytest -p no:cacheprovider -m payload tests/test_payloads_heavy.py

clean:
	rm -rf $(VENV) $(PAYLOAD_VENV) .pytest_cache .mypy_cache .ruff_cache out
