"""Op records for jax.numpy's tensor products (`_src/numpy/tensor.py`), checked against NumPy
computed in wide precision."""
from __future__ import annotations

import warnings

import numpy as np

import justjax.numpy as jnp
from tests.harness import BF16, BOOL, C64, F16, F32, I32, I8, OpRecord, widen

TOL = {F32: 2e-5, BF16: 3e-2, F16: 4e-3, C64: 2e-5}


def _wide(x: np.ndarray) -> np.ndarray:
    return widen(x, integers_to=np.int64, bools_to=np.int64)

def _wrap(fn):
    """A NumPy reference applied to exact wide copies of the arguments."""
    def reference(*args, **kwargs):
        return fn(*[_wide(np.asarray(a)) for a in args], **kwargs)
    return reference


def _np_cross(*args, **kwargs) -> np.ndarray:
    with warnings.catch_warnings():
        # NumPy 2 deprecates 2-vectors; JAX still accepts them.
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.cross(*args, **kwargs)


def _promoted(*dtypes: np.dtype) -> np.dtype:
    return jnp.result_type(*dtypes)


def _inexact(*dtypes: np.dtype) -> np.dtype:
    dtype = jnp.result_type(*dtypes)
    return dtype if dtype.kind in "fcV" or dtype == BF16 else np.dtype(np.float32)


def rec(name, fun, reference, shapes, dtypes=(F32, I32), **kwargs) -> OpRecord:
    kwargs.setdefault("expected_dtype", _promoted)
    kwargs.setdefault("tol", TOL)
    return OpRecord(name, fun, _wrap(reference), shapes, dtypes, **kwargs)


MATMUL_SHAPES = [
    [(2, 3), (3, 4)], [(3,), (3, 4)], [(2, 3), (3,)], [(3,), (3,)], [(2, 2, 3), (2, 3, 4)],
    [(2, 3, 4), (4, 5)], [(3,), (2, 3, 4)], [(2, 1, 3, 4), (5, 4, 2)], [(1, 3, 4), (1, 4, 2)],
    [(2, 1, 3), (1, 3, 2)],
]

