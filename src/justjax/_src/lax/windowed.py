"""Windowed reductions: `reduce_window_sum`, `reduce_window_max`, `reduce_window_min` and the
generic (variadic, jaxpr-carrying) `reduce_window` primitive, with `lax.reduce_window`; and
`select_and_gather_add` / `select_and_scatter_add`, which differentiate windowed max and min.

Windows are taken over the operand after base dilation (holes) and padding, both filled with
the reduction's initial value, as XLA's ReduceWindow does. The eager implementation loops over
the window taps only, combining one strided view of the whole operand per tap.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.numerics import monoids
from justjax._src.compilation import dispatch
from justjax._src.core import core, dtypes
from justjax._src.core.shape_poly import is_symbolic_dim
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr, tracing_cache
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering, staging
from justjax._src.lax import elementwise, reductions, selection, slicing
from justjax._src.lax import sharding_rules, utils
from justjax._src.lax.convolution import conv_general_vjp_lhs_padding, padtype_to_pads
from justjax._src.lax.utils import standard_primitive
from justjax._src.runtime.array import to_numpy

__all__ = [
    "reduce_window",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_shape_tuple",
    "reduce_window_sum_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
]


# -- shapes ------------------------------------------------------------------------------------

def _check_shapelike(fun_name: str, arg_name: str, obj: Any, non_zero_shape: bool = False
                     ) -> None:
    """`obj` must be a 1-D sequence of nonnegative (or positive) integers."""
    if not isinstance(obj, (tuple, list, np.ndarray)):
        raise TypeError(f"{fun_name} {arg_name} must be of type tuple/list/ndarray, got "
                        f"{type(obj)}.")
    if not len(obj):
        return
    if np.ndim(obj) != 1:
        raise TypeError(f"{fun_name} {arg_name} must be 1-dimensional, got {np.ndim(obj)}.")
    if not all(isinstance(d, (int, np.integer)) or is_symbolic_dim(d) for d in obj):
        raise TypeError(f"{fun_name} {arg_name} must have every element be an integer type, "
                        f"got {tuple(map(type, obj))}.")
    lower, description = (1, "strictly positive") if non_zero_shape else (0, "nonnegative")
    if not all(d >= lower for d in obj):
        raise TypeError(f"{fun_name} {arg_name} must have every element be {description}, "
                        f"got {obj}.")


def _dilate_shape(shape: Sequence[int], dilation: Sequence[int]) -> tuple[int, ...]:
    if not all(d > 0 for d in dilation):
        raise TypeError(f"All dilations must be positive, got {tuple(dilation)}.")
    dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(d if r == 1 else max(1 + r * (d - 1), 0)
                 for d, r in zip(shape, dilation, strict=True))


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int],
                              padding: Sequence[tuple[int, int]],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The output shape of a windowed reduction."""
    if base_dilation is not None:
        operand_shape = _dilate_shape(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = _dilate_shape(window_dimensions, window_dilation)
    padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding, strict=True)]
    return tuple(max((d - w) // s + 1, 0)
                 for d, w, s in zip(padded, window_dimensions, window_strides, strict=True))


def _common_shape_rule(operand: ShapedArray, window_dimensions: tuple, window_strides: tuple,
                       padding: tuple, base_dilation: tuple, window_dilation: tuple
                       ) -> tuple[int, ...]:
    _check_shapelike("reduce_window", "window_dimensions", window_dimensions,
                     non_zero_shape=True)
    _check_shapelike("reduce_window", "window_strides", window_strides, non_zero_shape=True)
    _check_shapelike("reduce_window", "base_dilation", base_dilation)
    _check_shapelike("reduce_window", "window_dilation", window_dilation)
    if operand.ndim != len(window_dimensions):
        raise TypeError("reduce_window got the wrong number of window_dimensions for operand: "
                        f"got operand shape {operand.shape} with window_dimensions "
                        f"{window_dimensions}.")
    for name, value in (("window_strides", window_strides), ("base_dilation", base_dilation),
                        ("window_dilation", window_dilation)):
        if len(value) != len(window_dimensions):
            raise TypeError(f"reduce_window got inconsistent {name} and window_dimensions: got "
                            f"{name} {value} and window_dimensions {window_dimensions}.")
    return reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides, padding,
                                     base_dilation, window_dilation)


