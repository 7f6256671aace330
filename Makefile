# The book's commands: `make help` lists the ones a person types. The two of the README:
#   make book   create .venv and node_modules from the lock files (once) and build the book
#   make test   every test, both wings (CONTRIBUTING.md: what each costs)
# The install (uv, the lock's exclusions, bytecode compiled ahead) is in make/install.mk.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The book goes to $(OUT)/_build/html; the tests build into a temporary OUT.
OUT ?= .
# Executed notebooks are cached here; the student edition reuses the normal edition's outputs.
CACHE ?= $(OUT)/_build/.jupyter_cache
BUILD := $(BIN)/jupyter-book build . --warningiserror --nitpick --keep-going

.PHONY: help book catalogues page pdf test test-fast test-accessibility test-pdf pdf-for-tests \
  student assignments grade lab clean lock lint format gpt-weights lists chapter untranslated
.DEFAULT_GOAL := help

# The targets a person types, each described by its line "## name: what it does" below.
help:
	@echo "make <target>, the targets (README.md and CONTRIBUTING.md say more):"
	@sed -n 's/^## \([^:]*\): /  \1\t/p' $(firstword $(MAKEFILE_LIST)) | expand -t 22

# The environment (.venv, with attnkit and booktools editable) and node_modules, from the locks.
include make/install.mk

## book: the book, in English and Japanese, into _build/html (installs .venv and node_modules once)
# The chapters the execution cache lacks run first, side by side, by jupyter-cache's local-parallel
# executor (myst-nb runs them one by one).
# Then, side by side, the English edition and the Japanese one, from the catalogues in locales/ja
# and the same execution cache, which goes into ja/ beside it (BOOK_TRANSLATED: each page links
# to the other edition's).
book: $(VENV)/installed node_modules/.package-lock.json
	$(BIN)/python -m booktools.execute_in_parallel $(abspath $(CACHE))
	BOOK_TRANSLATED=1 BOOK_EXECUTION_CACHE=$(abspath $(CACHE)) $(BUILD) --path-output $(OUT) \
	  & english=$$!; \
	BOOK_TRANSLATED=1 BOOK_LANGUAGE=ja BOOK_EXECUTION_CACHE=$(abspath $(CACHE)) $(BUILD) \
	  --path-output $(OUT)/_build/.ja; japanese=$$?; \
	wait $$english && test $$japanese = 0
	rm -rf $(OUT)/_build/html/ja && cp -R $(OUT)/_build/.ja/_build/html $(OUT)/_build/html/ja
	@echo "The book is in $(OUT)/_build/html: open $(OUT)/_build/html/index.html (日本語: ja/index.html)"

## catalogues: the Japanese catalogues (locales/ja, checks.po) updated after the English changed
# The Japanese edition's catalogues brought up to date with the English sources: a new sentence
# gets an empty entry and a changed one is marked fuzzy, and make book fails, naming each, until
# it is translated (_ext/edition_language.py). So is the catalogue of the exercise checks'
# messages (attnkit/exercises/wording.py), extracted from their _("...") calls; it and the
# figure labels' figures.po are compiled into the .mo that attnkit reads
# (booktools/compiled_catalogues.py).
catalogues: $(VENV)/installed
	BOOK_EXECUTION_CACHE=$(abspath $(CACHE)) $(BIN)/jupyter-book build . --builder custom \
	  --custom-builder gettext --path-output $(OUT)/_build/.gettext
	$(BIN)/sphinx-intl update --pot-dir $(OUT)/_build/.gettext/_build/gettext --language ja \
	  --locale-dir locales --line-width 100 --no-obsolete
	mkdir -p $(OUT)/_build/.checks
	$(BIN)/pybabel extract --no-default-keywords --keywords _ --no-location --width 100 \
	  --output-file $(OUT)/_build/.checks/checks.pot chapters/attnkit/exercises
	$(BIN)/sphinx-intl update --pot-dir $(OUT)/_build/.checks --language ja \
	  --locale-dir chapters/attnkit/exercises/locales --line-width 100 --no-obsolete
	$(BIN)/python -m booktools.compiled_catalogues

