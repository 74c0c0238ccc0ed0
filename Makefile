# Entry points for students, instructors and CI. Each target sets itself up from scratch.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ASSETS := node_modules/.package-lock.json
# TORCH_INDEX= installs PyTorch from that index first (e.g. https://download.pytorch.org/whl/cpu):
# requirements.txt then keeps it, since it accepts any torch>=2.9 (README.md, "Install").
TORCH_INDEX ?=
# WHEELHOUSE= installs from that folder alone, with no index (a cluster's compute node: see
# README.md, "On a GPU cluster"); `make wheelhouse` fills it on a machine with internet.
# VENV_FLAGS=--system-site-packages lets the environment use a torch the system already has.
WHEELHOUSE ?=
VENV_FLAGS ?=
# On Linux without an NVIDIA GPU (no nvidia-smi), PyPI's torch is the CUDA build (about 3 GB
# of nvidia-* wheels it cannot use): take PyTorch's CPU build there, unless TORCH_INDEX, a
# wheelhouse or a pip constraint (CI's) decides. TORCH_INDEX=pypi keeps PyPI's build.
CPU_INDEX := https://download.pytorch.org/whl/cpu
AUTO_CPU := $(if $(TORCH_INDEX)$(WHEELHOUSE)$(PIP_CONSTRAINT),,$(and $(filter Linux,$(shell uname -s)),$(if $(shell command -v nvidia-smi),,yes)))
TORCH_FROM := $(if $(AUTO_CPU),$(CPU_INDEX),$(filter-out pypi,$(TORCH_INDEX)))
WHEELHOUSE_PYTHONS ?= 3.10 3.11 3.12 3.13
OFFLINE := $(if $(WHEELHOUSE),--no-index --find-links $(abspath $(WHEELHOUSE)),)
# make floor: the oldest torch the course declares (requirements.txt), in an environment of
# its own, running every notebook at its defaults.
FLOOR_TORCH ?= 2.9.0
FLOOR_VENV  ?= .venv-floor
# make gpu-run: PRESETS= overrides its presets (default: gpu; defaults,gpu runs the students'
# defaults first; the last one records). DEADLINE= seconds for the whole run (tools/gpu_run.py).
DEADLINE ?=
PRESETS ?=
# make course: DEVICE= forces a device (cpu, cuda:0, mps); PARAMS= names a JSON file of
# per-notebook parameters (notebooks/params/ci.json small and fast, gpu.json full size).
DEVICE ?=
PARAMS ?=
# make lab: PORT= and LAB_ARGS= pass on to JupyterLab (a remote machine or a container:
# make lab PORT=8890 LAB_ARGS="--ip=0.0.0.0 --no-browser"). make fresh NOTEBOOK=05 replaces
# your working copy of one notebook with the course's (the old one is kept in my-notebooks/old/).
PORT     ?= 8888
LAB_ARGS ?=
NOTEBOOK ?=
MUTMUT_VERSION ?= 3.8.1
# Run a command as root: directly when we are root, else through sudo.
SUDO   := $(if $(filter 0,$(shell id -u)),,sudo)

export JUPYTER_PREFER_ENV_PATH := 1

.PHONY: help install assets lab fresh test stress course browser clean gpu-run wheelhouse floor fuzz mutation

help:
	@echo "make lab     install, then open JupyterLab on your own copies of the notebooks"
	@echo "             (my-notebooks/, which git ignores; PORT=8888, LAB_ARGS=\"--no-browser ...\")"
	@echo "make fresh NOTEBOOK=05  replace your copy of one notebook with the course's"
	@echo "make test    install, then run the whole test suite"
	@echo "make stress  install, then run every widget cell 50 times under CPU load"
	@echo "make course  install, then execute and render every notebook into build/"
	@echo "             (DEVICE=cpu|cuda:0|mps, PARAMS=notebooks/params/gpu.json)"
	@echo "make gpu-run install, then record the course on the best device here into build/gpu-run/"
	@echo "             (every notebook at gpu.json, the GPU tests, a summary; DEADLINE=500 stops on time)"
	@echo "make wheelhouse  download what an offline install needs, besides torch, into wheelhouse/"
	@echo "make floor   every notebook at its defaults with the oldest torch the course declares"
	@echo "make fuzz    every notebook with parameter sets drawn from its contract (SETS=3 SEED=0,"
	@echo "             DEVICE=cpu, NOTEBOOKS=\"10 12\"); a table of failures in build/fuzz/report.md"
	@echo "make mutation  mutation testing (mutmut) of course_utils/ and tools/ against the fast tests"
	@echo "make clean   remove the virtual environments, node_modules/, build/ and wheelhouse/"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV_FLAGS) $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade $(OFFLINE) pip
	$(if $(AUTO_CPU),@echo "No NVIDIA GPU here (no nvidia-smi): PyTorch's CPU build from $(CPU_INDEX) (TORCH_INDEX=pypi: PyPI's CUDA build instead)",)
	$(if $(TORCH_FROM),$(BIN)/python -m pip install --quiet --no-compile torch --index-url $(TORCH_FROM),)
