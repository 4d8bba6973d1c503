"""equinox's documented usage (`programs/equinox_programs.py`) on justjax gives real JAX's
numbers (`records/equinox.json`)."""
from tests.clients.harness import client_tests

client_run, test_program, test_record = client_tests("equinox")