# -- window views ------------------------------------------------------------------------------
# The identities are `numerics.monoids`'.

max_identity = monoids.max_identity
min_identity = monoids.min_identity




# -- the monoid primitives ---------------------------------------------------------------------

def _sum_shape_rule(operand: ShapedArray, **params: Any) -> tuple[int, ...]:
    if dtypes.is_bool(operand.dtype):
        raise TypeError("operand to reduce_window_sum must have a number dtype, got "
                        f"{np.dtype(operand.dtype).name}")
    return _common_shape_rule(operand, **params)


def _operand_dtype(operand: ShapedArray, *others: ShapedArray, **params: Any) -> np.dtype:
    return operand.dtype


def _with_unit_window(params: dict[str, tuple], axis: int) -> dict[str, tuple]:
    """Window params for an operand with a new (batch) axis at `axis`: a window of size 1,
    stride 1, no padding and no dilation there, so each example is reduced by itself."""
    unit = dict(window_dimensions=1, window_strides=1, padding=(0, 0), base_dilation=1,
                window_dilation=1)
    return {name: (*value[:axis], unit[name], *value[axis:]) if name in unit else value
            for name, value in params.items()}


def _monoid_batch_rule(primitive: Primitive) -> Callable:
    """JAX's rule for reduce_window_sum/max/min: the batch axis stays where it is and gets
    a unit window."""
    def rule(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None],
             **params: tuple) -> tuple[Any, int]:
        operand, = vals
        bdim, = dims
        return primitive.bind(operand, **_with_unit_window(params, bdim)), bdim
    return rule


reduce_window_sum_p = standard_primitive("reduce_window_sum", _sum_shape_rule, _operand_dtype,
                                         utils.first_arg_weak,
                                         sharding_rule=sharding_rules.varying_shape("reduce_window"))
dispatch.def_backend_impl(reduce_window_sum_p)


def _reduce_window_sum_transpose(ct: Any, operand: Any, *, window_dimensions: tuple,
                                 window_strides: tuple, padding: tuple, base_dilation: tuple,
                                 window_dilation: tuple) -> list[Any]:
    """Each input element receives the cotangents of the windows covering it: `ct` with holes
    between strided windows and padded to full overlap, summed over windows again (a sum
    window is symmetric, so it needs no flip); the base dilation becomes the stride."""
    assert ad.is_undefined_primal(operand)
    input_shape = operand.aval.shape
    ct_aval = core.get_aval(ct)
    pads = conv_general_vjp_lhs_padding(input_shape, window_dimensions, window_strides,
                                        ct_aval.shape, padding, base_dilation, window_dilation)
    padding_config = [(lo, hi, stride - 1)
                      for (lo, hi), stride in zip(pads, window_strides, strict=True)]
    padded_ct = slicing.pad(ct, np.zeros((), ct_aval.dtype), padding_config)
    ones = (1,) * len(input_shape)
    result = _reduce_window_sum(padded_ct, window_dimensions, base_dilation,
                                [(0, 0)] * len(input_shape), base_dilation=ones,
                                window_dilation=window_dilation)
    assert core.get_aval(result).shape == input_shape, (core.get_aval(result).shape, input_shape)
    return [result]


ad.deflinear2(reduce_window_sum_p, _reduce_window_sum_transpose)
batching.primitive_batchers[reduce_window_sum_p] = _monoid_batch_rule(reduce_window_sum_p)


def _chooser_jvp_rule(select_prim: Primitive) -> Callable:
    """The tangent of a windowed max (min) is the tangent of the element each window picks:
    the first maximal (minimal) one in window order, as `select_and_gather_add` finds it."""
    def rule(g: Any, operand: Any, *, window_dimensions: tuple, window_strides: tuple,
             padding: tuple, base_dilation: tuple, window_dilation: tuple) -> Any:
        return _select_and_gather_add(g, operand, select_prim, window_dimensions,
                                      window_strides, padding, base_dilation, window_dilation)
    return rule


