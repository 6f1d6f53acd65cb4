# Two entry points for a fresh machine (see README):
#   make demo   set up .venv and run the main job on a bundled example
#   make test   set up .venv and run the tests
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
DEMO   ?= problems/level1/layernorm.py

.PHONY: setup demo test clean
setup: $(VENV)/.installed

# torch==2.13.0 resolves to the CPU build on CPU-only machines (a local wheel); triton 3.6.0 matches the
# GPU machines and cross-compiles for gfx942/sm_90 without a GPU.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "torch==2.13.0" "triton==3.6.0" "numpy>=1.26,<2.4"
	$(PY) -m pip install -q -e ".[dev,learned,llm]"
	touch $@

demo: setup
	$(VENV)/bin/kerntailor inspect $(DEMO) --target mi300x
	$(VENV)/bin/kerntailor generate $(DEMO) --target mi300x --out out/demo --candidates 8 --budget 60

test: setup
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV)
