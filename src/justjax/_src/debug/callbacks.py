"""Debug printing, host callbacks and the NaN/Inf checks (`jax.debug`, `jax.pure_callback`,
`jax.experimental.io_callback`, `jax_debug_nans`).

Four primitives, named and parametrized as JAX's:

- `debug_callback[callback effect partitioned]`: calls a Python function for its side effect;
  no results. `effect` is `Debug`, or `OrderedDebug` when `ordered=True`.
- `debug_print[fmt has_placeholders in_tree logging_record np_printoptions ordered
  partitioned static_args]`: `jax.debug.print`, formatting when it runs.
- `pure_callback[callback result_avals sharding vmap_method]`: a pure host function with
  results; no derivative; removed when its results are unused.
- `io_callback[callback ordered result_avals sharding]`: an impure host function with results.

All lower to `stablehlo.custom_call @xla_ffi_python_cpu_callback` holding the Python function
(see `runtime/host_callbacks.py`); the effectful ones carry `has_side_effect`
and ordered ones thread a `!stablehlo.token`. Callbacks receive Arrays, as in JAX. Effectful
equations survive dead-code elimination and run on known values under differentiation.
Under `vmap`, debug callbacks and io_callback run once per batch element in order;
pure_callback follows its `vmap_method`.
"""
from __future__ import annotations

import dataclasses
import logging
import string
import sys
from typing import Any, Callable, Sequence

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.runtime import host_callbacks as host
from justjax._src.config import config
from justjax._src.core import core, dtypes
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import ClosedJaxpr, JaxprEqn, Literal, Var, equation_context
from justjax._src.hlo import ir
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax import slicing, structural
from justjax._src.runtime.array import Array, to_numpy

logger = logging.getLogger("justjax")
# A failing callback is logged under JAX's logger name and message: libraries filter those
# records (equinox hides "jax.pure_callback failed" around its own runtime errors).
callback_logger = logging.getLogger("jax._src.callback")


# ---------------------------------------------------------------------------------------------
# Effects. They print by name in params (`effect=Debug`), as JAX's.

class Effect:
    """A side effect of a primitive; `ordered` effects keep their program order."""

    ordered = False

    def __str__(self) -> str:
        return type(self).__name__.removesuffix("Effect")

    __repr__ = __str__


class DebugEffect(Effect):
    """The effect of an unordered debug callback."""


class OrderedDebugEffect(Effect):
    """The effect of a debug callback with `ordered=True`."""

    ordered = True


class IOEffect(Effect):
    """The effect of an unordered io_callback."""

    __str__ = lambda self: "IO"  # noqa: E731


class OrderedIOEffect(Effect):
    """The effect of an io_callback with `ordered=True`."""

    ordered = True
    __str__ = lambda self: "OrderedIO"  # noqa: E731


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()
io_effect = IOEffect()
ordered_io_effect = OrderedIOEffect()


# ---------------------------------------------------------------------------------------------
# Arguments: pytrees split into array leaves (operands) and static leaves (params).

def _as_array(x: Any) -> Any:
    """An operand as the Array a callback receives (JAX places operands on the CPU)."""
    if type(x) is Array:
        return x
    aval = core.get_aval(x)
    return Array(to_numpy(x, aval.dtype), aval.weak_type)


def split_callback_args(args: tuple, kwargs: dict) -> tuple[Any, list[Any], dict[int, Any]]:
    """(pytree of `(args, kwargs)`, the array leaves, {position: static leaf}): leaves that
    are no JAX type (strings, None-like objects) are passed to the callback as they are."""
    flat, in_tree = tree_util.tree_flatten((args, kwargs))
    static: dict[int, Any] = {}
    dynamic: list[Any] = []
    for i, leaf in enumerate(flat):
        if isinstance(leaf, core.Tracer) or core.valid_jaxtype(leaf):
            dynamic.append(leaf)
        else:
            static[i] = leaf
    return in_tree, dynamic, static