reduce_window_max_p = standard_primitive(
    "reduce_window_max", lambda x, **params: _common_shape_rule(x, **params), _operand_dtype,
    utils.first_arg_weak, sharding_rule=sharding_rules.varying_shape("reduce_window"))
dispatch.def_backend_impl(reduce_window_max_p)
ad.defjvp(reduce_window_max_p, _chooser_jvp_rule(elementwise.ge_p))
batching.primitive_batchers[reduce_window_max_p] = _monoid_batch_rule(reduce_window_max_p)

reduce_window_min_p = standard_primitive(
    "reduce_window_min", lambda x, **params: _common_shape_rule(x, **params), _operand_dtype,
    utils.first_arg_weak, sharding_rule=sharding_rules.varying_shape("reduce_window"))
dispatch.def_backend_impl(reduce_window_min_p)
ad.defjvp(reduce_window_min_p, _chooser_jvp_rule(elementwise.le_p))
batching.primitive_batchers[reduce_window_min_p] = _monoid_batch_rule(reduce_window_min_p)


# -- select_and_gather_add / select_and_scatter_add --------------------------------------------
# The pair that differentiates windowed max/min: `select_and_gather_add(t, x)` takes, per
# window of x, the element of t where x's first maximum (select_prim=ge) or minimum (le)
# sits; `select_and_scatter_add(s, x)` is its transpose, adding each s element into x's
# shape at that same place. Each is linear in its first argument and transposes to the other.

def _select_fill(select_prim: Primitive, dtype: np.dtype) -> np.ndarray:
    """What padding and holes hold for the selection: never preferred to a real element."""
    return max_identity(dtype) if select_prim is elementwise.ge_p else min_identity(dtype)




def _select_and_gather_add_shape(tangents: ShapedArray, operand: ShapedArray, *,
                                 select_prim: Primitive, window_dimensions: tuple,
                                 window_strides: tuple, padding: tuple, base_dilation: tuple,
                                 window_dilation: tuple) -> tuple[int, ...]:
    if tangents.shape != operand.shape:
        raise TypeError("select_and_gather_add tangents and operand shapes must match, got "
                        f"{tangents.shape} and {operand.shape}.")
    return _common_shape_rule(operand, window_dimensions, window_strides, padding,
                              base_dilation, window_dilation)




select_and_gather_add_p = standard_primitive("select_and_gather_add",
                                             _select_and_gather_add_shape, _operand_dtype)
dispatch.def_backend_impl(select_and_gather_add_p)


def _select_and_gather_add(tangents: Any, operand: Any, select_prim: Primitive,
                           window_dimensions: Sequence[int], window_strides: Sequence[int],
                           padding: Sequence[tuple[int, int]], base_dilation: Sequence[int],
                           window_dilation: Sequence[int]) -> Any:
    """Per window of `operand`, the element of `tangents` where the window's first maximum
    (`select_prim` ge) or minimum (le) sits (a StableHLO `reduce_window` over pairs)."""
    return select_and_gather_add_p.bind(
        tangents, operand, select_prim=select_prim, window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides), padding=tuple(padding),
        base_dilation=tuple(base_dilation), window_dilation=tuple(window_dilation))


def _select_and_gather_add_transpose(ct: Any, tangents: Any, operand: Any, *,
                                     select_prim: Primitive, window_dimensions: tuple,
                                     window_strides: tuple, padding: tuple,
                                     base_dilation: tuple, window_dilation: tuple) -> list[Any]:
    assert ad.is_undefined_primal(tangents) and not ad.is_undefined_primal(operand)
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError("VJP not implemented for select_and_gather (MaxPool) with "
                                  f"window dilation, got window_dilation={window_dilation}.")
    if type(ct) is ad.Zero:
        return [ad.Zero(tangents.aval), None]
    has_base_dilation = any(d != 1 for d in base_dilation)
    if has_base_dilation:
        # Holes become explicit never-selected elements, dropped again after scattering.
        fill = _select_fill(select_prim, core.get_aval(operand).dtype)
        operand = slicing.pad(operand, fill, tuple((0, 0, d - 1) for d in base_dilation))
    result = _select_and_scatter_add(ct, operand, select_prim, window_dimensions,
                                     window_strides, padding)
    if has_base_dilation:
        shape = core.get_aval(result).shape
        result = slicing.slice(result, (0,) * len(shape), shape, base_dilation)
    return [result, None]