PRODUCTS = [
    rec("matmul", jnp.matmul, np.matmul, MATMUL_SHAPES,
        (F32, I32, BF16, C64, (I8, I32), (F16, F32), (BOOL, I32))),
    rec("matmul_operator", lambda x, y: x @ y, lambda x, y: x @ y, [[(2, 3), (3, 4)]]),
    rec("matmul_int8", jnp.matmul, lambda x, y: (x @ y).astype(np.int8), [[(2, 3), (3, 2)]],
        (I8,)),
    rec("matmul_preferred", lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.float32),
        np.matmul, [[(2, 3), (3, 2)]], (I8, BF16),
        expected_dtype=lambda *d: np.dtype(np.float32),
        # A float32 preferred type is narrower than the float64 the gradient checks run in
        # (JAX rejects it); matmul's gradient is checked by the records above.
        differentiable=False),
    rec("jnp_dot", jnp.dot, np.dot,
        [[(2, 3), (3, 4)], [(3,), (3,)], [(2, 3, 4), (5, 4, 2)], [(2, 3), (3,)], [(), (2, 3)],
         [(4,), ()]], (F32, I32, (I32, F32))),
    rec("jnp_dot_method", lambda x, y: x.dot(y), np.dot, [[(2, 3), (3,)]]),
    rec("vdot", jnp.vdot, np.vdot, [[(2, 3), (6,)], [(4,), (4,)]], (F32, C64)),
    rec("inner", jnp.inner, np.inner, [[(2, 3), (4, 3)], [(3,), (3,)], [(), (2, 3)]]),
    rec("outer", jnp.outer, np.outer, [[(3,), (4,)], [(2, 2), (3,)]], (F32, (I32, F32))),
    rec("tensordot", jnp.tensordot, np.tensordot, [[(2, 3, 4), (3, 4, 5)]]),
    rec("tensordot_int_axes", lambda x, y: jnp.tensordot(x, y, 1),
        lambda x, y: np.tensordot(x, y, 1), [[(2, 3), (3, 4)]]),
    rec("tensordot_zero", lambda x, y: jnp.tensordot(x, y, 0),
        lambda x, y: np.tensordot(x, y, 0), [[(2,), (3, 2)]]),
    rec("tensordot_lists", lambda x, y: jnp.tensordot(x, y, ([0, 2], [2, 0])),
        lambda x, y: np.tensordot(x, y, ([0, 2], [2, 0])), [[(2, 3, 4), (4, 5, 2)]]),
    rec("tensordot_pair", lambda x, y: jnp.tensordot(x, y, (-1, 0)),
        lambda x, y: np.tensordot(x, y, (-1, 0)), [[(2, 3), (3, 4)]]),
    rec("kron", jnp.kron, np.kron, [[(2, 2), (2, 3)], [(3,), (2, 2)], [(), (2,)]],
        (F32, I32, (I32, F32))),
    rec("matvec", jnp.matvec, lambda a, v: np.einsum("...ij,...j->...i", a, v),
        [[(2, 3), (3,)], [(4, 2, 3), (3,)], [(4, 2, 3), (4, 3)], [(1, 2, 3), (5, 3)],
         [(2, 3), (4, 1, 3)]], (F32, C64)),
    rec("vecmat", jnp.vecmat, lambda v, a: np.einsum("...i,...ij->...j", np.conj(v), a),
        [[(2,), (2, 3)], [(2,), (5, 2, 3)], [(5, 2), (5, 2, 3)], [(3, 1, 2), (4, 2, 3)]],
        (F32, C64)),
    rec("vecdot", jnp.vecdot, lambda x, y: np.einsum("...i,...i->...", np.conj(x), y),
        [[(2, 3), (3,)], [(2, 3), (2, 3)], [(4, 1, 3), (2, 3)], [(3,), (2, 1, 3)]], (F32, C64)),
    rec("vecdot_axis", lambda x, y: jnp.vecdot(x, y, axis=0),
        lambda x, y: np.einsum("i...,i...->...", np.conj(x), y), [[(3, 2), (3, 1)]]),
    rec("convolve", lambda x, y, mode: jnp.convolve(x, y, mode=mode),
        lambda x, y, mode: np.convolve(x, y, mode=mode), [[(5,), (3,)], [(3,), (5,)]],
        (F32, I32, C64), static={"mode": "full"}, expected_dtype=lambda *d: _inexact(*d)),
    rec("convolve_same", lambda x, y: jnp.convolve(x, y, mode="same"),
        lambda x, y: np.convolve(x, y, mode="same"), [[(5,), (4,)], [(2,), (5,)]], (F32,)),
    rec("convolve_valid", lambda x, y: jnp.convolve(x, y, mode="valid"),
        lambda x, y: np.convolve(x, y, mode="valid"), [[(5,), (2,)], [(3,), (4,)]], (F32,)),
    rec("correlate", lambda x, y: jnp.correlate(x, y), lambda x, y: np.correlate(x, y),
        [[(5,), (3,)], [(3,), (5,)]], (F32, C64), expected_dtype=lambda *d: _inexact(*d)),
    rec("correlate_full", lambda x, y: jnp.correlate(x, y, "full"),
        lambda x, y: np.correlate(x, y, "full"), [[(5,), (3,)], [(2,), (4,)]], (F32, C64)),
    rec("correlate_same", lambda x, y: jnp.correlate(x, y, "same"),
        lambda x, y: np.correlate(x, y, "same"), [[(5,), (3,)], [(2,), (5,)]], (F32,)),
    rec("convolve_preferred", lambda x, y: jnp.convolve(x, y, preferred_element_type=np.int32),
        np.convolve, [[(5,), (3,)]], (I8,), expected_dtype=lambda *d: np.dtype(np.int32)),
    rec("cross", jnp.cross, _np_cross, [[(3,), (3,)], [(4, 3), (3,)], [(2,), (2,)],
                                       [(4, 2), (4, 3)]], (F32, I32)),
    rec("cross_axes", lambda x, y: jnp.cross(x, y, axisa=0, axisb=1, axisc=0),
        lambda x, y: _np_cross(x, y, axisa=0, axisb=1, axisc=0), [[(3, 4), (4, 3)]], (F32,)),
]


