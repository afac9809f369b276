# The README's two commands: `make run` (build the shipped tasks and check them) and `make test`.
VENV   := .venv
PY     := $(VENV)/bin/python
WAC    := $(VENV)/bin/wac

.PHONY: run test lint clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,runtime,hf,inspect,review,scale,lsp]'
	touch $@

run: $(VENV)/.installed
	$(WAC) build tasks_src/ taxonomy/examples/ -o build/
	$(WAC) selfcheck build/ --jobs 2

# the suite on two workers (pytest-xdist; tests are independent, the corpus is built once for both)
TEST_JOBS ?= 2
test: $(VENV)/.installed
	$(PY) -m pytest -n $(TEST_JOBS) --dist worksteal

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

clean:
	rm -rf build/
