"""optax's documented usage (`programs/optax_programs.py`) on justjax gives real JAX's numbers
(`records/optax.json`)."""
from tests.clients.harness import client_tests

client_run, test_program, test_record = client_tests("optax")
