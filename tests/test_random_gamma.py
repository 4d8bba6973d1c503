"""Tests of `justjax.random`'s Gamma family (`gamma.py`: the `random_gamma` primitive, gamma,
loggamma, beta, dirichlet, chisquare, f, t, generalized_normal, ball), its counting samplers
(`counts.py`: poisson, binomial, multinomial) and matrix samplers (`multivariate.py`:
multivariate_normal, orthogonal).

- Values and jaxprs against what real JAX 0.10.2 gave (recorded below; the `needs_jax` tests
  recompute them). Integer results are exact; float results agree to a few ULPs, because
  XLA's `log`, `log1p`, `exp`, `pow` and `lgamma` are approximations of their own.
- JAX's errors (class and message), shapes, dtypes and defaults.
- jit, eager (`disable_jit`) and vmap (over split keys and over parameters) agree exactly.
- Gradients: JAX's values; the implicit (CDF-held-fixed) derivative of Gamma samples against
  finite differences of SciPy's regularized incomplete gamma function; for beta, dirichlet
  and chisquare the mean of pathwise gradients against the derivative of the mean;
  multivariate_normal against finite differences.
- Statistics of 10^4..10^5 samples with fixed keys: moments within a few standard errors,
  chi-square goodness of fit for poisson and binomial.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import scipy.special
import scipy.stats

import justjax as jax
import justjax.numpy as jnp
from justjax import random
from justjax._src.config import config


# ---------------------------------------------------------------------------------------------
# Cases, each a function of the library modules (justjax, or real JAX in `needs_jax` tests).

def value_cases(jax: Any) -> dict[str, Callable[[], Any]]:
    jnp, random = jax.numpy, jax.random

    def key(seed: int) -> Any:
        return random.key(seed)

    cases: dict[str, Callable[[], Any]] = {}
    for s in (0, 1, 7):
        cases[f"gamma_seed{s}"] = lambda s=s: random.gamma(
            key(s), jnp.array([0.1, 0.5, 1.0, 2.5, 10.0]))
        cases[f"loggamma_seed{s}"] = lambda s=s: random.loggamma(
            key(s), jnp.array([0.01, 0.5, 3.0]))
        cases[f"beta_seed{s}"] = lambda s=s: random.beta(
            key(s), jnp.array([0.5, 2.0]), jnp.array([1.5, 0.3]))
        cases[f"dirichlet_seed{s}"] = lambda s=s: random.dirichlet(
            key(s), jnp.array([0.3, 1.0, 4.0]))
        cases[f"poisson_seed{s}"] = lambda s=s: random.poisson(
            key(s), jnp.array([0.0, 0.7, 4.0, 12.0, 300.0]))
        cases[f"binomial_seed{s}"] = lambda s=s: random.binomial(
            key(s), jnp.array([3.0, 30.0, 200.0]), jnp.array([0.2, 0.6, 0.5]))
    cases["gamma_shape_2x3"] = lambda: random.gamma(key(3), jnp.array([0.7, 4.0, 1.5]), (2, 3))
    cases["gamma_float16"] = lambda: random.gamma(key(3), 2.0, (3,), jnp.float16)
    cases["gamma_bfloat16"] = lambda: random.gamma(key(3), 0.5, (3,), jnp.bfloat16)
    cases["gamma_raw_key"] = lambda: random.gamma(random.PRNGKey(5), 3.0, (2,))
    cases["chisquare"] = lambda: random.chisquare(key(4), 3.0, (3,))
    cases["f"] = lambda: random.f(key(4), 2.0, 7.0, (3,))
    cases["t"] = lambda: random.t(key(4), 4.0, (3,))
    cases["generalized_normal"] = lambda: random.generalized_normal(key(4), 1.5, (3,))
    cases["ball"] = lambda: random.ball(key(4), 3, p=1.5, shape=(2,))
    cases["multinomial"] = lambda: random.multinomial(key(4), 20.0, jnp.array([0.1, 0.2, 0.7]))
    cases["multinomial_batch"] = lambda: random.multinomial(
        key(5), jnp.array([5.0, 50.0]), jnp.array([[0.5, 0.5], [0.3, 0.7]]))
    cov = jnp.array([[2.0, 0.5], [0.5, 1.0]])
    for method in ("cholesky", "eigh", "svd"):
        cases[f"mvn_{method}"] = lambda method=method: random.multivariate_normal(
            key(6), jnp.array([1.0, -1.0]), cov, (2,), method=method)
    cases["orthogonal_3"] = lambda: random.orthogonal(key(6), 3)
    cases["orthogonal_2x3"] = lambda: random.orthogonal(key(6), 2, m=3)
    k0 = key(0)
    cases["grad_gamma"] = lambda: jax.grad(lambda a: jnp.sum(random.gamma(k0, a)))(
        jnp.array([0.3, 1.0, 4.0]))
    cases["grad_loggamma"] = lambda: jax.grad(lambda a: jnp.sum(random.loggamma(k0, a)))(
        jnp.array([0.05, 0.5, 4.0]))
    cases["grad_beta"] = lambda: jax.grad(
        lambda a, b: jnp.sum(random.beta(k0, a, b, (3,))), argnums=(0, 1))(
            jnp.float32(2.0), jnp.float32(0.7))
    cases["grad_dirichlet"] = lambda: jax.grad(lambda a: random.dirichlet(k0, a)[1])(
        jnp.array([0.5, 2.0, 3.0]))
    cases["grad_chisquare"] = lambda: jax.grad(
        lambda d: jnp.sum(random.chisquare(k0, d, (2,))))(jnp.float32(3.0))
    return cases


def jaxpr_cases(jax: Any) -> dict[str, Callable[[], Any]]:
    jnp, random = jax.numpy, jax.random
    k = random.key(0)
    return {
        "gamma_shape": lambda: jax.make_jaxpr(lambda k, a: random.gamma(k, a, (2, 3)))(
            k, jnp.ones(3)),
        "loggamma_scalar": lambda: jax.make_jaxpr(lambda k: random.loggamma(k, 0.5, (2,)))(k),
        "beta": lambda: jax.make_jaxpr(lambda k: random.beta(k, 2.0, 3.0, (2,)))(k),
        "t": lambda: jax.make_jaxpr(lambda k: random.t(k, 3.0, (2,)))(k),
        "vmap_gamma_keys": lambda: jax.make_jaxpr(
            jax.vmap(lambda k: random.gamma(k, 0.7, (2,))))(random.split(k, 3)),
    }


def error_cases(jax: Any) -> dict[str, Callable[[], Any]]:
    jnp, random = jax.numpy, jax.random
    k = random.key(0)
    return {
        "gamma_int_dtype": lambda: random.gamma(k, 1.0, (2,), jnp.int32),
        "loggamma_int_dtype": lambda: random.loggamma(k, 1.0, (2,), jnp.int32),
        "beta_int_dtype": lambda: random.beta(k, 1.0, 1.0, (2,), jnp.int32),
        "beta_shapes": lambda: random.beta(k, jnp.ones(2), 1.0, (3,)),
        "beta_unsafe_cast": lambda: random.beta(k, jnp.ones(2), 1.0, dtype=jnp.float16),
        "gamma_shape": lambda: random.gamma(k, jnp.ones(3), (2,)),
        "gamma_key_batch": lambda: random.gamma(random.split(k), 1.0),
        "dirichlet_scalar": lambda: random.dirichlet(k, jnp.float32(1.0)),
        "dirichlet_shape": lambda: random.dirichlet(k, jnp.ones((2, 3)), (4,)),
        "dirichlet_int_dtype": lambda: random.dirichlet(k, jnp.ones(3), dtype=jnp.int32),
        "chisquare_shape": lambda: random.chisquare(k, jnp.ones(3), (2,)),
        "chisquare_int_dtype": lambda: random.chisquare(k, 2.0, dtype=jnp.int32),
        "f_int_dtype": lambda: random.f(k, 2.0, 3.0, dtype=jnp.int32),
        "f_unsafe_cast": lambda: random.f(k, jnp.ones(2), 3.0, dtype=jnp.bfloat16),
        "t_int_dtype": lambda: random.t(k, 2.0, dtype=jnp.int32),
        "t_shape": lambda: random.t(k, jnp.ones(3), (2, 2)),
        "poisson_float_dtype": lambda: random.poisson(k, 1.0, (2,), jnp.float32),
        "binomial_list": lambda: random.binomial(k, [1.0, 2.0], 0.5),
        "binomial_int_dtype": lambda: random.binomial(k, 3.0, 0.5, dtype=jnp.int32),
        "binomial_shape": lambda: random.binomial(k, jnp.ones(3), 0.5, (2,)),
        "multinomial_list": lambda: random.multinomial(k, 3.0, [0.5, 0.5]),
        "mvn_method": lambda: random.multivariate_normal(k, jnp.zeros(2), jnp.eye(2), method="qr"),
        "mvn_mean_scalar": lambda: random.multivariate_normal(k, 0.0, jnp.eye(2)),
        "mvn_cov_ndim": lambda: random.multivariate_normal(k, jnp.zeros(2), jnp.ones(2)),
        "mvn_cov_shape": lambda: random.multivariate_normal(k, jnp.zeros(2), jnp.eye(3)),
        "mvn_int_dtype": lambda: random.multivariate_normal(k, jnp.zeros(2), jnp.eye(2),
                                                            dtype=jnp.int32),
        "mvn_shape": lambda: random.multivariate_normal(k, jnp.zeros((2, 2)), jnp.eye(2), (3,)),
        "ball_float_d": lambda: random.ball(k, 2.5),
        "orthogonal_traced_n": lambda: jax.jit(lambda n: random.orthogonal(k, n))(3),
        "gamma_float_key": lambda: random.gamma(jnp.ones(2), 1.0),
    }


# ---------------------------------------------------------------------------------------------
# What real JAX 0.10.2 gave (`test_recorded_*_are_real_jax` recompute it).

JAX_VALUES: dict[str, Any] = {
    'gamma_seed0': ('float32', [0.23764311, 1.0290775, 0.35100988, 4.702054, 12.426194]),
    'loggamma_seed0': ('float32', [-11.478928, 0.028662786, 0.677204]),
    'beta_seed0': ('float32', [0.2229499, 1]),
    'dirichlet_seed0': ('float32', [0.150135, 0.17328148, 0.6765835]),
    'poisson_seed0': ('int32', [0, 0, 5, 16, 283]),
    'binomial_seed0': ('float32', [1, 19, 109]),
    'gamma_seed1': ('float32', [9.863318e-09, 0.55809987, 2.1694462, 2.702713, 15.65139]),
    'loggamma_seed1': ('float32', [-177.21635, -0.58321726, 1.628438]),
    'beta_seed1': ('float32', [0.1720215, 0.39055532]),
    'dirichlet_seed1': ('float32', [0.00024360836, 0.068801284, 0.93095505]),
    'poisson_seed1': ('int32', [0, 1, 2, 8, 324]),
    'binomial_seed1': ('float32', [1, 18, 106]),
    'gamma_seed7': ('float32', [9.3018366e-20, 0.30211338, 0.25277784, 4.322724, 7.207559]),
    'loggamma_seed7': ('float32', [-438.77298, -1.1969528, 0.5349566]),
    'beta_seed7': ('float32', [0.0344841, 0.99924076]),
    'dirichlet_seed7': ('float32', [2.0894265e-07, 0.07965895, 0.9203409]),
    'poisson_seed7': ('int32', [0, 1, 1, 8, 279]),
    'binomial_seed7': ('float32', [1, 15, 102]),
    'gamma_shape_2x3': ('float32', np.reshape([
        0.23170014, 2.2958956, 4.9697742, 0.5178313, 0.85677385, 0.8036478
    ], (2, 3))),
    'gamma_float16': ('float16', [0.7, 0.953, 1.687]),
    'gamma_bfloat16': ('bfloat16', [0.01483154296875, 0.31640625, 0.0062255859375]),
    'gamma_raw_key': ('float32', [4.2325478, 2.7076097]),
    'chisquare': ('float32', [2.379845, 3.3990636, 0.458659]),
    'f': ('float32', [0.10848153, 3.5811412, 0.77943265]),
    't': ('float32', [0.20183334, 0.56259966, 0.8610895]),
    'generalized_normal': ('float32', [-0.36383906, -0.3246082, -0.47852376]),
    'ball': ('float32', np.reshape([
        0.20562701, 0.16969989, 0.08912461, -0.5788714, -0.28448215, 0.19704024
    ], (2, 3))),
    'multinomial': ('float32', [1, 2, 17]),
    'multinomial_batch': ('float32', np.reshape([2, 3, 16, 34], (2, 2))),
    'mvn_cholesky': ('float32', np.reshape([
        1.5465535, -1.3972934, -1.3734195, -2.7188387
    ], (2, 2))),
    'mvn_eigh': ('float32', np.reshape([1.9151392, -0.99342275, 2.079556, 1.0646935], (2, 2))),
    'mvn_svd': ('float32', np.reshape([0.6640538, -1.6892941, 3.7134895, -1.0356866], (2, 2))),
    'orthogonal_3': ('float32', np.reshape([
        0.3033477, -0.18225493, -0.93528783, -0.9444054, 0.07311049, -0.32055154, -0.12680146,
        -0.9805294, 0.14994463
    ], (3, 3))),
    'orthogonal_2x3': ('float32', np.reshape([
        0.19026399, -0.8262249, 0.53023773, -0.5592661, -0.5351155, -0.6331454
    ], (2, 3))),
    'grad_gamma': ('float32', [2.2258236, 0.99277365, 0.8731968]),
    'grad_loggamma': ('float32', [46.689236, 1.8490349, 0.30791855]),
    'grad_beta': [('float32', 0.14261647), ('float32', -0.54553634)],
    'grad_dirichlet': ('float32', [-0.1468101, 0.13647653, -0.07024277]),
    'grad_chisquare': ('float32', 1.9650495),
}

JAX_JAXPRS: dict[str, str] = {
    "gamma_shape": """\
{ lambda ; a:key<fry>[] b:f32[3]. let
    c:f32[2,3] = jit[
      name=_gamma
      jaxpr={ lambda ; a:key<fry>[] b:f32[3]. let
          d:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
          c:f32[2,3] = random_gamma[log_space=False] a d
        in (c,) }
    ] a b
  in (c,) }""",
    "loggamma_scalar": """\
{ lambda ; a:key<fry>[]. let
    b:f32[2] = jit[
      name=_gamma
      jaxpr={ lambda ; a:key<fry>[] c:f32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          e:f32[2] = broadcast_in_dim d
          b:f32[2] = random_gamma[log_space=True] a e
        in (b,) }
    ] a 0.5:f32[]
  in (b,) }""",
    "beta": """\
