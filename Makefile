# One entry point per task. `make install` is idempotent; every other target installs first.
#
# Python 3.11, 3.12 or 3.13: `make install` takes the newest of python3.13, python3.12 and
# python3.11 that runs (with pyenv, an installed version counts even when it is not selected), or
# the one named: `make install PYTHON=python3.12` (a command or a path). It says which it used and
# keeps it (in $(CHOICE)) until PYTHON names another; .venv is rebuilt when the choice changes.
PYTHON ?=
PYTHON_VERSIONS := 3.13 3.12 3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The interpreter .venv is built with ("<executable> <version>"); rewritten only when it changes.
CHOICE := .cache/python
# uv (https://docs.astral.sh/uv/), the ecosystem's fast resolver and installer (and one of the
# toolchains of Pulumi's Python runtime), installs uv.lock: every dependency pinned with hashes.
# It is installed once, by pip (the interpreter's own when it has one: no pip copied into a venv
# for it), at the version and hashes uv.lock pins for it.
UV_HOME := .cache/uv
UV := $(UV_HOME)/bin/uv
export UV_PYTHON_DOWNLOADS := never
comma := ,

.PHONY: install lock plan lint typecheck test check reference golden test-payloads engine e2e docs-e2e bench rig rehearse-test clean FORCE

install: $(STAMP)

# Prints "<executable> <version>" of the interpreter to use, or says why there is none.
# probe CMD VERSION...: runs CMD; exit 0 = one of those versions, 3 = another, else it does not run.
# pyenv_probe pythonX.Y VERSION...: the same with the newest pyenv-installed X.Y selected for it.
define find_python
probe() { py="$$1"; shift; "$$py" -c 'import sys; v = "%d.%d.%d" % sys.version_info[:3]; print(sys.executable, v); sys.exit(0 if v.rsplit(".", 1)[0] in sys.argv[1:] else 3)' "$$@"; }; \
pyenv_probe() { \
  command -v pyenv >/dev/null 2>&1 || return 127; \
  minor="$${1#python}"; case "$$minor" in 3.[0-9]*) ;; *) return 127 ;; esac; \
  v="$$(pyenv versions --bare 2>/dev/null | grep -E "^$${minor}\.[0-9]+$$" | sort -t. -k3,3n | tail -n 1)"; \
  [ -n "$$v" ] || return 127; \
  PYENV_VERSION="$$v" probe "$$@"; \
}; \
if [ -n '$(PYTHON)' ]; then \
  out="$$(probe '$(PYTHON)' $(PYTHON_VERSIONS) 2>/dev/null)"; rc=$$?; \
  if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then out="$$(pyenv_probe '$(PYTHON)' $(PYTHON_VERSIONS) 2>/dev/null)"; rc=$$?; fi; \
  case $$rc in \
    0) echo "$$out" ;; \
    3) echo "make install: PYTHON=$(PYTHON) is Python $${out##* }; supported: $(PYTHON_VERSIONS)" >&2; exit 1 ;; \
    *) echo "make install: PYTHON=$(PYTHON) does not run; name a Python $(PYTHON_VERSIONS) (a command or a path)" >&2; exit 1 ;; \
  esac; \
else \
  for v in $(PYTHON_VERSIONS); do \
    out="$$(probe python$$v $$v 2>/dev/null || pyenv_probe python$$v $$v 2>/dev/null)" && { echo "$$out"; exit 0; }; \
  done; \
  echo "make install: no Python $(PYTHON_VERSIONS) found (tried python$(subst $() , python,$(PYTHON_VERSIONS))); install one, or name it: make install PYTHON=/path/to/python3" >&2; \
  exit 1; \
fi
endef

# Without PYTHON, the recorded choice stands while it still runs: no surprise rebuilds.
$(CHOICE): FORCE
	@if [ -z '$(PYTHON)' ] && [ -f $@ ] && read -r py ver <$@ && \
	  [ "$$("$$py" -c 'import platform; print(platform.python_version())' 2>/dev/null)" = "$$ver" ]; then exit 0; fi; \
	mkdir -p $(@D); choice="$$($(find_python))" || exit 1; \
	if [ "$$choice" != "$$(cat $@ 2>/dev/null)" ]; then \
	  echo "make install: chose Python $${choice##* } ($${choice% *})$(if $(PYTHON),,$(comma) the newest of $(PYTHON_VERSIONS) found; another: make install PYTHON=python3.12)"; \
	  echo "$$choice" >$@; fi

$(UV): uv.lock | $(CHOICE)
	@read -r py ver <$(CHOICE); \
	want="$$("$$py" -c 'import sys, tomllib; p = [p for p in tomllib.load(open("uv.lock", "rb"))["package"] if p["name"] == "uv"][0]; print("uv==" + p["version"], *("--hash=" + w["hash"] for w in p["wheels"]))')" || exit 1; \
	if [ -x $@ ] && [ "uv==$$($@ --version | cut -d' ' -f2)" = "$${want%% *}" ]; then touch $@; exit 0; fi; \
	echo "make install: installing $${want%% *}, the installer, into $(UV_HOME) (once, about 10 s)"; \
	rm -rf $(UV_HOME); \
	if "$$py" -m pip --python "$$py" --version >/dev/null 2>&1; then \
	  "$$py" -m venv --without-pip $(UV_HOME) && pip="$$py -m pip --python $(UV_HOME)/bin/python"; \
	else "$$py" -m venv $(UV_HOME) && pip="$(UV_HOME)/bin/python -m pip"; fi || exit 1; \
	echo "$$want" >$(UV_HOME)/requirements.txt && \
	$$pip install --quiet --disable-pip-version-check --require-hashes --only-binary :all: -r $(UV_HOME)/requirements.txt && \
	touch $@

