"""PRNG keys (`_src/lax/prng.py`, `_src/random/keys.py`): the threefry2x32 hash against
Random123's known answers, raw and typed keys, split / fold_in / bits / uniform / normal in
both threefry modes and under x64, key arrays through shape ops, jit, vmap, scan and
fori_loop, printed jaxprs, and JAX's errors. Every expected value and text was read off real
JAX 0.10.2 (the test that compares with it directly is `test_random_programs.py`).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax, random
from justjax._src.lax import prng
from tests.harness import lower_to_module, run_reference, x64_mode

U32 = np.uint32


@pytest.fixture
def legacy_threefry():
    with jax.config.override("jax_threefry_partitionable", False):
        yield


def _data(keys: Any) -> np.ndarray:
    return np.asarray(random.key_data(keys))


# ---------------------------------------------------------------------------------------------
# The hash: Random123's known answers, eagerly, jitted, lowered, batched.

KNOWN_ANSWERS = [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("key, count, expected", KNOWN_ANSWERS)
@pytest.mark.parametrize("how", ["eager", "jit", "reference_backend"])
def test_threefry2x32_known_answers(key: tuple, count: tuple, expected: tuple, how: str) -> None:
    args = [np.array(v, U32) for v in (*key, *count)]
    if how == "eager":
        out = prng.threefry2x32_p.bind(*args)
    elif how == "jit":
        out = jax.jit(lambda *a: prng.threefry2x32_p.bind(*a))(*args)
    else:
        out = run_reference(lower_to_module(lambda *a: prng.threefry2x32_p.bind(*a), *args),
                            *args)
    assert [int(v) for v in out] == list(expected)


def test_threefry_2x32_of_a_count_array() -> None:
    out = prng.threefry_2x32(np.array(KNOWN_ANSWERS[2][0], U32),
                             np.array(KNOWN_ANSWERS[2][1], U32))
    assert [int(v) for v in np.asarray(out)] == list(KNOWN_ANSWERS[2][2])


def test_threefry2x32_broadcasts_and_batches() -> None:
    rng = np.random.default_rng(0)
    k1, k2 = rng.integers(0, 2 ** 32, (2, 5), dtype=U32)
    x1, x2 = rng.integers(0, 2 ** 32, (2, 5, 3), dtype=U32)
    batched = jax.vmap(lambda *a: prng.threefry2x32_p.bind(*a), in_axes=(0, 0, 0, 0))(
        k1, k2, x1, x2)
    for i in range(5):
        one = prng.threefry2x32_p.bind(k1[i], k2[i], x1[i], x2[i])
        for got, want in zip(batched, one, strict=True):
            np.testing.assert_array_equal(np.asarray(got)[i], np.asarray(want))


def test_threefry2x32_rejects_other_dtypes() -> None:
    with pytest.raises(TypeError, match="must have uint32 type"):
        prng.threefry2x32_p.bind(*[np.zeros(2, np.int32)] * 4)


# ---------------------------------------------------------------------------------------------
# Keys and what JAX gives for them.

@pytest.mark.parametrize("seed, expected", [
    (0, [0, 0]), (42, [0, 42]), (-1, [0, 4294967295]), (2 ** 32 + 5, [0, 5]),
    (np.uint32(7), [0, 7]), (np.int8(-1), [0, 4294967295]),
    (np.uint32(4000000000), [0, 4000000000]),
])
def test_prngkey_seeds(seed: Any, expected: list) -> None:
    key = random.PRNGKey(seed)
    assert key.dtype == np.uint32 and key.shape == (2,)
    np.testing.assert_array_equal(np.asarray(key), expected)


def test_prngkey_64_bit_seeds_under_x64() -> None:
    with x64_mode(True):
        np.testing.assert_array_equal(np.asarray(random.PRNGKey(2 ** 40 + 3)), [256, 3])
        np.testing.assert_array_equal(np.asarray(random.PRNGKey(-5)),
                                      [4294967295, 4294967291])


KNOWN_VALUES: list[tuple[str, Callable[[], Any], Any]] = [
    ("split", lambda: random.split(random.PRNGKey(0)),
     [[1797259609, 2579123966], [928981903, 3453687069]]),
    ("fold_in", lambda: random.fold_in(random.PRNGKey(0), 4), [2285895361, 433833334]),
    ("bits", lambda: random.bits(random.PRNGKey(0), (4,)),
     [4070199207, 4202968722, 1427181096, 2012915765]),
    ("bits_u8", lambda: random.bits(random.PRNGKey(0), (5,), jnp.uint8),
     [167, 146, 40, 53, 183]),
    ("bits_u16", lambda: random.bits(random.PRNGKey(0), (3,), jnp.uint16),
     [20391, 13970, 3624]),
    ("uniform", lambda: random.uniform(random.PRNGKey(0), (3,)),
     [0.947667, 0.9785799, 0.33229148]),
    ("split3_typed", lambda: _data(random.split(random.key(0), 3)),
     [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]]),
]


@pytest.mark.parametrize("name, compute, expected", KNOWN_VALUES,
                         ids=[v[0] for v in KNOWN_VALUES])
def test_known_values(name: str, compute: Callable[[], Any], expected: Any) -> None:
    out = np.asarray(compute())
    if out.dtype.kind == "f":
        np.testing.assert_array_equal(out, np.array(expected, out.dtype))
    else:
        np.testing.assert_array_equal(out, expected)


def test_normal_known_values() -> None:
    # The reference backend evaluates erf_inv with XLA's polynomial, so these are JAX's bits.
    np.testing.assert_array_equal(np.asarray(random.normal(random.PRNGKey(0), (3,))),
                                  np.array([1.6226422, 2.0252647, -0.43359444], np.float32))


LEGACY_VALUES: list[tuple[str, Callable[[], Any], Any]] = [
    ("split", lambda: random.split(random.PRNGKey(0)),
     [[4146024105, 967050713], [2718843009, 1272950319]]),
    ("bits", lambda: random.bits(random.PRNGKey(0), (5,)),
     [2467461003, 428148500, 1688610540, 3840466878, 2562233961]),
    ("bits_u8", lambda: random.bits(random.PRNGKey(0), (5,), jnp.uint8),
     [143, 35, 95, 55, 29]),
    ("uniform", lambda: random.uniform(random.PRNGKey(0), (3,)),
     np.array([0.9653214, 0.31468165, 0.63302994], np.float32)),
    ("fold_in", lambda: random.fold_in(random.PRNGKey(0), 4), [2285895361, 433833334]),
    ("split_2x3", lambda: random.split(random.PRNGKey(7), (2, 3)),
     [[[2687091327, 479631483], [737687000, 1136870432], [2050508044, 4028859945]],
      [[3539857703, 139339095], [62160918, 1127502691], [618713603, 1017035898]]]),
]


@pytest.mark.parametrize("name, compute, expected", LEGACY_VALUES,
                         ids=[v[0] for v in LEGACY_VALUES])
def test_legacy_threefry_mode(legacy_threefry: None, name: str, compute: Callable[[], Any],
                              expected: Any) -> None:
    np.testing.assert_array_equal(np.asarray(compute()), expected)


def test_x64_values() -> None:
    with x64_mode(True):
        want = np.array([7719171245655871230, 3989946895414531357, 17807037942121513089],
                        np.uint64)
        np.testing.assert_array_equal(np.asarray(random.bits(random.PRNGKey(0), (3,))), want)
        u = random.uniform(random.PRNGKey(0), (3,))
        assert u.dtype == np.float64
        np.testing.assert_allclose(np.asarray(u), [0.41845711, 0.21629545, 0.96532146],
                                   rtol=1e-7)
        with jax.config.override("jax_threefry_partitionable", False):
            np.testing.assert_array_equal(
                np.asarray(random.bits(random.PRNGKey(0), (3,))),
                np.array([10597664315880824766, 1838883807893689961, 13686855971547664781],
                         np.uint64))


# ---------------------------------------------------------------------------------------------
# Typed keys.

def test_typed_key_metadata_and_repr() -> None:
    key = random.key(0)
    assert str(key.dtype) == "key<fry>" and key.shape == () and key.itemsize == 8
    assert jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    assert jnp.issubdtype(key.dtype, jax.dtypes.extended)
    assert not jnp.issubdtype(jnp.float32, jax.dtypes.prng_key)
    assert random.key_impl(key) == "threefry2x32"
    assert random.key_impl(random.PRNGKey(0)) == "threefry2x32"
    assert repr(random.split(key, 2)) == (
        "Array((2,), dtype=key<fry>) overlaying:\n"
        "[[1797259609 2579123966]\n [ 928981903 3453687069]]")


def test_key_data_round_trips_through_wrap_key_data() -> None:
    keys = random.split(random.key(3), 4)
    data = random.key_data(keys)
    assert data.dtype == np.uint32 and data.shape == (4, 2)
    again = random.wrap_key_data(data)
    np.testing.assert_array_equal(_data(again), np.asarray(data))
    assert bool(jnp.all(again == keys)) and not bool(jnp.any(again != keys))


SPLIT_OF_KEY_1 = np.array([[507451445, 1853169794], [1948878966, 4237131848],
                           [2441914641, 3819641963], [3568232559, 2761185182]], np.uint32)


@pytest.mark.parametrize("name, compute, expected", [
    ("index", lambda ks: ks[2], SPLIT_OF_KEY_1[2]),
    ("slice", lambda ks: ks[1:3], SPLIT_OF_KEY_1[1:3]),
    ("reshape", lambda ks: ks.reshape(2, 2), SPLIT_OF_KEY_1.reshape(2, 2, 2)),
    ("stack", lambda ks: jnp.stack([ks[0], ks[3]]), SPLIT_OF_KEY_1[[0, 3]]),
    ("concatenate", lambda ks: jnp.concatenate([ks, ks]), np.concatenate([SPLIT_OF_KEY_1] * 2)),
    ("where", lambda ks: jnp.where(jnp.array([True, False, True, False]), ks, ks[::-1]),
     SPLIT_OF_KEY_1[[0, 2, 2, 0]]),
    ("traced_index", lambda ks: jax.jit(lambda ks, i: ks[i])(ks, 2), SPLIT_OF_KEY_1[2]),
    ("transpose", lambda ks: ks.reshape(2, 2).T, SPLIT_OF_KEY_1.reshape(2, 2, 2)
     .transpose(1, 0, 2)),
    ("gather", lambda ks: ks[jnp.array([3, 0, 0])], SPLIT_OF_KEY_1[[3, 0, 0]]),
    ("jit_identity", lambda ks: jax.jit(lambda k: k)(ks), SPLIT_OF_KEY_1),
], ids=lambda v: v if isinstance(v, str) else "")
def test_shape_ops_on_key_arrays(name: str, compute: Callable, expected: np.ndarray) -> None:
    keys = random.split(random.key(1), 4)
    np.testing.assert_array_equal(_data(compute(keys)), expected)


def test_zeros_of_key_dtype() -> None:
    key = random.key(0)
    zeros = jnp.zeros((2,), dtype=key.dtype)
    assert zeros.dtype == key.dtype and zeros.shape == (2,)
    np.testing.assert_array_equal(_data(zeros), np.zeros((2, 2), np.uint32))
    np.testing.assert_array_equal(_data(jnp.zeros_like(key)), [0, 0])


def test_eval_shape_of_key_arrays() -> None:
    out = jax.eval_shape(lambda: random.split(random.key(0), 5))
    assert repr(out) == "ShapeDtypeStruct(shape=(5,), dtype=key<fry>)"


# ---------------------------------------------------------------------------------------------
# Transformations.

def test_vmap_over_keys_matches_a_loop() -> None:
    keys = random.split(random.key(1), 4)
    bits = jax.vmap(lambda k: random.bits(k, (2,)))(keys)
    folded = jax.vmap(lambda k: random.key_data(random.fold_in(k, 7)))(keys)
    for i in range(4):
        np.testing.assert_array_equal(np.asarray(bits)[i],
                                      np.asarray(random.bits(keys[i], (2,))))
        np.testing.assert_array_equal(np.asarray(folded)[i], _data(random.fold_in(keys[i], 7)))
    np.testing.assert_array_equal(np.asarray(bits), [[3017709682, 1008607346],
                                                      [1733648124, 2357486511],
                                                      [2395664632, 962309673],
                                                      [668350045, 1040490821]])


def test_vmap_of_key_constructors() -> None:
    raw = jax.vmap(random.PRNGKey)(jnp.arange(3))
    np.testing.assert_array_equal(np.asarray(raw), [[0, 0], [0, 1], [0, 2]])
    typed = jax.vmap(random.key)(jnp.arange(3))
    np.testing.assert_array_equal(_data(typed), [[0, 0], [0, 1], [0, 2]])


@pytest.mark.parametrize("jitted", [False, True])
def test_scan_over_typed_keys(jitted: bool) -> None:
    def body(c: Any, k: Any) -> Any:
        return c + random.uniform(k), random.key_data(k)

    keys = random.split(random.key(1), 4)
    run = (lambda ks: lax.scan(body, 0.0, ks))
    total, data = (jax.jit(run) if jitted else run)(keys)
    np.testing.assert_allclose(float(total), 1.819658, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(data), SPLIT_OF_KEY_1)


def test_fori_loop_folding_in_raw_and_typed_keys() -> None:
    raw = lax.fori_loop(0, 3, lambda i, k: random.fold_in(k, i), random.PRNGKey(3))
    np.testing.assert_array_equal(np.asarray(raw), [1990393723, 1417861917])
    typed = lax.fori_loop(0, 3, lambda i, k: random.fold_in(k, i), random.key(1))
    np.testing.assert_array_equal(_data(typed), [3166720447, 2392263801])


def test_grad_through_a_sampler_leaves_the_key_alone() -> None:
    key = random.key(0)
    g = jax.grad(lambda x, k: x * random.normal(k))(1.0, key)
    np.testing.assert_allclose(float(g), float(random.normal(key)), rtol=1e-7)


def test_lowered_key_program_runs_on_the_reference_backend() -> None:
    f = lambda k: random.bits(random.split(k, 3)[1], (4,))
    module = lower_to_module(f, np.zeros(2, np.uint32))
    (out,) = run_reference(module, np.zeros(2, np.uint32))
    np.testing.assert_array_equal(out, np.asarray(f(random.PRNGKey(0))))


# ---------------------------------------------------------------------------------------------
# Printed jaxprs (JAX 0.10.2's text).

KEY_DTYPE = random.key(0).dtype
JAXPRS = [
    (lambda s: random.key(s), (0,),
     "{ lambda ; a:i32[]. let b:key<fry>[] = random_seed[impl=fry] a in (b,) }"),
    (lambda s: random.PRNGKey(s), (0,),
     "{ lambda ; a:i32[]. let\n    b:key<fry>[] = random_seed[impl=fry] a\n"
     "    c:u32[2] = random_unwrap b\n  in (c,) }"),
    (lambda k: random.fold_in(k, 3), (np.zeros(2, U32),),
     "{ lambda ; a:u32[2]. let\n    b:key<fry>[] = random_wrap[impl=fry] a\n"
     "    c:key<fry>[] = random_fold_in b 3:u32[]\n    d:u32[2] = random_unwrap c\n"
     "  in (d,) }"),
    (lambda k: random.split(k, (2, 3)), (np.zeros(2, U32),),
     "{ lambda ; a:u32[2]. let\n    b:key<fry>[] = random_wrap[impl=fry] a\n"
     "    c:key<fry>[2,3] = random_split[shape=(2, 3)] b\n"
     "    d:u32[2,3,2] = random_unwrap c\n  in (d,) }"),
    (lambda k: random.bits(k, (2,), jnp.uint8), (random.key(0),),
     "{ lambda ; a:key<fry>[]. let\n    b:u8[2] = random_bits[bit_width=8 shape=(2,)] a\n"
     "  in (b,) }"),
    (lambda k: random.clone(k), (random.key(0),),
     "{ lambda ; a:key<fry>[]. let b:key<fry>[] = random_clone a in (b,) }"),
    (lambda k: k[0], (random.split(random.key(0), 3),),
     "{ lambda ; a:key<fry>[3]. let\n"
     "    b:key<fry>[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a\n"
     "    c:key<fry>[] = squeeze[dimensions=(0,)] b\n  in (c,) }"),
    (lambda a, b: (a == b, a != b), (random.key(0), random.split(random.key(0))),
     "{ lambda ; a:key<fry>[] b:key<fry>[2]. let\n    c:bool[2] = eq a b\n"
     "    d:bool[2] = ne a b\n  in (c, d) }"),
    (lambda: jnp.zeros((2,), dtype=KEY_DTYPE), (),
     "{ lambda ; . let\n    a:u32[2,2] = broadcast_in_dim 0:u32[]\n"
     "    b:key<fry>[2] = random_wrap[impl=fry] a\n  in (b,) }"),
]


@pytest.mark.parametrize("f, args, text", JAXPRS, ids=range(len(JAXPRS)))
def test_jaxprs_print_as_jax(f: Callable, args: tuple, text: str) -> None:
    assert str(jax.make_jaxpr(f)(*args)) == text


UNIFORM_JAXPR = """\
let _uniform = { lambda ; a:key<fry>[] b:f32[] c:f32[]. let
    d:f32[1] = broadcast_in_dim b
    e:f32[1] = broadcast_in_dim c
    f:u32[2] = random_bits[bit_width=32 shape=(2,)] a
    g:u32[2] = shift_right_logical f 9:u32[]
    h:u32[2] = or g 1065353216:u32[]
    i:f32[2] = bitcast_convert_type[new_dtype=float32] h
    j:f32[2] = sub i 1.0:f32[]
    k:f32[1] = sub e d
    l:f32[2] = mul j k
    m:f32[2] = add l d
    n:f32[2] = max d m
  in (n,) } in
{ lambda ; o:key<fry>[]. let
    p:f32[2] = jit[
      name=_normal
      jaxpr={ lambda ; o:key<fry>[]. let
          p:f32[2] = jit[
            name=_normal_real
            jaxpr={ lambda ; o:key<fry>[]. let
                q:f32[2] = jit[name=_uniform jaxpr=_uniform] o -0.9999999403953552:f32[]
                  1.0:f32[]
                r:f32[2] = erf_inv q
                p:f32[2] = mul 1.4142135381698608:f32[] r
              in (p,) }
          ] o
        in (p,) }
    ] o
  in (p,) }"""


def test_normal_jaxpr_prints_as_jax() -> None:
    assert str(jax.make_jaxpr(lambda k: random.normal(k, (2,)))(random.key(0))) == UNIFORM_JAXPR


# ---------------------------------------------------------------------------------------------
# Errors (JAX's classes and messages).

ERRORS = [
    (lambda: random.split(random.split(random.key(0))), ValueError,
     "split accepts a single key, but was given a key array of shape (2,) != (). Use jax.vmap "
     "for batching."),
    (lambda: random.split(jnp.zeros(2, jnp.float32)), TypeError,
     "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got "
     "dtype=float32"),
    (lambda: random.split(jnp.zeros(3, jnp.uint32)), TypeError,
     "JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got "
     "shape=(3,) for impl=PRNGImpl(key_shape=(2,), seed=<function threefry_seed at "),
    (lambda: random.fold_in(random.key(0), jnp.arange(2)), TypeError,
     "fold_in accepts a scalar, but was given an array ofshape (2,) != (). Use jax.vmap for "
     "batching."),
    (lambda: random.key(jnp.arange(2)), TypeError,
     "key accepts a scalar seed, but was given an array of shape (2,) != (). Use jax.vmap for "
     "batching"),
    (lambda: random.key(1.5), TypeError, "PRNG key seed must be an integer; got "),
    (lambda: random.key(random.key(0)), TypeError,
     "key accepts a scalar seed, but was given a PRNG key."),
    (lambda: random.bits(random.key(0), (2,), jnp.int32), ValueError,
     "dtype argument to `bits` must be an unsigned int dtype, got int32"),
    (lambda: random.uniform(random.key(0), (2,), jnp.int32), ValueError,
     "dtype argument to `uniform` must be a float dtype, got int32"),
    (lambda: random.normal(random.key(0), (2,), jnp.int32), ValueError,
     "dtype argument to `normal` must be a float or complex dtype, got int32"),
    (lambda: random.uniform(random.key(0), (2,), minval=jnp.zeros(3)), TypeError,
     "mul got incompatible shapes for broadcasting: (2,), (3,)."),
    (lambda: random.split([1, 2]), TypeError, "unexpected PRNG key type <class 'list'>"),
    (lambda: random.split("key"), TypeError,
     "JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, and dtype "
     "attributes. Got key"),
    (lambda: random.split(np.uint32(5)), TypeError,
     "JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim=0"),
    (lambda: random.wrap_key_data([0, 1]), TypeError,
     "JAX encountered invalid PRNG key data: expected key_data to have ndim, shape, and dtype "
     "attributes. Got [0, 1]"),
    (lambda: np.asarray(random.key(0)), TypeError,
     "JAX array with PRNGKey dtype cannot be converted to a NumPy array."),
    (lambda: random.key(0) + 1, TypeError, "add does not accept dtypes key<fry>, int32."),
]


@pytest.mark.parametrize("call, error, message", ERRORS, ids=range(len(ERRORS)))
def test_errors(call: Callable, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value).startswith(message), str(info.value)


def test_legacy_key_mode_error_and_warning() -> None:
    with jax.config.override("jax_legacy_prng_key", "error"):
        with pytest.raises(ValueError, match="Legacy uint32 key array passed"):
            random.split(random.PRNGKey(0))
    with jax.config.override("jax_legacy_prng_key", "warn"):
        with pytest.warns(UserWarning, match="Legacy uint32 key array passed"):
            random.split(random.PRNGKey(0))


# ---------------------------------------------------------------------------------------------
# erf_inv, evaluated as XLA does (normal samples are sqrt(2) * erf_inv(uniform)).

@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-6), (np.float64, 1e-12)])
def test_erf_inv_is_accurate_and_keeps_edge_cases(dtype: type, rtol: float) -> None:
    import scipy.special
    with x64_mode(True):
        x = np.linspace(-0.999, 0.999, 4001).astype(dtype)
        got = np.asarray(lax.erf_inv(jnp.asarray(x)))
        np.testing.assert_allclose(got, scipy.special.erfinv(x.astype(np.float64)),
                                   rtol=rtol, atol=1e-30)
        edges = np.array([1, -1, 0, -0.0, 1.5, np.nan], dtype)
        got = np.asarray(lax.erf_inv(jnp.asarray(edges)))
        np.testing.assert_array_equal(got, np.array([np.inf, -np.inf, 0, -0.0, np.nan, np.nan],
                                                    dtype))
        assert np.signbit(got[3])


@pytest.mark.needs_jax
@pytest.mark.parametrize("dtype, min_exact", [(np.float32, 0.97), (np.float64, 0.9)])
def test_erf_inv_bits_mostly_equal_jax(dtype: type, min_exact: float) -> None:
    """XLA's exp/log1p differ from NumPy's in the last bit now and then, so a few per cent of
    values differ by an ulp or two; the rest are JAX's bits."""
    real_jax = pytest.importorskip("jax")
    x = np.random.default_rng(0).uniform(-1, 1, 20000).astype(dtype)
    with x64_mode(True):
        ours = np.asarray(lax.erf_inv(jnp.asarray(x)))
    real_jax.config.update("jax_enable_x64", True)
    try:
        theirs = np.asarray(real_jax.lax.erf_inv(x))
    finally:
        real_jax.config.update("jax_enable_x64", False)
    assert np.mean(ours == theirs) >= min_exact
    np.testing.assert_allclose(ours, theirs, rtol=4e-6 if dtype == np.float32 else 1e-13)
