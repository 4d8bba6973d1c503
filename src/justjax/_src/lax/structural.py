"""Structural primitives every library function needs: conversion, broadcasting, reshaping,
transposition, iota, concatenation, copy and stop_gradient. The selection primitives
(`select_n`, `clamp`) are in `selection.py`."""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.numerics.conversions import convert_values
from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import JaxprEqn, PrettyContext, pp_eqn_default, pp_eqn_rules
from justjax._src.hlo.ir import Builder, TensorType, Value
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.interpreters.lowering import LoweringRuleContext
from justjax._src.lax import sharding_rules, utils
from justjax._src.lax.utils import standard_primitive
from justjax._src.runtime.array import Array, from_numpy, place, to_numpy

__all__ = [
    "bitcast_convert_type", "bitcast_convert_type_p", "broadcast", "broadcast_in_dim",
    "broadcast_in_dim_p", "broadcast_to_rank", "broadcasted_iota", "collapse", "concatenate",
    "concatenate_p", "convert_element_type", "convert_element_type_p", "copy", "copy_p",
    "expand_dims", "iota", "iota_p", "reshape", "reshape_p", "squeeze", "squeeze_p",
    "stop_gradient", "stop_gradient_p", "transpose", "transpose_p",
]


def _pp_without(*hidden: str, hide_if_empty: Sequence[str] = ()) -> Callable:
    def rule(eqn: JaxprEqn, context: PrettyContext) -> Any:
        params = {k: v for k, v in eqn.params.items()
                  if k not in hidden and not (k in hide_if_empty and v == ())}
        return pp_eqn_default(eqn, context, params)
    return rule


# -- convert_element_type ----------------------------------------------------------------------

convert_element_type_p = Primitive("convert_element_type")


def _convert_abstract(x: ShapedArray, *, new_dtype: np.dtype, weak_type: bool,
                      sharding: Any = None) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type,
                       sharding=sharding_rules.param_type_sharding(sharding, x.ndim))


def _convert_impl(x: Any, *, new_dtype: np.dtype, weak_type: bool, sharding: Any = None) -> Array:
    aval = core.get_aval(x)
    value = to_numpy(x, aval.dtype, elementwise=True)
    if dtypes.is_complex(aval.dtype) and not dtypes.is_complex(new_dtype):
        # As the lowering: the real part, even for bool (`real(z) != 0`, not `z != 0`).
        value = np.real(value)
    out = from_numpy(convert_values(value, np.dtype(new_dtype)),
                     ShapedArray(aval.shape, new_dtype, weak_type))
    if type(x) is Array and (x._sharding is not None or x.committed):
        return place(out, x.sharding)  # laid out as its operand, as JAX's conversion
    return out


def _fold_scalar_convert(args: Sequence[Any], params: dict) -> Any:
    """Converts scalar constants at trace time instead of staging an equation (as JAX)."""
    operand, = args
    if np.shape(operand) != ():
        return None
    return _convert_impl(operand, **params)


convert_element_type_p.def_abstract_eval(_convert_abstract)
sharding_rules.register(convert_element_type_p,
                        sharding_rules.params_sharding_or("sharding", sharding_rules.same_as(0)))
convert_element_type_p.def_impl(_convert_impl)
staging.const_fold_rules[convert_element_type_p] = _fold_scalar_convert


