"""Tests of the jax.numpy names that are NumPy's own or wrap NumPy on the host
(`_src/numpy/numpy_interop.py`): `save`/`load`, print options and the re-exported objects.
Results are those JAX 0.10.2 gives for the same calls.
"""
from __future__ import annotations

import io

import ml_dtypes
import numpy as np

import justjax as jax
import justjax.numpy as jnp


def _roundtrip(x, **load_kwargs):
    f = io.BytesIO()
    jnp.save(f, x)
    f.seek(0)
    return jnp.load(f, **load_kwargs)


def test_save_and_load_arrays(tmp_path) -> None:
    out = _roundtrip(jnp.arange(3.0))
    assert isinstance(out, jax.Array) and out.dtype == np.float32
    np.testing.assert_array_equal(out, [0, 1, 2])
    # bfloat16 is stored as 2-byte voids and comes back as bfloat16.
    bf16 = _roundtrip(jnp.array([2, 4, 6, 8], jnp.bfloat16))
    assert isinstance(bf16, jax.Array) and bf16.dtype == jnp.bfloat16
    np.testing.assert_array_equal(bf16.astype(np.float32), [2, 4, 6, 8])
    # NumPy data takes its canonical dtype (float32 without x64).
    assert _roundtrip(np.array([1.5])).dtype == np.float32
    assert _roundtrip(np.array([[1, 2]], np.uint8)).dtype == np.uint8
    # Files on disk, as equinox's serialisation writes them.
    path = tmp_path / "leaf.npy"
    with open(path, "wb") as f:
        jnp.save(f, jnp.ones((2, 2), jnp.int32))
    np.testing.assert_array_equal(jnp.load(path), np.ones((2, 2)))


def test_load_leaves_what_jax_cannot_hold_to_numpy() -> None:
    strings = _roundtrip(np.array(["a"]))
    assert isinstance(strings, np.ndarray) and strings.dtype == np.dtype("<U1")
    voids = _roundtrip(np.array([1, 2], dtype=ml_dtypes.int4))
    assert isinstance(voids, np.ndarray) and voids.dtype == np.dtype("V1")
    objects = _roundtrip(np.array([1, 2], dtype=object), allow_pickle=True)
    assert isinstance(objects, np.ndarray) and objects.dtype == object
    f = io.BytesIO()
    jnp.savez(f, a=jnp.ones(2))
    f.seek(0)
    npz = jnp.load(f)
    assert isinstance(npz, np.lib.npyio.NpzFile)
    np.testing.assert_array_equal(npz["a"], [1.0, 1.0])


def test_print_options_apply_to_arrays() -> None:
    with jnp.printoptions(precision=2):
        assert repr(jnp.array([1.23456])) == "Array([1.23], dtype=float32)"
        assert jnp.get_printoptions()["precision"] == 2
    old = jnp.get_printoptions()
    try:
        jnp.set_printoptions(precision=1)
        assert str(jnp.array([1.23456])) == "[1.2]"
    finally:
        jnp.set_printoptions(**old)


def test_numpy_objects_are_reexported() -> None:
    for name in ("save", "savez", "iterable", "index_exp", "s_", "array_repr", "array_str"):
        assert getattr(jnp, name) is getattr(np, name), name
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning
    assert jnp.s_[1:2] == slice(1, 2)
    assert jnp.array_str(jnp.ones(2)) == "[1. 1.]"
