"""Native `stablehlo.sort` and `chlo.top_k` (`backends/llvm/kernels/sort.py`) against the
reference backend on the same optimized modules: sorted results must be equal bit for bit
(a sort only moves elements), and the op must run natively (no fallback)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import justjax as jax
import justjax.numpy as jnp
from justjax import lax
from justjax._src import backends
from justjax._src.backends.llvm.kernels import sort
from justjax._src.core import dtypes
from justjax._src.hlo import ir
from justjax._src.hlo.passes import optimize

BF16, F16 = np.dtype(dtypes.bfloat16), np.dtype(dtypes.float16)
SORT, TOP_K = "stablehlo.sort", "chlo.top_k"


def _host_has_f16c() -> bool:
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    return "+f16c" in llvm.get_host_cpu_features().flatten()


# float16 conversions need F16C instructions (without them LLVM calls compiler-rt helpers).
_NO_F16C = not _host_has_f16c()


def _is_x64(args: tuple) -> bool:
    return any(np.asarray(a).dtype.itemsize == 8 for a in args)


def _module(f: Callable[..., Any], *args: Any) -> ir.Module:
    """`f`'s optimized module (what jit compiles), lowered with x64 for 64-bit arguments."""
    with jax.config.override("jax_enable_x64", _is_x64(args)):
        return optimize.optimize(jax.jit(f).lower(*args).compiler_ir())


def _bits(x: np.ndarray) -> np.ndarray:
    """Floats as their bit patterns (so -0.0, NaN payloads and positions compare exactly)."""
    x = np.asarray(x)
    if x.dtype.kind == "f" or x.dtype in (BF16, F16):
        return x.view(np.dtype(f"u{x.dtype.itemsize}"))
    return x


def _check(module: ir.Module, args: tuple, opcode: str) -> list[np.ndarray]:
    """Runs `module` on both backends; asserts `opcode` ran natively and equal results."""
    if _NO_F16C and any(np.asarray(a).dtype == F16 for a in args):
        pytest.skip("host CPU has no F16C")
    buffers = [np.asarray(a) for a in args]
    executable = backends.get_backend("llvm").compile(module)
    assert executable.program.kernels.get(opcode), executable.program.kernels
    assert not executable.program.fallbacks, [fb.op.opcode for fb in executable.program.fallbacks]
    got = executable.execute(buffers)
    want = backends.get_backend("reference").compile(module).execute(buffers)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_array_equal(_bits(g), _bits(w))
    return got


# -- inputs ------------------------------------------------------------------------------------

_SPECIALS = [np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 2.5, -2.5]


def _values(shape: tuple[int, ...], dt: Any, kind: str = "random", seed: int = 0) -> np.ndarray:
    """Test inputs: "random" (with repeated values), "specials" (NaNs of both signs, zeros
    of both signs, infinities), "sorted", "reversed" or "equal"."""
    dt = np.dtype(dt)
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    if kind == "specials":
        flat = rng.choice(np.array(_SPECIALS), size)
    elif dt == np.bool_:
        flat = rng.random(size) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -50), min(info.max, 50)
        flat = rng.integers(lo, hi, size, endpoint=True)
    else:
        # Rounded so that equal keys occur (stability shows).
        flat = np.round(rng.standard_normal(size) * 8) / 4
    if kind in ("sorted", "reversed"):
        flat = np.sort(flat)[:: 1 if kind == "sorted" else -1]
    elif kind == "equal":
        flat = np.full(size, flat[0] if size else 0)
    return flat.astype(dt).reshape(shape)


def _iota(shape: tuple[int, ...], axis: int) -> np.ndarray:
    return np.broadcast_to(np.arange(shape[axis], dtype=np.int32).reshape(
        [-1 if d == axis else 1 for d in range(len(shape))]), shape).copy()


def _flip_comparator(module: ir.Module) -> ir.Module:
    """`module` with its sort comparators' LT comparisons turned into GT (descending)."""
    for op in module.walk():
        if op.opcode != SORT:
            continue
        for inner in op.regions[0].block.walk():
            direction = inner.attributes.get("comparison_direction")
            if inner.opcode == "stablehlo.compare" and direction.value == "LT":
                inner.attributes = {**inner.attributes, "comparison_direction":
                                    ir.Enum("comparison_direction", "GT")}
    return module