class LayoutAnnotation:
    """A `sharding` for convert_element_type that names a layout rather than devices, as
    JAX's Jacobians annotate their standard basis. It changes no value and no type's split;
    like JAX's forwarding rule, which keeps a conversion that names a sharding other than
    its operand's, it keeps the equation staged."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"LayoutAnnotation({self.name})"


def _forward_same_type_convert(args: Sequence[Any], params: dict) -> Any:
    operand, = args
    aval = core.get_aval(operand)
    if isinstance(operand, core.Tracer) and aval.dtype == params["new_dtype"] and \
            aval.weak_type == params["weak_type"] and params.get("sharding") is None:
        return operand
    return None


staging.forwarding_rules[convert_element_type_p] = _forward_same_type_convert
pp_eqn_rules[convert_element_type_p] = _pp_without("sharding")


def _convert_jvp(tangent: Any, ans: Any, operand: Any, *, new_dtype: np.dtype,
                 weak_type: bool, sharding: Any = None) -> Any:
    # Integer/bool results have float0 tangents: the derivative is a symbolic zero.
    tangent_dtype = ad.tangent_aval(ShapedArray((), new_dtype)).dtype
    if tangent_dtype == dtypes.float0:
        return ad.Zero.from_primal_value(ans)
    return convert_element_type_p.bind(tangent, new_dtype=tangent_dtype, weak_type=weak_type,
                                       sharding=sharding)


def _convert_transpose(ct: Any, operand: Any, *, new_dtype: np.dtype, weak_type: bool,
                       sharding: Any = None) -> list[Any]:
    # Converting back to the operand's type; complex <- real puts the cotangent in the real
    # part, real <- complex drops the imaginary part, exactly as the forward conversions.
    aval = operand.aval
    if type(ct) is ad.Zero:
        return [ad.Zero(aval)]
    if not dtypes.is_inexact(aval.dtype):
        return [ad.Zero(ad.tangent_aval(aval))]
    return [convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type,
                                        sharding=None)]


ad.defjvp2(convert_element_type_p, _convert_jvp)
ad.primitive_transposes[convert_element_type_p] = _convert_transpose


def _convert_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                        dims: Sequence[int | None], **params: Any) -> tuple[Any, int | None]:
    operand, = vals
    bdim, = dims
    return convert_element_type_p.bind(operand, **params), bdim


batching.primitive_batchers[convert_element_type_p] = _convert_batch_rule


def convert_hlo(b: Builder, x: Value, dtype: Any) -> Value:
    """`stablehlo.convert` of `x` to `dtype`, a cast to bool being `x != 0` first (as JAX's
    `mlir.convert_hlo`; StableHLO's own bool conversion would truncate integers)."""
    dtype = np.dtype(dtype)
    if dtype == dtypes.bool_:
        zero = lowering.constant(b, 0, x.type.dtype)
        x = lowering.compare(b, x, lowering.broadcast_in_dim(b, zero, x.type.shape, ()), "NE")
    return b.one("stablehlo.convert", [x], TensorType(x.type.shape, dtype))


def _convert_element_type_lower(ctx: LoweringRuleContext, operand: Value, *,
                                new_dtype: np.dtype, weak_type: bool,
                                sharding: Any = None) -> Value:
    """A complex operand converted to a real type loses its imaginary part first."""
    aval_in, = ctx.avals_in
    if dtypes.is_complex(aval_in.dtype) and not dtypes.is_complex(new_dtype):
        real_type = TensorType(aval_in.shape, dtypes.real_dtype(aval_in.dtype))
        operand = ctx.builder.one("stablehlo.real", [operand], real_type)
    return convert_hlo(ctx.builder, operand, lowering.aval_to_type(ctx.avals_out[0]).dtype)


lowering.register_lowering(convert_element_type_p, _convert_element_type_lower)


def convert_element_type(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """Casts `x` to `new_dtype` (StableHLO `convert`); a no-op when nothing would change."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if is_symbolic_dim(x):
        x = x.dimension_as_value()  # a symbolic dimension as a value (`dim_as_value`)
    aval = core.get_aval(x)
    if dtypes.is_extended(aval.dtype) or dtypes.is_extended(new_dtype):
        if aval.dtype == new_dtype:
            return x
        raise TypeError(f"convert_element_type does not convert between "
                        f"{dtypes.dtype_name(aval.dtype)} and {dtypes.dtype_name(new_dtype)}: "
                        "use jax.random.key_data and jax.random.wrap_key_data for key arrays.")
    if not isinstance(x, (core.Tracer, Array)):
        # Constants are converted on the host, never staged (as JAX does for literals).
        value = dtypes.coerce_to_array(x, aval.dtype) if dtypes.is_python_scalar(x) else np.asarray(x)
        return from_numpy(convert_values(value, new_dtype),
                          ShapedArray(aval.shape, new_dtype, weak_type))
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type),
                                       sharding=None)


# -- bitcast_convert_type ----------------------------------------------------------------------

def _bitcast_shape(x: ShapedArray, new_dtype: np.dtype) -> tuple[int, ...]:
    old_size, new_size = x.dtype.itemsize, np.dtype(new_dtype).itemsize
    if old_size == new_size:
        return x.shape
    if old_size > new_size:
        return (*x.shape, old_size // new_size)
    if not x.shape or x.shape[-1] != new_size // old_size:
        raise TypeError(f"Attempting to convert array of shape {x.shape} from {x.dtype} of "
                        f"size {old_size} to {np.dtype(new_dtype)} of size {new_size}, but "
                        f"the trailing dimension must be {new_size // old_size}")
    return x.shape[:-1]


bitcast_convert_type_p = standard_primitive(
    "bitcast_convert_type",
    lambda x, *, new_dtype: _bitcast_shape(x, new_dtype),
    lambda x, *, new_dtype: np.dtype(new_dtype),
    utils.never_weak, sharding_rule=sharding_rules.bitcast)
dispatch.def_backend_impl(bitcast_convert_type_p)
# Reinterpreting bits is not a smooth function of the value: a zero derivative, as in JAX.
ad.defjvp_zero(bitcast_convert_type_p)


def _bitcast_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                        dims: Sequence[int | None], *, new_dtype: np.dtype
                        ) -> tuple[Any, int]:
    """The batch axis passes through, as in JAX, except that a widening bitcast consumes
    the trailing axis: a batch axis there moves to the front first (JAX fails there)."""
    operand, = vals
    bdim, = dims
    widening = core.get_aval(operand).dtype.itemsize < np.dtype(new_dtype).itemsize
    if widening and bdim == np.ndim(operand) - 1:
        operand = batching.moveaxis(operand, bdim, 0)
        bdim = 0
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype), bdim


batching.primitive_batchers[bitcast_convert_type_p] = _bitcast_batch_rule
lowering.register_lowering(
    bitcast_convert_type_p,
    lambda ctx, x, *, new_dtype: ctx.builder.one("stablehlo.bitcast_convert", [x],
                                                 lowering.aval_to_type(ctx.avals_out[0])))


def bitcast_convert_type(x: Any, new_dtype: Any) -> Any:
    """Reinterprets the bits of `x` as `new_dtype` (StableHLO `bitcast_convert`)."""
    return bitcast_convert_type_p.bind(x, new_dtype=dtypes.canonicalize_dtype(new_dtype))


# -- broadcast_in_dim --------------------------------------------------------------------------

def _broadcast_in_dim_shape(x: ShapedArray, *, shape: tuple[int, ...],
                            broadcast_dimensions: tuple[int, ...], sharding: Any = None
                            ) -> tuple[int, ...]:
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError("broadcast_in_dim broadcast_dimensions must have length equal to "
                        f"operand ndim; got broadcast_dimensions {broadcast_dimensions} for "
                        f"operand ndim {x.ndim}.")
    if len(shape) < x.ndim:
        raise TypeError("broadcast_in_dim target broadcast shape must have equal or higher "
                        f"rank to the operand shape; got operand ndim {x.ndim} and target "
                        f"broadcast ndim {len(shape)}.")
    if not set(broadcast_dimensions) <= set(range(len(shape))):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be a subset of output "
                        f"dimensions, got {broadcast_dimensions} for operand ndim {x.ndim} and "
                        f"shape {shape}.")
    for operand_dim, out_dim in enumerate(broadcast_dimensions):
        if x.shape[operand_dim] not in (1, shape[out_dim]):
            raise TypeError(
                "broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
                "their corresponding dimensions in the target broadcast shape; got operand of "
                f"shape {x.shape}, target broadcast shape {shape}, broadcast_dimensions "
                f"{broadcast_dimensions} ")
    # Unordered dimensions are allowed (an implicit transpose), as in JAX; repeats are not.
    if len(set(broadcast_dimensions)) != len(broadcast_dimensions):
        raise TypeError("broadcast_in_dim broadcast_dimensions must not contain duplicates, "
                        f"got broadcast_dimensions {broadcast_dimensions}")
    return tuple(shape)




broadcast_in_dim_p = standard_primitive("broadcast_in_dim", _broadcast_in_dim_shape,
                                        lambda x, **_: x.dtype, utils.first_arg_weak,
                                        sharding_rule=sharding_rules.broadcast_in_dim,
                                        sharding_param="sharding")
dispatch.def_backend_impl(broadcast_in_dim_p)


def _forward_identity_broadcast(args: Sequence[Any], params: dict) -> Any:
    operand, = args
    aval = core.get_aval(operand)
    if aval.shape == params["shape"] and params["broadcast_dimensions"] == tuple(range(aval.ndim)) \
            and isinstance(operand, core.Tracer):
        return operand
    return None


staging.forwarding_rules[broadcast_in_dim_p] = _forward_identity_broadcast
pp_eqn_rules[broadcast_in_dim_p] = _pp_without("shape", "sharding",
                                               hide_if_empty=("broadcast_dimensions",))


def _broadcast_in_dim_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                          shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...],
                          sharding: Any = None) -> tuple[Any, Any]:
    operand, = primals
    tangent, = tangents
    params = dict(shape=shape, broadcast_dimensions=broadcast_dimensions, sharding=sharding)
    out = broadcast_in_dim_p.bind(operand, **params)
    if type(tangent) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, broadcast_in_dim_p.bind(tangent, **params)


def _broadcast_in_dim_transpose(ct: Any, operand: Any, *, shape: tuple[int, ...],
                                broadcast_dimensions: tuple[int, ...], sharding: Any = None
                                ) -> list[Any]:
    """Sums the cotangent over the broadcast dims; size-1 operand dims expanded by the
    broadcast are summed too and put back as size-1 dims."""
    from justjax._src.lax import reductions  # reductions imports this module
    if not ad.is_undefined_primal(operand):
        return [None]
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval)]
    unit_dims = [i for i, size in enumerate(operand.aval.shape) if size == 1]
    kept_dims = [d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims]
    summed_axes = tuple(i for i in range(len(shape)) if i not in kept_dims)
    summed = reductions.reduce_sum(ct, summed_axes)
    # The sum keeps the output's dim order; unordered broadcast_dimensions also transposed
    # the operand. (JAX's rule omits this transpose and fails on such broadcasts.)
    summed = transpose(summed, np.argsort(np.argsort(kept_dims)))
    return [expand_dims(summed, unit_dims)]


ad.primitive_jvps[broadcast_in_dim_p] = _broadcast_in_dim_jvp
ad.primitive_transposes[broadcast_in_dim_p] = _broadcast_in_dim_transpose


def _broadcast_in_dim_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                                 dims: Sequence[int | None], *, shape: tuple[int, ...],
                                 broadcast_dimensions: tuple[int, ...], sharding: Any = None
                                 ) -> tuple[Any, int]:
    """The batch axis goes first in both operand and result."""
    operand, = vals
    bdim, = dims
    size = np.shape(operand)[bdim]
    operand = batching.moveaxis(operand, bdim, 0)
    # NumPy integers, as JAX's rule builds them (they show in printed jaxprs).
    new_dims = (0,) + tuple(np.add(1, broadcast_dimensions))
    out = broadcast_in_dim_p.bind(operand, shape=(size, *shape),
                                  broadcast_dimensions=new_dims, sharding=sharding)
    return out, 0


batching.primitive_batchers[broadcast_in_dim_p] = _broadcast_in_dim_batch_rule
lowering.register_lowering(
    broadcast_in_dim_p,
    lambda ctx, x, *, shape, broadcast_dimensions, sharding=None:
        lowering.broadcast_in_dim(ctx.builder, x, shape, broadcast_dimensions))


def broadcast_in_dim(x: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    """Broadcasts `x` into `shape`, operand dim i going to `broadcast_dimensions[i]`."""
    shape = utils.as_int_tuple(shape, "broadcast_in_dim shape")
    broadcast_dimensions = utils.as_int_tuple(broadcast_dimensions, "broadcast_dimensions")
    aval = core.get_aval(x)
    # Only rank-0 to rank-0 is a no-op, exactly where JAX skips the equation.
    if aval.ndim == len(shape) == 0 and isinstance(x, (core.Tracer, Array)):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=broadcast_dimensions,
                                   sharding=None)


def broadcast(x: Any, sizes: Sequence[int]) -> Any:
    """Adds leading dimensions of the given sizes."""
    aval = core.get_aval(x)
    sizes = tuple(sizes)
    dims = tuple(range(len(sizes), len(sizes) + aval.ndim))
    return broadcast_in_dim(x, sizes + aval.shape, dims)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    aval = core.get_aval(x)
    if aval.ndim >= rank:
        return x
    return broadcast(x, (1,) * (rank - aval.ndim))


def expand_dims(x: Any, dimensions: Sequence[int]) -> Any:
    """Inserts size-1 dimensions at `dimensions` (positions in the result)."""
    if not dimensions and isinstance(x, (core.Tracer, Array)):
        return x
    aval = core.get_aval(x)
    ndim_out = aval.ndim + len(dimensions)
    dims = sorted(utils.canonical_axis(d, ndim_out, "expand_dims") for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in expand_dims: {tuple(dimensions)}")
    shape = list(aval.shape)
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(ndim_out) if i not in dims)
    return broadcast_in_dim(x, tuple(shape), kept)


# -- reshape -----------------------------------------------------------------------------------

def _reshape_shape(x: ShapedArray, *, new_sizes: tuple[int, ...], dimensions: Any,
                   sharding: Any = None) -> tuple[int, ...]:
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if math.prod(new_sizes) != x.size:
        raise TypeError("reshape total size must be unchanged, got new_sizes "
                        f"{new_sizes} (of total size {math.prod(new_sizes)}) for shape "
                        f"{x.shape} (of total size {x.size}).")
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(f"reshape dimensions must be a permutation of operand dimensions, "
                        f"got dimensions {dimensions} for shape {x.shape}.")
    return tuple(new_sizes)




reshape_p = standard_primitive("reshape", _reshape_shape, lambda x, **_: x.dtype,
                               utils.first_arg_weak, sharding_rule=sharding_rules.reshaped,
                               sharding_param="sharding")
dispatch.def_backend_impl(reshape_p)


def _reshape_transpose(ct: Any, operand: Any, *, new_sizes: tuple[int, ...], dimensions: Any,
                       sharding: Any = None) -> list[Any]:
    shape = operand.aval.shape
    if dimensions is None:
        return [reshape(ct, shape)]
    # Undo the reshape into the transposed shape, then the transposition.
    transposed = reshape(ct, tuple(shape[d] for d in dimensions))
    return [transpose(transposed, np.argsort(dimensions))]


ad.deflinear2(reshape_p, _reshape_transpose)


def _reshape_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                        dims: Sequence[int | None], *, new_sizes: tuple[int, ...],
                        dimensions: Any, sharding: Any = None) -> tuple[Any, int]:
    """Reshapes the examples with the batch axis moved to the front."""
    operand, = vals
    bdim, = dims
    operand = batching.moveaxis(operand, bdim, 0)
    if dimensions is not None:
        dimensions = (0,) + tuple(int(d) + 1 for d in dimensions)
    return reshape(operand, np.shape(operand)[:1] + tuple(new_sizes), dimensions), 0


batching.primitive_batchers[reshape_p] = _reshape_batch_rule


def _reshape_lower(ctx: LoweringRuleContext, x: Value, *, new_sizes: tuple[int, ...],
                   dimensions: Any, sharding: Any = None) -> Value:
    if dimensions is not None:
        x = _transpose_lower(ctx, x, permutation=dimensions)
    return ctx.builder.one("stablehlo.reshape", [x], lowering.aval_to_type(ctx.avals_out[0]))


lowering.register_lowering(reshape_p, _reshape_lower)


def collapse(x: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merges dimensions `start_dimension:stop_dimension` (a Python slice of the shape) into
    one, row-major (a `reshape`)."""
    shape = core.get_aval(x).shape
    merged = shape[start_dimension:stop_dimension]
    stop = len(shape) if stop_dimension is None else stop_dimension
    new_shape = shape[:start_dimension] + (math.prod(merged),) + shape[stop:]
    return reshape(x, new_shape)


def reshape(x: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None, *,
            out_sharding: Any = None) -> Any:
    """Reshapes `x` (row-major), after transposing by `dimensions` if given; `out_sharding`
    says how the result's type is split over Explicit mesh axes (where the operand's splits
    do not say it)."""
    new_sizes = utils.as_int_tuple(new_sizes, "reshape new_sizes")
    aval = core.get_aval(x)
    dims = None if dimensions is None else tuple(dimensions)
    if dims is not None and dims == tuple(range(aval.ndim)):
        dims = None
    sharding = sharding_rules.user_out_sharding(out_sharding)
    if aval.shape and aval.shape == new_sizes and dims is None and sharding is None and \
            isinstance(x, (core.Tracer, Array)):
        return x
    return reshape_p.bind(x, new_sizes=new_sizes, dimensions=dims, sharding=sharding)


# -- squeeze -----------------------------------------------------------------------------------

def _squeeze_shape(x: ShapedArray, *, dimensions: tuple[int, ...]) -> tuple[int, ...]:
    for d in dimensions:
        if not 0 <= d < x.ndim:
            raise ValueError(f"axis {d} is out of bounds for array of dimension {x.ndim}")
        if x.shape[d] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                             f"one, got shape={x.shape} and dimensions={dimensions}")
    return tuple(s for i, s in enumerate(x.shape) if i not in dimensions)


squeeze_p = standard_primitive("squeeze", _squeeze_shape, lambda x, **_: x.dtype,
                               utils.first_arg_weak, sharding_rule=sharding_rules.squeezed)
dispatch.def_backend_impl(squeeze_p)
ad.deflinear2(squeeze_p, lambda ct, operand, *, dimensions: [expand_dims(ct, dimensions)])


def _squeeze_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                        dims: Sequence[int | None], *, dimensions: tuple[int, ...]
                        ) -> tuple[Any, int]:
    operand, = vals
    bdim, = dims
    operand = batching.moveaxis(operand, bdim, 0)
    return squeeze(operand, tuple(int(d) + 1 for d in dimensions)), 0