def merge_callback_args(in_tree: Any, dynamic: Sequence[Any], static: Any) -> tuple:
    """Inverse of `split_callback_args`: the `(args, kwargs)` the callback is called with."""
    static = dict(static)
    dyn = iter(dynamic)
    leaves = [static[i] if i in static else next(dyn)
              for i in range(len(static) + len(dynamic))]
    return tree_util.tree_unflatten(in_tree, leaves)


@dataclasses.dataclass(frozen=True)
class _FlatCallback:
    """A Python function called with flat array arguments, returning flat results. Equal
    for the same function and argument structure, so equal calls share caches (as JAX's)."""

    callback_func: Callable[..., Any]
    in_tree: Any

    def __call__(self, *flat_args: Any) -> list[Any]:
        args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
        return tree_util.tree_leaves(self.callback_func(*args, **kwargs))


# ---------------------------------------------------------------------------------------------
# Rules shared by the effectful primitives.

def _unrolled_batcher(primitive: core.Primitive) -> Callable:
    """A batching rule calling `primitive` once per batch element, in order (JAX unrolls
    debug callbacks the same way), stacking any results along axis 0."""
    def rule(axis_data: batching.AxisData, vals: Sequence[Any], dims: Sequence[int | None],
             **params: Any) -> tuple[list[Any], list[int]]:
        size = next(np.shape(x)[d] for x, d in zip(vals, dims, strict=True) if d is not None)
        outs = []
        for i in range(size):
            sliced = [x if d is None else slicing.index_in_dim(x, i, d, keepdims=False)
                      for x, d in zip(vals, dims, strict=True)]
            outs.append(primitive.bind(*sliced, **params))
        stacked = [_stack(list(xs)) for xs in zip(*outs)] if outs else []
        return stacked, [0] * len(stacked)

    return rule


def _stack(xs: list[Any]) -> Any:
    return structural.concatenate([structural.expand_dims(x, (0,)) for x in xs], 0)


def _debug_partial_eval_custom(saveable: Callable[..., Any], unks_in: Sequence[bool],
                               inst_in: Sequence[bool], eqn: JaxprEqn
                               ) -> tuple[Any, Any, list[bool], list[bool], list[Var]]:
    """Under a remat policy a debug callback runs where its inputs are, as in JAX: only in
    the staged (recomputing) jaxpr if an input is unknown; in both jaxprs if the policy
    refuses to save it or every input is available there anyway; else in the known one."""
    missing = [v for v, inst in zip(eqn.invars, inst_in, strict=True)
               if isinstance(v, Var) and not inst]
    if any(unks_in):
        return None, eqn, [], [], missing
    policy = pe.ensure_enum(saveable(eqn.primitive, *[v.aval for v in eqn.invars],
                                     **eqn.params))
    if isinstance(policy, pe.SaveableType) and missing:
        return eqn, None, [], [], []
    return eqn, eqn, [], [], missing


def _debug_transpose(cts: Any, *args: Any, **params: Any) -> list[None]:
    return [None] * len(args)


def _register_effectful(primitive: core.Primitive) -> None:
    pe.effectful_primitives.add(primitive)


# ---------------------------------------------------------------------------------------------
# Lowering: one custom call per callback.

def _is_python_callback(op: ir.Op) -> bool:
    return (op.opcode == "stablehlo.custom_call"
            and op.attributes.get("call_target_name") == host.CALL_TARGET)


def _last_token(block: ir.Block) -> ir.Value | None:
    """The token of the block's latest ordered callback: the next one waits for it."""
    for op in reversed(block.ops):
        if _is_python_callback(op) and op.results and isinstance(op.results[0].type,
                                                                 ir.TokenType):
            return op.results[0]
    return None


