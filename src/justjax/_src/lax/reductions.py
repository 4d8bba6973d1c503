"""Reduction primitives: the monoid reductions (`reduce_sum`, `reduce_max`, ...), the general
variadic `reduce` holding a reducer jaxpr, and `argmax`/`argmin`, each declared with its
rules; the cumulative reductions are `cumulative.py`'s.

Semantics follow XLA on CPU: max/min propagate NaN and order -0.0 below 0.0, sums start from
+0.0 (so a sum of negative zeros is +0.0), integer arithmetic wraps, complex max/min compare
(real, imag) lexicographically, and float16/bfloat16 are accumulated in float32 and rounded once.
An empty reduction gives the reducer's identity.
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.numerics import monoids, shapes
from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal, eval_jaxpr, tracing_cache
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.lax import elementwise, sharding_rules, structural, utils
from justjax._src.lax.utils import standard_primitive
from justjax._src.runtime.array import Array, from_numpy, to_numpy

__all__ = [
    "reduce", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
    "reduce_or", "reduce_xor", "argmax", "argmin",
    "reduce_p", "reduce_sum_p", "reduce_prod_p", "reduce_max_p", "reduce_min_p",
    "reduce_and_p", "reduce_or_p", "reduce_xor_p", "argmax_p", "argmin_p",
]


# -- identities ---------------------------------------------------------------------------------
# The identities of the monoids are `numerics.monoids`', shared with the passes and backends.

_max_identity = monoids.max_identity
_min_identity = monoids.min_identity
_and_identity = monoids.and_identity
_or_identity = monoids.or_identity


# -- shape and dtype rules ----------------------------------------------------------------------

def _reduce_op_shape_rule(operand: ShapedArray, *, axes: tuple[int, ...], **_: Any
                          ) -> tuple[int, ...]:
    if len(axes) != len(set(axes)):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    if not all(0 <= a < operand.ndim for a in axes):
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for {operand}.")
    return tuple(d for i, d in enumerate(operand.shape) if i not in axes)


def number_dtype_rule(name: str) -> Callable[..., np.dtype]:
    def rule(operand: ShapedArray, **_: Any) -> np.dtype:
        if not dtypes.issubdtype(operand.dtype, np.number):
            raise TypeError(f"{name} does not accept dtype {dtypes.dtype_name(operand.dtype)}. "
                            "Accepted dtypes are subtypes of number.")
        return operand.dtype
    return rule


def _input_dtype(operand: ShapedArray, **_: Any) -> np.dtype:
    return operand.dtype


def _delete_dims(shape: tuple[int, ...], dims: Sequence[int]) -> tuple[int, ...]:
    # JAX computes these shapes with np.delete, so negative dimensions are accepted here, and
    # out-of-range ones raise NumPy's IndexError; XLA rejects both later (see `_check_dims`).
    kept = np.delete(np.arange(len(shape)), list(dims))  # NumPy's checks of `dims`
    return tuple(shape[i] for i in kept)


def _reduce_logical_shape_rule(operand: ShapedArray, *, axes: tuple[int, ...]
                               ) -> tuple[int, ...]:
    if operand.dtype != np.bool_ and not dtypes.is_int(operand.dtype):
        raise TypeError("logical reduction requires operand dtype bool or int, got "
                        f"{dtypes.dtype_name(operand.dtype)}.")
    return _delete_dims(operand.shape, axes)


def _check_dims(dims: Sequence[int], ndim: int) -> None:
    """XLA's verifier checks on reduction dimensions (for primitives whose abstract evaluation,
    as in JAX, lets negative or repeated dimensions through)."""
    for d in dims:
        if not 0 <= d < ndim:
            raise ValueError(f"Out-of-bounds dimension {d}, expected to be in range [0, {ndim})")
    seen = set()
    for d in dims:
        if d in seen:
            raise ValueError(f"Duplicate reduction dimension: {d}")
        seen.add(d)


# -- helpers of the lowering rules ---------------------------------------------------------------

def scalar_type(dtype: Any) -> ir.TensorType:
    """The rank-0 tensor type of `dtype` (float0 as bool, as lowering does)."""
    return lowering.aval_to_type(ShapedArray((), np.dtype(dtype)))


def _minmax_scalar(b: ir.Builder, x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    """`maximum`/`minimum` of two values; complex ones compare (real, imag) lexicographically
    through `compare`/`select`, as JAX's `max_hlo`/`min_hlo`."""
    opcode = "stablehlo.maximum" if direction == "max" else "stablehlo.minimum"
    if not dtypes.is_complex(x.type.dtype):
        return b.one(opcode, [x, y], x.type)
    part_type = ir.TensorType(x.type.shape, np.real(np.zeros((), x.type.dtype)).dtype)
    rx = b.one("stablehlo.real", [x], part_type)
    ry = b.one("stablehlo.real", [y], part_type)
    real_eq = lowering.compare(b, rx, ry, "EQ")
    comparison = "GT" if direction == "max" else "LT"
    real_cmp = lowering.compare(b, rx, ry, comparison)
    imag_cmp = lowering.compare(b, b.one("stablehlo.imag", [x], part_type),
                                b.one("stablehlo.imag", [y], part_type), comparison)
    which = b.one("stablehlo.select", [real_eq, imag_cmp, real_cmp], real_eq.type)
    return b.one("stablehlo.select", [which, x, y], x.type)


