"""jax.numpy's selection functions, written with lax: `where`, `select`, `piecewise`, `clip`,
`choose`, `compress`/`extract`, and `nonzero` with `flatnonzero`/`argwhere`.

The ones JAX wraps in `jit` are wrapped the same way (`util.jitted_as_in_jax`: same name,
static arguments and inline flag), so their jaxprs print JAX's `jit[name=...]` equations.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import selection as lax_selection
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import (array_creation, dtype_ops, joining, reductions, sorting, ufuncs,
                                util)
from justjax._src.numpy.shape_ops import (_asarray, _aval, _ndim, _shape, atleast_1d,
                                          broadcast_arrays, expand_dims, moveaxis, ravel, reshape,
                                          transpose)

__all__ = ["argwhere", "choose", "clip", "compress", "extract", "flatnonzero", "nonzero",
           "piecewise", "select", "where"]


# ---------------------------------------------------------------------------------------------
# where, select, piecewise, clip, choose, compress.

def where(condition: Any, x: Any = None, y: Any = None, /, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """`x` where `condition` else `y` (StableHLO `select`); with one argument, `nonzero`."""
    if x is None and y is None:
        util.check_arraylike("where", condition)
        return nonzero(condition, size=size, fill_value=fill_value)
    util.check_arraylike("where", condition, x, y)
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where "
                         "function.")
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         f"to jax.numpy.where, got {x} and {y}.")
    return util.where(condition, x, y)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """The first choice whose condition holds, elementwise; `default` where none does."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist "
                         f"({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    util.check_arraylike("select", *condlist, *choicelist, default)
    condlist = [array_creation.asarray(c) for c in condlist]
    choicelist = [array_creation.asarray(c) for c in choicelist]
    default = array_creation.asarray(default)
    # The default goes first with a False condition: argmax picks index 0 when nothing holds.
    choices = util.promote_dtypes(default, *choicelist)
    conditions = joining.stack(broadcast_arrays(False, *condlist))
    idx = reductions.argmax(dtype_ops.astype(conditions, bool), axis=0)
    return lax_selection.select_n(*broadcast_arrays(idx, *choices))


def piecewise(x: Any, condlist: Any, funclist: list[Any], *args: Any, **kw: Any) -> Any:
    """Evaluates the function (or constant) of the last true condition at each element.

    Every function runs on the whole array and the results are selected elementwise (JAX
    vectorizes a `switch`, which gives the same values for pure functions).
    """
    x_arr = util.ensure_arraylike("piecewise", x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = funclist[-1:] + funclist[:-1]
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc+1} functions are "
                         f"expected; got {nf}")
    conds = array_creation.asarray(condlist, dtype=bool)
    indices = reductions.argmax(reductions.cumsum(
        joining.concatenate([array_creation.zeros_like(conds[:1]), conds], 0), 0), 0)
    dtype = _aval(x_arr).dtype
    branches = []
    for f in funclist:
        value = f(x_arr, *args, **kw) if callable(f) else array_creation.array(f, dtype=dtype)
        branches.append(util.broadcast_to(dtype_ops.astype(value, dtype), _shape(x_arr)))
    return lax_selection.select_n(lax_struct.convert_element_type(indices, np.int32), *branches)


@util.jitted_as_in_jax
def clip(arr: Any = None, /, min: Any = None, max: Any = None) -> Any:
    """Limits values to [min, max] (either bound may be None)."""
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    util.check_arraylike("clip", arr)
    if any(dtype_ops.iscomplexobj(t) for t in (arr, min, max)):
        raise ValueError(
            "Clip received a complex value either through the input or the min/max keywords. "
            "Complex values have no ordering and cannot be clipped. Please convert to a real "
            "value or array by taking the real or imaginary components via jax.numpy.real/imag "
            "respectively.")
    if min is not None:
        arr = ufuncs.maximum(min, arr)
    if max is not None:
        arr = ufuncs.minimum(max, arr)
    return _asarray(arr)


