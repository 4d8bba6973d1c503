"""Windowed reductions: `reduce_window_sum`, `reduce_window_max`, `reduce_window_min` and the
generic (variadic, jaxpr-carrying) `reduce_window` primitive, with `lax.reduce_window`.

Windows are taken over the operand after base dilation (holes) and padding, both filled with
the reduction's initial value, as XLA's ReduceWindow does. The eager implementation loops over
the window taps only, combining one strided view of the whole operand per tap.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src import tree_util
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.core import Primitive
from justjax._src.core.jaxpr import Jaxpr, eval_jaxpr
from justjax._src.interpreters import staging
from justjax._src.lax import elementwise
from justjax._src.lax import utils
from justjax._src.lax.convolution import padtype_to_pads
from justjax._src.lax.utils import def_numpy_impl, standard_primitive
from justjax._src.runtime.array import Array, to_numpy

__all__ = [
    "reduce_window",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_shape_tuple",
    "reduce_window_sum_p",
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
    if not all(isinstance(d, (int, np.integer)) for d in obj):
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

def _dilated_padded(x: np.ndarray, fill: Any, padding: Sequence[tuple[int, int]],
                    base_dilation: Sequence[int]) -> np.ndarray:
    """`x` with `base_dilation - 1` holes between elements and `padding` around, both holding
    `fill`; negative padding crops."""
    if any(d != 1 for d in base_dilation):
        dilated = np.full(_dilate_shape(x.shape, base_dilation), fill, x.dtype)
        dilated[tuple(slice(None, None, d) for d in base_dilation)] = x
        x = dilated
    x = x[tuple(slice(max(-lo, 0), size - max(-hi, 0))
                for size, (lo, hi) in zip(x.shape, padding, strict=True))]
    if not padding:
        return x
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    return np.pad(x, widths, constant_values=np.asarray(fill, x.dtype))


def _window_taps(padded: np.ndarray, out_shape: Sequence[int], window_dimensions: Sequence[int],
                 window_strides: Sequence[int], window_dilation: Sequence[int]
                 ) -> list[np.ndarray]:
    """One strided view of `padded` per window tap; view[i] is that tap of output window i."""
    if math.prod(out_shape) == 0:
        return []
    views = []
    for tap in np.ndindex(*window_dimensions):
        views.append(padded[tuple(
            slice(t * r, t * r + (size - 1) * s + 1, s)
            for t, r, size, s in zip(tap, window_dilation, out_shape, window_strides,
                                     strict=True))])
    return views


def _monoid_numpy(combine: Callable, identity: Callable[[np.dtype], Any]) -> Callable:
    def impl(x: np.ndarray, *, window_dimensions: tuple, window_strides: tuple, padding: tuple,
             base_dilation: tuple, window_dilation: tuple) -> np.ndarray:
        out_shape = reduce_window_shape_tuple(x.shape, window_dimensions, window_strides,
                                              padding, base_dilation, window_dilation)
        if x.dtype in (dtypes.float16, dtypes.bfloat16):
            # Accumulate low-precision floats in float32 and round once.
            x = x.astype(np.float32)
        fill = identity(x.dtype)
        padded = _dilated_padded(x, fill, padding, base_dilation)
        acc = np.full(out_shape, fill, x.dtype)
        for view in _window_taps(padded, out_shape, window_dimensions, window_strides,
                                 window_dilation):
            acc = combine(acc, view)
        return acc
    return impl


def max_identity(dtype: np.dtype) -> np.ndarray:
    """The identity of `max` for `dtype`: -inf, the integer minimum, or False."""
    if dtypes.is_inexact(dtype):
        return np.array(-np.inf, dtype)
    if dtypes.is_int(dtype):
        return np.array(dtypes.iinfo(dtype).min, dtype)
    return np.array(False, np.bool_)


def min_identity(dtype: np.dtype) -> np.ndarray:
    """The identity of `min` for `dtype`: inf, the integer maximum, or True."""
    if dtypes.is_inexact(dtype):
        return np.array(np.inf, dtype)
    if dtypes.is_int(dtype):
        return np.array(dtypes.iinfo(dtype).max, dtype)
    return np.array(True, np.bool_)


# -- the monoid primitives ---------------------------------------------------------------------

def _sum_shape_rule(operand: ShapedArray, **params: Any) -> tuple[int, ...]:
    if dtypes.is_bool(operand.dtype):
        raise TypeError("operand to reduce_window_sum must have a number dtype, got "
                        f"{np.dtype(operand.dtype).name}")
    return _common_shape_rule(operand, **params)


def _operand_dtype(operand: ShapedArray, **params: Any) -> np.dtype:
    return operand.dtype


reduce_window_sum_p = standard_primitive("reduce_window_sum", _sum_shape_rule, _operand_dtype,
                                         utils.first_arg_weak)
def_numpy_impl(reduce_window_sum_p,
               _monoid_numpy(np.add, lambda dtype: np.zeros((), dtype)))

reduce_window_max_p = standard_primitive(
    "reduce_window_max", lambda x, **params: _common_shape_rule(x, **params), _operand_dtype,
    utils.first_arg_weak)
def_numpy_impl(reduce_window_max_p, _monoid_numpy(np.maximum, max_identity))

reduce_window_min_p = standard_primitive(
    "reduce_window_min", lambda x, **params: _common_shape_rule(x, **params), _operand_dtype,
    utils.first_arg_weak)
def_numpy_impl(reduce_window_min_p, _monoid_numpy(np.minimum, min_identity))


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


def _combine(jaxpr: Jaxpr, consts: Sequence[Any], accs: list[np.ndarray],
             values: list[np.ndarray]) -> list[np.ndarray]:
    args = [Array(np.asarray(v)) for v in [*accs, *values]]
    outs = eval_jaxpr(jaxpr, list(consts), *args)
    return [to_numpy(o) for o in outs]


def _reduce_window_numpy(*args: np.ndarray, jaxpr: Jaxpr, consts: tuple,
                         window_dimensions: tuple, window_strides: tuple, padding: tuple,
                         base_dilation: tuple, window_dilation: tuple) -> list[np.ndarray]:
    operands, inits = args[:len(args) // 2], args[len(args) // 2:]
    out_shape = reduce_window_shape_tuple(operands[0].shape, window_dimensions, window_strides,
                                          padding, base_dilation, window_dilation)
    tap_views = [_window_taps(_dilated_padded(x, init, padding, base_dilation), out_shape,
                              window_dimensions, window_strides, window_dilation)
                 for x, init in zip(operands, inits, strict=True)]
    accs = [np.full(out_shape, init, init.dtype) for init in inits]
    size = math.prod(out_shape)
    if size == 0 or not tap_views[0]:
        return accs
    if _vectorizable(jaxpr, size):
        accs = [a.reshape(-1) for a in accs]
        for taps in zip(*tap_views, strict=True):
            accs = _combine(jaxpr, consts, accs, [t.reshape(-1) for t in taps])
        return [a.reshape(out_shape) for a in accs]
    for index in np.ndindex(*out_shape):
        values = [a[index] for a in accs]
        for taps in zip(*tap_views, strict=True):
            values = _combine(jaxpr, consts, values, [t[index] for t in taps])
        for acc, value in zip(accs, values, strict=True):
            acc[index] = value
    return accs


reduce_window_p.def_abstract_eval(_reduce_window_abstract_eval)
def_numpy_impl(reduce_window_p, _reduce_window_numpy)


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
    if len(init_values) != 1 or isinstance(init_values[0], core.Tracer):
        return None
    aval = core.get_aval(init_values[0])
    if aval.shape != ():
        return None
    value = to_numpy(init_values[0], aval.dtype)
    if computation is elementwise.add:
        return _reduce_window_sum if value == 0 else None
    if computation is elementwise.max:
        return _reduce_window_max if value == max_identity(aval.dtype) else None
    if computation is elementwise.min:
        return _reduce_window_min if value == min_identity(aval.dtype) else None
    return None


def _reduction_jaxpr(computation: Callable, init_avals: Sequence[ShapedArray],
                     init_tree: Any, init_values: Any) -> tuple[Any, Any]:
    """Traces `computation(xs, ys)` on scalars of the initial values' types."""
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
    closed, out_tree = _reduction_jaxpr(computation, init_avals, init_tree, init_value)
    if operand_tree != out_tree:
        raise ValueError("reduce_window output must have the same tree structure as the "
                         f"operands {operand_tree} vs. {out_tree}")
    flat_out = reduce_window_p.bind(*flat_operands, *flat_inits, jaxpr=closed.jaxpr,
                                    consts=tuple(closed.consts), **params)
    return tree_util.tree_unflatten(operand_tree, flat_out)