let _beta = { lambda ; a:key<fry>[] b:f32[] c:f32[]. let
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    f:key<fry>[2] = random_split[shape=(2,)] a
    g:key<fry>[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] f
    h:key<fry>[] = squeeze[dimensions=(0,)] g
    i:key<fry>[1] = slice[limit_indices=(2,) start_indices=(1,) strides=(1,)] f
    j:key<fry>[] = squeeze[dimensions=(0,)] i
    k:f32[2] = broadcast_in_dim d
    l:f32[2] = broadcast_in_dim e
    m:f32[2] = jit[name=_gamma jaxpr=_gamma] h k
    n:f32[2] = jit[name=_gamma jaxpr=_gamma] j l
    o:f32[2] = max m n
    p:f32[2] = sub m o
    q:f32[2] = exp p
    r:f32[2] = sub n o
    s:f32[2] = exp r
    t:f32[2] = add q s
    u:f32[2] = div q t
  in (u,) } in
let _gamma = { lambda ; v:key<fry>[] w:f32[2]. let
    x:f32[2] = random_gamma[log_space=True] v w
  in (x,) } in
{ lambda ; y:key<fry>[]. let
    z:f32[2] = jit[name=_beta jaxpr=_beta] y 2.0:f32[] 3.0:f32[]
  in (z,) }""",
    "t": """\
