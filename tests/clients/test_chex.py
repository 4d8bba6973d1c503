"""chex's documented usage (`programs/chex_programs.py`) on justjax gives real JAX's
numbers (`records/chex.json`)."""
from tests.clients.harness import client_tests

client_run, test_program, test_record = client_tests("chex")
