"""jax.numpy's numerical helpers, written with lax: differences (`diff`, `ediff1d`), `gradient`,
`trapezoid`, `interp` and `polyval`.

The ones JAX wraps in `jit` are wrapped the same way (`util.jitted_as_in_jax`: same name,
static arguments and inline flag), so their jaxprs print JAX's `jit[name=...]` equations.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Sequence

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.compilation.jit import jit
from justjax._src.lax import elementwise as lax
from justjax._src.lax import slicing as lax_slicing
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import (array_creation, dtype_ops, joining, reductions, selection, sorting,
                                ufuncs, util)
from justjax._src.numpy.shape_ops import (_aval, _index_tuple, _ndim, _shape, _zeros_like_scalar,
                                          broadcast_to, moveaxis, ravel, reshape)

__all__ = ["diff", "ediff1d", "gradient", "interp", "polyval", "trapezoid", "unwrap", "vander"]


# ---------------------------------------------------------------------------------------------
# Differences.

@util.jitted_as_in_jax(static_argnames=("n", "axis"))
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The n-th discrete difference along `axis` (`!=` for booleans)."""
    arr = util.ensure_arraylike("diff", a)
    n = core.concrete_or_error(operator.index, n, "'n' argument of jnp.diff")
    axis = core.concrete_or_error(operator.index, axis, "'axis' argument of jnp.diff")
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if _ndim(arr) == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    nd = _ndim(arr)
    axis = util.canonicalize_axis(axis, nd)
    combined = []
    for extra, position in ((prepend, 0), (None, 1), (append, 2)):
        if position == 1:
            combined.append(arr)
        elif extra is not None:
            extra = util.ensure_arraylike("diff", extra)
            if not _ndim(extra):
                extra_shape = list(_shape(arr))
                extra_shape[axis] = 1
                extra = broadcast_to(extra, tuple(extra_shape))
            combined.append(extra)
    if len(combined) > 1:
        arr = joining.concatenate(combined, axis)
    upper = tuple(slice(1, None) if i == axis else slice(None) for i in range(nd))
    lower = tuple(slice(None, -1) if i == axis else slice(None) for i in range(nd))
    op = operator.ne if _aval(arr).dtype == dtypes.bool_ else operator.sub
    for _ in range(n):
        arr = op(arr[upper], arr[lower])
    return arr