let _t = { lambda ; a:key<fry>[] b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:key<fry>[2] = random_split[shape=(2,)] a
    e:key<fry>[1] = slice[limit_indices=(1,) start_indices=(0,) strides=(1,)] d
    f:key<fry>[] = squeeze[dimensions=(0,)] e
    g:key<fry>[1] = slice[limit_indices=(2,) start_indices=(1,) strides=(1,)] d
    h:key<fry>[] = squeeze[dimensions=(0,)] g
    i:f32[2] = jit[
      name=_normal
      jaxpr={ lambda ; f:key<fry>[]. let
          i:f32[2] = jit[
            name=_normal_real
            jaxpr={ lambda ; f:key<fry>[]. let
                j:f32[2] = jit[name=_uniform jaxpr=_uniform] f -0.9999999403953552:f32[]
                  1.0:f32[]
                k:f32[2] = erf_inv j
                i:f32[2] = mul 1.4142135381698608:f32[] k
              in (i,) }
          ] f
        in (i,) }
    ] f
    l:f32[] = div c 2.0:f32[]
    m:f32[2] = jit[
      name=_gamma
      jaxpr={ lambda ; h:key<fry>[] l:f32[]. let
          n:f32[2] = broadcast_in_dim l
          m:f32[2] = random_gamma[log_space=False] h n
        in (m,) }
    ] h l
    o:f32[2] = div l m
    p:f32[2] = sqrt o
    q:f32[2] = mul i p
  in (q,) } in