def emit_python_callback(ctx: lowering.LoweringRuleContext,
                         callback: Callable[..., Sequence[Any]], operands: Sequence[ir.Value],
                         result_avals: Sequence[ShapedArray], *, has_side_effect: bool,
                         ordered: bool) -> list[ir.Value]:
    """`stablehlo.custom_call @xla_ffi_python_cpu_callback` calling `callback(*numpy arrays)`.

    The callbacks of a module are numbered in lowering order (`mhlo.backend_config = {index =
    N : ui64}`, as JAX). An ordered callback takes the token of the previous ordered callback
    of its block (or of a fresh `stablehlo.after_all`) and returns the next one; JAX threads
    its tokens through `main`'s arguments instead.
    """
    b = ctx.builder
    index = sum(1 for op in ctx.module_context.module.walk() if _is_python_callback(op))
    result_types: list[ir.Type] = [lowering.aval_to_type(a) for a in result_avals]
    operands = list(operands)
    if ordered:
        token = _last_token(b.block) or b.one("stablehlo.after_all", [], ir.TokenType())
        operands = [token, *operands]
        result_types = [ir.TokenType(), *result_types]
    attributes: dict[str, Any] = {"call_target_name": host.CALL_TARGET, "backend_config": ""}
    if has_side_effect:
        attributes["has_side_effect"] = True
    attributes["mhlo.backend_config"] = host.HostCallback(index, callback)
    op = b.op("stablehlo.custom_call", operands, result_types, attributes)
    return list(op.results[1:] if ordered else op.results)


def emit_host_callback(ctx: lowering.LoweringRuleContext, callback: Callable[..., Any],
                       token: Any, operands: Sequence[ir.Value],
                       operand_avals: Sequence[ShapedArray], result_avals: Sequence[ShapedArray],
                       *, has_side_effect: bool, partitioned: bool = False, sharding: Any = None,
                       **_: Any) -> tuple[list[ir.Value], Any, Any]:
    """JAX's `mlir.emit_python_callback`, for lowering rules libraries write:
    `callback(*numpy arrays) -> numpy arrays`; returns (results, token, keepalive). A token
    given orders the callback after the previous ordered one, as `ordered=True` does."""
    def run(*arrays: np.ndarray) -> list[Any]:
        outs = callback(*arrays)
        return [] if outs is None else list(outs)

    results = emit_python_callback(ctx, run, operands, result_avals,
                                   has_side_effect=has_side_effect, ordered=token is not None)
    return results, token, run


def _host_arrays(flat_callback: Callable[..., Any]) -> Callable[..., list[Any]]:
    """`flat_callback` taking NumPy arrays (as the backend passes them) as Arrays."""
    def call(*arrays: np.ndarray) -> list[Any]:
        outs = flat_callback(*[Array(np.asarray(a)) for a in arrays])
        return [] if outs is None else list(outs)

    return call


# ---------------------------------------------------------------------------------------------
# debug_callback.

debug_callback_p = core.Primitive("debug_callback", multiple_results=True)


def _debug_callback_impl(*args: Any, callback: Callable[..., Any], effect: Effect,
                         partitioned: bool) -> list[Any]:
    try:
        callback(*[_as_array(a) for a in args])
    except BaseException:
        callback_logger.exception("jax.debug.callback failed")
        raise
    return []


def _debug_callback_abstract_eval(*avals: ShapedArray, **params: Any) -> list[ShapedArray]:
    return []


def _debug_callback_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
                        ) -> tuple[list[Any], list[Any]]:
    """The callback sees the primals only; it has no outputs to differentiate."""
    return debug_callback_p.bind(*primals, **params), []


def _debug_callback_lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value,
                             callback: Callable[..., Any], effect: Effect,
                             partitioned: bool) -> list[ir.Value]:
    def run(*arrays: np.ndarray) -> list[Any]:
        return _debug_callback_impl(*[Array(np.asarray(a)) for a in arrays],
                                    callback=callback, effect=effect, partitioned=partitioned)

    return emit_python_callback(ctx, run, args, [], has_side_effect=True,
                                ordered=effect.ordered)


