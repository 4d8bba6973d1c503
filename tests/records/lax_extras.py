"""Op records for `mulhi`, `optimization_barrier`, `empty`, `index_take` and `broadcast_like`
against NumPy (jit vs eager, gradients where defined, vmap vs a loop)."""
from __future__ import annotations

import numpy as np

from justjax import lax
from tests.harness import F32, FLOATS, I8, I32, INTS, U8, U32, OpRecord


def _rand_full_range(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Integers over the dtype's whole range (mulhi's high word is 0 or -1 on small values)."""
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _mulhi_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The high half of the exact product, from Python integers."""
    bits = 8 * x.dtype.itemsize
    x, y = np.broadcast_arrays(x, y)
    flat = [(int(a) * int(b)) >> bits for a, b in zip(x.ravel(), y.ravel(), strict=True)]
    return np.array(flat, dtype=np.int64).astype(x.dtype).reshape(x.shape)


def _index_take_reference(src: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return np.moveaxis(src[:, i % src.shape[1], j % src.shape[2]], 1, 0)


def _index_take(src, i, j):
    return lax.index_take(src, (i, j), (1, 2))


def _rand_index(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    return rng.integers(-6, 6, shape).astype(dtype)


RECORDS = [
    OpRecord("mulhi", lax.mulhi, _mulhi_reference, [[(7,), (7,)], [(2, 3), ()]], INTS,
             make_args=_rand_full_range, differentiable=False),
    OpRecord("optimization_barrier", lambda x, y: lax.optimization_barrier((x, y)),
             lambda x, y: (x, y), [[(3,), (2, 2)]], FLOATS),
    OpRecord("optimization_barrier_int", lambda x: lax.optimization_barrier([x])[0],
             lambda x: x, [[(4,)]], (I32, U8), differentiable=False),
    OpRecord("empty_plus", lambda x: lax.empty((2, 3), np.float32) + x, lambda x: x + 0,
             [[(2, 3)]], [F32]),
    OpRecord("broadcast_like", lambda x, like: lax.broadcast_like(x, like),
             lambda x, like: np.broadcast_to(x, like.shape), [[(1, 3), (2, 4, 3)], [(), (2,)]],
             [F32]),
    OpRecord("index_take", _index_take, _index_take_reference, [[(2, 3, 4), (5,), (5,)]],
             [(F32, I32, I32), (I8, U32, U32)], make_args=[
                 lambda rng, s, d: rng.normal(size=s).astype(d) if d.kind == "f"
                 else rng.integers(-5, 5, s).astype(d), _rand_index, _rand_index],
             differentiable=False),
]


def _distinct(rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """Distinct values (ties would make the gradient checks' finite differences jump)."""
    return (rng.permutation(int(np.prod(shape))).reshape(shape) * 0.37 - 2.0).astype(dtype)


def _approx_reference(x: np.ndarray, k: int, reduction_dimension: int, largest: bool):
    order = np.argsort(-x if largest else x, axis=reduction_dimension, kind="stable")
    order = np.take(order, np.arange(k), axis=reduction_dimension)
    return np.take_along_axis(x, order, reduction_dimension), order.astype(np.int32)


def _int32_second(dtype: np.dtype, *_: np.dtype) -> tuple[np.dtype, np.dtype]:
    return dtype, np.dtype(np.int32)


RECORDS += [
    OpRecord("approx_max_k", lambda x: lax.approx_max_k(x, 3),
             lambda x: _approx_reference(x, 3, -1, True), [[(8,)], [(2, 9)]], [F32],
             make_args=_distinct, expected_dtype=_int32_second),
    OpRecord("approx_min_k_dim0", lambda x: lax.approx_min_k(x, 2, reduction_dimension=0),
             lambda x: _approx_reference(x, 2, 0, False), [[(5, 3)]], [F32],
             make_args=_distinct, expected_dtype=_int32_second),
]


def _custom_vmap_sin():
    """A custom_vmap function whose rule computes the same (the records check it agrees with
    a loop); forward mode only, as JAX (reverse mode of custom_vmap is unsupported)."""
    from justjax import custom_batching
    from justjax import numpy as jnp

    @custom_batching.custom_vmap
    def f(x):
        return jnp.sin(x)

    @f.def_vmap
    def rule(axis_size, in_batched, xs):
        return jnp.sin(xs), in_batched[0]

    return f


RECORDS += [
    OpRecord("custom_vmap_sin", _custom_vmap_sin(), np.sin, [[(4,)], [(2, 3)]], [F32],
             grad_modes=("fwd",)),
]