# A new interpreter (or none recorded yet) starts .venv afresh. A plan of the prod stack then
# writes the bytecode of every module a plan imports, also where PYTHONDONTWRITEBYTECODE is set
# (as in many CI images): every later plan and CLI test starts without compiling them again.
$(STAMP): pyproject.toml uv.lock $(CHOICE) $(UV)
	@read -r py ver <$(CHOICE); \
	echo "make install: Python $$ver ($$py) -> $(VENV), the versions in uv.lock (cold, downloading about 90 MB: about 20 s; from uv's cache: seconds)"; \
	start=$$(date +%s); \
	$(if $(filter $(CHOICE),$?),rm -rf $(VENV);) \
	$(UV) sync --locked --extra dev --python "$$py" || \
	  { echo "make install: failed; after a change to the dependencies in pyproject.toml, run make lock" >&2; exit 1; }; \
	echo "make install: compiling the bytecode of what a plan imports (a few seconds)"; \
	if [ -x $(BIN)/aksray ]; then PYTHONDONTWRITEBYTECODE= $(BIN)/aksray plan --stack prod >/dev/null || exit 1; fi; \
	touch $(STAMP) && \
	echo "make install: done in $$(( $$(date +%s) - start ))s (Python $$ver)"

# After a change to the dependencies in pyproject.toml: resolve them again, for 3.11-3.13 at once.
lock: $(UV)
	@read -r py ver <$(CHOICE); $(UV) lock --python "$$py"

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

# The upstream files the conformance tests and `aksray rehearse` read (the CRDs and every file of
# each pinned chart at its release tag: 301 files, 14 MB; the list and each SHA-256 in
# scripts/reference/files.tsv), from their official locations, or copied from the folder
# AKSRAY_REFERENCE names, into .cache/reference/ (outside git). Without them `make test` runs
# every other test and says how many it left out. Without network it stops after one try, in
# one line naming AKSRAY_REFERENCE.
reference: install
	$(BIN)/python scripts/reference/fetch.py

# Whole-process `aksray plan` time and peak memory on generated stacks of 1-1000 teams and the
# project's prod and dev stacks (about 2 minutes; see docs/development.md, "Benchmark").
# Rewrites tests/golden/ (what plan and render print for dev, prod and local) from the code, and
# the copies in README.md (dev's summary) and docs/ci.md (dev's Markdown plan).
golden: install
	$(BIN)/python -m tests.support.golden

bench: install
	$(BIN)/python scripts/bench_plan.py --stack prod --stack dev --preview --since --write-readme

# Tier T4: the real Pulumi engine, built from source into ~/.cache/aksray/engine (cold: 17-54 min on
# 2 cores, plus about 8 GB of Go caches outside the repository; then cached), runs the local stack: up, provider YAML == aksray render, no-op second up, destroy.
engine: install
	scripts/engine/bootstrap.sh

e2e: engine
	scripts/engine/e2e.sh

# The shell blocks of README.md and docs/ that need the engine, run as written
# (tests/support/doc_shell.py places every block): the README's deploy environment previewing the
# local stack on a PATH with another Python first, and the by-hand engine run.
docs-e2e: engine
	$(BIN)/python -m pytest -p no:cacheprovider -m engine tests/project

# Tier T5: the rehearsal rig. `make rig` builds etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok, Kueue, the KubeRay operator and KAI's five services from the Go module
# proxy into a cache outside the repository (cold, 2 cores, measured: 25-30 min without KAI on a
# machine of its own, KAI adds 5-6 min; 72 min on a shared, loaded one; then seconds). `make rehearse-test`
# plays every scenario on the dev and prod stacks and the two seed demos through the real engine,
# and the MultiKueue scenario on the multiregion stack (a manager and two worker control planes).
rig: install
	scripts/rig/build.sh

rehearse-test: install rig engine
	$(BIN)/python -m pytest -p no:cacheprovider -m rehearsal tests/rehearse

# Payload tests against the libraries the payloads run with (LLaMA-Factory's argument parser,
# Ray LLM's config models, one Aurora LoRA step on CPU, each payload's Ray launch on a Ray
# cluster shaped like its RayJob), in their own virtualenv: installing it takes about 6-8
# minutes and 7 GB once (torch and friends); the tests take about 3 minutes on 2 cores.
PAYLOAD_PYTHON ?= $(or $(PYTHON),python3.11)
PAYLOAD_VENV := .venv-payloads
PAYLOAD_STAMP := $(PAYLOAD_VENV)/.installed

$(PAYLOAD_STAMP): workloads/requirements-test.txt
	test -x $(PAYLOAD_VENV)/bin/python || $(PAYLOAD_PYTHON) -m venv $(PAYLOAD_VENV)
	$(PAYLOAD_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r workloads/requirements-test.txt
	touch $(PAYLOAD_STAMP)

# A test still running after PAYLOAD_TEST_TIMEOUT seconds ends the run with every thread's
# traceback: a hung Ray wait fails the run instead of blocking it.
PAYLOAD_TEST_TIMEOUT ?= 400

test-payloads: $(PAYLOAD_STAMP)
	PYTHONPATH=. $(PAYLOAD_VENV)/bin/python -m pytest -p no:cacheprovider -m payload \
	  -o faulthandler_timeout=$(PAYLOAD_TEST_TIMEOUT) -o faulthandler_exit_on_timeout=true \
	  tests/workloads

clean:
	rm -rf $(VENV) $(PAYLOAD_VENV) $(CHOICE) $(UV_HOME) .pytest_cache .mypy_cache .ruff_cache out