let _uniform = { lambda ; r:key<fry>[] s:f32[] t:f32[]. let
    u:f32[1] = broadcast_in_dim s
    v:f32[1] = broadcast_in_dim t
    w:u32[2] = random_bits[bit_width=32 shape=(2,)] r
    x:u32[2] = shift_right_logical w 9:u32[]
    y:u32[2] = or x 1065353216:u32[]
    z:f32[2] = bitcast_convert_type[new_dtype=float32] y
    ba:f32[2] = sub z 1.0:f32[]
    bb:f32[1] = sub v u
    bc:f32[2] = mul ba bb
    bd:f32[2] = add bc u
    be:f32[2] = max u bd
  in (be,) } in
{ lambda ; bf:key<fry>[]. let
    bg:f32[2] = jit[name=_t jaxpr=_t] bf 3.0:f32[]
  in (bg,) }""",
    "vmap_gamma_keys": """\
{ lambda ; a:key<fry>[3]. let
    b:f32[3,2] = jit[
      name=_gamma
      jaxpr={ lambda ; a:key<fry>[3] c:f32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          e:f32[2] = broadcast_in_dim d
          f:f32[3,2] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] e
          b:f32[3,2] = random_gamma[log_space=False] a f
        in (b,) }
    ] a 0.7:f32[]
  in (b,) }""",
}

JAX_ERRORS: dict[str, tuple[str, str]] = {
    "gamma_int_dtype": ("ValueError", 'dtype argument to `gamma` must be a float dtype, got int32'),
    "loggamma_int_dtype": ("ValueError", 'dtype argument to `gamma` must be a float dtype, got int32'),
    "beta_int_dtype": ("ValueError", 'dtype argument to `beta` must be a float dtype, got int32'),
    "beta_shapes": ("ValueError", 'Incompatible shapes for broadcasting: shapes=[(3,), (2,), ()]'),
    "beta_unsafe_cast": ("TypePromotionError", 'In arguments to beta, cannot safely cast argument of type float32 to float16'),
    "gamma_shape": ("ValueError", 'Incompatible shapes for broadcasting: shapes=[(2,), (3,)]'),
    "gamma_key_batch": ("ValueError", 'gamma accepts a single key, but was given a key array of shape (2,) != (). Use jax.vmap for batching.'),
    "dirichlet_scalar": ("ValueError", 'dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0'),
    "dirichlet_shape": ("ValueError", 'Incompatible shapes for broadcasting: shapes=[(4,), (2,)]'),
    "dirichlet_int_dtype": ("ValueError", 'dtype argument to `dirichlet` must be a float dtype, got int32'),
    "chisquare_shape": ("ValueError", 'Incompatible shapes for broadcasting: shapes=[(2,), (3,)]'),
    "chisquare_int_dtype": ("ValueError", 'dtype argument to `chisquare` must be a float dtype, got int32'),
    "f_int_dtype": ("ValueError", 'dtype argument to `f` must be a float dtype, got int32'),
    "f_unsafe_cast": ("TypePromotionError", 'In arguments to f, cannot safely cast argument of type float32 to bfloat16'),
    "t_int_dtype": ("ValueError", 'dtype argument to `t` must be a float dtype, got int32'),
    "t_shape": ("ValueError", 'Incompatible shapes for broadcasting: shapes=[(2, 2), (3,)]'),
    "poisson_float_dtype": ("ValueError", "Invalid integer data type 'f'."),
    "binomial_list": ("TypeError", "binomial requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    "binomial_int_dtype": ("ValueError", 'dtype argument to `binomial` must be a float dtype, got int32'),
    "binomial_shape": ("ValueError", 'Incompatible shapes for broadcasting: shapes=[(2,), (3,), ()]'),
    "multinomial_list": ("TypeError", "multinomial requires ndarray or scalar arguments, got <class 'list'> at position 1."),
    "mvn_method": ("ValueError", "method must be one of {'svd', 'eigh', 'cholesky'}"),
    "mvn_mean_scalar": ("ValueError", 'multivariate_normal requires mean.ndim >= 1, got mean.ndim == 0'),
    "mvn_cov_ndim": ("ValueError", 'multivariate_normal requires cov.ndim >= 2, got cov.ndim == 1'),
    "mvn_cov_shape": ("ValueError", 'multivariate_normal requires cov.shape == (..., n, n) for n=2, but got cov.shape == (3, 3).'),
    "mvn_int_dtype": ("ValueError", 'dtype argument to `multivariate_normal` must be a float dtype, got int32'),
    "mvn_shape": ("ValueError", 'Incompatible shapes for broadcasting: shapes=[(3,), (2,), ()]'),
    "ball_float_d": ("TypeError", "'float' object cannot be interpreted as an integer"),
    "orthogonal_traced_n": ("ConcretizationTypeError", 'Abstract tracer value encountered where concrete value is expected: traced array with shape int32[]'),
    "gamma_float_key": ("TypeError", 'JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got dtype=float32'),
}


def _leaves(value: Any) -> list[np.ndarray]:
    leaves = value if isinstance(value, (tuple, list)) else [value]
    return [np.asarray(leaf) for leaf in leaves]


def _recorded(name: str) -> list[tuple[str, np.ndarray]]:
    """The recorded leaves: each dtype's name and its values (shortest round-tripping
    decimals) in that dtype."""
    want = JAX_VALUES[name]
    return [(dtype, np.asarray(values).astype(jnp.dtype(dtype))) for dtype, values in
            (want if isinstance(want, list) else [want])]


# Floats: XLA's log, log1p, exp and pow differ from NumPy's by an ULP or two, which the
# samplers amplify a little (loggamma divides log(U) by a small alpha; gradients sum series).
RTOL = {"float32": 2e-5, "float16": 2e-3, "bfloat16": 2e-2}


@pytest.mark.parametrize("name", sorted(JAX_VALUES))
def test_values_match_jax(name: str) -> None:
    got = _leaves(value_cases(jax)[name]())
    want = _recorded(name)
    assert len(got) == len(want)
    for leaf, (dtype, values) in zip(got, want, strict=True):
        assert str(leaf.dtype) == dtype and leaf.shape == values.shape
        if dtype.startswith(("int", "uint")) or name.startswith(("poisson", "binomial",
                                                                 "multinomial")):
            np.testing.assert_array_equal(leaf, values)
        else:
            np.testing.assert_allclose(leaf.astype(np.float64), values.astype(np.float64),
                                       rtol=RTOL[dtype], atol=1e-6)


def test_every_value_case_is_recorded() -> None:
    assert sorted(value_cases(jax)) == sorted(JAX_VALUES)


@pytest.mark.needs_jax
def test_recorded_values_are_real_jax() -> None:
    real_jax = pytest.importorskip("jax")
    for name, case in value_cases(real_jax).items():
        for leaf, (dtype, values) in zip(_leaves(case()), _recorded(name), strict=True):
            assert str(leaf.dtype) == dtype, name
            np.testing.assert_array_equal(leaf, values, err_msg=name)


@pytest.mark.parametrize("name", sorted(JAX_JAXPRS))
def test_jaxpr_matches_jax(name: str) -> None:
    assert str(jaxpr_cases(jax)[name]()) == JAX_JAXPRS[name]


@pytest.mark.needs_jax
def test_recorded_jaxprs_are_real_jax() -> None:
    real_jax = pytest.importorskip("jax")
    for name, case in jaxpr_cases(real_jax).items():
        assert str(case()) == JAX_JAXPRS[name], name


# ---------------------------------------------------------------------------------------------
# Errors

@pytest.mark.parametrize("name", sorted(JAX_ERRORS))
def test_errors_match_jax(name: str) -> None:
    cls_name, message = JAX_ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            error_cases(jax)[name]()
    assert type(info.value).__name__ == cls_name
    assert str(info.value).splitlines()[0] == message


def test_type_promotion_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        random.t(random.key(0), jnp.ones(2), dtype=jnp.float16)
    assert issubclass(jax.dtypes.TypePromotionError, ValueError)


@pytest.mark.needs_jax
def test_recorded_errors_are_real_jax() -> None:
    real_jax = pytest.importorskip("jax")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, case in error_cases(real_jax).items():
            with pytest.raises(Exception) as info:
                case()
            assert (type(info.value).__name__, str(info.value).splitlines()[0]) == \
                JAX_ERRORS[name], name


# ---------------------------------------------------------------------------------------------
# Shapes, dtypes and defaults

KEY = random.key(0)


@pytest.mark.parametrize("fun, shape, dtype", [
    (lambda: random.gamma(KEY, 2.0), (), "float32"),
    (lambda: random.gamma(KEY, jnp.ones((2, 1)), (3, 2, 4)), (3, 2, 4), "float32"),
    (lambda: random.gamma(KEY, jnp.ones((0,))), (0,), "float32"),
    (lambda: random.loggamma(KEY, jnp.ones(3), dtype=jnp.float16), (3,), "float16"),
    (lambda: random.beta(KEY, jnp.ones((2, 1)), jnp.ones(3)), (2, 3), "float32"),
    (lambda: random.dirichlet(KEY, jnp.ones(4), (2, 3)), (2, 3, 4), "float32"),
    (lambda: random.dirichlet(KEY, jnp.ones((2, 4))), (2, 4), "float32"),
    (lambda: random.chisquare(KEY, jnp.ones(3)), (3,), "float32"),
    (lambda: random.f(KEY, jnp.ones(3), 2.0), (3,), "float32"),
    (lambda: random.t(KEY, 2.0, (2, 2), jnp.bfloat16), (2, 2), "bfloat16"),
    (lambda: random.generalized_normal(KEY, 2.0, (5,)), (5,), "float32"),
    (lambda: random.ball(KEY, 4, shape=(2,)), (2, 4), "float32"),
    (lambda: random.poisson(KEY, 3.0), (), "int32"),
    (lambda: random.poisson(KEY, jnp.ones(2), (3, 2), jnp.uint8), (3, 2), "uint8"),
    (lambda: random.binomial(KEY, 5, 0.5, (2,)), (2,), "float32"),
    (lambda: random.multinomial(KEY, 5.0, jnp.ones(3) / 3, shape=(2, 3)), (2, 3), "float32"),
    (lambda: random.multivariate_normal(KEY, jnp.zeros(3), jnp.eye(3)), (3,), "float32"),
    # float16 normals are added to the float32 mean, as in JAX.
    (lambda: random.multivariate_normal(KEY, jnp.zeros(2), jnp.eye(2), (4,), jnp.float16),
     (4, 2), "float32"),
    (lambda: random.orthogonal(KEY, 3, (2,)), (2, 3, 3), "float32"),
    (lambda: random.orthogonal(KEY, 2, m=4), (2, 4), "float32"),
])
def test_shapes_and_dtypes(fun: Callable[[], Any], shape: tuple, dtype: str) -> None:
    out = fun()
    assert out.shape == shape and str(out.dtype) == dtype


def test_x64_defaults() -> None:
    with config.override("jax_enable_x64", True):
        assert random.gamma(KEY, 2.0).dtype == np.float64
        assert random.poisson(KEY, 2.0).dtype == np.int64
        assert random.beta(KEY, 2.0, 3.0).dtype == np.float64
        assert random.multivariate_normal(KEY, np.zeros(2), np.eye(2)).dtype == np.float64


def test_raw_and_typed_keys_agree() -> None:
    raw = random.PRNGKey(3)
    typed = random.wrap_key_data(raw)
    for fun in (lambda k: random.gamma(k, jnp.array([0.4, 3.0])),
                lambda k: random.poisson(k, jnp.array([2.0, 40.0])),
                lambda k: random.dirichlet(k, jnp.ones(3))):
        np.testing.assert_array_equal(fun(raw), fun(typed))


def test_loggamma_is_log_of_gamma() -> None:
    # As JAX documents: exp(loggamma(...)) matches gamma(...) with the same key.
    a = jnp.array([0.2, 0.9, 1.0, 3.0, 30.0])
    for seed in range(4):
        k = random.key(seed)
        np.testing.assert_allclose(np.exp(random.loggamma(k, a)), random.gamma(k, a),
                                   rtol=1e-5)


def test_special_parameters() -> None:
    out = random.gamma(KEY, jnp.array([0.0, np.nan, np.inf, -1.0]))
    np.testing.assert_array_equal(out, [0.0, np.nan, np.inf, np.nan])
    lam = random.poisson(KEY, jnp.array([0.0, 0.0]))
    np.testing.assert_array_equal(lam, [0, 0])
    b = random.binomial(KEY, jnp.array([np.nan, np.inf, -1.0, 10.0, 10.0, 10.0]),
                        jnp.array([0.5, 0.5, 0.5, np.nan, 0.0, 1.0]))
    np.testing.assert_array_equal(b, [np.nan, np.inf, np.nan, np.nan, 0.0, 10.0])


# ---------------------------------------------------------------------------------------------
# jit, eager and vmap

SAMPLERS: dict[str, Callable[[Any], Any]] = {
    "gamma": lambda k: random.gamma(k, jnp.array([0.3, 1.0, 4.0])),
    "loggamma": lambda k: random.loggamma(k, jnp.array([0.05, 2.0])),
    "beta": lambda k: random.beta(k, jnp.array([0.5, 3.0]), 2.0),
    "dirichlet": lambda k: random.dirichlet(k, jnp.array([0.5, 1.0, 2.0])),
    "poisson": lambda k: random.poisson(k, jnp.array([1.5, 30.0])),
    "binomial": lambda k: random.binomial(k, jnp.array([5.0, 60.0]), jnp.array([0.3, 0.8])),
    "multinomial": lambda k: random.multinomial(k, 9.0, jnp.array([0.2, 0.3, 0.5])),
    "t": lambda k: random.t(k, 3.0, (2,)),
    "f": lambda k: random.f(k, 3.0, 5.0, (2,)),
    "ball": lambda k: random.ball(k, 2, p=1.0, shape=(2,)),
    "multivariate_normal": lambda k: random.multivariate_normal(
        k, jnp.zeros(2), jnp.array([[1.0, 0.3], [0.3, 2.0]]), (2,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_eager_and_disable_jit_agree(name: str) -> None:
    fun = SAMPLERS[name]
    k = random.key(11)
    eager = fun(k)
    np.testing.assert_array_equal(jax.jit(fun)(k), eager)
    with jax.disable_jit():
        np.testing.assert_array_equal(fun(k), eager)


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_vmap_over_keys_is_a_loop(name: str) -> None:
    fun = SAMPLERS[name]
    keys = random.split(random.key(12), 3)
    batched = jax.vmap(fun)(keys)
    for i in range(3):
        np.testing.assert_array_equal(batched[i], fun(keys[i]))


def test_vmap_over_parameters_is_a_loop() -> None:
    k = random.key(13)
    alphas = jnp.array([0.2, 1.0, 8.0])
    np.testing.assert_array_equal(
        jax.vmap(lambda a: random.gamma(k, a, (2,)))(alphas),
        np.stack([random.gamma(k, a, (2,)) for a in alphas]))
    lams = jnp.array([1.0, 10.0, 200.0])
    np.testing.assert_array_equal(
        jax.vmap(lambda lam: random.poisson(k, lam, (2,)))(lams),
        np.stack([random.poisson(k, lam, (2,)) for lam in lams]))
    ns = jnp.array([4.0, 90.0])
    np.testing.assert_array_equal(
        jax.vmap(lambda n: random.binomial(k, n, 0.3, (2,)))(ns),
        np.stack([random.binomial(k, n, 0.3, (2,)) for n in ns]))


def test_random_gamma_batching_rule_moves_axes() -> None:
    # Keys batched along axis 0, alpha along axis 1 (and unbatched keys): the rule brings
    # both batch axes to the front before binding.
    keys = random.split(random.key(14), 3)
    alphas = jnp.array([[0.5, 1.0, 2.0], [3.0, 0.1, 7.0]])
    batched = jax.vmap(lambda k, a: random.gamma(k, a), in_axes=(0, 1))(keys, alphas)
    for i in range(3):
        np.testing.assert_array_equal(batched[i], random.gamma(keys[i], alphas[:, i]))
    k = random.key(15)
    batched = jax.vmap(lambda a: random.gamma(k, a), in_axes=1)(alphas)
    for i in range(3):
        np.testing.assert_array_equal(batched[i], random.gamma(k, alphas[:, i]))


def test_random_gamma_lowers_to_while_loops() -> None:
    text = jax.jit(lambda k, a: random.gamma(k, a)).lower(KEY, jnp.ones(3)).as_text()
    assert "stablehlo.while" in text


# ---------------------------------------------------------------------------------------------
# Gradients

def _implicit_gamma_grad(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/da holding the CDF P(a, x) fixed: -(dP/da) / (dP/dx), dP/da by central finite
    differences of SciPy's regularized incomplete gamma function (float64)."""
    h = 1e-6 * np.maximum(a, 1.0)
    dp_da = (scipy.special.gammainc(a + h, x) - scipy.special.gammainc(a - h, x)) / (2 * h)
    dp_dx = np.exp((a - 1) * np.log(x) - x - scipy.special.gammaln(a))
    return -dp_da / dp_dx