batching.primitive_batchers[squeeze_p] = _squeeze_batch_rule
lowering.register_lowering(
    squeeze_p, lambda ctx, x, *, dimensions: ctx.builder.one(
        "stablehlo.reshape", [x], lowering.aval_to_type(ctx.avals_out[0])))


def squeeze(x: Any, dimensions: Sequence[int]) -> Any:
    """Removes the given size-1 dimensions."""
    aval = core.get_aval(x)
    dims = tuple(sorted(utils.canonical_axis(d, aval.ndim, "squeeze") for d in dimensions))
    if not dims and isinstance(x, (core.Tracer, Array)):
        return x
    return squeeze_p.bind(x, dimensions=dims)


# -- transpose ---------------------------------------------------------------------------------

def _transpose_shape(x: ShapedArray, *, permutation: tuple[int, ...]) -> tuple[int, ...]:
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {x.shape}.")
    return tuple(x.shape[p] for p in permutation)


transpose_p = standard_primitive("transpose", _transpose_shape, lambda x, **_: x.dtype,
                                 utils.first_arg_weak, sharding_rule=sharding_rules.transposed)
dispatch.def_backend_impl(transpose_p)
ad.deflinear2(transpose_p,
              lambda ct, operand, *, permutation: [transpose(ct, np.argsort(permutation))])


