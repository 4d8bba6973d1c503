"""`jax.scipy.fft`: the discrete cosine transform (type 2) and its inverse.

JAX 0.10.2 implements DCT type 2 only (other types raise NotImplementedError) with norm
None / "backward" or "ortho". The DCT of length N is computed with one complex FFT of the
same length (Makhoul's method): reorder the input as `v = [x0, x2, x4, ..., x5, x3, x1]`,
then `y_k = 2 Re(exp(-i pi k / 2N) * fft(v)_k)`. The inverse runs the same steps backwards.
A complex input is transformed as its real and imaginary parts. Several axes are transformed
one after the other (the transform is separable).
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from justjax._src.core import core, dtypes
from justjax._src.lax import elementwise as lax_elt
from justjax._src.lax import creation, slicing, structural
from justjax._src.numpy import array_creation, ufuncs, util
from justjax._src.numpy import fft as jnp_fft

__all__ = ["dct", "dctn", "idct", "idctn"]


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _check_args(name: str, type: int, norm: str | None) -> None:
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")


def _resize(x: Any, n: int | None, axis: int) -> Any:
    """`x` zero-padded (or cropped) to length `n` along `axis`."""
    if n is None:
        return x
    config = [(0, n - _shape(x)[axis] if a == axis else 0, 0) for a in range(len(_shape(x)))]
    return slicing.pad(x, array_creation.array(0, core.get_aval(x).dtype), config)


def _along(values: Any, axis: int, ndim: int) -> Any:
    """A vector broadcastable along `axis` of a rank-`ndim` array."""
    return structural.expand_dims(values, tuple(a for a in range(ndim) if a != axis))


def _twiddle(n: int, k: Any, sign: float) -> Any:
    """`exp(sign * i pi k / 2n)` in the complex type of `k`."""
    n_arr, k = util.promote_dtypes_complex(n, k)
    return ufuncs.exp(sign * 0.5j * np.pi * k / n_arr)


def _ortho_scale(x: Any, axis: int) -> Any:
    """`x` divided by `sqrt(4N)` at index 0 and by `sqrt(2N)` elsewhere along `axis`: the
    DCT's orthonormal scaling."""
    size = _shape(x)[axis]
    dtype = core.get_aval(x).dtype
    factor = structural.concatenate([creation.full((1,), 4, dtype),
                                     creation.full((size - 1,), 2, dtype)], 0)
    factor = _along(factor, axis, len(_shape(x)))
    return x / lax_elt.sqrt(factor * size)