ad.defjvp(select_and_gather_add_p,
          lambda g, tangents, operand, **params: _select_and_gather_add(
              g, operand, params["select_prim"], params["window_dimensions"],
              params["window_strides"], params["padding"], params["base_dilation"],
              params["window_dilation"]),
          None)
ad.primitive_transposes[select_and_gather_add_p] = _select_and_gather_add_transpose


def _pair_batch_rule(primitive: Primitive) -> Callable:
    """JAX's rule for select_and_gather_add and select_and_scatter_add: both operands get
    their batch axis in front (broadcast there if unmapped), where the window has size 1."""
    def rule(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[Any, int]:
        first, second = [batching.bdim_at_front(x, d, axis_data.size)
                         for x, d in zip(vals, dims, strict=True)]
        return primitive.bind(first, second, **_with_unit_window(params, 0)), 0
    return rule


batching.primitive_batchers[select_and_gather_add_p] = _pair_batch_rule(select_and_gather_add_p)


def _select_and_scatter_add_shape(source: ShapedArray, operand: ShapedArray, *,
                                  select_prim: Primitive, window_dimensions: tuple,
                                  window_strides: tuple, padding: tuple) -> tuple[int, ...]:
    return operand.shape




select_and_scatter_add_p = standard_primitive("select_and_scatter_add",
                                              _select_and_scatter_add_shape, _operand_dtype)
dispatch.def_backend_impl(select_and_scatter_add_p)


def _select_and_scatter_add(source: Any, operand: Any, select_prim: Primitive,
                            window_dimensions: Sequence[int], window_strides: Sequence[int],
                            padding: Sequence[tuple[int, int]]) -> Any:
    """Adds each element of `source` into an array shaped like `operand`, where the first
    maximum (`select_prim` ge) or minimum (le) of its window sits (StableHLO
    `select_and_scatter`)."""
    return select_and_scatter_add_p.bind(
        source, operand, select_prim=select_prim, window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides), padding=tuple(padding))


def _select_and_scatter_add_transpose(ct: Any, source: Any, operand: Any, *,
                                      select_prim: Primitive, window_dimensions: tuple,
                                      window_strides: tuple, padding: tuple) -> list[Any]:
    assert ad.is_undefined_primal(source) and not ad.is_undefined_primal(operand)
    if type(ct) is ad.Zero:
        return [ad.Zero(source.aval), None]
    ones = (1,) * len(window_dimensions)
    source_ct = _select_and_gather_add(ct, operand, select_prim, window_dimensions,
                                       window_strides, padding, ones, ones)
    return [source_ct, None]


ad.defjvp(select_and_scatter_add_p,
          lambda g, source, operand, **params: _select_and_scatter_add(
              g, operand, params["select_prim"], params["window_dimensions"],
              params["window_strides"], params["padding"]),
          None)
ad.primitive_transposes[select_and_scatter_add_p] = _select_and_scatter_add_transpose
batching.primitive_batchers[select_and_scatter_add_p] = \
    _pair_batch_rule(select_and_scatter_add_p)


# -- the generic primitive ---------------------------------------------------------------------

reduce_window_p = Primitive("reduce_window", multiple_results=True)