def _transpose_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                          dims: Sequence[int | None], *, permutation: tuple[int, ...]
                          ) -> tuple[Any, int]:
    """One transpose that also brings the batch axis to the front."""
    operand, = vals
    bdim, = dims
    perm = (bdim, *(p if p < bdim else p + 1 for p in permutation))
    return transpose(operand, perm), 0


batching.primitive_batchers[transpose_p] = _transpose_batch_rule


def _transpose_lower(ctx: LoweringRuleContext, x: Value, *,
                     permutation: Sequence[int]) -> Value:
    permutation = tuple(int(p) for p in permutation)
    shape = tuple(x.type.shape[p] for p in permutation)
    return ctx.builder.one("stablehlo.transpose", [x], TensorType(shape, x.type.dtype),
                           permutation=permutation)


lowering.register_lowering(transpose_p, _transpose_lower)


def transpose(x: Any, permutation: Sequence[int]) -> Any:
    """Permutes the dimensions of `x` (StableHLO `transpose`)."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))) and isinstance(x, (core.Tracer, Array)):
        return x
    return transpose_p.bind(x, permutation=permutation)


# -- iota --------------------------------------------------------------------------------------

iota_p = Primitive("iota")


def _iota_abstract(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int,
                   sharding: Any = None) -> ShapedArray:
    if np.dtype(dtype) == dtypes.bool_ or np.dtype(dtype) not in dtypes.ALL_TYPES:
        raise TypeError(f"iota does not accept dtype {dtypes.dtype_name(dtype)}. Accepted "
                        "dtypes are subtypes of integer, floating, complexfloating.")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension must be between 0 and len(shape), got "
                         f"dimension={dimension} for shape {shape}")
    return ShapedArray(shape, dtype,
                       sharding=sharding_rules.param_type_sharding(sharding, len(shape)))




iota_p.def_abstract_eval(_iota_abstract)
dispatch.def_backend_impl(iota_p)
# iota has no operands, so it never meets a tangent; the rule only records that its output
# is a constant (JAX registers none).
ad.defjvp_zero(iota_p)
lowering.register_lowering(
    iota_p, lambda ctx, *, dtype, shape, dimension, sharding=None: ctx.builder.one(
        "stablehlo.iota", [], lowering.aval_to_type(ctx.avals_out[0]),
        iota_dimension=int(dimension)))


def iota(dtype: Any, size: int) -> Any:
    """`[0, 1, ..., size - 1]` of `dtype`."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """Counts along `dimension` of an array of `shape`."""
    if any(isinstance(d, core.Tracer) for d in shape):
        shape = utils.as_int_tuple(shape, "iota shape")  # a concretization error
    else:
        shape = core.canonicalize_shape(shape)
    return iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=shape,
                       dimension=int(dimension), sharding=None)


# -- concatenate -------------------------------------------------------------------------------

def _concatenate_shape(*operands: ShapedArray, dimension: int) -> tuple[int, ...]:
    if not operands:
        raise TypeError("concatenate expects at least one operand, got 0.")
    first = operands[0]
    if not 0 <= dimension < first.ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                        f"shapes {', '.join(str(o.shape) for o in operands)}.")
    if any(op.ndim != first.ndim for op in operands[1:]):
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(str(o.shape) for o in operands)}.")
    for op in operands[1:]:
        if any(a != b for i, (a, b) in enumerate(zip(op.shape, first.shape))
                                        if i != dimension):
            raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions "
                            f"other than the one being concatenated: concatenating along "
                            f"dimension {dimension} for shapes "
                            f"{', '.join(str(o.shape) for o in operands)}.")
    shape = list(first.shape)
    shape[dimension] = sum(o.shape[dimension] for o in operands)
    return tuple(shape)


def _concatenate_dtype(*operands: ShapedArray, dimension: int) -> np.dtype:
    utils.check_same_dtypes("concatenate", *operands)
    return operands[0].dtype


concatenate_p = standard_primitive("concatenate", _concatenate_shape, _concatenate_dtype,
                                   sharding_rule=sharding_rules.concatenated)
dispatch.def_backend_impl(concatenate_p)
core.joins_varying.add(concatenate_p)


def _concatenate_transpose(ct: Any, *operands: Any, dimension: int) -> list[Any]:
    """The cotangent split back into the operands' pieces (one `split` for all of them)."""
    from justjax._src.lax import joining  # joining imports this module
    shapes = [op.aval.shape if ad.is_undefined_primal(op) else core.get_aval(op).shape
              for op in operands]
    sizes = tuple(shape[dimension] for shape in shapes)
    return joining.split(ct, sizes, axis=dimension)


