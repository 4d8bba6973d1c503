"""jax.numpy reductions: sums, products, extrema, means and variances, their NaN-ignoring
forms, argmax/argmin and cumulative reductions (order statistics such as median and quantile
live with sorting, in `sorting.py`).

Everything is written with lax, in the order JAX emits its equations, so traced programs print
the jaxprs JAX prints. Result dtypes follow JAX: sums and products of small integers and bools
promote to the default integer type, means and variances of integers are floats, and
float16/bfloat16 sums accumulate in float32 and are rounded once.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import elementwise as lax
from justjax._src.lax import cumulative as lax_cumulative
from justjax._src.lax import reductions as lax_reductions
from justjax._src.lax import structural
from justjax._src.numpy import ufuncs, util
from justjax._src.numpy.scalar_types import check_and_canonicalize_user_dtype

__all__ = [
    "sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "average", "var", "std",
    "ptp", "count_nonzero", "argmax", "argmin", "nanargmax", "nanargmin",
    "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
    "cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "nancumsum", "nancumprod",
]

Axis = int | Sequence[int] | None

_builtin_all = all

# ---------------------------------------------------------------------------------------------
# Shared helpers.

_const = util.const  # JAX's lax._const


def _upcast_f16(dtype: np.dtype) -> np.dtype:
    """float16/bfloat16 accumulate in float32 (as JAX does for sums and means)."""
    if np.dtype(dtype) in (dtypes.float16, dtypes.bfloat16):
        return dtypes.float32
    return np.dtype(dtype)


def _promote_integer_dtype(dtype: np.dtype) -> np.dtype:
    """bool and integers narrower than the default integer widen to it (sum/prod/cumsum)."""
    if dtypes.is_bool(dtype):
        return dtypes.default_int_dtype()
    if dtypes.is_unsigned(dtype):
        default = dtypes.default_uint_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    if dtypes.is_signed(dtype):
        default = dtypes.default_int_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


def _check_where(name: str, where: Any) -> Any:
    if where is None:
        return None
    where = util.ensure_arraylike(name, where)
    if where.dtype != dtypes.bool_:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                         f"where.dtype={where.dtype!r}.")
    return where


def _ensure_optional_axes(axis: Any) -> Any:
    """`axis` as None, an int or a tuple of ints; it must be static."""
    def force(x: Any) -> Any:
        if x is None:
            return None
        try:
            return operator.index(x)
        except TypeError:
            return tuple(operator.index(i) for i in x)
    return core.concrete_or_error(force, axis, "The axis argument must be known statically.")


def _reduction_dims(ndim: int, axis: Axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (np.ndarray, tuple, list)) else (axis,)
    dims = tuple(util.canonicalize_axis(a, ndim) for a in axes)
    if len(set(dims)) != len(dims):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return dims


def _axis_size(shape: tuple[int, ...], axis: Axis) -> int:
    if axis is None:
        return math.prod(shape)
    axes = axis if isinstance(axis, Sequence) else (axis,)
    return math.prod(shape[a] for a in axes)


def _init_value(dtype: np.dtype, value: Any) -> np.ndarray:
    """A reduction's identity as a NumPy scalar of `dtype` (staged as a literal); for
    integers the infinities of max/min become the type's extremes."""
    if dtypes.is_bool(dtype):
        return np.array(value > 0, dtype=dtype)
    if dtypes.is_int(dtype) and np.isinf(value):
        info = dtypes.iinfo(dtype)
        return np.array(info.min if value < 0 else info.max, dtype=dtype)
    return np.array(value, dtype=dtype)


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


def _broadcast_in_dim(x: Any, shape: Sequence[int], dims: Sequence[int]) -> Any:
    """`lax.broadcast_in_dim`, except that an identity broadcast gives `x` itself: JAX's
    tracing forwards those instead of staging an equation."""
    if tuple(core.get_aval(x).shape) == tuple(shape):
        return x
    return structural.broadcast_in_dim(x, tuple(shape), tuple(dims))


def _expand_dims(x: Any, dims: Sequence[int]) -> Any:
    """`lax.expand_dims`; inserting no dimensions stages nothing (as in JAX)."""
    return structural.expand_dims(x, tuple(dims)) if len(dims) else x


def _full(shape: Sequence[int], value: Any, dtype: np.dtype) -> Any:
    return structural.broadcast(structural.convert_element_type(value, dtype), tuple(shape))