@util.jitted_as_in_jax
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive elements of the flattened array, with optional ends."""
    arr = ravel(util.ensure_arraylike("ediff1d", ary))
    result = lax.sub(arr[1:], arr[:-1])
    if to_begin is not None:
        to_begin = util.ensure_arraylike("ediff1d", to_begin)
        result = joining.concatenate((ravel(dtype_ops.astype(to_begin, _aval(arr).dtype)), result))
    if to_end is not None:
        to_end = util.ensure_arraylike("ediff1d", to_end)
        result = joining.concatenate((result, ravel(dtype_ops.astype(to_end, _aval(arr).dtype))))
    return result


# ---------------------------------------------------------------------------------------------
# Gradients and integrals.

def _gradient_along_axis(a: Any, h: Any, axis: int) -> Any:
    def sliced(start: int | None, stop: int | None, x: Any = a) -> Any:
        return lax_slicing.slice_in_dim(x, start, stop, axis=axis)

    upper_edge = sliced(1, 2) - sliced(0, 1)
    lower_edge = sliced(-1, None) - sliced(-2, -1)
    if np.ndim(h) == 0:
        inner = (sliced(2, None) - sliced(None, -2)) * 0.5 / h
        lower_edge = lower_edge / h
        upper_edge = upper_edge / h
    elif np.ndim(h) == 1:
        if _shape(h)[0] != _shape(a)[axis]:
            raise ValueError("Spacing arrays must have the same length as the dimension along "
                             "which the gradient is calculated.")
        h_shape = [1] * _ndim(a)
        h_shape[axis] = _shape(h)[0]
        h = reshape(h, h_shape)
        upper_edge = upper_edge / (sliced(1, 2, h) - sliced(0, 1, h))
        lower_edge = lower_edge / (sliced(-1, None, h) - sliced(-2, -1, h))
        dx1 = sliced(1, -1, h) - sliced(0, -2, h)
        dx2 = sliced(2, None, h) - sliced(1, -1, h)
        wa = -dx2 / (dx1 * (dx1 + dx2))
        wb = (dx2 - dx1) / (dx1 * dx2)
        wc = dx1 / (dx2 * (dx1 + dx2))
        inner = wa * sliced(0, -2) + wb * sliced(1, -1) + wc * sliced(2, None)
    else:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    return joining.concatenate((upper_edge, inner, lower_edge), axis=axis)


@util.jitted_as_in_jax(static_argnames=("axis", "edge_order"))
def gradient(f: Any, *varargs: Any, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """Central differences inside, one-sided differences at the edges (second order inside,
    first order at the boundaries)."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing = util.promote_dtypes_inexact(f, *varargs)
    if axis is None:
        axes = tuple(range(_ndim(a)))
    else:
        axes = tuple(util.canonicalize_axis(i, _ndim(a)) for i in _index_tuple(axis))
    if len(axes) == 0:
        return []
    if builtins.min(s for i, s in enumerate(_shape(a)) if i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "2 elements are required.")
    if len(spacing) == 0:
        dx: list[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        dx = list(spacing) * len(axes)
    elif len(spacing) == len(axes):
        dx = list(spacing)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    grads = [_gradient_along_axis(a, h, ax) for ax, h in zip(axes, dx, strict=True)]
    return grads[0] if len(axes) == 1 else grads


@util.jitted_as_in_jax(static_argnames=("axis",))
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integral of `y` along `axis` by the trapezoidal rule (samples at `x` or spacing `dx`)."""
    if x is None:
        y_arr, = util.promote_dtypes_inexact(util.ensure_arraylike("trapezoid", y))
        dx_array = array_creation.asarray(dx)
        if _ndim(dx_array) > 0:
            dx_array = lax_struct.expand_dims(dx_array,
                                              tuple(range(_ndim(y_arr) - _ndim(dx_array))))
            dx_array = moveaxis(dx_array, axis, -1)
    else:
        y, x = util.ensure_arraylike("trapezoid", y, x)
        y_arr, x_arr = util.promote_dtypes_inexact(y, x)
        if _ndim(x_arr) == 1:
            dx_array = diff(x_arr)
        else:
            dx_array = moveaxis(diff(x_arr, axis=axis), axis, -1)
    y_arr = moveaxis(y_arr, axis, -1)
    if _ndim(dx_array) == 0 or _shape(dx_array)[-1] == 1:
        dx_reduced = dx_array if _ndim(dx_array) == 0 else dx_array[..., 0]
        return dx_reduced * (reductions.sum(y_arr, axis=-1)
                             - 0.5 * (y_arr[..., 0] + y_arr[..., -1]))
    return 0.5 * reductions.sum(dx_array * (y_arr[..., 1:] + y_arr[..., :-1]), axis=-1)


# ---------------------------------------------------------------------------------------------
# Interpolation and polynomials.

def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise-linear interpolation of the points (xp, fp) at `x`."""
    # As JAX: the bounds and period are static when they are strings or None, so the jitted
    # `_interp` traces once per such choice.
    static_argnames = []
    if isinstance(left, str) or left is None:
        static_argnames.append("left")
    if isinstance(right, str) or right is None:
        static_argnames.append("right")
    if period is None:
        static_argnames.append("period")
    jitted_interp = jit(_interp, static_argnames=static_argnames)
    return jitted_interp(x, xp, fp, left, right, period)


def _interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
            period: Any = None) -> Any:
    x, xp, fp = util.ensure_arraylike("interp", x, xp, fp)
    if _shape(xp) != _shape(fp) or _ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x_arr, xp_arr = util.promote_dtypes_inexact(x, xp)
    fp_arr, = util.promote_dtypes_inexact(fp)
    extrapolate = []
    for name, value in (("left", left), ("right", right)):
        if isinstance(value, str) and value != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but "
                             f"got: {value!r}")
        extrapolate.append(isinstance(value, str))
    if dtypes.is_complex(_aval(x_arr).dtype):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = ufuncs.abs(period)
        x_arr = x_arr % period
        xp_arr = xp_arr % period
        order = sorting.argsort(xp_arr)
        xp_arr, fp_arr = xp_arr[order], fp_arr[order]
        xp_arr = joining.concatenate([xp_arr[-1:] - period, xp_arr, xp_arr[:1] + period])
        fp_arr = joining.concatenate([fp_arr[-1:], fp_arr, fp_arr[:1]])
    i = selection.clip(sorting.searchsorted(xp_arr, x_arr, side="right"), 1, _shape(xp_arr)[0] - 1)
    df = fp_arr[i] - fp_arr[i - 1]
    dx = xp_arr[i] - xp_arr[i - 1]
    delta = x_arr - xp_arr[i - 1]
    epsilon = np.spacing(dtypes.finfo(_aval(xp_arr).dtype).eps)
    dx0 = lax.abs(dx) <= epsilon  # keeps gradients finite where dx is tiny
    f = selection.where(dx0, fp_arr[i - 1],
                        fp_arr[i - 1] + (delta / selection.where(dx0, 1, dx)) * df)
    if not extrapolate[0] and period is None:
        f = selection.where(x_arr < xp_arr[0], fp_arr[0] if left is None else left, f)
    if not extrapolate[1] and period is None:
        f = selection.where(x_arr > xp_arr[-1], fp_arr[-1] if right is None else right, f)
    return f


