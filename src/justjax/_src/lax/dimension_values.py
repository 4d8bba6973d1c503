"""`dim_as_value`: a symbolic dimension used as a value (`jnp.mean`'s divisor, `b * 2.0`).

`core/shape_poly.py` defines the expressions; this module gives them a value in traced
programs: `DimExpr.__jax_array__()` binds `dim_as_value[dim=b]`, an int32 (int64 under x64)
scalar that lowers to the expression computed from the dimension values of the function
(`lowering_poly`). Symbolic dimensions only exist while tracing, so there is no eager
implementation, as in JAX.
"""
from __future__ import annotations

from typing import Any

from justjax._src.core import core, shape_poly
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.interpreters import ad, lowering, lowering_poly

__all__ = ["dim_as_value_p", "dimension_as_value"]

dim_as_value_p = Primitive("dim_as_value")


def _dim_aval(_: Any = None) -> ShapedArray:
    return ShapedArray((), lowering_poly.dim_dtype())


def _dim_as_value_abstract(*, dim: Any) -> ShapedArray:
    return _dim_aval()


def _dim_as_value_impl(*, dim: Any) -> Any:
    raise NotImplementedError(
        "Evaluation rule for 'dim_as_value' is not implemented. It seems that you are using "
        "shape polymorphism outside jax.export.")


def dimension_as_value(d: Any) -> Any:
    """`d` as a value: itself if an int, else a traced `dim_as_value` scalar."""
    if not shape_poly.is_symbolic_dim(d):
        return d
    return dim_as_value_p.bind(dim=d)


dim_as_value_p.def_abstract_eval(_dim_as_value_abstract)
core.impl_rules[dim_as_value_p] = _dim_as_value_impl
ad.defjvp_zero(dim_as_value_p)
lowering.register_lowering(
    dim_as_value_p, lambda ctx, *, dim: lowering_poly.dim_value(
        ctx.builder, ctx.dim_var_values, dim))
shape_poly.dim_as_value_hook = dimension_as_value
core.pytype_aval_mappings[shape_poly.DimExpr] = _dim_aval
