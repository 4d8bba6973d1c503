"""numpyro's documented usage (`programs/numpyro_programs.py`) on justjax gives real JAX's
numbers (`records/numpyro.json`). The NUTS programs run in 64-bit with short chains (see
their docstrings): a chain amplifies last-bit differences, so only there do its samples
reproduce JAX's at the default tolerance."""
from tests.clients.harness import client_tests

client_run, test_program, test_record = client_tests("numpyro")