def test_gamma_grad_is_the_implicit_derivative() -> None:
    a = np.array([0.3, 0.8, 1.0, 2.5, 6.0, 40.0], np.float32)
    for seed in range(3):
        k = random.key(seed)
        x = np.asarray(random.gamma(k, a), np.float64)
        grad = jax.grad(lambda a: jnp.sum(random.gamma(k, a)))(a)
        np.testing.assert_allclose(grad, _implicit_gamma_grad(a.astype(np.float64), x),
                                   rtol=2e-3)


def test_loggamma_grad_is_the_implicit_derivative_over_x() -> None:
    a = np.array([0.5, 2.0, 9.0], np.float32)
    k = random.key(5)
    x = np.exp(np.asarray(random.loggamma(k, a), np.float64))
    grad = jax.grad(lambda a: jnp.sum(random.loggamma(k, a)))(a)
    want = _implicit_gamma_grad(a.astype(np.float64), x) / x
    np.testing.assert_allclose(grad, want, rtol=2e-3)


def test_chisquare_grad_is_the_implicit_derivative() -> None:
    # chi2(df) = 2 G(df / 2): d/ddf = dG/da at a = df / 2.
    k = random.key(6)
    df = np.float32(3.0)
    x = np.asarray(random.chisquare(k, df, (4,)), np.float64)
    grad = jax.jacobian(lambda d: random.chisquare(k, d, (4,)))(df)
    want = _implicit_gamma_grad(np.full(4, df / 2, np.float64), x / 2)
    np.testing.assert_allclose(grad, want, rtol=2e-3)


