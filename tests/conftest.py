"""Test-session settings.

The IR is verified after every optimization pass (issue #8) in the compiler's own tests and
in the program corpora (jit, grad, control flow, random), which compile whole programs. The
op-record grid compiles tens of thousands of small programs whose modules those tests already
cover, and verification would double its time, so it runs there without.
"""
from __future__ import annotations

from typing import Iterator

import pytest

import justjax

_VERIFIED = ("test_passes_", "test_jit", "test_grad_programs", "test_control_flow",
             "test_random_programs", "test_ad_golden", "test_vmap_programs", "test_jnp_programs")


@pytest.fixture(autouse=True)
def _verify_passes(request: pytest.FixtureRequest) -> Iterator[None]:
    name = request.module.__name__.rsplit(".", 1)[-1]
    with justjax.config.override("justjax_verify_passes", name.startswith(_VERIFIED)):
        yield
