# Two entry points for a fresh machine (see README):
#   make demo   set up .venv and run the main job on a bundled example
#   make test   set up .venv and run the tests
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DEMO   ?= problems/level1/layernorm.py

.PHONY: setup demo test clean
setup: $(VENV)/.installed

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
	$(PY) -m pip install -q -e ".[dev,learned,llm]"
	touch $@

demo: setup
	$(VENV)/bin/kerntailor inspect $(DEMO) --target mi300x
	$(VENV)/bin/kerntailor generate $(DEMO) --target mi300x --out out/demo --candidates 8 --budget 60

# The suite in TEST_WORKERS processes (pytest-xdist), one test file per worker at a time (`--dist loadfile`: a
# file's module fixtures, such as the referee's verdicts over its cheaters, are built once); CI has 2 cores.
TEST_WORKERS ?= 2
test: setup
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25

clean:
	rm -rf $(VENV)
