"""The `check` primitive and the functions raising errors: `check`, `debug_check`,
`check_error` (and `Error.throw`).

`check[debug err_tree]` takes the leaves of an `Error` (`err_tree` rebuilds it) and has no
results. Run eagerly it raises `JaxRuntimeError` if the error happened; `checkify`
functionalizes it (its rule there merges the error into the one being threaded). It cannot
be staged out otherwise: lowering it raises JAX's "Cannot abstractly evaluate a
checkify.check which was not functionalized" — unless `debug=True` (a `debug_check`, which
is dropped) or `jax_experimental_unsafe_xla_runtime_errors` is set (a host callback raising
when the check fails). Under `vmap` the batched error is reduced to one (the last failing
element), under `jvp` the primals are checked. Equations are effectful: never removed.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from justjax._src.pytrees import tree_util
from justjax._src.config import config
from justjax._src.core import core
from justjax._src.core import pretty as pp
from justjax._src.core.avals import ShapedArray
from justjax._src.core.jaxpr import JaxprEqn, PrettyContext, pp_eqn_default, pp_eqn_rules
from justjax._src.debug.callbacks import emit_python_callback
from justjax._src.interpreters import ad, batching, lowering
from justjax._src.interpreters import partial_eval as pe
from justjax._src.lax import elementwise, reductions, slicing, structural
from justjax._src.runtime.array import Array
from justjax._src.transformations.checkify.error import (Error, FailedCheckError, JaxRuntimeError,
                                                         assert_func, get_traceback, init_error)

check_p = core.Primitive("check", multiple_results=True)


def _raise_if_failed(error: Error) -> None:
    exc = error.get_exception()
    if exc is not None:
        # JAX attaches the check's traceback to the cause; the frames are gone by now, so
        # the cause says where the check was traced instead.
        if exc.traceback_info.frames:
            exc.add_note("The check was traced at (most recent call last):\n"
                         + exc.traceback_info.format().rstrip("\n"))
        raise JaxRuntimeError(str(exc)) from exc


def _check_impl(*args: Any, err_tree: Any, debug: bool) -> list[Any]:
    if not debug:  # a debug_check does nothing unless checkified
        _raise_if_failed(tree_util.tree_unflatten(err_tree, list(args)))
    return []


def _check_abstract_eval(*avals: ShapedArray, err_tree: Any, debug: bool) -> list[ShapedArray]:
    return []


def _check_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, err_tree: Any,
               debug: bool) -> tuple[list[Any], list[Any]]:
    """Checks the primals; a check has no outputs to differentiate."""
    check_p.bind(*primals, err_tree=err_tree, debug=debug)
    return [], []


def _check_batcher(axis_data: batching.AxisData, vals: Sequence[Any],
                   dims: Sequence[int | None], *, err_tree: Any, debug: bool
                   ) -> tuple[list[Any], list[Any]]:
    """Reduces the batch of errors to one (`check_error_value` does) and checks that."""
    vals = [batching.bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims, strict=True)]
    check_error_value(tree_util.tree_unflatten(err_tree, vals), debug=debug)
    return [], []


def functionalization_error() -> ValueError:
    """JAX's error for a `check` staged out without `checkify`."""
    return ValueError(
        "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
        "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
        "functionalizing it through `checkify.checkify`.")


def _check_lowering(ctx: lowering.LoweringRuleContext, *args: Any, err_tree: Any,
                    debug: bool) -> list[Any]:
    if debug:
        return []
    if not config.read("jax_experimental_unsafe_xla_runtime_errors"):
        raise functionalization_error()

    def run(*arrays: np.ndarray) -> list[Any]:
        _raise_if_failed(tree_util.tree_unflatten(err_tree, [Array(a) for a in arrays]))
        return []

    return emit_python_callback(ctx, run, args, [], has_side_effect=True, ordered=False)


def _pp_check(eqn: JaxprEqn, context: PrettyContext) -> pp.Doc:
    # The error's treedef is too long to read: JAX leaves it out.
    params = {k: v for k, v in eqn.params.items() if k != "err_tree"}
    return pp_eqn_default(eqn, context, params)


core.impl_rules[check_p] = _check_impl
check_p.def_abstract_eval(_check_abstract_eval)
ad.primitive_jvps[check_p] = _check_jvp
batching.primitive_batchers[check_p] = _check_batcher
lowering.register_lowering(check_p, _check_lowering)
pp_eqn_rules[check_p] = _pp_check
pe.effectful_primitives.add(check_p)