core.impl_rules[debug_callback_p] = _debug_callback_impl
debug_callback_p.def_abstract_eval(_debug_callback_abstract_eval)
ad.primitive_jvps[debug_callback_p] = _debug_callback_jvp
ad.primitive_transposes[debug_callback_p] = _debug_transpose
batching.primitive_batchers[debug_callback_p] = _unrolled_batcher(debug_callback_p)
pe.partial_eval_jaxpr_custom_rules[debug_callback_p] = _debug_partial_eval_custom
lowering.register_lowering(debug_callback_p, _debug_callback_lowering)
_register_effectful(debug_callback_p)


def debug_callback(callback: Callable[..., None] | None = None, *args: Any,
                   ordered: bool = False, partitioned: bool = False, **kwargs: Any
                   ) -> Callable[..., None] | None:
    """Calls `callback(*args, **kwargs)` for its side effect, eagerly or from staged code
    (`jax.debug.callback`).

    Array leaves of the arguments arrive as Arrays, other leaves as they are. Called as
    `debug_callback(ordered=True)` it returns the function to call with the callback.

    Args:
      callback: a Python function returning None.
      ordered: keep program order with the other ordered callbacks.
      partitioned: accepted for compatibility (one device).
    Returns:
      None, or in the two-call form the function taking `(callback, *args, **kwargs)`.
    Lowers to `stablehlo.custom_call @xla_ffi_python_cpu_callback` with `has_side_effect`.
    """
    def _debug_callback(callback: Callable[..., None], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(callback):
            raise TypeError("first argument to jax.debug.callback must be callable, but got "
                            f"an object of type {type(callback)}")
        in_tree, dynamic, static = split_callback_args(c_args, c_kwargs)

        def _flat_callback(*dyn_args: Any) -> tuple:
            call_args, call_kwargs = merge_callback_args(in_tree, dyn_args, static)
            callback(*call_args, **call_kwargs)
            return ()

        effect = ordered_debug_effect if ordered else debug_effect
        debug_callback_p.bind(*dynamic, callback=_flat_callback, effect=effect,
                              partitioned=partitioned)

    if callback is not None:
        _debug_callback(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_callback received unexpected arguments in the two-call form:"
                        f" {args=} {kwargs=}")
    return _debug_callback


# ---------------------------------------------------------------------------------------------
# debug_print.

debug_print_p = core.Primitive("debug_print", multiple_results=True)


def _format_print(fmt: str, np_printoptions: dict, has_placeholders: bool,
                  logging_record: Any, *args: Any, **kwargs: Any) -> None:
    """Formats as `str.format` (arrays as their `str`) and writes one line to stdout."""
    if has_placeholders:
        with np.printoptions(**np_printoptions):
            message = fmt.format(*args, **kwargs)
    else:
        message = " ".join((fmt, *(str(a) for a in args)))
    if logging_record is not None:
        record = logging.makeLogRecord(vars(logging_record))
        record.msg = message
        logger.handle(record)
    else:
        sys.stdout.write(message + "\n")


def _print_callback(fmt: str, in_tree: Any, static_args: tuple, np_printoptions: tuple,
                    has_placeholders: bool, logging_record: Any) -> Callable[..., None]:
    def flat(*dyn_args: Any) -> None:
        args, kwargs = merge_callback_args(in_tree, dyn_args, static_args)
        _format_print(fmt, dict(np_printoptions), has_placeholders, logging_record,
                      *args, **kwargs)

    return flat


def _debug_print_impl(*args: Any, fmt: str, ordered: bool, partitioned: bool, in_tree: Any,
                      static_args: tuple, np_printoptions: tuple, has_placeholders: bool,
                      logging_record: Any) -> list[Any]:
    callback = _print_callback(fmt, in_tree, static_args, np_printoptions, has_placeholders,
                               logging_record)
    effect = ordered_debug_effect if ordered else debug_effect
    return _debug_callback_impl(*args, callback=callback, effect=effect,
                                partitioned=partitioned)


def _debug_print_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any
                     ) -> tuple[list[Any], list[Any]]:
    return debug_print_p.bind(*primals, **params), []


