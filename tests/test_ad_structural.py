"""Autodiff of the structural primitives (`_src/lax/structural.py`: convert_element_type,
bitcast_convert_type, broadcast_in_dim, reshape, squeeze, transpose, iota, select_n, clamp,
concatenate, copy, stop_gradient) and the joining ones (`_src/lax/joining.py`: tile, stack,
split, unstack).

Derivatives are checked against finite differences (float64, second order, both modes); the
conventions where the derivative is a choice (clamp at its bounds, select_n's out-of-range
indices, conversions to integers, complex -> real) against values real JAX gives; and the
printed jaxprs of representative grads/jvps against golden text recorded from real JAX 0.10.2.
Each case takes the `jax`, `jnp` and `lax` modules, so the `needs_jax` tests at the end rerun
the same cases on real JAX.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import justjax
import justjax.numpy as jjnp
from justjax import lax as jjlax
from justjax.test_util import check_grads
from tests.harness import x64_mode

F32 = np.float32


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).normal(size=shape)


# ---------------------------------------------------------------------------------------------
# Finite differences: every primitive, to second order, forward and reverse, in float64. A
# nonlinearity (sin) around the linear primitives makes their second derivatives non-zero.

def _fd_cases(lax: Any) -> dict[str, tuple[Callable, list[np.ndarray]]]:
    sin = lax.sin
    which3 = np.array([[0, 2, 1], [1, 0, 2]], np.int32)
    return {
        "broadcast_in_dim": (lambda x: sin(lax.broadcast_in_dim(x, (2, 3, 4), (0, 2))),
                             [_rand(1, 4)]),
        "broadcast_scalar": (lambda x: sin(lax.broadcast_in_dim(x, (2, 3), ())), [_rand()]),
        "broadcast_transposing": (lambda x: sin(lax.broadcast_in_dim(x, (3, 4, 2), (2, 0))),
                                  [_rand(2, 3)]),
        "reshape": (lambda x: sin(lax.reshape(x, (3, 4))), [_rand(2, 6)]),
        "reshape_dimensions": (lambda x: sin(lax.reshape(x, (6, 2), (2, 0, 1))),
                               [_rand(2, 3, 2)]),
        "squeeze": (lambda x: sin(lax.squeeze(x, (0, 2))), [_rand(1, 3, 1)]),
        "expand_dims": (lambda x: sin(lax.expand_dims(x, (0, 2))), [_rand(3, 2)]),
        "transpose": (lambda x: sin(lax.transpose(x, (2, 0, 1))), [_rand(2, 3, 4)]),
        "select_bool": (lambda x, y: lax.select(x > y, sin(x), y * x), [_rand(5), _rand(5, seed=1)]),
        "select_n_int": (lambda x, y: lax.select_n(which3, sin(x), x * y, y),
                         [_rand(2, 3), _rand(2, 3, seed=1)]),
        "select_n_scalar_which": (lambda x, y: lax.select_n(True, sin(x), y * y),
                                  [_rand(3), _rand(3, seed=1)]),
        "clamp": (lambda lo, x, hi: sin(lax.clamp(lo, x, hi)),
                  [np.array([-1.0, 0.0, 0.5, -3.0]), np.array([-2.0, 0.3, 0.9, 1.0]),
                   np.array([1.0, 1.0, 0.7, -2.0])]),
        "clamp_scalar_bounds": (lambda x: sin(lax.clamp(-0.5, x, 0.5)),
                                [np.array([-2.0, 0.1, 0.3, 3.0])]),
        "concatenate": (lambda x, y: sin(lax.concatenate([x, y * y, x], 1)),
                        [_rand(2, 3), _rand(2, 1, seed=1)]),
        "copy": (lambda x: sin(lax.copy_p.bind(x)), [_rand(4)]),
        "convert_same_type": (lambda x: sin(lax.convert_element_type(x * x, np.float64)),
                              [_rand(3)]),
        "tile": (lambda x: sin(lax.tile(x, (2, 1, 3))), [_rand(2, 3, 1)]),
        "stack": (lambda x, y: sin(lax.stack([x, y * x, y], 1)), [_rand(2, 3), _rand(2, 3, seed=1)]),
        "split": (lambda x: [sin(p) for p in lax.split(x, (1, 3, 0), axis=1)], [_rand(2, 4)]),
        "unstack": (lambda x: [sin(p) * p for p in lax.unstack(x, axis=1)], [_rand(2, 3)]),
    }


@pytest.mark.parametrize("name", sorted(_fd_cases(jjlax)))
def test_derivatives_match_finite_differences(name: str) -> None:
    with x64_mode(True):
        fun, args = _fd_cases(jjlax)[name]
        check_grads(fun, args, order=2, modes=("fwd", "rev"))


def test_stop_gradient_is_constant_at_every_order() -> None:
    with x64_mode(True):
        x = np.array([1.0, 2.0])
        hess = justjax.hessian(lambda x: jjnp.sum(jjlax.stop_gradient(x) * x ** 2))(x)
        np.testing.assert_allclose(hess, [[2.0, 0.0], [0.0, 4.0]])
        assert float(justjax.grad(lambda x: jjnp.sum(jjlax.stop_gradient(x) ** 3))(x).sum()) == 0


def test_iota_has_no_tangent() -> None:
    fun = lambda x: x * jjlax.iota(F32, 3)  # noqa: E731
    _, tangent = justjax.jvp(fun, (np.ones(3, F32),), (np.ones(3, F32),))
    np.testing.assert_array_equal(tangent, [0.0, 1.0, 2.0])


# ---------------------------------------------------------------------------------------------
# Conventions: gradients real JAX 0.10.2 gives where the derivative is a choice (the values
# below were printed by real JAX; the `needs_jax` test recomputes them).

_BOUNDS_X = np.array([-1.0, 0.0, 1.0, -2.0, 2.0], F32)


def _value_cases(jax: Any, jnp: Any, lax: Any) -> dict[str, Callable[[], Any]]:
    def clamp_sum(lo: Any, x: Any, hi: Any) -> Any:
        return jnp.sum(lax.clamp(lo, x, hi))

    ones = np.ones(5, F32)
    which = np.array([0, 1, 2, 5, -1], np.int32)
    return {
        # x == lo or x == hi: no tangent flows to anyone; lo only where lo > x, hi where hi < x.
        "clamp_at_bounds": lambda: jax.grad(clamp_sum, (0, 1, 2))(-ones, _BOUNDS_X, ones),
        "clamp_scalar_bounds": lambda: jax.grad(clamp_sum, 1)(F32(-1), _BOUNDS_X, F32(1)),
        # lo > hi: the result is hi, but JAX's rule gives nobody a tangent.
        "clamp_crossed_bounds": lambda: jax.grad(clamp_sum, (0, 1, 2))(F32(2), F32(0), F32(1)),
        "clamp_all_equal": lambda: jax.grad(clamp_sum, (0, 1, 2))(F32(1), F32(1), F32(1)),
        # Out-of-range indices select the nearest case going forward, but the transpose
        # compares `which == i`, so they send no cotangent anywhere.
        "select_n_out_of_range": lambda: jax.grad(
            lambda x: jnp.sum(lax.select_n(which, x, 2 * x, 3 * x)))(_BOUNDS_X),
        "select_tie": lambda: jax.grad(lambda x, y: jnp.sum(jnp.where(x >= y, x, y)), (0, 1))(
            _BOUNDS_X, _BOUNDS_X),
        # complex -> real keeps the real part: its transpose puts the cotangent back there.
        "complex_to_real": lambda: jax.grad(
            lambda z: lax.convert_element_type(z, np.float32) * 3.0)(np.complex64(1 + 2j)),
        "real_to_complex": lambda: jax.grad(
            lambda x: jnp.real(lax.convert_element_type(x, np.complex64)) * 3.0)(F32(1.0)),
        "through_int": lambda: jax.grad(lambda x: lax.convert_element_type(
            lax.convert_element_type(x, np.int32), np.float32) + x)(F32(1.5)),
        "through_bitcast": lambda: jax.grad(
            lambda x: lax.bitcast_convert_type(x, np.int32).astype(np.float32) * x)(F32(1.0)),
        "to_float16": lambda: jax.grad(
            lambda x: jnp.sum(jnp.sin(x.astype(np.float16)).astype(np.float32)))(ones),
    }


EXPECTED_VALUES: dict[str, Any] = {
    "clamp_at_bounds": ([0.0, 0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0, 0.0],
                        [0.0, 0.0, 0.0, 0.0, 1.0]),
    "clamp_scalar_bounds": [0.0, 1.0, 0.0, 0.0, 0.0],
    "clamp_crossed_bounds": (0.0, 0.0, 0.0),
    "clamp_all_equal": (0.0, 0.0, 0.0),
    "select_n_out_of_range": [1.0, 2.0, 3.0, 0.0, 0.0],
    "select_tie": ([1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0]),
    "complex_to_real": 3 + 0j,
    "real_to_complex": 3.0,
    "through_int": 1.0,
    "through_bitcast": 1.0653532e+09,
    "to_float16": [0.54052734375] * 5,
}

EXPECTED_DTYPES: dict[str, Any] = {
    "complex_to_real": np.complex64,
    "real_to_complex": np.float32,
    "to_float16": np.float32,
}


def _assert_values(got: Any, want: Any, context: str) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), context
        for g, w in zip(got, want, strict=True):
            _assert_values(g, w, context)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, err_msg=context)


@pytest.mark.parametrize("name", sorted(EXPECTED_VALUES))
def test_gradient_conventions(name: str) -> None:
    got = _value_cases(justjax, jjnp, jjlax)[name]()
    _assert_values(got, EXPECTED_VALUES[name], name)
    if name in EXPECTED_DTYPES:
        assert np.asarray(got).dtype == EXPECTED_DTYPES[name]


def test_clamp_with_scalar_bound_tangent_fails_as_in_jax() -> None:
    # JAX's rule selects between the scalar bound's tangent and zeros of the operand's shape.
    with pytest.raises(TypeError, match=r"select cases must have the same shapes, got "
                                        r"\[\(5,\), \(\)\]\."):
        justjax.grad(lambda lo, x: jjnp.sum(jjlax.clamp(lo, x, 1.0)), (0, 1))(F32(-1), _BOUNDS_X)


def test_conversion_to_integer_has_float0_tangent() -> None:
    x = np.array([1.5, -2.5], F32)
    out, tangent = justjax.jvp(lambda x: jjlax.convert_element_type(x, np.int32), (x,), (x,))
    assert np.asarray(out).dtype == np.int32
    assert np.asarray(tangent).dtype == justjax.dtypes.float0
    assert np.shape(tangent) == (2,)


def test_bitcast_has_zero_tangent() -> None:
    x = np.array([1.5, -2.5], F32)
    _, tangent = justjax.jvp(lambda x: jjlax.bitcast_convert_type(x, np.uint32), (x,), (x,))
    assert np.asarray(tangent).dtype == justjax.dtypes.float0


def test_select_n_accepts_any_integer_which() -> None:
    which = np.array([0, 1, 2], np.uint8)
    grads = justjax.grad(lambda x: jjnp.sum(jjlax.select_n(which, x, 2 * x, 3 * x)))(
        np.ones(3, F32))
    np.testing.assert_array_equal(grads, [1.0, 2.0, 3.0])


def test_joining_cotangents_with_unused_pieces() -> None:
    x = np.arange(6, dtype=F32).reshape(3, 2)
    grads = justjax.grad(lambda x: jjnp.sum(jjlax.unstack(x)[1] * 2.0))(x)
    np.testing.assert_array_equal(grads, [[0, 0], [2, 2], [0, 0]])
    grads = justjax.grad(lambda x: jjnp.sum(jjlax.split(x, (1, 1, 1))[2] * 3.0))(x)
    np.testing.assert_array_equal(grads, [[0, 0], [0, 0], [3, 3]])


# ---------------------------------------------------------------------------------------------
# Printed jaxprs: `make_jaxpr(grad(f))` (and a few jvps) as real JAX 0.10.2 prints them.

def _jaxpr_cases(jax: Any, jnp: Any, lax: Any) -> dict[str, tuple[Callable, list[np.ndarray]]]:
    x3 = np.arange(3, dtype=F32)
    x5 = np.array([-1.0, 0.0, 1.0, -2.0, 2.0], F32)

    def grad(f: Callable, nargs: int = 1) -> Callable:
        return jax.grad(f, tuple(range(nargs)))

    def jvp(f: Callable) -> Callable:
        return lambda x, t: jax.jvp(f, (x,), (t,))

    return {
        "broadcast_sum": (grad(lambda x: jnp.sum(lax.broadcast_in_dim(x, (4, 3), (1,)) * 2.0)),
                          [x3]),
        "broadcast_unit_dims": (grad(lambda x: jnp.sum(
            jnp.sin(lax.broadcast_in_dim(x, (2, 3, 4), (0, 2))))), [np.ones((1, 4), F32)]),
        "broadcast_scalar_to_unit": (grad(lambda x: jnp.sum(
            lax.broadcast_in_dim(x, (2, 3), (0, 1)))), [np.ones((1, 1), F32)]),
        "broadcasting_mul": (grad(lambda x: jnp.sum(x[:, None] * x[None, :])), [x3]),
        "reshape_transpose_chain": (grad(lambda x: jnp.sum(jnp.sin(
            lax.reshape(lax.transpose(lax.reshape(x, (3, 2)), (1, 0)), (6,))))),
            [np.arange(6, dtype=F32)]),
        "reshape_dimensions": (grad(lambda x: jnp.sum(jnp.sin(lax.reshape(x, (6,), (1, 0))))),
                               [np.ones((2, 3), F32)]),
        "squeeze_expand_dims": (grad(lambda x: jnp.sum(jnp.sin(
            lax.expand_dims(lax.squeeze(x, (0,)), (1,))))), [np.ones((1, 3), F32)]),
        "transpose": (grad(lambda x: jnp.sum(jnp.sin(lax.transpose(x, (2, 0, 1))))),
                      [np.ones((2, 3, 4), F32)]),
        "select_n_int": (grad(lambda x, y: jnp.sum(lax.select_n(
            np.array([0, 1, 2], np.int32), x, y, jnp.cos(x))), 2), [x3, x3]),
        "concatenate": (grad(lambda x, y: jnp.sum(jnp.sin(lax.concatenate([x, y, x], 0))), 2),
                        [np.ones(2, F32), x3]),
        "astype_float16": (grad(lambda x: jnp.sum(jnp.sin(
            lax.convert_element_type(x, np.float16)).astype(np.float32))), [x3]),
        "astype_int": (grad(lambda x: jnp.sum(
            lax.convert_element_type(x, np.int32) * 1.0 + x)), [x3]),
        "astype_weak": (grad(lambda x: lax.convert_element_type(x, np.float32) * 3.0),
                        [1.0]),
        "copy": (grad(lambda x: jnp.sum(jnp.sin(lax.copy_p.bind(x)))), [x3]),
        "stop_gradient": (grad(lambda x: jnp.sum(x * lax.stop_gradient(x))), [x3]),
        "tile": (grad(lambda x: jnp.sum(jnp.sin(lax.tile(x, (2, 3))))), [np.ones((2, 2), F32)]),
        "stack": (grad(lambda x, y: jnp.sum(jnp.sin(lax.stack([x, y], 1))), 2), [x3, x3]),
        "split": (grad(lambda x: jnp.sum(jnp.sin(lax.split(x, (2, 3))[1]))), [x5]),
        "unstack": (grad(lambda x: jnp.sum(jnp.sin(lax.unstack(x)[1]))),
                    [np.ones((3, 2), F32)]),
        "iota": (grad(lambda x: jnp.sum(x * lax.iota(np.float32, 3))), [x3]),
        "jvp_select": (jvp(lambda x: lax.select(x > 0, x, 2.0 * jnp.ones_like(x))), [x5, x5]),
        "jvp_broadcast": (jvp(lambda x: lax.broadcast_in_dim(x, (2, 5), (1,))), [x5, x5]),
        "jvp_concatenate": (jvp(lambda x: lax.concatenate([x, x * 2], 0)), [x5, x5]),
        "jvp_convert": (jvp(lambda x: lax.convert_element_type(x, np.float16)), [x5, x5]),
        "jvp_stop_gradient": (jvp(lambda x: lax.stop_gradient(x) * x), [x5, x5]),
    }


# Cases whose printing differs from JAX's for reasons outside this module's rules: the lead's
# `ad.py` (see the reasons). Their goldens are kept so the difference stays visible.
_KNOWN_DIFFERENCES = {
    "clamp": "ad.defjvp adds each contribution as it is made; JAX makes all, then sums",
    "grad_clamp": "an unused residual stays alive after grad (reference cycle), so it prints "
                  "with a name instead of `_`",
    "grad_concatenate_constant": "an unused residual stays alive after grad (reference "
                                 "cycle), so it prints with a name instead of `_`",
    "jvp_to_int": "JAX stages float0 zeros as `broadcast_in_dim (b'',):float0[]`; "
                  "ad.zeros_like_aval returns a NumPy constant",
}


def _known_difference_cases(jax: Any, jnp: Any, lax: Any
                            ) -> dict[str, tuple[Callable, list[np.ndarray]]]:
    x5 = np.array([-1.0, 0.0, 1.0, -2.0, 2.0], F32)
    return {
        "clamp": (lambda lo, x, hi, t: jax.jvp(lax.clamp, (lo, x, hi), (t, t, t)),
                  [x5, x5, x5, x5]),
        "grad_clamp": (jax.grad(lambda x: jnp.sum(lax.clamp(-1.0, x, 1.0))), [x5]),
        "grad_concatenate_constant": (jax.grad(lambda x: jnp.sum(jnp.sin(
            lax.concatenate([x, np.ones(3, F32)], 0)))), [np.ones(2, F32)]),
        "jvp_to_int": (lambda x, t: jax.jvp(lambda x: lax.convert_element_type(x, np.int32),
                                            (x,), (t,)), [x5, x5]),
    }


# Printed by real JAX 0.10.2 for the cases above (`test_golden_jaxprs_are_jax_s` reruns them).
GOLDEN_JAXPRS: dict[str, str] = {
    "astype_float16": """\
{ lambda ; a:f32[3]. let
    b:f16[3] = convert_element_type[new_dtype=float16 weak_type=False] a
    c:f16[3] = sin b
    d:f16[3] = cos b
    e:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    f:f32[3] = broadcast_in_dim 1.0:f32[]
    g:f16[3] = convert_element_type[new_dtype=float16 weak_type=False] f
    h:f16[3] = mul g d
    i:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] h
  in (i,) }""",
    "astype_int": """\
{ lambda ; a:f32[3]. let
    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] b
    d:f32[3] = mul c 1.0:f32[]
    e:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] d
    f:f32[3] = add e a
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
    g:f32[3] = broadcast_in_dim 1.0:f32[]
  in (g,) }""",
    "astype_weak": """\
{ lambda ; a:f32[]. let
    b:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    _:f32[] = mul b 3.0:f32[]
    c:f32[] = mul 1.0:f32[] 3.0:f32[]
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=True] c
  in (d,) }""",
    "broadcast_scalar_to_unit": """\
{ lambda ; a:f32[1,1]. let
    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(0, 1)] a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[2,3] = broadcast_in_dim 1.0:f32[]
    d:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    e:f32[1,1] = broadcast_in_dim d
  in (e,) }""",
    "broadcast_sum": """\
{ lambda ; a:f32[3]. let
    b:f32[4,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    c:f32[4,3] = mul b 2.0:f32[]
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[4,3] = broadcast_in_dim 1.0:f32[]
    e:f32[4,3] = mul d 2.0:f32[]
    f:f32[3] = reduce_sum[axes=(0,) out_sharding=None] e
  in (f,) }""",
    "broadcast_unit_dims": """\
{ lambda ; a:f32[1,4]. let
    b:f32[2,3,4] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a
    c:f32[2,3,4] = sin b
    d:f32[2,3,4] = cos b
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] c
    e:f32[2,3,4] = broadcast_in_dim 1.0:f32[]
    f:f32[2,3,4] = mul e d
    g:f32[4] = reduce_sum[axes=(0, 1) out_sharding=None] f
    h:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] g
  in (h,) }""",
    "broadcasting_mul": """\
{ lambda ; a:f32[3]. let
    b:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    c:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    d:f32[3,3] = mul b c
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    e:f32[3,3] = broadcast_in_dim 1.0:f32[]
    f:f32[3,3] = mul b e
    g:f32[3] = reduce_sum[axes=(0,) out_sharding=None] f
    h:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] g
    i:f32[3,3] = mul e c
    j:f32[3] = reduce_sum[axes=(1,) out_sharding=None] i
    k:f32[3,1] = reshape[dimensions=None new_sizes=(3, 1) sharding=None] j
    l:f32[3] = reduce_sum[axes=(0,) out_sharding=None] h
    m:f32[3] = reduce_sum[axes=(1,) out_sharding=None] k
    n:f32[3] = add_any l m
  in (n,) }""",
    "clamp": """\
{ lambda ; a:f32[5] b:f32[5] c:f32[5] d:f32[5]. let
    e:f32[5] = clamp a b c
    f:bool[5] = gt a b
    g:bool[5] = lt a c
    h:bool[5] = and f g
    i:f32[5] = broadcast_in_dim 0.0:f32[]
    j:f32[5] = select_n h i d
    k:bool[5] = gt b a
    l:bool[5] = lt b c
    m:bool[5] = and k l
    n:f32[5] = broadcast_in_dim 0.0:f32[]
    o:f32[5] = select_n m n d
    p:bool[5] = lt c b
    q:f32[5] = broadcast_in_dim 0.0:f32[]
    r:f32[5] = select_n p q d
    s:f32[5] = add_any j o
    t:f32[5] = add_any s r
  in (e, t) }""",
    "concatenate": """\
{ lambda ; a:f32[2] b:f32[3]. let
    c:f32[7] = concatenate[dimension=0] a b a
    d:f32[7] = sin c
    e:f32[7] = cos c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
    f:f32[7] = broadcast_in_dim 1.0:f32[]
    g:f32[7] = mul f e
    h:f32[2] i:f32[3] j:f32[2] = split[axis=0 sizes=(2, 3, 2)] g
    k:f32[2] = add_any h j
  in (k, i) }""",
    "copy": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = copy a
    c:f32[3] = sin b
    d:f32[3] = cos b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = mul e d
    g:f32[3] = copy f
  in (g,) }""",
    "grad_clamp": """\
{ lambda ; a:f32[5]. let
    b:f32[5] = clamp -1.0:f32[] a 1.0:f32[]
    c:bool[5] = gt a -1.0:f32[]
    d:bool[5] = lt a 1.0:f32[]
    e:bool[5] = and c d
    _:f32[5] = broadcast_in_dim 0.0:f32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    f:f32[5] = broadcast_in_dim 1.0:f32[]
    g:f32[5] = broadcast_in_dim 0.0:f32[]
    h:f32[5] = select_n e g f
  in (h,) }""",
    "grad_concatenate_constant": """\
{ lambda a:f32[3]; b:f32[2]. let
    c:f32[5] = concatenate[dimension=0] b a
    _:f32[3] = broadcast_in_dim 0.0:f32[]
    d:f32[5] = sin c
    e:f32[5] = cos c
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
    f:f32[5] = broadcast_in_dim 1.0:f32[]
    g:f32[5] = mul f e
    h:f32[2] _:f32[3] = split[axis=0 sizes=(2, 3)] g
  in (h,) }""",
    "iota": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = iota[dimension=0 dtype=float32 shape=(3,) sharding=None] 
    c:f32[3] = mul a b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = mul d b
  in (e,) }""",
    "jvp_broadcast": """\
{ lambda ; a:f32[5] b:f32[5]. let
    c:f32[2,5] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    d:f32[2,5] = broadcast_in_dim[broadcast_dimensions=(1,)] b
  in (c, d) }""",
    "jvp_concatenate": """\
{ lambda ; a:f32[5] b:f32[5]. let
    c:f32[5] = mul a 2.0:f32[]
    d:f32[5] = mul b 2.0:f32[]
    e:f32[10] = concatenate[dimension=0] a c
    f:f32[10] = concatenate[dimension=0] b d
  in (e, f) }""",
    "jvp_convert": """\
{ lambda ; a:f32[5] b:f32[5]. let
    c:f16[5] = convert_element_type[new_dtype=float16 weak_type=False] a
    d:f16[5] = convert_element_type[new_dtype=float16 weak_type=False] b
  in (c, d) }""",
    "jvp_select": """\
{ lambda ; a:f32[5] b:f32[5]. let
    c:bool[5] = gt a 0.0:f32[]
    d:f32[5] = broadcast_in_dim 1.0:f32[]
    e:f32[5] = mul 2.0:f32[] d
    f:f32[5] = select_n c e a
    g:f32[5] = broadcast_in_dim 0.0:f32[]
    h:f32[5] = select_n c g b
  in (f, h) }""",
    "jvp_stop_gradient": """\
{ lambda ; a:f32[5] b:f32[5]. let
    c:f32[5] = stop_gradient a
    d:f32[5] = mul c a
    e:f32[5] = mul c b
  in (d, e) }""",
    "jvp_to_int": """\
{ lambda ; a:f32[5] b:f32[5]. let
    c:i32[5] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:float0[5] = broadcast_in_dim (b'',):float0[]
  in (c, d) }""",
    "reshape_dimensions": """\
{ lambda ; a:f32[2,3]. let
    b:f32[6] = reshape[dimensions=(1, 0) new_sizes=(6,) sharding=None] a
    c:f32[6] = sin b
    d:f32[6] = cos b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    e:f32[6] = broadcast_in_dim 1.0:f32[]
    f:f32[6] = mul e d
    g:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] f
    h:f32[2,3] = transpose[permutation=(1, 0)] g
  in (h,) }""",
    "reshape_transpose_chain": """\
{ lambda ; a:f32[6]. let
    b:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a
    c:f32[2,3] = transpose[permutation=(1, 0)] b
    d:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] c
    e:f32[6] = sin d
    f:f32[6] = cos d
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    g:f32[6] = broadcast_in_dim 1.0:f32[]
    h:f32[6] = mul g f
    i:f32[2,3] = reshape[dimensions=None new_sizes=(2, 3) sharding=None] h
    j:f32[3,2] = transpose[permutation=(1, 0)] i
    k:f32[6] = reshape[dimensions=None new_sizes=(6,) sharding=None] j
  in (k,) }""",
    "select_n_int": """\
{ lambda a:i32[3]; b:f32[3] c:f32[3]. let
    d:f32[3] = cos b
    e:f32[3] = sin b
    f:f32[3] = select_n a b c d
    _:f32[3] = broadcast_in_dim 0.0:f32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
    g:f32[3] = broadcast_in_dim 1.0:f32[]
    h:f32[3] = broadcast_in_dim 0.0:f32[]
    i:bool[3] = eq a 0:i32[]
    j:f32[3] = select_n i h g
    k:bool[3] = eq a 1:i32[]
    l:f32[3] = select_n k h g
    m:bool[3] = eq a 2:i32[]
    n:f32[3] = select_n m h g
    o:f32[3] = neg n
    p:f32[3] = mul o e
    q:f32[3] = add_any j p
  in (q, l) }""",
    "split": """\
{ lambda ; a:f32[5]. let
    _:f32[2] b:f32[3] = split[axis=0 sizes=(2, 3)] a
    c:f32[3] = sin b
    d:f32[3] = cos b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = mul e d
    g:f32[2] = broadcast_in_dim 0.0:f32[]
    h:f32[5] = concatenate[dimension=0] g f
  in (h,) }""",
    "squeeze_expand_dims": """\
{ lambda ; a:f32[1,3]. let
    b:f32[3] = squeeze[dimensions=(0,)] a
    c:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] b
    d:f32[3,1] = sin c
    e:f32[3,1] = cos c
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    f:f32[3,1] = broadcast_in_dim 1.0:f32[]
    g:f32[3,1] = mul f e
    h:f32[3] = reduce_sum[axes=(1,) out_sharding=None] g
    i:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] h
  in (i,) }""",
    "stack": """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[3,2] = stack[axis=1] a b
    d:f32[3,2] = sin c
    e:f32[3,2] = cos c
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    f:f32[3,2] = broadcast_in_dim 1.0:f32[]
    g:f32[3,2] = mul f e
    h:f32[3] i:f32[3] = unstack[axis=1] g
  in (h, i) }""",
    "stop_gradient": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = stop_gradient a
    c:f32[3] = mul a b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = mul d b
  in (e,) }""",
    "tile": """\
{ lambda ; a:f32[2,2]. let
    b:f32[4,6] = tile[reps=(2, 3)] a
    c:f32[4,6] = sin b
    d:f32[4,6] = cos b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    e:f32[4,6] = broadcast_in_dim 1.0:f32[]
    f:f32[4,6] = mul e d
    g:f32[2,2,3,2] = reshape[
      dimensions=None
      new_sizes=(2, 2, 3, 2)
      sharding=None
    ] f
    h:f32[2,2] = reduce_sum[axes=(0, 2) out_sharding=None] g
  in (h,) }""",
    "transpose": """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[4,2,3] = transpose[permutation=(2, 0, 1)] a
    c:f32[4,2,3] = sin b
    d:f32[4,2,3] = cos b
    _:f32[] = reduce_sum[axes=(0, 1, 2) out_sharding=None] c
    e:f32[4,2,3] = broadcast_in_dim 1.0:f32[]
    f:f32[4,2,3] = mul e d
    g:f32[2,3,4] = transpose[permutation=(1, 2, 0)] f
  in (g,) }""",
    "unstack": """\
{ lambda ; a:f32[3,2]. let
    _:f32[2] b:f32[2] _:f32[2] = unstack[axis=0] a
    c:f32[2] = sin b
    d:f32[2] = cos b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    e:f32[2] = broadcast_in_dim 1.0:f32[]
    f:f32[2] = mul e d
    g:f32[2] = broadcast_in_dim 0.0:f32[]
    h:f32[2] = broadcast_in_dim 0.0:f32[]
    i:f32[3,2] = stack[axis=0] g f h
  in (i,) }""",
}


