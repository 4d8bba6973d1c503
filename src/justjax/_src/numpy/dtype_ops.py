"""jax.numpy's dtype conversions, written with lax: `astype`, `view` (bit reinterpretation) and
the dtype queries `iscomplexobj`/`isrealobj`.
"""
from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np

from justjax._src.core import dtypes
from justjax._src.lax import elementwise as lax
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import util
from justjax._src.numpy.shape_ops import (_asarray, _aval, _ndim, _shape, _zeros_like_scalar,
                                          reshape, squeeze, user_dtype)

__all__ = ["astype", "iscomplexobj", "isrealobj", "view"]


# ---------------------------------------------------------------------------------------------
# dtype queries.

def iscomplexobj(x: Any) -> bool:
    """Whether `x` has a complex dtype (or is a complex scalar)."""
    if isinstance(x, (builtins.complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    try:
        dtype = x.dtype
    except AttributeError:
        dtype = np.asarray(x).dtype
    return dtypes.is_complex(dtype)


def isrealobj(x: Any) -> bool:
    """Whether `x` is not of a complex type."""
    return not iscomplexobj(x)


# ---------------------------------------------------------------------------------------------
# dtype conversion and views.

def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """Casts to `dtype` (default float when None); StableHLO `convert`."""
    x_arr = util.ensure_arraylike("astype", x)
    dtype = dtypes.default_float_dtype() if dtype is None else user_dtype(dtype, "astype")
    if dtypes.is_complex(_aval(x_arr).dtype):
        if dtypes.is_int(dtype) or dtypes.is_float(dtype):
            warnings.warn("Casting from complex to real dtypes will soon raise a ValueError. "
                          "Please first use jnp.real or jnp.imag to take the real/imaginary "
                          "component of your input.", DeprecationWarning, stacklevel=2)
        elif dtype == dtypes.bool_:
            x_arr = lax.ne(x_arr, _zeros_like_scalar(x_arr))
    result = lax_struct.convert_element_type(x_arr, dtype)
    return lax_struct.copy(result) if copy else result


def view(x: Any, dtype: Any = None, type: None = None) -> Any:
    """The bits of `x` reinterpreted as `dtype`; the last axis grows or shrinks when the item
    sizes differ (StableHLO `bitcast_convert`)."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    x = _asarray(x)
    if dtype is None:
        return x
    dtype = user_dtype(dtype, "view")
    src = _aval(x).dtype
    bits_in, bits_out = src.itemsize * 8, dtype.itemsize * 8
    if _ndim(x) == 0:
        if bits_in != bits_out:
            raise ValueError("view() of a 0d array is only supported if the itemsize is "
                             "unchanged.")
        return squeeze(view(lax_struct.expand_dims(x, (0,)), dtype))
    if (_shape(x)[-1] * bits_in) % bits_out != 0:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                         "total size in bytes of the last axis of the array.")
    if src == dtype:
        return x
    if src == dtypes.bool_:
        return view(astype(x, np.uint8), dtype)
    if dtypes.is_complex(src):
        last = _ndim(x)
        parts = lax_struct.concatenate([lax_struct.expand_dims(lax.real(x), (last,)),
                                        lax_struct.expand_dims(lax.imag(x), (last,))], last)
        return view(reshape(parts, (*_shape(x)[:-1], _shape(x)[-1] * 2)), dtype)
    if dtype == dtypes.bool_:
        return astype(view(x, np.uint8), bool)
    if dtypes.is_complex(dtype):
        out = view(x, dtypes.real_dtype(dtype))
        return lax.complex(out[..., 0::2], out[..., 1::2])
    return _bitcast_view(x, dtype, bits_in, bits_out)


def _bitcast_view(x: Any, dtype: np.dtype, bits_in: int, bits_out: int) -> Any:
    s = _shape(x)
    if bits_in < bits_out:
        factor = bits_out // bits_in
        return lax_struct.bitcast_convert_type(reshape(x, (*s[:-1], s[-1] // factor, factor)),
                                               dtype)
    if bits_in > bits_out:
        out = lax_struct.bitcast_convert_type(x, dtype)
        o = _shape(out)
        return reshape(out, (*o[:-2], o[-2] * o[-1]))
    return lax_struct.bitcast_convert_type(x, dtype)