def _reduce_window_abstract_eval(*avals: ShapedArray, jaxpr: Jaxpr, consts: tuple,
                                 window_dimensions: tuple, window_strides: tuple,
                                 padding: tuple, base_dilation: tuple,
                                 window_dilation: tuple) -> list[ShapedArray]:
    operands, inits = avals[:len(avals) // 2], avals[len(avals) // 2:]
    if any(o.dtype != i.dtype for o, i in zip(operands, inits, strict=True)):
        raise TypeError("reduce_window got inconsistent dtypes for operands and init_values: "
                        f"got operand dtypes {[o.dtype for o in operands]} and init_value "
                        f"dtypes {[i.dtype for i in inits]}.")
    if any(i.shape for i in inits):
        raise TypeError("reduce_window expected init_values to be scalars but init_values "
                        f"have shapes {[i.shape for i in inits]}.")
    out_shape = _common_shape_rule(operands[0], window_dimensions, window_strides, padding,
                                   base_dilation, window_dilation)
    return [ShapedArray(out_shape, o.dtype) for o in operands]


def _vectorizable(jaxpr: Jaxpr, size: int) -> bool:
    """Whether evaluating the scalar `jaxpr` on 1-D arrays of `size` values computes it for
    each element independently: every equation must keep per-element values per-element."""
    batched = set(jaxpr.invars)
    for eqn in jaxpr.eqns:
        in_avals = [ShapedArray((size,), v.aval.dtype, v.aval.weak_type) if v in batched
                    else v.aval for v in eqn.invars]
        if all(a.shape == () for a in in_avals):
            continue
        try:
            outs = eqn.primitive.abstract_eval(*in_avals, **eqn.params)
        except Exception:  # any failure only means "not elementwise": evaluate per element
            return False
        outs = outs if eqn.primitive.multiple_results else [outs]
        if any(o.shape != (size,) for o in outs):
            return False
        batched.update(eqn.outvars)
    return True






reduce_window_p.def_abstract_eval(_reduce_window_abstract_eval)
dispatch.def_backend_impl(reduce_window_p)


def _reduce_window_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: Jaxpr,
                       consts: tuple, window_dimensions: tuple, window_strides: tuple,
                       padding: tuple, base_dilation: tuple, window_dilation: tuple
                       ) -> tuple[list[Any], list[Any]]:
    """One windowed reduction over (primal, tangent) operand pairs, whose computation is the
    jvp of the original one. Forward mode only: the result is not linear in the tangents
    alone, so reverse mode fails, as in JAX."""
    n = len(primals) // 2
    operands, inits = list(primals[:n]), list(primals[n:])
    if not all(type(t) is ad.Zero for t in tangents[n:]):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    operand_tangents = [ad.instantiate_zeros(t) for t in tangents[:n]]
    init_tangents = [ad.instantiate_zeros(t) for t in tangents[n:]]

    def jvp_computation(left: list[Any], right: list[Any]) -> list[Any]:
        primal_outs, tangent_outs = ad.jvp_flat(
            lambda *args: eval_jaxpr(jaxpr, consts, *args),
            [*left[:n], *right[:n]], [*left[n:], *right[n:]])
        return [*primal_outs, *tangent_outs]

    outs = reduce_window([*operands, *operand_tangents], [*inits, *init_tangents],
                         jvp_computation, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation)
    return outs[:n], outs[n:]


ad.primitive_jvps[reduce_window_p] = _reduce_window_jvp


def _reduce_window_batch_rule(axis_data: batching.AxisData, vals: Sequence[Any],
                              dims: Sequence[int | None], *, jaxpr: Jaxpr, consts: tuple,
                              **params: tuple) -> tuple[list[Any], list[int]]:
    """JAX's rule: every operand gets its batch axis in front (broadcast there if unmapped)
    with a unit window; the scalar computation is unchanged. Batched initial values are not
    supported, as in JAX."""
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce_window batching is not implemented for initial "
                                  "values")
    operands = [batching.bdim_at_front(x, d, axis_data.size)
                for x, d in zip(vals[:n], dims[:n], strict=True)]
    outs = reduce_window_p.bind(*operands, *vals[n:], jaxpr=jaxpr, consts=consts,
                                **_with_unit_window(params, 0))
    return outs, [0] * n


batching.primitive_batchers[reduce_window_p] = _reduce_window_batch_rule


# -- lax.reduce_window -------------------------------------------------------------------------

def _monoid_params(window_dimensions: Sequence[int], window_strides: Sequence[int],
                   padding: Sequence[tuple[int, int]], base_dilation: Sequence[int] | None,
                   window_dilation: Sequence[int] | None) -> dict[str, tuple]:
    ones = (1,) * len(window_dimensions)
    return dict(window_dimensions=tuple(window_dimensions), window_strides=tuple(window_strides),
                padding=tuple(padding),
                base_dilation=ones if base_dilation is None else tuple(base_dilation),
                window_dilation=ones if window_dilation is None else tuple(window_dilation))