@pytest.mark.parametrize("name", sorted(_jaxpr_cases(justjax, jjnp, jjlax)))
def test_jaxprs_match_jax(name: str) -> None:
    fun, args = _jaxpr_cases(justjax, jjnp, jjlax)[name]
    assert str(justjax.make_jaxpr(fun)(*args)) == GOLDEN_JAXPRS[name]


@pytest.mark.parametrize("name", sorted(_KNOWN_DIFFERENCES))
def test_jaxprs_known_differences(name: str) -> None:
    fun, args = _known_difference_cases(justjax, jjnp, jjlax)[name]
    text = str(justjax.make_jaxpr(fun)(*args))
    if text != GOLDEN_JAXPRS[name]:
        pytest.xfail(_KNOWN_DIFFERENCES[name])


# ---------------------------------------------------------------------------------------------
# Directly against real JAX (skipped when jax is not installed).

@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(GOLDEN_JAXPRS))
def test_golden_jaxprs_are_jax_s(name: str) -> None:
    real_jax = pytest.importorskip("jax")
    cases = {**_jaxpr_cases(real_jax, real_jax.numpy, real_jax.lax),
             **_known_difference_cases(real_jax, real_jax.numpy, real_jax.lax)}
    fun, args = cases[name]
    assert str(real_jax.make_jaxpr(fun)(*args)) == GOLDEN_JAXPRS[name]


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(EXPECTED_VALUES))
def test_conventions_are_jax_s(name: str) -> None:
    real_jax = pytest.importorskip("jax")
    got = _value_cases(real_jax, real_jax.numpy, real_jax.lax)[name]()
    _assert_values(got, EXPECTED_VALUES[name], name)