# -- stablehlo.sort ----------------------------------------------------------------------------

SIZES = [0, 1, 2, 17, 1000, 100000]
ALL_DTYPES = [np.float32, np.float64, BF16, F16, np.int32, np.int64, np.int8, np.int16,
              np.uint8, np.uint32, np.uint64, np.bool_]


@pytest.mark.parametrize("n", SIZES)
def test_sort_sizes(n: int) -> None:
    x = _values((n,), np.float32, seed=n)
    (got,) = _check(_module(jnp.sort, x), (x,), SORT)
    np.testing.assert_array_equal(got, np.sort(x))


@pytest.mark.parametrize("n", [0, 1, 2, 17, 33, 100, 1000, 4097, 100000])
def test_argsort_sizes(n: int) -> None:
    x = _values((n,), np.float32, seed=n)
    (got,) = _check(_module(jnp.argsort, x), (x,), SORT)
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


def test_argsort_empty() -> None:
    # Keys and payload as arguments (lax.sort of two operands), of size 0.
    x, i = np.zeros(0, np.float32), np.zeros(0, np.int32)
    _check(_module(lambda x, i: lax.sort((x, i), num_keys=1), x, i), (x, i), SORT)


@pytest.mark.parametrize("shape", [(5,), (7, 33), (33, 7), (3, 40, 5), (4, 5, 37), (6, 1),
                                   (1, 9), (2, 0, 3)])
@pytest.mark.parametrize("fn", ["sort", "argsort"])
def test_sort_ranks_and_dimensions(shape: tuple[int, ...], fn: str) -> None:
    x = _values(shape, np.int32, seed=len(shape))
    for axis in range(len(shape)):
        f = (lambda x: jnp.sort(x, axis=axis)) if fn == "sort" else (
            lambda x: jnp.argsort(x, axis=axis))
        (got,) = _check(_module(f, x), (x,), SORT)
        if fn == "sort":
            np.testing.assert_array_equal(got, np.sort(x, axis=axis))
        else:
            np.testing.assert_array_equal(got, np.argsort(x, axis=axis, kind="stable"))


@pytest.mark.parametrize("dt", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [37, 1000])
def test_sort_dtypes(dt: Any, n: int) -> None:
    x = _values((n,), dt, seed=n)
    _check(_module(jnp.sort, x), (x,), SORT)
    _check(_module(jnp.argsort, x), (x,), SORT)