# The monoids of the dedicated reductions: the op of their region and their identity.
MONOIDS: dict[str, tuple[Callable[[ir.Builder, ir.Value, ir.Value], ir.Value],
                         Callable[[Any], np.ndarray]]] = {
    "add": (lambda b, x, y: b.one("stablehlo.add", [x, y], x.type), _or_identity),
    "mul": (lambda b, x, y: b.one("stablehlo.multiply", [x, y], x.type),
            lambda dtype: np.ones((), dtype)),
    "max": (lambda b, x, y: _minmax_scalar(b, x, y, "max"), _max_identity),
    "min": (lambda b, x, y: _minmax_scalar(b, x, y, "min"), _min_identity),
    "and": (lambda b, x, y: b.one("stablehlo.and", [x, y], x.type), _and_identity),
    "or": (lambda b, x, y: b.one("stablehlo.or", [x, y], x.type), _or_identity),
    "xor": (lambda b, x, y: b.one("stablehlo.xor", [x, y], x.type), _or_identity),
}


def monoid_region(monoid: str, dtype: Any) -> ir.Region:
    """The region `(acc, x) -> acc <monoid> x` on scalars of `dtype`."""
    scalar = scalar_type(dtype)
    region, b = ir.new_region([scalar, scalar])
    b.ret([MONOIDS[monoid][0](b, *region.block.args)])
    return region


def jaxpr_region(ctx: lowering.LoweringRuleContext, closed: ClosedJaxpr,
                 arg_types: Sequence[ir.TensorType]) -> ir.Region:
    """A region computing `closed` (its consts as constants inside the region)."""
    region, b = ir.new_region(arg_types)
    consts = [lowering.constant(b, np.asarray(c, lowering.aval_to_type(v.aval).dtype))
              for c, v in zip(closed.consts, closed.jaxpr.constvars, strict=True)]
    outs = lowering.jaxpr_subcomp(ctx.module_context, b, closed.jaxpr, consts,
                                  region.block.args)
    b.ret(outs)
    return region


def _monoid_reduce_lowering(monoid: str) -> lowering.LoweringRule:
    """`stablehlo.reduce` whose region is the monoid, from its identity."""
    def rule(ctx: lowering.LoweringRuleContext, x: ir.Value, *, axes: tuple[int, ...],
             **_: Any) -> ir.Value:
        _check_dims(axes, ctx.avals_in[0].ndim)
        out_type = lowering.aval_to_type(ctx.avals_out[0])
        init = lowering.constant(ctx.builder, MONOIDS[monoid][1](out_type.dtype))
        return ctx.builder.op("stablehlo.reduce", [x, init], [out_type],
                              {"dimensions": tuple(int(a) for a in axes)},
                              [monoid_region(monoid, out_type.dtype)]).result
    rule.__name__ = f"_reduce_{monoid}_lowering"
    return rule


# -- the monoid reduction primitives ------------------------------------------------------------

reduce_sum_p = standard_primitive("reduce_sum", _reduce_op_shape_rule,
                                  number_dtype_rule("reduce_sum"),
                                  sharding_rule=sharding_rules.without_axes("axes"),
                                  sharding_param="out_sharding")
dispatch.def_backend_impl(reduce_sum_p)
lowering.register_lowering(reduce_sum_p, _monoid_reduce_lowering("add"))


def _reduce_sum_transpose(ct: Any, operand: Any, *, axes: tuple[int, ...], out_sharding: Any
                          ) -> list[Any]:
    # The cotangent of each summed element is the cotangent of its sum. The kept dimensions
    # are NumPy integers, as JAX computes them (they show in printed jaxprs).
    # The cotangent has the operand's type (JAX's: its splits over Explicit axes too).
    input_shape = operand.aval.shape
    kept = tuple(np.delete(np.arange(len(input_shape)), axes))
    sharding = operand.aval._sharding
    if not kept and sharding is None:
        return [structural.broadcast_in_dim(ct, input_shape, ())]
    return [structural.broadcast_in_dim_p.bind(ct, shape=input_shape, broadcast_dimensions=kept,
                                               sharding=sharding)]


ad.deflinear2(reduce_sum_p, _reduce_sum_transpose)
batching.defreducer(reduce_sum_p)

reduce_prod_p = standard_primitive("reduce_prod", _reduce_op_shape_rule,
                                   number_dtype_rule("reduce_prod"),
                                   sharding_rule=sharding_rules.without_axes("axes"))
dispatch.def_backend_impl(reduce_prod_p)
lowering.register_lowering(reduce_prod_p, _monoid_reduce_lowering("mul"))


