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

.PHONY: lab test test-main test-colab setup site system-deps bench lint clean

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --LabApp.default_url=/lab/tree/$(START) $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(LAB_ARGS)

test: test-main test-colab

test-main: $(STAMP) system-deps
	HOOKVIZ_FORBID_SKIPS=1 $(PY) -m pytest tests

# The notebooks and widgets again, pinned like Google Colab (ipywidgets 7.7.1, anywidget 0.9).
test-colab: $(COLAB_STAMP)
	HOOKVIZ_FORBID_SKIPS=1 $(COLAB_PY) -m pytest -m colab tests

setup: $(STAMP)

# The course as a static site in site/ (every widget plays without a kernel); open site/index.html.
site: $(STAMP)
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

# Chromium drives the browser tests; bubblewrap sandboxes graded submissions.
system-deps:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v bwrap >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium bubblewrap >/dev/null; \
	  else echo "The tests need Chromium and bubblewrap: sudo apt-get install chromium bubblewrap"; exit 1; fi; fi

# Ratios measured in one run each (bench_record.py alone takes about 35 minutes on 2 cores);
# figures in bench/README.md.
bench: $(STAMP) system-deps
	$(PY) bench/bench_record.py
	$(PY) bench/bench_widgets.py
	$(PY) bench/bench_grading.py
	$(PY) bench/bench_integrity.py
	$(PY) bench/bench_cluster.py
	$(PY) bench/bench_site.py

# The code checks and formatting (ruff format --check); CI runs it before the tests.
lint: $(STAMP)
	$(VENV)/bin/ruff check hookviz tests bench tools
	$(VENV)/bin/ruff format --check hookviz tests bench tools

clean:
	rm -rf $(VENV) $(COLAB_VENV) build *.egg-info