# ---------------------------------------------------------------------------------------------
# The user functions.

def is_scalar_pred(pred: Any) -> bool:
    """Whether `pred` is a Python bool or a boolean scalar array."""
    return (isinstance(pred, bool)
            or isinstance(pred, (Array, core.Tracer)) and np.shape(pred) == ()
            and pred.dtype == np.dtype("bool"))


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any
          ) -> None:
    """Check a predicate, add an error with msg if predicate is False.

    This is an effectful operation, and can't be staged (jitted/scanned/...). Before staging
    a function with checks, `checkify` it!

    Args:
      pred: if False, a FailedCheckError error is added.
      msg: error message if error is added. Can be a format string.
      debug: Whether to turn on debugging mode. If True, check will be removed during
        execution. If False, the check must be functionalized using checkify.checkify.
      fmt_args, fmt_kwargs: Positional and keyword formatting arguments for `msg` (pytrees
        of arrays, which may be traced): `check(..., "bad {} and {named}", x, named=y)`.
    """
    _check(pred, msg, debug, *fmt_args, **fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Check a predicate when running under checkify, otherwise is a no-op.

    Args:
      pred: if False, a FailedCheckError error is added.
      msg: error message if error is added.
      fmt_args, fmt_kwargs: Positional and keyword formatting arguments for `msg`.
    """
    _check(pred, msg, True, *fmt_args, **fmt_kwargs)


def _check(pred: Any, msg: str, debug: bool, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    if not is_scalar_pred(pred):
        prim_name = "debug_check" if debug else "check"
        raise TypeError(f"{prim_name} takes a scalar pred as argument, got {pred}")
    for arg in tree_util.tree_leaves((fmt_args, fmt_kwargs)):
        if not isinstance(arg, (Array, core.Tracer, np.ndarray)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {arg!r} of type {type(arg)}.")
    new_error = FailedCheckError(get_traceback(), msg, *fmt_args, **fmt_kwargs)
    error = assert_func(init_error, elementwise.bitwise_not(pred), new_error)
    check_error_value(error, debug=debug)


def check_error(error: Error) -> None:
    """Raise an Exception if ``error`` represents a failure. Functionalized by `checkify`.

    Equivalent to `error.throw()`, except that `checkify` turns it back into an error value
    (the inverse of `checkify`): a checkified function can be jitted, its error re-raised
    outside with `check_error`, and that function checkified again.

    Args:
      error: Error to check.
    """
    if not isinstance(error, Error):
        raise TypeError("check_error takes an Error as argument, got type "
                        f"{type(error)} instead.")
    check_error_value(error, debug=False)


def check_error_value(error: Error, *, debug: bool = False) -> None:
    """Binds `check` on `error` (reduced to one error first if it is batched)."""
    if any(np.shape(v) for v in error._pred.values()):
        error = _reduce_any_error(error)
    leaves, tree = tree_util.tree_flatten(error)
    check_p.bind(*leaves, err_tree=tree, debug=debug)


def _reduce_any_error(error: Error) -> Error:
    """One error standing for a batch of them (every leaf batched alike): per effect, the
    last batch element where it happened (the last element if nowhere), as JAX picks it."""
    out = init_error
    for effect, preds in error._pred.items():
        batch = np.shape(preds)
        size = int(np.prod(batch, dtype=np.int64))
        flat_preds = structural.convert_element_type(structural.reshape(preds, (size,)),
                                                     np.int32)
        # The last True: the first one of the reversed predicates.
        from_end = reductions.argmax(slicing.rev(flat_preds, (0,)), 0, np.int32)
        index = elementwise.sub(np.int32(size - 1), from_end)
        pick = lambda x: _batch_element(x, index, batch)  # noqa: E731
        out = out._update(effect, pick(preds), pick(error._code[effect]), {},
                          [pick(p) for p in error._payload[effect]])
    return out._replace(_metadata=error._metadata)


def _batch_element(x: Any, index: Any, batch: tuple[int, ...]) -> Any:
    """Element `index` (row-major) of `x`'s leading `batch` axes."""
    size = int(np.prod(batch, dtype=np.int64))
    x = structural.reshape(x, (size, *np.shape(x)[len(batch):]))
    return slicing.dynamic_index_in_dim(x, index, 0, keepdims=False,
                                        allow_negative_indices=False)