def _reduce_prod_jvp(primals: list[Any], tangents: list[Any], *, axes: tuple[int, ...]
                     ) -> tuple[Any, Any]:
    # As JAX: a tree of multiplications, differentiated; right where elements are zero,
    # unlike dividing the product by each element.
    one = np.array(1, dtype=core.get_aval(primals[0]).dtype)
    outs, tangent_outs = reduce_tree_jvp(
        lambda x, y: [elementwise.mul(x, y)], [one], primals, tangents, axes)
    return outs[0], tangent_outs[0]


ad.primitive_jvps[reduce_prod_p] = _reduce_prod_jvp
batching.defreducer(reduce_prod_p)

reduce_max_p = standard_primitive("reduce_max", _reduce_op_shape_rule, _input_dtype,
                                  sharding_rule=sharding_rules.without_axes("axes"))
dispatch.def_backend_impl(reduce_max_p)
lowering.register_lowering(reduce_max_p, _monoid_reduce_lowering("max"))

reduce_min_p = standard_primitive("reduce_min", _reduce_op_shape_rule, _input_dtype,
                                  sharding_rule=sharding_rules.without_axes("axes"))
dispatch.def_backend_impl(reduce_min_p)
lowering.register_lowering(reduce_min_p, _monoid_reduce_lowering("min"))


def _reduce_chooser_jvp(g: Any, ans: Any, operand: Any, *, axes: tuple[int, ...]) -> Any:
    """JAX's convention for max/min: the tangent is the mean of the tangents at every
    location equal to the result (so ties share it equally)."""
    shape = tuple(1 if i in axes else d for i, d in enumerate(core.get_aval(operand).shape))
    dtype = core.get_aval(g).dtype
    location_indicators = structural.convert_element_type(
        elementwise.eq(operand, structural.reshape(ans, shape)), dtype)
    # The axes go on as given (NumPy integers after batching), as JAX's rule passes them.
    counts = reduce_sum_p.bind(location_indicators, axes=tuple(axes), out_sharding=None)
    total = reduce_sum_p.bind(elementwise.mul(g, location_indicators), axes=tuple(axes),
                              out_sharding=None)
    return elementwise.div(total, counts)


ad.defjvp2(reduce_max_p, _reduce_chooser_jvp)
ad.defjvp2(reduce_min_p, _reduce_chooser_jvp)
batching.defreducer(reduce_max_p)
batching.defreducer(reduce_min_p)

reduce_and_p = standard_primitive("reduce_and", _reduce_logical_shape_rule, _input_dtype,
                                  utils.never_weak,
                                  sharding_rule=sharding_rules.without_axes("axes"))
dispatch.def_backend_impl(reduce_and_p)
lowering.register_lowering(reduce_and_p, _monoid_reduce_lowering("and"))

reduce_or_p = standard_primitive("reduce_or", _reduce_logical_shape_rule, _input_dtype,
                                 utils.never_weak,
                                 sharding_rule=sharding_rules.without_axes("axes"))
dispatch.def_backend_impl(reduce_or_p)
lowering.register_lowering(reduce_or_p, _monoid_reduce_lowering("or"))

reduce_xor_p = standard_primitive("reduce_xor", _reduce_logical_shape_rule, _input_dtype,
                                  utils.never_weak,
                                  sharding_rule=sharding_rules.without_axes("axes"))
dispatch.def_backend_impl(reduce_xor_p)
lowering.register_lowering(reduce_xor_p, _monoid_reduce_lowering("xor"))

# Bool and integer operands have no tangents (float0).
ad.defjvp_zero(reduce_and_p)
ad.defjvp_zero(reduce_or_p)
ad.defjvp_zero(reduce_xor_p)
batching.defreducer(reduce_and_p)
batching.defreducer(reduce_or_p)
batching.defreducer(reduce_xor_p)


def _axes_tuple(axes: Sequence[int]) -> tuple[int, ...]:
    return utils.as_int_tuple(tuple(axes), "reduction axes")