def _check_out(out: Any, name: str) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


# ---------------------------------------------------------------------------------------------
# The generic reduction.

# op name -> (lax reduction, lax combining function)
_REDUCERS: dict[str, tuple[str, Callable]] = {
    "add": ("reduce_sum", lax.add), "mul": ("reduce_prod", lax.mul),
    "max": ("reduce_max", lax.max), "min": ("reduce_min", lax.min),
    "and": ("reduce_and", lax.bitwise_and), "or": ("reduce_or", lax.bitwise_or),
    "xor": ("reduce_xor", lax.bitwise_xor),
}


def _cast_to_numeric(x: Any) -> Any:
    return util.promote_dtypes_numeric(x)[0]


def _cast_to_bool(x: Any) -> Any:
    if dtypes.is_complex(x.dtype):
        x = lax.real(x)
    return structural.convert_element_type(x, dtypes.bool_)


def _reduction(a: Any, name: str, op: str, init_val: Any, *, has_identity: bool = True,
               preproc: Callable | None = None, bool_op: str | None = None,
               upcast_f16_for_computation: bool = False, axis: Axis = None,
               dtype: Any = None, out: Any = None, keepdims: bool = False,
               initial: Any = None, where_mask: Any = None,
               promote_integers: bool = False) -> Any:
    """Reduces `a` over `axis` with the monoid `op` (identity `init_val`)."""
    _check_out(out, name)
    a = util.ensure_arraylike(name, a)
    where_mask = _check_where(name, where_mask)
    axis = core.concrete_or_error(lambda x: x, axis, f"axis argument to jnp.{name}().")
    if initial is None and not has_identity and where_mask is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    a = preproc(a) if preproc else a
    dims = _reduction_dims(a.ndim, axis)
    if initial is None and not has_identity and not _builtin_all(a.shape[d] >= 1 for d in dims):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype is None:
        result_dtype = a.dtype
        if promote_integers:
            result_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = check_and_canonicalize_user_dtype(dtype, name)
    computation_dtype = result_dtype
    if upcast_f16_for_computation and dtypes.is_inexact(result_dtype):
        computation_dtype = _upcast_f16(result_dtype)
    a = structural.convert_element_type(a, computation_dtype)
    if computation_dtype == dtypes.bool_ and bool_op is not None:
        op = bool_op
    reducer_name, combine = _REDUCERS[op]
    init = _init_value(computation_dtype, init_val)
    if where_mask is not None:
        a = util.where(where_mask, a, init)
    result = getattr(lax_reductions, reducer_name)(a, dims)
    if initial is not None:
        initial_arr = structural.convert_element_type(initial, computation_dtype)
        if core.get_aval(initial_arr).shape != ():
            raise ValueError("initial value must be a scalar. Got array of shape "
                             f"{core.get_aval(initial_arr).shape}")
        result = combine(initial_arr, result)
    if keepdims:
        result = _expand_dims(result, dims)
    return structural.convert_element_type(result, result_dtype)


def sum(a: Any, axis: Axis = None, dtype: Any = None, out: None = None,
        keepdims: bool = False, initial: Any = None, where: Any = None,
        promote_integers: bool = True) -> Any:
    """Sum of array elements over `axis` (StableHLO `reduce` with `add`).

    Args:
      a: the array.
      axis: None (all axes), an axis or a tuple of axes; negative axes count from the end.
      dtype: the accumulation and result dtype. By default bools and integers narrower than
        the default integer widen to it (unless `promote_integers=False`); float16 and
        bfloat16 accumulate in float32.
      keepdims: keep reduced axes as size 1.
      initial: a scalar added to the result.
      where: a boolean mask of the elements to include.
    Returns:
      The sums.
    """
    return _reduction(a, "sum", "add", 0, preproc=_cast_to_numeric, bool_op="or",
                      upcast_f16_for_computation=dtype is None,
                      axis=_ensure_optional_axes(axis), dtype=dtype, out=out,
                      keepdims=keepdims, initial=initial, where_mask=where,
                      promote_integers=promote_integers)


def prod(a: Any, axis: Axis = None, dtype: Any = None, out: None = None,
         keepdims: bool = False, initial: Any = None, where: Any = None,
         promote_integers: bool = True) -> Any:
    """Product of array elements over `axis` (StableHLO `reduce` with `multiply`); dtype rules
    as for `sum`."""
    return _reduction(a, "prod", "mul", 1, preproc=_cast_to_numeric, bool_op="and",
                      upcast_f16_for_computation=dtype is None,
                      axis=_ensure_optional_axes(axis), dtype=dtype, out=out,
                      keepdims=keepdims, initial=initial, where_mask=where,
                      promote_integers=promote_integers)


