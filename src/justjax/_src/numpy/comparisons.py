"""jax.numpy's whole-array comparisons, written with lax: `isclose`, `allclose`, `array_equal`
and `array_equiv`.
"""
from __future__ import annotations

from typing import Any

from justjax._src.core import dtypes
from justjax._src.lax import elementwise as lax
from justjax._src.lax import structural as lax_struct
from justjax._src.numpy import array_creation, reductions, ufuncs, util
from justjax._src.numpy.shape_ops import _aval, _shape

__all__ = ["allclose", "array_equal", "array_equiv", "isclose"]


@util.jitted_as_in_jax(static_argnames=("equal_nan",))
def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Elementwise `|a - b| <= atol + rtol * |b|` (plus exact equality, e.g. of infinities)."""
    a, b = util.promote_args("isclose", a, b)
    a, b = util.promote_args_inexact("isclose", a, b)
    dtype = dtypes.real_dtype(_aval(a).dtype)
    rtol = lax_struct.convert_element_type(rtol, dtype)
    atol = lax_struct.convert_element_type(atol, dtype)
    both_nan = ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b))
    check_fin = ufuncs.isfinite(b)
    in_range = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = ufuncs.logical_or(lax.eq(a, b), ufuncs.logical_and(check_fin, in_range))
    return ufuncs.logical_or(out, both_nan) if equal_nan else out


@util.jitted_as_in_jax(static_argnames=("equal_nan",))
def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Whether `isclose` holds everywhere."""
    util.check_arraylike("allclose", a, b)
    return reductions.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Same shape and equal elements (NaNs equal with `equal_nan`)."""
    a1, a2 = array_creation.asarray(a1), array_creation.asarray(a2)
    if _shape(a1) != _shape(a2):
        return array_creation.array(False, dtype=bool)
    eq = array_creation.asarray(a1 == a2)
    if equal_nan:
        eq = ufuncs.logical_or(eq, ufuncs.logical_and(ufuncs.isnan(a1), ufuncs.isnan(a2)))
    return reductions.all(eq)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Equal after broadcasting (False when the shapes do not broadcast)."""
    a1, a2 = array_creation.asarray(a1), array_creation.asarray(a2)
    try:
        eq = ufuncs.equal(a1, a2)
    except ValueError:
        return array_creation.array(False)
    return reductions.all(eq)
