"""The client-test machinery on plain JAX usage (`programs/jax_core_programs.py`): justjax,
standing in for jax in a subprocess, gives real JAX's numbers (`records/jax_core.json`)."""
from tests.clients.harness import client_tests

client_run, test_program, test_record = client_tests("jax_core")