ad.deflinear2(concatenate_p, _concatenate_transpose)


def _concatenate_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                            dims: Sequence[int | None], *, dimension: int) -> tuple[Any, int]:
    """Concatenates along dimension + 1 with every operand batched at the front."""
    size = axis_data.size
    operands = [broadcast(op, (size,)) if d is None else batching.moveaxis(op, d, 0)
                for op, d in zip(vals, dims, strict=True)]
    return concatenate_p.bind(*operands, dimension=dimension + 1), 0


batching.primitive_batchers[concatenate_p] = _concatenate_batch_rule


def concatenate_hlo(b: Builder, xs: Sequence[Value], dimension: int) -> Value:
    """`stablehlo.concatenate` of `xs`, as a tree of at most 16 operands per op (JAX's
    workaround for slow compiles of wide concatenations)."""
    xs = list(xs)
    while len(xs) > 1:
        xs = [_concatenate_op(b, xs[i:i + 16], dimension) for i in range(0, len(xs), 16)]
    return xs[0]


def _concatenate_op(b: Builder, xs: Sequence[Value], dimension: int) -> Value:
    shape = list(xs[0].type.shape)
    shape[dimension] = sum(x.type.shape[dimension] for x in xs)
    return b.one("stablehlo.concatenate", list(xs), TensorType(shape, xs[0].type.dtype),
                 dimension=int(dimension))