def _debug_print_lowering(ctx: lowering.LoweringRuleContext, *args: ir.Value, fmt: str,
                          ordered: bool, partitioned: bool, in_tree: Any, static_args: tuple,
                          np_printoptions: tuple, has_placeholders: bool,
                          logging_record: Any) -> list[ir.Value]:
    callback = _print_callback(fmt, in_tree, static_args, np_printoptions, has_placeholders,
                               logging_record)
    effect = ordered_debug_effect if ordered else debug_effect
    return _debug_callback_lowering(ctx, *args, callback=callback, effect=effect,
                                    partitioned=partitioned)


core.impl_rules[debug_print_p] = _debug_print_impl
debug_print_p.def_abstract_eval(_debug_callback_abstract_eval)
ad.primitive_jvps[debug_print_p] = _debug_print_jvp
ad.primitive_transposes[debug_print_p] = _debug_transpose
batching.primitive_batchers[debug_print_p] = _unrolled_batcher(debug_print_p)
pe.partial_eval_jaxpr_custom_rules[debug_print_p] = _debug_partial_eval_custom
lowering.register_lowering(debug_print_p, _debug_print_lowering)
_register_effectful(debug_print_p)


class _FormatChecker(string.Formatter):
    """Checks that a format string uses every argument, without formatting anything."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Sequence[Any], kwargs: dict) -> None:
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead "
                "should pass in a regular string.")


_format_checker = _FormatChecker()


def _log_record(level: int) -> logging.LogRecord:
    frame = sys._getframe(3)
    return logger.makeRecord(logger.name, level, frame.f_code.co_filename, frame.f_lineno, "",
                             (), None)


def debug_print(fmt: str | None = None, *args: Any, ordered: bool = False,
                partitioned: bool = False, skip_format_check: bool = False,
                _use_logging: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Prints `fmt.format(*args, **kwargs)` when the program runs (`jax.debug.print`):
    eagerly, under `jit` (at each call), once per example under `vmap`, with the primal
    values under differentiation.

    Args:
      fmt: a `str.format` string (not an f-string: formatting happens at run time).
      *args, **kwargs: the values to format; arrays format as their `str`.
      ordered: keep program order with the other ordered prints and callbacks.
      partitioned: accepted for compatibility (one device).
      skip_format_check: do not check that every argument is used.
    Returns:
      None, or called without `fmt`, the function to call with `(fmt, *args, **kwargs)`.
    Lowers to `stablehlo.custom_call @xla_ffi_python_cpu_callback` with `has_side_effect`.
    """
    def _debug_print(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not skip_format_check:
            _format_checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field_name is not None
        in_tree, dynamic, static = split_callback_args(c_args, c_kwargs)
        debug_print_p.bind(
            *dynamic, fmt=fmt, ordered=ordered, partitioned=partitioned, in_tree=in_tree,
            static_args=tuple(static.items()),
            np_printoptions=tuple(np.get_printoptions().items()),
            has_placeholders=has_placeholders,
            logging_record=_log_record(logging.INFO) if _use_logging else None)

    if fmt is not None:
        _debug_print(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug_print received unexpected arguments in the two-call form:"
                        f" {args=} {kwargs=}")
    return _debug_print


# ---------------------------------------------------------------------------------------------
# pure_callback and io_callback: host functions with results.

def _run_host(flat_callback: Callable[..., Any], args: Sequence[Any],
              result_avals: Sequence[ShapedArray], what: str) -> list[Array]:
    """Runs a callback eagerly as its compiled program would: JAX's JaxRuntimeError if it
    fails or returns results of other types than declared."""
    def run(*arrays: np.ndarray) -> list[Any]:
        try:
            return _host_arrays(flat_callback)(*arrays)
        except BaseException:
            callback_logger.exception(f"jax.{what} failed")
            raise

    arrays = [to_numpy(a, core.get_aval(a).dtype) for a in args]
    outs = host.call_host(run, arrays, result_avals)
    return [Array(out, owned=True) for out in outs]


def _callback_lowering(what: str, has_side_effect: Callable[[dict], bool],
                       ordered: Callable[[dict], bool]) -> Callable:
    def rule(ctx: lowering.LoweringRuleContext, *args: ir.Value, callback: _FlatCallback,
             result_avals: tuple[ShapedArray, ...], **params: Any) -> list[ir.Value]:
        def run(*arrays: np.ndarray) -> list[Any]:
            try:
                return _host_arrays(callback)(*arrays)
            except BaseException:
                callback_logger.exception(f"jax.{what} failed")
                raise

        return emit_python_callback(ctx, run, args, result_avals,
                                    has_side_effect=has_side_effect(params),
                                    ordered=ordered(params))

    return rule


def _check_shape_dtype(shape_dtype: Any) -> None:
    dtype = np.dtype(shape_dtype.dtype)
    if dtypes.canonicalize_dtype(dtype) != dtype:
        raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                         "`jax_enable_x64` is disabled")