def _reduce_window_sum(operand: Any, window_dimensions: Sequence[int],
                       window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                       base_dilation: Sequence[int] | None = None,
                       window_dilation: Sequence[int] | None = None) -> Any:
    """Windowed sum (StableHLO `reduce_window` with `add`)."""
    return reduce_window_sum_p.bind(operand, **_monoid_params(
        window_dimensions, window_strides, padding, base_dilation, window_dilation))


def _reduce_window_max(operand: Any, window_dimensions: Sequence[int],
                       window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                       base_dilation: Sequence[int] | None = None,
                       window_dilation: Sequence[int] | None = None) -> Any:
    """Windowed maximum (StableHLO `reduce_window` with `maximum`)."""
    return reduce_window_max_p.bind(operand, **_monoid_params(
        window_dimensions, window_strides, padding, base_dilation, window_dilation))


def _reduce_window_min(operand: Any, window_dimensions: Sequence[int],
                       window_strides: Sequence[int], padding: Sequence[tuple[int, int]],
                       base_dilation: Sequence[int] | None = None,
                       window_dilation: Sequence[int] | None = None) -> Any:
    """Windowed minimum (StableHLO `reduce_window` with `minimum`)."""
    return reduce_window_min_p.bind(operand, **_monoid_params(
        window_dimensions, window_strides, padding, base_dilation, window_dilation))


def _monoid_reducer(computation: Callable, init_values: Sequence[Any]) -> Callable | None:
    """The dedicated primitive for `computation` when it is add/max/min and the (single,
    concrete, scalar) initial value is its identity, as JAX chooses."""
    if len(init_values) != 1 or not core.is_concrete(init_values[0]):
        return None
    aval = core.get_aval(init_values[0])
    if aval.shape != ():
        return None
    value = to_numpy(core.to_concrete_value(init_values[0]), aval.dtype)
    if computation is elementwise.add:
        return _reduce_window_sum if value == 0 else None
    if computation is elementwise.max:
        return _reduce_window_max if value == max_identity(aval.dtype) else None
    if computation is elementwise.min:
        return _reduce_window_min if value == min_identity(aval.dtype) else None
    return None


@tracing_cache
def _reduction_jaxpr(computation: Callable, init_avals: tuple[ShapedArray, ...],
                     init_tree: Any) -> tuple[Any, Any]:
    """Traces `computation(xs, ys)` on scalars of the initial values' types (cached as in JAX:
    one computation on the same types gives the same jaxpr)."""
    out_tree_box = []

    def flat_computation(*flat: Any) -> list[Any]:
        half = len(flat) // 2
        xs = tree_util.tree_unflatten(init_tree, flat[:half])
        ys = tree_util.tree_unflatten(init_tree, flat[half:])
        flat_out, out_tree = tree_util.tree_flatten(computation(xs, ys))
        out_tree_box.append(out_tree)
        return flat_out

    debug = staging.debug_info("reduce_window comp", computation)
    closed = staging.trace_to_jaxpr(flat_computation, [*init_avals, *init_avals], debug)
    if any(isinstance(c, core.Tracer) for c in closed.consts):
        raise NotImplementedError("Reduction computations can't close over Tracers. Please "
                                  "open an issue at https://github.com/jax-ml/jax.")
    return closed, out_tree_box[0]