# pip 26.3 passes on setuptools' note that an editable install's imports can be shadowed by a
# folder of the same name in the working directory: true of every editable install, not a fault.
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/python -m pip install --quiet --no-compile $(OFFLINE) -r requirements.txt
# Byte-compile the installed packages on every core (pip does it on one: 17 s longer on a
# 2-core machine), leaving out their own test folders (a quarter of the files, never imported
# here: 8 s). As under pip, the few files written for newer Pythons fail and are skipped.
	$(BIN)/python -m compileall -qq -j 0 -x 'packages/.+/tests?/' "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" || true
	@touch $(STAMP)

install: $(STAMP)

# The slide assets alone (`make test` and `make course` fetch them too); CI fetches them while
# pip installs (`make -j2 install assets`).
assets: $(ASSETS)

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

# Students work in my-notebooks/ (git ignores it): notebooks/ stays clean, so tests and
# `git pull` keep working. Copies are made on first use and never overwritten.
lab: $(STAMP)
	$(BIN)/python -m tools.workspace
	$(BIN)/jupyter lab --notebook-dir=my-notebooks --port=$(PORT) $(if $(SUDO),,--allow-root) $(LAB_ARGS)

fresh: $(STAMP)
	@test -n "$(NOTEBOOK)" || { echo "usage: make fresh NOTEBOOK=05 (a number or a name)"; exit 2; }
	$(BIN)/python -m tools.workspace --fresh $(NOTEBOOK)

# The browser and slide assets are best effort here: without them the slide test skips
# (CI sets CI=true, where it fails instead).
test: $(STAMP)
	-@$(MAKE) --no-print-directory $(ASSETS) browser
	$(BIN)/python -m pytest

# Not part of `make test` (about a minute on 2 cores): widget cells never hang under load.
stress: $(STAMP)
	$(BIN)/python -m pytest -m stress -s -n 0 tests/test_widget_stress.py

# Not part of `make test` (minutes per notebook): every notebook with parameter sets drawn
# from the contract of its setup cell (tools/fuzz.py); the run goes on past a failure.
fuzz: $(STAMP)
	$(BIN)/python -m tools.fuzz $(if $(SETS),--sets $(SETS),) $(if $(SEED),--seed $(SEED),) $(if $(DEVICE),--device $(DEVICE),) $(NOTEBOOKS)

# Not part of `make test`: mutation testing of course_utils/ and tools/ ([tool.mutmut] in
# pyproject.toml says which tests run); the share of mutants the tests kill, and the survivors.
# One PyTorch thread per mutant's tests: several at once would fight over the cores until mutmut's
# time limit counts them as kills.
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet $(OFFLINE) "mutmut==$(MUTMUT_VERSION)"
	OMP_NUM_THREADS=1 $(BIN)/mutmut run --max-children $(or $(JOBS),$(shell nproc 2>/dev/null || echo 2)) || true
	$(BIN)/python -m tools.mutation_score

course: $(STAMP) $(ASSETS)
	$(BIN)/python -m tools.render $(if $(DEVICE),--device $(DEVICE),) $(if $(PARAMS),--params $(PARAMS),)

# Record the course on this machine (tools/gpu_run.py): one folder under build/gpu-run/.
gpu-run: $(STAMP)
	$(BIN)/python -m tools.gpu_run $(if $(DEVICE),--device $(DEVICE),) $(if $(PRESETS),--presets $(PRESETS),) $(if $(DEADLINE),--deadline $(DEADLINE),)

# Everything `make install` needs besides torch, for Linux x86-64 and each of WHEELHOUSE_PYTHONS,
# into wheelhouse/ (or WHEELHOUSE=): pip and setuptools too, so that the offline install can build
# the course's own package.
wheelhouse:
	@mkdir -p $(or $(WHEELHOUSE),wheelhouse)
	grep -v -E '^[[:space:]]*(torch([<>=!~ ]|$$)|-e )' requirements.txt > $(or $(WHEELHOUSE),wheelhouse)/requirements-besides-torch.txt
	for v in $(WHEELHOUSE_PYTHONS); do \
	  $(PYTHON) -m pip download --quiet --only-binary=:all: --implementation cp --python-version $$v \
	    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
	    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
	    -d $(or $(WHEELHOUSE),wheelhouse) pip "setuptools>=70.1" \
	    -r $(or $(WHEELHOUSE),wheelhouse)/requirements-besides-torch.txt || exit 1; \
	done
	@echo "wheelhouse: $$(ls $(or $(WHEELHOUSE),wheelhouse)/*.whl | wc -l) wheels, $$(du -sh $(or $(WHEELHOUSE),wheelhouse) | cut -f1)"

# Not part of `make test`: a new environment with torch $(FLOOR_TORCH) (from TORCH_INDEX if given),
# then every notebook at its defaults on the best device here (tools/gpu_run.py).
floor:
	$(PYTHON) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(FLOOR_VENV)/bin/python -m pip install --quiet --no-compile torch==$(FLOOR_TORCH) $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX),)
	$(FLOOR_VENV)/bin/python -m pip install --quiet --no-compile -r requirements.txt
	$(FLOOR_VENV)/bin/python -m tools.gpu_run --presets defaults --no-tests --out build/floor-torch-$(FLOOR_TORCH) $(if $(DEVICE),--device $(DEVICE),)

# my-notebooks/ holds the student's work: make clean leaves it.
clean:
	rm -rf $(VENV) $(FLOOR_VENV) node_modules build wheelhouse