def _mean_within(samples: np.ndarray, expected: float, sigmas: float = 4.0) -> None:
    """The sample mean is within `sigmas` standard errors of `expected`."""
    samples = np.asarray(samples, np.float64)
    error = samples.std() / math.sqrt(samples.size)
    assert abs(samples.mean() - expected) < sigmas * error, (samples.mean(), expected, error)


def test_mean_of_gradients_is_gradient_of_mean() -> None:
    # Reparameterized: E[d sample / d theta] = d E[sample] / d theta.
    keys = random.split(random.key(7), 400)
    a, b = 2.0, 3.0
    grads = jax.vmap(lambda k: jax.grad(lambda a: random.gamma(k, a))(a))(keys)
    _mean_within(grads, 1.0)  # E = a
    grads = jax.vmap(lambda k: jax.grad(lambda a: random.beta(k, a, b))(a))(keys)
    _mean_within(grads, b / (a + b) ** 2)  # E = a / (a + b)
    alpha = jnp.array([0.5, 1.5, 2.0])
    grads = jax.vmap(lambda k: jax.grad(lambda al: random.dirichlet(k, al)[0])(alpha))(keys)
    total = float(alpha.sum())
    expected = [(total - 0.5) / total ** 2, -0.5 / total ** 2, -0.5 / total ** 2]
    for i in range(3):
        _mean_within(np.asarray(grads)[:, i], expected[i])