def reduce_window(operand: Any, init_value: Any, computation: Callable,
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: str | Sequence[tuple[int, int]] = "VALID",
                  base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduction over (padded, dilated) windows (StableHLO `reduce_window`).

    `lax.add`, `lax.max` or `lax.min` with their identity as the initial value become the
    dedicated `reduce_window_sum/max/min` primitives; any other computation is traced to a
    jaxpr and `reduce_window` is variadic over a pytree of operands.

    Args:
      operand: an array or a pytree of arrays.
      init_value: scalars of the same tree structure.
      computation: `(xs, ys) -> zs` over trees like `operand`.
      window_dimensions: the window size per dimension.
      window_strides: the strides (default all 1).
      padding: 'VALID' (default), 'SAME', 'SAME_LOWER' or explicit `(low, high)` pairs.
      base_dilation, window_dilation: dilations of the operand and of the window.

    Returns:
      The reduced windows, a tree like `operand`.
    """
    flat_operands, operand_tree = tree_util.tree_flatten(operand)
    flat_inits, init_tree = tree_util.tree_flatten(init_value)
    if operand_tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{operand_tree} vs. {init_tree}")
    if len(flat_operands) != len(flat_inits):
        raise ValueError("Must have same total number of operands as init_values:  "
                         f"{len(flat_operands)} vs. {len(flat_inits)}")
    if not flat_operands:
        raise ValueError("reduce_window must have at least one operand.")
    if isinstance(padding, str):
        window = (window_dimensions if window_dilation is None
                  else _dilate_shape(window_dimensions, window_dilation))
        padding = tuple(padtype_to_pads(core.get_aval(flat_operands[0]).shape, window,
                                        window_strides or (), padding))
    else:
        padding = tuple((lo, hi) for lo, hi in padding)
    if window_strides is None:
        window_strides = (1,) * len(window_dimensions)
    params = _monoid_params(window_dimensions, window_strides, padding, base_dilation,
                            window_dilation)
    monoid = _monoid_reducer(computation, flat_inits)
    if monoid is not None:
        return monoid(operand, **params)
    init_avals = [core.get_aval(v) for v in flat_inits]
    closed, out_tree = _reduction_jaxpr(computation, tuple(init_avals), init_tree)
    if operand_tree != out_tree:
        raise ValueError("reduce_window output must have the same tree structure as the "
                         f"operands {operand_tree} vs. {out_tree}")
    flat_out = reduce_window_p.bind(*flat_operands, *flat_inits, jaxpr=closed.jaxpr,
                                    consts=tuple(closed.consts), **params)
    return tree_util.tree_unflatten(operand_tree, flat_out)


# -- lowering ----------------------------------------------------------------------------------

def _reduce_window_op(ctx: lowering.LoweringRuleContext, operands: Sequence[ir.Value],
                      inits: Sequence[ir.Value], region: ir.Region, *,
                      window_dimensions: tuple, window_strides: tuple, padding: tuple,
                      base_dilation: tuple, window_dilation: tuple) -> list[ir.Value]:
    """`stablehlo.reduce_window` of `operands` from `inits` with `region`, every window
    attribute spelled out as JAX does."""
    if any(is_symbolic_dim(d) for pair in padding for d in pair):
        pads = tuple(tuple(pair) for pair in padding)  # made dynamic by `lowering_poly`
    else:
        pads = np.asarray(padding, np.int64).reshape(len(window_dimensions), 2)
    op = ctx.builder.op(
        "stablehlo.reduce_window", [*operands, *inits],
        [lowering.aval_to_type(a) for a in ctx.avals_out],
        {"base_dilations": tuple(base_dilation), "padding": pads,
         "window_dilations": tuple(window_dilation),
         "window_dimensions": tuple(window_dimensions), "window_strides": tuple(window_strides)},
        [region])
    return list(op.results)


def _monoid_window_lowering(monoid: str) -> lowering.LoweringRule:
    """`reduce_window` with the monoid's region, from its identity (broadcast to a scalar,
    as JAX's `full_like_aval` leaves it)."""
    def rule(ctx: lowering.LoweringRuleContext, x: ir.Value, **params: tuple) -> ir.Value:
        b = ctx.builder
        dtype = x.type.dtype
        identity = lowering.constant(b, reductions.MONOIDS[monoid][1](dtype))
        init = lowering.broadcast_in_dim(b, identity, (), ())
        return _reduce_window_op(ctx, [x], [init], reductions.monoid_region(monoid, dtype),
                                 **params)[0]
    rule.__name__ = f"_reduce_window_{monoid}_lowering"
    return rule


lowering.register_lowering(reduce_window_sum_p, _monoid_window_lowering("add"))
lowering.register_lowering(reduce_window_max_p, _monoid_window_lowering("max"))
lowering.register_lowering(reduce_window_min_p, _monoid_window_lowering("min"))


def _reduce_window_lowering(ctx: lowering.LoweringRuleContext, *values: ir.Value, jaxpr: Jaxpr,
                            consts: tuple, **params: tuple) -> list[ir.Value]:
    """A variadic `reduce_window` whose region is the computation's jaxpr."""
    n = len(values) // 2
    operands, inits = values[:n], values[n:]
    scalars = [v.type for v in inits]
    region = reductions.jaxpr_region(ctx, ClosedJaxpr(jaxpr, list(consts)), scalars + scalars)
    return _reduce_window_op(ctx, operands, inits, region, **params)


lowering.register_lowering(reduce_window_p, _reduce_window_lowering)


def _select_and_gather_add_pairs(tangents: Any, operand: Any, *, select_prim: Primitive,
                                 window_dimensions: tuple, window_strides: tuple,
                                 padding: tuple, base_dilation: tuple,
                                 window_dilation: tuple) -> Any:
    """JAX's lowering: one variadic windowed reduction over (operand, tangent) pairs keeping
    the pair whose key `select_prim` prefers (the earlier one on ties)."""
    def reducer(x: tuple[Any, Any], y: tuple[Any, Any]) -> tuple[Any, Any]:
        (key_x, value_x), (key_y, value_y) = x, y
        which = select_prim.bind(key_x, key_y)
        return (selection.select(which, key_x, key_y),
                selection.select(which, value_x, value_y))

    operand_dtype = core.get_aval(operand).dtype
    inits = (_select_fill(select_prim, operand_dtype),
             np.zeros((), core.get_aval(tangents).dtype))
    _, out = reduce_window((operand, tangents), inits, reducer, window_dimensions,
                           window_strides, padding, base_dilation, window_dilation)
    return out


lowering.register_lowering(select_and_gather_add_p, lowering.lower_fun(
    _select_and_gather_add_pairs, multiple_results=False))


def _select_and_scatter_add_lowering(ctx: lowering.LoweringRuleContext, source: ir.Value,
                                     operand: ir.Value, *, select_prim: Primitive,
                                     window_dimensions: tuple, window_strides: tuple,
                                     padding: tuple) -> ir.Value:
    """JAX's CPU lowering: the operand padded explicitly with the selection's identity (so
    padding can be selected, its contributions dropped), `stablehlo.select_and_scatter` with
    no padding, and a slice back to the operand's shape."""
    b = ctx.builder
    rank = len(window_dimensions)
    lows = tuple(int(lo) for lo, _ in padding)
    highs = tuple(int(hi) for _, hi in padding)
    operand_dtype = operand.type.dtype
    padded_shape = tuple(n + lo + hi for n, lo, hi in zip(operand.type.shape, lows, highs,
                                                          strict=True))
    fill = lowering.constant(b, _select_fill(select_prim, operand_dtype))
    padded = b.one("stablehlo.pad", [operand, fill], ir.TensorType(padded_shape, operand_dtype),
                   edge_padding_low=lows, edge_padding_high=highs, interior_padding=(0,) * rank)
    init = lowering.constant(b, np.zeros((), operand_dtype))
    scalar = reductions.scalar_type(operand_dtype)
    select, sb = ir.new_region([scalar, scalar])
    direction = "GE" if select_prim is elementwise.ge_p else "LE"
    sb.ret([lowering.compare(sb, *select.block.args, direction)])
    scatter = reductions.monoid_region("or" if operand_dtype == np.bool_ else "add",
                                       operand_dtype)
    scattered = b.op("stablehlo.select_and_scatter", [padded, source, init],
                     [padded.type],
                     {"padding": np.zeros((rank, 2), np.int64),
                      "window_dimensions": tuple(window_dimensions),
                      "window_strides": tuple(window_strides)},
                     [select, scatter]).result
    return b.one("stablehlo.slice", [scattered], lowering.aval_to_type(ctx.avals_out[0]),
                 start_indices=lows,
                 limit_indices=tuple(lo + n for lo, n in zip(lows, operand.type.shape,
                                                             strict=True)),
                 strides=(1,) * rank)


lowering.register_lowering(select_and_scatter_add_p, _select_and_scatter_add_lowering)
