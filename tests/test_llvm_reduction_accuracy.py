"""Accuracy of float reductions, cumulative sums and long windows on the llvm backend against
float64 NumPy, with real JAX's (XLA CPU's) errors on the same shapes and data as the bar; and
their bits at LLVM's optimization levels 0 and 3 (the summation order is the IR's, not the
optimizer's)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax._src import backends
from justjax._src.backends.llvm.runtime import executable
from justjax._src.core import dtypes
from justjax._src.hlo.passes import optimize

BF16 = np.dtype(dtypes.bfloat16)


def _data(shape, dtype, seed: int) -> np.ndarray:
    """Uniform [0, 1) values (sums without cancellation: the hardest case for accuracy)."""
    return np.random.default_rng(seed).random(shape, dtype=np.float64).astype(dtype)


_FNS = {"sum": lambda axis: lambda a, b: jnp.sum(a, axis=axis),
        "mean": lambda axis: lambda a, b: jnp.mean(a, axis=axis),
        "sumprod": lambda axis: lambda a, b: jnp.sum(a * b, axis=axis)}

# (op, shape, dtype, axis) -> (max, mean) absolute error of real JAX 0.10.2 (jaxlib's XLA CPU,
# reductions through its YNNPACK fusions) against float64 NumPy on `_data(shape, dtype, 0)`
# (and `_data(shape, dtype, 1)` for the product's second factor), recorded on an AMD EPYC
# with AVX-512 by `jax.jit(fn)(a, b)` with the functions of `_FNS`.
XLA_ERRORS = {
    ("sum", (1_000_000,), "float32", None): (0.00645235, 0.00645235),
    ("mean", (1_000_000,), "float32", None): (7.15849e-09, 7.15849e-09),
    ("sum", (200_000,), "float32", None): (0.00141494, 0.00141494),
    ("sumprod", (200_000,), "float32", None): (0.00166709, 0.00166709),
    ("sum", (1000, 1000), "float32", 0): (7.55934e-05, 1.47669e-05),
    ("sum", (1000, 1000), "float32", 1): (6.56946e-05, 1.37385e-05),
    ("sum", (1000, 1000), "float32", None): (0.0247976, 0.0247976),
    ("mean", (1000, 1000), "float32", 0): (9.203e-08, 2.69223e-08),
    ("sumprod", (1000, 1000), "float32", 1): (3.14817e-05, 7.458e-06),
    ("sumprod", (1000, 1000), "float32", 0): (3.38987e-05, 7.70771e-06),
    ("sum", (7, 100003), "float32", 0): (9.23872e-07, 1.24442e-07),
    ("sum", (7, 100003), "float32", 1): (0.00329678, 0.00176977),
    ("sum", (7, 100003), "float32", None): (0.00663908, 0.00663908),
    ("sum", (100003, 7), "float32", 0): (0.00286566, 0.000998165),
    ("sum", (100003, 7), "float32", 1): (5.66244e-07, 1.0726e-07),
    ("sum", (3, 5000, 7), "float32", 1): (0.000233892, 0.00010388),
    ("sum", (3, 5000, 7), "float32", (0, 2)): (1.81049e-06, 3.45363e-07),
    ("sum", (3, 5000, 7), "float32", (0, 1)): (0.000560962, 0.000355211),
    ("mean", (3, 5000, 7), "float32", 1): (5.59166e-08, 2.66028e-08),
    ("sum", (999_983,), "float32", None): (0.012986, 0.012986),
    ("sum", (131_071,), "float32", None): (0.000513636, 0.000513636),
    ("sum", (12_345,), "float32", None): (0.000261687, 0.000261687),
    ("sum", (4096, 1024), "float32", 0): (0.000326223, 7.84167e-05),
    ("sum", (4096, 1024), "float32", 1): (8.89416e-05, 1.75329e-05),
    ("sum", (33, 40000), "float32", 1): (0.00223717, 0.000765465),
    ("sum", (40000, 33), "float32", 0): (0.00185899, 0.000583807),
    ("sum", (1_000_000,), "float64", None): (5.82077e-11, 5.82077e-11),
    ("sum", (1000, 1000), "float64", 0): (1.13687e-13, 2.53522e-14),
    ("sum", (1000, 1000), "bfloat16", 0): (1.98244, 0.548495),
}


def _exact(x: np.ndarray, op: str, axis) -> np.ndarray:
    """The reduction in float64 (by `math.fsum` for float64 data: correctly rounded)."""
    if x.dtype != np.float64:
        x64 = x.astype(np.float64)
        return np.sum(x64, axis=axis) if op == "sum" else np.mean(x64, axis=axis)
    axes = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else axis
    kept = [d for d in range(x.ndim) if d not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape(math.prod(x.shape[d] for d in kept), -1)
    out = np.array([math.fsum(r) for r in rows]).reshape([x.shape[d] for d in kept])
    return out if op == "sum" else out / rows.shape[1]


def _errors(op: str, shape, dtype, axis) -> tuple[np.ndarray, np.ndarray]:
    """justjax's result and the exact one, in float64."""
    dt = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    a, b = _data(shape, dt, 0), _data(shape, dt, 1)
    with jax.config.override("jax_enable_x64", dt == np.float64):
        got = np.asarray(jax.jit(_FNS[op](axis))(a, b)).astype(np.float64)
    x = a.astype(np.float64) * b.astype(np.float64) if op == "sumprod" else a
    if op == "sumprod":
        op = "sum"
    return got, _exact(x if dt == np.float64 else x.astype(np.float64), op, axis)