def reduce_sum(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """Sum of the elements over `axes` (StableHLO `reduce` with an `add` body).

    Unlike `jnp.sum`, narrow types are not upcast for the result.

    Args:
      operand: a numeric array.
      axes: unique axes, each in `[0, operand.ndim)`.
    Returns:
      An array of `operand`'s dtype with `axes` removed from the shape.
    """
    return reduce_sum_p.bind(operand, axes=_axes_tuple(axes), out_sharding=out_sharding)


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    """Product of the elements over `axes` (StableHLO `reduce` with a `multiply` body)."""
    return reduce_prod_p.bind(operand, axes=_axes_tuple(axes))


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    """Maximum over `axes`; NaN wins (StableHLO `reduce` with a `maximum` body)."""
    return reduce_max_p.bind(operand, axes=_axes_tuple(axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    """Minimum over `axes`; NaN wins (StableHLO `reduce` with a `minimum` body)."""
    return reduce_min_p.bind(operand, axes=_axes_tuple(axes))


def reduce_and(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise AND over `axes` of a bool or integer array (StableHLO `reduce` with `and`)."""
    return reduce_and_p.bind(operand, axes=_axes_tuple(axes))


def reduce_or(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise OR over `axes` of a bool or integer array (StableHLO `reduce` with `or`)."""
    return reduce_or_p.bind(operand, axes=_axes_tuple(axes))


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise XOR over `axes` of a bool or integer array (StableHLO `reduce` with `xor`)."""
    return reduce_xor_p.bind(operand, axes=_axes_tuple(axes))


# -- argmax / argmin ----------------------------------------------------------------------------

def _argminmax_shape_rule(operand: ShapedArray, *, axes: tuple[int, ...], index_dtype: Any
                          ) -> tuple[int, ...]:
    axis, = axes
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"Invalid axis {axis} for operand shape {operand.shape}")
    if operand.shape[axis] < 1:
        raise ValueError("argmin and argmax require non-empty reduced dimension. "
                         f"operand.shape={operand.shape} axis={axis}")
    return operand.shape[:axis] + operand.shape[axis + 1:]


def _argminmax_dtype_rule(operand: ShapedArray, *, axes: tuple[int, ...], index_dtype: Any
                          ) -> np.dtype:
    if not dtypes.is_int(index_dtype):
        raise TypeError("index_dtype must be an integer type, but got "
                        f"{dtypes.dtype_name(index_dtype)}")
    return np.dtype(index_dtype)


argmax_p = standard_primitive("argmax", _argminmax_shape_rule, _argminmax_dtype_rule,
                              utils.never_weak,
                              sharding_rule=sharding_rules.without_axes("axes"))
dispatch.def_backend_impl(argmax_p)

argmin_p = standard_primitive("argmin", _argminmax_shape_rule, _argminmax_dtype_rule,
                              utils.never_weak,
                              sharding_rule=sharding_rules.without_axes("axes"))
dispatch.def_backend_impl(argmin_p)

# Integer results: zero (float0) tangents.
ad.defjvp_zero(argmax_p)
ad.defjvp_zero(argmin_p)
# The single reduced axis is renumbered around the batch axis, as for the other reductions.
batching.defreducer(argmax_p)
batching.defreducer(argmin_p)


def _argminmax_lowering(direction: str) -> lowering.LoweringRule:
    """JAX's lowering: a variadic reduce of (value, iota index) pairs taking the first
    extreme value, or the first NaN."""
    comparison = "GT" if direction == "max" else "LT"
    identity = _max_identity if direction == "max" else _min_identity

    def body(ctx: lowering.LoweringRuleContext, x: ir.Value, *, axes: tuple[int, ...],
             index_dtype: Any) -> ir.Value:
        # JAX's lowering compares with lax.gt/lt, whose dtype check rejects complex operands.
        compare_p = elementwise.gt_p if direction == "max" else elementwise.lt_p
        compare_p.abstract_eval(ctx.avals_in[0], ctx.avals_in[0])
        axis, = axes
        b = ctx.builder
        index_type = ir.TensorType(x.type.shape, np.dtype(index_dtype))
        indices = b.one("stablehlo.iota", [], index_type, iota_dimension=int(axis))
        inits = [lowering.constant(b, identity(x.type.dtype)),
                 lowering.constant(b, np.zeros((), index_dtype))]
        scalars = [v.type for v in inits]
        region, rb = ir.new_region(scalars + scalars)
        value, index, other_value, other_index = region.block.args
        pick_value = rb.one("stablehlo.or", [
            lowering.compare(rb, value, other_value, comparison),
            lowering.compare(rb, value, value, "NE")], scalar_type(np.bool_))
        pick_index = rb.one("stablehlo.or", [pick_value, rb.one("stablehlo.and", [
            lowering.compare(rb, value, other_value, "EQ"),
            lowering.compare(rb, index, other_index, "LT")], scalar_type(np.bool_))],
            scalar_type(np.bool_))
        rb.ret([rb.one("stablehlo.select", [pick_value, value, other_value], value.type),
                rb.one("stablehlo.select", [pick_index, index, other_index], index.type)])
        out_type = lowering.aval_to_type(ctx.avals_out[0])
        op = b.op("stablehlo.reduce", [x, indices, *inits],
                  [ir.TensorType(out_type.shape, x.type.dtype), out_type],
                  {"dimensions": (int(axis),)}, [region])
        return op.results[1]

    return lowering.cached_lowering(f"arg{direction}", body, multiple_results=False)


lowering.register_lowering(argmax_p, _argminmax_lowering("max"))
lowering.register_lowering(argmin_p, _argminmax_lowering("min"))


_PYTHON_TYPE_DTYPES = {bool: dtypes.bool_, int: dtypes.int64, float: dtypes.float64,
                       complex: dtypes.complex128}


def _user_index_dtype(index_dtype: Any, fun_name: str) -> np.dtype:
    """A user-given dtype checked and canonicalized as JAX does (with its x64 warning)."""
    if index_dtype is None:
        raise ValueError("dtype must be specified.")
    if isinstance(index_dtype, (Array, core.Tracer)):
        raise ValueError("Passing an array as a dtype argument is no longer supported; "
                         "instead of dtype=arr use dtype=arr.dtype.")
    if isinstance(index_dtype, type) and index_dtype in _PYTHON_TYPE_DTYPES:
        return dtypes.canonicalize_dtype(_PYTHON_TYPE_DTYPES[index_dtype])
    requested = np.dtype(index_dtype)
    if requested not in dtypes.ALL_TYPES:
        raise TypeError("JAX only supports number, bool, and string dtypes, got dtype "
                        f"{index_dtype} in {fun_name}")
    canonical = dtypes.canonicalize_dtype(requested)
    if canonical != requested:
        warnings.warn(
            f"Explicitly requested dtype {requested} requested in {fun_name} is not available, "
            f"and will be truncated to dtype {canonical.name}. To enable more dtypes, set the "
            "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
            "variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
            UserWarning, stacklevel=3)
    return canonical


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the maximum along `axis`: the first NaN if any, else the first maximal element.

    Lowers to a variadic StableHLO `reduce` over (value, iota) pairs.
    """
    index_dtype = _user_index_dtype(index_dtype, "argmax")
    return argmax_p.bind(operand, axes=(operator.index(axis),), index_dtype=index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the minimum along `axis`: the first NaN if any, else the first minimal element.

    Lowers to a variadic StableHLO `reduce` over (value, iota) pairs.
    """
    index_dtype = _user_index_dtype(index_dtype, "argmin")
    return argmin_p.bind(operand, axes=(operator.index(axis),), index_dtype=index_dtype)


# -- the general variadic reduce ----------------------------------------------------------------

def _split_half(values: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    half = len(values) // 2
    return list(values[:half]), list(values[half:])


def _reduce_abstract_eval(*avals: ShapedArray, computation: Callable, jaxpr: ClosedJaxpr,
                          dimensions: tuple[int, ...]) -> list[ShapedArray]:
    operands, inits = _split_half(avals)
    if any(a.shape != () for a in inits):
        raise ValueError(f"reduce found non-scalar initial value: {[a.shape for a in inits]}")
    shapes = [_delete_dims(op.shape, dimensions) for op in operands]
    if [op.dtype for op in operands] != [a.dtype for a in inits]:
        raise TypeError("reduce operand dtypes should match corresponding initial value "
                        f"dtypes, got operands={list(operands)} and initial_values={list(inits)}")
    out_avals = jaxpr.out_avals
    if len(out_avals) == len(inits) and any(
            (o.shape, o.dtype) != (i.shape, i.dtype)
            for o, i in zip(out_avals, inits, strict=True)):
        raise TypeError("reduce computation must return values of the initial values' types, "
                        f"got {[o.str_short() for o in out_avals]} for "
                        f"{[i.str_short() for i in inits]}")
    return [ShapedArray(shape, op.dtype, op.weak_type and init.weak_type)
            for shape, op, init in zip(shapes, operands, inits, strict=True)]


def _run_reducer(closed: ClosedJaxpr, accs: list[Any], elems: list[Any]) -> list[Any]:
    with core.set_current_trace(core.eval_trace):
        return eval_jaxpr(closed.jaxpr, closed.consts, *accs, *elems)


def _fold(closed: ClosedJaxpr, inits: list[np.ndarray], flats: list[np.ndarray],
          out_avals: Sequence[ShapedArray]) -> list[np.ndarray]:
    """Left fold `acc = reducer(acc, x_j)` from the initial values over the last axis of each
    `(M, N)` operand: vectorized over M when the reducer allows it, else element by element."""
    m, n = flats[0].shape
    if m > 1 and is_elementwise_batchable(closed, (m,)):
        accs = [np.broadcast_to(i, (m,)) for i in inits]
        for j in range(n):
            accs = _run_reducer(closed, accs, [from_numpy(f[:, j], ShapedArray((m,), f.dtype))
                                               for f in flats])
        return [np.broadcast_to(np.asarray(a), (m,)).astype(av.dtype)
                for a, av in zip(accs, out_avals, strict=True)]
    results = [np.empty((m,), av.dtype) for av in out_avals]
    for row in range(m):
        accs: list[Any] = list(inits)
        for j in range(n):
            accs = _run_reducer(closed, accs, [f[row, j] for f in flats])
        for result, acc in zip(results, accs, strict=True):
            result[row] = np.asarray(acc)
    return results


def _reduce_impl(*args: Any, computation: Callable, jaxpr: ClosedJaxpr,
                 dimensions: tuple[int, ...]) -> list[Array]:
    in_avals = [core.get_aval(a) for a in args]
    out_avals = reduce_p.abstract_eval(*in_avals, computation=computation, jaxpr=jaxpr,
                                       dimensions=dimensions)
    operand_avals, init_avals = _split_half(in_avals)
    _check_dims(dimensions, operand_avals[0].ndim)
    operands, inits = _split_half([to_numpy(a, av.dtype)
                                   for a, av in zip(args, in_avals, strict=True)])
    if not dimensions:
        # XLA turns a reduction over no dimensions into its operand.
        return [from_numpy(op, av) for op, av in zip(operands, out_avals, strict=True)]
    flats = [shapes.to_last_axis(op, dimensions) for op in operands]
    out_shape = flats[0].shape[:-1]
    n = flats[0].shape[-1]
    flats = [f.reshape((int(np.prod(out_shape, dtype=np.int64)), n)) for f in flats]
    if flats[0].shape[0] == 0:
        return [from_numpy(np.empty(out_shape, av.dtype), av) for av in out_avals]
    results = _fold(jaxpr, inits, flats, out_avals)
    return [from_numpy(r.reshape(out_shape), av)
            for r, av in zip(results, out_avals, strict=True)]


reduce_p = Primitive("reduce", multiple_results=True)
reduce_p.def_abstract_eval(_reduce_abstract_eval)
reduce_p.def_impl(_reduce_impl)


def _reduce_jvp(primals: list[Any], tangents: list[Any], *, computation: Callable,
                jaxpr: ClosedJaxpr, dimensions: tuple[int, ...]) -> tuple[list[Any], list[Any]]:
    """JAX's rule: a tree of reducer applications, differentiated (right for the associative
    reducers `reduce` requires). Only the operands may carry tangents."""
    operands, init_values = _split_half(primals)
    operand_tangents, init_tangents = _split_half(tangents)
    if any(type(t) is not ad.Zero for t in init_tangents):
        raise NotImplementedError(
            "Gradient of general lax.reduce with non-zero tangents for initial values to "
            "reduction not implemented")
    return reduce_tree_jvp(jaxpr_reducer(jaxpr), init_values,
                                         operands, operand_tangents, dimensions)


ad.primitive_jvps[reduce_p] = _reduce_jvp


def _reduce_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                    dims: Sequence[int | None], *, computation: Callable, jaxpr: ClosedJaxpr,
                    dimensions: tuple[int, ...]) -> tuple[list[Any], list[int]]:
    """JAX's rule: every operand gets its batch axis in front (broadcast there if unmapped)
    and the reduced dimensions shift by one; the scalar computation is unchanged. Batched
    initial values are not supported, as in JAX."""
    operands, inits = _split_half(vals)
    operand_dims, init_dims = _split_half(dims)
    if any(d is not None for d in init_dims):
        raise NotImplementedError
    operands = [batching.bdim_at_front(x, d, axis_data.size)
                for x, d in zip(operands, operand_dims, strict=True)]
    outs = reduce_p.bind(*operands, *inits, computation=computation, jaxpr=jaxpr,
                         dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * len(outs)


batching.primitive_batchers[reduce_p] = _reduce_batcher


def _reduce_lowering(ctx: lowering.LoweringRuleContext, *values: ir.Value,
                     computation: Callable, jaxpr: ClosedJaxpr,
                     dimensions: tuple[int, ...]) -> list[ir.Value]:
    """A variadic `stablehlo.reduce` whose region is the reducer jaxpr."""
    _check_dims(dimensions, ctx.avals_in[0].ndim)
    _, inits = _split_half(values)
    scalars = [v.type for v in inits]
    region = jaxpr_region(ctx, jaxpr, scalars + scalars)
    op = ctx.builder.op("stablehlo.reduce", list(values),
                        [lowering.aval_to_type(a) for a in ctx.avals_out],
                        {"dimensions": tuple(int(d) for d in dimensions)}, [region])
    return list(op.results)


lowering.register_lowering(reduce_p, _reduce_lowering)


def _is_concrete_scalar(x: Any) -> bool:
    return core.is_concrete(x) and core.get_aval(x).shape == ()


def _monoid_reducer(computation: Callable, init_values: Sequence[Any]) -> Callable | None:
    """The specific reduction primitive that `computation` with this initial value is, if any
    (a concrete scalar identity of add, mul, max, min or a bitwise op)."""
    if len(init_values) != 1 or not _is_concrete_scalar(init_values[0]):
        return None
    init, = init_values
    dtype = core.get_aval(init).dtype
    # A differentiation tracer stands for a known value, which is what decides (as in JAX).
    value = to_numpy(core.to_concrete_value(init), dtype)
    int_like = dtypes.is_bool(dtype) or dtypes.is_int(dtype)
    candidates: list[tuple[Callable, bool, Callable, Callable]] = [
        (elementwise.add, True, lambda d: np.array(0, d), reduce_sum),
        (elementwise.mul, True, lambda d: np.array(1, d), reduce_prod),
        (elementwise.bitwise_or, int_like, _or_identity, reduce_or),
        (elementwise.bitwise_and, int_like, _and_identity, reduce_and),
        (elementwise.bitwise_xor, int_like, _or_identity, reduce_xor),
        (elementwise.max, True, _max_identity, reduce_max),
        (elementwise.min, True, _min_identity, reduce_min),
    ]
    for op, applies, identity, reducer in candidates:
        if computation is op:
            return reducer if applies and bool(np.equal(value, identity(dtype))) else None
    return None


def _is_weakly_typed(*values: Any) -> bool:
    return all(core.get_aval(v).weak_type for v in values)


def _trace_reducer(computation: Callable, init_values: Any, flat_inits: Sequence[Any]
                   ) -> tuple[ClosedJaxpr, Any]:
    """Traces `computation(acc, x)` on the initial values' avals: its jaxpr and output tree."""
    return _reducer_jaxpr(computation, tuple(core.get_aval(v) for v in flat_inits),
                          tree_util.tree_structure(init_values))


@tracing_cache
def _reducer_jaxpr(computation: Callable, init_avals: tuple[ShapedArray, ...], init_tree: Any
                   ) -> tuple[ClosedJaxpr, Any]:
    """`_trace_reducer`, cached as in JAX: reducing twice with one computation on the same
    types binds the same jaxpr (printed once, as `let jaxpr = ... in`)."""
    flat_avals = [*init_avals, *init_avals]
    debug = staging.debug_info("reduce comp", computation)
    out_trees: list[Any] = []

    def flat_computation(*flat_args: Any) -> list[Any]:
        xs = tree_util.tree_unflatten(init_tree, list(flat_args[:len(init_avals)]))
        ys = tree_util.tree_unflatten(init_tree, list(flat_args[len(init_avals):]))
        out_flat, out_tree = tree_util.tree_flatten(computation(xs, ys))
        for leaf in out_flat:
            if not (isinstance(leaf, core.Tracer) or core.valid_jaxtype(leaf)):
                raise TypeError(f"function {debug.func_src_info} traced for reduce comp "
                                f"returned a value of type {type(leaf)}, which is not a "
                                "valid JAX type")
        out_trees.append(out_tree)
        return out_flat

    closed = staging.trace_to_jaxpr(flat_computation, flat_avals, debug)
    if any(isinstance(c, core.Tracer) for c in closed.consts):
        raise NotImplementedError(
            "Reduction computations can't close over Tracers. Please open an issue "
            "at https://github.com/jax-ml/jax.")
    return closed, out_trees[0]


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int], out_sharding: Any = None) -> Any:
    """XLA's Reduce: folds `computation` over `dimensions`, starting from `init_values`.

    `init_values` must be scalar identities of `computation`, which must be associative (the
    order of application is unspecified). Recognized monoids (add/mul/max/min/and/or/xor with
    their identity) become `reduce_sum`, `reduce_max`, ...; any other computation is traced to
    a jaxpr and bound as the variadic `reduce` primitive (StableHLO `reduce`).

    Args:
      operands: an array or a pytree of arrays of one shape.
      init_values: scalars in the same pytree structure as `operands`.
      computation: `(accumulated, element) -> accumulated` on pytrees of scalars.
      dimensions: the dimensions to reduce.
    Returns:
      The reduced array(s), in the structure `computation` returns.
    """
    flat_operands, operand_tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(init_values)
    if operand_tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{operand_tree} vs. {init_tree}")
    if len(flat_operands) != len(flat_inits):
        raise ValueError("Must have same total number of operands as init_values: "
                         f" {len(flat_operands)} vs. {len(flat_inits)}")
    monoid_reducer = _monoid_reducer(computation, flat_inits)
    if monoid_reducer is not None:
        # The specific primitives have their own weak-type rules; the result is weak only when
        # operand and initial value both are, as for the general reduce.
        weak_type = _is_weakly_typed(*flat_operands) and _is_weakly_typed(*flat_inits)
        kwargs = {"out_sharding": out_sharding} if out_sharding is not None else {}
        out = monoid_reducer(*flat_operands, dimensions, **kwargs)
        return structural.convert_element_type(out, core.get_aval(out).dtype, weak_type)
    closed, out_tree = _trace_reducer(computation, init_values, flat_inits)
    # A computation returning another number of leaves than there are operands fails here, with
    # the pytree error JAX gives when it unflattens the results.
    tree_util.tree_unflatten(out_tree, flat_operands)
    outs = reduce_p.bind(*flat_operands, *flat_inits, computation=computation, jaxpr=closed,
                         dimensions=_axes_tuple(dimensions))
    return tree_util.tree_unflatten(out_tree, outs)


batching.register_array_ops(reduce_sum=lambda x, axes: reduce_sum(x, axes))


# A reducer maps the flat list `accumulated + elements` (arrays of one shape) to the flat list
# of reduced values, elementwise.
Reducer = Callable[..., Sequence[Any]]


def _shape(x: Any) -> tuple[int, ...]:
    return core.get_aval(x).shape


def _full(shape: tuple[int, ...], fill_value: Any) -> Any:
    """`lax.full`: `fill_value` (of its own dtype) broadcast to `shape`."""
    return structural.broadcast_in_dim(fill_value, shape, ())


# -- the derivative of a reduction: a tree of reducer applications (JAX's `_reduce_jvp`) -------
# The primal result comes from the tree too, so it is differentiable again to any order.

def reduce_tree_jvp(reducer: Reducer, init_values: Sequence[Any], primals: Sequence[Any],
                    tangents: Sequence[Any], axes: Sequence[int]
                    ) -> tuple[list[Any], list[Any]]:
    """The jvp of reducing `primals` over `axes` with `reducer`.

    The reduced axes are moved to the front and flattened; the resulting axis is halved
    repeatedly (padding odd halves with the initial values) and the halves combined with
    `reducer`, all under forward-mode differentiation.

    Args:
      reducer: the elementwise reducer on arrays of any one shape.
      init_values: the scalar initial values (identities), one per operand.
      primals, tangents: the operands and their tangents (symbolic `Zero`s allowed).
      axes: the reduced axes.
    Returns:
      The primal and tangent outputs.
    """
    # Imported here: slicing's rules reduce (gather's fill mask, pad's transpose).
    from justjax._src.lax import slicing
    input_shape = _shape(primals[0])
    axes = tuple(int(a) for a in axes)
    non_axes = tuple(d for d in range(len(input_shape)) if d not in axes)
    size = math.prod(input_shape[a] for a in axes)
    kept_shape = tuple(input_shape[d] for d in non_axes)
    new_shape = (size,) + kept_shape
    permutation = axes + non_axes

    def to_front(x: Any) -> Any:
        if type(x) is ad.Zero:
            return ad.Zero(x.aval.update(shape=new_shape))
        return structural.reshape(x, new_shape, permutation)

    def reduce_tree(*xs: Any) -> list[Any]:
        xs = list(xs)
        while _shape(xs[0])[0] > 1:
            n = _shape(xs[0])[0]
            n1 = (n + 1) // 2
            n2 = n - n1
            firsts = [slicing.slice_in_dim(x, 0, n1) for x in xs]
            seconds = [slicing.slice_in_dim(x, n1, None) for x in xs]
            if n2 != n1:
                padding = [(0, 0, 0)] * len(_shape(xs[0]))
                padding[0] = (0, 1, 0)
                seconds = [slicing.pad(x, init, padding)
                           for x, init in zip(seconds, init_values, strict=True)]
            xs = list(reducer(*firsts, *seconds))
        if _shape(xs[0])[0] == 0:
            return [_full(kept_shape, init) for init in init_values]
        return [structural.squeeze(x, (0,)) for x in xs]

    return ad.jvp_flat(reduce_tree, [to_front(x) for x in primals],
                       [to_front(t) for t in tangents])


def jaxpr_reducer(closed: ClosedJaxpr) -> Reducer:
    """The reducer jaxpr of the general `reduce`, applied elementwise to whole arrays: as
    JAX does, the scalar jaxpr vmapped once per dimension of the arguments."""
    def scalar_reducer(*args: Any) -> list[Any]:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    def reducer(*args: Any) -> list[Any]:
        fun = scalar_reducer
        for size in reversed(_shape(args[0])):
            fun = _vmapped(fun, size)
        return fun(*args)
    return reducer


def _vmapped(fun: Callable[..., Sequence[Any]], size: int) -> Callable[..., list[Any]]:
    """`vmap(fun)` over the leading axis of every argument and output (an unbatched output,
    a constant, is broadcast)."""
    axis_data = batching.AxisData(batching.no_axis_name, size)

    def batched(*args: Any) -> list[Any]:
        return batching.batch_flat(fun, axis_data, [0] * len(args), lambda n: [0] * n, args)
    return batched


def is_elementwise_batchable(closed: ClosedJaxpr, shape: tuple[int, ...]) -> bool:
    """Whether the scalar reducer `closed` can run on arrays of `shape` at once, giving the
    same result as running it element by element.

    True when the jaxpr is made of scalar values only, holds no sub-jaxprs, and abstract
    evaluation with the arguments as arrays of `shape` keeps every value derived from them of
    that shape (shape-specific primitives such as reshape fail that check).
    """
    jaxpr = closed.jaxpr
    if any(np.shape(c) != () for c in closed.consts):
        return False
    if any(v.aval.shape != () for e in jaxpr.eqns for v in e.outvars):
        return False
    if any(_contains_jaxpr(p) for e in jaxpr.eqns for p in e.params.values()):
        return False
    batched = {v: v.aval.update(shape=shape) for v in jaxpr.invars}

    def aval_of(atom: Any) -> ShapedArray:
        return atom.aval if isinstance(atom, Literal) else batched.get(atom, atom.aval)

    for eqn in jaxpr.eqns:
        in_avals = [aval_of(a) for a in eqn.invars]
        is_batched = any(not isinstance(a, Literal) and a in batched for a in eqn.invars)
        try:
            outs = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        except Exception:  # noqa: BLE001 - any failure means "not batchable"
            return False
        outs = outs if eqn.primitive.multiple_results else [outs]
        want = shape if is_batched else ()
        if any(o.shape != want for o in outs):
            return False
        if is_batched:
            batched.update({v: o for v, o in zip(eqn.outvars, outs, strict=True)})
    return True


def _contains_jaxpr(value: Any) -> bool:
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        return True
    return isinstance(value, (tuple, list)) and any(_contains_jaxpr(v) for v in value)