def test_multivariate_normal_grads() -> None:
    k = random.key(8)
    mean = jnp.array([0.5, -0.5])
    cov = np.array([[2.0, 0.3], [0.3, 1.0]], np.float32)

    def loss(m: Any, c: Any) -> Any:
        return jnp.sum(random.multivariate_normal(k, m, c, (3,)) ** 2)

    d_mean, d_cov = jax.grad(loss, argnums=(0, 1))(mean, cov)
    samples = np.asarray(random.multivariate_normal(k, mean, cov, (3,)))
    np.testing.assert_allclose(d_mean, 2 * samples.sum(0), rtol=1e-5)
    # Central differences along a symmetric direction (the factorization symmetrizes).
    direction = np.array([[1.0, 0.5], [0.5, -1.0]], np.float32)
    eps = 1e-2
    numeric = (loss(mean, cov + eps * direction) - loss(mean, cov - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(np.sum(np.asarray(d_cov) * direction), numeric, rtol=1e-2)


# ---------------------------------------------------------------------------------------------
# Statistics, fixed keys

def _variance_within(samples: np.ndarray, expected: float, sigmas: float = 5.0) -> None:
    """The sample variance is within `sigmas` standard errors of `expected`, the error
    estimated from the sample's own fourth moment."""
    samples = np.asarray(samples, np.float64)
    centered = samples - samples.mean()
    error = math.sqrt(max(np.mean(centered ** 4) - np.mean(centered ** 2) ** 2, 0.0)
                      / samples.size)
    assert abs(centered.var() - expected) < sigmas * error, (centered.var(), expected, error)


@pytest.mark.parametrize("a", [0.3, 2.5])
def test_gamma_moments(a: float) -> None:
    x = random.gamma(random.key(20), a, (100_000,))
    _mean_within(x, a)
    _variance_within(x, a)


def test_beta_dirichlet_and_chisquare_moments() -> None:
    a, b = 2.0, 3.0
    x = random.beta(random.key(21), a, b, (50_000,))
    _mean_within(x, a / (a + b))
    _variance_within(x, a * b / ((a + b) ** 2 * (a + b + 1)))
    alpha = np.array([0.3, 1.0, 2.7])
    d = np.asarray(random.dirichlet(random.key(22), jnp.asarray(alpha), (20_000,)))
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    for i in range(3):
        _mean_within(d[:, i], alpha[i] / alpha.sum())
    c = random.chisquare(random.key(23), 3.0, (50_000,))
    _mean_within(c, 3.0)
    _variance_within(c, 6.0)


def test_t_f_and_generalized_normal_moments() -> None:
    t = random.t(random.key(24), 6.0, (50_000,))
    _mean_within(t, 0.0)
    _variance_within(t, 6.0 / 4.0)
    f = random.f(random.key(25), 5.0, 12.0, (50_000,))
    _mean_within(f, 12.0 / 10.0)
    p = 1.5
    g = random.generalized_normal(random.key(26), p, (50_000,))
    _mean_within(g, 0.0)
    _variance_within(g, math.gamma(3 / p) / math.gamma(1 / p))


def _chi_square_p_value(samples: np.ndarray, pmf: Callable[[np.ndarray], np.ndarray]) -> float:
    """Pearson's test of nonnegative integer samples against `pmf`; the bins expected to
    hold fewer than 5 samples are merged into the two tails."""
    samples = np.asarray(samples).astype(np.int64).ravel()
    size = samples.size
    support = np.arange(samples.max() + 1)
    expected = pmf(support) * size
    observed = np.bincount(samples, minlength=support.size).astype(np.float64)
    keep = expected >= 5
    lo, hi = int(np.argmax(keep)), int(keep.size - np.argmax(keep[::-1]))
    expected = np.array([expected[:lo].sum(), *expected[lo:hi], size - expected[:hi].sum()])
    observed = np.array([observed[:lo].sum(), *observed[lo:hi], observed[hi:].sum()])
    used = expected > 0
    return scipy.stats.chisquare(observed[used], expected[used]).pvalue


@pytest.mark.parametrize("lam", [3.0, 25.0])  # Knuth below 10, rejection above
def test_poisson_goodness_of_fit(lam: float) -> None:
    x = random.poisson(random.key(27), lam, (50_000,))
    assert _chi_square_p_value(x, lambda k: scipy.stats.poisson.pmf(k, lam)) > 1e-3
    _mean_within(x, lam)


@pytest.mark.parametrize("n, p", [(10, 0.3), (100, 0.6)])  # inversion; BTRS, reflected
def test_binomial_goodness_of_fit(n: int, p: float) -> None:
    x = random.binomial(random.key(28), float(n), p, (50_000,))
    assert _chi_square_p_value(x, lambda k: scipy.stats.binom.pmf(k, n, p)) > 1e-3
    _mean_within(x, n * p)


def test_poisson_large_rate_moments() -> None:
    x = random.poisson(random.key(29), 1000.0, (50_000,))
    _mean_within(x, 1000.0)
    _variance_within(x, 1000.0)


def test_multinomial_counts() -> None:
    p = np.array([0.1, 0.3, 0.6])
    counts = np.asarray(random.multinomial(random.key(30), 12.0, jnp.asarray(p),
                                           shape=(20_000, 3)))
    np.testing.assert_array_equal(counts.sum(-1), 12.0)
    for i in range(3):
        _mean_within(counts[:, i], 12.0 * p[i])


def test_multivariate_normal_covariance() -> None:
    mean = np.array([1.0, -2.0, 0.5])
    factor = np.array([[1.0, 0.0, 0.0], [0.5, 1.2, 0.0], [-0.3, 0.4, 0.7]])
    cov = factor @ factor.T
    for method in ("cholesky", "eigh", "svd"):
        x = np.asarray(random.multivariate_normal(random.key(31), jnp.asarray(mean),
                                                  jnp.asarray(cov), (40_000,), method=method),
                       np.float64)
        np.testing.assert_allclose(x.mean(0), mean, atol=0.03)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.05)


def test_orthogonal_matrices() -> None:
    q = np.asarray(random.orthogonal(random.key(32), 4, (500,)), np.float64)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-5)
    # Haar: every entry has mean 0 and second moment 1/n.
    _mean_within(q[:, 0, 0], 0.0)
    _mean_within(q[:, 1, 2] ** 2, 0.25)
    wide = np.asarray(random.orthogonal(random.key(33), 2, m=5), np.float64)
    np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-5)


def test_ball_radii() -> None:
    x = np.asarray(random.ball(random.key(34), 3, shape=(20_000,)), np.float64)
    r = np.linalg.norm(x, axis=-1)
    assert r.max() <= 1.0 + 1e-6
    _mean_within(r, 3.0 / 4.0)  # P(r <= t) = t^3 in the unit 3-ball
    l1 = np.abs(np.asarray(random.ball(random.key(35), 2, p=1.0, shape=(1000,)))).sum(-1)
    assert l1.max() <= 1.0 + 1e-6
