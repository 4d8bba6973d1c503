"""Test-session settings.

The IR is verified after every optimization pass (issue #8) in the compiler's own tests and
in the program corpora (jit, grad, control flow, random), which compile whole programs. The
op-record grid compiles tens of thousands of small programs whose modules those tests already
cover, and verification would double its time, so it runs there without.
"""
from __future__ import annotations

import gc
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


# The cyclic garbage collector's full collections walk every live object, and a test
# session keeps hundreds of thousands: pytest's items (about ten objects per test) and the
# programs the tests compiled, held by the jit caches. Objects alive after collection, and
# every few hundred tests after that, are moved out of the collector's sight (`gc.freeze`);
# a full collection then walks only what is new. Without this, a third of a worker's time
# went to full collections.
_FREEZE_EVERY = 20
_tests_run = 0


def _freeze_survivors() -> None:
    gc.collect()
    gc.freeze()


def pytest_collection_finish(session: pytest.Session) -> None:
    _freeze_survivors()
    gc.disable()


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    global _tests_run
    _tests_run += 1
    if _tests_run % _FREEZE_EVERY == 0:
        _freeze_survivors()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A `needs_jax` test compares with real JAX: it is skipped where jax is not installed,
    and it fails if `import jax` would give justjax standing in for it (a comparison of
    justjax with itself cannot fail)."""
    if item.get_closest_marker("needs_jax") is None:
        return
    from justjax._src import jax_alias
    if jax_alias.is_installed():
        pytest.fail("`import jax` resolves to justjax in this process (install_as_jax was "
                    "called): a needs_jax test would compare justjax with itself")
    jax = pytest.importorskip("jax")
    if getattr(jax, "__version_info__", None) is None or "justjax" in (jax.__file__ or ""):
        pytest.fail(f"`import jax` gave {jax!r}, not real JAX")