def _result_avals(result_shape_dtypes: Any) -> tuple[tuple[ShapedArray, ...], Any]:
    leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
    for leaf in leaves:
        _check_shape_dtype(leaf)
    return tuple(ShapedArray(tuple(leaf.shape), np.dtype(leaf.dtype)) for leaf in leaves), \
        out_tree


pure_callback_p = core.Primitive("pure_callback", multiple_results=True)

VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None]


def _pure_callback_impl(*args: Any, callback: _FlatCallback,
                        result_avals: tuple[ShapedArray, ...], sharding: Any,
                        vmap_method: str | None) -> list[Array]:
    return _run_host(callback, args, result_avals, "pure_callback")


def _callback_abstract_eval(*avals: ShapedArray, result_avals: tuple[ShapedArray, ...],
                            **params: Any) -> list[ShapedArray]:
    return list(result_avals)


def _pure_callback_jvp(*args: Any, **params: Any) -> Any:
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _pure_callback_transpose(*args: Any, **params: Any) -> Any:
    raise ValueError("Pure callbacks do not support transpose. Please use `jax.custom_vjp` "
                     "to use callbacks while taking gradients.")


def _batched_avals(size: int, avals: Sequence[ShapedArray]) -> tuple[ShapedArray, ...]:
    return tuple(ShapedArray((size, *a.shape), a.dtype) for a in avals)


def _pure_callback_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                           dims: Sequence[int | None], *, vmap_method: str | None,
                           result_avals: tuple[ShapedArray, ...], **params: Any
                           ) -> tuple[list[Any], list[int]]:
    """JAX's `vmap_method`s. "sequential" calls the callback once per element; JAX loops with
    `scan`, justjax (no scan yet) unrolls as "sequential_unrolled" does."""
    size = next(np.shape(x)[d] for x, d in zip(vals, dims, strict=True) if d is not None)
    moved = [x if d is None else batching.moveaxis(x, d, 0)
             for x, d in zip(vals, dims, strict=True)]
    if vmap_method in ("sequential", "sequential_unrolled"):
        rule = _unrolled_batcher(pure_callback_p)
        return rule(axis_data, moved, [None if d is None else 0 for d in dims],
                    vmap_method=vmap_method, result_avals=result_avals, **params)
    if vmap_method == "legacy_vectorized":
        operands = moved
    elif vmap_method in ("expand_dims", "broadcast_all"):
        lead = size if vmap_method == "broadcast_all" else 1
        operands = [structural.broadcast(x, (lead,)) if d is None else x
                    for x, d in zip(moved, dims, strict=True)]
    else:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got {vmap_method=}.")
    outs = pure_callback_p.bind(*operands, vmap_method=vmap_method,
                                result_avals=_batched_avals(size, result_avals), **params)
    return list(outs), [0] * len(outs)


