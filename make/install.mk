# Included by the Makefile: how .venv and node_modules are installed from the lock files.

# The pinned environment, the helper library attnkit and the book's tools, booktools (both
# editable: a change to either is live), and
# JupyterLab set to open the chapters' Markdown as notebooks, as on Binder (binder/postBuild).
# uv installs the lock in a minute where pip took two and a half. It reads none of pip's
# settings, so those that say where PyTorch's CPU build is are passed on (UV_FROM_PIP): the
# folders of wheels (PIP_FIND_LINKS, or pip's configuration) and the extra indexes
# (PIP_EXTRA_INDEX_URL, as the publish workflow sets), each version taken from whichever index
# has it, as pip does.
UV := uv==0.13.9
# Python caches the bytecode of each module the first time one of these commands imports it,
# even where PYTHONDONTWRITEBYTECODE is set (as on CI machines), which would have every process
# compile torch anew. The tests import a fifth of the environment: compiling all of it as it
# is installed (uv's --compile-bytecode) cost 40 CPU-s, importing what the tests use 5.
unexport PYTHONDONTWRITEBYTECODE
# What most processes import (and torch, beside it), compiled once at install: before the
# builds, the tests and the grader start side by side, each compiling it, and for the grader's
# sandbox, which can write nothing into the environment.
WARM_IMPORTS := matplotlib.pyplot, IPython.core.interactiveshell, ipykernel.kernelapp, \
  jupyter_book.cli.main, pytest, hypothesis
# Left out, though the lock lists them: rfc3987-syntax (and lark, which only it needs) is
# jsonschema's optional checker of the "iri" format, which nothing here validates, and
# importing it builds 38 grammars: 3 s in each process that imports jsonschema (each build of
# the book, each notebook graded, JupyterLab).
EXCLUDED := rfc3987-syntax lark
UV_FROM_PIP = \
  $$(for link in $${PIP_FIND_LINKS:-$$($(BIN)/python -m pip config get global.find-links 2>/dev/null)}; \
     do printf -- '--find-links %s ' "$$link"; done) \
  $$(for index in $${PIP_EXTRA_INDEX_URL:-}; do printf -- '--extra-index-url %s ' "$$index"; done) \
  --index-strategy unsafe-best-match
$(VENV)/installed: requirements.txt pyproject.toml booktools/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(UV)
	printf '%s\n' $(EXCLUDED) > $(VENV)/excluded.txt
	$(BIN)/uv pip install --python $(BIN)/python --quiet $(UV_FROM_PIP) \
	  -r requirements.txt --excludes $(VENV)/excluded.txt
	$(BIN)/uv pip install --python $(BIN)/python --quiet --no-deps --editable . --editable booktools
	JUPYTER_CONFIG_DIR=$(VENV)/etc/jupyter $(BIN)/jupytext-config set-default-viewer
	$(BIN)/python -c "import torch" & torch=$$!; $(BIN)/python -c "import $(WARM_IMPORTS)" && wait $$torch
	touch $@

# The JavaScript the book is built with (Temml, PurgeCSS) and the tests use (axe-core), from the lock.
node_modules/.package-lock.json: package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
