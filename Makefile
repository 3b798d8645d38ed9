# Two commands for a fresh machine (both bootstrap what they need, and a second run reinstalls nothing):
#   make lab    set up, then open the course in JupyterLab on "00 start here"
#   make test   set up, then run the whole test suite (unit, property, notebooks, grading, browser)

PYTHON ?= python3
VENV ?= .venv
COLAB_VENV ?= .venv-colab
PY := $(VENV)/bin/python
COLAB_PY := $(COLAB_VENV)/bin/python
STAMP := $(VENV)/.hookviz-installed
COLAB_STAMP := $(COLAB_VENV)/.hookviz-installed
START := notebooks/00-start-here.ipynb
LAB_ARGS ?=  # more options for `jupyter lab`, e.g. LAB_ARGS="--port=8899 --no-browser"
# The CPU build of torch through a constraints file: a bare "torch" would pull a multi-GB CUDA build.
TORCH := -c constraints/torch-cpu.txt torch
PIP := -m pip install --disable-pip-version-check -q

.PHONY: help lab lab-instructor test test-main test-colab test-fast setup site system-deps bench format lint clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

# A student's JupyterLab: nbgrader (in the dev tools as the grader's oracle) stays out of sight,
# through one more config folder, read before the environment's own (tools/jupyter-student).
lab: $(STAMP)  ## set up, then open the course in JupyterLab on "00 start here"
	JUPYTER_CONFIG_PATH=$(abspath tools/jupyter-student)$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH} $(VENV)/bin/jupyter lab --LabApp.default_url=/lab/tree/$(START) $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS)

lab-instructor: $(STAMP)  ## JupyterLab with nbgrader's instructor tools (formgrader, Create Assignment)
	$(VENV)/bin/jupyter lab --LabApp.default_url=/lab/tree/$(START) $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS)

test: test-main test-colab  ## the whole suite, as CI runs it (about 40 minutes on 2 cores)

test-main: $(STAMP) system-deps  ## the suite in the course environment
	HOOKVIZ_FORBID_SKIPS=1 $(PY) -m pytest --durations=25 tests

# The notebooks and widgets again, pinned like Google Colab (ipywidgets 7.7.1, anywidget 0.9).
test-colab: $(COLAB_STAMP)  ## the notebooks and widgets pinned like Google Colab
	HOOKVIZ_FORBID_SKIPS=1 $(COLAB_PY) -m pytest --durations=15 -m colab tests

# The edit loop: no browser, notebook or slow test, on every core.
test-fast: $(STAMP)  ## the quick tests in parallel (a minute or two), for the edit loop
	$(PY) -m pytest -n auto -m "not browser and not notebook and not slow and not serial" tests
	$(PY) -m pytest -m "serial and not browser and not notebook and not slow" tests

setup: $(STAMP)  ## make the venv (.venv) and install hookviz with its dev tools

# The course as a static site in site/ (every widget plays without a kernel); open site/index.html.
site: $(STAMP)  ## build the static web edition in site/
	$(VENV)/bin/hookviz site

# A torch the base Python can already import is reused (no download); otherwise the CPU wheel.
$(STAMP): pyproject.toml constraints/torch-cpu.txt
	@if [ ! -x $(PY) ]; then \
	  if $(PYTHON) -c "import torch" 2>/dev/null; then $(PYTHON) -m venv --system-site-packages $(VENV); \
	  else $(PYTHON) -m venv $(VENV); fi; fi
	@$(PY) -c "import torch" 2>/dev/null || $(PY) $(PIP) $(TORCH)
	$(PY) $(PIP) -e ".[dev]"
	@touch $(STAMP)

$(COLAB_STAMP): pyproject.toml constraints/torch-cpu.txt constraints/colab.txt
	@[ -x $(COLAB_PY) ] || $(PYTHON) -m venv $(COLAB_VENV)
	@$(COLAB_PY) -c "import torch" 2>/dev/null || $(COLAB_PY) $(PIP) $(TORCH)
	$(COLAB_PY) $(PIP) -c constraints/colab.txt -e ".[colab-test]"
	@touch $(COLAB_STAMP)

# Chromium drives the browser tests; bubblewrap sandboxes graded submissions; fonts-nanum gives
# Chromium a Korean font for the Korean pages' screenshots.
KOREAN_FONT := /usr/share/fonts/truetype/nanum/NanumGothic.ttf
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v bwrap >/dev/null 2>&1 || [ ! -e $(KOREAN_FONT) ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium bubblewrap fonts-nanum >/dev/null; \
	  else echo "The tests need Chromium, bubblewrap and a Korean font: sudo apt-get install chromium bubblewrap fonts-nanum"; exit 1; fi; fi

# Ratios measured in one run each (bench_record.py alone takes about 35 minutes on 2 cores);
# figures in bench/README.md.
bench: $(STAMP) system-deps  ## run every benchmark (hours; figures go in bench/README.md)
	$(PY) bench/bench_record.py
	$(PY) bench/bench_widgets.py
	$(PY) bench/bench_grading.py
	$(PY) bench/bench_nbgrader.py
	$(PY) bench/bench_integrity.py
	$(PY) bench/bench_cluster.py
	$(PY) bench/bench_site.py
	$(PY) bench/bench_compiled.py

# The code checks and formatting: ruff for the Python, ESLint and Prettier for the JavaScript
# (package.json's "lint"; npm ci installs package-lock.json's versions when they are not there yet).
# CI runs it before the tests.
lint: $(STAMP)  ## check the Python and the JavaScript (ruff, ESLint, Prettier)
	$(VENV)/bin/ruff check hookviz tests bench tools
	$(VENV)/bin/ruff format --check hookviz tests bench tools
	@[ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund
	npm run --silent lint

# ruff rewrites the Python, Prettier the JavaScript (the tools `make lint` installs).
format: $(STAMP)  ## format the Python and the JavaScript in place
	$(VENV)/bin/ruff format hookviz tests bench tools
	$(VENV)/bin/ruff check --fix hookviz tests bench tools
	@[ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund
	npm run --silent format

clean:  ## remove the venvs and build output
	rm -rf $(VENV) $(COLAB_VENV) build *.egg-info