core.impl_rules[pure_callback_p] = _pure_callback_impl
pure_callback_p.def_abstract_eval(_callback_abstract_eval)
ad.primitive_jvps[pure_callback_p] = _pure_callback_jvp
ad.primitive_transposes[pure_callback_p] = _pure_callback_transpose
batching.primitive_batchers[pure_callback_p] = _pure_callback_batcher
lowering.register_lowering(pure_callback_p, _callback_lowering(
    "pure_callback", has_side_effect=lambda params: False, ordered=lambda params: False))


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None, **kwargs: Any) -> Any:
    """Calls a pure Python function on the host (`jax.pure_callback`), eagerly or from
    staged code; may be called any number of times, or not at all if its results are unused.

    Args:
      callback: called with the arguments' pytrees (array leaves as Arrays); returns a
        pytree of arrays matching `result_shape_dtypes`.
      result_shape_dtypes: a pytree of objects with `shape` and `dtype`
        (`ShapeDtypeStruct`s).
      sharding: accepted for compatibility (one device).
      vmap_method: how `vmap` calls it: "sequential" / "sequential_unrolled" (once per
        element), "expand_dims" (unbatched arguments get a leading axis of size 1),
        "broadcast_all" (... of the batch size), "legacy_vectorized" (batched arguments
        only); None makes `vmap` raise.
    Returns:
      A pytree of Arrays structured as `result_shape_dtypes`.
    Lowers to `stablehlo.custom_call @xla_ffi_python_cpu_callback`.
    """
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {VMAP_METHODS}, "
                         f"but got: {vmap_method}")
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = pure_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                                result_avals=result_avals, sharding=sharding,
                                vmap_method=vmap_method)
    return tree_util.tree_unflatten(out_tree, outs)


io_callback_p = core.Primitive("io_callback", multiple_results=True)


def _io_callback_impl(*args: Any, callback: _FlatCallback,
                      result_avals: tuple[ShapedArray, ...], sharding: Any,
                      ordered: bool) -> list[Array]:
    return _run_host(callback, args, result_avals, "io_callback")


def _io_callback_jvp(*args: Any, **params: Any) -> Any:
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_transpose(*args: Any, **params: Any) -> Any:
    raise ValueError("IO callbacks do not support transpose.")


def _io_callback_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                         dims: Sequence[int | None], *, ordered: bool, **params: Any
                         ) -> tuple[list[Any], list[int]]:
    """Once per batch element, in order (JAX loops with `scan`; justjax unrolls)."""
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _unrolled_batcher(io_callback_p)(axis_data, vals, dims, ordered=False, **params)


core.impl_rules[io_callback_p] = _io_callback_impl
io_callback_p.def_abstract_eval(_callback_abstract_eval)
ad.primitive_jvps[io_callback_p] = _io_callback_jvp
ad.primitive_transposes[io_callback_p] = _io_callback_transpose
batching.primitive_batchers[io_callback_p] = _io_callback_batcher
lowering.register_lowering(io_callback_p, _callback_lowering(
    "io_callback", has_side_effect=lambda params: True,
    ordered=lambda params: params["ordered"]))
