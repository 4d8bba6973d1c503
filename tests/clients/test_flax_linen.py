"""Flax Linen's documented usage (`programs/flax_linen_programs.py`) on justjax gives real JAX's
numbers (`records/flax_linen.json`)."""
from tests.clients.harness import client_tests

client_run, test_program, test_record = client_tests("flax_linen")
