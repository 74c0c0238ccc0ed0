# Entry points for students, instructors and CI. Each target sets itself up from scratch.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Notebooks run by `make course`; DEVICE= forces a device, SIZE=ci|default|gpu picks sizes.
DEVICE ?=
SIZE   ?= default

export JUPYTER_PREFER_ENV_PATH := 1
export MPLBACKEND := Agg

.PHONY: help install lab test course clean

help:
	@echo "make lab     install, then open JupyterLab on notebooks/"
	@echo "make test    install, then run the whole test suite"
	@echo "make course  install, then execute and render every notebook into build/"
	@echo "make clean   remove the virtual environment and build/"

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

install: $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root,)

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build