def _einsum(name: str, spec: str, shapes, dtypes=(F32, I32), **kwargs) -> OpRecord:
    return rec(name, lambda *xs: jnp.einsum(spec, *xs, **kwargs),
               lambda *xs: np.einsum(spec, *xs), [shapes], dtypes)


EINSUMS = [
    _einsum("einsum_matmul", "ij,jk->ik", [(2, 3), (3, 4)], (F32, I32, BF16, C64, (I32, F32))),
    _einsum("einsum_batch", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    _einsum("einsum_batch_perm", "bij,bkj->kbi", [(2, 3, 4), (2, 5, 4)]),
    _einsum("einsum_diag", "ii->i", [(3, 3)]),
    _einsum("einsum_trace", "ii", [(3, 3)]),
    _einsum("einsum_repeat3", "iii->", [(2, 2, 2)]),
    _einsum("einsum_outer", "i,j->ij", [(3,), (4,)]),
    _einsum("einsum_sum_all", "ij->", [(3, 4)], (F32, I32, BOOL)),
    _einsum("einsum_sum_axis", "ijk->j", [(2, 3, 4)], (F32, BOOL)),
    _einsum("einsum_transpose", "ijk->kij", [(2, 3, 4)]),
    _einsum("einsum_implicit", "ij,jk", [(2, 3), (3, 4)]),
    _einsum("einsum_implicit_sorted", "ba", [(2, 3)]),
    _einsum("einsum_ellipsis", "...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    _einsum("einsum_ellipsis_bcast", "...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
    _einsum("einsum_ellipsis_sum", "i...->...", [(3, 4, 2)]),
    _einsum("einsum_ellipsis_middle", "a...b,b...->a...", [(2, 3, 4), (4, 3)]),
    _einsum("einsum_three", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    _einsum("einsum_three_unopt", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], optimize=False),
    _einsum("einsum_three_greedy", "ab,bc,ca->", [(2, 3), (3, 4), (4, 2)], optimize="greedy"),
    _einsum("einsum_four", "ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 3)],
            optimize=True),
    _einsum("einsum_repeated_pair", "iij,jk->ik", [(3, 3, 2), (2, 4)]),
    _einsum("einsum_unique_each", "ij,kl->ik", [(2, 3), (4, 5)]),
    _einsum("einsum_singleton", "ij,j->i", [(2, 3), (1,)]),
    _einsum("einsum_hadamard", "ij,ij->ij", [(2, 3), (2, 3)]),
    _einsum("einsum_bilinear", "i,ij,j->", [(3,), (3, 4), (4,)]),
    _einsum("einsum_scalar", ",ij->ij", [(), (2, 3)]),
    _einsum("einsum_kept_repeat", "ii,i->i", [(3, 3), (3,)]),
    rec("einsum_interleaved", lambda x, y: jnp.einsum(x, [0, 1], y, [1, 2], [0, 2]),
        lambda x, y: np.einsum(x, [0, 1], y, [1, 2], [0, 2]), [[(2, 3), (3, 4)]]),
    rec("einsum_interleaved_ellipsis", lambda x, y: jnp.einsum(x, [Ellipsis, 0], y, [0]),
        lambda x, y: np.einsum(x, [Ellipsis, 0], y, [0]), [[(2, 3), (3,)]]),
    rec("einsum_preferred", lambda x, y: jnp.einsum("ij,jk->ik", x, y,
                                                    preferred_element_type=jnp.float32),
        lambda x, y: np.einsum("ij,jk->ik", x, y), [[(2, 3), (3, 4)]], (I8, BF16),
        expected_dtype=lambda *d: np.dtype(np.float32),
        differentiable=False),  # as matmul_preferred
]

RECORDS = PRODUCTS + EINSUMS