def _interleave(x: Any, axis: int) -> Any:
    """The even-indexed entries along `axis`, then the odd-indexed ones reversed."""
    evens = slicing.slice_in_dim(x, None, None, 2, axis)
    odds = slicing.rev(slicing.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return structural.concatenate([evens, odds], axis)


def _deinterleave(x: Any, axis: int) -> Any:
    """The inverse of `_interleave`: the first ceil(N/2) entries go to the even positions,
    the rest, reversed, to the odd ones."""
    size = _shape(x)[axis]
    half = (size + 1) // 2
    firsts = slicing.slice_in_dim(x, 0, half, 1, axis)
    lasts = slicing.rev(slicing.slice_in_dim(x, half, size, 1, axis), (axis,))
    out = array_creation.zeros(_shape(x), dtype=core.get_aval(x).dtype)
    every = [slice(None)] * len(_shape(x))
    evens = tuple(slice(None, None, 2) if a == axis else s for a, s in enumerate(every))
    odds = tuple(slice(1, None, 2) if a == axis else s for a, s in enumerate(every))
    return out.at[evens].set(firsts).at[odds].set(lasts)


def _split_complex(fun: Any, x: Any, **kwargs: Any) -> Any:
    """`fun` of the real and imaginary parts of complex `x`, recombined."""
    return lax_elt.complex(fun(ufuncs.real(x), **kwargs), fun(ufuncs.imag(x), **kwargs))


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
        norm: str | None = None) -> Any:
    """The discrete cosine transform of type 2 (`scipy.fft.dct`).

    Args:
      x: the input.
      type: the DCT type; only 2 is implemented.
      n: the transform's length (zero-padding or cropping `x`); default `x`'s.
      axis: the axis to transform.
      norm: None / "backward" (unnormalized) or "ortho".
    Returns:
      The transform (a float type; complex for complex input).
    """
    x = util.ensure_arraylike("dct", x)
    _check_args("dct", type, norm)
    if dtypes.is_complex(core.get_aval(x).dtype):
        return _split_complex(dct, x, type=type, n=n, axis=axis, norm=norm)
    ndim = len(_shape(x))
    axis = util.canonicalize_axis(axis, ndim)
    x = _resize(x, n, axis)
    size = _shape(x)[axis]
    spectrum = jnp_fft.fft(_interleave(x, axis), axis=axis)
    k = _along(array_creation.arange(size, dtype=ufuncs.real(spectrum).dtype), axis, ndim)
    out = 2 * ufuncs.real(spectrum * _twiddle(size, k, -1.0))
    return _ortho_scale(out, axis) if norm == "ortho" else out


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
         norm: str | None = None) -> Any:
    """The inverse of the type-2 DCT (`scipy.fft.idct`, a scaled DCT of type 3); arguments as
    `dct`'s.

    Returns:
      `y` with `dct(y, norm=norm) == x`.
    """
    x = util.ensure_arraylike("idct", x)
    _check_args("idct", type, norm)
    if dtypes.is_complex(core.get_aval(x).dtype):
        return _split_complex(idct, x, type=type, n=n, axis=axis, norm=norm)
    ndim = len(_shape(x))
    axis = util.canonicalize_axis(axis, ndim)
    x = _resize(x, n, axis)
    size = _shape(x)[axis]
    x, = util.promote_dtypes_inexact(x)
    # Undo the forward scaling: the orthonormal one, and for "backward" the rest of the
    # sqrt(4N) / sqrt(2N) factors as well.
    if norm is None or norm == "backward":
        x = _ortho_scale(x, axis)
    x = _ortho_scale(x, axis)
    k = _along(array_creation.arange(size, dtype=core.get_aval(x).dtype), axis, ndim)
    twiddle = _twiddle(size, k, 1.0)
    x = x.astype(twiddle.dtype) * twiddle * (2 * size)
    return _deinterleave(ufuncs.real(jnp_fft.ifft(x, axis=axis)), axis)


def _sizes_and_axes(x: Any, s: Any, axes: Sequence[int] | None
                    ) -> tuple[list[int] | None, tuple[int, ...]]:
    """`s` as a list (an int is one size) and the axes it applies to, canonical."""
    ndim = len(_shape(x))
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    elif isinstance(axes, Sequence):
        axes = tuple(util.canonicalize_axis(a, ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis: {axes}")
    else:
        axes = (util.canonicalize_axis(axes, ndim),)
    return s, axes


def _transform_n(name: str, one_d: Any, x: Any, type: int, s: Any,
                 axes: Sequence[int] | None, norm: str | None) -> Any:
    x = util.ensure_arraylike(name, x)
    _check_args(name, type, norm)
    if dtypes.is_complex(core.get_aval(x).dtype):
        return lax_elt.complex(_transform_n(name, one_d, ufuncs.real(x), type, s, axes, norm),
                               _transform_n(name, one_d, ufuncs.imag(x), type, s, axes, norm))
    s, axes = _sizes_and_axes(x, s, axes)
    if s is not None:
        # As in JAX, sizes and axes pair up as far as both go.
        count = min(len(s), len(axes))
        for axis, size in zip(axes[:count], s[:count], strict=True):
            x = _resize(x, size, axis)
    for axis in axes:
        x = one_d(x, axis=axis, norm=norm)
    return x


def dctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The multidimensional type-2 DCT (`scipy.fft.dctn`).

    Args:
      x: the input.
      type: the DCT type; only 2 is implemented.
      s: the transform's length along each axis of `axes` (an int for one axis).
      axes: the axes to transform; default the last `len(s)`, or all.
      norm: None / "backward" or "ortho".
    Returns:
      The transform.
    """
    return _transform_n("dctn", dct, x, type, s, axes, norm)


def idctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The inverse of `dctn` (`scipy.fft.idctn`); arguments as `dctn`'s."""
    return _transform_n("idctn", idct, x, type, s, axes, norm)