@pytest.mark.parametrize("case", list(XLA_ERRORS), ids=lambda c: f"{c[0]}-{c[2]}{list(c[1])}-{c[3]}")
def test_error_at_most_xla(case):
    op, shape, dtype, axis = case
    got, want = _errors(op, shape, dtype, axis)
    err = np.abs(got - want)
    xla_max, xla_mean = XLA_ERRORS[case]
    # Half an ulp of the largest result: a rounding tie between two neighbours.
    eps = 2.0 ** -8 if dtype == "bfloat16" else float(np.finfo(dtype).eps)
    margin = 0.5 * eps * float(np.abs(want).max())
    assert err.max() <= xla_max + margin, (err.max(), xla_max, margin)
    assert err.mean() <= xla_mean + margin, (err.mean(), xla_mean, margin)


def test_sum_of_equal_values_is_correctly_rounded():
    # The example: sin(1)**2 200,000 times. Against the sum of its own float32 terms
    # (their last bit is the math library's), the result is the float32 nearest to it (XLA:
    # 0.77 ulps off, 141614.6875 for terms summing to 141614.67552).
    f = jax.jit(lambda a: jnp.sum(jnp.sin(a) ** 2))
    ones = np.ones(200_000, np.float32)
    terms = np.asarray(jax.jit(lambda a: jnp.sin(a) ** 2)(ones)).astype(np.float64)
    exact = terms.sum()
    assert float(f(ones)) == float(np.float32(exact))


def test_long_float16_sum_accumulates_in_float32():
    x = _data((100_000,), np.float16, 3)
    got = float(jax.jit(jnp.sum)(x))
    # One rounding to float16 at the end (the sum, about 50,000, is finite in float16).
    assert np.isfinite(got)
    assert got == float(np.float16(x.astype(np.float64).sum()))


# Real JAX 0.10.2's (max, mean) absolute errors against float64 NumPy, recorded as above:
# cumulative sums (XLA sums them as a tree) and a long window (lax.reduce_window of add).
XLA_CUMULATIVE_ERRORS = {
    ("cumsum", (1_000_000,), 0): (0.10856852, 0.02111140),
    ("cumsum", (1000, 1000), 0): (9.886653e-05, 1.1124167e-05),
    ("cumsum", (1000, 1000), 1): (9.315064e-05, 1.0981620e-05),
    ("window", (4, 4096, 8), 1): (0.00015069904, 5.0564496e-05),
}