# JAX 0.10.2 accepts unordered broadcast_dimensions but its transpose rule then returns a
# cotangent of the wrong shape ("Expected cotangent type float64[2,3] but got float64[3,2]");
# justjax transposes it back (checked against finite differences above).
_JAX_FAILS = {"broadcast_transposing"}


@pytest.mark.needs_jax
@pytest.mark.parametrize("name", sorted(set(_fd_cases(jjlax)) - _JAX_FAILS))
def test_gradients_are_jax_s(name: str) -> None:
    """The same first derivatives (vjp of a fixed cotangent) as real JAX, in float64."""
    real_jax = pytest.importorskip("jax")
    with real_jax.enable_x64(True):
        fun, args = _fd_cases(real_jax.lax)[name]
        want = _weighted_vjp(real_jax, fun, args)
    with x64_mode(True):
        fun, args = _fd_cases(jjlax)[name]
        got = _weighted_vjp(justjax, fun, args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)


def _weighted_vjp(jax: Any, fun: Callable, args: list[np.ndarray]) -> list[Any]:
    out, pullback = jax.vjp(fun, *args)
    leaves, treedef = jax.tree_util.tree_flatten(out)
    cts = [np.cos(np.arange(np.size(leaf), dtype=np.float64)).reshape(np.shape(leaf)) + 1.5
           for leaf in leaves]
    return list(pullback(jax.tree_util.tree_unflatten(treedef, cts)))
