PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed-demo: pyproject.toml $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

demo: $(VENV)/.installed-demo
	$(BIN)/python examples/tour.py

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n 2 --dist worksteal -q tests; status=$$?; \
	if [ $$status -eq 5 ]; then echo "no tests collected"; exit 1; fi; exit $$status

clean:
	rm -rf $(VENV) build dist src/*.egg-info