def max(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    """Maximum over `axis` (StableHLO `reduce` with `maximum`); NaNs propagate.

    An empty reduction needs `initial`, and so does a `where` mask.
    """
    return _reduction(a, "max", "max", -np.inf, has_identity=False,
                      axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                      initial=initial, where_mask=where)


def min(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    """Minimum over `axis` (StableHLO `reduce` with `minimum`); NaNs propagate."""
    return _reduction(a, "min", "min", np.inf, has_identity=False,
                      axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                      initial=initial, where_mask=where)


def amax(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False,
         initial: Any = None, where: Any = None) -> Any:
    """Alias of `max`."""
    return max(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def amin(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False,
         initial: Any = None, where: Any = None) -> Any:
    """Alias of `min`."""
    return min(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def all(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """Whether all elements over `axis` are nonzero (StableHLO `reduce` with `and`)."""
    return _reduction(a, "all", "and", True, preproc=_cast_to_bool,
                      axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                      where_mask=where)


def any(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    """Whether any element over `axis` is nonzero (StableHLO `reduce` with `or`)."""
    return _reduction(a, "any", "or", False, preproc=_cast_to_bool,
                      axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                      where_mask=where)


# ---------------------------------------------------------------------------------------------
# Means and variances.

def _count(a: Any, axis: Axis, keepdims: bool, where: Any, dtype: np.dtype) -> Any:
    """How many elements each mean divides by, as `dtype`."""
    if where is None:
        return structural.convert_element_type(_axis_size(a.shape, axis), dtype)
    return sum(util.broadcast_to(where, a.shape), axis, dtype=dtype, keepdims=keepdims)


def mean(a: Any, axis: Axis = None, dtype: Any = None, out: None = None,
         keepdims: bool = False, *, where: Any = None) -> Any:
    """Arithmetic mean over `axis`; integer and bool inputs give the default float type.

    float16/bfloat16 inputs accumulate in float32 unless `dtype` is given.
    """
    return _mean(a, _ensure_optional_axes(axis), dtype, out, keepdims, where=where,
                 upcast_f16_for_computation=dtype is None)


def _mean(a: Any, axis: Axis, dtype: Any, out: Any, keepdims: bool, *, where: Any,
          upcast_f16_for_computation: bool) -> Any:
    a = util.ensure_arraylike("mean", a)
    where = _check_where("mean", where)
    _check_out(out, "mean")
    if dtype is None:
        result_dtype = dtypes.to_inexact_dtype(a.dtype)
    else:
        result_dtype = check_and_canonicalize_user_dtype(dtype, "mean")
    computation_dtype = result_dtype
    if upcast_f16_for_computation and dtypes.is_inexact(result_dtype):
        computation_dtype = _upcast_f16(result_dtype)
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    total = sum(a, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    return structural.convert_element_type(lax.div(total, normalizer), result_dtype)


def average(a: Any, axis: Axis = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """Weighted average over `axis`.

    Args:
      a: the array.
      axis: the axes to average over (None: all).
      weights: same shape as `a`, or the shape of `a` along `axis`; None for equal weights.
      returned: also return the sum of the weights (broadcast to the result's shape).
      keepdims: keep reduced axes as size 1.
    Returns:
      The average, or `(average, sum_of_weights)` when `returned`.
    """
    axis = _ensure_optional_axes(axis)
    a = util.ensure_arraylike("average", a)
    axes = _reduction_dims(a.ndim, axis)
    if weights is None:
        a, = util.promote_dtypes_inexact(a)
        avg = mean(a, axis=axis, keepdims=keepdims)
        weights_sum = _full((), _axis_size(a.shape, axes), avg.dtype)
    else:
        weights = util.ensure_arraylike("average", weights)
        a, weights = util.promote_dtypes_inexact(a, weights)
        if a.shape != weights.shape:
            weights = _align_weights(a, weights, axis, axes)
        weights_sum = sum(weights, axis=axis, keepdims=keepdims)
        weighted = sum(lax.mul(a, weights), axis=axis, keepdims=keepdims)
        avg = lax.div(weighted, weights_sum)
    if not returned:
        return avg
    if avg.shape != weights_sum.shape:
        weights_sum = util.broadcast_to(weights_sum, avg.shape)
    return avg, weights_sum


def _align_weights(a: Any, weights: Any, axis: Axis, axes: tuple[int, ...]) -> Any:
    """1-D (or per-axis) weights reshaped so they broadcast against `a`."""
    if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
    if weights.shape != tuple(a.shape[ax] for ax in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along "
                         "specified axis.")
    new_shape = tuple(d if i in axes else 1 for i, d in enumerate(a.shape))
    return structural.reshape(weights, new_shape, tuple(int(i) for i in np.argsort(axes)))


def _var_promote_types(a_dtype: np.dtype, dtype: np.dtype | None
                       ) -> tuple[np.dtype, np.dtype]:
    """(computation dtype, result dtype) of var/std: floats of the input's precision, complex
    inputs give real results, float16/bfloat16 compute in float32."""
    if dtype:
        if not dtypes.is_complex(dtype) and dtypes.is_complex(a_dtype):
            raise ValueError(
                "jax.numpy.var does not yet support real dtype parameters when computing the "
                "variance of an array of complex values. The semantics of numpy.var seem "
                "unclear in this case. Please comment on "
                "https://github.com/jax-ml/jax/issues/2283 if this behavior is important to "
                "you.")
        computation_dtype = dtype
    elif not dtypes.is_inexact(a_dtype):
        dtype = dtypes.to_inexact_dtype(a_dtype)
        computation_dtype = dtype
    else:
        dtype = dtypes.real_dtype(a_dtype)
        computation_dtype = a_dtype
    return _upcast_f16(computation_dtype), np.dtype(dtype)


def _resolve_correction(ddof: Any, correction: Any) -> Any:
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: int | float | None = None) -> Any:
    """Variance over `axis`: the mean squared deviation, divided by `N - correction`.

    Args:
      ddof / correction: the delta degrees of freedom (give one of them).
      mean: a precomputed mean (with `keepdims=True` shape) to center on.
      where: a boolean mask of the elements to include.
    Returns:
      Floats (real for complex inputs); NaN where `N - correction <= 0`.
    """
    correction = _resolve_correction(ddof, correction)
    a = util.ensure_arraylike("var", a)
    return _var(a, axis=_ensure_optional_axes(axis), dtype=dtype, out=out,
                correction=correction, keepdims=keepdims, where=where, a_mean=mean)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype", "keepdims"))
def _var(a: Any, *, axis: Axis = None, dtype: Any = None, out: Any = None, correction: Any = 0,
         keepdims: bool = False, where: Any = None, a_mean: Any = None) -> Any:
    where = _check_where("var", where)
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "var")
    _check_out(out, "var")
    computation_dtype, dtype = _var_promote_types(a.dtype, dtype)
    a = structural.convert_element_type(a, computation_dtype)
    if a_mean is None:
        a_mean = mean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        a_mean = structural.convert_element_type(util.ensure_arraylike("var", a_mean),
                                                 computation_dtype)
    centered = lax.sub(a, a_mean)
    if dtypes.is_complex(computation_dtype):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        computation_dtype = centered.dtype
    else:
        centered = lax.square(centered)
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    normalizer = lax.sub(normalizer,
                         structural.convert_element_type(correction, computation_dtype))
    result = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    result = structural.convert_element_type(lax.div(result, normalizer), dtype)
    return util.where(lax.gt(normalizer, _const(normalizer, 0)), result, np.nan)


def std(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: int | float | None = None) -> Any:
    """Standard deviation over `axis`: `sqrt(var(...))` with the same arguments."""
    correction = _resolve_correction(ddof, correction)
    a = util.ensure_arraylike("std", a)
    return _std(a, axis=_ensure_optional_axes(axis), dtype=dtype, out=out,
                correction=correction, keepdims=keepdims, where=where, mean=mean)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype", "keepdims"))
def _std(a: Any, *, axis: Axis = None, dtype: Any = None, out: Any = None, correction: Any = 0,
         keepdims: bool = False, where: Any = None, mean: Any = None) -> Any:
    where = _check_where("std", where)
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "std")
        if not dtypes.is_inexact(dtype):
            raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    _check_out(out, "std")
    return lax.sqrt(var(a, axis=axis, dtype=dtype, correction=correction, keepdims=keepdims,
                        where=where, mean=mean))


def ptp(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False) -> Any:
    """Peak to peak: `max - min` over `axis`."""
    a = util.ensure_arraylike("ptp", a)
    return _ptp(a, _ensure_optional_axes(axis), out, keepdims)


@util.jitted_as_in_jax(static_argnames=("axis", "keepdims"))
def _ptp(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False) -> Any:
    _check_out(out, "ptp")
    return lax.sub(amax(a, axis=axis, keepdims=keepdims), amin(a, axis=axis, keepdims=keepdims))


@util.jitted_as_in_jax(static_argnames=("axis", "keepdims"))
def count_nonzero(a: Any, axis: Axis = None, keepdims: bool = False) -> Any:
    """How many elements over `axis` are nonzero, as the default integer type."""
    a = util.ensure_arraylike("count_nonzero", a)
    return sum(lax.ne(a, _const(a, 0)), axis=_ensure_optional_axes(axis),
               dtype=dtypes.default_int_dtype(), keepdims=keepdims)


# ---------------------------------------------------------------------------------------------
# argmax / argmin.

def _arg_extremum(name: str, reducer: str, a: Any, axis: Any, out: Any, keepdims: Any) -> Any:
    a = util.ensure_arraylike(name, a)
    _check_out(out, name)
    axis = None if axis is None else operator.index(axis)
    if axis is None:
        dims = tuple(range(a.ndim))
        a = structural.reshape(a, (a.size,))
        axis = 0
    else:
        dims = (axis,)
    if a.shape[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    index_dtype = dtypes.default_int_dtype()
    result = getattr(lax_reductions, reducer)(a, util.canonicalize_axis(axis, a.ndim),
                                              index_dtype)
    return _expand_dims(result, dims) if keepdims else result


def argmax(a: Any, axis: int | None = None, out: None = None,
           keepdims: bool | None = None) -> Any:
    """Index of the maximum along `axis` (of the flattened array when None); the first one
    on ties, NaN counts as the maximum."""
    return _arg_extremum("argmax", "argmax", a, axis, out, bool(keepdims))


def argmin(a: Any, axis: int | None = None, out: None = None,
           keepdims: bool | None = None) -> Any:
    """Index of the minimum along `axis` (of the flattened array when None)."""
    return _arg_extremum("argmin", "argmin", a, axis, out, bool(keepdims))


def _nan_arg_extremum(fun: Callable, fill: float, a: Any, axis: Any, keepdims: bool) -> Any:
    if not dtypes.is_inexact(a.dtype):
        return fun(a, axis=axis, keepdims=keepdims)
    nan_mask = _isnan(a)
    result = fun(util.where(nan_mask, fill, a), axis=axis, keepdims=keepdims)
    return util.where(all(nan_mask, axis=axis, keepdims=keepdims), -1, result)


def nanargmax(a: Any, axis: int | None = None, out: None = None,
              keepdims: bool | None = None) -> Any:
    """`argmax` ignoring NaNs; -1 where every element is NaN."""
    _check_out(out, "nanargmax")
    a = util.ensure_arraylike("nanargmax", a)
    return _nanargmax(a, None if axis is None else operator.index(axis),
                      keepdims=bool(keepdims))


@util.jitted_as_in_jax(static_argnames=("axis", "keepdims"))
def _nanargmax(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """`nanargmax` of an array, jitted as JAX jits it."""
    return _nan_arg_extremum(argmax, -np.inf, a, axis, keepdims)


def nanargmin(a: Any, axis: int | None = None, out: None = None,
              keepdims: bool | None = None) -> Any:
    """`argmin` ignoring NaNs; -1 where every element is NaN."""
    _check_out(out, "nanargmin")
    a = util.ensure_arraylike("nanargmin", a)
    return _nanargmin(a, None if axis is None else operator.index(axis),
                      keepdims=bool(keepdims))


@util.jitted_as_in_jax(static_argnames=("axis", "keepdims"))
def _nanargmin(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """`nanargmin` of an array, jitted as JAX jits it."""
    return _nan_arg_extremum(argmin, np.inf, a, axis, keepdims)


# ---------------------------------------------------------------------------------------------
# NaN-ignoring reductions.

def _nan_reduction(a: Any, name: str, reduction: Callable, init_val: Any,
                   nan_if_all_nan: bool, axis: Axis = None, keepdims: bool = False,
                   where: Any = None, **kwargs: Any) -> Any:
    """`reduction` with NaNs replaced by its identity; NaN where all inputs were NaN
    when `nan_if_all_nan`."""
    a = util.ensure_arraylike(name, a)
    where = _check_where(name, where)
    if not dtypes.is_inexact(a.dtype):
        return reduction(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
    filled = util.where(_isnan(a), _init_value(a.dtype, init_val), a)
    result = reduction(filled, axis=axis, keepdims=keepdims, where=where, **kwargs)
    if not nan_if_all_nan:
        return result
    return util.where(all(_isnan(a), axis=axis, keepdims=keepdims), _const(a, np.nan), result)


@util.jitted_as_in_jax(static_argnames=("axis", "keepdims"))
def nanmin(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """`min` ignoring NaNs; NaN where all elements are NaN (unless `initial` is given)."""
    return _nan_reduction(a, "nanmin", min, np.inf, nan_if_all_nan=initial is None,
                          axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                          initial=initial, where=where)


@util.jitted_as_in_jax(static_argnames=("axis", "keepdims"))
def nanmax(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """`max` ignoring NaNs; NaN where all elements are NaN (unless `initial` is given)."""
    return _nan_reduction(a, "nanmax", max, -np.inf, nan_if_all_nan=initial is None,
                          axis=_ensure_optional_axes(axis), out=out, keepdims=keepdims,
                          initial=initial, where=where)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype", "keepdims"))
def nansum(a: Any, axis: Axis = None, dtype: Any = None, out: None = None,
           keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """`sum` treating NaNs as zero."""
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "nanprod")
    return _nan_reduction(a, "nansum", sum, 0, nan_if_all_nan=False,
                          axis=_ensure_optional_axes(axis), dtype=dtype, out=out,
                          keepdims=keepdims, initial=initial, where=where)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype", "keepdims"))
def nanprod(a: Any, axis: Axis = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """`prod` treating NaNs as one."""
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "nanprod")
    return _nan_reduction(a, "nanprod", prod, 1, nan_if_all_nan=False,
                          axis=_ensure_optional_axes(axis), dtype=dtype, out=out,
                          keepdims=keepdims, initial=initial, where=where)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype", "keepdims"))
def nanmean(a: Any, axis: Axis = None, dtype: Any = None, out: None = None,
            keepdims: bool = False, where: Any = None) -> Any:
    """`mean` of the non-NaN elements; NaN where all elements are NaN."""
    a = util.ensure_arraylike("nanmean", a)
    where = _check_where("nanmean", where)
    _check_out(out, "nanmean")
    axis = _ensure_optional_axes(axis)
    if dtypes.is_bool(a.dtype) or dtypes.is_int(a.dtype):
        return mean(a, axis, dtype, out, keepdims, where=where)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(a.dtype)
    else:
        dtype = check_and_canonicalize_user_dtype(dtype, "mean")
    not_nan = lax.bitwise_not(_isnan(a))
    normalizer = sum(not_nan, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    total = nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(total, normalizer)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype", "keepdims"))
def nanvar(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Any:
    """`var` of the non-NaN elements; NaN where fewer than `ddof + 1` remain."""
    a = util.ensure_arraylike("nanvar", a)
    where = _check_where("nanvar", where)
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "nanvar")
    _check_out(out, "nanvar")
    axis = _ensure_optional_axes(axis)
    computation_dtype, dtype = _var_promote_types(a.dtype, dtype)
    a = structural.convert_element_type(a, computation_dtype)
    if mean is None:
        mean = nanmean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        mean = structural.convert_element_type(util.ensure_arraylike("nanvar", mean),
                                               computation_dtype)
    centered = util.where(_isnan(a), 0, lax.sub(a, mean))
    if dtypes.is_complex(centered.dtype):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.square(centered)
    normalizer = sum(lax.bitwise_not(_isnan(a)), axis=axis, keepdims=keepdims, where=where)
    normalizer = ufuncs.subtract(normalizer, ddof)
    normalizer_mask = lax.le(normalizer, _const(normalizer, 0))
    result = sum(centered, axis, keepdims=keepdims, where=where)
    result = util.where(normalizer_mask, np.nan, result)
    divisor = util.where(normalizer_mask, 1, normalizer)
    result = lax.div(result, structural.convert_element_type(divisor, result.dtype))
    return structural.convert_element_type(result, dtype)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype", "keepdims"))
def nanstd(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Any:
    """`std` of the non-NaN elements: `sqrt(nanvar(...))`."""
    a = util.ensure_arraylike("nanstd", a)
    where = _check_where("nanstd", where)
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype, "nanstd")
    _check_out(out, "nanstd")
    return lax.sqrt(nanvar(a, axis=_ensure_optional_axes(axis), dtype=dtype, ddof=ddof,
                           keepdims=keepdims, where=where, mean=mean))


# ---------------------------------------------------------------------------------------------
# Cumulative reductions.

def _cumulative_reduction(name: str, reduction: str, a: Any, axis: int | None, dtype: Any,
                          out: Any = None, fill_nan: bool = False, fill_value: Any = 0,
                          promote_integers: bool = False) -> Any:
    a = util.ensure_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
    axis = None if axis is None else core.concrete_dim(axis, f"axis argument to jnp.{name}: ")
    if axis is None:
        a = structural.reshape(a, (a.size,))
    axis = util.canonicalize_axis(0 if axis is None else axis, a.ndim)
    if fill_nan:
        a = util.where(_isnan(a), _const(a, fill_value), a)
    if dtype is None:
        if promote_integers or a.dtype == dtypes.bool_:
            result_type = _promote_integer_dtype(a.dtype)
        else:
            result_type = a.dtype
        computation_type = result_type
    elif np.dtype(dtype) == dtypes.bool_:
        result_type = dtypes.bool_
        if a.dtype != result_type:
            a = lax.ne(a, _const(a, 0))
        computation_type = _promote_integer_dtype(result_type)
    else:
        result_type = check_and_canonicalize_user_dtype(dtype, name)
        computation_type = result_type
    a = structural.convert_element_type(a, computation_type)
    result = getattr(lax_cumulative, reduction)(a, axis)
    return structural.convert_element_type(result, result_type)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype"))
def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Running sum along `axis` (of the flattened array when None); bools sum as the default
    integer type, other dtypes keep theirs."""
    return _cumulative_reduction("cumsum", "cumsum", a, axis, dtype, out)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype"))
def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Running product along `axis` (of the flattened array when None)."""
    return _cumulative_reduction("cumprod", "cumprod", a, axis, dtype, out)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype"))
def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """`cumsum` treating NaNs as zero."""
    return _cumulative_reduction("nancumsum", "cumsum", a, axis, dtype, out, fill_nan=True,
                                 fill_value=0)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype"))
def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """`cumprod` treating NaNs as one."""
    return _cumulative_reduction("nancumprod", "cumprod", a, axis, dtype, out, fill_nan=True,
                                 fill_value=1)


def _cumulative_axis(x: Any, axis: int | None, what: str) -> int:
    if x.ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative {what}, however "
                         "a scalar value or scalar array was given.")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"The input array has rank {x.ndim}, however axis was not set to "
                             "an explicit value. The axis argument is only optional for "
                             "one-dimensional arrays.")
        axis = 0
    return util.canonicalize_axis(axis, x.ndim)


def _with_initial(out: Any, axis: int, value: int) -> Any:
    shape = list(out.shape)
    shape[axis] = 1
    return structural.concatenate([_full(shape, value, out.dtype), out], axis)


@util.jitted_as_in_jax(static_argnames=("axis", "dtype"))
def _cumsum_with_promotion(a: Any, axis: int | None = None, dtype: Any = None,
                           out: None = None) -> Any:
    """`cumsum` with integers promoted as `sum` promotes them (for `cumulative_sum`)."""
    return _cumulative_reduction("_cumsum_with_promotion", "cumsum", a, axis, dtype, out,
                                 promote_integers=True)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """Array API running sum: integers promote as in `sum`; `include_initial` prepends 0."""
    x = util.ensure_arraylike("cumulative_sum", x)
    axis = _cumulative_axis(x, axis, "sum")
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype)
    out = _cumsum_with_promotion(x, axis=axis, dtype=dtype)
    return _with_initial(out, axis, 0) if include_initial else out


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """Array API running product; `include_initial` prepends 1."""
    x = util.ensure_arraylike("cumulative_prod", x)
    axis = _cumulative_axis(x, axis, "product")
    if dtype is not None:
        dtype = check_and_canonicalize_user_dtype(dtype)
    out = _cumulative_reduction("cumulative_prod", "cumprod", x, axis, dtype)
    return _with_initial(out, axis, 1) if include_initial else out