@util.jitted_as_in_jax(static_argnames=("unroll",))
def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial with coefficients `p` (highest degree first) at `x`, by Horner's rule.

    JAX runs the loop as a `scan` over the rows of `p`; it is unrolled here, which computes
    the same (and is what JAX itself traces under `disable_jit`).
    """
    p, x = util.ensure_arraylike("polyval", p, x)
    p_arr, x_arr = util.promote_dtypes(p, x)
    out_shape = util.broadcast_shapes(_shape(p_arr)[1:], _shape(x_arr))
    y = lax_struct.broadcast_in_dim(_zeros_like_scalar(x_arr), out_shape, ())
    for k in range(_shape(p_arr)[0]):
        coefficient = lax_slicing.index_in_dim(p_arr, k, keepdims=False)
        y = y * x_arr + coefficient
    return y


@util.jitted_as_in_jax(static_argnames=("N", "increasing"))
def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of a 1-D `x`: column j is `x ** (N - 1 - j)` (or `x ** j` when
    `increasing`)."""
    x = util.ensure_arraylike("vander", x)
    if _ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array")
    count = _shape(x)[0] if N is None else core.concrete_dim(
        N, "The error arose in jnp.vander argument `N`. ")
    if count < 0:
        raise ValueError("N must be nonnegative")
    exponents = lax_struct.iota(_aval(x).dtype, count)
    if not increasing:
        exponents = lax.sub(lax_struct.convert_element_type(count - 1, _aval(x).dtype), exponents)
    return ufuncs.power(lax_struct.expand_dims(x, (1,)), lax_struct.expand_dims(exponents, (0,)))


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """`p` with jumps larger than `discont` along `axis` removed by adding multiples of
    `period` (phase unwrapping).

    Args:
      p: the values (e.g. angles).
      discont: the largest jump kept (default `period / 2`).
      axis: the axis to unwrap along.
      period: the period of the values.
    Returns:
      The unwrapped values.
    """
    p = util.ensure_arraylike("unwrap", p)
    p, period = util.promote_dtypes(p, period)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    # Integer signals keep an integer half-period (narrow and unsigned ints unwrap exactly).
    interval = period // 2 if dtypes.issubdtype(p.dtype, np.integer) else period / 2
    dd = diff(p, axis=axis)
    ddmod = ufuncs.mod(dd + interval, period) - interval
    ddmod = selection.where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correction = selection.where(ufuncs.abs(dd) < discont, 0, ddmod - dd)
    axis = util.canonicalize_axis(axis, p.ndim)
    head = tuple(slice(None, 1) if d == axis else slice(None) for d in range(p.ndim))
    tail = tuple(slice(1, None) if d == axis else slice(None) for d in range(p.ndim))
    unwrapped = p[tail] + reductions.cumsum(correction, axis=axis)
    return joining.concatenate([p[head], unwrapped.astype(p.dtype)], axis=axis)