## chapter: a new chapter that builds and passes the tests (make chapter SLUG=<slug> TITLE="<title>")
# Its text, checks, answers and tests from booktools/chapter_template, its line in _toc.yml and
# the chapter lists (booktools/new_chapter.py); CONTRIBUTING.md says what to write next.
chapter: $(VENV)/installed
	$(BIN)/python -m booktools.new_chapter "$(SLUG)" "$(TITLE)"

## lists: the chapter lists of README.md, intro.md and the instructors' page, from the chapters
# Written from _toc.yml and each chapter's front matter (about:), between their marker lines;
# tests/library/test_indexes.py fails while one is out of date.
lists: $(VENV)/installed
	$(BIN)/python -m booktools.chapter_lists

## untranslated: what the Japanese edition has not translated yet, page by page
# The catalogues brought up to date first; what they leave untranslated or fuzzy shows in
# English under a notice in the Japanese edition; once nothing is, locales/ja/translated.json
# records every translation, which the tests then keep (booktools/translation.py).
untranslated: catalogues
	$(BIN)/python -m booktools.translation --record

## page: one page alone, into _build/_page (make page PAGE=chapters/attention.md)
# One page alone, with the book's configuration and execution cache, into
# $(OUT)/_build/_page/<name>/html: a quick look at a chapter being written (its links to other
# pages stay unresolved). make page PAGE=chapters/attention.md
page: $(VENV)/installed node_modules/.package-lock.json
	@test -n "$(PAGE)" || { echo "usage: make page PAGE=chapters/<slug>.md"; exit 2; }
	BOOK_EXECUTION_CACHE=$(abspath $(CACHE)) $(BIN)/jupyter-book build $(PAGE) --config _config.yml --path-output $(OUT)

# Both wings side by side: the library's tests, and the book's builds, each followed by the tests
# that read it (--output-sync prints each job's output whole when it ends). Three jobs on two
# cores: the grading of a class, at low priority, mostly waits for its notebooks' time limits.
# One thread each for PyTorch and BLAS: with three jobs on two cores, their thread pools would
# only spin (a clean build of the book took a quarter less CPU time so).
SINGLE_THREADED := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
## test: every test, both wings side by side (a few minutes; CI runs this)
test: $(VENV)/installed node_modules/.package-lock.json
	+$(SINGLE_THREADED) $(MAKE) --no-print-directory --output-sync=target -j3 test-library test-book

## test-fast: the library wing alone, on every core, building nothing: after every change
# On every core (pytest-xdist): the library wing's tests share no state. One thread per worker
# for PyTorch and BLAS: their thread pools on top of the workers' would fight for the cores.
test-fast: $(VENV)/installed node_modules/.package-lock.json
	$(SINGLE_THREADED) $(BIN)/python -m pytest tests/library -n auto

# The library wing in one process, for make test, beside the book's builds, at a lower priority
# than they: more tests wait for the book than for the library's, which fill the cores after.
test-library: $(VENV)/installed node_modules/.package-lock.json
	$(SINGLE_THREADED) nice -n 5 $(BIN)/python -m pytest tests/library