_register_effectful(io_callback_p)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Calls an impure Python function on the host (`jax.experimental.io_callback`): it
    runs once per call of the program, even if its results are unused.

    Args:
      callback: called with the arguments' pytrees (array leaves as Arrays); returns a
        pytree of arrays matching `result_shape_dtypes`.
      result_shape_dtypes: a pytree of objects with `shape` and `dtype`.
      sharding: accepted for compatibility (one device).
      ordered: keep program order with the other ordered callbacks (cannot be vmapped).
    Returns:
      A pytree of Arrays structured as `result_shape_dtypes`.
    Lowers to `stablehlo.custom_call @xla_ffi_python_cpu_callback` with `has_side_effect`.
    """
    flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = io_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                              result_avals=result_avals, sharding=sharding, ordered=ordered)
    return tree_util.tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------------------------
# jax_debug_nans / jax_debug_infs.

def _invalid_kind(value: Any) -> str | None:
    """"nan" or "inf" if `value` holds one and the matching flag is on, else None."""
    array = value._value if type(value) is Array else np.asarray(value)
    if not dtypes.is_inexact(array.dtype):
        return None
    if config.read("jax_debug_nans") and np.isnan(array).any():
        return "nan"
    if config.read("jax_debug_infs") and np.isinf(array).any():
        return "inf"
    return None


def check_primitive_nans(name: str, results: Sequence[Any]) -> None:
    """After an eager primitive: JAX's FloatingPointError naming it if a floating result
    holds a NaN (`jax_debug_nans`) or an Inf (`jax_debug_infs`)."""
    for value in results:
        kind = _invalid_kind(value)
        if kind is not None:
            raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")


def check_nans(name: str, closed: ClosedJaxpr, args: Sequence[Any],
               results: Sequence[Any]) -> None:
    """After a jit call of `closed` (the function `name`): if a result holds a NaN or Inf the
    flags ask about, runs the jaxpr again op by op, as JAX runs the "de-optimized" function,
    and raises FloatingPointError naming the first primitive producing one (nested jit calls
    are opened up). If none does (the value was an input or constant), raises JAX's message
    saying so."""
    kind = next((k for k in map(_invalid_kind, results) if k is not None), None)
    if kind is None:
        return
    print("Invalid nan value encountered in the output of a jax.jit function. Calling the "
          "de-optimized version.")
    _deoptimized(closed.jaxpr, closed.consts, args)
    raise FloatingPointError(
        f"{(f'jit({name})', kind)}. Because jax_config.debug_nans.value and/or "
        "config.jax_debug_infs is set, the de-optimized function (i.e., the function as if "
        "the `jit` decorator were removed) was called in an attempt to get a more precise "
        "error message. However, the de-optimized function did not produce invalid values "
        "during its execution. This behavior can result from `jit` optimizations causing "
        "the invalid value to be produced. It may also arise from having nan/inf literals "
        "as inputs or outputs, like `jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may "
        "be possible to avoid the invalid value by removing the `jit` decorator, at the cost "
        "of losing optimizations. \n\nIf you see this error, consider opening a bug report "
        "at https://github.com/jax-ml/jax.")


def _deoptimized(jaxpr: Any, consts: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """Evaluates `jaxpr` eagerly, checking each equation's results; a nested jit call is
    evaluated the same way, equation by equation."""
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))

    def read(atom: Any) -> Any:
        return atom.val if isinstance(atom, Literal) else env[atom]

    with core.set_current_trace(core.eval_trace), equation_context():
        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            inner = eqn.params.get("jaxpr")
            if eqn.primitive.name == "jit" and isinstance(inner, ClosedJaxpr):
                outs = _deoptimized(inner.jaxpr, inner.consts, ins)
            else:
                outs = _bind_unchecked(eqn, ins)
                check_primitive_nans(eqn.primitive.name, outs)
            env.update(zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars]


def _bind_unchecked(eqn: JaxprEqn, ins: Sequence[Any]) -> list[Any]:
    # The equation's own check (its eager program is a jit call too) would re-run it here.
    with config.override("jax_debug_nans", False), config.override("jax_debug_infs", False):
        outs = eqn.primitive.bind(*ins, **eqn.params)
    return list(outs) if eqn.primitive.multiple_results else [outs]
