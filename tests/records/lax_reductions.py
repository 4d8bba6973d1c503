"""Op records for the reduction, argmax/argmin, cumulative and general `reduce` primitives."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from justjax import lax
from tests.harness import (BF16, BOOL, C64, F16, F32, FLOATS, I32, I8, INTS, U32, U8, OpRecord,
                           rand_default, rand_positive, rand_small_int, rand_special, widen)

# Shapes with the reduced axes chosen per record; empty shapes exercise identities.
SHAPES = [[(5,)], [(2, 3)], [(2, 3, 4)]]
EMPTY_SHAPES = [[(0,)], [(0, 3)], [(2, 0, 4)]]


def _same(dtype: np.dtype, *rest: np.dtype) -> np.dtype:
    return np.dtype(dtype)


def _int32(*dtypes: np.dtype) -> np.dtype:
    return np.dtype(np.int32)


def _wide(x: np.ndarray) -> np.ndarray:
    return widen(x)

def _reduce_in(x: np.ndarray, fn: Callable, axes: tuple[int, ...]) -> np.ndarray:
    if x.dtype.kind in "iub":
        return fn(x, axis=axes, dtype=x.dtype)  # integer arithmetic wraps, as in XLA
    return fn(_wide(x), axis=axes)


def _all_axes(x: Any) -> tuple[int, ...]:
    return tuple(range(np.ndim(x)))


def _first_axis(x: Any) -> tuple[int, ...]:
    return (0,)


def _last_two(x: Any) -> tuple[int, ...]:
    return tuple(range(max(np.ndim(x) - 2, 0), np.ndim(x)))


def _no_axes(x: Any) -> tuple[int, ...]:
    return ()


_AXES = {"all": _all_axes, "first": _first_axis, "last_two": _last_two, "none": _no_axes}


def _is_float(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == BF16


def rand_distinct(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype
                  ) -> np.ndarray:
    """Distinct values (no ties, so max/min/sort are differentiable and finite differences
    meaningful), 0.5 apart: exact in bfloat16 and float16. Integers are a permutation around
    0 (of 0.. for unsigned types); bools random."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    order = rng.permutation(n).reshape(shape)
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return order.astype(dtype)
    if dtype.kind == "i":
        return (order - n // 2).astype(dtype)
    values = (order - n // 2) * 0.5 + 0.25
    if dtype.kind == "c":
        return (values + 1j * rng.normal(size=shape)).astype(dtype)
    return values.astype(dtype)


def rand_small_float(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype
                     ) -> np.ndarray:
    """Floats from {-1.5, -1, ..., 1.5}, zeros included (products of them stay small, so
    finite differences of second order stay accurate); small integers otherwise."""
    if not _is_float(dtype):
        return rand_small_int(rng, shape, dtype)
    return (rng.integers(-3, 4, shape) * 0.5).astype(dtype)


def _max_identity(dtype: np.dtype) -> Any:
    if dtype == BOOL:
        return False
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return -np.inf


def _min_identity(dtype: np.dtype) -> Any:
    if dtype == BOOL:
        return True
    if dtype.kind in "iu":
        return np.iinfo(dtype).max
    return np.inf


def _np_sum(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return _reduce_in(x, np.sum, axes)


def _np_prod(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return _reduce_in(x, np.prod, axes)


def _np_max(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.max(_wide(x), axis=axes, initial=_max_identity(x.dtype))


def _np_min(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return np.min(_wide(x), axis=axes, initial=_min_identity(x.dtype))


def _np_bitwise(ufunc: np.ufunc) -> Callable[[np.ndarray, tuple[int, ...]], np.ndarray]:
    return lambda x, axes: ufunc.reduce(x, axis=axes)


def reduction(name: str, lax_fn: Callable, np_fn: Callable, dtypes: tuple, axes: str,
              shapes: list = SHAPES, make_args: Callable = rand_default, **kwargs: Any
              ) -> OpRecord:
    choose = _AXES[axes]
    return OpRecord(f"{name}_{axes}", lambda x: lax_fn(x, choose(x)),
                    lambda x: np_fn(x, choose(x)), shapes, dtypes, make_args,
                    expected_dtype=_same, **kwargs)


LOGICAL_DTYPES = (BOOL, I32, I8, U8, U32)
MINMAX_DTYPES = FLOATS + INTS + (BOOL,)


def _reduction_records() -> list[OpRecord]:
    records = []
    for axes in ("all", "first", "last_two", "none"):
        records += [
            reduction("reduce_sum", lax.reduce_sum, _np_sum, FLOATS + INTS + (C64,), axes),
            reduction("reduce_prod", lax.reduce_prod, _np_prod, FLOATS + (I32, I8, U8), axes,
                      make_args=rand_small_float),
            reduction("reduce_max", lax.reduce_max, _np_max, MINMAX_DTYPES, axes,
                      make_args=rand_distinct),
            reduction("reduce_min", lax.reduce_min, _np_min, MINMAX_DTYPES, axes,
                      make_args=rand_distinct),
            reduction("reduce_and", lax.reduce_and, _np_bitwise(np.bitwise_and),
                      LOGICAL_DTYPES, axes, differentiable=False),
            reduction("reduce_or", lax.reduce_or, _np_bitwise(np.bitwise_or),
                      LOGICAL_DTYPES, axes, differentiable=False),
            reduction("reduce_xor", lax.reduce_xor, _np_bitwise(np.bitwise_xor),
                      LOGICAL_DTYPES, axes, differentiable=False),
        ]
    records += [
        reduction("reduce_max_special", lax.reduce_max, _np_max, (F32, F16, BF16), "first",
                  make_args=rand_special, differentiable=False),
        reduction("reduce_min_special", lax.reduce_min, _np_min, (F32, BF16), "all",
                  make_args=rand_special, differentiable=False),
        # Infinite and NaN inputs: finite differences mean nothing there.
        reduction("reduce_sum_special", lax.reduce_sum, _np_sum, (F32,), "first",
                  make_args=rand_special, differentiable=False),
    ]
    for name, lax_fn, np_fn, dtypes in [
            ("reduce_sum_empty", lax.reduce_sum, _np_sum, (F32, I32, BF16)),
            ("reduce_prod_empty", lax.reduce_prod, _np_prod, (F32, I32)),
            ("reduce_max_empty", lax.reduce_max, _np_max, (F32, I32, U8, BOOL, BF16)),
            ("reduce_min_empty", lax.reduce_min, _np_min, (F32, I8, U32, BOOL)),
            ("reduce_and_empty", lax.reduce_and, _np_bitwise(np.bitwise_and), LOGICAL_DTYPES),
            ("reduce_or_empty", lax.reduce_or, _np_bitwise(np.bitwise_or), LOGICAL_DTYPES),
            ("reduce_xor_empty", lax.reduce_xor, _np_bitwise(np.bitwise_xor), (BOOL, I32))]:
        # Sums and products of nothing are constants (zero derivative); the max/min of
        # nothing is an infinite identity, and the others have integer operands.
        constant = name in ("reduce_sum_empty", "reduce_prod_empty")
        records.append(reduction(name, lax_fn, np_fn, dtypes, "first", EMPTY_SHAPES,
                                 differentiable=constant))
        records.append(reduction(name, lax_fn, np_fn, dtypes[:1], "all", EMPTY_SHAPES,
                                 differentiable=constant))
    return records


# -- argmax / argmin ----------------------------------------------------------------------------

def _np_arg(finder: Callable) -> Callable[..., np.ndarray]:
    # NumPy also returns the first NaN, and the first index among equal values.
    return lambda x, axis: finder(_wide(x) if x.dtype != BOOL else x, axis=axis)


def _arg_records() -> list[OpRecord]:
    records = []
    for name, lax_fn, finder in [("argmax", lax.argmax, np.argmax),
                                 ("argmin", lax.argmin, np.argmin)]:
        for axis in (0, -1):
            def fun(x: Any, axis: int = axis, lax_fn: Callable = lax_fn) -> Any:
                return lax_fn(x, axis % np.ndim(x), np.int32)
            records.append(OpRecord(
                f"{name}_axis{axis}", fun,
                lambda x, axis=axis, finder=finder: _np_arg(finder)(x, axis),
                [[(5,)], [(3, 4)], [(2, 3, 4)]], FLOATS + (I32, U8, BOOL), rand_small_int,
                expected_dtype=_int32, differentiable=False))
        records.append(OpRecord(
            f"{name}_special", lambda x, lax_fn=lax_fn: lax_fn(x, 1, np.int32),
            lambda x, finder=finder: _np_arg(finder)(x, 1), [[(4, 6)], [(3, 8, 2)]],
            (F32, BF16), rand_special, expected_dtype=_int32, differentiable=False))
        records.append(OpRecord(
            f"{name}_uint8_index", lambda x, lax_fn=lax_fn: lax_fn(x, 0, np.uint8),
            lambda x, finder=finder: _np_arg(finder)(x, 0), [[(7,)], [(3, 2)]], (F32,),
            expected_dtype=lambda d: np.dtype(np.uint8), differentiable=False))
    return records


# -- cumulative reductions ----------------------------------------------------------------------

def _np_cumulative(name: str) -> Callable[[np.ndarray, int], np.ndarray]:
    def ref(x: np.ndarray, axis: int) -> np.ndarray:
        if name in ("cumsum", "cumprod") and x.dtype.kind in "iu":
            fn = np.cumsum if name == "cumsum" else np.cumprod
            return fn(x, axis=axis, dtype=x.dtype)
        wide = _wide(x)
        ufunc = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum,
                 "cummin": np.minimum, "cumlogsumexp": np.logaddexp}[name]
        return ufunc.accumulate(wide, axis=axis)
    return ref


def _cumulative_records() -> list[OpRecord]:
    lax_fns = {"cumsum": lax.cumsum, "cumprod": lax.cumprod, "cummax": lax.cummax,
               "cummin": lax.cummin, "cumlogsumexp": lax.cumlogsumexp}
    dtypes = {"cumsum": FLOATS + INTS + (C64,), "cumprod": FLOATS + (I32, I8),
              "cummax": FLOATS + INTS, "cummin": FLOATS + INTS, "cumlogsumexp": FLOATS}
    records = []
    for name, lax_fn in lax_fns.items():
        ref = _np_cumulative(name)
        # Products of small values keep finite differences accurate; distinct values keep
        # cummax/cummin away from ties, where they are not differentiable.
        make = {"cumprod": rand_small_float, "cummax": rand_distinct,
                "cummin": rand_distinct}.get(name, rand_default)
        for reverse in (False, True):
            for axis in (0, 1):
                def fun(x: Any, axis: int = axis, reverse: bool = reverse,
                        lax_fn: Callable = lax_fn) -> Any:
                    return lax_fn(x, axis=axis, reverse=reverse)

                def reference(x: np.ndarray, axis: int = axis, reverse: bool = reverse,
                              ref: Callable = ref) -> np.ndarray:
                    flipped = np.flip(x, axis) if reverse else x
                    out = ref(flipped, axis)
                    return np.flip(out, axis) if reverse else out

                shapes = [[(2, 5)], [(3, 4, 2)], [(4, 0)]] if axis == 1 else \
                    [[(6,)], [(3, 4)], [(0, 3)]]
                records.append(OpRecord(
                    f"{name}_axis{axis}{'_reverse' if reverse else ''}", fun, reference,
                    shapes, dtypes[name], make, expected_dtype=_same,
                    tol={BF16: 5e-2, F16: 5e-3}))
    for name in ("cummax", "cummin", "cumsum", "cumlogsumexp"):
        records.append(OpRecord(
            f"{name}_special", lambda x, fn=lax_fns[name]: fn(x), _np_cumulative_axis0(name),
            [[(12,)], [(5, 3)]], (F32,), rand_special, expected_dtype=_same,
            differentiable=False))
    return records


def _np_cumulative_axis0(name: str) -> Callable[[np.ndarray], np.ndarray]:
    ref = _np_cumulative(name)
    return lambda x: ref(x, 0)


# -- the general reduce -------------------------------------------------------------------------

def _sum_of_squares(x: Any) -> Any:
    return lax.reduce(x, np.zeros((), x.dtype), lambda a, b: a + b * b, (0,))


def _max_with_index(x: Any, i: Any) -> Any:
    def comp(a: Any, b: Any) -> Any:
        take_a = lax.bitwise_or(lax.gt(a[0], b[0]),
                                lax.bitwise_and(lax.eq(a[0], b[0]), lax.lt(a[1], b[1])))
        return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])
    return lax.reduce((x, i), (np.array(-np.inf, x.dtype), np.array(0, i.dtype)), comp, (1,))


def _np_max_with_index(x: np.ndarray, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Distinct small ints as values make the winner unique; ties go to the lower index anyway.
    at = np.argmax(x, axis=1)
    rows = np.arange(x.shape[0])
    return x[rows, at], i[rows, at]


def _sum_of_products(x: Any, y: Any) -> Any:
    """An associative two-operand reducer: (sum of x, product of y)."""
    return lax.reduce((x, y), (np.zeros((), x.dtype), np.ones((), y.dtype)),
                      lambda a, b: (a[0] + b[0], a[1] * b[1]), (0,))


def _general_reduce_records() -> list[OpRecord]:
    # `a + b * b` is not associative, which `reduce` requires: its jvp (JAX's, a tree of
    # reducer applications) computes another function, so those records are value-only.
    return [
        OpRecord("reduce_general_sum_of_squares", _sum_of_squares,
                 lambda x: np.sum(_wide(x) ** 2, axis=0), [[(4,)], [(3, 2)], [(5, 2, 3)]],
                 (F32, I32), rand_small_int, expected_dtype=_same, differentiable=False),
        OpRecord("reduce_general_all_axes",
                 lambda x: lax.reduce(x, np.zeros((), x.dtype), lambda a, b: a + b * b,
                                      tuple(range(x.ndim))),
                 lambda x: np.sum(_wide(x) ** 2), [[(3,)], [(2, 3)]], (F32,), rand_small_int,
                 expected_dtype=_same, differentiable=False),
        OpRecord("reduce_general_sum_and_product", _sum_of_products,
                 lambda x, y: (np.sum(_wide(x), axis=0), np.prod(_wide(y), axis=0)),
                 [[(5,), (5,)], [(4, 3), (4, 3)]], [(F32, F32)], rand_small_float,
                 expected_dtype=lambda a, b: (a, b)),
        OpRecord("reduce_general_no_axes",
                 lambda x: lax.reduce(x, np.zeros((), x.dtype), lambda a, b: a + b * b, ()),
                 lambda x: x, [[(3,)], [(2, 3)]], (F32, I32), expected_dtype=_same),
        OpRecord("reduce_general_empty",
                 lambda x: lax.reduce(x, np.ones((), x.dtype), lambda a, b: a * b + 1, (0,)),
                 lambda x: np.ones(x.shape[1:], x.dtype), [[(0, 3)]], (F32,),
                 expected_dtype=_same),
        OpRecord("reduce_general_variadic_argmax", _max_with_index, _np_max_with_index,
                 [[(3, 5), (3, 5)], [(1, 4), (1, 4)]], [(F32, I32)],
                 [lambda rng, shape, dtype: rng.permutation(
                     np.prod(shape)).reshape(shape).astype(dtype),
                  lambda rng, shape, dtype: np.broadcast_to(
                      np.arange(shape[-1]), shape).astype(dtype)],
                 expected_dtype=lambda a, b: (a, b)),
        OpRecord("reduce_monoid_max", lambda x: lax.reduce(x, -np.inf, lax.max, (1,)),
                 lambda x: np.max(_wide(x), axis=1), [[(2, 3)], [(3, 4, 2)]], (F32, BF16),
                 rand_distinct, expected_dtype=_same),
        OpRecord("reduce_monoid_or", lambda x: lax.reduce(x, False, lax.bitwise_or, (0,)),
                 lambda x: np.any(x, axis=0), [[(4,)], [(3, 2)]], (BOOL,),
                 expected_dtype=_same, differentiable=False),
        OpRecord("reduce_monoid_mul", lambda x: lax.reduce(x, 1, lax.mul, (0,)),
                 lambda x: np.prod(x, axis=0, dtype=x.dtype), [[(4,)], [(3, 2)]], (I32,),
                 rand_positive, expected_dtype=_same),
    ]


RECORDS = (_reduction_records() + _arg_records() + _cumulative_records()
           + _general_reduce_records())