# The book wing reads what these targets make for it under TESTS_OUT (tests/support/built.py):
# the book and its student edition for the made-up repository that tests/support/book.py names,
# every page read in Chromium, every assignment built and a class's notebooks graded (the page
# built where no repository can be found is test_new_chapter.py's, which builds its own). Each keeps its output in TESTS_OUT/<name>.log,
# which the tests read too. The book's pages are built afresh each time (its execution cache
# is kept), so that the log holds every warning.
TESTS_OUT ?= _build/tests
T := $(abspath $(TESTS_OUT))
TEST_REPOSITORY_URL := $(shell sed -n 's/^REPOSITORY_URL = "\(.*\)"$$/\1/p' tests/support/book.py)
# No repository (nor site URL) but the one given: neither the environment's nor GitHub Actions'.
NO_REPOSITORY := env -u BOOK_REPOSITORY_URL -u BOOK_BRANCH -u GITHUB_ACTIONS -u BOOK_SITE_URL
# $(call logged,name,command): the command's output into T/name.log, its end shown if it
# fails, and what it took
logged = mkdir -p $(T) && start=$$(date +%s) && { { $(2); } > $(T)/$(1).log 2>&1 \
  || { tail -n 80 $(T)/$(1).log; exit 1; }; } && echo "built for tests: $(1) in $$(($$(date +%s) - start)) s"
SUBMAKE = $(MAKE) --no-print-directory

.PHONY: test-library test-book built-for-tests book-for-tests student-for-tests \
  readings-for-tests assignments-for-tests class-for-tests test-site test-editions test-readings \
  test-assignments test-class
book-for-tests: $(VENV)/installed node_modules/.package-lock.json
	@find $(T)/book/_build -mindepth 1 -maxdepth 1 ! -name .jupyter_cache -exec rm -rf {} + 2>/dev/null || true
	@+$(call logged,book,$(NO_REPOSITORY) BOOK_REPOSITORY_URL=$(TEST_REPOSITORY_URL) $(SUBMAKE) book OUT=$(T)/book)

student-for-tests: book-for-tests
	@+$(call logged,student,$(NO_REPOSITORY) BOOK_REPOSITORY_URL=$(TEST_REPOSITORY_URL) $(SUBMAKE) student OUT=$(T)/book)

readings-for-tests: book-for-tests
	@$(call logged,readings,$(BIN)/python -m tests.support.readings $(T)/book/_build/html $(T)/readings)

assignments-for-tests: $(VENV)/installed
	@+$(call logged,assignments,$(SUBMAKE) assignments OUT=$(T)/class)

# At low priority: the book's builds, which more tests wait for, go first. (At nice 5, in one
# run each, the notebooks that loop until their time limit took more: CI took 230 s against 214.)
class-for-tests: assignments-for-tests
	@$(call logged,class,nice -n 10 $(BIN)/python -m tests.support.grading $(T)/class)

# Not in make test: printing 300 pages costs Chromium a minute or two.
pdf-for-tests: book-for-tests
	@+$(call logged,pdf,$(SUBMAKE) pdf OUT=$(T)/book && $(SUBMAKE) pdf OUT=$(T)/book PDF_LANGUAGE=ja \
	  && mkdir -p $(T)/pdf && cp $(T)/book/_build/pdf/attention-step-by-step.pdf \
	  $(T)/book/_build/pdf/attention-step-by-step.ja.pdf $(T)/pdf/)
## test-pdf: the PDFs, English and Japanese, printed and checked (not in make test: minutes)
test-pdf: pdf-for-tests
	$(PYTEST_BOOK) tests/book/test_pdf.py

built-for-tests: book-for-tests student-for-tests readings-for-tests \
  assignments-for-tests class-for-tests

# The book wing in five parts, each run once what it reads is built.
PYTEST_BOOK = BOOK_TESTS_OUT=$(T) $(BIN)/python -m pytest
EDITIONS := test_student_edition.py test_launch_buttons.py
# what the page readings found: each page is loaded once for all of these
READINGS := test_accessibility.py test_display_math.py test_figure_layout.py
CLASS := test_assignments.py test_graded_class.py
# The site's tests in two processes, a file in each at a time (a file's browser context or
# JupyterLab is started once), the longest files first (tests/conftest.py's FIRST): many of them
# wait, for a page, a kernel or a package a notebook installs.
test-site: book-for-tests
	$(PYTEST_BOOK) -n 2 --dist loadfile --no-loadscope-reorder tests/book \
	  $(addprefix --ignore=tests/book/,$(EDITIONS) $(READINGS) $(CLASS) test_pdf.py)
