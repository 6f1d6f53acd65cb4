# Two entry points for a fresh machine (see README):
#   make demo   set up .venv and run the main job on a bundled example
#   make test   set up .venv and run the tests
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DEMO   ?= problems/level1/layernorm.py

.PHONY: setup browser demo test clean
setup: $(VENV)/.installed

# Headless Chromium (Debian's package) for the HTML report's screenshot test (tests/test_html_report.py):
# installed only where `chromium` is missing and apt-get exists; a failed or impossible install never fails the
# set-up (the test then skips with "chromium not installed").
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && \
	  timeout 300 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq \
	  --no-install-recommends chromium >/dev/null; } || echo "chromium not installed (no apt-get, or the install failed): the HTML screenshot test skips"

# Which torch 2.13.0 build this installs is pip's choice, not this file's: from PyPI on Linux x86_64 it is the
# CUDA build (with its nvidia-* wheels, several GB), which also runs on a machine without a GPU; the CPU build
# (torch-2.13.0+cpu) comes only from a wheel pip is pointed at (the development machine's pip configuration
# has one in its find-links) or from PyTorch's CPU index: `make setup TORCH_INDEX=https://download.pytorch.org/whl/cpu`
# (not reachable from the development machine, so not tried there). triton 3.6.0 matches the GPU machines and
# cross-compiles for gfx942/sm_90 without a GPU.
TORCH_INDEX ?=
TORCH_FROM  := $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX),)

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(TORCH_FROM) "torch==2.13.0"
	$(PY) -m pip install -q "triton==3.6.0" "numpy>=1.26,<2.4"
	$(PY) -m pip install -q -e ".[dev,learned,llm,report,ray]"
	touch $@

demo: setup
	$(VENV)/bin/kerntailor inspect $(DEMO) --target mi300x
	$(VENV)/bin/kerntailor generate $(DEMO) --target mi300x --out out/demo --candidates 8 --budget 60

# The suite in TEST_WORKERS processes (pytest-xdist), one test file per worker at a time (`--dist loadfile`: a
# file's module fixtures, such as the referee's verdicts over its cheaters, are built once); CI has 2 cores.
TEST_WORKERS ?= 2
test: setup browser
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25

clean:
	rm -rf $(VENV)
