PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# The client libraries justjax runs unchanged, installed without their jax dependency:
# real jax/jaxlib never enter the venv (their pure-Python dependencies are the `clients` extra).
# flax 0.12.8 is the newest flax for Python 3.11.
CLIENTS := optax==0.2.8 chex==0.1.92 flax==0.12.8 equinox==0.13.8 \
	lineax==0.1.1 optimistix==0.1.0 diffrax==0.7.2 numpyro==0.22.0

$(VENV)/.installed-demo: pyproject.toml Makefile $(BIN)/python
	$(BIN)/pip install --quiet -e '.[demo,clients]'
	$(BIN)/pip install --quiet --no-deps $(CLIENTS)
	touch $@

# Installed packages are not byte-compiled ahead (--no-compile): Python compiles the
# modules a run imports, a fraction of them.
$(VENV)/.installed-test: pyproject.toml Makefile $(BIN)/python
	$(BIN)/pip install --quiet --no-compile -e '.[test,clients]'
	$(BIN)/pip install --quiet --no-compile --no-deps $(CLIENTS)
	touch $@

demo: $(VENV)/.installed-demo
	$(BIN)/python examples/train_digits.py

# The whole suite runs on the native backend (the default); this subset, the programs
# through jit, eagerly and under transforms, runs again on the reference backend. (Every op
# record's program also runs on the reference backend in tests/test_llvm_backend.py, which
# compares the two backends.)
REFERENCE_SUBSET := tests/test_jit.py tests/test_jit_programs.py tests/test_control_flow.py \
	tests/test_control_flow_programs.py tests/test_scan.py tests/test_indexing.py \
	tests/test_random_keys.py tests/test_pmap.py tests/test_pmap_transforms.py

# pytest exits 5 when it collected no tests: that is a failure here. Three workers on the
# two cores of CI's machine: a worker waits (collecting garbage, starting device threads,
# reading files) often enough that a third one keeps both cores busy (about 10% faster).
WORKERS := 3
test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n $(WORKERS) --dist worksteal -q tests; status=$$?; \
	if [ $$status -eq 5 ]; then echo "no tests collected"; exit 1; fi; \
	if [ $$status -ne 0 ]; then exit $$status; fi; \
	JAX_PLATFORMS=reference $(BIN)/python -m pytest -n $(WORKERS) --dist worksteal -q \
	$(REFERENCE_SUBSET); \
	status=$$?; if [ $$status -eq 5 ]; then echo "no tests collected"; exit 1; fi; exit $$status

clean:
	rm -rf $(VENV) build dist src/*.egg-info demo-output
