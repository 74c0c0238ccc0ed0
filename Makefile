# Entry points for students, instructors and CI. Each target sets itself up from scratch.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ASSETS := node_modules/.package-lock.json
# TORCH_INDEX= installs PyTorch from that index first (e.g. https://download.pytorch.org/whl/cpu):
# requirements.txt then keeps it, since it accepts any torch>=2.7 (README.md, "Install").
TORCH_INDEX ?=
# make course: DEVICE= forces a device (cpu, cuda:0, mps); PARAMS= names a JSON file of
# per-notebook parameters (notebooks/params/ci.json small and fast, gpu.json full size).
DEVICE ?=
PARAMS ?=
# Run a command as root: directly when we are root, else through sudo.
SUDO   := $(if $(filter 0,$(shell id -u)),,sudo)

export JUPYTER_PREFER_ENV_PATH := 1

.PHONY: help install lab test stress course browser clean

help:
	@echo "make lab     install, then open JupyterLab on notebooks/"
	@echo "make test    install, then run the whole test suite"
	@echo "make stress  install, then run every widget cell 50 times under CPU load"
	@echo "make course  install, then execute and render every notebook into build/"
	@echo "             (DEVICE=cpu|cuda:0|mps, PARAMS=notebooks/params/gpu.json)"
	@echo "make clean   remove the virtual environment, node_modules/ and build/"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(if $(TORCH_INDEX),$(BIN)/python -m pip install --quiet --no-compile torch --index-url $(TORCH_INDEX),)
	$(BIN)/python -m pip install --quiet --no-compile -r requirements.txt
# Byte-compile the installed packages on every core (pip does it on one: 17 s longer on a
# 2-core machine). As under pip, the few files written for newer Pythons fail and are skipped.
	$(BIN)/python -m compileall -qq -j 0 "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" || true
	@touch $(STAMP)

install: $(STAMP)

# Slide assets (reveal.js, require.js, jQuery, MathJax), pinned in package-lock.json.
$(ASSETS): package.json package-lock.json
	@command -v npm >/dev/null || { echo "installing Node.js and npm (Debian packages)"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq nodejs npm; }
	npm ci --ignore-scripts --no-audit --no-fund

# A headless browser for the slide test.
browser:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
	  { echo "installing Chromium (Debian package)"; \
	    $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium; }

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks $(if $(SUDO),,--allow-root)

# The browser and slide assets are best effort here: without them the slide test skips
# (CI sets CI=true, where it fails instead).
test: $(STAMP)
	-@$(MAKE) --no-print-directory $(ASSETS) browser
	$(BIN)/python -m pytest

# Not part of `make test` (about a minute on 2 cores): widget cells never hang under load.
stress: $(STAMP)
	$(BIN)/python -m pytest -m stress -s -n 0 tests/test_widget_stress.py

course: $(STAMP) $(ASSETS)
	$(BIN)/python -m tools.render $(if $(DEVICE),--device $(DEVICE),) $(if $(PARAMS),--params $(PARAMS),)

clean:
	rm -rf $(VENV) node_modules build