test-editions: student-for-tests
	$(PYTEST_BOOK) $(addprefix tests/book/,$(EDITIONS))
test-readings: readings-for-tests
	$(PYTEST_BOOK) $(addprefix tests/book/,$(READINGS))
test-assignments: assignments-for-tests
	$(PYTEST_BOOK) tests/book/test_assignments.py
test-class: class-for-tests
	$(PYTEST_BOOK) tests/book/test_graded_class.py
# The class first: its grading is the longest, and independent of the book's build. The tests of
# the assignments as handed out need no grading: they run before the class's end, not after it.
# The pages' readings before the student edition: Chromium reads one page at a time, and what
# runs last should fill both cores, as the student edition's two builds side by side do.
test-book: test-class test-site test-readings test-editions test-assignments

# The student edition: the same book with every solution removed (not hidden) from every file,
# in English and in Japanese, side by side as make book builds them, built in
# $(OUT)/_build/.student and .student-ja and copied to $(OUT)/_build/student and student/ja.
# Pages are read alike in both editions (_ext/student_edition.py): where make book has run, each
# language starts from its read pages (.doctrees, and the outputs in jupyter_execute) and only
# writes; Sphinx reads again any page changed since.
STUDENT_BUILD = BOOK_TRANSLATED=1 BOOK_EDITION=student BOOK_EXECUTION_CACHE=$(abspath $(CACHE)) $(BUILD)
## student: the student edition, without solutions, into _build/student (after make book)
student: $(VENV)/installed node_modules/.package-lock.json
	rm -rf $(OUT)/_build/.student $(OUT)/_build/.student-ja
	mkdir -p $(OUT)/_build/.student/_build $(OUT)/_build/.student-ja/_build
	if [ -d $(OUT)/_build/.doctrees ]; then \
	  cp -R $(OUT)/_build/.doctrees $(OUT)/_build/jupyter_execute $(OUT)/_build/.student/_build/; fi
	if [ -d $(OUT)/_build/.ja/_build/.doctrees ]; then cp -R $(OUT)/_build/.ja/_build/.doctrees \
	  $(OUT)/_build/.ja/_build/jupyter_execute $(OUT)/_build/.student-ja/_build/; fi
	$(STUDENT_BUILD) --path-output $(OUT)/_build/.student & english=$$!; \
	BOOK_LANGUAGE=ja $(STUDENT_BUILD) --path-output $(OUT)/_build/.student-ja; japanese=$$?; \
	wait $$english && test $$japanese = 0
	rm -rf $(OUT)/_build/student && cp -R $(OUT)/_build/.student/_build/html $(OUT)/_build/student
	cp -R $(OUT)/_build/.student-ja/_build/html $(OUT)/_build/student/ja
	@echo "The student edition is in $(OUT)/_build/student: open $(OUT)/_build/student/index.html"

# make pdf's edition (not LANGUAGE, which gettext reads from the environment) and where it
# builds and prints it
PDF_LANGUAGE ?= en
PDF_BUILD := $(if $(filter en,$(PDF_LANGUAGE)),$(OUT),$(OUT)/_build/.$(PDF_LANGUAGE))
PDF := $(OUT)/_build/pdf/attention-step-by-step$(if $(filter en,$(PDF_LANGUAGE)),,.$(PDF_LANGUAGE)).pdf
## pdf: the whole book as one PDF, _build/pdf/attention-step-by-step.pdf (needs Chromium; PDF_LANGUAGE=ja: .ja.pdf)
# The whole book as one PDF, $(OUT)/_build/pdf/attention-step-by-step.pdf: the one-page build
# (Sphinx's singlehtml) printed by Chromium (booktools/print_pdf.py says why), from the execution cache.
# PDF_LANGUAGE=ja prints the Japanese edition's, attention-step-by-step.ja.pdf, from its own build
# beside the Japanese edition's (make book's).
pdf: $(VENV)/installed node_modules/.package-lock.json
	$(BIN)/python -m booktools.execute_in_parallel $(abspath $(CACHE))
	BOOK_LANGUAGE=$(PDF_LANGUAGE) BOOK_EXECUTION_CACHE=$(abspath $(CACHE)) $(BIN)/jupyter-book build . \
	  --builder singlehtml --warningiserror --nitpick --keep-going --path-output $(PDF_BUILD)
	$(BIN)/python -m booktools.print_pdf $(PDF_BUILD)/_build/singlehtml $(PDF)