@pytest.mark.parametrize("dt", [np.float32, np.float64, BF16, F16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [10, 300, 5000])
def test_sort_nans_and_signed_zeros(dt: Any, n: int) -> None:
    x = _values((n,), dt, "specials", seed=n)
    (got,) = _check(_module(jnp.sort, x), (x,), SORT)
    finite = ~np.isnan(got.astype(np.float64))
    # NaNs last; -0.0 and 0.0 are equal keys, so they keep their input order.
    assert finite[: finite.sum()].all()
    zeros = x[x.astype(np.float64) == 0]
    np.testing.assert_array_equal(_bits(got[got.astype(np.float64) == 0]), _bits(zeros))
    (order,) = _check(_module(jnp.argsort, x), (x,), SORT)
    np.testing.assert_array_equal(order, np.argsort(x.astype(np.float64), kind="stable"))


@pytest.mark.parametrize("is_stable", [True, False])
@pytest.mark.parametrize("n", [17, 1000, 100000])
def test_sort_stability(is_stable: bool, n: int) -> None:
    keys = np.random.default_rng(n).integers(0, 3, n).astype(np.int32)
    index = np.arange(n, dtype=np.int32)
    f = lambda k, i: lax.sort((k, i), num_keys=1, is_stable=is_stable)  # noqa: E731
    got = _check(_module(f, keys, index), (keys, index), SORT)
    np.testing.assert_array_equal(got[1], np.argsort(keys, kind="stable"))


@pytest.mark.parametrize("num_keys", [1, 2, 3])
@pytest.mark.parametrize("n", [2, 50, 3000])
def test_sort_multi_operand(num_keys: int, n: int) -> None:
    rng = np.random.default_rng(n)
    ops = (rng.integers(0, 4, n).astype(np.int8), (rng.integers(0, 3, n) / 2).astype(np.float32),
           rng.random(n) < 0.5, np.arange(n, dtype=np.uint16))
    f = lambda *xs: lax.sort(xs, num_keys=num_keys)  # noqa: E731
    got = _check(_module(f, *ops), ops, SORT)
    order = np.lexsort(tuple(o.astype(np.float64) for o in reversed(ops[:num_keys])))
    for g, o in zip(got, ops, strict=True):
        np.testing.assert_array_equal(g, o[order])


@pytest.mark.parametrize("dt,kind", [(np.float32, "specials"), (np.float32, "random"),
                                     (np.int32, "random"), (np.uint8, "random"),
                                     (BF16, "specials")], ids=str)
@pytest.mark.parametrize("n", [17, 2000])
def test_sort_descending_comparator(dt: Any, kind: str, n: int) -> None:
    x = _values((n,), dt, kind, seed=n)
    index = np.arange(n, dtype=np.int32)
    module = _flip_comparator(_module(lambda x, i: lax.sort((x, i), num_keys=1), x, index))
    got = _check(module, (x, index), SORT)
    keys = x.astype(np.float64)
    if kind == "random":
        # Descending and stable: equal keys keep their index order.
        np.testing.assert_array_equal(got[1], np.lexsort((index, -keys)))


@pytest.mark.parametrize("kind", ["sorted", "reversed", "equal"])
@pytest.mark.parametrize("n", [16, 1000, 65536, 100001])
def test_sort_ordered_inputs(kind: str, n: int) -> None:
    x = _values((n,), np.float32, kind, seed=n)
    (got,) = _check(_module(jnp.argsort, x), (x,), SORT)
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


def test_sort_in_a_loop() -> None:
    # The kernel runs once per trip (scratch memory taken and released each time).
    x = _values((3, 300), np.float32)

    def f(x):
        return lax.fori_loop(0, 4, lambda i, y: jnp.sort(y * -1.0 + i, axis=1), x)

    (got,) = _check(_module(f, x), (x,), SORT)
    np.testing.assert_allclose(got, np.sort(np.sort(x, axis=1) + 4 - 2, axis=1) + 0.0,
                               rtol=1e-6)


def test_insertion_runs_and_merges_cover_odd_lengths() -> None:
    # Lengths around the run size and the paired merges' boundaries.
    run, pairs = sort.RUN, sort.PAIRS
    for n in sorted({run - 1, run, run + 1, 2 * run + 3, 2 * pairs * run, 2 * pairs * run + 1,
                     4 * pairs * run - 1, 5 * run + 7}):
        x = _values((n,), np.int16, seed=n)
        (got,) = _check(_module(jnp.argsort, x), (x,), SORT)
        np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


# -- chlo.top_k --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,k", [((1000,), 1), ((1000,), 10), ((1000,), 499),
                                     ((1000,), 600), ((1000,), 1000), ((17,), 17), ((5,), 1),
                                     ((3, 4, 50), 7), ((6, 40), 20), ((2, 3), 0), ((0, 5), 2),
                                     ((100000,), 100)], ids=str)
def test_top_k_shapes(shape: tuple[int, ...], k: int) -> None:
    x = _values(shape, np.float32, seed=k) + np.float32(0.0)  # no -0.0: NumPy orders it as 0.0
    values, indices = _check(_module(lambda x: lax.top_k(x, k), x), (x,), TOP_K)
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, axis=-1))


@pytest.mark.parametrize("dt", [np.float32, np.float64, BF16, F16, np.int32, np.int64,
                                np.int8, np.uint8, np.uint32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", ["random", "specials", "sorted", "reversed", "equal"])
def test_top_k_dtypes_and_orders(dt: Any, kind: str) -> None:
    if kind == "specials" and np.dtype(dt).kind in "iu":
        kind = "random"
    x = _values((4, 300), dt, kind, seed=3)
    for k in (1, 5, 150, 300):
        _check(_module(lambda x: lax.top_k(x, k), x), (x,), TOP_K)