def _sparse_indices(shape: tuple[int, ...]) -> tuple[Any, ...]:
    n = len(shape)
    out = []
    for i, dim in enumerate(shape):
        idx = lax_struct.iota(dtypes.default_int_dtype(), dim)
        out.append(lax_struct.broadcast_in_dim(idx, (1,) * i + (dim,) + (1,) * (n - i - 1), (i,)))
    return tuple(out)


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Builds an array from `choices[a[i]][i]`; `mode` 'raise' (concrete only), 'wrap', 'clip'."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    util.check_arraylike("choose", a, *choices)
    a, *choices = (_asarray(c) for c in (a, *choices))
    if not dtypes.is_int(_aval(a).dtype):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        arr = core.concrete_or_error(
            _asarray, a, "The error occurred because jnp.choose was jit-compiled with "
            "mode='raise'. Use mode='wrap' or mode='clip' instead.")
        if bool(reductions.any((arr < 0) | (arr >= n))):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        arr = a % n
    elif mode == "clip":
        arr = clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arr, *choices = broadcast_arrays(arr, *choices)
    return array_creation.array(choices)[(arr,) + _sparse_indices(_shape(arr))]


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: None = None) -> Any:
    """The slices of `a` along `axis` where `condition` holds (static `size` when traced)."""
    condition, a, fill_value = util.ensure_arraylike("compress", condition, a, fill_value)
    condition_arr = dtype_ops.astype(_asarray(condition), bool)
    arr = _asarray(a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if _ndim(condition_arr) != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        axis = 0
        arr = ravel(arr)
    else:
        arr = moveaxis(arr, axis, 0)
    n = _shape(arr)[0]
    condition_arr, extra = condition_arr[:n], condition_arr[n:]
    arr = arr[:_shape(condition_arr)[0]]
    if size is None:
        if bool(reductions.any(extra)):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[condition_arr]
    elif not 0 <= size <= _shape(arr)[0]:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got size={size} for a.shape[axis]={_shape(arr)[0]}")
    else:
        mask = expand_dims(condition_arr, tuple(range(1, _ndim(arr))))
        arr = where(mask, arr, array_creation.array(fill_value, dtype=_aval(arr).dtype))
        order = sorting.argsort(condition_arr, stable=True, descending=True)
        result = arr[order][:size]
    return moveaxis(result, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The elements of `arr` where `condition` is true, flattened."""
    util.check_arraylike("extreact", condition, arr, fill_value)
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


# ---------------------------------------------------------------------------------------------
# nonzero and friends.

def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """Indices of the nonzero elements, one array per axis.

    The output size must be static: without `size` the input must be concrete; with it the
    result is padded with `fill_value` (default 0) or truncated.
    """
    arr = util.ensure_arraylike("nonzero", a)
    if _ndim(arr) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. "
                         "Use jnp.atleast_1d(scalar).nonzero() instead.")
    mask = arr if _aval(arr).dtype == dtypes.bool_ else (arr != 0)
    calculated = reductions.sum(mask) if size is None else size
    calculated = core.concrete_or_error(
        operator.index, calculated,
        "The size argument of jnp.nonzero must be statically specified to use jnp.nonzero "
        "within JAX transformations.")
    int_dtype = dtypes.default_int_dtype()
    if _aval(arr).size == 0 or calculated == 0:
        return tuple(array_creation.zeros(calculated, int_dtype) for _ in _shape(arr))
    flat_indices = reductions.cumsum(_bincount(reductions.cumsum(mask), calculated))
    arr_shape = _shape(arr)
    strides = (np.cumprod(arr_shape[::-1])[::-1] // arr_shape).astype(_aval(flat_indices).dtype)
    out = tuple((flat_indices // stride) % dim
                for stride, dim in zip(strides, arr_shape, strict=True))
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else _ndim(arr) * (fill_value,)
        if any(np.shape(v) != () for v in fills):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {_ndim(arr)}; "
                             f"got {fill_value}")
        if len(fills) != len(out):
            raise ValueError(f"safe_zip() argument 1 has length {len(out)} but argument 0 has "
                             f"length {len(fills)}. All lengths: {(len(fills), len(out))}")
        fill_mask = array_creation.arange(calculated) >= reductions.sum(mask)
        out = tuple(where(fill_mask, v, entry) for v, entry in zip(fills, out, strict=True))
    return out


def _bincount(x: Any, length: int) -> Any:
    """Counts of each value of integer `x` below `length` (a scatter-add, as jnp.bincount)."""
    ones = np.array(1, dtype=dtypes.default_int_dtype())
    return array_creation.zeros(length, ones.dtype).at[clip(x, 0)].add(ones, mode="drop")


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the nonzero elements of the flattened array."""
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the nonzero elements as an (N, ndim) array."""
    a = util.ensure_arraylike("argwhere", a)
    result = transpose(joining.vstack(nonzero(atleast_1d(a), size=size, fill_value=fill_value)))
    if _ndim(a) == 0:
        return reshape(result[:0], (_shape(result)[0], 0))
    return reshape(result, (_shape(result)[0], _ndim(a)))