@pytest.mark.parametrize("case", list(XLA_CUMULATIVE_ERRORS),
                         ids=lambda c: f"{c[0]}{list(c[1])}-{c[2]}")
def test_cumulative_error_at_most_xla(case):
    kind, shape, axis = case
    x = _data(shape, np.float32, 0)
    if kind == "cumsum":
        got = jax.jit(lambda a: jnp.cumsum(a, axis=axis))(x)
        want = np.cumsum(x.astype(np.float64), axis=axis)
    else:
        window = tuple(n if d == axis else 1 for d, n in enumerate(shape))
        got = jax.jit(lambda a: jax.lax.reduce_window(a, 0.0, jax.lax.add, window,
                                                      (1,) * len(shape), "VALID"))(x)
        want = x.astype(np.float64).sum(axis, keepdims=True)
    err = np.abs(np.asarray(got).astype(np.float64) - want)
    xla_max, xla_mean = XLA_CUMULATIVE_ERRORS[case]
    margin = 0.5 * float(np.finfo(np.float32).eps) * float(np.abs(want).max())
    assert err.max() <= xla_max + margin, (err.max(), xla_max, margin)
    assert err.mean() <= xla_mean + margin, (err.mean(), xla_mean, margin)


def _compile(f, args, level: int):
    x64 = any(np.asarray(a).dtype.itemsize == 8 for a in args)
    with jax.config.override("jax_enable_x64", x64):
        module = optimize.optimize(jax.jit(f).lower(*args).compiler_ir())
    return backends.get_backend("llvm").compile(module)


BIT_CASES = {
    "sum_all": (lambda a, b: jnp.sum(a), (1_000_003,), np.float32),
    "sum_rows": (lambda a, b: jnp.sum(a, axis=1), (37, 20011), np.float32),
    "sum_cols_direct": (lambda a, b: jnp.sum(a, axis=0), (2053, 1031), np.float32),
    "sum_cols_tile": (lambda a, b: jnp.sum(a, axis=0), (100003, 7), np.float32),
    "sum_middle": (lambda a, b: jnp.sum(a, axis=1), (3, 5000, 7), np.float32),
    "sum_outer_inner": (lambda a, b: jnp.sum(a, axis=(0, 2)), (3, 5000, 7), np.float32),
    "mean_product": (lambda a, b: jnp.mean(a * b, axis=-1), (64, 30000), np.float32),
    "prod_rows": (lambda a, b: jnp.prod(1 + a / 1e4, axis=1), (16, 50000), np.float32),
    "sum_bf16": (lambda a, b: jnp.sum(a, axis=0), (3000, 129), BF16),
    "sum_f64": (lambda a, b: jnp.sum(a, axis=1), (9, 100001), np.float64),
    "cumsum_rows": (lambda a, b: jnp.cumsum(a, axis=1), (5, 70001), np.float32),
    "cumsum_cols": (lambda a, b: jnp.cumsum(a, axis=0), (3001, 257), np.float32),
    "long_window": (lambda a, b: jax.lax.reduce_window(a, 0.0, jax.lax.add, (1, 3001, 1),
                                                       (1, 1, 1), "VALID"), (2, 3001, 33),
                    np.float32),
}


@pytest.mark.parametrize("name", list(BIT_CASES))
def test_bits_equal_at_o0_and_o3(name, monkeypatch):
    f, shape, dtype = BIT_CASES[name]
    args = (_data(shape, dtype, 0), _data(shape, dtype, 1))
    results = []
    for threshold, level in ((1 << 62, 0), (0, 3)):
        monkeypatch.setattr(executable, "FAST_COMPILE_ELEMENTS", threshold)
        exe = _compile(f, args, level)
        assert exe.opt_level == level
        (out,) = exe.execute(list(args))
        results.append(np.asarray(out))
    o0, o3 = (np.atleast_1d(r).view(np.uint8) for r in results)
    np.testing.assert_array_equal(o0, o3)
