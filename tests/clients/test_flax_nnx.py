"""Flax NNX's documented usage (`programs/flax_nnx_programs.py`) on justjax gives real JAX's
numbers (`records/flax_nnx.json`)."""
from tests.clients.harness import client_tests

client_run, test_program, test_record = client_tests("flax_nnx")