## assignments: an Otter-Grader assignment per chapter into _build/assignments
# An Otter-Grader assignment for each chapter with coding exercises (the assignments package):
# _build/assignments/<chapter>/student to hand out, .../autograder to grade (otter run, Gradescope).
assignments: $(VENV)/installed
	$(BIN)/python -m assignments.build --out $(OUT)/_build/assignments

# Grade the notebooks collected under SUBMISSIONS, each in a bubblewrap sandbox (the assignments
# package): a row per notebook and question in GRADES, every notebook graded or its reason given.
# TIMEOUT: seconds for a notebook's cells, and again for each question's check. A second run
# resumes: what was graded and has not changed since keeps its rows.
GRADES ?= grades.csv
TIMEOUT ?= 120
## grade: grade the notebooks in SUBMISSIONS=folder into grades.csv, each in a sandbox
grade: $(VENV)/installed
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=folder [GRADES=grades.csv] [TIMEOUT=120]"; exit 2; }
	$(BIN)/python -m assignments.grade $(SUBMISSIONS) --out $(GRADES) --timeout $(TIMEOUT)

## test-accessibility: every page with axe-core at both widths in both colour modes
# Every page with axe-core at both widths in both modes (make test: on a phone, dark mode).
test-accessibility: $(VENV)/installed
	BOOK_READ_EVERY_WAY=1 $(MAKE) --no-print-directory test-readings

## lint: ruff on the Python files and the chapters' code cells
# ruff, as configured in pyproject.toml: the Python files and the chapters' code cells.
lint: $(VENV)/installed
	$(BIN)/python -m pytest tests/library/test_lint.py

## format: the Python files rewritten by ruff
format: $(VENV)/installed
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## gpt-weights: chapter 8's tiny GPT trained again from its seed
# Chapter 8's tiny GPT trained again from its seed on one CPU thread (under a minute): writes
# chapters/attnkit/data/tiny_gpt.pt and the record beside it, tiny_gpt.json.
gpt-weights: $(VENV)/installed
	$(BIN)/python -m attnkit.gpt_train

## lab: JupyterLab with the chapters' Markdown opened as notebooks, as on Binder
lab: $(VENV)/installed
	$(BIN)/jupyter lab --ServerApp.preferred_dir=$(CURDIR)/chapters

## clean: remove _build
clean:
	rm -rf _build

# Resolve requirements.in into the pinned requirements.txt with pip-tools (needs PyPI). pip-compile
# keeps every pin of requirements.txt that still satisfies requirements.in, so only what changed
# there moves. The lock tool lives in a throw-away environment, not in the book's. Where pip finds
# PyTorch's local CPU wheel (torch==X+cpu), the pin drops the +cpu: the same version installs
# anywhere, and Binder and the notebooks fetch the CPU build by its index.
LOCK_VENV := /tmp/attention-book-lock
## lock: requirements.txt resolved again from requirements.in (needs PyPI)
lock:
	rm -rf $(LOCK_VENV) && $(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet pip-tools==7.6.2
	CUSTOM_COMPILE_COMMAND="make lock" $(LOCK_VENV)/bin/pip-compile --quiet --strip-extras \
	  --no-emit-index-url --no-emit-find-links --output-file requirements.txt requirements.in
	sed -i.orig 's/^torch==\(.*\)+cpu$$/torch==\1/' requirements.txt && rm requirements.txt.orig