lowering.register_lowering(
    concatenate_p, lambda ctx, *xs, dimension: concatenate_hlo(ctx.builder, xs, dimension))


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Joins arrays along `dimension` (StableHLO `concatenate`)."""
    operands = list(operands)
    if len(operands) == 1 and isinstance(operands[0], (core.Tracer, Array)):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


# -- copy and stop_gradient --------------------------------------------------------------------

copy_p = standard_primitive("copy", lambda x: x.shape, lambda x: x.dtype, utils.first_arg_weak,
                            sharding_rule=sharding_rules.same_as(0))
dispatch.def_backend_impl(copy_p)

ad.deflinear(copy_p, lambda ct: [copy_p.bind(ct)])
batching.defvectorized(copy_p)

stop_gradient_p = standard_primitive("stop_gradient", lambda x: x.shape, lambda x: x.dtype,
                                     utils.first_arg_weak,
                                     sharding_rule=sharding_rules.same_as(0))
dispatch.def_backend_impl(stop_gradient_p)


def _stop_gradient_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    x, = primals
    # Rebinding (rather than returning x) stops outer differentiation levels too.
    return stop_gradient(x), ad.Zero.from_primal_value(x)


ad.primitive_jvps[stop_gradient_p] = _stop_gradient_jvp


def _stop_gradient_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                              dims: Sequence[int | None]) -> tuple[Any, int | None]:
    x, = vals
    bdim, = dims
    return stop_gradient(x), bdim


batching.primitive_batchers[stop_gradient_p] = _stop_gradient_batch_rule
# Both are the identity once compiled.
lowering.register_lowering(copy_p, lambda ctx, x: x)
lowering.register_lowering(stop_gradient_p, lambda ctx, x: x)


def copy(x: Any) -> Any:
    return copy_p.bind(x)


def stop_gradient(x: Any) -> Any:
    """Identity whose gradient is zero, on every leaf of a pytree.

    Integer and boolean leaves pass through unchanged (they have no gradient to stop).
    """
    def stop(leaf: Any) -> Any:
        if dtypes.is_inexact(core.get_aval(leaf).dtype):
            return stop_gradient_p.bind(leaf)
        return leaf
    return tree_util.tree_map(stop, x)


def _zeros_of_aval(aval: ShapedArray) -> Any:
    # What JAX stages for a zero tangent that must exist: `broadcast_in_dim 0.0:f32[]`, the
    # zero keeping the value's weak type.
    if aval.dtype == dtypes.float0:
        zero = np.zeros((), aval.dtype)
    else:
        zero = convert_element_type(0, aval.dtype, weak_type=aval.weak_type)
    if not aval.shape:
        return zero
    return broadcast_in_dim(zero, aval.shape, ())


ad.zeros_builder = _zeros_of_aval


# The batch-axis moves vmap's rules share (`batching.moveaxis`, `batching.broadcast`) bind
# these directly, so parameters keep the integer types the rules built, as JAX's do.
batching.register_array_ops(
    transpose=lambda x, perm: transpose_p.bind(x, permutation=tuple(perm)),
    broadcast_in_dim=lambda x, shape, dims: broadcast_in_dim_p.bind(
        x, shape=tuple(shape), broadcast_dimensions=tuple(dims), sharding=None))
